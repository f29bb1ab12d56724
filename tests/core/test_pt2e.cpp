// Observers, prepare, calibrate and convert on ep.module() of the lesson
// assets, the structural diff, and the parity claims the lessons make:
// identity edits are bit-identical, folding is within 1e-5, convert differs by
// the quantization error. Every verdict has a negative control.
#include <catch2/catch.hpp>

#include "exec/parity.h"
#include "io/fx_json.h"
#include "io/program_loader.h"
#include "passes/decompose.h"
#include "passes/graph_diff.h"
#include "passes/pt2e.h"
#include "passes/unlift.h"
#include "test_support.h"
#include "util/rng.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {
struct Loaded {
    ExportedProgram ep;
    GraphModule gm;
    std::vector<Tensor> in;
};
Loaded load(const std::string& name) {
    Loaded l{load_asset(name), {}, {}};
    auto gm = unlift(l.ep);
    REQUIRE(gm.ok());
    l.gm = gm.take();
    l.in = example_inputs(l.ep);
    return l;
}
RunResult run(const GraphModule& gm, const std::vector<Tensor>& in, ModuleState* state = nullptr) {
    ModuleState local = ModuleState::from_module(gm);
    auto r = run_module(gm, state ? *state : local, in);
    INFO((r.ok() ? std::string() : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}
int count(const Graph& g, const std::string& target) {
    int n = 0;
    for (Node* node : g.nodes()) n += node->target() == target;
    return n;
}
bool has(const std::string& text, const std::string& s) {
    return text.find(s) != std::string::npos;
}
const char* kQ = "torch.ops.quantized_decomposed.quantize_per_tensor.default";
const char* kDQ = "torch.ops.quantized_decomposed.dequantize_per_tensor.default";
} // namespace

TEST_CASE("M00-4: an observer after relu, rewired the right way, changes nothing", "[passes]") {
    Loaded l = load("conv_relu");
    RunResult before = run(l.gm, l.in);
    GraphModule gm = l.gm.clone();
    auto before_graph = gm.graph->clone();
    Node* relu = gm.graph->find("relu");
    auto obs = insert_observer(gm, relu, ObserverConfig::activation());
    REQUIRE(obs.ok());
    CHECK(obs.value()->name() == "activation_post_process_0");
    CHECK(obs.value()->target() == "activation_post_process_0");
    REQUIRE(gm.lint().ok());
    CHECK(gm.stale()); // forward is stale until recompile, as in torch
    gm.recompile();
    CHECK(has(
        gm.code(),
        "    activation_post_process_0 = self.activation_post_process_0(relu);  relu = None\n"));
    CHECK(has(gm.code(),
              "return pytree.tree_unflatten((activation_post_process_0,), self._out_spec)"));
    GraphDiff d = diff_graphs(*before_graph, *gm.graph);
    CHECK(d.added == std::vector<std::string>{"activation_post_process_0"});
    CHECK(d.rewired == std::vector<std::string>{"output"});
    CHECK(d.removed.empty());
    // outputs bit-identical; the observer saw relu's range
    ModuleState state = ModuleState::from_module(gm);
    RunResult after = run(gm, l.in, &state);
    ParityReport p = compare_runs(after, before);
    CHECK(p.bit_identical());
    const Tensor& out = *before.outputs[0].tensor;
    float lo = out.f32()[0], hi = out.f32()[0];
    for (int64_t k = 0; k < out.numel(); ++k)
        lo = std::min(lo, out.f32()[k]), hi = std::max(hi, out.f32()[k]);
    auto& o = *state.observers.at("activation_post_process_0");
    CHECK(o.min_val() == lo);
    CHECK(o.max_val() == hi);
    auto q = o.calculate_qparams();
    REQUIRE(q.ok());
    CHECK(q.value().zero_point == 0); // relu output: min 0
    CHECK(q.value().scale == hi / 255.0f);
    // negative control: converting the observer to q/dq is NOT bit-identical any more
    auto conv = convert_pt2e(gm, state, true);
    REQUIRE(conv.ok());
    ParityReport p2 = compare_runs(run(gm, l.in), before);
    CHECK_FALSE(p2.bit_identical());
    CHECK(p2.max_abs() > 0.0);
    CHECK(p2.max_abs() <= q.value().scale / 2 + 1e-6); // at most half a quantization step
}

TEST_CASE("DCE and recompile keep outputs bit-identical; dropping an impure node does not",
          "[passes]") {
    Loaded l = load("conv_bn_relu_train");
    ModuleState s0 = ModuleState::from_module(l.gm);
    RunResult before = run(l.gm, l.in, &s0);
    GraphModule gm = l.gm.clone();
    auto changed = gm.eliminate_dead_code();
    REQUIRE(changed.ok());
    CHECK_FALSE(
        changed.value()); // add_ (mutating) and _guards_fn (impure) stay; nothing else is dead
    CHECK(gm.graph->find("add_") != nullptr);
    CHECK(gm.graph->find("_guards_fn") != nullptr);
    gm.recompile();
    REQUIRE(gm.lint().ok());
    ModuleState s1 = ModuleState::from_module(gm);
    RunResult after = run(gm, l.in, &s1);
    CHECK(compare_runs(after, before).bit_identical());
    CHECK(s1.tensors.at("bn.num_batches_tracked")->storage ==
          s0.tensors.at("bn.num_batches_tracked")->storage);
    // negative control: a "DCE" that treats add_ as pure erases it; the output is the same
    // but the buffer no longer counts, so the state comparison fails
    GraphModule wrong = l.gm.clone();
    REQUIRE(wrong.graph->erase_node(wrong.graph->find("add_")).ok());
    wrong.recompile(); // forward() runs the code of the last recompile, as in torch
    ModuleState s2 = ModuleState::from_module(wrong);
    RunResult w = run(wrong, l.in, &s2);
    CHECK(compare_runs(w, before).bit_identical());
    CHECK(s2.tensors.at("bn.num_batches_tracked")->storage !=
          s0.tensors.at("bn.num_batches_tracked")->storage);
    // eval graph: the unused num_batches_tracked get_attr is dead code
    Loaded e = load("conv_bn_relu_eval");
    GraphModule eg = e.gm.clone();
    auto c2 = eg.eliminate_dead_code();
    REQUIRE(c2.ok());
    CHECK(c2.value());
    CHECK(eg.graph->find("bn_num_batches_tracked") == nullptr);
    CHECK(compare_runs(run(eg, e.in), run(e.gm, e.in)).bit_identical());
}

TEST_CASE("conv-BN folding: new conv.weight_bias, BN gone, outputs within 1e-5", "[passes]") {
    Loaded l = load("conv_bn_relu_eval");
    RunResult before = run(l.gm, l.in);
    GraphModule gm = l.gm.clone();
    auto f = fold_conv_bn(gm);
    REQUIRE(f.ok());
    CHECK(f.value().folded.size() == 1);
    // [C] fact sheet 5.2: a conv without bias gets `conv.weight_bias`, read by a get_attr before
    // the conv
    CHECK(f.value().new_parameters == std::vector<std::string>{"conv.weight_bias"});
    Node* bias = gm.graph->find("conv_weight_bias");
    REQUIRE(bias);
    CHECK(bias->next() == gm.graph->find("conv2d"));
    CHECK(has(gm.code(), "conv2d = torch.ops.aten.conv2d.default(x, conv_weight, conv_weight_bias, "
                         "[1, 1], [1, 1])"));
    CHECK(count(*gm.graph, "torch.ops.aten.batch_norm.default") == 0);
    CHECK(gm.graph->find("bn_weight") == nullptr); // dead BN attributes are gone
    ParityReport p = compare_runs(run(gm, l.in), before, Tolerance{0.0, 1e-5});
    CHECK(p.allclose());
    CHECK(p.max_abs() <= 1e-5);
    // negative control: fold with a wrong eps -> outside tolerance
    GraphModule wrong = l.gm.clone();
    Node* bn = wrong.graph->find("batch_norm");
    std::vector<Argument> args = bn->args();
    args[7] = Argument::from_float(1e-2);
    bn->set_args(args);
    REQUIRE(fold_conv_bn(wrong).ok());
    CHECK_FALSE(compare_runs(run(wrong, l.in), before, Tolerance{0.0, 1e-5}).allclose());
}

TEST_CASE("prepare on ConvBnReLU: folded, observers where XNNPACK puts them (fact sheet 5.3)",
          "[passes]") {
    Loaded l = load("conv_bn_relu_eval");
    GraphModule gm = l.gm.clone();
    auto p = prepare_pt2e(gm);
    INFO((p.ok() ? std::string() : p.error().str()));
    REQUIRE(p.ok());
    // [I] fact sheet 5.3: _0 after x, _1 after conv_weight, _2 after relu
    REQUIRE(p.value().observers.size() == 3);
    CHECK(p.value().observers[0].observer == "activation_post_process_0");
    CHECK(p.value().observers[0].observes == "x");
    CHECK(p.value().observers[1].observes == "conv_weight");
    CHECK(p.value().observers[2].observes == "relu");
    CHECK(gm.graph->find("activation_post_process_0")->prev() == gm.graph->find("x"));
    CHECK(gm.graph->find("activation_post_process_1")->prev() == gm.graph->find("conv_weight"));
    CHECK(gm.graph->find("activation_post_process_2")->prev() == gm.graph->find("relu"));
    CHECK(has(gm.code(), "conv2d = torch.ops.aten.conv2d.default(activation_post_process_0, "
                         "activation_post_process_1, "
                         "conv_weight_bias, [1, 1], [1, 1])"));
    CHECK(gm.submodules.at("activation_post_process_1").observer->qscheme ==
          QScheme::PerTensorSymmetric);
    CHECK(gm.submodules.at("activation_post_process_1").observer->quant_min == -127);
    CHECK(gm.submodules.at("activation_post_process_0").observer->quant_max == 255);
    // the prepared module computes what the original does (up to folding)
    CHECK(compare_runs(run(gm, l.in), run(l.gm, l.in), Tolerance{0.0, 1e-5}).allclose());
}

TEST_CASE("prepare works from patterns: the writing styles and the ResNet-style model",
          "[passes]") {
    for (const char* name :
         {"style_functional", "style_modules", "style_sequential", "resnet_style"}) {
        Loaded l = load(name);
        GraphModule gm = l.gm.clone();
        auto p = prepare_pt2e(gm);
        INFO(name << (p.ok() ? "" : p.error().str()));
        REQUIRE(p.ok());
        int convs = count(*l.gm.graph, "torch.ops.aten.conv2d.default");
        int linears = count(*l.gm.graph, "torch.ops.aten.linear.default");
        CHECK(static_cast<int>(p.value().patterns.size()) == convs + linears);
        // every linear gets its weight observed
        for (Node* n : gm.graph->nodes())
            if (n->target() == "torch.ops.aten.linear.default") {
                REQUIRE(n->args()[1].is_node());
                CHECK(n->args()[1].node->op() == Op::CallModule);
                CHECK(n->args()[0].node->op() == Op::CallModule);
            }
        CHECK(compare_runs(run(gm, l.in), run(l.gm, l.in), Tolerance{0.0, 1e-5}).allclose());
        if (std::string(name) == "resnet_style") CHECK(p.value().fold.folded.size() == 6);
    }
}

TEST_CASE("convert: q/dq pairs with the observers' qparams, weights folded to _frozen_param",
          "[passes]") {
    Loaded l = load("conv_bn_relu_eval");
    RunResult reference = run(l.gm, l.in);
    for (bool fold : {true, false}) {
        GraphModule gm = l.gm.clone();
        REQUIRE(prepare_pt2e(gm).ok());
        ModuleState state = ModuleState::from_module(gm);
        std::vector<std::vector<Tensor>> batches = {l.in};
        REQUIRE(calibrate(gm, state, batches).ok());
        std::map<std::string, QParams> qp;
        for (const auto& [name, obs] : state.observers) qp[name] = obs->calculate_qparams().take();
        auto c = convert_pt2e(gm, state, fold);
        REQUIRE(c.ok());
        REQUIRE(gm.lint().ok());
        INFO((fold ? "fold_quantize=True" : "fold_quantize=False") << "\n" << gm.code());
        // [C] fact sheet 5.4 (AO test_conv_padding_bn_relu): quantize x2, dequantize x3 when folded
        CHECK(count(*gm.graph, kQ) == (fold ? 2 : 3));
        CHECK(count(*gm.graph, kDQ) == 3);
        CHECK(gm.submodules.count("activation_post_process_0") == 0);
        // [C] names: quantize_per_tensor_default, dequantize_per_tensor_default, then _1, _2
        CHECK(gm.graph->find("dequantize_per_tensor_default") != nullptr);
        CHECK(gm.graph->find("dequantize_per_tensor_default_2") != nullptr);
        if (fold) {
            // [C] fact sheet 5.4: _frozen_param0 holds the int8 weight; conv_weight is gone
            Node* frozen = gm.graph->find("_frozen_param0");
            REQUIRE(frozen);
            CHECK(gm.attrs.at("_frozen_param0")->dtype == ScalarType::Char);
            CHECK(gm.graph->find("conv_weight") == nullptr);
            CHECK(has(gm.code(), "dequantize_per_tensor_default = "
                                 "torch.ops.quantized_decomposed.dequantize_per_tensor."
                                 "default(_frozen_param0, "));
        }
        // literals equal the observers' qparams; the [C] print format of a q node
        for (const auto& cv : c.value().converted) {
            CHECK(cv.scale == qp.at(cv.observer).scale);
            CHECK(cv.zero_point == qp.at(cv.observer).zero_point);
        }
        Node* q = gm.graph->find(c.value().converted.back().quantize);
        REQUIRE(q);
        CHECK(format_node(*q).rfind(
                  "%quantize_per_tensor_default_2 : [num_users=1] = call_function[target=torch.ops."
                  "quantized_decomposed.quantize_per_tensor.default](args = (%relu, ",
                  0) == 0);
        CHECK(has(format_node(*q), ", 0, 255, torch.uint8), kwargs = {})"));
        // the quantization error: reported, and small for this model
        ParityReport p = compare_runs(run(gm, l.in), reference);
        CHECK_FALSE(p.bit_identical());
        CHECK(p.outputs[0].sqnr_db > 30.0);
        // negative control: a wrong zero_point in the output dequantize wrecks the SQNR
        Node* dq = gm.graph->find(c.value().converted.back().dequantize);
        std::vector<Argument> args = dq->args();
        args[2] = Argument::from_int(args[2].i + 60);
        dq->set_args(args);
        gm.recompile();
        ParityReport bad = compare_runs(run(gm, l.in), reference);
        CHECK(bad.outputs[0].sqnr_db < 20.0);
    }
}

TEST_CASE(
    "folding also matches the decomposed form (_native_batch_norm_legit_no_training + getitem)",
    "[passes]") {
    Loaded l = load("conv_bn_relu_eval");
    ExportedProgram low = l.ep.clone();
    REQUIRE(run_decompositions(low, DecompTable::for_level(IrLevel::Inference)).ok());
    auto gm = unlift(low);
    REQUIRE(gm.ok());
    GraphModule folded = gm.value().clone();
    auto f = fold_conv_bn(folded);
    REQUIRE(f.ok());
    CHECK(f.value().folded.size() == 1);
    CHECK(count(*folded.graph, "torch.ops.aten._native_batch_norm_legit_no_training.default") == 0);
    CHECK(count(*folded.graph, "operator.getitem") == 0);
    CHECK(compare_runs(run(folded, l.in), run(l.gm, l.in), Tolerance{0.0, 1e-5}).allclose());
}
