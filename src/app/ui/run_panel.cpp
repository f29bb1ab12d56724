// The Run & parity tab: where the inputs come from, the outputs, and parity
// against the file as loaded and PyTorch's eager outputs when the file has them.
#include "ui/run_panel.h"

#include <cmath>
#include <cstdio>

#include "tensor_summary.h"
#include "ui/graph_toolbar.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

std::string sci(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void parity_table(const App& app, const char* id, const ParityReport& p) {
    if (!ImGui::BeginTable(id, 7,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH))
        return;
    for (Str h : {Str::run_col_output, Str::run_col_type, Str::run_col_max_diff,
                  Str::run_col_max_rel, Str::parity_allclose, Str::parity_bit_identical})
        ImGui::TableSetupColumn(tr(app, h));
    ImGui::TableSetupColumn("SQNR");
    ImGui::TableHeadersRow();
    for (const TensorParity& t : p.outputs) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.type_a.c_str());
        if (!t.comparable) {
            ImGui::TableNextColumn();
            ImGui::TextColored(to_vec4(colors::bad), tr(app, Str::run_not_comparable),
                               t.type_a.c_str(), t.type_b.c_str());
            continue;
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_abs).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_rel).c_str());
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.allclose ? colors::good : colors::bad), "%s",
                           tr(app, t.allclose ? Str::yes : Str::no));
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.bit_identical ? colors::good : colors::text_dim), "%s",
                           tr(app, t.bit_identical ? Str::yes : Str::no));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::isinf(t.sqnr_db) ? "inf dB" : (sci(t.sqnr_db) + " dB").c_str());
    }
    ImGui::EndTable();
}

void verdict(const App& app, const ParityReport& p, Str against) {
    std::string what = parity_word(app, p);
    ImGui::PushFont(fonts().heading);
    ImGui::TextColored(to_vec4(parity_color(p)), "%s", what.c_str());
    ImGui::PopFont();
    ImGui::SameLine();
    if (p.approximate)
        ImGui::TextDisabled(tr(app, Str::run_verdict_approx), tr(app, against),
                            sci(p.max_abs()).c_str(), sci(p.max_rel()).c_str());
    else
        ImGui::TextDisabled(tr(app, Str::run_verdict), tr(app, against), sci(p.max_abs()).c_str());
}

} // namespace

void draw_run_tab(App& app) {
    const Workspace& ws = *app.workspace();
    FileView& fv = app.view();
    ImGui::TextDisabled("%s", tr(app, Str::run_inputs));
    ImGui::SameLine();
    // The widget names stay English (the state hook's), the labels follow the language.
    const char* names[] = {"the file's own", "sample inputs", "seeded"};
    const Str kinds[] = {Str::run_kind_own, Str::run_kind_sample, Str::run_kind_seeded};
    const Str tips[] = {Str::run_kind_own_tip, Str::run_kind_sample_tip, Str::run_kind_seeded_tip};
    for (int i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine(0, px(2));
        bool active = static_cast<int>(fv.run_inputs.kind) == i;
        if (active) ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3D4F73)));
        if (small_button(app, label(app, kinds[i]).c_str()))
            fv.run_inputs.kind = static_cast<InputSource::Kind>(i);
        expose(app, std::string("run tab:") + names[i]);
        if (active) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, tips[i]));
    }
    if (fv.run_inputs.kind == InputSource::Kind::Seeded) {
        ImGui::SameLine();
        int seed = static_cast<int>(fv.run_inputs.seed);
        ImGui::SetNextItemWidth(px(90));
        if (ImGui::InputInt(label(app, Str::run_seed).c_str(), &seed, 0))
            fv.run_inputs.seed = static_cast<uint64_t>(std::max(0, seed));
        expose(app, "run tab:seed");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(44));
    ImGui::InputInt(label(app, Str::run_times).c_str(), &fv.run_repeat, 0);
    fv.run_repeat = std::clamp(fv.run_repeat, 1, 100);
    ImGui::SameLine();
    ImGui::BeginDisabled(app.busy());
    if (ImGui::Button(label(app, Str::run_button).c_str())) run_now(app);
    ImGui::EndDisabled();
    expose(app, "run tab:run");
    ImGui::SameLine();
    ImGui::Checkbox(label(app, Str::run_auto).c_str(), &app.settings().auto_run);
    ImGui::SameLine();
    help_marker(tr(app, Str::run_auto_help));
    ImGui::SameLine();
    bool fast = fv.fast_kernels;
    if (ImGui::Checkbox(label(app, Str::run_fast).c_str(), &fast)) app.set_fast_kernels(fast);
    expose(app, "run tab:fast kernels");
    ImGui::SameLine();
    help_marker(tr(app, Str::run_fast_help));

    const auto& run = ws.last_run();
    if (!run) {
        ImGui::Spacing();
        text_wrapped(tr(app, Str::run_not_run), colors::text_dim);
        return;
    }
    ImGui::Separator();
    bool current = run->version == ws.version();
    ImGui::Text(tr(app, run->fast_kernels ? Str::run_ran_on_fast : Str::run_ran_on),
                run->inputs_label.c_str());
    if (run->stale) {
        ImGui::SameLine();
        badge(tr(app, Str::run_stale), colors::warn);
    }
    ImGui::SameLine();
    if (current)
        badge(tr(app, Str::run_current), colors::good);
    else
        badge(tr(app, Str::run_run_again), colors::warn);

    if (ImGui::BeginTable("outputs", 6,
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                              ImGuiTableFlags_BordersInnerH)) {
        for (Str h : {Str::run_col_output, Str::run_col_type, Str::run_col_min, Str::run_col_max,
                      Str::run_col_mean, Str::run_col_first})
            ImGui::TableSetupColumn(tr(app, h));
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < run->result.outputs.size(); ++i) {
            const Value& v = run->result.outputs[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(
                i < run->result.output_names.size() ? run->result.output_names[i].c_str() : "");
            ImGui::TableNextColumn();
            if (!v.is_tensor()) {
                ImGui::TextUnformatted(v.describe().c_str());
                continue;
            }
            TensorSummary s = summarize(*v.tensor, 5);
            ImGui::TextUnformatted(s.type.c_str());
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
        ImGui::EndTable();
    }
    ImGui::Spacing();
    verdict(app, run->parity, Str::run_vs_file);
    if (run->parity.approximate && !run->parity.bit_identical())
        text_wrapped(tr(app, Str::run_quant_note), colors::text_dim);
    parity_table(app, "parity", run->parity);
    if (run->reference) {
        ImGui::Spacing();
        verdict(app, *run->reference, Str::run_vs_eager);
        parity_table(app, "reference", *run->reference);
    }
    if (!run->parity.nodes.empty() && ImGui::TreeNode(label(app, Str::run_per_node).c_str())) {
        ImGui::TextDisabled("%s", tr(app, Str::run_per_node_note));
        ParityReport nodes;
        nodes.outputs = run->parity.nodes;
        parity_table(app, "nodes", nodes);
        ImGui::TreePop();
    }
}

} // namespace pt2lab::app::ui
