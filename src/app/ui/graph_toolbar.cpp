// The graph view's toolbar: ExportedProgram / ep.module() switch, IR level,
// node and op counts, the parity of the last run in plain sight; fit and
// zoom, search, and the diff legend when a transformation changed the graph.
#include "ui/graph_toolbar.h"

#include <cstdio>

#include "tensor_summary.h"
#include "ui/graph_view.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

bool segment(const char* label, bool active, bool enabled = true) {
    if (!enabled) ImGui::BeginDisabled();
    if (active) {
        ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3D4F73)));
        ImGui::PushStyleColor(ImGuiCol_ButtonHovered, to_vec4(colors::rgb(0x46598A)));
    }
    bool clicked = ImGui::Button(label);
    if (active) ImGui::PopStyleColor(2);
    if (!enabled) ImGui::EndDisabled();
    return clicked && !active;
}

std::string diff_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// Row 3, for graphs with modules (nn_module_stack): expand / collapse all and
// the breadcrumb of where the selection sits; a crumb collapses its module.
void draw_module_bar(App& app) {
    FileView& fv = app.view();
    const ModuleTree& tree = app.modules(fv.graph);
    bool any = false;
    for (const ModuleGroup& m : tree.groups) any |= m.collapsible;
    if (!any) return;
    if (ImGui::SmallButton(label(app, Str::tool_expand_all).c_str())) app.expand_all_modules(true);
    expose(app, "modules:expand all");
    ImGui::SameLine(0, px(2));
    if (ImGui::SmallButton(label(app, Str::tool_collapse_all).c_str()))
        app.expand_all_modules(false);
    expose(app, "modules:collapse all");
    ImGui::SameLine();
    ImGui::TextDisabled("%s", tr(app, Str::tool_module));
    ImGui::SameLine();
    // The selection's module, looked up when the selection or the shown graph changes.
    PanelCaches::Toolbar& c = fv.caches.toolbar;
    const ShownKey key = app.shown_key();
    if (c.crumb_key != key || c.crumb_selected != fv.selected ||
        c.crumb_group >= static_cast<int>(tree.groups.size())) {
        c.crumb_group = 0;
        c.crumb_key = key;
        c.crumb_selected = fv.selected;
        if (fv.selected) {
            std::vector<Node*> nodes = app.workspace()->graph(fv.graph).nodes();
            for (size_t i = 0; i < nodes.size() && i < tree.node_group.size(); ++i)
                if (nodes[i]->id() == fv.selected) c.crumb_group = tree.node_group[i];
        }
    }
    const int at = c.crumb_group;
    if (ImGui::SmallButton(label(app, Str::tool_model).c_str())) app.expand_all_modules(false);
    expose(app, "crumb:model");
    for (int g : tree.chain(at)) {
        const ModuleGroup& m = tree.groups[static_cast<size_t>(g)];
        ImGui::SameLine(0, px(3));
        ImGui::TextDisabled(">");
        ImGui::SameLine(0, px(3));
        size_t dot = m.path.find_last_of('.');
        std::string label =
            (dot == std::string::npos ? m.path : m.path.substr(dot + 1)) + "##" + m.path;
        if (!m.collapsible) ImGui::BeginDisabled();
        if (ImGui::SmallButton(label.c_str())) app.toggle_module(m.path);
        if (!m.collapsible) ImGui::EndDisabled();
        expose(app, "crumb:" + m.path);
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(
                tr(app, m.collapsible ? Str::tool_crumb_collapse : Str::tool_crumb_tip),
                m.path.c_str(), m.type.c_str(), m.nodes);
    }
    if (const Node* n = app.selected_node()) {
        ImGui::SameLine(0, px(3));
        ImGui::TextDisabled("> %s", n->name().c_str());
    }
}

} // namespace

void run_now(App& app) {
    Action a;
    a.kind = Action::Kind::Run;
    a.inputs = app.view().run_inputs;
    a.repeat = app.view().run_repeat;
    app.post(a);
}

