// Pausing inside a node (exec/kernel_job.h): an Execution advanced with a
// deadline that has already passed stops inside every heavy node (the convs,
// the pools, linear / addmm / mm, a HistogramObserver's observe) after each
// unit of its work, and the run still writes the bits of one advanced to the
// end, with both kernel sets, with and without the conv fusion. Dropping a run
// paused inside a node frees everything (the ASan build checks for leaks).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>

#include "exec/interpreter.h"

using namespace pt2lab;

namespace {

Argument ref(Node* n) {
    return Argument::from_node(n);
}
Argument ints(std::vector<int64_t> v) {
    return Argument::int_list(v);
}

// x [2, 16, 20, 20] -> HistogramObserver -> conv 3x3 16->32 (Winograd on the fast
// path) -> eval batch norm -> relu (one fused group) -> HistogramObserver ->
// depthwise 3x3 stride 2 -> pointwise 32->48 -> 3x3 stride 2 48->32 (im2col),
// and from the pointwise conv's output max_pool2d, avg_pool2d and
// adaptive_avg_pool2d (to 3x3), then linear, mm and addmm on the flattened max pool.
struct Net {
    Graph g;
    std::vector<Value> inputs;
    uint64_t seed = 11;

    Node* input(const std::string& name, std::vector<int64_t> sizes, float scale = 1.0f,
                float shift = 0.0f) {
        Tensor t = Tensor::seeded_normal(std::move(sizes), seed++);
        for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = t.f32()[k] * scale + shift;
        inputs.push_back(Value::of(std::move(t)));
        return g.placeholder(name);
    }
    Node* aten(const std::string& op, std::vector<Argument> args) {
        return g.call_function("torch.ops.aten." + op, std::move(args));
    }
    Node* conv(Node* x, Node* w, Node* bias, int64_t stride, int64_t pad, int64_t groups) {
        return aten("conv2d.default",
                    {ref(x), ref(w), bias ? ref(bias) : Argument::none(), ints({stride, stride}),
                     ints({pad, pad}), ints({1, 1}), Argument::from_int(groups)});
    }

