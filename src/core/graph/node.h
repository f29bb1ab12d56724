// Node: one operation in a Graph, with torch.fx's fields and words
// (op, name, target, args, kwargs, users, meta). Args are changed only through
// Graph-aware setters so `users` always mirrors who consumes this node.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/argument.h"
#include "graph/dtype.h"

namespace pt2lab {

class Graph;
struct OpSchema;
struct OpInfo;
enum class OpId : uint16_t;

enum class Op { Placeholder, GetAttr, CallFunction, CallModule, CallMethod, Output };

std::string_view op_name(Op op); // "placeholder", "call_function", ...
std::optional<Op> op_from_name(std::string_view s);

// Shape/dtype of one tensor value (export's TensorMeta; fx's meta['val']).
struct TensorMeta {
    ScalarType dtype = ScalarType::Float;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    int64_t storage_offset = 0;
    bool requires_grad = false;
    std::string device = "cpu";
    std::vector<std::string> symbolic_sizes; // per dim: "" or a symbol expr ("s0")

    int64_t numel() const;
    // print_readable annotation body: f32[2, 8, 16, 16]
    std::string type_str() const;
};

// meta['val']: nothing, one tensor, a symbolic/constant scalar, or a tuple of those.
struct MetaVal {
    enum class Kind { None, Tensor, SymInt, Int, Tuple } kind = Kind::None;
    TensorMeta tensor;
    std::string sym;   // SymInt expression
    int64_t value = 0; // Int
    std::vector<MetaVal> items;

    bool is_tensor() const { return kind == Kind::Tensor; }
};

struct ModuleStackEntry {
    std::string key;  // "L__self__conv", "L__self__layer1.0.relu@1" (a second call)
    std::string path; // "conv"
    std::string type; // "torch.nn.modules.conv.Conv2d"
};

struct NodeMeta {
    MetaVal val;
    std::string stack_trace;
    std::vector<ModuleStackEntry> nn_module_stack;                    // root first
    std::vector<std::pair<std::string, std::string>> source_fn_stack; // (name, op)
    std::optional<std::pair<std::string, std::string>>
        torch_fn;                             // ("conv2d_1", "builtin_function_or_method.conv2d")
    std::map<std::string, std::string> other; // other keys, serialized text
};

class Node {
public:
    Op op() const { return op_; }
    const std::string& name() const { return name_; }
    // Stable id, unique in its graph and never reused by it; kept by Graph::clone,
    // so a UI can hold ids across undo/redo (Graph::find_id). Never 0.
    uint32_t id() const { return id_; }
    // placeholder: input name; get_attr / call_module: dotted path; call_method: method
    // name; call_function: qualified name ("torch.ops.aten.conv2d.default",
    // "operator.getitem", "torch.conv2d"); output: "output".
    const std::string& target() const { return target_; }
    const std::vector<Argument>& args() const { return args_; }
    const Kwargs& kwargs() const { return kwargs_; }
    // Nodes that read this node, in the order they started doing so (fx's users dict).
    const std::vector<Node*>& users() const { return users_; }
    // Distinct nodes read by args then kwargs, in first-use order (fx's _input_nodes).
    std::vector<Node*> input_nodes() const;
    Graph* graph() const { return graph_; }
    // The op table row of a call_function target pt2lab knows (graph/op_table.h), else null.
    const OpInfo* op_info() const { return op_info_; }
    // Its schema, else null.
    const OpSchema* schema() const;
    // True when this is a call of that op.
    bool is(OpId id) const;

    NodeMeta meta;

    // Replace args/kwargs; users of old and new inputs are updated.
    void set_args(std::vector<Argument> args);
    void set_kwargs(Kwargs kwargs);
    void set_args_kwargs(std::vector<Argument> args, Kwargs kwargs);
    // Every use of `old` in this node's args/kwargs becomes `replacement`.
    void replace_input_with(Node* old, Node* replacement);
    // Points every user (for which keep(user) is true) at `replacement`; returns
    // the users changed. Like torch.fx, it does not exclude `replacement` itself.
    template <class Keep> std::vector<Node*> replace_all_uses_with(Node* replacement, Keep keep);
    std::vector<Node*> replace_all_uses_with(Node* replacement);

    // Previous / next node in graph order, or null at the ends.
    Node* prev() const;
    Node* next() const;

private:
    friend class Graph;
    friend class GraphCloning;
    friend class GraphLinting;
    Node() = default;
    void unlink_inputs();
    void link_inputs();

    Graph* graph_ = nullptr;
    uint32_t id_ = 0;
    Op op_ = Op::Placeholder;
    std::string name_;
    std::string target_;
    std::vector<Argument> args_;
    Kwargs kwargs_;
    std::vector<Node*> users_;
    const OpInfo* op_info_ = nullptr;
    std::list<std::unique_ptr<Node>>::iterator self_;
};

template <class Keep> std::vector<Node*> Node::replace_all_uses_with(Node* replacement, Keep keep) {
    std::vector<Node*> to_process = users_;
    std::vector<Node*> changed;
    for (Node* user : to_process) {
        if (!keep(user)) continue;
        user->replace_input_with(this, replacement);
        changed.push_back(user);
    }
    return changed;
}

} // namespace pt2lab