void draw_parity_badge(App& app) {
    const Workspace& ws = *app.workspace();
    const auto& run = ws.last_run();
    if (!run) {
        badge(tr(app, Str::tool_not_run), colors::text_dim);
    } else if (run->version != ws.version()) {
        badge(tr(app, Str::tool_changed_since), colors::warn);
    } else {
        const ParityReport& p = run->parity;
        std::string word = parity_word(app, p);
        if (parity_plain(p))
            word = strf(tr(app, Str::tool_max_diff), word.c_str(), diff_text(p.max_abs()).c_str());
        badge(strf(tr(app, Str::tool_parity), word.c_str()), parity_color(p));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(tr(app, Str::tool_parity_tip), run->inputs_label.c_str(),
                              p.str().c_str());
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(app.busy());
    if (ImGui::SmallButton(label(app, Str::tool_run).c_str())) run_now(app);
    ImGui::EndDisabled();
    expose(app, "run");
}

void draw_graph_toolbar(App& app, const Scene& sc) {
    const Workspace& ws = *app.workspace();
    FileView& fv = app.view();
    UiState& ui = app.ui();
    Camera& cam = fv.camera[fv.graph == GraphView::Program ? 0 : 1];
    ImGui::SetCursorPos(ImVec2(px(8), px(6)));
    ImGui::BeginGroup();
    if (segment("ExportedProgram", fv.graph == GraphView::Program, ws.has_program()))
        app.set_view(GraphView::Program);
    expose(app, "view:ExportedProgram");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(
            "%s", tr(app, ws.has_program() ? Str::tool_program_tip : Str::tool_no_program_tip));
    ImGui::SameLine(0, px(2));
    if (segment("ep.module()", fv.graph == GraphView::Module)) app.set_view(GraphView::Module);
    expose(app, "view:ep.module()");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::tool_module_tip));
    ImGui::SameLine();
    badge(ws.has_program() ? ir_level_name(ws.level()) : "symbolic_trace", colors::code_target);
    ImGui::SameLine();
    PanelCaches::Toolbar& counts = fv.caches.toolbar; // counted once per shown version
    if (counts.calls_key != app.shown_key()) {
        counts.calls = 0;
        for (const Node* n : ws.graph(fv.graph).nodes())
            counts.calls += n->op() == Op::CallFunction;
        counts.calls_key = app.shown_key();
    }
    ImGui::TextDisabled(tr(app, Str::tool_counts), ws.graph(fv.graph).size(), counts.calls);
    ImGui::SameLine();
    draw_parity_badge(app);

    // Row 2: camera, search, diff legend.
    if (ImGui::SmallButton(label(app, Str::tool_fit).c_str())) fit_camera(cam, sc, ui.canvas);
    expose(app, "fit");
    ImGui::SameLine();
    bool inside = fv.weights_inside;
    if (ImGui::Checkbox(label(app, Str::tool_weights_inside).c_str(), &inside))
        app.set_weights_inside(inside);
    expose(app, "weights inside");
    ImGui::SameLine();
    LayoutPoint mid{ui.canvas.x + ui.canvas.w * 0.5f, ui.canvas.y + ui.canvas.h * 0.5f};
    if (ImGui::SmallButton(" - ")) zoom_camera(cam, ui.canvas, 1 / 1.25f, mid);
    ImGui::SameLine(0, px(2));
    if (ImGui::SmallButton(" + ")) zoom_camera(cam, ui.canvas, 1.25f, mid);
    ImGui::SameLine();
    ImGui::TextDisabled("%3.0f%%", cam.zoom * 100);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(190));
    char buf[128]; // the query is FileView::search; ImGui keeps the edit state while typing
    std::snprintf(buf, sizeof buf, "%s", fv.search.c_str());
    bool enter = ImGui::InputTextWithHint("##search", tr(app, Str::tool_search_hint), buf,
                                          sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
    expose(app, "search");
    if (ImGui::IsItemEdited()) {
        fv.search = buf;
        fv.search_hit = -1;
    }
    if (fv.search.empty() && ImGui::IsKeyPressed(ImGuiKey_Slash) && !ImGui::GetIO().WantTextInput)
        ImGui::SetKeyboardFocusHere(-1);
    const std::vector<uint32_t>& matches = app.search_ids();
    if (!fv.search.empty()) {
        ImGui::SameLine();
        if (matches.empty()) {
            ImGui::TextColored(to_vec4(colors::warn), "%s", tr(app, Str::tool_no_match));
        } else {
            bool next = enter || ImGui::SmallButton(">");
            if (next) {
                // A match inside a collapsed module: expand its modules, then select and show it.
                fv.search_hit = (fv.search_hit + 1) % static_cast<int>(matches.size());
                app.expand_to(matches[static_cast<size_t>(fv.search_hit)]);
                if (enter) ImGui::SetKeyboardFocusHere(-1);
            }
            ImGui::SameLine();
            ImGui::TextDisabled(tr(app, Str::tool_match), fv.search_hit + 1, matches.size());
        }
    }
    const auto& out = app.last_change();
    if (out && out->changed && !out->diff.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("|");
        ImGui::SameLine();
        if (out->view != fv.graph) {
            ImGui::TextDisabled(tr(app, Str::tool_changes_in), graph_view_name(out->view));
        } else if (fv.show_diff) {
            auto legend = [&](Str what, size_t n, ImU32 col) {
                if (n == 0) return;
                ImGui::SameLine();
                badge(strf(tr(app, what), n), col);
            };
            ImGui::TextDisabled("%s", tr(app, Str::tool_changes));
            legend(Str::tool_added, out->diff.added.size(), colors::added);
            legend(Str::tool_removed, out->diff.removed.size(), colors::removed);
            legend(Str::tool_rewired, out->diff.rewired.size(), colors::rewired);
            legend(Str::tool_changed, out->diff.changed.size(), colors::rewired);
            ImGui::SameLine();
            if (ImGui::SmallButton(label(app, Str::tool_hide).c_str())) fv.show_diff = false;
            expose(app, "hide changes");
        } else if (ImGui::SmallButton(label(app, Str::tool_show_changes).c_str())) {
            fv.show_diff = true;
        }
    }
    draw_module_bar(app);
    ImGui::EndGroup();
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + px(2));
}

} // namespace pt2lab::app::ui
