// The left column: the open file's facts, the lesson graphs, the history.
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

void draw_file_panel(App& app, ImVec2 pos, ImVec2 size);

} // namespace pt2lab::app::ui
