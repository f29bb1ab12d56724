// The per-layer table of a quantized run (exec/layer_parity.h): layers paired by
// the names convert_pt2e keeps (a folded conv stands for its batch norm), compared
// with the float run on the same inputs, in graph order, and the one that loses
// most; through the Workspace, whole and in slices.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "exec/layer_parity.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

Argument ref(Node* n) {
    return Argument::from_node(n);
}

// x -> quantize / dequantize (scale `s1`) -> relu -> quantize / dequantize (scale `s2`)
// -> neg (a mul by -1) -> add(neg, neg); with `quantized` false, the same graph
// without the pairs.
std::unique_ptr<Graph> chain(bool quantized, double s1, double s2) {
    auto g = std::make_unique<Graph>();
    auto qdq = [&](Node* x, double scale) {
        if (!quantized) return x;
        std::vector<Argument> qp = {Argument::from_float(scale), Argument::from_int(0),
                                    Argument::from_int(-128), Argument::from_int(127),
                                    Argument::from_dtype(ScalarType::Char)};
        std::vector<Argument> a = {ref(x)};
        a.insert(a.end(), qp.begin(), qp.end());
        Node* q = g->call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", a);
        a[0] = ref(q);
        return g->call_function("torch.ops.quantized_decomposed.dequantize_per_tensor.default", a);
    };
    Node* x = g->placeholder("x");
    Node* relu = g->call_function("torch.ops.aten.relu.default", {ref(qdq(x, s1))}, {}, "relu");
    Node* neg = g->call_function("torch.ops.aten.mul.Scalar",
                                 {ref(qdq(relu, s2)), Argument::from_float(-1.0)}, {}, "neg");
    Node* add = g->call_function("torch.ops.aten.add.Tensor", {ref(neg), ref(neg)}, {}, "add");
    // The same name, another op: not the float graph's node, so no layer.
    Node* last =
        g->call_function(quantized ? "torch.ops.aten.sub.Tensor" : "torch.ops.aten.mul.Tensor",
                         {ref(add), ref(neg)}, {}, "last");
    g->output(Argument::tuple({ref(last)}));
    return g;
}

RunResult run_ok(const Graph& g, const std::vector<Value>& in, const RunOptions& opt = {}) {
    ModuleState s;
    auto r = run_graph(g, in, s, opt);
    INFO((r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}

LayerTable table_of(const Graph& q, const Graph& f, const RunResult& rq, const RunResult& rf) {
    LayerTable t;
    for (const LayerPair& p : pair_layers(q, f)) t.add(p, rq, rf);
    t.worst = worst_layer(t.rows);
    return t;
}

} // namespace

TEST_CASE("layers in graph order; the coarse quantization loses most; a tie goes to the first",
          "[exec]") {
    // N(0, 1) inputs: a step of 0.03 keeps relu close, a step of 0.5 after it loses
    // most of neg's signal; add = neg + neg has exactly neg's SQNR (doubling is exact).
    auto q = chain(true, 0.03, 0.5), f = chain(false, 0.03, 0.5);
    std::vector<Value> in = {Value::of(Tensor::seeded_normal({4, 1000}, 7))};
    RunResult rq = run_ok(*q, in), rf = run_ok(*f, in);
    LayerTable t = table_of(*q, *f, rq, rf);
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].layer.node == "relu");
    CHECK(t.rows[1].layer.node == "neg");
    CHECK(t.rows[2].layer.node == "add");
    CHECK(t.rows[0].layer.op == "aten.relu.default");
    CHECK(t.rows[2].layer.op == "aten.add.Tensor");
    CHECK(t.rows[1].layer.reference == "neg");
    CHECK(t.not_kept == 0);
    CHECK(t.rows[0].parity.sqnr_db > 30.0);
    CHECK(t.rows[1].parity.sqnr_db < 20.0);
    CHECK(t.rows[2].parity.sqnr_db == t.rows[1].parity.sqnr_db);
    CHECK(t.worst == 1);
    CHECK(t.summary().find("most lost at %neg (aten.mul.Scalar): SQNR") != std::string::npos);
    // Swap the steps: now relu, before everything, loses most.
    auto q2 = chain(true, 0.5, 0.03);
    LayerTable t2 = table_of(*q2, *f, run_ok(*q2, in), rf);
    REQUIRE(t2.rows.size() == 3);
    // The coarse step now comes first: relu has lost it already, and what follows
    // adds a little (the fine step): the loss shows at relu, the minimum is later.
    CHECK(t2.rows[0].parity.sqnr_db < 20.0);
    CHECK(t2.rows[1].parity.sqnr_db < t2.rows[0].parity.sqnr_db);
    CHECK(t2.rows[1].parity.sqnr_db > t2.rows[0].parity.sqnr_db - 0.5);
    CHECK(t2.worst == 1);
    // The relative error is the table's other column: max |diff| over max |float|.
    CHECK(t.rows[1].parity.max_rel > t.rows[0].parity.max_rel);
}

