// The graph view panel (centre): toolbar and canvas over the App's scene.
#pragma once

#include <imgui.h>

#include "app.h"

namespace pt2lab::app::ui {

void draw_graph_view(App& app, ImVec2 pos, ImVec2 size);

// The smallest size fit_camera shows a node title at, in CSS pixels.
constexpr float kLegiblePx = 11;

// Camera moves shared by the canvas, the toolbar and the keyboard. fit_camera
// fits the graph, never below legible (then it starts at the graph's input).
void fit_camera(Camera& cam, const Scene& sc, const CanvasRect& r);
void zoom_camera(Camera& cam, const CanvasRect& r, float factor, LayoutPoint anchor_screen);
// Centres the node when it is outside the visible part of the canvas.
void reveal_node(Camera& cam, const Scene& sc, const CanvasRect& r, int index);

} // namespace pt2lab::app::ui
