// The Run & parity tab of the bottom dock.
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

void draw_run_tab(App& app);

} // namespace pt2lab::app::ui
