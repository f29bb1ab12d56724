// Actions in slices (Workspace::begin / advance / progress / cancel / finish):
// a run or a calibration spread over many short slices gives the same bits,
// the same history and the same views as apply(); cancel at any point leaves
// the workspace exactly as it was; a busy workspace refuses other changes;
// the run budget is the file's, for the parity baseline too.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "graph/written_attrs.h"
#include "test_support.h"
#include "util/stages.h"
#include "workspace/action_json.h"
#include "workspace/action_table.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

// Runs `a` in the smallest slices there are (one node each: a deadline already
// past), checking progress as it goes and showing it to `seen`; returns the
// finished outcome.
Result<ActionOutcome> apply_sliced(Workspace& ws, const Action& a, int* slices = nullptr,
                                   const std::function<void(const ActionProgress&)>& seen = {}) {
    REQUIRE(ws.begin(a).ok());
    REQUIRE(ws.busy());
    uint64_t last = 0;
    int n = 0;
    while (!ws.advance(1e-9)) {
        ActionProgress p = ws.progress();
        CHECK(p.done >= last);
        CHECK(p.done <= p.total);
        CHECK_FALSE(p.what.empty());
        if (seen) seen(p);
        last = p.done;
        ++n;
    }
    if (slices) *slices = n;
    return ws.finish();
}

bool same_bytes(const Value& a, const Value& b) {
    if (!a.is_tensor() || !b.is_tensor()) return a.describe() == b.describe();
    const Tensor &x = *a.tensor, &y = *b.tensor;
    return x.dtype == y.dtype && x.sizes == y.sizes && x.storage.size() == y.storage.size() &&
           std::memcmp(x.data<uint8_t>(), y.data<uint8_t>(), x.storage.size()) == 0;
}

} // namespace

TEST_CASE("a sliced run and calibration equal apply(), bit for bit", "[workspace][jobs]") {
    for (const char* name : {"conv_bn_relu_train", "conv_bn_relu_eval", "style_modules"}) {
        INFO(name);
        auto whole = open_workspace(name), sliced = open_workspace(name);
        for (const char* json : {R"({"kind": "run"})", R"({"kind": "run", "repeat": 3})",
                                 R"({"kind": "run", "fast_kernels": true})",
                                 R"({"kind": "prepare"})", R"({"kind": "calibrate", "repeat": 4})",
                                 R"({"kind": "convert"})", R"({"kind": "run"})"}) {
            INFO(json);
            Action a = action(json);
            auto w = whole->apply(a);
            int slices = 0;
            auto s = apply_sliced(*sliced, a, &slices);
            REQUIRE(w.ok() == s.ok());
            if (!w.ok()) {
                CHECK(w.error().str() == s.error().str());
                continue;
            }
            if (a.kind == Action::Kind::Run || a.kind == Action::Kind::Calibrate)
                CHECK(slices > 3); // it really paused between nodes
            CHECK(w.value().summary == s.value().summary);
            CHECK(w.value().changed == s.value().changed);
            REQUIRE(w.value().run.has_value() == s.value().run.has_value());
            if (w.value().run) {
                const RunResult &x = w.value().run->result, &y = s.value().run->result;
                REQUIRE(x.outputs.size() == y.outputs.size());
                for (size_t k = 0; k < x.outputs.size(); ++k)
                    CHECK(same_bytes(x.outputs[k], y.outputs[k]));
                CHECK(w.value().run->parity.str() == s.value().run->parity.str());
            }
            // the same state, history and views (times aside, which fingerprint leaves out)
            std::string fw = fingerprint(*whole), fs = fingerprint(*sliced);
            INFO(first_difference(fw, fs));
            CHECK(fw == fs);
        }
    }
}