TEST_CASE("layers a run did not keep are counted, not shown", "[exec]") {
    auto q = chain(true, 0.03, 0.5), f = chain(false, 0.03, 0.5);
    std::vector<Value> in = {Value::of(Tensor::seeded_normal({4, 1000}, 7))};
    RunOptions small;
    // x, its quantize (int8), dequantize and relu (16 + 4 + 16 + 16 kB): nothing after.
    small.keep_values_bytes = 52000;
    RunResult rq = run_ok(*q, in, small), rf = run_ok(*f, in);
    REQUIRE(rq.values_not_kept > 0);
    LayerTable t = table_of(*q, *f, rq, rf);
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0].layer.node == "relu");
    CHECK(t.not_kept == 2); // neg and add
    CHECK(t.summary().find("2 left out") != std::string::npos);
    // keep_only keeps exactly the named values, and says nothing of the others.
    RunOptions only;
    only.keep_only = std::make_shared<const std::set<std::string>>(std::set<std::string>{"neg"});
    RunResult rf2 = run_ok(*f, in, only);
    CHECK(rf2.values.size() == 1);
    CHECK(rf2.values.count("neg") == 1);
    CHECK(rf2.values_not_kept == 0);
}

TEST_CASE("a layer is compared as its node made it, before an in-place op after it writes it",
          "[exec]") {
    // relu -> hardtanh_(relu, 0, 0.5): in the float graph hardtanh_ clamps relu's own
    // tensor; in the quantized one it clamps the dequantize after relu (MobileNet v2's
    // conv -> q/dq -> hardtanh_).
    auto make = [](bool quantized) {
        auto g = std::make_unique<Graph>();
        Node* x = g->placeholder("x");
        Node* relu = g->call_function("torch.ops.aten.relu.default", {ref(x)}, {}, "relu");
        Node* in = relu;
        if (quantized) {
            std::vector<Argument> a = {ref(relu),
                                       Argument::from_float(0.02),
                                       Argument::from_int(-128),
                                       Argument::from_int(-128),
                                       Argument::from_int(127),
                                       Argument::from_dtype(ScalarType::Char)};
            Node* q =
                g->call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", a);
            a[0] = ref(q);
            in =
                g->call_function("torch.ops.quantized_decomposed.dequantize_per_tensor.default", a);
        }
        Node* h = g->call_function("torch.ops.aten.hardtanh_.default",
                                   {ref(in), Argument::from_float(0.0), Argument::from_float(0.5)},
                                   {}, "clamp");
        g->output(Argument::tuple({ref(h)}));
        return g;
    };
    auto q = make(true), f = make(false);
    std::vector<Value> in = {Value::of(Tensor::seeded_normal({4, 1000}, 3))};
    RunOptions own;
    own.keep_before_writes = true;
    LayerTable t = table_of(*q, *f, run_ok(*q, in, own), run_ok(*f, in, own));
    REQUIRE(t.rows.size() == 2);
    CHECK(t.rows[0].layer.node == "relu");
    CHECK(t.rows[0].parity.sqnr_db > 30.0);
    // Without it the float relu is the clamped alias: a loss that is not there.
    LayerTable alias = table_of(*q, *f, run_ok(*q, in), run_ok(*f, in));
    REQUIRE(alias.rows.size() == 2);
    CHECK(alias.rows[0].parity.sqnr_db < 10.0);
}

TEST_CASE("the worst layer: new NaN or Inf first, then the lowest SQNR, ties to the first",
          "[exec]") {
    auto row = [](double db, int64_t nonfinite = 0) {
        LayerParity r;
        r.parity.sqnr_db = db;
        r.parity.nonfinite_new = nonfinite;
        r.parity.inf = nonfinite;
        return r;
    };
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(worst_layer({}) == -1);
    CHECK(worst_layer({row(inf), row(inf)}) == -1); // nothing lost anywhere
    CHECK(worst_layer({row(inf), row(25), row(12), row(12), row(40)}) == 2);
    CHECK(worst_layer({row(12), row(-inf), row(3)}) == 1);
    CHECK(worst_layer({row(3), row(40, 1)}) == 1); // an Inf the float run does not have
    // An Inf both runs have (an attention mask's -inf) is no loss.
    LayerParity masked = row(40);
    masked.parity.inf = 5;
    CHECK(worst_layer({row(30), masked}) == 0);
}

