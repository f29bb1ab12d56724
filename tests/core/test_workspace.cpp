// The Workspace a UI holds: every action applies completely or not at all
// (a failure leaves the printed graphs, code, state and history byte for
// byte as they were), undo/redo round-trip every action, node ids survive
// undo and redo, caches follow the version, and the M00-4 storyline runs as
// actions with the parity the lesson claims.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include "test_support.h"
#include "workspace/action_json.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

ActionOutcome apply_ok(Workspace& ws, const std::string& json) {
    auto r = ws.apply(action(json));
    INFO(json << ": " << (r.ok() ? std::string() : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}

// Applies a failing action and checks that nothing changed.
void expect_refused(Workspace& ws, const std::string& json, const std::string& phrase) {
    const std::string before = fingerprint(ws);
    auto r = ws.apply(action(json));
    INFO(json);
    REQUIRE_FALSE(r.ok());
    INFO(r.error().str());
    CHECK(r.error().str().find(phrase) != std::string::npos);
    CHECK(r.error().file == ws.file());
    std::string after = fingerprint(ws);
    INFO(first_difference(before, after));
    CHECK(after == before);
}

} // namespace

TEST_CASE("a failing action leaves the workspace byte-identical", "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    Workspace& s = *ws;
    SECTION("a two-node insert whose second node fails keeps neither") {
        expect_refused(s, R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
            {"op": "call_function", "target": "torch.ops.aten.relu.default", "args": [{"node": "relu"}]},
            {"op": "call_function", "target": "torch.ops.aten.relu.default", "args": [{"node": "ghost"}]}]})",
                       "no node named 'ghost'");
    }
    SECTION("unknown nodes, no calibration, nothing to calibrate") {
        expect_refused(s, R"({"kind": "erase_node", "node": "ghost"})", "no node named 'ghost'");
        expect_refused(s, R"({"kind": "insert_observer", "node": "ghost"})", "ghost");
        expect_refused(s, R"({"kind": "decompose_node", "node": "relu", "level": "inference"})",
                       "has no Inference IR decomposition");
        expect_refused(s, R"({"kind": "calibrate"})", "no observers to calibrate");
        apply_ok(s, R"({"kind": "prepare"})");
        expect_refused(s, R"({"kind": "convert"})", "has recorded no data");
    }
    SECTION("fold_conv_bn that fails after changing the graph changes nothing") {
        // An eps that is not a number makes fold_conv_bn fail on that batch norm.
        apply_ok(s, R"({"kind": "set_args", "node": "batch_norm", "args": [{"node": "conv2d"},
            {"node": "bn_weight"}, {"node": "bn_bias"}, {"node": "bn_running_mean"},
            {"node": "bn_running_var"}, false, 0.1, "eps", false]})");
        expect_refused(s, R"({"kind": "fold_conv_bn"})", "cannot read the batch norm's eps");
    }
    SECTION("convert that fails midway changes nothing") {
        apply_ok(s, R"({"kind": "prepare"})");
        apply_ok(s, R"({"kind": "calibrate", "inputs": "sample"})");
        // The last observer gets a second input: convert converts the others first, then fails.
        std::string last;
        for (const Node* n : s.module().graph->nodes())
            if (n->op() == Op::CallModule && n->target().rfind("activation_post_process_", 0) == 0)
                last = n->name();
        REQUIRE(!last.empty());
        const Node* obs = s.find(GraphView::Module, last);
        REQUIRE(obs);
        std::string input = obs->args()[0].node->name();
        apply_ok(s, R"({"kind": "set_args", "node": ")" + last + R"(", "args": [{"node": ")" +
                        input + R"("}, {"node": ")" + input + R"("}]})");
        expect_refused(s, R"({"kind": "convert"})", "exactly one input");
    }
    SECTION("a run that fails keeps the state") {
        apply_ok(s, R"({"kind": "insert_observer", "node": "relu"})");
        apply_ok(
            s,
            R"({"kind": "replace_all_uses_with", "node": "relu", "with": "activation_post_process_0"})");
        apply_ok(s, R"({"kind": "recompile"})"); // forward() now has the self-loop
        expect_refused(s, R"({"kind": "run"})", "has no value yet");
    }
}

TEST_CASE("a symbolic_trace module has no program to decompose", "[workspace]") {
    auto ws = Workspace::open_file(source_path("assets/fx/conv_relu.json"));
    REQUIRE(ws.ok());
    CHECK_FALSE(ws.value()->has_program());
    expect_refused(*ws.value(), R"({"kind": "decompose", "level": "core"})",
                   "symbolic_trace graph, not an ExportedProgram");
    expect_refused(*ws.value(), R"({"kind": "run", "inputs": "sample"})", "no sample inputs");
}

