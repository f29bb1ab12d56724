// The graph view's scene over real lesson graphs: one box per node with the
// labels the page shows, one edge per input, and a transformation's diff as
// marks plus ghosts of the removed nodes.
#include <catch2/catch.hpp>

#include "passes/decompose.h"
#include "scene_test_support.h"
#include "workspace/workspace.h"

using namespace pt2lab;
using namespace pt2lab::app;
using namespace pt2lab::app::test;

TEST_CASE("scene of the eval ConvBnReLU program", "[scene]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval.pt2");
    Scene sc = build_scene(*ep.graph, {&ep.signature, nullptr}, fixed_metrics());
    REQUIRE(sc.nodes.size() == ep.graph->size());
    size_t inputs = 0;
    for (const Node* n : ep.graph->nodes()) {
        int i = sc.find_id(n->id());
        REQUIRE(i >= 0);
        CHECK(sc.nodes[size_t(i)].name == n->name());
        inputs += n->input_nodes().size();
    }
    CHECK(sc.edges.size() == inputs);
    auto node = [&](const std::string& name) -> const SceneNode& {
        int i = sc.find_name(name);
        REQUIRE(i >= 0);
        return sc.nodes[size_t(i)];
    };
    CHECK(node("p_conv_weight").kind == "parameter");
    CHECK(node("b_bn_running_mean").kind == "buffer");
    CHECK(node("x").kind == "input");
    CHECK(node("conv2d").kind == "aten.conv2d");
    CHECK(node("conv2d").detail == "f32[2, 8, 16, 16]");
    CHECK(node("output").kind == "output");
    // Boxes fit their longest label.
    const SceneNode& bn = node("b_bn_num_batches_tracked");
    CHECK(bn.size.x >= 6.f * float(bn.name.size()));
    // conv2d's inputs: x and the weight; its user: batch_norm.
    int conv = sc.find_name("conv2d");
    CHECK(sc.inputs[size_t(conv)].size() == 2);
    REQUIRE(sc.users[size_t(conv)].size() == 1);
    CHECK(sc.nodes[size_t(sc.users[size_t(conv)][0])].name == "batch_norm");
    CHECK(sc.layout.layer[size_t(sc.find_name("relu"))] > sc.layout.layer[size_t(conv)]);
}

TEST_CASE("a decomposition's diff: added marks and a ghost of batch_norm", "[scene]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval.pt2");
    Scene before = build_scene(*ep.graph, {&ep.signature, nullptr}, fixed_metrics());
    ExportedProgram low = ep.clone();
    auto rep = run_decompositions(low, DecompTable::for_level(IrLevel::Inference));
    REQUIRE(rep.ok());
    GraphDiff diff = diff_graphs(*ep.graph, *low.graph);
    REQUIRE(!diff.removed.empty());
    REQUIRE(!diff.added.empty());
    Scene after =
        build_scene(*low.graph, {&low.signature, nullptr}, fixed_metrics(), &diff, &before);
    CHECK(after.nodes.size() == low.graph->size() + diff.removed.size());
    for (const std::string& name : diff.removed) {
        int g = after.find_name(name);
        REQUIRE(g >= 0);
        CHECK(after.nodes[size_t(g)].mark == DiffMark::Removed);
        CHECK(after.nodes[size_t(g)].id == 0);
        CHECK(after.find_id(0) == -1);
    }
    for (const std::string& name : diff.added)
        CHECK(after.nodes[size_t(after.find_name(name))].mark == DiffMark::Added);
    // The ghost batch_norm is still wired to conv2d (its old input) and relu (its old user).
    int ghost = after.find_name("batch_norm");
    REQUIRE(ghost >= 0);
    bool from_conv = false, to_relu = false;
    for (int i : after.inputs[size_t(ghost)]) from_conv |= after.nodes[size_t(i)].name == "conv2d";
    for (int u : after.users[size_t(ghost)]) to_relu |= after.nodes[size_t(u)].name == "relu";
    CHECK(from_conv);
    CHECK(to_relu);
    // And the new op is labelled by its schema.
    bool legit = false;
    for (const SceneNode& n : after.nodes)
        legit |= n.kind == "aten._native_batch_norm_legit_no_training";
    CHECK(legit);
}