TEST_CASE("cancel leaves the workspace exactly as before begin()", "[workspace][jobs]") {
    auto ws = open_workspace("conv_bn_relu_train");
    REQUIRE(ws->apply(action(R"({"kind": "prepare"})")).ok());
    const std::string before = fingerprint(*ws);
    for (const char* json :
         {R"({"kind": "run", "repeat": 2})", R"({"kind": "calibrate", "repeat": 3})",
          R"({"kind": "decompose", "level": "core"})"}) {
        INFO(json);
        for (int stop_after : {0, 1, 5, 20}) {
            INFO("cancelled after " << stop_after << " slices");
            REQUIRE(ws->begin(action(json)).ok());
            for (int k = 0; k < stop_after && !ws->advance(1e-9); ++k) {
            }
            // what a reader sees while it runs is the state before it
            CHECK(fingerprint(*ws) == before);
            ws->cancel();
            CHECK_FALSE(ws->busy());
            std::string after = fingerprint(*ws);
            INFO(first_difference(before, after));
            CHECK(after == before);
        }
    }
    // and the workspace still works: the same calibration applied now records
    REQUIRE(ws->apply(action(R"({"kind": "calibrate", "repeat": 3})")).ok());
    CHECK(fingerprint(*ws) != before);
}

TEST_CASE("a busy workspace refuses other changes and says which action runs",
          "[workspace][jobs]") {
    auto ws = open_workspace("conv_relu");
    REQUIRE(ws->apply(action(R"({"kind": "insert_observer", "node": "relu"})")).ok());
    REQUIRE(ws->begin(action(R"({"kind": "run"})")).ok());
    auto again = ws->begin(action(R"({"kind": "lint"})"));
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().message.find("run") != std::string::npos);
    CHECK_FALSE(ws->apply(action(R"({"kind": "lint"})")).ok());
    Status undo = ws->undo();
    REQUIRE_FALSE(undo.ok());
    CHECK(undo.error().message.find("while run is running") != std::string::npos);
    REQUIRE(ws->pending_action() != nullptr);
    CHECK(ws->pending_action()->kind == Action::Kind::Run);
    while (!ws->advance(0.001)) {
    }
    REQUIRE(ws->finish().ok());
    CHECK(ws->undo().ok()); // free again
}

TEST_CASE("an action that fails while sliced leaves nothing behind", "[workspace][jobs]") {
    auto ws = open_workspace("conv_relu");
    const std::string before = fingerprint(*ws);
    Action a = action(R"({"kind": "run"})");
    a.inputs.kind = InputSource::Kind::Given; // no tensors: the wrong number of inputs
    auto r = apply_sliced(*ws, a);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().str().find("user input") != std::string::npos);
    CHECK(r.error().file == ws->file());
    CHECK(fingerprint(*ws) == before);
    CHECK_FALSE(ws->busy());
}

TEST_CASE("every run of a workspace is budgeted for the file it came from", "[workspace][jobs]") {
    auto bytes = read_file_bytes(source_path("assets/graphs/conv_bn_relu_eval.pt2"));
    REQUIRE(bytes.ok());
    const uint64_t size = bytes.value().size();
    auto ws = Workspace::open(bytes.take(), "conv_bn_relu_eval.pt2");
    REQUIRE(ws.ok());
    CHECK(ws.value()->file_size() == size);
    CHECK(ws.value()->state().file_size == size);
    // A changed graph makes the run compare with a second run of the file as
    // loaded (the baseline), which had been given a state of 0 bytes.
    for (bool fast : {false, true}) {
        INFO("fast kernels " << fast);
        if (fast) REQUIRE(ws.value()->undo().ok());
        REQUIRE(ws.value()->apply(action(R"({"kind": "decompose", "level": "inference"})")).ok());
        CHECK(ws.value()->state().file_size == size);
        Action run = action(R"({"kind": "run"})");
        run.fast_kernels = fast;
        auto r = ws.value()->apply(run);
        INFO((r.ok() ? std::string() : r.error().str()));
        REQUIRE(r.ok());
        CHECK(r.value().run->parity.allclose());
    }
    // the tightest limits the CLI can set reach every run the same way
    OpenOptions tiny;
    REQUIRE(tiny.limits.set("run-mb=1").ok());
    auto small = Workspace::open_file(source_path("assets/graphs/conv_bn_relu_eval.pt2"), tiny);
    REQUIRE(small.ok());
    CHECK(small.value()->limits().run_bytes == Limits::kMiB);
}

