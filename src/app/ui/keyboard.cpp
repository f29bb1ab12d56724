// Keyboard focus on the canvas (see keyboard.h): Dear ImGui's keyboard
// navigation walks the left panel; this file decides where Tab goes at the
// panel's ends and draws the focus ring.
#include "ui/keyboard.h"

#include <imgui.h>
#include <imgui_internal.h>

#include "platform/platform.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

// The owner of Left / Right while a lesson is open: ImGui's navigation leaves
// keys that have an owner alone, the shortcuts read them regardless.
const ImGuiID kStepKeysOwner = 0x50544C53; // "PTLS"

bool ring_shown() {
    const ImGuiContext& g = *GImGui;
    return g.NavId != 0 && !g.NavDisableHighlight;
}

} // namespace

void keyboard_focus_begin(App& app) {
    ImGuiContext& g = *GImGui;
    ImGuiIO& io = ImGui::GetIO();
    UiState& ui = app.ui();
    ui.tab_first_shown = ui.tab_first;
    ui.tab_last_shown = ui.tab_last;
    ui.tab_first = ui.tab_last = 0;
    ui.focused.clear();
    const bool nav_was_a_stop = ui.nav_is_stop;
    ui.nav_is_stop = false;
    // The HTML has focus: no ring on the canvas (the browser draws the HTML's).
    if (!platform::canvas_focused()) g.NavDisableHighlight = true;
    if (app.lesson()) {
        ImGui::SetKeyOwner(ImGuiKey_LeftArrow, kStepKeysOwner);
        ImGui::SetKeyOwner(ImGuiKey_RightArrow, kStepKeysOwner);
    }
    if (!ImGui::IsKeyPressed(ImGuiKey_Tab, true) || io.KeyCtrl || io.KeyAlt) return;
    if (ui.tab_first_shown == 0 || !platform::canvas_focused()) return;
    const bool back = io.KeyShift;
    const bool in_scope = g.NavWindow && g.NavWindow->RootWindowForNav &&
                          g.NavWindow->RootWindowForNav->ID == ui.tab_scope;
    if (!in_scope || !ring_shown() || !nav_was_a_stop) {
        // From the graph, a dock tab, the mouse, a control that went away or
        // nowhere: Tab starts at the panel's first control, Shift+Tab at its last.
        ImGui::NavMoveRequestCancel();
        ui.focus_request = back ? -1 : 1;
        return;
    }
    if (ring_shown() && g.NavId == (back ? ui.tab_first_shown : ui.tab_last_shown)) {
        // Past the panel's ends: the page's HTML (web/bridge.js focusOut), and
        // back into the canvas at the other end (keyboard_focus_item).
        ImGui::NavMoveRequestCancel();
        g.NavDisableHighlight = true;
        platform::focus_page(back ? -1 : 1);
    }
}

void keyboard_focus_scope(App& app) {
    app.ui().tab_scope = ImGui::GetCurrentWindow()->RootWindowForNav->ID;
}

void keyboard_focus_item(App& app, const std::string& name) {
    ImGuiContext& g = *GImGui;
    UiState& ui = app.ui();
    const ImGuiWindow* w = g.CurrentWindow;
    if (ui.tab_scope == 0 || !w->RootWindowForNav || w->RootWindowForNav->ID != ui.tab_scope)
        return;
    const ImGuiID id = g.LastItemData.ID;
    if (id == 0 || (g.LastItemData.InFlags & (ImGuiItemFlags_Disabled | ImGuiItemFlags_NoTabStop)))
        return;
    if (ui.tab_first == 0) ui.tab_first = id;
    ui.tab_last = id;
    const bool want = ui.focus_request > 0   ? id == ui.tab_first
                      : ui.focus_request < 0 ? id == ui.tab_last_shown
                                             : false;
    if (want) {
        ImGui::SetKeyboardFocusHere(-1);
        g.NavDisableHighlight = false;
        g.NavDisableMouseHover = true;
        ui.focus_request = 0;
    }
    if (g.NavId == id) ui.nav_is_stop = true;
    if (g.NavId == id && ring_shown()) {
        ui.focused = name;
        keyboard_focus_ring();
    }
}

bool keyboard_focused() {
    const ImGuiContext& g = *GImGui;
    return ring_shown() && g.NavId == g.LastItemData.ID;
}

bool keyboard_focus_shown() {
    return ring_shown() && platform::canvas_focused();
}

void keyboard_focus_ring() {
    if (!keyboard_focused()) return;
    const ImRect& r = GImGui->LastItemData.Rect;
    float o = px(2.5f);
    ImGui::GetWindowDrawList()->AddRect(ImVec2(r.Min.x - o, r.Min.y - o),
                                        ImVec2(r.Max.x + o, r.Max.y + o), colors::focus, px(5), 0,
                                        px(2.5f));
}

} // namespace pt2lab::app::ui
