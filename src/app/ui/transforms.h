// The page's transformation buttons as Workspace actions (top bar, Observers
// tab and keys post the same ones), and whether each makes sense now.
#pragma once

#include "app.h"

namespace pt2lab::app::ui {

// Calibration batches of the Calibrate buttons: the inputs, then seeded batches
// SeededRng(1..8), as `pt2lab convert` calibrates.
constexpr int kCalibrationBatches = 9;

void post_decompose(App& app, IrLevel level);
void post_fold_conv_bn(App& app);
void post_prepare(App& app);
void post_calibrate(App& app, int batches);
void post_convert(App& app, bool fold_quantize);
void post_dead_code_elimination(App& app);
void post_recompile(App& app);
// module.train() / module.eval(): ep.module() refuses as torch does; a symbolic_trace module
// switches.
void post_set_training(App& app, bool train);

// Whether the module has MinMaxObservers (prepare ran or one was inserted).
bool has_observers(const Workspace& ws);

} // namespace pt2lab::app::ui