TEST_CASE("sample inputs are torch's data/sample_inputs/model.pt", "[workspace]") {
    auto ws = open_workspace("conv_relu");
    REQUIRE(ws->original().example_inputs.size() == 1);
    auto sample = ws->apply(action(R"({"kind": "run", "inputs": "sample"})"));
    REQUIRE(sample.ok());
    REQUIRE(sample.value().run);
    CHECK(sample.value().run->inputs_label == "sample inputs (data/sample_inputs/model.pt)");
    // The eager outputs torch wrote beside them (extra/pt2lab) are what a run reproduces.
    REQUIRE(sample.value().run->reference);
    CHECK(sample.value().run->reference->max_abs() <= 1e-5);
    auto own = ws->apply(action(R"({"kind": "run", "inputs": "auto"})"));
    REQUIRE(own.ok());
    CHECK(own.value().run->inputs_label == sample.value().run->inputs_label);
}

TEST_CASE("a run with the fast kernels is compared with the original on the same kernels",
          "[workspace]") {
    auto ws = open_workspace("resnet_style");
    auto ref = ws->apply(action(R"({"kind": "run", "inputs": "sample"})"));
    auto fast = ws->apply(action(R"({"kind": "run", "inputs": "sample", "fast_kernels": true})"));
    REQUIRE(ref.ok());
    REQUIRE(fast.ok());
    CHECK_FALSE(ref.value().run->fast_kernels);
    CHECK(fast.value().run->fast_kernels);
    CHECK(fast.value().summary.find("(fast kernels)") != std::string::npos);
    // Each run against the original on its own kernels: exact.
    CHECK(ref.value().run->parity.bit_identical());
    CHECK(fast.value().run->parity.bit_identical());
    // Against torch's eager outputs, both within float noise; the two runs differ
    // (another summation order), so the fast one really ran other kernels.
    REQUIRE(fast.value().run->reference);
    CHECK(ref.value().run->reference->max_abs() <= 1e-5);
    CHECK(fast.value().run->reference->max_abs() <= 1e-4);
    ParityReport between = compare_runs(fast.value().run->result, ref.value().run->result);
    CHECK_FALSE(between.bit_identical());
    CHECK(between.max_abs() <= 1e-4);
    CHECK_FALSE(parse_action(R"({"kind": "run", "fast_kernels": 1})", "t").ok());
}

TEST_CASE("undo and redo round-trip every action", "[workspace]") {
    struct Case {
        const char* asset;
        std::vector<std::string> setup;
        std::string action;
    };
    const std::vector<Case> cases = {
        {"conv_relu", {}, R"({"kind": "insert_observer", "node": "relu"})"},
        {"conv_relu",
         {R"({"kind": "insert_observer", "node": "relu"})"},
         R"({"kind": "replace_all_uses_with", "node": "relu", "with": "activation_post_process_0"})"},
        {"conv_relu", {}, R"({"kind": "set_args", "node": "relu", "args": [{"node": "x"}]})"},
        {"conv_relu",
         {R"({"kind": "set_args", "node": "relu", "args": [{"node": "x"}]})"},
         R"({"kind": "eliminate_dead_code"})"},
        {"conv_relu",
         {R"({"kind": "set_args", "node": "relu", "args": [{"node": "x"}]})"},
         R"({"kind": "recompile"})"},
        {"conv_bn_relu_eval", {}, R"({"kind": "decompose", "level": "inference"})"},
        {"conv_bn_relu_train", {}, R"({"kind": "decompose", "level": "core"})"},
        {"conv_bn_relu_eval",
         {},
         R"({"kind": "decompose_node", "node": "batch_norm", "level": "inference"})"},
        {"conv_bn_relu_eval", {}, R"({"kind": "fold_conv_bn"})"},
        {"conv_bn_relu_eval", {}, R"({"kind": "prepare"})"},
        {"conv_bn_relu_eval", {R"({"kind": "prepare"})"}, R"({"kind": "calibrate", "repeat": 3})"},
        {"style_modules",
         {R"({"kind": "prepare"})", R"({"kind": "calibrate"})"},
         R"({"kind": "convert"})"},
        {"conv_bn_relu_train", {}, R"({"kind": "run", "repeat": 2})"},
    };
    for (const Case& c : cases) {
        INFO(c.asset << " " << c.action);
        auto ws = open_workspace(c.asset);
        for (const auto& step : c.setup) apply_ok(*ws, step);
        const std::string before = fingerprint(*ws);
        const uint64_t v0 = ws->version();
        auto out = apply_ok(*ws, c.action);
        CHECK(out.changed);
        CHECK(ws->version() > v0);
        REQUIRE(ws->can_undo());
        const std::string after = fingerprint(*ws);
        CHECK(after != before);
        REQUIRE(ws->undo().ok());
        // Everything but the version and the redo entry is as before.
        auto strip = [](std::string f) {
            f = f.substr(f.find('\n') + 1);
            size_t r = f.find("redo ");
            return r == std::string::npos ? f : f.substr(0, r);
        };
        INFO(first_difference(strip(before), strip(fingerprint(*ws))));
        CHECK(strip(fingerprint(*ws)) == strip(before));
        REQUIRE(ws->redo().ok());
        INFO(first_difference(strip(after), strip(fingerprint(*ws))));
        CHECK(strip(fingerprint(*ws)) == strip(after));
        CHECK_FALSE(ws->can_redo());
    }
}