TEST_CASE("search matches name, target and kind, ignoring case", "[scene]") {
    SceneNode n;
    n.name = "conv2d";
    n.target = "torch.ops.aten.conv2d.default";
    n.kind = "aten.conv2d";
    CHECK(scene_node_matches(n, "CONV"));
    CHECK(scene_node_matches(n, "ops.aten"));
    CHECK_FALSE(scene_node_matches(n, "relu"));
    CHECK_FALSE(scene_node_matches(n, ""));
}

TEST_CASE("call_module boxes name their submodule's type", "[scene]") {
    auto ws = Workspace::open_file(std::string(PT2LAB_SOURCE_DIR) + "/assets/graphs/conv_relu.pt2");
    REQUIRE(ws.ok());
    auto out = ws.value()->apply(Action::of(Action::Kind::Prepare));
    REQUIRE(out.ok());
    const GraphModule& gm = ws.value()->module();
    Scene sc = build_scene(*gm.graph, {nullptr, &gm.submodules}, fixed_metrics());
    int obs = sc.find_name("activation_post_process_0");
    REQUIRE(obs >= 0);
    // XNNPACKQuantizer observes activations with a HistogramObserver (tests/golden/pt2e).
    CHECK(sc.nodes[size_t(obs)].kind == gm.submodules.at("activation_post_process_0").type);
    CHECK(sc.nodes[size_t(obs)].kind == "HistogramObserver");
    int guards = sc.find_name("_guards_fn");
    REQUIRE(guards >= 0);
    CHECK(sc.nodes[size_t(guards)].kind == gm.submodules.at("_guards_fn").type);
    // Without the module, a call_module box shows its target.
    Scene bare = build_scene(*gm.graph, {}, fixed_metrics());
    CHECK(bare.nodes[size_t(bare.find_name("activation_post_process_0"))].kind ==
          "activation_post_process_0");
}

TEST_CASE("a call_module box shows its target where the name is not it", "[scene]") {
    // M00-1's answer: symbolic_trace's Sequential conv is the node body_0, a
    // call_module whose target is the submodule's path body.0.
    auto ws =
        Workspace::open_file(std::string(PT2LAB_SOURCE_DIR) + "/assets/fx/style_sequential.json");
    REQUIRE(ws.ok());
    const GraphModule& gm = ws.value()->module();
    Scene sc = build_scene(*gm.graph, {nullptr, &gm.submodules}, fixed_metrics());
    int conv = sc.find_name("body_0");
    REQUIRE(conv >= 0);
    const SceneNode& n = sc.nodes[size_t(conv)];
    CHECK(n.target == "body.0");
    REQUIRE(gm.submodules.at("body.0").type == "torch.nn.modules.conv.Conv2d");
    CHECK(n.kind == "body.0 · Conv2d"); // the class, without its Python module
    // The box is wide enough for the longer line.
    CHECK(n.size.x >= fixed_metrics().text_width(n.kind, false) + 2 * fixed_metrics().pad_x);
    // Every call_module box: its type, after its target where the name differs.
    int modules = 0;
    for (const Node* g : gm.graph->nodes()) {
        if (g->op() != Op::CallModule) continue;
        ++modules;
        const SceneNode& b = sc.nodes[size_t(sc.find_id(g->id()))];
        const std::string& path = gm.submodules.at(g->target()).type;
        const std::string type = path.substr(path.find_last_of('.') + 1);
        CHECK(b.kind == (g->target() == g->name() ? type : g->target() + " · " + type));
    }
    CHECK(modules >= 2);
    // A name that is its target (an observer, _guards_fn) keeps the type alone: the
    // other test above. Search finds the box by its target's path.
    CHECK(scene_node_matches(n, "body.0"));
}

