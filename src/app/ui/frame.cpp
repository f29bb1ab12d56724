// One frame of the page: DESIGN.md section 6's layout with draggable
// splitters, the keyboard shortcuts and their "?" overlay.
#include "ui/frame.h"

#include <imgui_internal.h> // the window under a press, ClearActiveID

#include <algorithm>

#include "ui/code_panel.h"
#include "ui/compare_view.h"
#include "ui/file_panel.h"
#include "ui/graph_toolbar.h"
#include "ui/graph_view.h"
#include "ui/inspector.h"
#include "ui/job_strip.h"
#include "ui/keyboard.h"
#include "ui/lesson_panel.h"
#include "ui/log_panel.h"
#include "ui/observers_panel.h"
#include "ui/program_panel.h"
#include "ui/run_panel.h"
#include "ui/theme.h"
#include "ui/top_bar.h"
#include "ui/transforms.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

// A draggable bar between panels; returns the drag in device pixels.
float splitter(const char* id, ImVec2 pos, ImVec2 size, bool vertical) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowMinSize, ImVec2(1, 1));
    ImGui::Begin(id, nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoSavedSettings);
    ImGui::PopStyleVar(2);
    ImGui::InvisibleButton("bar", size);
    bool active = ImGui::IsItemActive();
    if (ImGui::IsItemHovered() || active) {
        ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
        ImGui::GetWindowDrawList()->AddRectFilled(pos, ImVec2(pos.x + size.x, pos.y + size.y),
                                                  colors::rgb(0x4A5468));
    }
    float d = active ? (vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y) : 0;
    ImGui::End();
    return d;
}

void draw_tab(App& app, Tab t) {
    switch (t) {
    case Tab::Code: draw_code_tab(app); break;
    case Tab::Run: draw_run_tab(app); break;
    case Tab::Observers: draw_observers_tab(app); break;
    case Tab::Program: draw_program_tab(app); break;
    case Tab::Log: draw_log_tab(app); break;
    }
}

// A lesson step that points at two of the dock's tabs (M00-2's run beside the
// buffers it changes) gets the second drawn beside the first, in a pane of its
// own with the tab's name and a close button, when the dock is wide enough for
// two; the learner's own choice of tab on the left is untouched.
void side_pane(App& app, Tab t, ImVec2 pos, ImVec2 size) {
    UiState& ui = app.ui();
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("dock side", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr(app, tab_label(t)));
    expose(app, "tab:side");
    const std::string close = label(app, Str::side_close);
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(),
                             ImGui::GetContentRegionMax().x - button_width(close.c_str())));
    if (small_button(app, close.c_str())) app.view().side_tab.reset();
    expose(app, "tab:side:close");
    ImGui::Separator();
    ImGui::BeginChild("side", ImVec2(0, 0), false,
                      t == Tab::Code ? ImGuiWindowFlags_NoScrollbar : 0);
    draw_tab(app, t);
    ImGui::EndChild();
    ImGui::End();
    ui.side_tab = t;
}