TEST_CASE("node ids survive undo and redo and are never reused", "[workspace]") {
    auto ws = open_workspace("conv_relu");
    const Node* relu = ws->find(GraphView::Module, "relu");
    REQUIRE(relu);
    const uint32_t relu_id = relu->id();
    auto ins = apply_ok(*ws, R"({"kind": "insert_observer", "node": "relu"})");
    const Node* obs = ws->find(GraphView::Module, "activation_post_process_0");
    REQUIRE(obs);
    const uint32_t obs_id = obs->id();
    CHECK(obs_id != relu_id);
    CHECK(ws->node(GraphView::Module, relu_id)->name() == "relu");
    REQUIRE(ws->undo().ok());
    CHECK(ws->node(GraphView::Module, obs_id) == nullptr);
    CHECK(ws->node(GraphView::Module, relu_id)->name() == "relu");
    REQUIRE(ws->redo().ok());
    REQUIRE(ws->node(GraphView::Module, obs_id));
    CHECK(ws->node(GraphView::Module, obs_id)->name() == "activation_post_process_0");
    // A node made after an undo gets a fresh id, not the undone one's.
    REQUIRE(ws->undo().ok());
    apply_ok(*ws, R"({"kind": "insert_observer", "node": "conv2d"})");
    for (const Node* n : ws->module().graph->nodes()) CHECK(n->id() != 0);
    CHECK(ws->find(GraphView::Module, "activation_post_process_0")->id() != relu_id);
    // The diff of the last action names what it added.
    CHECK(ws->last_outcome()->diff.added == std::vector<std::string>{"activation_post_process_0"});
    (void)ins;
}

TEST_CASE("code views follow the version and map lines to node ids", "[workspace]") {
    auto ws = open_workspace("conv_relu");
    const CodeView& cv = ws->code(GraphView::Module);
    CHECK(cv.text == ws->module().code());
    CHECK_FALSE(cv.stale);
    size_t lines = 1;
    for (char c : cv.text) lines += c == '\n';
    REQUIRE(cv.line_nodes.size() == lines);
    // Every mapped line mentions its node's name.
    size_t start = 0, k = 0, mapped = 0;
    while (k < cv.line_nodes.size()) {
        size_t end = cv.text.find('\n', start);
        std::string line = cv.text.substr(start, end == std::string::npos ? end : end - start);
        if (uint32_t id = cv.line_nodes[k]) {
            const Node* n = ws->node(GraphView::Module, id);
            REQUIRE(n);
            INFO(line);
            CHECK(line.find(n->op() == Op::Output ? "return" : n->name()) != std::string::npos);
            ++mapped;
        }
        start = end + 1;
        ++k;
    }
    CHECK(mapped >= 3);
    // An edit makes the module's code stale until recompile; the program's is unchanged.
    const std::string program_code = ws->code(GraphView::Program).text;
    apply_ok(*ws, R"({"kind": "insert_observer", "node": "relu"})");
    CHECK(ws->code(GraphView::Module).stale);
    CHECK(ws->code(GraphView::Program).text == program_code);
    apply_ok(*ws, R"({"kind": "recompile"})");
    CHECK_FALSE(ws->code(GraphView::Module).stale);
    CHECK(ws->code(GraphView::Module).text.find("activation_post_process_0") != std::string::npos);
}

