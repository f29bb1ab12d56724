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
        fact("format", ep.format);
        const Provenance& p = ep.provenance;
        if (p.present) {
            fact("made by",
                 p.made_by + (p.torch_version.empty() ? "" : " (torch " + p.torch_version + ")"));
            if (!p.model_class.empty())
                fact("model", p.model_class + (p.mode.empty() ? "" : ", " + p.mode + " mode"));
        }
        fact("torch", ep.torch_version.empty() ? "(not recorded)" : ep.torch_version);
        fact("schema", std::to_string(ep.schema_major) + "." + std::to_string(ep.schema_minor));
        int params = 0, buffers = 0, user = 0;
        for (const InputSpec& s : ep.signature.inputs) {
            params += s.kind == InputKind::Parameter;
            buffers += s.kind == InputKind::Buffer;
            user += s.kind == InputKind::UserInput;
        }
        fact("signature", std::to_string(params) + " parameters, " + std::to_string(buffers) +
                              " buffers, " + std::to_string(user) + " user inputs");
        const std::string& inputs = graph_facts(app).inputs;
        if (!inputs.empty()) fact("inputs", inputs);
        fact("sample inputs", ep.example_inputs.empty() ? "none (runs use seeded inputs)"
                                                        : std::to_string(ep.example_inputs.size()) +
                                                              " (data/sample_inputs/model.pt)");
        if (!ep.reference_outputs.empty())
            fact("reference", "PyTorch eager outputs (extra/pt2lab)");
        for (const std::string& w : ep.warnings) fact("warning", w, colors::warn);
    } else {
        fact("format", "symbolic_trace graph (torch.fx), no ExportedProgram");
    }
    end_facts();
    if (ws.has_program() && ws.original().provenance.present &&
        !ws.original().provenance.note.empty() && ImGui::TreeNode("how this file was made")) {
        text_wrapped(ws.original().provenance.note, colors::text_dim);
        ImGui::TreePop();
    }

    section("Ops");
    const PanelCaches::Facts& facts = graph_facts(app);
    if (facts.key == ShownKey{}) // the first version's, a frame or two after it opened
        ImGui::TextDisabled("Counting the ops of %zu nodes...", ws.graph(app.view().graph).size());
    for (const auto& [op, count] : facts.kinds) {
        ImGui::TextColored(to_vec4(op_color(op)), "%s", op_label(op));
        ImGui::SameLine(px(120));
        ImGui::Text("%d", count);
    }
    ImGui::Spacing();
    if (ImGui::BeginTable("calls", 2, ImGuiTableFlags_SizingFixedFit)) {
        ImGui::TableSetupColumn("count", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("op", ImGuiTableColumnFlags_WidthStretch);
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
        ImGui::TextColored(to_vec4(colors::bad), "The executor cannot run:");
        for (const auto& u : unsupported) {
            ImGui::BulletText("%s (%zu nodes)", u.target.c_str(), u.nodes.size());
            if (ImGui::IsItemClicked() && !u.nodes.empty()) app.select(u.nodes.front());
        }
    }
    const std::string& lint = facts.lint;
    if (!lint.empty()) {
        ImGui::Spacing();
        ImGui::TextColored(to_vec4(colors::bad), "graph.lint() fails:");
        text_wrapped(lint, colors::bad);
    }
}

void lesson_graphs(App& app) {
    section("Lesson graphs");
    for (const std::string& f : app.lesson_files()) {
        bool open = f == app.file_name();
        if (ImGui::Selectable(f.c_str(), open) && !open) app.open_asset(f);
        expose(app, "lesson:" + f);
    }
    ImGui::Spacing();
    text_wrapped("Or open your own torch.export file (.pt2 or .json): drop it on the page or use "
                 "Open file. It is read in the browser and never uploaded.",
                 colors::text_dim);
    if (ImGui::Button("Open file...")) app.open_picker();
    expose(app, "file:open");
}

void history(App& app) {
    const Workspace& ws = *app.workspace();
    auto undo = ws.undo_history();
    auto redo = ws.redo_history();
    if (undo.empty() && redo.empty()) return;
    section("History");
    ImGui::TextDisabled("as loaded");
    for (size_t i = 0; i < undo.size(); ++i) {
        bool last = i + 1 == undo.size();
        ImGui::BulletText("%s%s", undo[i].label.c_str(), last ? "  (now)" : "");
    }
    for (const HistoryEntry& h : redo) {
        ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(colors::text_dim));
        ImGui::BulletText("%s  (undone)", h.label.c_str());
        ImGui::PopStyleColor();
    }
}

} // namespace

void draw_file_panel(App& app, ImVec2 pos, ImVec2 size) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("File", nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    if (app.workspace()) {
        file_facts(app);
        history(app);
    }
    lesson_graphs(app);
    lesson_list(app);
    ImGui::End();
}

} // namespace pt2lab::app::ui
