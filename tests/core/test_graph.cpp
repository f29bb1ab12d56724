// Graph invariants: users mirror args, erase refuses used nodes, fx naming,
// insert points (including fx's reverse-order quirk), lint, clone.
#include <algorithm>
#include <chrono>

#include <catch2/catch.hpp>

#include "graph/graph.h"
#include "graph/printer.h"

using namespace pt2lab;

namespace {
Argument N(Node* n) {
    return Argument::from_node(n);
}

// x -> conv (call_module) -> relu (call_module) -> output
struct ConvRelu {
    Graph g;
    Node* x;
    Node* conv;
    Node* relu;
    Node* out;
    ConvRelu() {
        x = g.placeholder("x");
        conv = g.call_module("conv", {N(x)});
        relu = g.call_module("relu", {N(conv)});
        out = g.output(N(relu));
    }
};

std::vector<std::string> names(const std::vector<Node*>& v) {
    std::vector<std::string> out;
    for (Node* n : v) out.push_back(n->name());
    return out;
}
} // namespace

TEST_CASE("users mirror args on every change", "[graph]") {
    ConvRelu m;
    CHECK(names(m.x->users()) == std::vector<std::string>{"conv"});
    CHECK(names(m.relu->users()) == std::vector<std::string>{"output"});
    m.relu->set_args({N(m.x)});
    CHECK(m.conv->users().empty());
    CHECK(names(m.x->users()) == std::vector<std::string>{"conv", "relu"});
    m.relu->replace_input_with(m.x, m.conv);
    CHECK(names(m.x->users()) == std::vector<std::string>{"conv"});
    CHECK(names(m.conv->users()) == std::vector<std::string>{"relu"});
}

TEST_CASE("a node used twice is one user; kwargs count too", "[graph]") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* add = g.call_function("operator.add", {N(x), N(x)});
    Node* y = g.call_function("torch.relu", {}, {{"input", N(add)}});
    CHECK(x->users().size() == 1);
    CHECK(names(add->users()) == std::vector<std::string>{"relu"});
    CHECK(y->input_nodes() == std::vector<Node*>{add});
}

TEST_CASE("erase refuses a node with users, with PyTorch's message", "[graph]") {
    ConvRelu m;
    Status s = m.g.erase_node(m.conv);
    REQUIRE_FALSE(s.ok());
    // [C] fact sheet section 10 (printed by torch 1.13; tests/golden/fx_edits shows 2.14.1 prints
    // the same): erase of a used node
    CHECK(s.error().message ==
          "Tried to erase Node conv but it still had 1 users in the graph: {relu: None}!");
    // once unused it goes, and its inputs forget it
    m.relu->set_args({N(m.x)});
    REQUIRE(m.g.erase_node(m.conv).ok());
    CHECK(m.g.find("conv") == nullptr);
    CHECK(names(m.x->users()) == std::vector<std::string>{"relu"});
    CHECK(m.g.size() == 3);
}

TEST_CASE("names follow torch.fx: dedup, builtins, module paths, OpOverloads", "[graph]") {
    Graph g;
    Node* x = g.placeholder("input");
    CHECK(x->name() == "input_1");
    CHECK(x->target() == "input");
    CHECK(g.call_module("body.0", {N(x)})->name() == "body_0");
    CHECK(g.call_function("torch.abs", {N(x)})->name() == "abs_1");
    CHECK(g.call_function("torch.ops.aten.copy_.default", {N(x), N(x)})->name() == "copy__default");
    CHECK(g.call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", {N(x)})
              ->name() == "quantize_per_tensor_default");
    CHECK(g.call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default", {N(x)})
              ->name() == "quantize_per_tensor_default_1");
    CHECK(g.get_attr("conv.weight")->name() == "conv_weight");
    CHECK(g.call_method("__add__", {N(x), N(x)})->name() == "add");
}

TEST_CASE("inserting_after pins its anchor: nodes come out in reverse creation order", "[graph]") {
    // [C] fact sheet sections 6.1 and 10: neg then abs created in one
    // inserting_after(conv) scope give the order x, conv, abs_1, neg, relu.
    ConvRelu m;
    Node* neg;
    Node* abs;
    {
        auto at = m.g.inserting_after(m.conv);
        neg = m.g.call_function("torch.neg", {N(m.conv)});
        abs = m.g.call_function("torch.abs", {N(neg)});
    }
    CHECK(names(m.g.nodes()) ==
          std::vector<std::string>{"x", "conv", "abs_1", "neg", "relu", "output"});
    Status s = m.g.lint();
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message == "Argument 'neg' of Node 'abs_1' was used before it has been "
                               "defined! Please check that Nodes "
                               "in the graph are topologically ordered");
    // after the scope, new nodes go to the end again
    Node* tail = m.g.call_function("torch.neg", {N(m.relu)});
    CHECK(m.g.nodes().back() == tail);
    (void)abs;
}

