// Argument: one value in a node's args/kwargs, the C++ twin of what torch.fx
// stores there (Node references, None, bool, int, float, str, list, tuple,
// dtype, device ...). Printing follows Python's str()/repr() exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/dtype.h"

namespace pt2lab {

class Node;

enum class ArgKind {
    None,
    Bool,
    Int,
    Float,
    String,
    NodeRef,
    List,
    Tuple,
    Dict, // keys are strings (kwargs-like); items hold the values
    Dtype,
    Device,
    Layout,       // torch.strided ...
    MemoryFormat, // torch.contiguous_format ...
    Repr,         // an opaque Python value kept as its repr text (cannot run)
};

struct Argument {
    ArgKind kind = ArgKind::None;
    bool b = false;
    int64_t i = 0; // Int; Layout / MemoryFormat code
    double f = 0.0;
    std::string s;        // String; Device text ("cpu", "cuda:0"); Repr text
    Node* node = nullptr; // NodeRef
    ScalarType dtype = ScalarType::Unknown;
    std::vector<Argument> items;   // List, Tuple, Dict values
    std::vector<std::string> keys; // Dict keys (same length as items)

    static Argument none() { return {}; }
    static Argument from_bool(bool v);
    static Argument from_int(int64_t v);
    static Argument from_float(double v);
    static Argument from_string(std::string v);
    static Argument from_node(Node* n);
    // A reference to a node known only by name (actions written as data);
    // resolve_node_names() turns it into a real one.
    static Argument node_name(std::string name);
    bool is_unresolved_node() const { return kind == ArgKind::NodeRef && node == nullptr; }
    static Argument list(std::vector<Argument> v);
    static Argument tuple(std::vector<Argument> v);
    static Argument int_list(const std::vector<int64_t>& v);
    static Argument from_dtype(ScalarType t);
    static Argument device(std::string text);
    static Argument layout(int64_t code);
    static Argument memory_format(int64_t code);
    static Argument repr(std::string text);

    bool is_none() const { return kind == ArgKind::None; }
    bool is_node() const { return kind == ArgKind::NodeRef; }
    bool is_sequence() const { return kind == ArgKind::List || kind == ArgKind::Tuple; }
};

// Structural equality as Python's == would see it: ints equal floats of the
// same value; a list never equals a tuple; nodes compare by identity.
bool arg_equal(const Argument& a, const Argument& b);

// Ordered keyword arguments.
using Kwargs = std::vector<std::pair<std::string, Argument>>;
const Argument* kwargs_find(const Kwargs& kw, std::string_view key);

// Calls fn(Node*) for every node reference inside a (recursively), in order.
template <class F> void for_each_node(const Argument& a, F&& fn) {
    if (a.kind == ArgKind::NodeRef) {
        fn(a.node);
    } else if (a.kind == ArgKind::List || a.kind == ArgKind::Tuple || a.kind == ArgKind::Dict) {
        for (const Argument& x : a.items) for_each_node(x, fn);
    }
}
// Rewrites every node reference in place through fn(Node*) -> Node*.
template <class F> void map_nodes(Argument& a, F&& fn) {
    if (a.kind == ArgKind::NodeRef) {
        a.node = fn(a.node);
    } else if (a.kind == ArgKind::List || a.kind == ArgKind::Tuple || a.kind == ArgKind::Dict) {
        for (Argument& x : a.items) map_nodes(x, fn);
    }
}

// Python repr() of the value; nodes print as their name (Node.__repr__).
// Used by codegen and by str(tuple)/str(list)/str(dict).
std::string arg_repr(const Argument& a);
// The same with node references printed as `name_of` says (python_code's own namespace,
// where a node named after a builtin, like `input`, prints as `input_1`).
using NodeNamer = std::function<std::string(const Node*)>;
std::string arg_repr(const Argument& a, const NodeNamer& name_of);
// Python str() of the value: as repr except a top-level str prints bare.
std::string arg_str(const Argument& a);
// torch.fx's _format_arg (str(graph)): nodes as %name, strings bare, dict as {k: v}.
std::string arg_format_fx(const Argument& a);

} // namespace pt2lab
