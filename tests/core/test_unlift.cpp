// ep.module() (unlift) against the fact sheet's lines for torch >= 2.9.
#include <catch2/catch.hpp>

#include "graph/printer.h"
#include "io/program_loader.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

GraphModule module_of(const ExportedProgram& ep, bool guards = true) {
    UnliftOptions opt;
    opt.guards_fn = guards;
    auto gm = unlift(ep, opt);
    INFO((gm.ok() ? std::string() : gm.error().str()));
    REQUIRE(gm.ok());
    return gm.take();
}
} // namespace

TEST_CASE("conv_bn_relu_eval: ep.module().code as the fact sheet predicts", "[unlift]") {
    // [I] fact sheet 1.4, "Predicted ep.module().code for eval ConvBnReLU on torch >= 2.9",
    // verbatim.
    const std::string predicted =
        "def forward(self, x):\n"
        "    x, = fx_pytree.tree_flatten_spec(([x], {}), self._in_spec)\n"
        "    conv_weight = self.conv.weight\n"
        "    bn_weight = self.bn.weight\n"
        "    bn_bias = self.bn.bias\n"
        "    bn_running_mean = self.bn.running_mean\n"
        "    bn_running_var = self.bn.running_var\n"
        "    bn_num_batches_tracked = self.bn.num_batches_tracked;  bn_num_batches_tracked = None\n"
        "    _guards_fn = self._guards_fn(x);  _guards_fn = None\n"
        "    conv2d = torch.ops.aten.conv2d.default(x, conv_weight, None, [1, 1], [1, 1]);  x = "
        "conv_weight = None\n"
        "    batch_norm = torch.ops.aten.batch_norm.default(conv2d, bn_weight, bn_bias, "
        "bn_running_mean, "
        "bn_running_var, False, 0.1, 1e-05, False);  conv2d = bn_weight = bn_bias = "
        "bn_running_mean = "
        "bn_running_var = None\n"
        "    relu = torch.ops.aten.relu.default(batch_norm);  batch_norm = None\n"
        "    return pytree.tree_unflatten((relu,), self._out_spec)";
    GraphModule gm = module_of(load_asset("conv_bn_relu_eval"));
    std::string code = gm.code();
    // gm.code is "\n\n\n" + the function + "\n    "; the fact sheet shows the stripped text.
    REQUIRE(code.size() > 8);
    CHECK(code.substr(0, 3) == "\n\n\n");
    CHECK(code.substr(code.size() - 5) == "\n    ");
    std::string stripped = code.substr(3, code.size() - 8);
    INFO(first_difference(predicted, stripped));
    CHECK(stripped == predicted);
}

TEST_CASE("conv_bn_relu_eval: ep.module().graph order and users", "[unlift]") {
    GraphModule gm = module_of(load_asset("conv_bn_relu_eval"));
    std::string g = graph_str(*gm.graph);
    // [I] fact sheet 1.4: x has two users (_guards_fn and conv2d); the guards call line
    CHECK(g.find("    %x : [num_users=2] = placeholder[target=x]\n") != std::string::npos);
    CHECK(g.find("    %_guards_fn : [num_users=0] = call_module[target=_guards_fn](args = (%x,), "
                 "kwargs = {})\n") != std::string::npos);
    // get_attrs replace the placeholders in place, so they come first
    auto nodes = gm.graph->nodes();
    REQUIRE(nodes.size() == 12);
    for (int k = 0; k < 6; ++k) CHECK(nodes[static_cast<size_t>(k)]->op() == Op::GetAttr);
    CHECK(nodes[0]->target() == "conv.weight");
    CHECK(nodes[6]->name() == "x");
    CHECK(nodes[7]->name() == "_guards_fn");
    CHECK(gm.attrs.size() == 6);
    CHECK(gm.attrs.at("bn.running_mean")->sizes == std::vector<int64_t>{8});
    CHECK(gm.guards_fn_code.find(
              "torch._assert(args[0].size()[0] == 2, \"Guard failed: x.size()[0] == 2\")") !=
          std::string::npos);
    CHECK(gm.graph->lint().ok());
}

TEST_CASE("check_guards=False leaves _guards_fn out", "[unlift]") {
    GraphModule gm = module_of(load_asset("conv_relu"), false);
    CHECK(gm.graph->find("_guards_fn") == nullptr);
    CHECK(gm.code().find("_guards_fn") == std::string::npos);
    CHECK(gm.submodules.empty());
    CHECK_FALSE(gm.stale());
}

TEST_CASE("train export: add_ acts on the get_attr, no copy_ nodes", "[unlift]") {
    GraphModule gm = module_of(load_asset("conv_bn_relu_train"));
    std::string code = gm.code();
    CHECK(code.find("    add_ = torch.ops.aten.add_.Tensor(bn_num_batches_tracked, 1);  "
                    "bn_num_batches_tracked = add_ = None\n") != std::string::npos);
    CHECK(code.find("copy_") == std::string::npos);
}