void bottom_dock(App& app, ImVec2 pos, ImVec2 size) {
    UiState& ui = app.ui();
    ui.side_tab.reset();
    if (!app.workspace()) {
        ImGui::SetNextWindowPos(pos);
        ImGui::SetNextWindowSize(size);
        ImGui::Begin("dock", nullptr,
                     ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                         ImGuiWindowFlags_NoBringToFrontOnFocus);
        ImGui::End();
        return;
    }
    const std::optional<Tab> side = app.view().side_tab;
    const bool split = side && *side != app.settings().tab && size.x >= px(720);
    ImVec2 own = size;
    if (split) own.x = (size.x - px(5)) * 0.5f;
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(own);
    ImGui::Begin("dock", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    if (ImGui::BeginTabBar("tabs")) {
        for (Tab t : {Tab::Code, Tab::Run, Tab::Observers, Tab::Program, Tab::Log}) {
            Tab& shown = app.settings().tab;
            ImGuiTabItemFlags flags =
                ui.tab_requested && shown == t ? ImGuiTabItemFlags_SetSelected : 0;
            // The label in the page's language; the id ("###tab_code") stays, so the
            // tab shown stays selected when the language changes.
            bool open = ImGui::BeginTabItem(label(app, tab_label(t)).c_str(), nullptr, flags);
            expose(app, std::string("tab:") + tab_name(t));
            if (open) {
                if (!ui.tab_requested) shown = t;
                ImGui::BeginChild("tab", ImVec2(0, 0), false,
                                  t == Tab::Code ? ImGuiWindowFlags_NoScrollbar : 0);
                draw_tab(app, t);
                ImGui::EndChild();
                ImGui::EndTabItem();
            }
        }
        ui.tab_requested = false;
        ImGui::EndTabBar();
    }
    ImGui::End();
    if (split)
        side_pane(app, *side, ImVec2(pos.x + own.x + px(5), pos.y),
                  ImVec2(size.x - own.x - px(5), size.y));
}

void select_step(App& app, int delta) {
    const Workspace* ws = app.workspace();
    if (!ws) return;
    std::vector<Node*> nodes = ws->graph(app.view().graph).nodes();
    if (nodes.empty()) return;
    int at = -1;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i]->id() == app.view().selected) at = static_cast<int>(i);
    int n = static_cast<int>(nodes.size());
    int next = at < 0 ? (delta > 0 ? 0 : n - 1) : std::clamp(at + delta, 0, n - 1);
    app.select(nodes[static_cast<size_t>(next)]->id());
}

struct Shortcut {
    Str keys, what;
};
constexpr Shortcut kShortcuts[] = {
    {Str::keys_f, Str::keys_f_what},         {Str::keys_zoom, Str::keys_zoom_what},
    {Str::keys_0, Str::keys_0_what},         {Str::keys_drag, Str::keys_drag_what},
    {Str::keys_slash, Str::keys_slash_what}, {Str::keys_np, Str::keys_np_what},
    {Str::keys_esc, Str::keys_esc_what},     {Str::keys_12, Str::keys_12_what},
    {Str::keys_ec, Str::keys_ec_what},       {Str::keys_w, Str::keys_w_what},
    {Str::keys_r, Str::keys_r_what},         {Str::keys_d, Str::keys_d_what},
    {Str::keys_q, Str::keys_q_what},         {Str::keys_k, Str::keys_k_what},
    {Str::keys_v, Str::keys_v_what},         {Str::keys_o, Str::keys_o_what},
    {Str::keys_tab, Str::keys_tab_what},     {Str::keys_space, Str::keys_space_what},
    {Str::keys_enter, Str::keys_enter_what}, {Str::keys_undo, Str::keys_undo_what},
    {Str::keys_redo, Str::keys_redo_what},   {Str::keys_arrows, Str::keys_arrows_what},
    {Str::keys_help, Str::keys_help_what},
};

