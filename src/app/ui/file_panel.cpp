// The left column with a file open: the file's facts (how it was made, what
// it holds, op counts, ops the executor cannot run), the lesson graphs to
// open, the undo / redo history and the lessons.
#include "ui/file_panel.h"

#include <map>

#include "graph/printer.h"
#include "passes/decompose.h"
#include "ui/lesson_panel.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

// What the facts derive from the whole graph (op counts, lint, unsupported ops,
// inputs): computed once per shown version, kept in the file's view. A 20k-node
// graph's take two pieces of the frames' allowance (App::may_derive); the last
// version's facts show until the new ones are complete.
const PanelCaches::Facts& graph_facts(App& app) {
    PanelCaches& caches = app.view().caches;
    PanelCaches::Facts& f = caches.facts;
    PanelCaches::Facts& next = caches.facts_next;
    const ShownKey key = app.shown_key();
    if (f.key == key) return f;
    if (next.key != key) {
        next = PanelCaches::Facts();
        next.key = key;
    }
    const Workspace& ws = *app.workspace();
    const Graph& g = ws.graph(key.view);
    while (next.pieces < 2) {
        if (!app.may_derive()) return f;
        if (next.pieces == 0) {
            for (const Node* n : g.nodes()) ++next.kinds[n->op()];
            next.calls = op_counts(g);
            next.unsupported = ws.unsupported_ops(key.view);
        } else {
            next.lint = ws.lint_message(key.view);
            if (ws.has_program()) {
                const ExportedProgram& ep = ws.original();
                for (const auto& [name, meta] : user_input_specs(*ep.graph, &ep.signature))
                    next.inputs += (next.inputs.empty() ? "" : ", ") + name + " " + meta.type_str();
            }
        }
        ++next.pieces;
        app.derived();
    }
    f = std::move(next);
    next = PanelCaches::Facts();
    return f;
}

