// run_decompositions on every lesson asset: the fact sheet's lines, op counts
// per level, parity with the exported program (and a negative control), step
// mode, custom tables, metadata carried to the new nodes.
#include <catch2/catch.hpp>

#include "exec/parity.h"
#include "io/program_loader.h"
#include "passes/decompose.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {
ExportedProgram lowered(const ExportedProgram& ep, IrLevel level) {
    ExportedProgram low = ep.clone();
    REQUIRE(ep.graph->lint().ok());
    auto r = run_decompositions(low, DecompTable::for_level(level));
    INFO((r.ok() ? std::string() : r.error().str()));
    REQUIRE(r.ok());
    REQUIRE(low.graph->lint().ok());
    return low;
}
int count(const Graph& g, const std::string& target) {
    int n = 0;
    for (Node* node : g.nodes()) n += node->target() == target;
    return n;
}
bool has(const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
}
} // namespace

TEST_CASE("eval batch_norm: _native_batch_norm_legit_no_training + getitem (fact sheet 3.3)",
          "[passes]") {
    ExportedProgram low = lowered(load_asset("conv_bn_relu_eval"), IrLevel::Inference);
    std::string code = python_code(*low.graph);
    // [I] fact sheet 3.3, verbatim
    CHECK(has(code, "_native_batch_norm_legit_no_training.default(conv2d, p_bn_weight, p_bn_bias, "
                    "b_bn_running_mean, "
                    "b_bn_running_var, 0.1, 1e-05)"));
    CHECK(has(code, "getitem = _native_batch_norm_legit_no_training[0]"));
    CHECK(has(code, "relu = torch.ops.aten.relu.default(getitem)"));
    CHECK(has(code, "conv2d = torch.ops.aten.conv2d.default(")); // conv2d kept by the {} table
    CHECK(low.graph->find("getitem_1") == nullptr);              // unused outputs dropped
    CHECK(low.signature.outputs.size() == 1);
}

TEST_CASE(
    "train batch_norm: functional form, running stats become mutation outputs (fact sheet 3.2)",
    "[passes]") {
    ExportedProgram ep = load_asset("conv_bn_relu_train");
    ExportedProgram low = lowered(ep, IrLevel::Inference);
    std::string code = python_code(*low.graph);
    // [C*] fact sheet 3.2 (DOCS-EXEC lines, same names in this model)
    CHECK(has(code, "add = torch.ops.aten.add.Tensor(b_bn_num_batches_tracked, 1)"));
    CHECK(has(
        code,
        "_native_batch_norm_legit_functional = "
        "torch.ops.aten._native_batch_norm_legit_functional.default("
        "conv2d, p_bn_weight, p_bn_bias, b_bn_running_mean, b_bn_running_var, True, 0.1, 1e-05)"));
    CHECK(has(code, "getitem_3 = _native_batch_norm_legit_functional[3]"));
    CHECK(has(code, "getitem_4 = _native_batch_norm_legit_functional[4]"));
    // [I] fact sheet 3.2: the return tuple and the three BUFFER_MUTATION specs, mutations first
    CHECK(has(code, "return (getitem_3, getitem_4, add, relu)"));
    CHECK(has(signature_str(low.signature),
              "\n# outputs\ngetitem_3: BUFFER_MUTATION target='bn.running_mean'\n"
              "getitem_4: BUFFER_MUTATION target='bn.running_var'\n"
              "add: BUFFER_MUTATION target='bn.num_batches_tracked'\n"
              "relu: USER_OUTPUT\n"));
    CHECK(low.graph->find("getitem_1") == nullptr);
    CHECK(low.graph->find("getitem_2") == nullptr);
    CHECK(count(*low.graph, "torch.ops.aten.add_.Tensor") == 0); // functional: no in-place ops
    // ep.module() of the functional program writes the buffers back with copy_ ([C*] fact
    // sheet 3.2, TE-B)
    auto gm = unlift(low);
    REQUIRE(gm.ok());
    CHECK(has(gm.value().code(),
              "copy__default = torch.ops.aten.copy_.default(bn_running_mean, getitem_3)"));
    CHECK(has(gm.value().code(),
              "copy__default_1 = torch.ops.aten.copy_.default(bn_running_var, getitem_4)"));
    CHECK(has(gm.value().code(),
              "copy__default_2 = torch.ops.aten.copy_.default(bn_num_batches_tracked, add)"));
    CHECK(has(gm.value().code(), "return pytree.tree_unflatten((relu,), self._out_spec)"));
}

