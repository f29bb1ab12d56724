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
    if (small_button(app, label(app, Str::tool_expand_all).c_str())) app.expand_all_modules(true);
    expose(app, "modules:expand all");
    same_line_fit(app, button_width(tr(app, Str::tool_collapse_all)), px(2));
    if (small_button(app, label(app, Str::tool_collapse_all).c_str()))
        app.expand_all_modules(false);
    expose(app, "modules:collapse all");
    same_line_fit(app, ImGui::CalcTextSize(tr(app, Str::tool_module)).x);
    ImGui::TextDisabled("%s", tr(app, Str::tool_module));
    same_line_fit(app, button_width(tr(app, Str::tool_model)));
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
    if (small_button(app, label(app, Str::tool_model).c_str())) app.expand_all_modules(false);
    expose(app, "crumb:model");
    for (int g : tree.chain(at)) {
        const ModuleGroup& m = tree.groups[static_cast<size_t>(g)];
        size_t dot = m.path.find_last_of('.');
        std::string label =
            (dot == std::string::npos ? m.path : m.path.substr(dot + 1)) + "##" + m.path;
        same_line_fit(app, ImGui::CalcTextSize(">").x + px(3) + button_width(label.c_str()), px(3));
        ImGui::TextDisabled(">");
        ImGui::SameLine(0, px(3));
        if (!m.collapsible) ImGui::BeginDisabled();
        if (small_button(app, label.c_str())) app.toggle_module(m.path);
        if (!m.collapsible) ImGui::EndDisabled();
        expose(app, "crumb:" + m.path);
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(
                tr(app, m.collapsible ? Str::tool_crumb_collapse : Str::tool_crumb_tip),
                m.path.c_str(), m.type.c_str(), m.nodes);
    }
    if (const Node* n = app.selected_node()) {
        same_line_fit(app, ImGui::CalcTextSize(("> " + n->name()).c_str()).x, px(3));
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

int call_function_count(const Graph& g) {
    int calls = 0;
    for (const Node* n : g.nodes()) calls += n->op() == Op::CallFunction;
    return calls;
}

void draw_parity_badge(App& app) {
    const Workspace& ws = *app.workspace();
    const auto& run = ws.last_run();
    // The toolbar's first row ends with it (the caller's item before): wrapped as a whole.
    const float run_w = ImGui::GetStyle().ItemSpacing.x + button_width(tr(app, Str::tool_run));
    if (!run) {
        same_line_fit(app, badge_width(tr(app, Str::tool_not_run)) + run_w);
        badge(tr(app, Str::tool_not_run), colors::text_dim);
    } else if (run->version != ws.version()) {
        same_line_fit(app, badge_width(tr(app, Str::tool_changed_since)) + run_w);
        badge(tr(app, Str::tool_changed_since), colors::warn);
    } else {
        const ParityReport& p = run->parity;
        std::string word = parity_word(app, p);
        if (parity_plain(p))
            word = strf(tr(app, Str::tool_max_diff), word.c_str(), diff_text(p.max_abs()).c_str());
        const std::string text = strf(tr(app, Str::tool_parity), word.c_str());
        same_line_fit(app, badge_width(text) + run_w);
        badge(text, parity_color(p));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(tr(app, Str::tool_parity_tip), run->inputs_label.c_str(),
                              p.str().c_str());
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(app.busy());
    if (small_button(app, label(app, Str::tool_run).c_str())) run_now(app);
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
    same_line_fit(app, button_width("ep.module()"), px(2));
    if (segment("ep.module()", fv.graph == GraphView::Module)) app.set_view(GraphView::Module);
    expose(app, "view:ep.module()");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::tool_module_tip));
    const std::string level = ws.has_program() ? ir_level_name(ws.level()) : "symbolic_trace";
    same_line_fit(app, badge_width(level));
    badge(level, colors::code_target);
    PanelCaches::Toolbar& counts = fv.caches.toolbar; // counted once per shown version
    if (counts.calls_key != app.shown_key()) {
        counts.calls = call_function_count(ws.graph(fv.graph));
        counts.calls_key = app.shown_key();
    }
    const std::string count_text =
        strf(tr(app, Str::tool_counts), ws.graph(fv.graph).size(), counts.calls);
    same_line_fit(app, ImGui::CalcTextSize(count_text.c_str()).x);
    ImGui::TextDisabled("%s", count_text.c_str());
    draw_parity_badge(app);

    // Row 2: camera, search, diff legend.
    if (small_button(app, label(app, Str::tool_fit).c_str())) fit_camera(cam, sc, ui.canvas);
    expose(app, "fit");
    same_line_fit(app, ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                           ImGui::CalcTextSize(tr(app, Str::tool_weights_inside)).x);
    bool inside = fv.weights_inside;
    if (ImGui::Checkbox(label(app, Str::tool_weights_inside).c_str(), &inside))
        app.set_weights_inside(inside);
    expose(app, "weights inside");
    same_line_fit(app, 2 * button_width(" + ") + px(2) + ImGui::CalcTextSize(" 100%").x +
                           ImGui::GetStyle().ItemSpacing.x);
    LayoutPoint mid{ui.canvas.x + ui.canvas.w * 0.5f, ui.canvas.y + ui.canvas.h * 0.5f};
    if (small_button(app, " - ")) zoom_camera(cam, ui.canvas, 1 / 1.25f, mid);
    ImGui::SameLine(0, px(2));
    if (small_button(app, " + ")) zoom_camera(cam, ui.canvas, 1.25f, mid);
    ImGui::SameLine();
    ImGui::TextDisabled("%3.0f%%", cam.zoom * 100);
    same_line_fit(app, px(190));
    ImGui::SetNextItemWidth(px(190));
    char buf[128]; // the query is FileView::search; ImGui keeps the edit state while typing
    std::snprintf(buf, sizeof buf, "%s", fv.search.c_str());
    bool enter = ImGui::InputTextWithHint("##search", tr(app, Str::tool_search_hint), buf,
                                          sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
    expose(app, "search");
    if (ImGui::IsItemEdited()) {
        fv.search = buf;
        fv.search_hit = -1;
        app.glyphs().note(fv.search); // typed (an IME's Chinese too): drawn, not "?"
    }
    if (fv.search.empty() && ImGui::IsKeyPressed(ImGuiKey_Slash) && !ImGui::GetIO().WantTextInput)
        ImGui::SetKeyboardFocusHere(-1);
    const std::vector<uint32_t>& matches = app.search_ids();
    if (!fv.search.empty()) {
        ImGui::SameLine();
        if (matches.empty()) {
            ImGui::TextColored(to_vec4(colors::warn), "%s", tr(app, Str::tool_no_match));
        } else {
            bool next = enter || small_button(app, ">");
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
                const std::string text = strf(tr(app, what), n);
                same_line_fit(app, badge_width(text));
                badge(text, col);
            };
            ImGui::TextDisabled("%s", tr(app, Str::tool_changes));
            legend(Str::tool_added, out->diff.added.size(), colors::added);
            legend(Str::tool_removed, out->diff.removed.size(), colors::removed);
            legend(Str::tool_rewired, out->diff.rewired.size(), colors::rewired);
            legend(Str::tool_changed, out->diff.changed.size(), colors::rewired);
            same_line_fit(app, button_width(tr(app, Str::tool_hide)));
            if (small_button(app, label(app, Str::tool_hide).c_str())) fv.show_diff = false;
            expose(app, "hide changes");
        } else if (small_button(app, label(app, Str::tool_show_changes).c_str())) {
            fv.show_diff = true;
        }
    }
    draw_module_bar(app);
    ImGui::EndGroup();
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + px(2));
}

} // namespace pt2lab::app::ui