TEST_CASE("runs on ep.graph and on given tensors, timed", "[workspace][jobs]") {
    auto ws = open_workspace("conv_bn_relu_train");
    Action a = action(R"({"kind": "run"})");
    a.view = GraphView::Program;
    auto r = ws->apply(a);
    REQUIRE(r.ok());
    REQUIRE(r.value().run);
    CHECK(r.value().run->view == GraphView::Program);
    CHECK(r.value().run->ms > 0);
    REQUIRE(r.value().run->reference);
    CHECK(r.value().run->reference->allclose()); // one forward from the saved state
    CHECK(r.value().changed);                    // train mode: the running statistics moved
    // a second forward is not what torch's stored outputs describe
    auto again = ws->apply(a);
    REQUIRE(again.ok());
    CHECK_FALSE(again.value().run->reference);
    CHECK_FALSE(again.value().run->reference_skipped.empty());

    auto plain = open_workspace("conv_relu");
    Action given = action(R"({"kind": "run"})");
    given.inputs.kind = InputSource::Kind::Given;
    given.inputs.tensors = example_inputs(plain->original());
    given.inputs.label = "from --input";
    auto g = plain->apply(given);
    REQUIRE(g.ok());
    CHECK(g.value().run->inputs_label == "from --input");
    CHECK_FALSE(g.value().run->reference); // not the file's own inputs, so no reference
}

TEST_CASE("run_changes_state: eval-mode batch_norm writes nothing, train mode and observers do",
          "[workspace][jobs]") {
    auto eval = open_workspace("conv_bn_relu_eval");
    CHECK_FALSE(eval->run_changes_state());
    CHECK(attrs_written_in_place(*eval->module().graph).empty());
    auto r = eval->apply(action(R"({"kind": "run"})"));
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().changed); // what the question above predicted
    auto train = open_workspace("conv_bn_relu_train");
    CHECK(train->run_changes_state());
    REQUIRE(eval->apply(action(R"({"kind": "prepare"})")).ok());
    CHECK(eval->run_changes_state());
}

TEST_CASE("the action table: every JSON kind parses, labels and fields are there",
          "[workspace][jobs]") {
    REQUIRE(action_row_count() == 20);
    for (size_t k = 0; k < action_row_count(); ++k) {
        const ActionRow& row = action_rows()[k];
        INFO(row.json);
        CHECK(find_action_row(row.json) == &row);
        CHECK(std::strlen(row.label) > 0);
        CHECK(row.allows("kind"));
        CHECK(row.allows("label"));
        CHECK_FALSE(row.allows("no_such_field"));
    }
    // fields are checked by the one reader, for lessons and tests alike
    auto typo = parse_action(R"({"kind": "run", "repaet": 2})", "t");
    REQUIRE_FALSE(typo.ok());
    CHECK(typo.error().str().find("unknown field \"repaet\"") != std::string::npos);
    auto fast = parse_action(R"({"kind": "calibrate", "fast_kernels": true})", "t");
    REQUIRE(fast.ok());
    CHECK(fast.value().fast_kernels);
    auto unknown = parse_action(R"({"kind": "quantize"})", "t");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().str().find("expected one of: decompose") != std::string::npos);
    // each action knows its row
    CHECK(std::string(action_row(action(R"({"kind": "eval"})")).json) == "eval");
    CHECK(std::string(action_row(action(R"({"kind": "erase_node", "node": "x"})")).json) ==
          "erase_node");
}

TEST_CASE("a quantized run is judged by its SQNR; NaN is named", "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    for (const char* a : {R"({"kind": "prepare"})", R"({"kind": "calibrate", "repeat": 3})",
                          R"({"kind": "convert"})", R"({"kind": "run"})"})
        REQUIRE(ws->apply(action(a)).ok());
    const ParityReport& p = ws->last_run()->parity;
    CHECK(p.approximate);
    CHECK_FALSE(p.bit_identical());
    REQUIRE(p.outputs.size() == 1);
    double db = p.outputs[0].sqnr_db;
    CHECK(db > 15); // int8 of a small conv-bn-relu keeps most of the signal
    char want[64];
    std::snprintf(want, sizeof want, "SQNR %.1f dB: %s", db, sqnr_reading(db));
    CHECK(p.verdict() == want);
    CHECK(p.str().find("verdict: SQNR") != std::string::npos);
    CHECK(p.str().find("allclose") == std::string::npos);
    // Undone back to the float module: allclose again is the question.
    REQUIRE(ws->undo().ok());
    REQUIRE(ws->undo().ok());
    REQUIRE(ws->apply(action(R"({"kind": "run"})")).ok());
    CHECK_FALSE(ws->last_run()->parity.approximate);

    CHECK(std::string(sqnr_reading(39)) == "close");
    CHECK(std::string(sqnr_reading(20)) == "a visible error");
    CHECK(std::string(sqnr_reading(0)) == "the output is lost");
    // An all-NaN output against a finite one says NaN (it used to report max|diff| 0).
    Tensor a = Tensor::zeros(ScalarType::Float, {4}), b = Tensor::zeros(ScalarType::Float, {4});
    for (int k = 0; k < 4; ++k) a.data<float>()[k] = std::nanf(""), b.data<float>()[k] = 1.0f;
    ParityReport r;
    r.outputs.push_back(compare_tensors("out", a, b));
    CHECK(r.outputs[0].nan == 4);
    CHECK(r.verdict() == "4 NaN values in the outputs");
    CHECK_FALSE(r.allclose());
}