TEST_CASE("NaN and Inf in an output are named even where both runs have them", "[exec]") {
    Tensor a = Tensor::zeros(ScalarType::Float, {3}), b = Tensor::zeros(ScalarType::Float, {3});
    a.data<float>()[0] = b.data<float>()[0] = std::nanf("");
    a.data<float>()[1] = b.data<float>()[1] = -INFINITY;
    a.data<float>()[2] = b.data<float>()[2] = 2.0f;
    ParityReport r;
    r.outputs.push_back(compare_tensors("out", a, b));
    CHECK(r.outputs[0].nan == 1);
    CHECK(r.outputs[0].inf == 1);
    CHECK(r.outputs[0].nonfinite_new == 0);
    CHECK(r.outputs[0].allclose);            // NaN == NaN and -inf == -inf, as torch.allclose
    CHECK(std::isinf(r.outputs[0].sqnr_db)); // the same -inf is no noise (it was NaN)
    CHECK(r.verdict() == "1 NaN value and 1 Inf value in the outputs");
    CHECK(r.str().find("1 NaN, 1 Inf values") != std::string::npos);
}

TEST_CASE("a converted conv_bn_relu_eval run has its layers: the folded conv stands for the "
          "batch norm",
          "[workspace]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    // A float run first: its baseline is cached (outputs only) and must not starve
    // the quantized run of the float values.
    REQUIRE(ws->apply(action(R"({"kind": "run"})")).ok());
    CHECK_FALSE(ws->last_run()->layers); // a float run has no layer table
    for (const char* a : {R"({"kind": "prepare"})", R"({"kind": "calibrate", "repeat": 3})",
                          R"({"kind": "convert"})"})
        REQUIRE(ws->apply(action(a)).ok());
    auto out = ws->apply(action(R"({"kind": "run"})"));
    REQUIRE(out.ok());
    const RunReport run = *ws->last_run(); // copies: the runs below replace it
    REQUIRE(run.layers);
    CHECK_FALSE(run.layers_float_reused); // the first quantized Run runs the float model
    const LayerTable t = *run.layers;
    REQUIRE(t.rows.size() == 2);
    CHECK(t.rows[0].layer.node == "conv2d");
    CHECK(t.rows[0].layer.reference == "batch_norm");
    CHECK(t.rows[0].layer.op == "aten.conv2d.default");
    CHECK(t.rows[1].layer.node == "relu");
    CHECK(t.rows[1].layer.reference == "relu");
    CHECK(t.not_kept == 0);
    // torch's eager outputs in the file are the float model's: SQNR there too.
    REQUIRE(run.reference);
    CHECK(run.reference->approximate);
    CHECK(run.reference->verdict().rfind("SQNR ", 0) == 0);
    // The numbers are the quantized module's conv2d against the float batch_norm
    // (the program as loaded, run here on its own).
    ModuleState fs = ModuleState::from_program(ws->original());
    auto fr = run_program(ws->original(), fs, run.inputs);
    REQUIRE(fr.ok());
    TensorParity conv = compare_tensors("conv2d", *run.result.values.at("conv2d").tensor,
                                        *fr.value().values.at("batch_norm").tensor);
    CHECK(std::fabs(t.rows[0].parity.sqnr_db - conv.sqnr_db) < 1e-6);
    CHECK(conv.sqnr_db > 25.0); // int8 keeps the conv; the unfolded conv2d would not match
    TensorParity unfolded = compare_tensors("conv2d", *run.result.values.at("conv2d").tensor,
                                            *fr.value().values.at("conv2d").tensor);
    CHECK(unfolded.sqnr_db < conv.sqnr_db - 10.0);
    const int min = t.rows[0].parity.sqnr_db <= t.rows[1].parity.sqnr_db ? 0 : 1;
    CHECK(t.worst == min);
    CHECK(out.value().summary.find("layers: 2 compared with the float run") != std::string::npos);
    // In slices of one piece each: the same table.
    REQUIRE(ws->begin(action(R"({"kind": "run"})")).ok());
    int slices = 0;
    while (!ws->advance(1e-9)) ++slices;
    CHECK(slices > 4);
    auto sliced = ws->finish();
    REQUIRE(sliced.ok());
    REQUIRE(ws->last_run()->layers);
    // The same inputs and kernels: the first Run's float values, not a second float run.
    CHECK(ws->last_run()->layers_float_reused);
    const LayerTable& s = *ws->last_run()->layers;
    REQUIRE(s.rows.size() == t.rows.size());
    for (size_t k = 0; k < s.rows.size(); ++k) {
        CHECK(s.rows[k].layer.node == t.rows[k].layer.node);
        CHECK(s.rows[k].parity.sqnr_db == t.rows[k].parity.sqnr_db);
    }
    CHECK(s.worst == t.worst);
    // Other inputs or kernels: the float model runs on them.
    for (const char* other : {R"({"kind": "run", "inputs": "seeded", "seed": 3})",
                              R"({"kind": "run", "fast_kernels": true})"}) {
        INFO(other);
        REQUIRE(ws->apply(action(other)).ok());
        REQUIRE(ws->last_run()->layers);
        CHECK_FALSE(ws->last_run()->layers_float_reused);
        REQUIRE(ws->apply(action(other)).ok());
        CHECK(ws->last_run()->layers_float_reused);
    }
    // A graph that pairs other layers (an edit renames nothing here, so: the float file
    // opened again drops the reuse with everything else of the file).
    auto again = open_workspace("conv_bn_relu_eval");
    for (const char* a : {R"({"kind": "prepare"})", R"({"kind": "calibrate", "repeat": 3})",
                          R"({"kind": "convert"})", R"({"kind": "run"})"})
        REQUIRE(again->apply(action(a)).ok());
    CHECK_FALSE(again->last_run()->layers_float_reused);
}

