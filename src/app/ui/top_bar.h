// The top bar and the error banner under it.
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

float top_bar_height();
void draw_top_bar(App& app, float width);
float error_banner_height(const App& app);
void draw_error_banner(App& app, float y, float width);

} // namespace pt2lab::app::ui
