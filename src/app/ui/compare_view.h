// The graphs a lesson step shows beside its own (`compare`), read-only, each
// in its own pane right of the main graph view, fitted to the pane.
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

void draw_compare_view(App& app, size_t index, ImVec2 pos, ImVec2 size);

} // namespace pt2lab::app::ui