void shortcuts(App& app) {
    ImGuiIO& io = ImGui::GetIO();
    UiState& ui = app.ui();
    FileView& fv = app.view();
    if (io.WantTextInput) return;
    bool ctrl = io.KeyCtrl || io.KeySuper;
    if (ctrl && ImGui::IsKeyPressed(ImGuiKey_Z, false)) {
        if (io.KeyShift)
            app.post_redo();
        else
            app.post_undo();
        return;
    }
    if (ctrl && ImGui::IsKeyPressed(ImGuiKey_Y, false)) {
        app.post_redo();
        return;
    }
    if (ctrl || io.KeyAlt) return;
    // '?' arrives as a character (Shift+/ on most layouts).
    for (ImWchar c : io.InputQueueCharacters)
        if (c == '?') ui.show_help = !ui.show_help;
    if (ImGui::IsKeyPressed(ImGuiKey_Escape, false)) {
        if (ui.show_help)
            ui.show_help = false;
        else if (app.busy() || app.opening_file())
            app.cancel_job(); // the job strip's Cancel
        else
            app.select(0);
    }
    if (const LessonRunner* r = app.lesson()) {
        if (ImGui::IsKeyPressed(ImGuiKey_RightArrow, false) && r->step() < r->step_count())
            app.lesson_go(r->step() + 1);
        if (ImGui::IsKeyPressed(ImGuiKey_LeftArrow, false) && r->step() > 1)
            app.lesson_go(r->step() - 1);
        // Enter presses the step's button unless a control has keyboard focus
        // (then Enter is that control's).
        if ((ImGui::IsKeyPressed(ImGuiKey_Enter, false) ||
             ImGui::IsKeyPressed(ImGuiKey_KeypadEnter, false)) &&
            !keyboard_focus_shown() && !r->current().button.empty() && !r->performed())
            app.lesson_perform();
    }
    if (ImGui::IsKeyPressed(ImGuiKey_O, false)) app.open_picker();
    if (!app.workspace()) return;
    // The top bar's transformations (in a lesson its steps change the graphs: the
    // app says so when one of these is pressed there). While an action runs their
    // buttons are off, and so are their keys; undo and redo wait for it.
    const bool busy = app.busy();
    if (ImGui::IsKeyPressed(ImGuiKey_D, false) && !busy)
        post_decompose(app, io.KeyShift ? IrLevel::CoreAten : IrLevel::Inference);
    if (ImGui::IsKeyPressed(ImGuiKey_Q, false) && !busy) post_prepare(app);
    if (ImGui::IsKeyPressed(ImGuiKey_K, false) && !busy) post_calibrate(app, kCalibrationBatches);
    if (ImGui::IsKeyPressed(ImGuiKey_V, false) && !busy) post_convert(app, true);
    Camera& cam = fv.camera[fv.graph == GraphView::Program ? 0 : 1];
    LayoutPoint mid{ui.canvas.x + ui.canvas.w * 0.5f, ui.canvas.y + ui.canvas.h * 0.5f};
    if (ImGui::IsKeyPressed(ImGuiKey_F, false)) fit_camera(cam, app.scene(fv.graph), ui.canvas);
    if (ImGui::IsKeyPressed(ImGuiKey_Equal) || ImGui::IsKeyPressed(ImGuiKey_KeypadAdd))
        zoom_camera(cam, ui.canvas, 1.25f, mid);
    if ((ImGui::IsKeyPressed(ImGuiKey_Minus) && !io.KeyShift) ||
        ImGui::IsKeyPressed(ImGuiKey_KeypadSubtract))
        zoom_camera(cam, ui.canvas, 1 / 1.25f, mid);
    if (ImGui::IsKeyPressed(ImGuiKey_0, false)) zoom_camera(cam, ui.canvas, 1 / cam.zoom, mid);
    if (ImGui::IsKeyPressed(ImGuiKey_1, false)) app.set_view(GraphView::Program);
    if (ImGui::IsKeyPressed(ImGuiKey_2, false)) app.set_view(GraphView::Module);
    if (ImGui::IsKeyPressed(ImGuiKey_R, false) && !busy) run_now(app);
    if (ImGui::IsKeyPressed(ImGuiKey_E, false)) app.expand_all_modules(true);
    if (ImGui::IsKeyPressed(ImGuiKey_W, false)) app.set_weights_inside(!fv.weights_inside);
    if (ImGui::IsKeyPressed(ImGuiKey_C, false)) app.expand_all_modules(false);
    bool step = false;
    if (ImGui::IsKeyPressed(ImGuiKey_N)) select_step(app, +1), step = true;
    if (ImGui::IsKeyPressed(ImGuiKey_P)) select_step(app, -1), step = true;
    if (step) {
        const Scene& sc = app.scene(fv.graph);
        reveal_node(cam, sc, ui.canvas, sc.find_shown(fv.selected));
    }
}

void help_overlay(App& app, ImVec2 display) {
    UiState& ui = app.ui();
    if (!ui.show_help) return;
    ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.4f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(px(520), 0));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(18), px(14)));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 1);
    ImGui::Begin(label(app, Str::keys_title).c_str(), &ui.show_help,
                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
    ImGui::PopStyleVar(2);
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_SizingFixedFit)) {
        // What a key does wraps in its column (a long line would be cut at the window's edge).
        ImGui::TableSetupColumn("##keys", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("##what", ImGuiTableColumnFlags_WidthStretch);
        for (const Shortcut& s : kShortcuts) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushFont(fonts().mono);
            ImGui::TextColored(to_vec4(colors::code_target), "%s", tr(app, s.keys));
            ImGui::PopFont();
            ImGui::TableNextColumn();
            text_wrapped(tr(app, s.what));
        }
        ImGui::EndTable();
    }
    ImGui::Spacing();
    text_wrapped(tr(app, Str::keys_drop), colors::text_dim);
    ImGui::End();
}