    Net() {
        Node* x = input("x", {2, 16, 20, 20}, 2.0f);
        // an infinity: the histogram observer drops it (its own path)
        inputs.back().tensor->f32()[123] = std::numeric_limits<float>::infinity();
        Node* w1 = input("w1", {32, 16, 3, 3}, 0.2f);
        Node* b1 = input("b1", {32});
        Node* bn_w = input("bn_w", {32});
        Node* bn_b = input("bn_b", {32});
        Node* bn_rm = input("bn_rm", {32});
        Node* bn_rv = input("bn_rv", {32}, 0.3f, 1.0f);
        Node* wdw = input("wdw", {32, 1, 3, 3});
        Node* wpw = input("wpw", {48, 32, 1, 1}, 0.3f);
        Node* w3 = input("w3", {32, 48, 3, 3}, 0.1f);
        Node* wl = input("wl", {64, 1200}, 0.05f);
        Node* bl = input("bl", {64});
        Node* wm = input("wm", {1200, 16}, 0.05f);
        Node* bm = input("bm", {16});

        Node* seen = g.call_module("obs_in", {ref(x)});
        Node* a = conv(seen, w1, b1, 1, 1, 1);
        Node* bn =
            aten("batch_norm.default", {ref(a), ref(bn_w), ref(bn_b), ref(bn_rm), ref(bn_rv),
                                        Argument::from_bool(false), Argument::from_float(0.1),
                                        Argument::from_float(1e-5), Argument::from_bool(false)});
        Node* act = g.call_module("obs_act", {ref(aten("relu.default", {ref(bn)}))});
        Node* dw = conv(act, wdw, nullptr, 2, 1, 32); // [2, 32, 10, 10]
        Node* pw = conv(dw, wpw, nullptr, 1, 0, 1);   // [2, 48, 10, 10]
        Node* down = conv(pw, w3, nullptr, 2, 1, 1);  // [2, 32, 5, 5]
        Node* mp = aten("max_pool2d.default", {ref(pw), ints({3, 3}), ints({2, 2}), ints({1, 1})});
        Node* ap = aten("avg_pool2d.default", {ref(pw), ints({2, 2})});
        Node* aap = aten("adaptive_avg_pool2d.default", {ref(pw), ints({3, 3})});
        Node* flat = aten("flatten.using_ints", {ref(mp), Argument::from_int(1)}); // [2, 1200]
        Node* lin = aten("linear.default", {ref(flat), ref(wl), ref(bl)});
        Node* mm = aten("mm.default", {ref(flat), ref(wm)});
        Node* addmm = aten("addmm.default", {ref(bm), ref(flat), ref(wm)});
        g.output(Argument::tuple({ref(down), ref(ap), ref(aap), ref(lin), ref(mm), ref(addmm)}));
    }
};

ModuleState observed_state() {
    ModuleState s;
    s.observers["obs_in"] = make_observer(ObserverConfig::activation());
    s.observers["obs_act"] = make_observer(ObserverConfig::activation());
    return s;
}

struct Outcome {
    std::vector<Value> outputs;
    ModuleState state;
    std::map<std::string, int> pauses_inside; // node name -> calls that ended inside it
    int calls = 0;
};

// Two forwards (the second input scaled up, so the observers' range grows and
// they rebin) with the given kernels; sliced: advanced with a deadline that has
// passed, so every call stops after one unit.
Outcome run(const Net& net, bool fast, bool keep_values, bool sliced, uint64_t unit_work) {
    Outcome out;
    out.state = observed_state();
    RunOptions opt;
    opt.kernels.fast_conv = fast;
    opt.kernels.unit_work = unit_work;
    opt.keep_values = keep_values;
    const std::vector<Node*> nodes = net.g.nodes();
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<Value> in = net.inputs;
        if (pass == 1) {
            Tensor x = *in[0].tensor;
            for (int64_t k = 0; k < x.numel(); ++k) x.f32()[k] *= 3.0f;
            in[0] = Value::of(std::move(x));
        }
        auto e = Execution::of_graph(net.g, in, out.state, opt);
        if (sliced) {
            while (!e->done()) {
                const size_t before = e->nodes_done();
                Status st =
                    e->advance(std::chrono::steady_clock::now() - std::chrono::microseconds(1));
                INFO((st.ok() ? "" : st.error().str()));
                REQUIRE(st.ok());
                ++out.calls;
                if (e->nodes_done() == before && !e->done()) {
                    REQUIRE(e->node_fraction() > 0.0);
                    REQUIRE(e->node_fraction() < 1.0);
                    const Node* n = nodes[e->nodes_done()];
                    ++out.pauses_inside[n->name()];
                }
            }
        } else {
            Status st = e->advance();
            REQUIRE(st.ok());
        }
        REQUIRE(e->nodes_done() == e->nodes_total());
        auto r = e->finish();
        REQUIRE(r.ok());
        out.outputs = r.value().outputs;
    }
    return out;
}

void require_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
    INFO(what);
    REQUIRE(a.sizes == b.sizes);
    REQUIRE(a.storage.size() == b.storage.size());
    CHECK(std::memcmp(a.data<uint8_t>(), b.data<uint8_t>(), a.storage.size()) == 0);
}

void require_same_observers(const ModuleState& a, const ModuleState& b) {
    for (const auto& [name, o] : a.observers) {
        INFO(name);
        const Observer& p = *o;
        const Observer& q = *b.observers.at(name);
        CHECK(p.calls() == q.calls());
        const float range_p[2] = {p.min_val(), p.max_val()},
                    range_q[2] = {q.min_val(), q.max_val()};
        CHECK(std::memcmp(range_p, range_q, sizeof range_p) == 0);
        const auto& hp = dynamic_cast<const HistogramObserver&>(p).histogram();
        const auto& hq = dynamic_cast<const HistogramObserver&>(q).histogram();
        REQUIRE(hp.size() == hq.size());
        CHECK(std::memcmp(hp.data(), hq.data(), hp.size() * sizeof(float)) == 0);
    }
}

} // namespace