TEST_CASE("a calibration computes each observer's qparams in a step of its own",
          "[workspace][jobs]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    REQUIRE(ws->apply(action(R"({"kind": "prepare"})")).ok());
    std::set<const Observer*> instances;
    for (const auto& [name, obs] : ws->state().observers) instances.insert(obs.get());
    REQUIRE(instances.size() >= 2);
    REQUIRE(ws->begin(action(R"({"kind": "calibrate", "repeat": 2})")).ok());
    std::set<std::string> qparam_steps;
    while (!ws->advance(1e-9)) {
        std::string what = ws->progress().what;
        if (what.rfind("calibrate: scale and zero_point of observer", 0) == 0)
            qparam_steps.insert(what);
    }
    // A pause before every observer (one observer per slice): "observer k of n".
    CHECK(qparam_steps.size() == instances.size());
    auto out = ws->finish();
    REQUIRE(out.ok());
    CHECK(out.value().summary.find("scale") != std::string::npos);
}

TEST_CASE("prepare, convert, decompose and fold in pieces of one node equal one call",
          "[workspace][jobs]") {
    // Pieces of one node and one weight element: every stage of every pass
    // pauses between nodes, as the page's passes do on a 10k-node graph.
    for (const char* name : {"conv_bn_relu_train", "conv_bn_relu_eval", "resnet_style"}) {
        INFO(name);
        auto whole = open_workspace(name), sliced = open_workspace(name);
        // As the page: what a commit lets go of (the redo branch an action after an
        // undo cuts) waits for shed_dropped, a few entries per call.
        sliced->set_shed_dropped_later(true);
        const size_t nodes = whole->module().graph->size();
        bool last_changed = false, undone = false;
        for (const char* json :
             {R"({"kind": "decompose", "level": "inference"})", R"({"kind": "undo"})",
              R"({"kind": "decompose", "level": "core"})", R"({"kind": "undo"})",
              R"({"kind": "fold_conv_bn"})", R"({"kind": "undo"})", R"({"kind": "prepare"})",
              R"({"kind": "calibrate", "repeat": 2})", R"({"kind": "convert"})",
              R"({"kind": "run"})"}) {
            INFO(json);
            if (std::string(json) == R"({"kind": "undo"})") {
                if (!last_changed) continue; // nothing was done (fold in train mode)
                Status u = whole->undo(), v = sliced->undo();
                INFO((u.ok() ? std::string() : u.error().str()));
                REQUIRE(u.ok());
                REQUIRE(v.ok());
                undone = true;
                continue;
            }
            Action a = action(json);
            auto w = whole->apply(a);
            std::set<std::string> stages;
            int slices = 0;
            Result<ActionOutcome> s = [&] {
                ScopedPieceSize one({1, 1});
                return apply_sliced(*sliced, a, &slices, [&](const ActionProgress& p) {
                    // "prepare_pt2e: place observers: node 3 of 40" is in stage
                    // "prepare_pt2e: place observers"
                    std::string what = p.what;
                    size_t of = what.find(" of ");
                    if (of != std::string::npos) what = what.substr(0, what.rfind(':', of));
                    stages.insert(what);
                });
            }();
            REQUIRE(w.ok() == s.ok());
            if (!w.ok()) {
                CHECK(w.error().str() == s.error().str());
                continue;
            }
            if (a.kind == Action::Kind::Prepare || a.kind == Action::Kind::Convert ||
                a.kind == Action::Kind::Decompose) {
                // a pause per node in the pass's own stages, and more than one stage
                CHECK(size_t(slices) > nodes);
                CHECK(stages.size() > 3);
            }
            last_changed = w.value().changed;
            CHECK_FALSE(whole->has_dropped()); // freed by the commit: the default
            if (std::exchange(undone, false) && s.value().changed) {
                CHECK(sliced->has_dropped()); // the redo branch
                const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
                int calls = 1; // a batch per call (test_graph.cpp: shed)
                while (!sliced->shed_dropped(past)) REQUIRE(++calls < 100000);
                CHECK_FALSE(sliced->has_dropped());
                CHECK_FALSE(sliced->can_redo());
            }
            CHECK(w.value().summary == s.value().summary);
            CHECK(w.value().changed == s.value().changed);
            CHECK(whole->module().code() == sliced->module().code());
            std::string fw = fingerprint(*whole), fs = fingerprint(*sliced);
            INFO(first_difference(fw, fs));
            CHECK(fw == fs);
        }
    }
}