// Phones (390 x 844) and, in a lesson, tablets (768 x 1024): one panel fills the
// window under a row of buttons that switch it, every control at least 44 px tall.
constexpr float kCompactWidth = 700, kCompactLessonWidth = 1000, kTouchTarget = 44;

// The row of buttons that switch the compact layout's panel; returns its height.
float compact_switch(App& app, float top, float width, bool in_lesson) {
    UiState& ui = app.ui();
    const PageOptions& opt = app.options();
    struct Choice {
        UiState::Pane pane;
        const char* id;
        std::string label;
        bool shown;
    };
    const Choice choices[] = {
        {UiState::Pane::Side, "view:side", tr(app, in_lesson ? Str::pane_lesson : Str::panel_file),
         !opt.hide_left},
        {UiState::Pane::Graph, "view:graph", tr(app, Str::pane_graph), true},
        {UiState::Pane::Inspector, "view:node", tr(app, Str::panel_node), !opt.hide_inspector},
        {UiState::Pane::Dock, "view:panels", tr(app, Str::pane_panels), !opt.hide_dock},
    };
    int n = 0;
    for (const Choice& c : choices) n += c.shown;
    const float h = px(kTouchTarget) + px(8);
    ImGui::SetNextWindowPos(ImVec2(0, top));
    ImGui::SetNextWindowSize(ImVec2(width, h));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(4), px(4)));
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(px(4), px(4)));
    ImGui::Begin("views", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings);
    const float w = (width - px(4) * static_cast<float>(n + 1)) / static_cast<float>(n);
    bool first = true;
    for (const Choice& c : choices) {
        if (!c.shown) continue;
        if (!first) ImGui::SameLine();
        first = false;
        const bool on = ui.compact_pane == static_cast<int>(c.pane);
        if (on)
            ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
        if (ImGui::Button((c.label + "###" + c.id).c_str(), ImVec2(w, px(kTouchTarget))))
            ui.compact_pane = static_cast<int>(c.pane);
        if (on) ImGui::PopStyleColor();
        expose(app, c.id);
    }
    ImGui::End();
    ImGui::PopStyleVar(2);
    return h;
}

// Touch (the compact layout): a finger dragged over a panel scrolls it, as a
// phone's page would, and cancels the press it began with, so that a swipe that
// starts on an option or a button neither answers nor presses it. The graph and
// the compare panes (no scrolling with the mouse) pan with a drag of their own.
void touch_scroll(App& app) {
    UiState& ui = app.ui();
    ImGuiContext& g = *GImGui;
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
        ui.touch_window = g.HoveredWindow ? g.HoveredWindow->ID : 0;
    if (!ui.compact || !ImGui::IsMouseDown(ImGuiMouseButton_Left) || ui.touch_window == 0 ||
        !ImGui::IsMouseDragging(ImGuiMouseButton_Left, px(10)) || g.IO.WantTextInput)
        return;
    ImGuiWindow* w = ImGui::FindWindowByID(ui.touch_window);
    if (!w || (w->RootWindow->Flags & ImGuiWindowFlags_NoScrollWithMouse)) return;
    while (w->ScrollMax.y <= 0 && (w->Flags & ImGuiWindowFlags_ChildWindow) && w->ParentWindow)
        w = w->ParentWindow; // a child that does not scroll: the panel around it
    if (w->ScrollMax.y <= 0) return;
    if (g.ActiveId != 0) ImGui::ClearActiveID();
    ImGui::SetScrollY(w, std::clamp(w->Scroll.y - g.IO.MouseDelta.y, 0.0f, w->ScrollMax.y));
}

} // namespace

