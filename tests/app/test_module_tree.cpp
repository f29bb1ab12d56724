// Module grouping over a real export (resnet_style.pt2, torch 2.14.1): the tree
// from nn_module_stack, weights placed with their users, and scenes with
// collapsed modules as single boxes whose edges are the module's inputs/outputs.
#include <catch2/catch.hpp>

#include <set>

#include "module_tree.h"
#include "scene_test_support.h"

using namespace pt2lab;
using namespace pt2lab::app;
using namespace pt2lab::app::test;

namespace {

int index_of(const Graph& g, const std::string& name) {
    std::vector<Node*> nodes = g.nodes();
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i]->name() == name) return int(i);
    FAIL("no node " << name);
    return -1;
}

} // namespace

TEST_CASE("module tree of resnet_style from nn_module_stack", "[modules]") {
    ExportedProgram ep = load_asset("resnet_style.pt2");
    ModuleTree t = build_module_tree(*ep.graph, &ep.signature);
    REQUIRE(t.node_group.size() == ep.graph->size());
    REQUIRE(t.find("layer1") > 0);
    REQUIRE(t.find("layer1.0") > 0);
    REQUIRE(t.find("layer2.0.downsample") > 0);
    CHECK(t.find("nothing") == -1);
    const ModuleGroup& l1 = t.groups[size_t(t.find("layer1"))];
    const ModuleGroup& b1 = t.groups[size_t(t.find("layer1.0"))];
    CHECK(b1.parent == t.find("layer1"));
    CHECK(l1.depth == 1);
    CHECK(b1.depth == 2);
    CHECK(b1.type == "BasicBlock");
    CHECK(t.groups[size_t(t.find("layer1.0.conv1"))].type == "Conv2d");
    // The block's calls: conv, bn, relu, conv, bn, add, relu.
    CHECK(b1.calls == 7);
    CHECK(l1.collapsible);
    CHECK_FALSE(t.groups[size_t(t.find("layer1.0.conv1"))].collapsible); // one call
    // The conv's weight has no module stack; it joins its only user's module.
    int w = index_of(*ep.graph, "p_layer1_0_conv1_weight");
    CHECK(t.absorbed[size_t(w)]);
    CHECK(t.node_group[size_t(w)] == t.find("layer1.0.conv1"));
    // The input stays at the top; so does the output.
    CHECK(t.node_group[size_t(index_of(*ep.graph, "x"))] == 0);
    CHECK_FALSE(t.absorbed[size_t(index_of(*ep.graph, "x"))]);
    // Hidden by the outermost collapsed module.
    int add = index_of(*ep.graph, "add");
    CHECK(t.shown_as(size_t(add), {}) == t.find("layer1"));
    CHECK(t.shown_as(size_t(add), {"layer1"}) == t.find("layer1.0"));
    CHECK(t.shown_as(size_t(add), {"layer1", "layer1.0"}) == -1);
    CHECK(t.shown_as(size_t(add), t.all_paths()) == -1);
    std::vector<int> chain = t.chain(t.find("layer1.0.conv1"));
    REQUIRE(chain.size() == 3);
    CHECK(t.groups[size_t(chain[0])].path == "layer1");
    CHECK(t.groups[size_t(chain[2])].path == "layer1.0.conv1");
}