TEST_CASE("code written in pieces is code(), with how far it is", "[workspace]") {
    // Each view of a fresh workspace (nothing written yet) in the smallest pieces,
    // against code() of a second workspace in the same state.
    auto check = [](const Workspace& cut, const Workspace& whole, GraphView v) {
        INFO(graph_view_name(v));
        REQUIRE_FALSE(cut.code_ready(v));
        const auto past = std::chrono::steady_clock::time_point::min();
        size_t done = 0, total = 0, last = 0;
        int pieces = 0;
        while (!cut.write_code(v, past, &done, &total)) {
            ++pieces;
            CHECK(done >= last);
            CHECK(done < total);
            last = done;
        }
        CHECK(done == total);
        CHECK(cut.code_ready(v));
        const CodeView& a = cut.code(v);
        const CodeView& b = whole.code(v);
        CHECK(a.text == b.text);
        CHECK(a.line_nodes == b.line_nodes);
        CHECK(a.stale == b.stale);
        return pieces;
    };
    auto cut = open_workspace("resnet_style");
    auto whole = open_workspace("resnet_style");
    for (GraphView v : {GraphView::Program, GraphView::Module}) check(*cut, *whole, v);
    // An edit: the module's code is the last recompile's, and stale (the graph's own
    // code, written in pieces too, differs).
    for (Workspace* w : {cut.get(), whole.get()})
        apply_ok(*w, R"({"kind": "insert_observer", "node": "relu"})");
    CHECK(check(*cut, *whole, GraphView::Module) >= 2);
    CHECK(cut->code(GraphView::Module).stale);
    for (Workspace* w : {cut.get(), whole.get()}) apply_ok(*w, R"({"kind": "recompile"})");
    check(*cut, *whole, GraphView::Module);
    CHECK_FALSE(cut->code(GraphView::Module).stale);
    // A graph edited back to what it was compiled from is not stale, at a glance.
    CHECK(cut->module().stale_at_a_glance() == std::optional<bool>(false));
}

TEST_CASE("decompose lowers the program and rebuilds ep.module(), saying what it drops",
          "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    CHECK(ws->level() == IrLevel::Training);
    apply_ok(*ws, R"({"kind": "insert_observer", "node": "relu"})");
    auto out = apply_ok(*ws, R"({"kind": "decompose", "level": "inference"})");
    CHECK(out.view == GraphView::Program);
    CHECK(ws->level() == IrLevel::Inference);
    CHECK(out.summary.find("module change(s) made before are not in it") != std::string::npos);
    CHECK(ws->find(GraphView::Module, "activation_post_process_0") == nullptr);
    CHECK(ws->find(GraphView::Program, "_native_batch_norm_legit_no_training") != nullptr);
    auto run = apply_ok(*ws, R"({"kind": "run", "inputs": "sample"})");
    REQUIRE(run.run);
    CHECK(run.run->parity.allclose());
    REQUIRE(run.run->reference);
    CHECK(run.run->reference->max_abs() <= 1e-5);
    apply_ok(*ws, R"({"kind": "decompose", "level": "core"})");
    CHECK(ws->level() == IrLevel::CoreAten);
    CHECK(ws->find(GraphView::Program, "convolution") != nullptr);
    CHECK(ws->unsupported_ops(GraphView::Program).empty());
}

TEST_CASE("a program's IR level is what was done to it, not a guess from its ops", "[workspace]") {
    // torch.export's own file (verifier TRAINING): the training IR, though conv2d and
    // relu are also what run_decompositions({}) would leave.
    auto ws = open_workspace("conv_relu");
    REQUIRE(ws->program().verifiers == std::vector<std::string>{"TRAINING"});
    CHECK(ws->level() == IrLevel::Training);
    apply_ok(*ws, R"({"kind": "decompose", "level": "inference"})");
    CHECK(ws->program().verifiers == std::vector<std::string>{"ATEN"});
    CHECK(ws->level() == IrLevel::Inference);
    apply_ok(*ws, R"({"kind": "decompose", "level": "core"})");
    CHECK(ws->level() == IrLevel::CoreAten);
    // Core, then inference again: nothing to do, the program stays at core.
    auto again = apply_ok(*ws, R"({"kind": "decompose", "level": "inference"})");
    CHECK_FALSE(again.changed);
    CHECK(ws->level() == IrLevel::CoreAten);
    REQUIRE(ws->undo().ok());
    CHECK(ws->level() == IrLevel::Inference);
    REQUIRE(ws->undo().ok());
    CHECK(ws->level() == IrLevel::Training);
}