TEST_CASE("weights drawn inside the node that reads them", "[scene]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval.pt2");
    SceneContext ctx{&ep.signature, nullptr};
    ctx.weights_inside = true;
    Scene sc = build_scene(*ep.graph, ctx, fixed_metrics());
    Scene plain = build_scene(*ep.graph, {&ep.signature, nullptr}, fixed_metrics());
    // Every parameter and buffer read by one node goes inside it.
    int weights = 0;
    for (const InputSpec& s : ep.signature.inputs)
        weights += (s.kind == InputKind::Parameter || s.kind == InputKind::Buffer) &&
                   ep.graph->find(s.arg)->users().size() == 1;
    REQUIRE(weights > 0);
    CHECK(sc.weights_inside == weights);
    // num_batches_tracked is read by nothing in eval mode: not drawn at all.
    REQUIRE(sc.unused_weights.size() == 1);
    CHECK(sc.unused_weights[0] == ep.graph->find("b_bn_num_batches_tracked")->id());
    CHECK(sc.find_shown(sc.unused_weights[0]) < 0);
    CHECK(sc.nodes.size() == ep.graph->size() - size_t(weights) - 1);
    CHECK(sc.find_name("p_conv_weight") < 0);
    CHECK(sc.find_name("x") >= 0); // the user input keeps its box
    int conv = sc.find_name("conv2d"), bn = sc.find_name("batch_norm");
    REQUIRE(conv >= 0);
    REQUIRE(bn >= 0);
    const SceneNode& c = sc.nodes[size_t(conv)];
    REQUIRE(c.weights.size() == 1);
    CHECK(c.weights[0] == "weight: f32[8, 3, 3, 3]");
    CHECK(c.weight_ids[0] == ep.graph->find("p_conv_weight")->id());
    CHECK(sc.find_shown(c.weight_ids[0]) == conv); // selecting the weight shows its reader
    // batch_norm reads weight, bias, running_mean and running_var.
    CHECK(sc.nodes[size_t(bn)].weights.size() == 4);
    CHECK(sc.nodes[size_t(bn)].weights[2].rfind("running_mean: f32[8]", 0) == 0);
    // Taller boxes, and no edge from a weight: conv2d reads x only.
    CHECK(c.size.y > plain.nodes[size_t(plain.find_name("conv2d"))].size.y);
    CHECK(sc.inputs[size_t(conv)].size() == 1);
    for (const auto& e : sc.edges) CHECK(e.first != e.second);
    // A search for the weight finds the box it is drawn in.
    CHECK(scene_node_matches(c, "weight"));
}

TEST_CASE("a weight read twice, or named by the diff, keeps its box", "[scene]") {
    auto ws = Workspace::open_file(std::string(PT2LAB_SOURCE_DIR) + "/assets/graphs/conv_relu.pt2");
    REQUIRE(ws.ok());
    const GraphModule& gm = ws.value()->module();
    SceneContext ctx{nullptr, &gm.submodules};
    ctx.weights_inside = true;
    Scene sc = build_scene(*gm.graph, ctx, fixed_metrics());
    // ep.module(): the get_attr nodes go inside their conv2d.
    int attrs = 0;
    for (const Node* n : gm.graph->nodes())
        attrs += n->op() == Op::GetAttr && n->users().size() == 1;
    REQUIRE(attrs > 0);
    CHECK(sc.weights_inside == attrs);
    for (const Node* n : gm.graph->nodes())
        if (n->op() == Op::GetAttr && n->users().size() == 1) {
            CHECK(sc.find_id(n->id()) < 0);
            CHECK(sc.find_shown(n->id()) == sc.find_id(n->users().front()->id()));
        }
    GraphDiff diff;
    for (const Node* n : gm.graph->nodes())
        if (n->op() == Op::GetAttr) diff.changed.push_back(n->name());
    Scene marked = build_scene(*gm.graph, ctx, fixed_metrics(), &diff);
    CHECK(marked.weights_inside == 0);
}
