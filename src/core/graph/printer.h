// Printers that reproduce torch.fx's text byte for byte: str(graph),
// GraphModule.code (python_code), print_readable annotations, print_tabular.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace pt2lab {

// One line of str(graph) (torch >= 2.1 wording: "[num_users=N]").
std::string format_node(const Node& n);
// str(graph): "graph():\n    %x : [num_users=1] = placeholder[target=x]\n ..."
std::string graph_str(const Graph& g);

struct CodegenOptions {
    // _PyTreeCodeGen (what ep.module() uses): forward(self, <pytree_args>) starts with
    // "x, = fx_pytree.tree_flatten_spec(([x], {}), self._in_spec)" and returns
    // "pytree.tree_unflatten(..., self._out_spec)".
    bool pytree = false;
    std::vector<std::string> pytree_args;   // positional forward() argument names
    std::vector<std::string> pytree_kwargs; // keyword forward() argument names
    // print_readable: annotate values with their meta type ("f32[2, 8, 16, 16]").
    bool verbose = false;
};

// GraphModule.code: "\n\n\ndef forward(self, x):\n    ...\n    " exactly as torch.
std::string python_code(const Graph& g, const CodegenOptions& opt = {});

// The code plus, for every line of it (split at '\n'), the name of the node
// that produced the line ("" for none): the page links code lines and nodes.
struct CodeLines {
    std::string src;
    std::vector<std::string> line_nodes;
    std::vector<uint32_t> line_ids; // the same nodes' ids (0: none)
};
CodeLines python_code_lines(const Graph& g, const CodegenOptions& opt = {});

// python_code_lines in pieces, so a page can write a big graph's code over frames:
// step() writes nodes until the deadline; once it returns true, take() the code.
// The graph must not change while it is written.
class CodeWriting {
public:
    CodeWriting(const Graph& g, const CodegenOptions& opt = {});
    ~CodeWriting();
    CodeWriting(CodeWriting&&) noexcept;
    CodeWriting& operator=(CodeWriting&&) noexcept;
    bool step(std::chrono::steady_clock::time_point deadline);
    bool done() const;
    // How far, in units of nodes: every node twice (last uses, then the body) and as
    // many units again for the end (the lines mapped and indented, the state let go).
    size_t nodes_done() const;
    size_t nodes_total() const;
    CodeLines take();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// print_readable(print_output=False): "class GraphModule(torch.nn.Module):\n    def forward(...".
std::string print_readable(const Graph& g, const CodegenOptions& opt,
                           const std::string& class_name = "GraphModule");

// str(node.target) as Python prints it in print_tabular ("aten.conv2d.default",
// "<built-in method conv2d of type object at 0x...>", "conv").
std::string target_str(const Node& n);

// What Graph.print_tabular() prints (tabulate's "simple" format), final newline included.
std::string print_tabular(const Graph& g);

// How torch.fx's str(graph) shows a call target: torch.ops.aten.conv2d.default,
// operator.getitem, builtins.getattr, torch.conv2d.
std::string pretty_target(const Node& n);

} // namespace pt2lab