TEST_CASE("buffer mutations become copy_ nodes; only user outputs are returned", "[unlift]") {
    // A functional train-mode graph as run_decompositions({}) writes it (fact sheet 3.2):
    // outputs (getitem_3, getitem_4, add, relu) with three BUFFER_MUTATION specs.
    ExportedProgram ep;
    ep.graph = std::make_unique<Graph>();
    Graph& g = *ep.graph;
    auto N = [](Node* n) { return Argument::from_node(n); };
    Node* w = g.placeholder("p_bn_weight");
    Node* b = g.placeholder("p_bn_bias");
    Node* rm = g.placeholder("b_bn_running_mean");
    Node* rv = g.placeholder("b_bn_running_var");
    Node* nbt = g.placeholder("b_bn_num_batches_tracked");
    Node* x = g.placeholder("x");
    Node* add =
        g.call_function("torch.ops.aten.add.Tensor", {N(nbt), Argument::from_int(1)}, {}, "add");
    Node* bn = g.call_function("torch.ops.aten._native_batch_norm_legit_functional.default",
                               {N(x), N(w), N(b), N(rm), N(rv), Argument::from_bool(true),
                                Argument::from_float(0.1), Argument::from_float(1e-05)},
                               {}, "_native_batch_norm_legit_functional");
    Node* g0 = g.call_function("operator.getitem", {N(bn), Argument::from_int(0)}, {}, "getitem");
    Node* g3 = g.call_function("operator.getitem", {N(bn), Argument::from_int(3)}, {}, "getitem_3");
    Node* g4 = g.call_function("operator.getitem", {N(bn), Argument::from_int(4)}, {}, "getitem_4");
    Node* relu = g.call_function("torch.ops.aten.relu.default", {N(g0)}, {}, "relu");
    g.output(Argument::tuple({N(g3), N(g4), N(add), N(relu)}));
    ep.signature.inputs = {
        {InputKind::Parameter, "p_bn_weight", "bn.weight", {}, false},
        {InputKind::Parameter, "p_bn_bias", "bn.bias", {}, false},
        {InputKind::Buffer, "b_bn_running_mean", "bn.running_mean", true, false},
        {InputKind::Buffer, "b_bn_running_var", "bn.running_var", true, false},
        {InputKind::Buffer, "b_bn_num_batches_tracked", "bn.num_batches_tracked", true, false},
        {InputKind::UserInput, "x", "", {}, false}};
    ep.signature.outputs = {{OutputKind::BufferMutation, "getitem_3", "bn.running_mean"},
                            {OutputKind::BufferMutation, "getitem_4", "bn.running_var"},
                            {OutputKind::BufferMutation, "add", "bn.num_batches_tracked"},
                            {OutputKind::UserOutput, "relu", ""}};
    REQUIRE(g.lint().ok());
    for (const char* fqn :
         {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"})
        ep.state_dict[fqn] = std::make_shared<TensorData>();
    GraphModule gm = module_of(ep, false);
    std::string code = gm.code();
    // [C*] fact sheet 3.2 (TE-B): copy_ node names and arguments
    CHECK(code.find("copy__default = torch.ops.aten.copy_.default(bn_running_mean, getitem_3)") !=
          std::string::npos);
    CHECK(code.find("copy__default_1 = torch.ops.aten.copy_.default(bn_running_var, getitem_4)") !=
          std::string::npos);
    CHECK(
        code.find("copy__default_2 = torch.ops.aten.copy_.default(bn_num_batches_tracked, add)") !=
        std::string::npos);
    CHECK(code.find("return pytree.tree_unflatten((relu,), self._out_spec)") != std::string::npos);
    // the copies sit right before the output, and the output node keeps its name
    auto nodes = gm.graph->nodes();
    CHECK(nodes.back()->name() == "output");
    CHECK(nodes[nodes.size() - 2]->name() == "copy__default_2");
    CHECK(gm.graph->lint().ok());
}

TEST_CASE("every lesson asset unlifts to a lint-clean module", "[unlift]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        auto ep = load_program_file(source_path(rel));
        REQUIRE(ep.ok());
        auto gm = unlift(ep.value());
        INFO(rel << (gm.ok() ? "" : gm.error().str()));
        REQUIRE(gm.ok());
        CHECK(gm.value().graph->lint().ok());
        int placeholders = 0;
        for (Node* n : gm.value().graph->nodes()) placeholders += n->op() == Op::Placeholder;
        CHECK(placeholders == 1);
    }
}

TEST_CASE("the resnet module reaches nested attributes through getattr", "[unlift]") {
    GraphModule gm = module_of(load_asset("resnet_style"));
    // [C] fact sheet 4 (_format_target): non-identifier atoms use getattr
    CHECK(gm.code().find("    layer2_0_downsample_0_weight = getattr(getattr(self.layer2, "
                         "\"0\").downsample, \"0\").weight\n") != std::string::npos);
}