TEST_CASE("a collapsed module is one box with the module's inputs and outputs as edges",
          "[modules][scene]") {
    ExportedProgram ep = load_asset("resnet_style.pt2");
    ModuleTree t = build_module_tree(*ep.graph, &ep.signature);
    ExpandedSet none;
    SceneContext ctx{&ep.signature, nullptr, &t, &none};
    Scene sc = build_scene(*ep.graph, ctx, fixed_metrics());
    // Every node is shown by exactly one box: its own or its module's.
    std::set<std::string> boxes;
    for (const SceneNode& n : sc.nodes)
        if (n.group >= 0) boxes.insert(n.name);
    CHECK(boxes == std::set<std::string>{"layer1", "layer2"}); // conv1, bn1, fc: one call each
    for (const Node* n : ep.graph->nodes()) CHECK(sc.find_shown(n->id()) >= 0);
    int layer1 = -1, layer2 = -1;
    for (size_t i = 0; i < sc.nodes.size(); ++i) {
        if (sc.nodes[i].name == "layer1" && sc.nodes[i].group >= 0) layer1 = int(i);
        if (sc.nodes[i].name == "layer2" && sc.nodes[i].group >= 0) layer2 = int(i);
    }
    REQUIRE(layer1 >= 0);
    REQUIRE(layer2 >= 0);
    CHECK(sc.nodes[size_t(layer1)].members == t.groups[size_t(t.find("layer1"))].nodes);
    CHECK(sc.find_shown(ep.graph->find("add")->id()) == layer1);
    // layer1 -> layer2 is one edge (layer1's output feeds layer2's conv and its skip add).
    int between = 0, inner = 0;
    for (auto [a, b] : sc.edges) {
        between += a == layer1 && b == layer2;
        inner += a == b;
    }
    CHECK(between == 1);
    CHECK(inner == 0);
    CHECK(sc.inputs[size_t(layer1)].size() == 1); // from max_pool2d
    CHECK(sc.frames.empty());
    CHECK(sc.nodes.size() < ep.graph->size() / 2);

    // Expanding layer1 shows its block collapsed inside a frame.
    ExpandedSet one{"layer1"};
    SceneContext ctx1{&ep.signature, nullptr, &t, &one};
    Scene sc1 = build_scene(*ep.graph, ctx1, fixed_metrics());
    REQUIRE(sc1.frames.size() == 1);
    CHECK(sc1.frames[0].path == "layer1");
    int block = sc1.find_shown(ep.graph->find("add")->id());
    REQUIRE(block >= 0);
    CHECK(sc1.nodes[size_t(block)].name == "layer1.0");
    LayoutPoint c = sc1.layout.center[size_t(block)];
    CHECK(c.x >= sc1.frames[0].lo.x);
    CHECK(c.x <= sc1.frames[0].hi.x);
    CHECK(c.y >= sc1.frames[0].lo.y);
    CHECK(c.y <= sc1.frames[0].hi.y);

    // Everything expanded: the plain scene, with a frame per collapsible module.
    ExpandedSet all = t.all_paths();
    SceneContext ctx2{&ep.signature, nullptr, &t, &all};
    Scene full = build_scene(*ep.graph, ctx2, fixed_metrics());
    Scene plain = build_scene(*ep.graph, {&ep.signature, nullptr}, fixed_metrics());
    CHECK(full.nodes.size() == plain.nodes.size());
    CHECK(full.edges == plain.edges);
    CHECK(full.frames.size() >= 4);
    CHECK(full.frames.front().depth == 1); // outer frames first
}

TEST_CASE("observers and quantize / dequantize nodes join the module they read from", "[modules]") {
    // What prepare_pt2e and convert_pt2e insert has no nn_module_stack (as in torch).
    Graph g;
    auto in_module = [](Node* n, std::vector<std::string> paths) {
        for (const std::string& p : paths)
            n->meta.nn_module_stack.push_back({"L__self__" + p, p, "torch.nn.Module"});
        return n;
    };
    auto ref = [](Node* n) { return Argument::from_node(n); };
    Node* x = g.placeholder("x");
    Node* w = g.get_attr("block_conv_weight");
    Node* wq =
        g.call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", {ref(w)});
    Node* wdq =
        g.call_function("torch.ops.quantized_decomposed.dequantize_per_tensor.default", {ref(wq)});
    Node* conv = in_module(g.call_function("torch.ops.aten.conv2d.default", {ref(x), ref(wdq)}),
                           {"block", "block.conv"});
    Node* obs = g.call_module("activation_post_process_0", {ref(conv)});
    Node* relu = in_module(g.call_function("torch.ops.aten.relu.default", {ref(obs)}),
                           {"block", "block.relu"});
    Node* obs2 = g.call_module("activation_post_process_1", {ref(relu)});
    Node* other = g.call_function("torch.ops.aten.neg.default", {ref(obs2)}); // no module: stays
    g.output(Argument::tuple({ref(other)}));
    ModuleTree t = build_module_tree(g, nullptr);
    auto group = [&](const Node* n) { return t.node_group[size_t(index_of(g, n->name()))]; };
    auto absorbed = [&](const Node* n) { return t.absorbed[size_t(index_of(g, n->name()))]; };
    // An output observer goes with the node it observes.
    CHECK(group(obs) == t.find("block.conv"));
    CHECK(group(obs2) == t.find("block.relu"));
    // A weight's quantize / dequantize are placed by their users, like the weight.
    CHECK(group(wdq) == t.find("block.conv"));
    CHECK(group(wq) == t.find("block.conv"));
    CHECK(group(w) == t.find("block.conv"));
    // None of them is a call of its module: the block has two calls, each conv and relu one.
    for (const Node* n : {obs, obs2, wq, wdq, w}) CHECK(absorbed(n));
    CHECK(t.groups[size_t(t.find("block"))].calls == 2);
    CHECK(t.groups[size_t(t.find("block.conv"))].calls == 1);
    CHECK(group(other) == 0);
    CHECK_FALSE(absorbed(other));
}
