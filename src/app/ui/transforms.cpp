// Transformation buttons as Workspace actions (see transforms.h).
#include "ui/transforms.h"

namespace pt2lab::app::ui {

void post_decompose(App& app, IrLevel level) {
    Action a;
    a.kind = Action::Kind::Decompose;
    a.level = level;
    a.label = std::string("decompose to ") + ir_level_name(level);
    app.post(a);
}

void post_fold_conv_bn(App& app) {
    app.post(Action::of(Action::Kind::FoldConvBn));
}

void post_prepare(App& app) {
    app.post(Action::of(Action::Kind::Prepare));
}

void post_calibrate(App& app, int batches) {
    Action a;
    a.kind = Action::Kind::Calibrate;
    a.inputs = app.view().run_inputs;
    a.repeat = batches;
    a.label = "calibrate on " + std::to_string(batches) + " batches";
    app.post(a);
}

void post_convert(App& app, bool fold_quantize) {
    Action a;
    a.kind = Action::Kind::Convert;
    a.fold_quantize = fold_quantize;
    app.post(a);
}

void post_dead_code_elimination(App& app) {
    EditAction e;
    e.kind = EditAction::Kind::EliminateDeadCode;
    app.post(Action::of(e));
}

void post_recompile(App& app) {
    EditAction e;
    e.kind = EditAction::Kind::Recompile;
    app.post(Action::of(e));
}

void post_set_training(App& app, bool train) {
    Action a;
    a.kind = Action::Kind::SetTraining;
    a.train = train;
    a.label = train ? "module.train()" : "module.eval()";
    app.post(a);
}

bool has_observers(const Workspace& ws) {
    return !ws.state().observers.empty();
}

} // namespace pt2lab::app::ui