TEST_CASE("Core ATen: conv2d -> convolution, linear -> permute + addmm (fact sheet 3.4)",
          "[passes]") {
    ExportedProgram low = lowered(load_asset("conv_bn_relu_eval"), IrLevel::CoreAten);
    // [I] fact sheet 3.4, verbatim
    CHECK(has(
        python_code(*low.graph),
        "convolution.default(x, p_conv_weight, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)"));
    CHECK(low.graph->find("convolution") != nullptr);
    for (const char* name : {"style_functional", "style_modules", "style_sequential"}) {
        ExportedProgram ep = load_asset(name);
        ExportedProgram core = lowered(ep, IrLevel::CoreAten);
        std::string code = python_code(*core.graph);
        INFO(name << "\n" << code);
        // TE-A's form: permute(weight, [1, 0]) then addmm(bias, input, permute)
        const InputSpec* w = nullptr; // fc.weight (modules, Sequential) or fc_weight (functional)
        for (const auto& is : core.signature.inputs)
            if (is.target == "fc.weight" || is.target == "fc_weight") w = &is;
        REQUIRE(w);
        CHECK(has(code, "permute = torch.ops.aten.permute.default(" + w->arg + ", [1, 0])"));
        CHECK(has(code, "addmm = torch.ops.aten.addmm.default("));
        CHECK(has(code, ", mean, permute)"));
        CHECK(has(code,
                  "mean = torch.ops.aten.mean.dim(relu, [2, 3])")); // mean.dim and relu are core
        CHECK(count(*core.graph, "torch.ops.aten.linear.default") == 0);
        // torch_fn and the module stack travel to the replacement nodes ([C] TE-A test_torch_fn)
        Node* addmm = core.graph->find("addmm");
        Node* permute = core.graph->find("permute");
        Node* linear = ep.graph->find("linear");
        REQUIRE(addmm);
        REQUIRE(permute);
        CHECK(addmm->meta.torch_fn == linear->meta.torch_fn);
        CHECK(permute->meta.torch_fn == linear->meta.torch_fn);
        CHECK(addmm->meta.nn_module_stack.size() == linear->meta.nn_module_stack.size());
    }
}

TEST_CASE("op counts per level", "[passes]") {
    struct Want {
        const char* asset;
        IrLevel level;
        int calls;
    };
    // conv2d bn relu -> conv2d, legit, getitem, relu (+ add in train; + getitem_3/4)
    const Want wants[] = {
        {"conv_bn_relu_eval", IrLevel::Training, 3},   {"conv_bn_relu_eval", IrLevel::Inference, 4},
        {"conv_bn_relu_eval", IrLevel::CoreAten, 4},   {"conv_bn_relu_train", IrLevel::Training, 4},
        {"conv_bn_relu_train", IrLevel::Inference, 7}, {"conv_bn_relu_train", IrLevel::CoreAten, 7},
        {"style_modules", IrLevel::Inference, 4},      {"style_modules", IrLevel::CoreAten, 5}};
    for (const Want& w : wants) {
        ExportedProgram ep = load_asset(w.asset);
        ExportedProgram low = w.level == IrLevel::Training ? ep.clone() : lowered(ep, w.level);
        int calls = 0;
        for (const auto& [t, c] : op_counts(*low.graph)) calls += c;
        INFO(w.asset << " " << ir_level_name(w.level));
        CHECK(calls == w.calls);
    }
}

TEST_CASE("every level matches the exported program within 1e-5; train state too", "[passes]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        auto loaded = load_program_file(source_path(rel));
        REQUIRE(loaded.ok());
        const ExportedProgram& ep = loaded.value();
        for (IrLevel level : {IrLevel::Inference, IrLevel::CoreAten}) {
            ExportedProgram low = lowered(ep, level);
            ModuleState s1 = ModuleState::from_program(ep), s2 = ModuleState::from_program(low);
            auto a = run_program(ep, s1, example_inputs(ep));
            auto b = run_program(low, s2, example_inputs(ep));
            REQUIRE(a.ok());
            INFO(rel << " " << ir_level_name(level) << (b.ok() ? "" : b.error().str()));
            REQUIRE(b.ok());
            ParityReport p = compare_runs(b.value(), a.value(), Tolerance{0.0, 1e-5});
            CHECK(p.allclose());
            CHECK(p.max_abs() <= 1e-5);
            for (const auto& [fqn, t] : s1.tensors) {
                INFO(fqn);
                CHECK(compare_tensors(fqn, *s2.tensors.at(fqn), *t, Tolerance{0.0, 1e-5}).allclose);
            }
            // and against PyTorch's eager reference
            CHECK(compare_with_reference(b.value(), ep.reference_outputs, Tolerance{0.0, 1e-5})
                      .allclose());
            // the module form of the lowered program too
            auto gm = unlift(low);
            REQUIRE(gm.ok());
            ModuleState s3 = ModuleState::from_program(low);
            auto c = run_module(gm.value(), s3, example_inputs(ep));
            REQUIRE(c.ok());
            CHECK(compare_runs(c.value(), a.value(), Tolerance{0.0, 1e-5}).allclose());
        }
    }
}

