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

// relu -> hardtanh_(relu, 0, 0.5): in the float graph hardtanh_ clamps relu's own
// tensor; in the quantized one it clamps the dequantize after relu (MobileNet v2's
// conv -> q/dq -> hardtanh_).
std::unique_ptr<Graph> clamp_graph(bool quantized) {
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
        Node* q = g->call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", a);
        a[0] = ref(q);
        in = g->call_function("torch.ops.quantized_decomposed.dequantize_per_tensor.default", a);
    }
    Node* h = g->call_function("torch.ops.aten.hardtanh_.default",
                               {ref(in), Argument::from_float(0.0), Argument::from_float(0.5)}, {},
                               "clamp");
    g->output(Argument::tuple({ref(h)}));
    return g;
}

// Every figure of two tables, exactly (rows, order, not_kept).
void check_same_table(const LayerTable& a, const LayerTable& b) {
    CHECK(a.not_kept == b.not_kept);
    REQUIRE(a.rows.size() == b.rows.size());
    for (size_t k = 0; k < a.rows.size(); ++k) {
        INFO("row " << k << ": %" << a.rows[k].layer.node);
        const TensorParity &x = a.rows[k].parity, &y = b.rows[k].parity;
        CHECK(a.rows[k].layer.node == b.rows[k].layer.node);
        CHECK(a.rows[k].layer.reference == b.rows[k].layer.reference);
        CHECK(a.rows[k].layer.op == b.rows[k].layer.op);
        CHECK(x.type_a == y.type_a);
        CHECK(x.max_abs == y.max_abs);
        CHECK(x.max_rel == y.max_rel);
        CHECK(x.sqnr_db == y.sqnr_db);
        CHECK(x.allclose == y.allclose);
        CHECK(x.bit_identical == y.bit_identical);
        CHECK(x.nan == y.nan);
        CHECK(x.inf == y.inf);
        CHECK(x.nonfinite_new == y.nonfinite_new);
    }
}

