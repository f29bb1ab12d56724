// The graph view's toolbar and the parity badge it shares with the Run tab.
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

void draw_graph_toolbar(App& app, const Scene& sc);
// The last run's verdict (bit-identical / allclose / differs, or stale) and a Run button.
void draw_parity_badge(App& app);
// The call_function nodes of `g`: the count the toolbar draws beside the node count.
int call_function_count(const Graph& g);
// Posts a Run with the Run tab's input source.
void run_now(App& app);

} // namespace pt2lab::app::ui