TEST_CASE("a train-mode run updates buffers; undo brings them back", "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_train");
    auto count = [&]() { return ws->state().tensors.at("bn.num_batches_tracked")->get(0); };
    const double c0 = count();
    const auto mean0 = ws->state().tensors.at("bn.running_mean")->storage;
    const auto var0 = ws->state().tensors.at("bn.running_var")->storage;
    auto first = apply_ok(*ws, R"({"kind": "run", "inputs": "sample"})");
    CHECK(first.changed);
    CHECK(ws->undo_history().size() == 1);
    CHECK(count() == c0 + 1);
    apply_ok(*ws, R"({"kind": "run", "inputs": "sample"})");
    CHECK(count() == c0 + 2);
    REQUIRE(ws->undo().ok());
    CHECK(count() == c0 + 1);
    REQUIRE(ws->undo().ok());
    CHECK(count() == c0);
    // running_mean / running_var came back too
    CHECK(ws->state().tensors.at("bn.running_mean")->storage == mean0);
    CHECK(ws->state().tensors.at("bn.running_var")->storage == var0);
    CHECK_FALSE(ws->last_run());
}

TEST_CASE("a run that writes nothing makes no history entry; train()/eval() refuse as torch does",
          "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_eval"); // eval batch_norm reads its running stats only
    auto out = apply_ok(*ws, R"({"kind": "run", "inputs": "sample"})");
    CHECK_FALSE(out.changed);
    CHECK(ws->undo_history().empty());
    REQUIRE(ws->last_run());
    CHECK(ws->last_run()->version == ws->version());
    const std::string before = fingerprint(*ws);
    auto train = apply_ok(*ws, R"({"kind": "train"})");
    CHECK(train.torch_exception == "NotImplementedError");
    CHECK(train.torch_error == "Calling train() is not supported yet.");
    CHECK(apply_ok(*ws, R"({"kind": "eval"})").torch_error ==
          "Calling eval() is not supported yet.");
    CHECK(fingerprint(*ws) == before);
    auto fx = Workspace::open_file(source_path("assets/fx/conv_relu.json"));
    REQUIRE(fx.ok());
    auto sw = fx.value()->apply(action(R"({"kind": "train"})"));
    REQUIRE(sw.ok());
    CHECK(sw.value().torch_error.empty());
}

TEST_CASE("M00-4 storyline as Workspace actions on conv_relu, with parity at every step",
          "[workspace]") {
    auto ws = open_workspace("conv_relu");
    Workspace& s = *ws;
    auto run = [&]() {
        auto out = apply_ok(s, R"({"kind": "run", "inputs": "sample"})");
        REQUIRE(out.run);
        return out.run->parity;
    };
    CHECK(run().bit_identical());
    // 1. insert: inserting_after(relu) + call_module MinMaxObserver
    auto ins = apply_ok(s, R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
        {"op": "call_module", "target": "activation_post_process_0", "args": [{"node": "relu"}],
         "module_type": "MinMaxObserver"}]})");
    CHECK(ins.edit.created == std::vector<std::string>{"activation_post_process_0"});
    CHECK(ins.diff.added == std::vector<std::string>{"activation_post_process_0"});
    // The graph changed but forward() did not: as in torch, a run before recompile()
    // runs the old code, so the observer is not called.
    ParityReport stale = run();
    CHECK(stale.bit_identical());
    CHECK(s.last_run()->stale);
    CHECK(s.state().observers.at("activation_post_process_0")->calls() == 0);
    // 2. the pitfall: replace_all_uses_with without delete_user_cb
    auto bad = apply_ok(
        s,
        R"({"kind": "replace_all_uses_with", "node": "relu", "with": "activation_post_process_0"})");
    CHECK(bad.edit.changed == std::vector<std::string>{"output", "activation_post_process_0"});
    auto lint = apply_ok(s, R"({"kind": "lint"})");
    CHECK(lint.torch_error ==
          "Argument 'activation_post_process_0' of Node 'activation_post_process_0' was used "
          "before it has been defined! Please check that Nodes in the graph are topologically "
          "ordered");
    CHECK(lint.torch_exception == "RuntimeError");
    CHECK_FALSE(lint.changed);
    CHECK(s.lint_message(GraphView::Module) == lint.torch_error);
    apply_ok(s, R"({"kind": "recompile"})");
    CHECK_FALSE(s.apply(action(R"({"kind": "run"})")).ok()); // the executor refuses the self-loop
    // 3. undo (the recompile, then the bad rewire), and rewire with the callback
    REQUIRE(s.undo().ok());
    REQUIRE(s.undo().ok());
    CHECK(s.lint_message(GraphView::Module).empty());
    auto good = apply_ok(s, R"({"kind": "replace_all_uses_with", "node": "relu",
        "with": "activation_post_process_0", "skip_users": ["activation_post_process_0"]})");
    CHECK(good.edit.changed == std::vector<std::string>{"output"});
    CHECK(good.diff.rewired == std::vector<std::string>{"output"});
    apply_ok(s, R"({"kind": "recompile"})");
    CHECK(run().bit_identical());
    CHECK_FALSE(s.last_run()->stale);
    const Observer& o = *s.state().observers.at("activation_post_process_0");
    CHECK(o.calls() == 1);
    CHECK(o.min_val() == 0.0f); // it watches relu's output
    // 4. erase refuses a node with users, and makes no history entry
    const size_t entries = s.undo_history().size();
    auto refused = apply_ok(s, R"({"kind": "erase_node", "node": "relu"})");
    CHECK(refused.torch_error == "Tried to erase Node relu but it still had 1 users in the graph: "
                                 "{activation_post_process_0: None}!");
    CHECK(s.undo_history().size() == entries);
    // 5. replace the observer by quantize/dequantize (what convert does)
    auto conv = apply_ok(s, R"({"kind": "convert"})");
    CHECK(s.find(GraphView::Module, "activation_post_process_0") == nullptr);
    CHECK(s.module().code().find(
              "quantize_per_tensor_default = "
              "torch.ops.quantized_decomposed.quantize_per_tensor.default(relu, ") !=
          std::string::npos);
    ParityReport qp = run();
    CHECK_FALSE(qp.bit_identical());
    CHECK(qp.outputs[0].sqnr_db > 30.0);
    // 6. clean up: nothing is dead; the impure _guards_fn stays; no history entry
    auto dce = apply_ok(s, R"({"kind": "eliminate_dead_code"})");
    CHECK(dce.edit.dce_changed == std::optional<bool>(false));
    CHECK_FALSE(dce.changed);
    CHECK(s.find(GraphView::Module, "_guards_fn") != nullptr);
    // 7. undo the conversion: the observer is back, exactly, with what it recorded
    REQUIRE(s.undo_history().back().label == "convert_pt2e");
    REQUIRE(s.undo().ok());
    CHECK(s.find(GraphView::Module, "activation_post_process_0") != nullptr);
    CHECK(s.state().observers.at("activation_post_process_0")->calls() == 1);
    CHECK(run().bit_identical());
    (void)conv;
}

