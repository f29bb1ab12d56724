// The strip over the top of the graph canvas while an action runs (App::busy)
// or a file opens (App::opening_file): what it does, how far it is, how long it
// has taken, and Cancel.
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

// Draws the strip (after the graph view, so it lies over the canvas) while a job
// is in flight: Workspace::progress()'s text, done / total nodes as a bar, the
// seconds since it began and Cancel (Esc too), which leaves the workspace exactly
// as before the action. While a file opens: "Opening <file> (<size>)", the
// open's progress (bytes parsed, node k of n, tensor k of n) and Cancel, which
// keeps the file shown. Its rectangles are exposed as "job" and "cancel".
void draw_job_strip(App& app);

} // namespace pt2lab::app::ui
