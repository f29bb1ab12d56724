// What a decomposition rule works with (passes/decompose.cpp runs the rules,
// passes/decompose*.cpp hold them): the node being replaced, helpers that keep
// the graph, the metadata and the graph signature consistent, and the rules of
// the op table's decomposition column. Private to passes/.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "passes/decompose.h"

namespace pt2lab {

// What a rule works with: the node being replaced and helpers that keep the
// graph, the metadata and the graph signature consistent.
struct DecompContext {
    ExportedProgram& ep;
    Graph& g;
    Node* node;
    std::vector<Node*> created;
    // Nodes after `node` that the rule erased (a multi-output op's getitem readers),
    // which the pass must no longer visit.
    std::vector<const Node*> erased;
    // What replaced `node` (replace_with), and the values functionalize() made the new
    // contents of a mutated tensor: the retrace names views of those apart
    // (decompose.cpp, RetraceNaming).
    Node* replacement = nullptr;
    std::vector<Node*> functionalized;

    // A new call_function before `node`, carrying node's metadata (module
    // stack, torch_fn, stack trace) and the given value metadata.
    Node* emit(const std::string& target, std::vector<Argument> args, Kwargs kwargs,
               const std::string& name, MetaVal val) {
        Node* m;
        {
            auto at = g.inserting_before(node);
            m = g.call_function(target, std::move(args), std::move(kwargs), name);
        }
        m->meta = node->meta;
        m->meta.val = std::move(val);
        created.push_back(m);
        return m;
    }
    std::vector<Node*> getitems(Node* multi, const std::vector<MetaVal>& vals) {
        std::vector<Node*> out;
        for (size_t k = 0; k < vals.size(); ++k)
            out.push_back(emit("operator.getitem",
                               {Argument::from_node(multi), Argument::from_int(int64_t(k))}, {},
                               "getitem", vals[k]));
        return out;
    }
    // Erases n, a node after `node` that nothing reads any more, and records it.
    Status erase_later_node(Node* n) {
        erased.push_back(n);
        return g.erase_node(n);
    }
    // Users of `node` read `value` instead; `node` goes.
    Status replace_with(Node* value) {
        replacement = value;
        node->replace_all_uses_with(value);
        return g.erase_node(node);
    }
    // Functionalization of an in-place write: later readers of `mutated` read
    // `value`; a mutated buffer (or user input) becomes a mutation output.
    void functionalize(Node* mutated, Node* value) {
        functionalized.push_back(value);
        bool after = false;
        for (Node* n : g.nodes()) {
            if (n == value) {
                after = true;
                continue;
            }
            if (!after || n->op() == Op::Output) continue;
            if (std::find(created.begin(), created.end(), n) != created.end()) continue;
            const auto& in = n->input_nodes();
            if (std::find(in.begin(), in.end(), mutated) != in.end())
                n->replace_input_with(mutated, value);
        }
        if (mutated->op() != Op::Placeholder) return;
        const InputSpec* is = ep.signature.input_for(mutated->name());
        if (!is) return;
        if (is->kind == InputKind::Buffer)
            add_mutation_output(OutputKind::BufferMutation, is->target, value);
        else if (is->kind == InputKind::Parameter)
            add_mutation_output(OutputKind::ParameterMutation, is->target, value);
        else if (is->kind == InputKind::UserInput)
            add_mutation_output(OutputKind::UserInputMutation, is->arg, value);
    }

private:
    static bool is_mutation(OutputKind k) {
        return k == OutputKind::BufferMutation || k == OutputKind::ParameterMutation ||
               k == OutputKind::UserInputMutation;
    }
    size_t input_rank(const std::string& target) const {
        for (size_t k = 0; k < ep.signature.inputs.size(); ++k) {
            const InputSpec& is = ep.signature.inputs[k];
            if (is.target == target || (is.kind == InputKind::UserInput && is.arg == target))
                return k;
        }
        return ep.signature.inputs.size();
    }
    // Mutation outputs come first, in the order of the inputs they write
    // (torch: Outputs = [*mutated_inputs, *user_outputs]).
    void add_mutation_output(OutputKind kind, const std::string& target, Node* value) {
        Node* out = g.output_node();
        std::vector<Argument> items = out->args()[0].items;
        auto& specs = ep.signature.outputs;
        for (size_t k = 0; k < specs.size(); ++k)
            if (is_mutation(specs[k].kind) && specs[k].target == target) {
                specs[k].arg = value->name();
                items[k] = Argument::from_node(value);
                out->set_args({Argument::tuple(items)});
                return;
            }
        size_t pos = 0;
        while (pos < specs.size() && is_mutation(specs[pos].kind) &&
               input_rank(specs[pos].target) < input_rank(target))
            ++pos;
        specs.insert(specs.begin() + static_cast<long>(pos),
                     OutputSpec{kind, value->name(), target});
        items.insert(items.begin() + static_cast<long>(pos), Argument::from_node(value));
        out->set_args({Argument::tuple(items)});
    }
};

namespace decomp {

// ---- metadata helpers ----------------------------------------------------------

inline const TensorMeta* tensor_meta(const Argument& a) {
    if (!a.is_node() || !a.node->meta.val.is_tensor()) return nullptr;
    return &a.node->meta.val.tensor;
}

inline MetaVal tensor_val(ScalarType dt, std::vector<int64_t> sizes, bool requires_grad = false) {
    MetaVal v;
    v.kind = MetaVal::Kind::Tensor;
    v.tensor.dtype = dt;
    v.tensor.sizes = std::move(sizes);
    v.tensor.strides.assign(v.tensor.sizes.size(), 1);
    for (int k = static_cast<int>(v.tensor.sizes.size()) - 2; k >= 0; --k)
        v.tensor.strides[static_cast<size_t>(k)] = v.tensor.strides[static_cast<size_t>(k) + 1] *
                                                   v.tensor.sizes[static_cast<size_t>(k) + 1];
    v.tensor.requires_grad = requires_grad;
    return v;
}

inline MetaVal tuple_val(std::vector<MetaVal> items) {
    MetaVal v;
    v.kind = MetaVal::Kind::Tuple;
    v.items = std::move(items);
    return v;
}

// Argument k of the node, or the schema default when it was dropped.
inline Argument arg_or_default(const Node& n, size_t k) {
    if (k < n.args().size()) return n.args()[k];
    const OpSchema* s = n.schema();
    if (s && k < s->arguments.size()) {
        if (const Argument* kw = kwargs_find(n.kwargs(), s->arguments[k].name)) return *kw;
        if (s->arguments[k].has_default) return s->arguments[k].default_value;
    }
    return Argument::none();
}

// d wrapped into [0, rank), or nullopt.
inline std::optional<int64_t> wrap_dim_index(int64_t d, int64_t rank) {
    if (rank <= 0) return std::nullopt;
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return std::nullopt;
    return d;
}

inline Error rule_error(const Node& n, const std::string& msg) {
    return make_error("%" + n.name(), msg, "the node keeps its training-IR form");
}

} // namespace decomp

// Rules and predicates the op table names (graph/op_rows.inc), defined in
// passes/decompose.cpp and passes/decompose_rules.cpp.
#define K(fn)
#define NO_KERNEL
#define NO_DECOMP
#define D(level, rule, applies, summary) Status rule(DecompContext&);
#define PT2LAB_OP(name, schema, kernel, decomposition, flags) decomposition
#include "graph/op_rows.inc"
#undef PT2LAB_OP
#undef D
bool linear_decomposes(const Node& n);
bool linear_nd_applies(const Node& n);
Status linear_nd(DecompContext& c);
bool t_is_2d(const Node& n);
bool dropout_is_eval(const Node& n);
bool softmax_no_dtype(const Node& n);
bool sdpa_plain(const Node& n);
bool lstm_decomposes(const Node& n);
bool gru_decomposes(const Node& n);
bool einsum_decomposes(const Node& n);
bool pad_is_constant(const Node& n);
bool vector_norm_decomposes(const Node& n);
bool matmul_decomposes(const Node& n);
bool linear_fold_applies(const Node& n);
Status linear_fold(DecompContext& c);
// An in-place op (c.node, not yet replaced) writes `value` over `self`: when self is a
// view of an intermediate, the base's later readers read view(value, base's shape) and
// the result is a view of that again, which self's readers should read; else `value`.
Node* write_into_view_base(DecompContext& c, Node* self, Node* value);
// A node's meta.other key: the names (op bases, comma-separated: "view,view") torch's
// trace used up just before the node for nodes it made and dropped; the retrace naming
// takes them, then erases the key.
inline constexpr const char* kRetraceSkip = "pt2lab.retrace_skip";
#undef NO_DECOMP
#undef NO_KERNEL
#undef K

} // namespace pt2lab