TEST_CASE("shed frees a workspace with history in pieces", "[workspace]") {
    // A page retires the workspace of a file it replaced over frames: its history's
    // states, the current one and the file as loaded, big graphs node by node.
    auto ws = open_workspace("style_modules");
    apply_ok(*ws, R"({"kind": "prepare"})");
    apply_ok(*ws, R"({"kind": "calibrate"})");
    apply_ok(*ws, R"({"kind": "convert"})");
    REQUIRE(ws->undo().ok()); // a redo entry too
    const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    int calls = 1;
    while (!ws->shed(past)) {
        ++calls;
        REQUIRE(calls < 10000);
    }
    CHECK(calls > 3); // one piece per call: several states and graphs
    CHECK(ws->shed(past));
    ws.reset(); // and what is left goes cleanly (ASan checks the frees)
}

// Copy as Python: the script follows the state (undo takes a step away, redo brings it
// back, a change that torch refuses or a plain run adds nothing) and writes each kind
// of action as the torch call that does it. That torch prints the same graph is
// tools/python_roundtrip.py's check, in the assets suite.
TEST_CASE("Copy as Python follows the history and names torch's calls", "[workspace]") {
    auto count = [](const std::string& s, const std::string& what) {
        size_t n = 0;
        for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
        return n;
    };
    auto ws = open_workspace("conv_relu");
    const std::string fresh = ws->python_script();
    CHECK(fresh.find("ep = torch.export.load('conv_relu.pt2')") != std::string::npos);
    CHECK(fresh.find("# Nothing was changed") != std::string::npos);
    CHECK(fresh.find("seeded_inputs") == std::string::npos); // helpers only when used

    apply_ok(*ws, R"({"kind": "run"})"); // changes nothing: no step
    CHECK(ws->python_script() == fresh);
    apply_ok(*ws, R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
        {"op": "call_function", "target": "torch.ops.aten.clone.default",
         "args": [{"node": "relu"}]}]})");
    apply_ok(*ws, R"({"kind": "erase_node", "node": "relu"})"); // torch refuses: relu has users
    std::string s = ws->python_script();
    CHECK(count(s, "\n# 1. ") == 1);
    CHECK(s.find("with gm.graph.inserting_after(node('relu')):\n    gm.graph.create_node("
                 "'call_function', torch.ops.aten.clone.default, (node('relu'),), {}, "
                 "name='clone_default')") != std::string::npos);
    CHECK(s.find("erase_node") == std::string::npos);

    apply_ok(*ws, R"({"kind": "replace_all_uses_with", "node": "relu", "with": "clone_default",
                      "skip_users": ["clone_default"]})");
    apply_ok(*ws, R"({"kind": "recompile"})");
    s = ws->python_script();
    CHECK(s.find("# 2. replace_all_uses_with\nnode('relu').replace_all_uses_with(node('clone_"
                 "default'), delete_user_cb=lambda user: user.name not in {'clone_default'})") !=
          std::string::npos);
    CHECK(s.find("# 3. recompile\ngm.recompile()\n") != std::string::npos);
    REQUIRE(ws->undo().ok());
    CHECK(ws->python_script().find("gm.recompile()") == std::string::npos);
    REQUIRE(ws->redo().ok());
    CHECK(ws->python_script() == s);

    // Decompositions act on the program and make ep.module() again.
    auto bn = open_workspace("conv_bn_relu_eval");
    apply_ok(*bn, R"({"kind": "decompose", "level": "core", "keep": ["aten.relu.default"]})");
    s = bn->python_script();
    CHECK(s.find("table.pop(torch.ops.aten.relu.default, None)") != std::string::npos);
    CHECK(s.find("ep = ep.run_decompositions(table)\ngm = ep.module()") != std::string::npos);

    // PT2E: torch.ao's imports only when a step needs them; calibration on the file's
    // sample inputs, then seeded batches as pt2lab makes them.
    CHECK(s.find("quantize_pt2e import") == std::string::npos);
    auto q = open_workspace("conv_bn_relu_eval");
    apply_ok(*q, R"({"kind": "prepare"})");
    apply_ok(*q, R"({"kind": "calibrate", "repeat": 3})");
    apply_ok(*q, R"({"kind": "convert", "fold_quantize": false})");
    s = q->python_script();
    CHECK(s.find("from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e") !=
          std::string::npos);
    CHECK(s.find("gm = prepare_pt2e(gm, quantizer)") != std::string::npos);
    CHECK(s.find("for batch in [sample_args] + [seeded_inputs(loaded, seed) for seed in "
                 "range(1, 3)]:") != std::string::npos);
    CHECK(s.find("def seeded_inputs(program, seed):") != std::string::npos);
    CHECK(s.find("gm = convert_pt2e(gm, fold_quantize=False)") != std::string::npos);
}

