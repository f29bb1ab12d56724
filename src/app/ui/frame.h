// One frame of the page's panels (the layout, splitters, shortcuts).
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

void draw_frame(App& app);

} // namespace pt2lab::app::ui
