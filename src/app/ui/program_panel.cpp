// The Signature & weights tab: the graph signature as tables and every
// stored (or live) tensor with its type, min / max / mean and first values.
#include "ui/program_panel.h"

#include <memory>

#include "tensor_summary.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

// Summaries of tensors, kept in the file's view: stored tensors never change in
// place, so theirs stay while the file is open; live ones are redone when what is
// shown changes. Each entry holds its tensor, so no other can take its address.
PanelCaches::Summaries& cache(App& app) {
    PanelCaches::Summaries& c = app.view().caches.summaries;
    const ShownKey key = app.shown_key();
    if (c.live_key != key) {
        c.live.clear();
        c.live_key = key;
    }
    return c;
}

// A tensor's summary, kept per tensor; only its type while the file's weights arrive.
template <typename T>
TensorSummary summary(PanelCaches::Summaries& c, const std::shared_ptr<T>& t, bool live,
                      const Workspace& ws) {
    if (!ws.file_whole()) return type_only(t->dtype, t->sizes);
    auto& m = live ? c.live : c.stored;
    auto it = m.find(t.get());
    if (it == m.end()) it = m.emplace(t.get(), std::make_pair(t, summarize(*t))).first;
    return it->second.second;
}

void tensor_table_header(const App& app) {
    for (Str h : {Str::prog_col_name, Str::prog_col_kind, Str::run_col_type, Str::run_col_min,
                  Str::run_col_max, Str::run_col_mean, Str::run_col_first})
        ImGui::TableSetupColumn(tr(app, h));
    ImGui::TableHeadersRow();
}

void tensor_row(const App& app, const std::string& name, const char* what, const TensorSummary& s,
                bool stand_in) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name.c_str());
    ImGui::TableNextColumn();
    if (stand_in)
        ImGui::TextDisabled(tr(app, Str::prog_stand_in), what);
    else
        ImGui::TextDisabled("%s", what);
    if (stand_in && ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr(app, Str::prog_stand_in_tip));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s.type.c_str());
    if (!s.numeric) return;
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_number(s.min).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_number(s.max).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_number(s.mean).c_str());
    ImGui::TableNextColumn();
    ImGui::PushFont(fonts().mono);
    ImGui::TextUnformatted(format_values(s.first, s.numel).c_str());
    ImGui::PopFont();
}

constexpr ImGuiTableFlags kTable =
    ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH;

void signature_tables(App& app, const ExportedProgram& ep) {
    section(tr(app, Str::prog_signature));
    if (ImGui::BeginTable("inputs", 4, kTable)) {
        ImGui::TableSetupColumn(tr(app, Str::prog_col_input));
        ImGui::TableSetupColumn(tr(app, Str::prog_col_kind));
        ImGui::TableSetupColumn("target");
        ImGui::TableSetupColumn("persistent");
        ImGui::TableHeadersRow();
        const Graph& g = *ep.graph;
        for (const InputSpec& s : ep.signature.inputs) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            const Node* n = g.find(s.arg);
            if (n && app.view().graph == GraphView::Program)
                node_link(app, *n, "sig");
            else
                ImGui::TextUnformatted(s.arg.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(input_kind_name(s.kind));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s.target.c_str());
            ImGui::TableNextColumn();
            if (s.persistent) ImGui::TextUnformatted(*s.persistent ? "True" : "False");
        }
        ImGui::EndTable();
    }
    ImGui::Spacing();
    if (ImGui::BeginTable("outputs", 3, kTable)) {
        ImGui::TableSetupColumn(tr(app, Str::run_col_output));
        ImGui::TableSetupColumn(tr(app, Str::prog_col_kind));
        ImGui::TableSetupColumn("target");
        ImGui::TableHeadersRow();
        for (const OutputSpec& s : ep.signature.outputs) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s.arg.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(output_kind_name(s.kind));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(s.target.c_str());
        }
        ImGui::EndTable();
    }
    if (small_button(app, label(app, Str::prog_copy_signature).c_str()))
        app.copy(signature_str(ep.signature), "ep.graph_signature");
}

} // namespace

void draw_program_tab(App& app) {
    const Workspace& ws = *app.workspace();
    PanelCaches::Summaries& c = cache(app);
    bool program = app.view().graph == GraphView::Program && ws.has_program();
    if (program) {
        signature_tables(app, ws.program());
        section(tr(app, Str::prog_state_dict));
        if (ImGui::BeginTable("weights", 7, kTable)) {
            tensor_table_header(app);
            auto rows = [&](const TensorMap& m, bool constants) {
                for (const auto& [name, t] : m) {
                    if (!t) continue;
                    const char* what = constants ? tr(app, Str::prog_constant) : "state_dict";
                    for (const InputSpec& s : ws.program().signature.inputs)
                        if (s.target == name)
                            what = s.kind == InputKind::Parameter ? tr(app, Str::prog_parameter)
                                   : s.kind == InputKind::Buffer  ? "buffer"
                                                                  : what;
                    tensor_row(app, name, what, summary(c, t, false, ws), t->stand_in);
                }
            };
            rows(ws.program().state_dict, false);
            rows(ws.program().constants, true);
            ImGui::EndTable();
        }
    } else {
        section(tr(app, Str::prog_attributes));
        text_wrapped(tr(app, Str::prog_attributes_note), colors::text_dim);
        if (ImGui::BeginTable("attrs", 7, kTable)) {
            tensor_table_header(app);
            for (const auto& [name, t] : ws.state().tensors) {
                if (!t) continue;
                tensor_row(app, name, tr(app, Str::prog_attribute), summary(c, t, true, ws), false);
            }
            ImGui::EndTable();
        }
        if (ws.has_program()) signature_tables(app, ws.program());
    }
}

} // namespace pt2lab::app::ui