TEST_CASE("a run paused inside its heavy nodes writes the bits of one run in one go",
          "[exec][slices]") {
    Net net;
    // unit_work 4096: a few thousand multiply-adds per unit, so every heavy node
    // of this small graph has several units.
    for (bool fast : {false, true})
        for (bool keep : {true, false}) {
            INFO((fast ? "fast kernels" : "reference kernels")
                 << (keep ? ", values kept" : ", values dropped (convs fused)"));
            const Outcome whole = run(net, fast, keep, false, 4096);
            const Outcome sliced = run(net, fast, keep, true, 4096);
            // Every heavy node (each conv, pool, product and observer) paused inside more than
            // once.
            int heavy = 0;
            for (const Node* n : net.g.nodes()) {
                const std::string& t = n->target();
                if (n->op() != Op::CallModule && t.find("conv2d") == std::string::npos &&
                    t.find("pool2d") == std::string::npos && t.find("mm.") == std::string::npos &&
                    t.find("linear") == std::string::npos)
                    continue;
                INFO("%" << n->name());
                ++heavy;
                CHECK(sliced.pauses_inside.count(n->name()) == 1);
                if (sliced.pauses_inside.count(n->name()))
                    CHECK(sliced.pauses_inside.at(n->name()) > 1);
            }
            CHECK(heavy == 12); // 4 convs, 3 pools, linear, mm, addmm, 2 observers
            REQUIRE(whole.outputs.size() == 6);
            REQUIRE(sliced.outputs.size() == whole.outputs.size());
            for (size_t k = 0; k < whole.outputs.size(); ++k)
                require_same_bits(*sliced.outputs[k].tensor, *whole.outputs[k].tensor,
                                  "output " + std::to_string(k));
            require_same_observers(sliced.state, whole.state);
            // The observers saw both passes and rebinned (the second range is wider).
            const auto& obs = *sliced.state.observers.at("obs_in");
            CHECK(obs.calls() == 2);
            CHECK(obs.max_val() > 0.0f);
        }
}

TEST_CASE("the default unit size still pauses inside a large conv, with the same bits",
          "[exec][slices]") {
    // One 3x3 conv 64 -> 64 on 32x32 (37.7M multiply-adds): 72 units of the
    // reference kernel, Winograd units on the fast path.
    Graph g;
    Node* x = g.placeholder("x");
    Node* w = g.placeholder("w");
    Node* y = g.call_function("torch.ops.aten.conv2d.default",
                              {ref(x), ref(w), Argument::none(), ints({1, 1}), ints({1, 1}),
                               ints({1, 1}), Argument::from_int(1)});
    g.output(Argument::tuple({ref(y)}));
    std::vector<Value> in = {Value::of(Tensor::seeded_normal({1, 64, 32, 32}, 1)),
                             Value::of(Tensor::seeded_normal({64, 64, 3, 3}, 2))};
    for (bool fast : {false, true}) {
        INFO((fast ? "fast" : "reference"));
        RunOptions opt;
        opt.kernels.fast_conv = fast;
        ModuleState s1, s2;
        auto whole = run_graph(g, in, s1, opt);
        REQUIRE(whole.ok());
        auto e = Execution::of_graph(g, in, s2, opt);
        int inside = 0;
        while (!e->done()) {
            REQUIRE(e->advance(std::chrono::steady_clock::now()).ok());
            inside += !e->done() && e->node_fraction() > 0.0;
        }
        CHECK(inside > 1);
        auto r = e->finish();
        REQUIRE(r.ok());
        require_same_bits(*r.value().outputs[0].tensor, *whole.value().outputs[0].tensor, "y");
    }
}