// compare_tensors' float path (four values at a time, sums in lanes) against the
// definition written out here one element at a time: ties of NaN and Inf anywhere in a
// group of four, lengths that leave a tail.
TEST_CASE("compare_tensors on float32 equals the element-by-element definition", "[exec]") {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{4099}}) {
        Tensor a = Tensor::seeded_normal({n}, 21), b = Tensor::seeded_normal({n}, 22);
        float* pa = a.data<float>();
        float* pb = b.data<float>();
        for (int64_t k = 0; k < n; ++k) pb[k] = pa[k] + 0.01f * pb[k];
        if (n > 100) {
            pa[5] = pb[5] = std::nanf("");
            pa[9] = std::nanf("");
            pa[17] = INFINITY;
            pa[30] = pb[30] = -INFINITY;
            pb[41] = INFINITY;
        }
        for (Tolerance tol : {Tolerance{}, Tolerance{0.0, 1e9}, Tolerance{0.02, 0.0}}) {
            INFO("n " << n << " atol " << tol.atol << " rtol " << tol.rtol);
            TensorParity p = compare_tensors("x", a, b, tol);
            double signal = 0, noise = 0, range = 0, max_abs = 0;
            int64_t nan = 0, inf = 0, fresh = 0;
            bool close = true;
            for (int64_t k = 0; k < n; ++k) {
                const double x = pa[k], y = pb[k];
                nan += std::isnan(x);
                inf += std::isinf(x);
                fresh += !std::isfinite(x) && std::isfinite(y);
                if (std::isnan(x) || std::isnan(y)) {
                    close = close && std::isnan(x) && std::isnan(y);
                    continue;
                }
                const double d =
                    std::isinf(x) || std::isinf(y) ? (x == y ? 0.0 : INFINITY) : std::fabs(x - y);
                max_abs = std::max(max_abs, d);
                close = close && !(d > tol.atol + tol.rtol * std::fabs(y));
                if (std::isfinite(y)) {
                    range = std::max(range, std::fabs(y));
                    signal += y * y;
                }
                noise += d * d;
            }
            CHECK(p.nan == nan);
            CHECK(p.inf == inf);
            CHECK(p.nonfinite_new == fresh);
            CHECK(p.allclose == close);
            CHECK(p.max_abs == max_abs);
            CHECK(p.max_rel == (max_abs == 0 ? 0.0 : max_abs / range));
            const double db = noise == 0 ? INFINITY : 10 * std::log10(signal / noise);
            if (std::isfinite(db))
                CHECK(std::fabs(p.sqnr_db - db) < 1e-9);
            else
                CHECK(p.sqnr_db == db);
        }
    }
}
