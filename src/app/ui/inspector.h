// The node inspector panel (right column).
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

void draw_inspector(App& app, ImVec2 pos, ImVec2 size);

} // namespace pt2lab::app::ui
