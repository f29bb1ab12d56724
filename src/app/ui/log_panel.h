// The Log tab of the bottom dock.
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

void draw_log_tab(App& app);

} // namespace pt2lab::app::ui