// A Run keeps every node's value for the inspector while the graph's values are small;
// a model whose values add up to more than Limits::keep_values_bytes runs fused and
// keeps none, with the same output bits.
TEST_CASE("a Run keeps node values only while they are small; bigger runs fused, same bits",
          "[workspace]") {
    auto small = open_workspace("conv_bn_relu_eval");
    const uint64_t bytes = values_bytes(small->module().forward_graph());
    CHECK(bytes > 0);
    CHECK(bytes <= Limits{}.keep_values_bytes);
    auto kept = apply_ok(*small, R"({"kind": "run", "fast_kernels": true})");
    REQUIRE(kept.run);
    CHECK(kept.run->values_kept);
    CHECK(kept.run->result.values.find("conv2d") != kept.run->result.values.end());

    OpenOptions opt;
    opt.limits.keep_values_bytes = bytes - 1; // as if the model were bigger
    auto big = Workspace::open_file(source_path("assets/graphs/conv_bn_relu_eval.pt2"), opt);
    REQUIRE(big.ok());
    auto fused = apply_ok(*big.value(), R"({"kind": "run", "fast_kernels": true})");
    REQUIRE(fused.run);
    CHECK_FALSE(fused.run->values_kept);
    CHECK(fused.run->values_bytes == bytes); // measured once, for the Node panel to say
    CHECK(fused.run->result.values.find("conv2d") == fused.run->result.values.end());
    REQUIRE(fused.run->result.outputs.size() == kept.run->result.outputs.size());
    CHECK(fused.run->parity.bit_identical());
    const Tensor& a = *kept.run->result.outputs[0].tensor;
    const Tensor& b = *fused.run->result.outputs[0].tensor;
    REQUIRE(a.storage.size() == b.storage.size());
    CHECK(std::equal(a.storage.data(), a.storage.data() + a.storage.size(), b.storage.data()));
}

