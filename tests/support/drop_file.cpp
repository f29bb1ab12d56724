// The page's drop path over the Workspace (see drop_file.h): the file opens
// through Workspace::open, as App::open does, and every change is an Action
// built as the page's buttons build it (src/app/ui/transforms.cpp,
// graph_toolbar.cpp) and taken as the page takes it: begin(), advance() in
// slices, finish().
#include "drop_file.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "graph/printer.h"
#include "passes/decompose.h"
#include "workspace/workspace.h"

using namespace pt2lab;

namespace pt2lab_test {

namespace {

// The page's Calibrate button: the Run tab's inputs, then seeded batches
// (kCalibrationBatches in src/app/ui/transforms.h).
constexpr int kCalibrationBatches = 9;
// The finest slicing there is (a deadline already past: one node per slice), so
// every point where the page's frames can pause a run or a calibration is taken.
constexpr double kSlice = 1e-9;

// Starts a stage: closes the previous one's clock.
void begin(DropTrace& t, const std::string& stage) {
    auto now = std::chrono::steady_clock::now();
    if (!t.seconds.empty())
        t.seconds.back().second = std::chrono::duration<double>(now - t.stage_start).count();
    t.stage_start = now;
    t.stage = stage;
    t.seconds.emplace_back(stage, 0.0);
}

Status named(Status s, const std::string& name) {
    if (!s.ok() && s.error().file.empty()) s.error().file = name;
    return s;
}

// What the page shows of the workspace as text (the code tab's forms of each
// view with their line -> node map, the file panel's op counts, unsupported ops
// and lint, print(ep)), as sizes and hashes to compare two states by.
using Views = std::vector<std::pair<size_t, size_t>>;

Views print_views(const Workspace& ws, DropTrace& t) {
    Views v;
    auto add = [&](const std::string& s) {
        t.printed_bytes += s.size();
        v.emplace_back(s.size(), std::hash<std::string>()(s));
    };
    for (GraphView view : {GraphView::Program, GraphView::Module}) {
        if (view == GraphView::Program && !ws.has_program()) continue;
        const Graph& g = ws.graph(view);
        const CodeView& code = ws.code(view);
        add(code.text);
        std::string lines = code.stale ? "stale" : "";
        for (uint32_t id : code.line_nodes) lines += " " + std::to_string(id);
        add(lines);
        add(ws.readable(view));
        add(graph_str(g));
        add(print_tabular(g));
        std::string facts = ws.lint_message(view) + "\n";
        for (const auto& [op, n] : op_counts(g)) facts += op + " " + std::to_string(n) + "\n";
        for (const auto& u : ws.unsupported_ops(view))
            facts += u.target + " x" + std::to_string(u.nodes.size()) + "\n";
        add(facts);
    }
    if (ws.has_program()) add(ws.program_str());
    return v;
}

Action run_action(GraphView view, bool fast_kernels) {
    Action a; // the Run button: the Run tab's inputs (Auto), once
    a.kind = Action::Kind::Run;
    a.view = view;
    a.fast_kernels = fast_kernels;
    return a;
}

// Presses the page's buttons on one workspace and keeps the first error.
struct Driver {
    Workspace& ws;
    DropTrace& t;
    bool keep_going;
    Views shown; // the views as the page last drew them
    Status first;

    bool stop() const { return !first.ok() && !keep_going; }
    void failed(const Error& e, bool expected = false) {
        t.refused.emplace_back(t.stage, e);
        if (!expected && first.ok()) first = e;
    }

    // One action, as the page takes it: begin(), advance() slice by slice,
    // finish(); the views printed again when it changed a graph. A run whose
    // `inputs_stage` is set is in stage "inputs" until begin() has made its
    // inputs (a refused begin leaves no work to do: progress().total == 0).
    // An `expected` refusal is recorded but is not the file's error. True when
    // the action applied.
    bool press(const Action& a, const std::string& stage, bool inputs_stage = false,
               bool expected = false) {
        begin(t, inputs_stage ? "inputs" : stage);
        if (Status s = ws.begin(a); !s.ok()) {
            failed(s.error(), expected);
            return false;
        }
        if (inputs_stage && ws.progress().total > 0) begin(t, stage);
        while (!ws.advance(kSlice)) {
        }
        auto out = ws.finish();
        if (!out.ok()) {
            failed(out.error(), expected);
            return false;
        }
        ++t.actions;
        const bool graph_changed =
            out.value().changed && a.kind != Action::Kind::Run && a.kind != Action::Kind::Calibrate;
        if (graph_changed) shown = print_views(ws, t);
        return true;
    }