TEST_CASE("inserting_before keeps creation order", "[graph]") {
    ConvRelu m;
    {
        auto at = m.g.inserting_before(m.relu);
        Node* a = m.g.call_function("torch.neg", {N(m.conv)});
        m.g.call_function("torch.abs", {N(a)});
    }
    CHECK(names(m.g.nodes()) ==
          std::vector<std::string>{"x", "conv", "neg", "abs_1", "relu", "output"});
    CHECK(m.g.lint().ok());
}

TEST_CASE("replace_all_uses_with without a callback makes the self-loop lint reports", "[graph]") {
    // [C] fact sheet section 10: torch.relu inserted after module node relu is
    // named relu_1; relu.replace_all_uses_with(new) rewires new to itself.
    ConvRelu m;
    Node* added;
    {
        auto at = m.g.inserting_after(m.relu);
        added = m.g.call_function("torch.relu", {N(m.relu)});
    }
    CHECK(added->name() == "relu_1");
    auto changed = m.relu->replace_all_uses_with(added);
    CHECK(changed.size() == 2);
    REQUIRE(added->args().size() == 1);
    CHECK(added->args()[0].node == added);
    Status s = m.g.lint();
    REQUIRE_FALSE(s.ok());
    CHECK(
        s.error().message ==
        "Argument 'relu_1' of Node 'relu_1' was used before it has been defined! Please check that "
        "Nodes in the graph are topologically ordered");

    // In pieces (the page's passes lint a big graph over frames): a node a step, the
    // same answer, found at the same node; the nodes after it are not checked.
    GraphLinting l(m.g);
    size_t steps = 1;
    while (!l.step(1)) ++steps;
    REQUIRE_FALSE(l.status().ok());
    CHECK(l.status().error().message == s.error().message);
    CHECK(l.done() == 3); // x, conv, relu: the nodes before relu_1
    CHECK(steps == l.done() + 1);
    // A whole graph: over after its last node, with lint()'s verdict.
    ConvRelu good;
    GraphLinting g(good.g);
    CHECK_FALSE(g.step(good.g.size() - 1));
    CHECK(g.step(1));
    CHECK(g.status().ok());
    CHECK(g.done() == good.g.size());
}

TEST_CASE("replace_all_uses_with with a callback rewires only the others", "[graph]") {
    ConvRelu m;
    Node* obs;
    {
        auto at = m.g.inserting_after(m.relu);
        obs = m.g.call_module("activation_post_process_0", {N(m.relu)});
    }
    auto changed = m.relu->replace_all_uses_with(obs, [&](Node* u) { return u != obs; });
    CHECK(names(changed) == std::vector<std::string>{"output"});
    CHECK(m.g.lint().ok());
    CHECK(names(m.relu->users()) == std::vector<std::string>{"activation_post_process_0"});
    CHECK(m.out->args()[0].node == obs);
}

TEST_CASE("names stay unique: rename makes a taken name unique, force_name refuses it", "[graph]") {
    // torch.fx's lint reports "Node redefined name" because Python code can assign
    // node.name directly; pt2lab's Graph never lets two nodes share a name.
    ConvRelu m;
    m.g.rename(m.relu, "relu_x");
    CHECK(m.relu->name() == "relu_x");
    CHECK(m.g.find("relu_x") == m.relu);
    CHECK(m.g.find("relu") == nullptr);
    m.g.rename(m.relu, "conv"); // taken: fx's namespace picks the next free name
    CHECK(m.relu->name() == "conv_1");
    CHECK_FALSE(m.g.force_name(m.relu, "conv"));
    CHECK(m.relu->name() == "conv_1");
    CHECK(m.g.find("conv") == m.conv);
    CHECK(m.g.lint().ok());
}

TEST_CASE("clone is deep and independent", "[graph]") {
    ConvRelu m;
    m.conv->meta.stack_trace = "trace";
    auto c = m.g.clone();
    CHECK(graph_str(*c) == graph_str(m.g));
    Node* cconv = c->find("conv");
    REQUIRE(cconv != nullptr);
    CHECK(cconv != m.conv);
    CHECK(cconv->meta.stack_trace == "trace");
    CHECK(names(cconv->users()) == std::vector<std::string>{"relu"});
    CHECK(cconv->users()[0]->graph() == c.get());
    // editing the copy leaves the original alone
    c->find("relu")->set_args({N(c->find("x"))});
    REQUIRE(c->erase_node(cconv).ok());
    CHECK(m.g.find("conv") == m.conv);
    CHECK(m.conv->users().size() == 1);
    // names stay reserved like fx: a new "conv" in the copy is conv_1
    CHECK(c->call_module("conv", {})->name() == "conv_1");
}