TEST_CASE("negative control: a wrong argument in a decomposed node flips the verdict", "[passes]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval");
    ExportedProgram low = lowered(ep, IrLevel::Inference);
    Node* bn = low.graph->find("_native_batch_norm_legit_no_training");
    REQUIRE(bn);
    std::vector<Argument> args = bn->args();
    args[6] = Argument::from_float(1e-2); // eps 1e-05 -> 1e-02
    bn->set_args(args);
    ModuleState s1 = ModuleState::from_program(ep), s2 = ModuleState::from_program(low);
    auto a = run_program(ep, s1, example_inputs(ep));
    auto b = run_program(low, s2, example_inputs(ep));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    ParityReport p = compare_runs(b.value(), a.value(), Tolerance{0.0, 1e-5});
    CHECK_FALSE(p.allclose());
    CHECK(p.max_abs() > 1e-3);
}

TEST_CASE("a custom table keeps an op by dropping its rule", "[passes]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval");
    ExportedProgram low = ep.clone();
    // [C] fact sheet 3.4: del decomp_table[torch.ops.aten.conv2d.default] keeps conv2d
    auto r = run_decompositions(
        low, DecompTable::for_level(IrLevel::CoreAten).without("torch.ops.aten.conv2d.default"));
    REQUIRE(r.ok());
    CHECK(low.graph->find("conv2d") != nullptr);
    CHECK(low.graph->find("convolution") == nullptr);
    CHECK(count(*low.graph, "torch.ops.aten._native_batch_norm_legit_no_training.default") == 1);
    REQUIRE(r.value().kept_without_rule.size() == 1);
    CHECK(r.value().kept_without_rule[0] == "conv2d (torch.ops.aten.conv2d.default)");
}

TEST_CASE("an op with no rule stays and is reported", "[passes]") {
    auto ep = load_program_file(source_path("tests/corpus/good/unknown_op.pt2"));
    REQUIRE(ep.ok());
    ExportedProgram low = ep.value().clone();
    auto r = run_decompositions(low, DecompTable::for_level(IrLevel::CoreAten));
    REQUIRE(r.ok());
    // torch's retrace names every node after its op, so the file's "relu" becomes "fancy_relu"
    Node* kept = low.graph->find("fancy_relu");
    REQUIRE(kept);
    CHECK(kept->target() == "torch.ops.mylib.fancy_relu.default");
    REQUIRE(r.value().kept_without_rule.size() == 1);
    CHECK(r.value().kept_without_rule[0] == "fancy_relu (torch.ops.mylib.fancy_relu.default)");
}

TEST_CASE("step mode: one node at a time ends where the one-shot pass ends", "[passes]") {
    for (const char* name : {"conv_bn_relu_train", "resnet_style", "style_sequential"}) {
        ExportedProgram ep = load_asset(name);
        DecompTable table = DecompTable::for_level(IrLevel::CoreAten);
        ExportedProgram once = lowered(ep, IrLevel::CoreAten);
        ExportedProgram steps = ep.clone();
        int n = 0;
        for (;;) {
            auto todo = decomposable_nodes(steps, table);
            if (todo.empty()) break;
            auto st = decompose_node(steps, table, todo.front());
            REQUIRE(st.ok());
            REQUIRE(steps.graph->lint().ok());
            ++n;
        }
        INFO(name);
        CHECK(n > 0);
        CHECK(graph_str(*steps.graph) == graph_str(*once.graph));
        CHECK(signature_str(steps.signature) == signature_str(once.signature));
    }
}

TEST_CASE("new nodes carry shapes for print_readable", "[passes]") {
    ExportedProgram low = lowered(load_asset("conv_bn_relu_train"), IrLevel::Inference);
    std::string readable = print_readable(*low.graph, {});
    CHECK(has(readable, "getitem: \"f32[2, 8, 16, 16]\" = _native_batch_norm_legit_functional[0]"));
    CHECK(has(readable, "getitem_3: \"f32[8]\" = _native_batch_norm_legit_functional[3]"));
    CHECK(has(readable, "add: \"i64[]\" = torch.ops.aten.add.Tensor(b_bn_num_batches_tracked, 1)"));
}