    // The Undo button, pressed until the history is `depth` steps long; the
    // views must then be `before` again (Workspace::undo swaps whole states).
    void undo_to(size_t depth, const Views& before) {
        begin(t, "undo");
        const size_t steps = ws.undo_history().size() - std::min(depth, ws.undo_history().size());
        for (size_t k = 0; k < steps; ++k) {
            if (Status s = ws.undo(); !s.ok()) return failed(s.error());
        }
        if (steps == 0) return;
        shown = print_views(ws, t);
        if (shown != before && t.broken.empty()) {
            t.broken = "undoing " + std::to_string(steps) +
                       " action(s) did not give back the views as they were before them";
            Error e = make_error("undo", t.broken);
            e.file = ws.file();
            failed(e);
        }
    }
};

} // namespace

Status drop_file(const std::vector<uint8_t>& bytes, const std::string& name, const Limits& limits,
                 DropTrace* trace, bool keep_going) {
    DropTrace local;
    DropTrace& t = trace ? *trace : local;
    t = DropTrace();

    begin(t, "load");
    OpenOptions opt;
    opt.limits = limits;
    auto opened = Workspace::open(bytes, name, opt);
    if (!opened.ok()) return named(opened.status(), name);
    Workspace& ws = *opened.value();
    begin(t, "print");
    Driver d{ws, t, keep_going, print_views(ws, t), Status()};
    const Views as_opened = d.shown;
    auto result = [&] { return named(d.first, name); };
    const bool program = ws.has_program();
    // pt2lab runs ATen graphs: a symbolic_trace module calls torch functions and
    // submodules that carry no weights, so the page's Run (and Calibrate, which
    // runs it) is refused there with a message naming the node. That refusal is
    // recorded, not returned: the file itself opened fine.
    const bool runs_refused_ok = !program;
    const GraphView first_view = program ? GraphView::Program : GraphView::Module;

    // Run on both graphs (a symbolic_trace file has only the module), with the
    // reference kernels and with the fast ones.
    t.ran = d.press(run_action(first_view, false), "run", true, runs_refused_ok);
    if (d.stop()) return result();
    d.press(run_action(first_view, true), "run fast", false, runs_refused_ok);
    if (d.stop()) return result();
    if (program) {
        d.press(run_action(GraphView::Module, false), "run module");
        if (d.stop()) return result();
        d.press(run_action(GraphView::Module, true), "run module fast");
        if (d.stop()) return result();

        // Decompose to each level, run the decomposed program, undo back.
        for (IrLevel level : {IrLevel::Inference, IrLevel::CoreAten}) {
            const std::string what = level == IrLevel::Inference ? "inference" : "core aten";
            const size_t depth = ws.undo_history().size();
            const Views before = d.shown;
            Action a;
            a.kind = Action::Kind::Decompose;
            a.level = level;
            a.label = std::string("decompose to ") + ir_level_name(level);
            if (d.press(a, "decompose " + what))
                d.press(run_action(GraphView::Program, false), "run " + what);
            if (d.stop()) return result();
            d.undo_to(depth, before);
            if (d.stop()) return result();
        }
    }

    // Quantization: Prepare; Calibrate once there are observers, Convert once
    // they have recorded (the page enables the buttons so); Run the result.
    d.press(Action::of(Action::Kind::Prepare), "prepare");
    if (d.stop()) return result();
    if (!ws.state().observers.empty()) {
        Action a;
        a.kind = Action::Kind::Calibrate;
        a.repeat = kCalibrationBatches;
        a.label = "calibrate on " + std::to_string(kCalibrationBatches) + " batches";
        d.press(a, "calibrate", false, runs_refused_ok);
        if (d.stop()) return result();
    }
    bool calibrated = false;
    for (const auto& [fqn, obs] : ws.state().observers) calibrated |= obs->calls() > 0;
    if (calibrated) {
        Action a;
        a.kind = Action::Kind::Convert;
        a.fold_quantize = true;
        // Then Run, as the page runs one's own files: with the fast kernels.
        if (d.press(a, "convert")) d.press(run_action(GraphView::Module, true), "run converted");
        if (d.stop()) return result();
    }

    // Undo back to the file as opened: every view as it was.
    d.undo_to(0, as_opened);
    if (d.stop()) return result();
    if (d.first.ok()) begin(t, "done");
    return result();
}

} // namespace pt2lab_test
