// Printers against text real PyTorch printed: every symbolic_trace graph in
// assets/fx and tests/golden/fx is loaded from its nodes only, and str(graph),
// gm.code and print_tabular are regenerated and compared byte for byte with
// what torch 2.14.1 printed (tools/make_assets.py, tools/fx_cases.py).
#include <catch2/catch.hpp>

#include <chrono>

#include "graph/printer.h"
#include "io/fx_json.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {
std::vector<std::string> fx_golden_files() {
    auto a = list_dir("assets/fx", ".json");
    auto b = list_dir("tests/golden/fx", ".json");
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

FxGraph load_fx(const std::string& rel) {
    auto r = read_fx_graph_json(read_text(source_path(rel)), rel);
    INFO(rel << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}
} // namespace

TEST_CASE("there are fx goldens to compare against", "[printer]") {
    CHECK(list_dir("assets/fx", ".json").size() >= 7);
    CHECK(list_dir("tests/golden/fx", ".json").size() >= 8);
}

TEST_CASE("str(graph) matches torch.fx", "[printer]") {
    for (const auto& rel : fx_golden_files()) {
        FxGraph fx = load_fx(rel);
        REQUIRE_FALSE(fx.expected_graph.empty());
        std::string actual = graph_str(*fx.graph);
        INFO(rel << "\n" << first_difference(fx.expected_graph, actual));
        CHECK(actual == fx.expected_graph);
    }
}

TEST_CASE("gm.code matches torch.fx", "[printer]") {
    for (const auto& rel : fx_golden_files()) {
        FxGraph fx = load_fx(rel);
        std::string actual = python_code(*fx.graph);
        INFO(rel << "\n" << first_difference(fx.expected_code, actual));
        CHECK(actual == fx.expected_code);
    }
}

TEST_CASE("print_tabular matches torch.fx (addresses masked)", "[printer]") {
    for (const auto& rel : fx_golden_files()) {
        FxGraph fx = load_fx(rel);
        std::string actual = mask_addresses(print_tabular(*fx.graph));
        std::string expected = mask_addresses(fx.expected_tabular);
        INFO(rel << "\n" << first_difference(expected, actual));
        CHECK(actual == expected);
    }
}

TEST_CASE("call_function names an OpOverload node like fx (op_overload)", "[printer]") {
    Graph g;
    Node* x = g.placeholder("x");
    CHECK(g.call_function("torch.ops.aten.relu.default", {Argument::from_node(x)})->name() ==
          "relu_default");
}

TEST_CASE("torch >= 2.1 codegen frees values nobody uses", "[printer]") {
    // [C] fact sheet 1.4 (UNLIFT-NEW test expectations):
    //   _guards_fn = self._guards_fn(x);  _guards_fn = None
    Graph g;
    Node* x = g.placeholder("x");
    g.call_module("_guards_fn", {Argument::from_node(x)});
    Node* r = g.call_function("torch.ops.aten.relu.default", {Argument::from_node(x)}, {}, "relu");
    g.output(Argument::tuple({Argument::from_node(r)}));
    std::string code = python_code(g);
    CHECK(code.find("    _guards_fn = self._guards_fn(x);  _guards_fn = None\n") !=
          std::string::npos);
    CHECK(code.find("    relu = torch.ops.aten.relu.default(x);  x = None\n") != std::string::npos);
    CHECK(code.find("    return (relu,)\n") != std::string::npos);
}

TEST_CASE("code lines map back to the nodes that wrote them", "[printer]") {
    for (const auto& rel : fx_golden_files()) {
        FxGraph fx = load_fx(rel);
        CodeLines cl = python_code_lines(*fx.graph);
        CHECK(cl.src == python_code(*fx.graph));
        size_t lines = static_cast<size_t>(std::count(cl.src.begin(), cl.src.end(), '\n')) + 1;
        INFO(rel);
        REQUIRE(cl.line_nodes.size() == lines);
        // every statement line names a node whose name starts the statement (or it is the return)
        size_t b = 0;
        for (size_t k = 0; k < lines; ++k) {
            size_t e = cl.src.find('\n', b);
            std::string line = cl.src.substr(b, e == std::string::npos ? std::string::npos : e - b);
            b = e + 1;
            const std::string& node = cl.line_nodes[k];
            if (line.rfind("def ", 0) == 0) CHECK(node.empty());
            if (line.rfind("    return ", 0) == 0) CHECK(node == "output");
            if (!node.empty() && node != "output" && line.size() > 4 && line[4] != ' ')
                CHECK(line.rfind("    " + node + " = ", 0) == 0);
        }
    }
}

namespace {
// Writes g's code in the smallest pieces CodeWriting takes (a deadline already past),
// checking that it says how far it is; returns the pieces it took.
CodeLines write_in_pieces(const Graph& g, const CodegenOptions& opt, int* pieces) {
    CodeWriting w(g, opt);
    const auto past = std::chrono::steady_clock::time_point::min();
    size_t last = 0;
    *pieces = 0;
    while (!w.step(past)) {
        ++*pieces;
        CHECK(w.nodes_done() > last);
        CHECK(w.nodes_done() < w.nodes_total());
        last = w.nodes_done();
    }
    ++*pieces;
    CHECK(w.done());
    CHECK(w.nodes_done() == w.nodes_total());
    return w.take();
}
} // namespace

TEST_CASE("code written in pieces is the code written at once", "[printer]") {
    // A chain long enough for many pieces, a value used far ahead, an unused node.
    Graph big;
    Node* x = big.placeholder("x");
    Node* v = x;
    for (int k = 0; k < 1000; ++k)
        v = big.call_function("torch.ops.aten.relu.default", {Argument::from_node(v)});
    big.call_function("torch.ops.aten.neg.default", {Argument::from_node(x)});
    Node* sum = big.call_function("torch.ops.aten.add.Tensor",
                                  {Argument::from_node(v), Argument::from_node(x)});
    big.output(Argument::tuple({Argument::from_node(sum)}));
    int pieces = 0;
    CodeLines whole = python_code_lines(big);
    CodeLines cut = write_in_pieces(big, {}, &pieces);
    CHECK(pieces >= 2 * 1000 / 64);
    CHECK(cut.src == whole.src);
    CHECK(cut.line_nodes == whole.line_nodes);
    CHECK(whole.src.find("add_tensor = torch.ops.aten.add.Tensor(relu_default_999, x);  "
                         "relu_default_999 = x = None") != std::string::npos);
    for (const auto& rel : fx_golden_files()) {
        FxGraph fx = load_fx(rel);
        INFO(rel);
        for (bool verbose : {false, true}) {
            CodegenOptions opt;
            opt.verbose = verbose;
            CodeLines a = python_code_lines(*fx.graph, opt);
            CodeLines b = write_in_pieces(*fx.graph, opt, &pieces);
            CHECK(b.src == a.src);
            CHECK(b.line_nodes == a.line_nodes);
        }
        CHECK(python_code(*fx.graph) == fx.expected_code);
    }
}