void draw_frame(App& app) {
    UiState& ui = app.ui();
    Settings& st = app.settings();
    const PageOptions& opt = app.options(); // ?hide=...: panels an embedding page leaves out
    ui.hovered_shown = ui.hovered;
    ui.hovered = 0;
    ui.widgets.clear();
    ui.widgets_cut.clear();
    ui.wants_frames = false;
    app.begin_frame();
    // The graph's scene takes the frame's allowance first (the file's facts and the
    // code wait a frame if it needs it all).
    if (app.workspace()) app.scene(app.view().graph);
    keyboard_focus_begin(app);
    ImVec2 display = ImGui::GetIO().DisplaySize;
    bool in_lesson = app.lesson() || !app.lesson_pending().empty();
    // One panel at a time needs two to choose from (an embedding may hide the rest).
    const int shown_panes = 1 + !opt.hide_left + !opt.hide_inspector + !opt.hide_dock;
    ui.compact = shown_panes > 1 && (display.x < px(kCompactWidth) ||
                                     (in_lesson && display.x < px(kCompactLessonWidth)));
    // Touch: every control at least kTouchTarget tall (the frame padding grows).
    const float pad_y = std::max(ImGui::GetStyle().FramePadding.y,
                                 (px(kTouchTarget) - ImGui::GetFontSize()) * 0.5f);
    if (ui.compact) {
        ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                            ImVec2(ImGui::GetStyle().FramePadding.x, pad_y));
        // The lesson first when one opens (a deep link opens it after the first frame),
        // and on a first visit (the welcome and the lesson list); the graph when a
        // lesson is left.
        if (ui.compact_pane < 0 || in_lesson != ui.compact_in_lesson) {
            const bool side =
                (in_lesson || (ui.compact_pane < 0 && app.first_visit())) && !opt.hide_left;
            ui.compact_pane = static_cast<int>(side ? UiState::Pane::Side : UiState::Pane::Graph);
        }
        ui.compact_in_lesson = in_lesson;
    }
    float top = opt.hide_top ? 0 : top_bar_height();
    if (!opt.hide_top) draw_top_bar(app, display.x);
    float banner = error_banner_height(app);
    draw_error_banner(app, top, display.x);
    top += banner;

    float W = display.x, H = display.y - top;
    float gap = px(5);
    float min_col = px(180);
    struct Rect {
        ImVec2 pos, size;
    };
    Rect file{}, graph{}, inspector{}, dock{};
    // Narrow windows (under 1000 CSS px, e.g. a 768 px tablet): the panels stack,
    // graph on top, file facts and inspector side by side, the dock below.
    bool stacked = W < px(1000);
    if (ui.compact) {
        float bar = compact_switch(app, top, W, in_lesson);
        Rect whole = {ImVec2(0, top + bar), ImVec2(W, H - bar)};
        switch (static_cast<UiState::Pane>(ui.compact_pane)) {
        case UiState::Pane::Side: file = whole; break;
        case UiState::Pane::Graph: graph = whole; break;
        case UiState::Pane::Inspector: inspector = whole; break;
        case UiState::Pane::Dock: dock = whole; break;
        }
    } else if (stacked) {
        float graph_h = (opt.hide_left && opt.hide_inspector && opt.hide_dock) ? H : H * 0.46f;
        bool row = !opt.hide_left || !opt.hide_inspector;
        float row_h = row ? (opt.hide_dock ? H - graph_h - gap : (H - graph_h) * 0.45f) : 0;
        float dock_h = H - graph_h - (row ? row_h + gap : 0) - gap;
        graph = {ImVec2(0, top), ImVec2(W, graph_h)};
        float y = top + graph_h + gap;
        float half = (!opt.hide_left && !opt.hide_inspector) ? (W - gap) * 0.5f : W;
        if (!opt.hide_left) file = {ImVec2(0, y), ImVec2(half, row_h)};
        if (!opt.hide_inspector)
            inspector = {ImVec2(opt.hide_left ? 0 : half + gap, y), ImVec2(half, row_h)};
        if (row) y += row_h + gap;
        if (!opt.hide_dock) dock = {ImVec2(0, y), ImVec2(W, dock_h)};
    } else {
        float left = opt.hide_left ? 0 : std::clamp(st.left_frac * W, min_col, W * 0.45f);
        float right = opt.hide_inspector ? 0 : std::clamp(st.right_frac * W, min_col, W * 0.45f);
        float bottom = opt.hide_dock ? 0 : std::clamp(st.bottom_frac * H, px(120), H * 0.7f);
        float lgap = opt.hide_left ? 0 : gap, rgap = opt.hide_inspector ? 0 : gap;
        float bgap = opt.hide_dock ? 0 : gap;
        float centre_x = left + lgap;
        float centre_w = std::max(px(200), W - left - right - lgap - rgap);
        float upper_h = H - bottom - bgap;
        file = {ImVec2(0, top), ImVec2(left, H)};
        graph = {ImVec2(centre_x, top), ImVec2(centre_w, upper_h)};
        inspector = {ImVec2(centre_x + centre_w + gap, top), ImVec2(right, upper_h)};
        dock = {ImVec2(centre_x, top + upper_h + gap), ImVec2(W - centre_x, bottom)};
    }

    auto panel = [&](const std::string& name, const Rect& r) {
        float k = fonts().scale;
        ui.widgets["panel:" + name] = {r.pos.x / k, r.pos.y / k, r.size.x / k, r.size.y / k};
    };
    // The step's own graph on the left of the graph area, its `compare` graphs to its
    // right (in the compact layout, under it).
    std::vector<App::CompareGraph> compare = app.compare_graphs();
    float panes = static_cast<float>(compare.size() + 1);
    Rect own = graph;
    if (ui.compact)
        own.size.y = (graph.size.y - gap * (panes - 1)) / panes;
    else
        own.size.x = (graph.size.x - gap * (panes - 1)) / panes;
    // A panel the compact layout does not show this frame is not drawn (size 0).
    auto shown = [](const Rect& r) { return r.size.x > 0 && r.size.y > 0; };
    if (!opt.hide_left && shown(file)) panel(in_lesson ? "lesson" : "file", file);
    if (shown(own)) panel("graph", own);
    if (!opt.hide_inspector && shown(inspector)) panel("inspector", inspector);
    if (!opt.hide_dock && shown(dock)) panel("dock", dock);
    if (!opt.hide_left && shown(file)) {
        if (in_lesson)
            draw_lesson_panel(app, file.pos, file.size);
        else
            draw_file_panel(app, file.pos, file.size);
    }
    if (shown(own)) {
        draw_graph_view(app, own.pos, own.size);
        for (size_t i = 0; i < compare.size(); ++i) {
            Rect pane = own;
            if (ui.compact)
                pane.pos.y += static_cast<float>(i + 1) * (own.size.y + gap);
            else
                pane.pos.x += static_cast<float>(i + 1) * (own.size.x + gap);
            panel("compare " + std::to_string(i), pane);
            draw_compare_view(app, i, pane.pos, pane.size);
        }
    }
    // The job strip sits over the graph; on a phone showing another panel, over that.
    if (ui.compact && !shown(own)) {
        const Rect& r = shown(file) ? file : shown(inspector) ? inspector : dock;
        ui.canvas = {r.pos.x, r.pos.y, r.size.x, r.size.y, fonts().scale};
    }
    draw_job_strip(app);
    if (!opt.hide_inspector && shown(inspector)) draw_inspector(app, inspector.pos, inspector.size);
    if (!opt.hide_dock && shown(dock)) bottom_dock(app, dock.pos, dock.size);

    if (!stacked && !ui.compact) {
        if (!opt.hide_left)
            if (float d = splitter("split left", ImVec2(file.size.x, top), ImVec2(gap, H), true))
                st.left_frac = std::clamp((file.size.x + d) / W, 0.12f, 0.45f);
        if (!opt.hide_inspector)
            if (float d = splitter("split right", ImVec2(graph.pos.x + graph.size.x, top),
                                   ImVec2(gap, graph.size.y), true))
                st.right_frac = std::clamp((inspector.size.x - d) / W, 0.12f, 0.45f);
        if (!opt.hide_dock)
            if (float d = splitter("split bottom", ImVec2(graph.pos.x, top + graph.size.y),
                                   ImVec2(W - graph.pos.x, gap), false))
                st.bottom_frac = std::clamp((dock.size.y - d) / H, 0.12f, 0.7f);
    }

    shortcuts(app);
    help_overlay(app, display);
    touch_scroll(app);
    if (ui.compact) ImGui::PopStyleVar();
    if (app.derive_waiting()) ui.wants_frames = true;
}

} // namespace pt2lab::app::ui