namespace {

// The profile's rows against the graph that ran: every call_function / call_module
// node once, each op's count the graph's, shares that add up, most time first.
void check_profile(const RunProfile& p, const Graph& g) {
    std::map<std::string, size_t> in_graph;
    size_t timed = 0;
    for (const Node* n : g.nodes()) {
        if (n->op() == Op::CallFunction) {
            std::string op = n->target();
            if (op.rfind("torch.ops.", 0) == 0) op.erase(0, 10);
            ++in_graph[op];
        } else if (n->op() == Op::CallModule) {
            ++in_graph[n->target() == "_guards_fn" ? "_guards_fn" : "observer"];
        } else {
            continue;
        }
        ++timed;
    }
    CHECK(p.nodes.size() == timed);
    std::map<std::string, size_t> in_profile;
    double ms = 0, share = 0;
    size_t fused = 0;
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const RunProfile::Op& o = p.ops[i];
        INFO(o.op);
        in_profile[o.op] = o.nodes;
        ms += o.ms;
        share += p.share(o.ms);
        fused += o.fused;
        CHECK(o.ms >= 0);
        if (i > 0) CHECK(p.ops[i - 1].ms >= o.ms);
    }
    CHECK(in_profile == in_graph);
    CHECK(fused == p.fused);
    CHECK(ms == Approx(p.nodes_ms));
    if (p.nodes_ms > 0) CHECK(share == Approx(1.0));
    for (size_t i = 1; i < p.nodes.size(); ++i) CHECK(p.nodes[i - 1].ms >= p.nodes[i].ms);
    for (const RunProfile::Entry& e : p.nodes) {
        INFO(e.node);
        REQUIRE(g.find(e.node));
        if (e.fused) CHECK(e.ms == 0);
    }
    // The nodes' times are inside the forward's.
    CHECK(p.nodes_ms <= p.run_ms + 1e-6);
}

} // namespace

TEST_CASE("a Run's profile times every node of its forward, by op and node", "[workspace]") {
    SECTION("values kept: every node runs on its own") {
        auto ws = open_workspace("conv_bn_relu_eval");
        auto run = apply_ok(*ws, R"({"kind": "run", "fast_kernels": true, "repeat": 2})");
        REQUIRE(run.run);
        REQUIRE(run.run->profile);
        const RunProfile& p = *run.run->profile;
        check_profile(p, ws->module().forward_graph());
        CHECK(p.fused == 0);
        CHECK(p.runs == 2); // each node's mean over both forwards, listed once
        CHECK(p.run_ms > 0);
        REQUIRE(ws->last_run());
        CHECK(ws->last_run()->profile == run.run->profile); // shared, not copied
        const std::string table = p.str();
        CHECK(table.find("aten.conv2d.default") != std::string::npos);
        CHECK(table.find("slowest nodes:") != std::string::npos);
    }
    SECTION("a fused run: the batch norm and relu cost nothing of their own") {
        auto probe = open_workspace("conv_bn_relu_eval");
        OpenOptions opt;
        opt.limits.keep_values_bytes = values_bytes(probe->module().forward_graph()) - 1;
        auto big = Workspace::open_file(source_path("assets/graphs/conv_bn_relu_eval.pt2"), opt);
        REQUIRE(big.ok());
        auto run = apply_ok(*big.value(), R"({"kind": "run", "fast_kernels": true})");
        REQUIRE(run.run->profile);
        const RunProfile& p = *run.run->profile;
        check_profile(p, big.value()->module().forward_graph());
        CHECK(p.fused == 2); // batch_norm and relu, computed inside conv2d
        for (const RunProfile::Op& o : p.ops)
            if (o.op == "aten.batch_norm.default" || o.op == "aten.relu.default") {
                CHECK(o.fused == 1);
                CHECK(o.ms == 0);
            }
        CHECK(p.ops.front().op == "aten.conv2d.default");
    }
    SECTION("a prepared module: its observers have a row") {
        auto ws = open_workspace("conv_bn_relu_eval");
        apply_ok(*ws, R"({"kind": "prepare"})");
        auto run = apply_ok(*ws, R"({"kind": "run"})");
        REQUIRE(run.run->profile);
        check_profile(*run.run->profile, ws->module().forward_graph());
        bool observers = false;
        for (const RunProfile::Op& o : run.run->profile->ops) observers |= o.op == "observer";
        CHECK(observers);
    }
    SECTION("a calibration has none") {
        auto ws = open_workspace("conv_bn_relu_eval");
        apply_ok(*ws, R"({"kind": "prepare"})");
        auto cal = apply_ok(*ws, R"({"kind": "calibrate", "repeat": 2})");
        CHECK_FALSE(cal.run);
    }
}
