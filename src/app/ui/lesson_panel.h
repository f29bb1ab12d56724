// The left column in a lesson: lesson list with progress, language switch,
// the step's prose, its action button, its check with feedback, navigation.
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

void draw_lesson_panel(App& app, ImVec2 pos, ImVec2 size);
// The lessons with their progress (also in the file panel when no lesson is open).
void lesson_list(App& app);

} // namespace pt2lab::app::ui