TEST_CASE("a run dropped inside a node frees everything and leaves the others alone",
          "[exec][slices]") {
    Net net;
    for (bool fast : {false, true}) {
        INFO((fast ? "fast" : "reference"));
        ModuleState state = observed_state();
        RunOptions opt;
        opt.kernels.fast_conv = fast;
        opt.kernels.unit_work = 4096;
        opt.keep_values = false;
        int stops = 0;
        {
            auto e = Execution::of_graph(net.g, net.inputs, state, opt);
            // Until it has paused inside a few nodes (a conv's job holds its scratch,
            // the observer's its copy of x), then dropped there.
            while (stops < 40 && !e->done()) {
                REQUIRE(e->advance(std::chrono::steady_clock::now()).ok());
                stops += e->node_fraction() > 0.0;
            }
            REQUIRE(!e->done());
            REQUIRE(e->node_fraction() > 0.0);
        }
        CHECK(stops == 40);
        // A new run on the same state completes with the outputs of a run on a
        // fresh state (the observers pass their input through).
        auto e = Execution::of_graph(net.g, net.inputs, state, opt);
        REQUIRE(e->advance().ok());
        auto r = e->finish();
        REQUIRE(r.ok());
        ModuleState fresh = observed_state();
        auto e1 = Execution::of_graph(net.g, net.inputs, fresh, opt);
        REQUIRE(e1->advance().ok());
        auto r1 = e1->finish();
        REQUIRE(r1.ok());
        REQUIRE(r.value().outputs.size() == 6);
        REQUIRE(r1.value().outputs.size() == 6);
        for (size_t k = 0; k < r1.value().outputs.size(); ++k)
            require_same_bits(*r.value().outputs[k].tensor, *r1.value().outputs[k].tensor,
                              "output " + std::to_string(k));
    }
}

// A run's plan made a few nodes at a time (RunPlanning, as the page's Workspace makes
// it between frames) is the plan made at once, and a run given it writes the same
// bits; a plan of another graph, or made without the fusions, is not used.
TEST_CASE("a run's plan made in pieces is the plan made at once", "[exec][slices]") {
    Net net;
    for (bool fuse : {false, true}) {
        INFO((fuse ? "with the conv groups" : "without"));
        RunPlanning once(net.g, fuse);
        REQUIRE(once.step(SIZE_MAX));
        auto whole = once.take();
        RunPlanning stepped(net.g, fuse);
        int pieces = 1;
        while (!stepped.step(2)) {
            CHECK(stepped.done() <= stepped.total());
            ++pieces;
        }
        auto plan = stepped.take();
        CHECK(pieces > 10);
        CHECK(plan->nodes == whole->nodes);
        REQUIRE(plan->release.size() == whole->release.size());
        for (size_t k = 0; k < plan->release.size(); ++k)
            CHECK(plan->release[k] == whole->release[k]);
        CHECK(plan->fusions.size() == whole->fusions.size());
        CHECK(plan->fusions.size() == (fuse ? 1u : 0u)); // conv -> batch norm -> relu
        for (const auto& [conv, f] : whole->fusions) {
            REQUIRE(plan->fusions.count(conv));
            CHECK(plan->fusions.at(conv).bn == f.bn);
            CHECK(plan->fusions.at(conv).act == f.act);
        }
        // Every value but the output's is released exactly once, at or after its node.
        size_t released = 0;
        for (size_t k = 0; k < plan->release.size(); ++k)
            for (const Node* n : plan->release[k]) {
                ++released;
                const auto at = std::find(plan->nodes.begin(), plan->nodes.end(), n);
                CHECK(size_t(at - plan->nodes.begin()) <= k);
            }
        CHECK(released == plan->nodes.size() - 1);
        CHECK(plan->fits(net.g, fuse));
        CHECK_FALSE(plan->fits(net.g, !fuse));
        Graph other;
        CHECK_FALSE(plan->fits(other, fuse));
    }
    // A run given the stepped plan: the bits of a run that made its own.
    RunOptions opt;
    opt.kernels.fast_conv = true;
    opt.keep_values = false;
    RunPlanning planning(net.g, run_fuses(opt));
    while (!planning.step(3)) {
    }
    ModuleState s1 = observed_state(), s2 = observed_state();
    auto own = run_graph(net.g, net.inputs, s1, opt);
    INFO((own.ok() ? "" : own.error().str()));
    REQUIRE(own.ok());
    opt.plan = planning.take();
    auto given = run_graph(net.g, net.inputs, s2, opt);
    REQUIRE(given.ok());
    REQUIRE(given.value().outputs.size() == own.value().outputs.size());
    for (size_t k = 0; k < own.value().outputs.size(); ++k)
        require_same_bits(*given.value().outputs[k].tensor, *own.value().outputs[k].tensor,
                          "output " + std::to_string(k));
}