void file_facts(App& app) {
    const Workspace& ws = *app.workspace();
    ImGui::PushFont(fonts().heading);
    text_wrapped(app.file_name());
    ImGui::PopFont();
    if (!begin_facts("facts")) return;
    if (ws.has_program()) {
        const ExportedProgram& ep = ws.original();
        fact(tr(app, Str::file_format), ep.format);
        const Provenance& p = ep.provenance;
        if (p.present) {
            fact(tr(app, Str::file_made_by),
                 p.made_by + (p.torch_version.empty() ? "" : " (torch " + p.torch_version + ")"));
            if (!p.model_class.empty())
                fact(tr(app, Str::file_model),
                     p.mode.empty()
                         ? p.model_class
                         : strf(tr(app, Str::file_mode), p.model_class.c_str(), p.mode.c_str()));
        }
        fact("torch",
             ep.torch_version.empty() ? tr(app, Str::file_not_recorded) : ep.torch_version);
        fact(tr(app, Str::file_schema),
             std::to_string(ep.schema_major) + "." + std::to_string(ep.schema_minor));
        int params = 0, buffers = 0, user = 0;
        for (const InputSpec& s : ep.signature.inputs) {
            params += s.kind == InputKind::Parameter;
            buffers += s.kind == InputKind::Buffer;
            user += s.kind == InputKind::UserInput;
        }
        fact(tr(app, Str::file_signature),
             strf(tr(app, Str::file_signature_counts), params, buffers, user));
        const std::string& inputs = graph_facts(app).inputs;
        if (!inputs.empty()) fact(tr(app, Str::file_inputs), inputs);
        fact(tr(app, Str::file_sample_inputs),
             ep.example_inputs.empty()
                 ? std::string(tr(app, Str::file_no_samples))
                 : strf(tr(app, Str::file_samples), ep.example_inputs.size()));
        if (!ep.reference_outputs.empty())
            fact(tr(app, Str::file_reference), tr(app, Str::file_reference_value));
        for (const std::string& w : ep.warnings) fact(tr(app, Str::file_warning), w, colors::warn);
    } else {
        fact(tr(app, Str::file_format), tr(app, Str::file_symbolic));
    }
    end_facts();
    if (ws.has_program() && ws.original().provenance.present &&
        !ws.original().provenance.note.empty() &&
        ImGui::TreeNode(label(app, Str::file_how_made).c_str())) {
        text_wrapped(ws.original().provenance.note, colors::text_dim);
        ImGui::TreePop();
    }

    section(tr(app, Str::file_ops));
    const PanelCaches::Facts& facts = graph_facts(app);
    if (facts.key == ShownKey{}) // the first version's, a frame or two after it opened
        ImGui::TextDisabled(tr(app, Str::file_counting), ws.graph(app.view().graph).size());
    for (const auto& [op, count] : facts.kinds) {
        ImGui::TextColored(to_vec4(op_color(op)), "%s", op_label(op));
        ImGui::SameLine(px(120));
        ImGui::Text("%d", count);
    }
    ImGui::Spacing();
    if (ImGui::BeginTable("calls", 2, ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("##count", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("##op", ImGuiTableColumnFlags_WidthStretch);
        for (const auto& [target, count] : facts.calls) {
            std::string t = target;
            if (t.rfind("torch.ops.", 0) == 0) t = t.substr(10);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%dx", count);
            ImGui::TableNextColumn();
            text_wrapped(t);
        }
        ImGui::EndTable();
    }
    const auto& unsupported = facts.unsupported;
    if (!unsupported.empty()) {
        ImGui::Spacing();
        ImGui::TextColored(to_vec4(colors::bad), "%s", tr(app, Str::file_cannot_run));
        for (const auto& u : unsupported) {
            ImGui::BulletText(tr(app, Str::file_op_nodes), u.target.c_str(), u.nodes.size());
            if (ImGui::IsItemClicked() && !u.nodes.empty()) app.select(u.nodes.front());
        }
    }
    const std::string& lint = facts.lint;
    if (!lint.empty()) {
        ImGui::Spacing();
        ImGui::TextColored(to_vec4(colors::bad), "%s", tr(app, Str::file_lint_fails));
        text_wrapped(lint, colors::bad);
    }
}

void lesson_graphs(App& app) {
    section(tr(app, Str::file_lesson_graphs));
    for (const std::string& f : app.lesson_files()) {
        bool open = f == app.file_name();
        if (ImGui::Selectable(f.c_str(), open) && !open) app.open_asset(f);
        expose(app, "lesson:" + f);
    }
    ImGui::Spacing();
    text_wrapped(tr(app, Str::file_own), colors::text_dim);
    if (ImGui::Button(label(app, Str::top_open).c_str())) app.open_picker();
    expose(app, "file:open");
}

void history(App& app) {
    const Workspace& ws = *app.workspace();
    auto undo = ws.undo_history();
    auto redo = ws.redo_history();
    if (undo.empty() && redo.empty()) return;
    section(tr(app, Str::file_history));
    ImGui::TextDisabled("%s", tr(app, Str::file_as_loaded));
    for (size_t i = 0; i < undo.size(); ++i) {
        if (i + 1 == undo.size())
            ImGui::BulletText(tr(app, Str::file_now), undo[i].label.c_str());
        else
            ImGui::BulletText("%s", undo[i].label.c_str());
    }
    for (const HistoryEntry& h : redo) {
        ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(colors::text_dim));
        ImGui::BulletText(tr(app, Str::file_undone), h.label.c_str());
        ImGui::PopStyleColor();
    }
}

} // namespace

void draw_file_panel(App& app, ImVec2 pos, ImVec2 size) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin(label(app, Str::panel_file).c_str(), nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    // The lessons first, so a first visit sees them above the fold (1280 x 720).
    lesson_list(app);
    if (app.workspace()) {
        file_facts(app);
        history(app);
    }
    lesson_graphs(app);
    ImGui::End();
}

} // namespace pt2lab::app::ui