TEST_CASE("prepare, convert and decompose cancelled mid-stage leave everything as before",
          "[workspace][jobs]") {
    ScopedPieceSize one({1, 1});
    auto ws = open_workspace("conv_bn_relu_eval");
    struct Case {
        const char* setup;
        const char* action;
    };
    for (Case c : {Case{nullptr, R"({"kind": "prepare"})"},
                   Case{nullptr, R"({"kind": "decompose", "level": "inference"})"},
                   Case{nullptr, R"({"kind": "decompose", "level": "core"})"},
                   Case{nullptr, R"({"kind": "fold_conv_bn"})"},
                   Case{R"({"kind": "prepare"})", R"({"kind": "calibrate", "repeat": 2})"},
                   Case{R"({"kind": "calibrate", "repeat": 2})", R"({"kind": "convert"})"}}) {
        INFO(c.action);
        if (c.setup) REQUIRE(ws->apply(action(c.setup)).ok());
        const std::string code = ws->module().code();
        int total = 0; // how many slices the whole action takes
        REQUIRE(apply_sliced(*ws, action(c.action), &total).ok());
        REQUIRE(ws->undo().ok());
        REQUIRE(ws->module().code() == code);
        const std::string before = fingerprint(*ws);
        for (int stop_after : {0, 1, total / 4, total / 2, total - 1}) {
            INFO("cancelled after " << stop_after << " of " << total << " slices");
            REQUIRE(ws->begin(action(c.action)).ok());
            std::string what;
            for (int k = 0; k < stop_after && !ws->advance(1e-9); ++k) what = ws->progress().what;
            INFO("at " << what);
            CHECK(fingerprint(*ws) == before); // readers see the state before it
            ws->cancel();
            CHECK_FALSE(ws->busy());
            std::string after = fingerprint(*ws);
            INFO(first_difference(before, after));
            CHECK(after == before);
            CHECK(ws->module().code() == code);
        }
    }
}

TEST_CASE("a staged action says which stage it is in and how far", "[workspace][jobs]") {
    ScopedPieceSize one({1, 1});
    auto ws = open_workspace("resnet_style");
    const size_t nodes = ws->module().graph->size();
    std::vector<std::string> seen;
    bool counted = false;
    // apply_sliced checks that done grows and stays within total
    auto r =
        apply_sliced(*ws, action(R"({"kind": "prepare"})"), nullptr, [&](const ActionProgress& p) {
            if (seen.empty() || seen.back() != p.what) seen.push_back(p.what);
            // "place observers: node 3 of 40"
            const std::string of = " of " + std::to_string(nodes);
            if (p.what.find("node ") != std::string::npos && p.what.find(of) != std::string::npos)
                counted = true;
        });
    REQUIRE(r.ok());
    CHECK(counted);
    std::string all;
    for (const auto& s : seen) all += s + "\n";
    INFO(all);
    for (const char* stage : {"annotate", "place observers", "recompile"})
        CHECK(all.find(stage) != std::string::npos);
}