// The copy made one node per step (GraphCloning, as the page's open makes it)
// is the copy made at once: the same text, users in the same order, ids kept,
// and an edited-over graph (erased nodes, nodes moved, an insert point) too.
TEST_CASE("a graph copied in pieces equals one clone", "[graph]") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* prev = x;
    std::vector<Node*> made;
    for (int k = 0; k < 600; ++k) { // longer than one piece of the page's open (256)
        prev = g.call_function("torch.ops.aten.add.Tensor", {N(prev), N(x)});
        made.push_back(prev);
    }
    g.output(Argument::tuple({N(prev), N(made[10])}));
    made[20]->replace_all_uses_with(made[19]);
    REQUIRE(g.erase_node(made[20]).ok());
    g.move_before(made[300], made[5]->users()[0]);
    REQUIRE_FALSE(g.lint().ok()); // moved before its input: still copied as it is
    auto at = g.inserting_after(made[100]);
    for (size_t piece : {size_t(1), size_t(7), size_t(256)}) {
        INFO(piece);
        GraphCloning c(g);
        int steps = 0;
        while (!c.step(piece)) REQUIRE(++steps < 100000);
        std::unique_ptr<Graph> a = c.take(), b = g.clone();
        CHECK(steps > static_cast<int>(1200 / piece) - 2);
        CHECK(graph_str(*a) == graph_str(*b));
        std::vector<Node*> na = a->nodes(), nb = b->nodes(), ng = g.nodes();
        REQUIRE(na.size() == ng.size());
        for (size_t k = 0; k < na.size(); ++k) {
            CHECK(na[k]->id() == ng[k]->id());
            CHECK(a->find_id(ng[k]->id()) == na[k]);
            CHECK(names(na[k]->users()) == names(ng[k]->users()));
            CHECK(names(na[k]->users()) == names(nb[k]->users()));
            for (Node* u : na[k]->users()) CHECK(u->graph() == a.get());
        }
        // The insert point came along: a new node goes after the copy of made[100].
        Node* n = a->call_function("torch.ops.aten.relu.default", {N(a->find("x"))});
        std::vector<Node*> after = a->nodes();
        auto it = std::find(after.begin(), after.end(), a->find(made[100]->name()));
        REQUIRE(it + 1 < after.end());
        CHECK(*(it + 1) == n);
    }
}

TEST_CASE("move_before reorders without touching users", "[graph]") {
    ConvRelu m;
    Node* w = m.g.get_attr("conv.weight");
    m.g.move_before(w, m.x);
    CHECK(names(m.g.nodes()) ==
          std::vector<std::string>{"conv_weight", "x", "conv", "relu", "output"});
    CHECK(m.g.lint().ok());
}

TEST_CASE("lint reports a node from another graph used as an argument", "[graph]") {
    ConvRelu a, b;
    a.relu->set_args({N(b.conv)}); // b's node in a's graph
    Status s = a.g.lint();
    REQUIRE_FALSE(s.ok());
    // [C] fact sheet 6.6, check 4 (first line of torch's message)
    CHECK(s.error().message == "Argument 'conv' of Node 'relu' does not belong to this Graph, but "
                               "was used as an argument! If you are "
                               "copying nodes from another graph, make sure to use "
                               "``arg_transform`` on node_copy() to remap values");
    a.relu->set_args({N(a.conv)}); // users stay consistent on both sides
    CHECK(b.conv->users().size() == 1);
    CHECK(a.g.lint().ok());
}

TEST_CASE("shed frees a graph from its last node back, a batch per call", "[graph]") {
    Graph g;
    Node* prev = g.placeholder("x");
    for (int i = 0; i < 1000; ++i) prev = g.call_function("torch.relu", {N(prev)});
    g.output(N(prev));
    REQUIRE(g.size() == 1002);
    // A deadline already past: each call frees one batch (64 nodes, then 64 entries of
    // the name and id maps, then 64 of the names taken) and says more is left.
    const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    int calls = 1;
    size_t before = g.size();
    while (!g.shed(past)) {
        CHECK(before - g.size() <= 64);
        before = g.size();
        ++calls;
        REQUIRE(calls < 200);
    }
    // 1002 nodes, 1002 names and ids in the maps, ~1002 names taken: about 4 x 16 batches.
    CHECK(calls >= 3 * 1002 / 64); // not one call for all the maps and names
    CHECK(calls <= 4 * 1002 / 64 + 4);
    CHECK(g.size() == 0);
    CHECK(g.shed(past)); // nothing left
}

TEST_CASE("lint finds a use before the definition in a graph with erased nodes", "[graph]") {
    // Ids are dense per graph and outlive erased nodes: lint indexes by them.
    Graph g;
    Node* x = g.placeholder("x");
    Node* a = g.call_function("torch.relu", {N(x)});
    Node* b = g.call_function("torch.neg", {N(a)});
    Node* c = g.call_function("torch.abs", {N(b)});
    g.output(N(c));
    c->set_args({N(a)});
    REQUIRE(g.erase_node(b).ok());
    CHECK(g.lint().ok());
    Node* late = g.call_function("torch.exp", {N(x)}); // appended after the output
    c->set_args({N(late)});
    Status s = g.lint();
    REQUIRE_FALSE(s.ok());
    INFO(s.error().message);
    CHECK(s.error().message.find("Argument 'exp' of Node '" + c->name() +
                                 "' was used before it has been defined") != std::string::npos);
}