// The table made as the quantized run goes (RunOptions::on_value into a LayerStream),
// with the run keeping no value; `streamed` says what it kept.
LayerTable stream_table(const Graph& q, const Graph& f, const std::vector<Value>& in,
                        const RunResult& rf, RunResult* streamed = nullptr) {
    LayerStream stream(pair_layers(q, f), rf);
    RunOptions opt;
    opt.keep_values = false;
    opt.on_value = [&stream](const Node& n, const Value& v) { stream.on_value(n, v); };
    RunResult r = run_ok(q, in, opt);
    CHECK(stream.compared() == pair_layers(q, f).size());
    if (streamed) *streamed = r;
    return stream.take();
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
    auto q = clamp_graph(true), f = clamp_graph(false);
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

// The Workspace's quantized Run compares each layer as the run makes it (LayerStream):
// the rows must be those of the old definition, a run that kept every value as its node
// made it and LayerTable::add over them, to the last bit.
TEST_CASE("a layer table streamed as the run goes equals the table of a run that kept the values",
          "[exec]") {
    RunOptions own;
    own.keep_before_writes = true;
    SECTION("a chain of layers, one of them coarse") {
        auto q = chain(true, 0.03, 0.5), f = chain(false, 0.03, 0.5);
        std::vector<Value> in = {Value::of(Tensor::seeded_normal({3, 1001}, 7))};
        const RunResult rf = run_ok(*f, in);
        RunResult streamed;
        const LayerTable t = stream_table(*q, *f, in, rf, &streamed);
        CHECK(streamed.values.empty()); // the quantized run kept nothing
        REQUIRE(t.rows.size() == 3);
        check_same_table(t, table_of(*q, *f, run_ok(*q, in, own), rf));
        // Outputs too: the same forward, keeping values or not.
        REQUIRE(streamed.outputs.size() == 1);
        CHECK(streamed.outputs[0].tensor->storage == run_ok(*q, in).outputs[0].tensor->storage);
    }
    SECTION("a value an in-place op writes later is compared as its node made it") {
        // x -> (quantize / dequantize) -> relu -> hardtanh_(relu, 0, 0.5): relu's own tensor
        // is clamped in both graphs (a converted MobileNet v2's conv -> hardtanh_).
        auto make = [](bool quantized) {
            auto g = std::make_unique<Graph>();
            Node* x = g->placeholder("x");
            Node* in = x;
            if (quantized) {
                std::vector<Argument> a = {ref(x),
                                           Argument::from_float(0.02),
                                           Argument::from_int(0),
                                           Argument::from_int(-128),
                                           Argument::from_int(127),
                                           Argument::from_dtype(ScalarType::Char)};
                Node* q = g->call_function(
                    "torch.ops.quantized_decomposed.quantize_per_tensor.default", a);
                a[0] = ref(q);
                in = g->call_function(
                    "torch.ops.quantized_decomposed.dequantize_per_tensor.default", a);
            }
            Node* relu = g->call_function("torch.ops.aten.relu.default", {ref(in)}, {}, "relu");
            Node* h = g->call_function(
                "torch.ops.aten.hardtanh_.default",
                {ref(relu), Argument::from_float(0.0), Argument::from_float(0.5)}, {}, "clamp");
            g->output(Argument::tuple({ref(h)}));
            return g;
        };
        auto q = make(true), f = make(false);
        std::vector<Value> in = {Value::of(Tensor::seeded_normal({4, 1000}, 3))};
        const RunResult rf = run_ok(*f, in, own);
        const LayerTable t = stream_table(*q, *f, in, rf);
        REQUIRE(t.rows.size() == 2);
        CHECK(t.rows[0].layer.node == "relu");
        check_same_table(t, table_of(*q, *f, run_ok(*q, in, own), rf));
        // Not the table of the quantized run's written alias: the check above tells them
        // apart (relu clamped to 0.5 against the float relu, unclamped).
        const LayerTable alias = table_of(*q, *f, run_ok(*q, in), rf);
        CHECK(alias.rows[0].parity.sqnr_db < t.rows[0].parity.sqnr_db - 10.0);
    }
    SECTION("a float value the float run dropped counts as not kept") {
        auto q = chain(true, 0.03, 0.5), f = chain(false, 0.03, 0.5);
        std::vector<Value> in = {Value::of(Tensor::seeded_normal({4, 1000}, 7))};
        RunOptions small;
        small.keep_values_bytes = 40000; // x, relu: neg and add dropped
        const RunResult rf = run_ok(*f, in, small);
        REQUIRE(rf.values_not_kept > 0);
        const LayerTable t = stream_table(*q, *f, in, rf);
        CHECK(t.not_kept == 2);
        check_same_table(t, table_of(*q, *f, run_ok(*q, in, own), rf));
    }
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
    // Streamed as the converted forward made its values, the table is the old
    // definition's to the last bit: both runs keeping every value as its node made it,
    // then LayerTable::add layer by layer.
    {
        RunOptions own;
        own.keep_before_writes = true;
        ModuleState qs = ws->state().clone();
        auto qr = run_module(ws->module(), qs, run.inputs, own);
        ModuleState fs2 = ModuleState::from_program(ws->original());
        auto fr2 = run_program(ws->original(), fs2, run.inputs, own);
        REQUIRE(qr.ok());
        REQUIRE(fr2.ok());
        LayerTable kept;
        for (const LayerPair& l : pair_layers(ws->module().forward_graph(), *ws->original().graph))
            kept.add(l, qr.value(), fr2.value());
        check_same_table(s, kept);
        check_same_table(t, kept);
    }
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

// The exact figures compare_tensors gives float32 tensors: groups of four whose eight
// values are finite go to two double lanes (values 0 and 2 to lane 0, 1 and 3 to lane
// 1, each lane summed in order), every other value to scalar sums, and the lanes are
// added to the scalar sums at the end. This is the definition the per-layer table had
// before its blocks and shortcuts; written out one value at a time, it must give the
// same bits, wherever a NaN or Inf falls and whether or not allclose fails early.
TEST_CASE("compare_tensors on float32 keeps its lanes' order to the last bit", "[exec]") {
    struct Ref {
        double scalar_signal = 0, scalar_noise = 0, lane_signal[2] = {0, 0}, lane_noise[2] = {0, 0},
               range = 0, max_abs = 0;
        bool close = true;
    };
    auto reference = [](const float* pa, const float* pb, int64_t n, const Tolerance& tol) {
        Ref r;
        auto one = [&](double x, double y, double& signal, double& noise) {
            const double d =
                std::isinf(x) || std::isinf(y) ? (x == y ? 0.0 : INFINITY) : std::fabs(x - y);
            r.max_abs = std::max(r.max_abs, d);
            r.close = r.close && !(d > tol.atol + tol.rtol * std::fabs(y));
            if (std::isfinite(y)) {
                r.range = std::max(r.range, std::fabs(y));
                signal += y * y;
            }
            noise += d * d;
        };
        int64_t k = 0;
        for (; k + 4 <= n; k += 4) {
            bool fin = true;
            for (int64_t i = k; i < k + 4; ++i)
                fin = fin && std::isfinite(pa[i]) && std::isfinite(pb[i]);
            for (int64_t i = k; i < k + 4; ++i) {
                if (fin) {
                    one(pa[i], pb[i], r.lane_signal[i % 2], r.lane_noise[i % 2]);
                } else if (std::isnan(pa[i]) || std::isnan(pb[i])) {
                    r.close = r.close && std::isnan(pa[i]) && std::isnan(pb[i]);
                } else {
                    one(pa[i], pb[i], r.scalar_signal, r.scalar_noise);
                }
            }
        }
        for (; k < n; ++k) {
            if (std::isnan(pa[k]) || std::isnan(pb[k]))
                r.close = r.close && std::isnan(pa[k]) && std::isnan(pb[k]);
            else
                one(pa[k], pb[k], r.scalar_signal, r.scalar_noise);
        }
        return r;
    };
    for (int64_t n : {int64_t{3}, int64_t{64}, int64_t{67}, int64_t{1000}, int64_t{4099}}) {
        for (int where : {-1, 0, 1, 2}) { // no NaN / Inf; in the first block; in a later one
            Tensor a = Tensor::seeded_normal({n}, 31), b = Tensor::seeded_normal({n}, 32);
            float* pa = a.data<float>();
            float* pb = b.data<float>();
            // Close at first, far later: allclose fails part of the way through.
            for (int64_t k = 0; k < n; ++k) pb[k] = pa[k] + (k < n / 2 ? 1e-9f : 0.05f) * pb[k];
            if (where == 0 && n > 10) pa[5] = std::nanf(""), pb[9] = -INFINITY;
            if (where == 1 && n > 200)
                pa[130] = INFINITY, pb[130] = INFINITY, pa[199] = 1e30f * 1e30f;
            if (where == 2 && n > 1000) pb[n - 2] = std::nanf(""), pa[700] = -INFINITY;
            for (Tolerance tol : {Tolerance{}, Tolerance{0.0, 1e9}, Tolerance{0.02, 0.0}}) {
                INFO("n " << n << " where " << where << " atol " << tol.atol);
                const Ref r = reference(pa, pb, n, tol);
                const TensorParity p = compare_tensors("x", a, b, tol);
                const double signal = r.scalar_signal + (r.lane_signal[0] + r.lane_signal[1]);
                const double noise = r.scalar_noise + (r.lane_noise[0] + r.lane_noise[1]);
                CHECK(p.max_abs == r.max_abs);
                CHECK(p.max_rel == (r.max_abs == 0 ? 0.0 : r.max_abs / r.range));
                CHECK(p.allclose == r.close);
                CHECK(p.sqnr_db == (noise == 0 ? INFINITY : 10.0 * std::log10(signal / noise)));
            }
        }
    }
}
