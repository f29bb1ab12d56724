// Keyboard focus on the canvas: Tab and Shift+Tab walk the left panel's
// controls in reading order (Dear ImGui's own keyboard navigation), past its
// ends focus goes to the page's HTML (the "Lesson as text" link, the text view)
// and comes back; the focused control is always ringed. Not the shortcuts
// (ui/frame.cpp) and not the HTML side (web/bridge.js).
#pragma once

#include <string>

#include "app.h"

namespace pt2lab::app::ui {

// At the start of a frame, before any panel: Tab past the panel's last control
// (Shift+Tab before its first) hands focus to the HTML; Tab from the HTML into
// the canvas, or from a window without controls, lands on the panel's first
// (last) control. Keeps Left / Right for the lesson's steps, not for moving focus.
void keyboard_focus_begin(App& app);
// Right after the left panel's Begin(): its controls are the ones Tab walks.
void keyboard_focus_scope(App& app);
// After each named control (widgets.h's expose): records it as a tab stop of the
// scope and applies a pending "focus the first / last control".
void keyboard_focus_item(App& app, const std::string& name);
// Whether the last item has keyboard focus with the focus ring shown.
bool keyboard_focused();
// Whether any control of the canvas has keyboard focus with its ring shown (then
// Enter and Space press that control, not the lesson step's button).
bool keyboard_focus_shown();
// A focus ring around the last item (for controls drawn by hand: InvisibleButton).
void keyboard_focus_ring();

} // namespace pt2lab::app::ui
