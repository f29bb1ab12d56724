// The generic decomposition pass and its per-op rules.
#include "passes/decompose.h"

#include <algorithm>
#include <cstdio>

#include "graph/op_schema.h"

namespace pt2lab {

const char* ir_level_name(IrLevel l) {
    switch (l) {
    case IrLevel::Training: return "Training IR";
    case IrLevel::Inference: return "Inference IR";
    case IrLevel::CoreAten: return "Core ATen";
    }
    return "?";
}

// What a rule works with: the node being replaced and helpers that keep the
// graph, the metadata and the graph signature consistent.
struct DecompContext {
    ExportedProgram& ep;
    Graph& g;
    Node* node;
    std::vector<Node*> created;

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
    // Users of `node` read `value` instead; `node` goes.
    Status replace_with(Node* value) {
        node->replace_all_uses_with(value);
        return g.erase_node(node);
    }
    // Functionalization of an in-place write: later readers of `mutated` read
    // `value`; a mutated buffer (or user input) becomes a mutation output.
    void functionalize(Node* mutated, Node* value) {
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

namespace {

// ---- metadata helpers ----------------------------------------------------------

const TensorMeta* tensor_meta(const Argument& a) {
    if (!a.is_node() || !a.node->meta.val.is_tensor()) return nullptr;
    return &a.node->meta.val.tensor;
}

MetaVal tensor_val(ScalarType dt, std::vector<int64_t> sizes, bool requires_grad = false) {
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

MetaVal tuple_val(std::vector<MetaVal> items) {
    MetaVal v;
    v.kind = MetaVal::Kind::Tuple;
    v.items = std::move(items);
    return v;
}

// Argument k of the node, or the schema default when it was dropped.
Argument arg_or_default(const Node& n, size_t k) {
    if (k < n.args().size()) return n.args()[k];
    const OpSchema* s = n.schema();
    if (s && k < s->arguments.size()) {
        if (const Argument* kw = kwargs_find(n.kwargs(), s->arguments[k].name)) return *kw;
        if (s->arguments[k].has_default) return s->arguments[k].default_value;
    }
    return Argument::none();
}

Error rule_error(const Node& n, const std::string& msg) {
    return make_error("%" + n.name(), msg, "the node keeps its training-IR form");
}

// ---- rules -----------------------------------------------------------------------

// batch_norm -> _native_batch_norm_legit_no_training + getitem (eval) or
// _native_batch_norm_legit_functional + getitems, new running stats as buffer mutations (train)
Status rule_batch_norm(DecompContext& c) {
    Node& n = *c.node;
    Argument training = arg_or_default(n, 5);
    if (training.kind != ArgKind::Bool)
        return rule_error(n, "batch_norm's training argument is not a literal bool");
    Argument in = arg_or_default(n, 0), w = arg_or_default(n, 1), b = arg_or_default(n, 2);
    Argument rm = arg_or_default(n, 3), rv = arg_or_default(n, 4);
    Argument momentum = arg_or_default(n, 6), eps = arg_or_default(n, 7);
    const TensorMeta* x = tensor_meta(in);
    if (!x || x->sizes.size() < 2) return rule_error(n, "batch_norm's input has no shape metadata");
    MetaVal out = n.meta.val;
    const int64_t C = x->sizes[1];
    if (!training.b) {
        MetaVal empty = tensor_val(x->dtype, {0});
        std::vector<MetaVal> vals = {out, empty, empty};
        Node* f = c.emit("torch.ops.aten._native_batch_norm_legit_no_training.default",
                         {in, w, b, rm, rv, momentum, eps}, {},
                         "_native_batch_norm_legit_no_training", tuple_val(vals));
        auto items = c.getitems(f, vals);
        return c.replace_with(items[0]);
    }
    if (!rm.is_node() || !rv.is_node())
        return rule_error(n, "train-mode batch_norm without running statistics has no rule here");
    MetaVal stat = tensor_val(x->dtype, {C});
    std::vector<MetaVal> vals = {out, stat, stat, stat, stat};
    Node* f = c.emit("torch.ops.aten._native_batch_norm_legit_functional.default",
                     {in, w, b, rm, rv, Argument::from_bool(true), momentum, eps}, {},
                     "_native_batch_norm_legit_functional", tuple_val(vals));
    auto items = c.getitems(f, vals);
    Node* rm_node = rm.node;
    Node* rv_node = rv.node;
    if (Status s = c.replace_with(items[0]); !s.ok()) return s;
    c.functionalize(rm_node, items[3]);
    c.functionalize(rv_node, items[4]);
    return {};
}

// add_.Tensor(self, other) -> add.Tensor(self, other), self's later readers and its buffer take the
// result
Status rule_add_(DecompContext& c) {
    Node& n = *c.node;
    if (n.args().empty() || !n.args()[0].is_node())
        return rule_error(n, "add_ writes to something that is not a node");
    Node* self = n.args()[0].node;
    Node* a = c.emit("torch.ops.aten.add.Tensor", n.args(), n.kwargs(), "add", n.meta.val);
    if (Status s = c.replace_with(a); !s.ok()) return s;
    c.functionalize(self, a);
    return {};
}

// relu_(self) -> relu(self)
Status rule_relu_(DecompContext& c) {
    Node& n = *c.node;
    if (n.args().empty() || !n.args()[0].is_node())
        return rule_error(n, "relu_ writes to something that is not a node");
    Node* self = n.args()[0].node;
    Node* r = c.emit("torch.ops.aten.relu.default", n.args(), {}, "relu", n.meta.val);
    if (Status s = c.replace_with(r); !s.ok()) return s;
    c.functionalize(self, r);
    return {};
}

// conv2d -> convolution(input, weight, bias, stride, padding, dilation, False, [0, 0], groups)
Status rule_conv2d(DecompContext& c) {
    Node& n = *c.node;
    std::vector<Argument> args = {
        arg_or_default(n, 0),       arg_or_default(n, 1),       arg_or_default(n, 2),
        arg_or_default(n, 3),       arg_or_default(n, 4),       arg_or_default(n, 5),
        Argument::from_bool(false), Argument::int_list({0, 0}), arg_or_default(n, 6)};
    Node* conv = c.emit("torch.ops.aten.convolution.default", args, {}, "convolution", n.meta.val);
    return c.replace_with(conv);
}

bool linear_input_is_2d(const Node& n) {
    const TensorMeta* x = n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
    return x && x->sizes.size() == 2;
}

// linear(x[M, K], w[N, K], b) -> permute(w, [1, 0]) + addmm(b, x, permute); without bias, mm(x,
// permute)
Status rule_linear(DecompContext& c) {
    Node& n = *c.node;
    Argument x = arg_or_default(n, 0), w = arg_or_default(n, 1), b = arg_or_default(n, 2);
    const TensorMeta* wm = tensor_meta(w);
    if (!wm || wm->sizes.size() != 2)
        return rule_error(n, "linear's weight has no 2-D shape metadata");
    Node* p =
        c.emit("torch.ops.aten.permute.default", {w, Argument::int_list({1, 0})}, {}, "permute",
               tensor_val(wm->dtype, {wm->sizes[1], wm->sizes[0]}, wm->requires_grad));
    Node* out = b.is_none() ? c.emit("torch.ops.aten.mm.default", {x, Argument::from_node(p)}, {},
                                     "mm", n.meta.val)
                            : c.emit("torch.ops.aten.addmm.default", {b, x, Argument::from_node(p)},
                                     {}, "addmm", n.meta.val);
    return c.replace_with(out);
}

bool t_is_2d(const Node& n) {
    const TensorMeta* x = n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
    return x && x->sizes.size() == 2;
}

// t(self[A, B]) -> permute(self, [1, 0])
Status rule_t(DecompContext& c) {
    Node& n = *c.node;
    Node* p = c.emit("torch.ops.aten.permute.default", {n.args()[0], Argument::int_list({1, 0})},
                     {}, "permute", n.meta.val);
    return c.replace_with(p);
}

// max_pool2d -> max_pool2d_with_indices + getitem (values; the indices go unused)
Status rule_max_pool2d(DecompContext& c) {
    Node& n = *c.node;
    MetaVal out = n.meta.val;
    if (!out.is_tensor()) return rule_error(n, "max_pool2d has no shape metadata");
    MetaVal idx = tensor_val(ScalarType::Long, out.tensor.sizes);
    std::vector<MetaVal> vals = {out, idx};
    Node* m = c.emit("torch.ops.aten.max_pool2d_with_indices.default", n.args(), n.kwargs(),
                     "max_pool2d_with_indices", tuple_val(vals));
    auto items = c.getitems(m, vals);
    return c.replace_with(items[0]);
}

// adaptive_avg_pool2d -> mean.dim(x, [-1, -2], True) for a 1x1 output, else _adaptive_avg_pool2d
Status rule_adaptive_avg_pool2d(DecompContext& c) {
    Node& n = *c.node;
    Argument size = arg_or_default(n, 1);
    bool one = size.is_sequence() && size.items.size() == 2 && size.items[0].kind == ArgKind::Int &&
               size.items[0].i == 1 && size.items[1].kind == ArgKind::Int && size.items[1].i == 1;
    Node* r = one ? c.emit("torch.ops.aten.mean.dim",
                           {n.args()[0], Argument::int_list({-1, -2}), Argument::from_bool(true)},
                           {}, "mean", n.meta.val)
                  : c.emit("torch.ops.aten._adaptive_avg_pool2d.default", n.args(), {},
                           "_adaptive_avg_pool2d", n.meta.val);
    return c.replace_with(r);
}

// flatten.using_ints / reshape -> view(x, <output shape>) (contiguous inputs)
Status rule_to_view(DecompContext& c) {
    Node& n = *c.node;
    if (!n.meta.val.is_tensor()) return rule_error(n, "no shape metadata to build the view from");
    Node* v =
        c.emit("torch.ops.aten.view.default",
               {n.args()[0], Argument::int_list(n.meta.val.tensor.sizes)}, {}, "view", n.meta.val);
    return c.replace_with(v);
}

// Whether Core ATen keeps the op: a CORE_ATEN row, or a custom op library
// (quantized_decomposed), which run_decompositions() passes through.
bool in_core_aten(const Node& n) {
    if (n.op_info()) return n.op_info()->core_aten();
    return n.target().rfind("torch.ops.quantized_decomposed.", 0) == 0;
}

} // namespace

const std::vector<DecompRule>& decomposition_rules() {
#define K(fn)
#define NO_KERNEL
#define D(level, rule, applies, summary)                                                           \
    out.push_back({id, IrLevel::level, summary, rule, applies});
#define NO_DECOMP
#define PT2LAB_OP(name, schema, kernel, decomposition, flags)                                      \
    {                                                                                              \
        const OpId id = OpId::name;                                                                \
        decomposition                                                                              \
    }
    static const std::vector<DecompRule> rules = [] {
        std::vector<DecompRule> out;
#include "graph/op_rows.inc"
        return out;
    }();
#undef PT2LAB_OP
#undef K
#undef NO_KERNEL
#undef D
#undef NO_DECOMP
    return rules;
}

DecompTable DecompTable::for_level(IrLevel level) {
    DecompTable t;
    t.level = level;
    for (const DecompRule& r : decomposition_rules())
        if (level != IrLevel::Training &&
            (r.level == IrLevel::Inference || level == IrLevel::CoreAten))
            t.rules.push_back(&r);
    return t;
}

DecompTable DecompTable::without(const std::string& target) const {
    DecompTable t = *this;
    const OpInfo* op = find_op(target);
    if (!op) return t;
    t.rules.erase(std::remove_if(t.rules.begin(), t.rules.end(),
                                 [&](const DecompRule* r) { return r->op == op->id; }),
                  t.rules.end());
    return t;
}

const DecompRule* DecompTable::find(const Node& n) const {
    if (n.op() != Op::CallFunction) return nullptr;
    for (const DecompRule* r : rules)
        if (n.is(r->op) && (!r->applies || r->applies(n))) return r;
    return nullptr;
}

std::vector<Node*> decomposable_nodes(const ExportedProgram& ep, const DecompTable& table) {
    std::vector<Node*> out;
    for (Node* n : ep.graph->nodes())
        if (table.find(*n)) out.push_back(n);
    return out;
}

Result<DecompStep> decompose_node(ExportedProgram& ep, const DecompTable& table, Node* n) {
    const DecompRule* rule = table.find(*n);
    if (!rule)
        return make_error("%" + n->name(),
                          "no decomposition rule for " + n->target() + " in this table");
    DecompStep step;
    step.node = n->name();
    step.rule = rule->summary;
    auto before = ep.graph->clone();
    GraphSignature sig_before = ep.signature;
    DecompContext ctx{ep, *ep.graph, n, {}};
    if (Status s = rule->apply(ctx); !s.ok()) {
        ep.graph = std::move(before); // leave the program as it was
        ep.signature = sig_before;
        return s.error();
    }
    // The rule's outputs nobody reads (getitem_1 ...) go, as the retrace's DCE drops them.
    std::vector<std::string> names;
    for (Node* m : ctx.created) names.push_back(m->name());
    std::vector<bool> dropped(ctx.created.size(), false);
    for (size_t k = ctx.created.size(); k-- > 0;) {
        Node* m = ctx.created[k];
        if (m->users().empty() && !is_impure(*m)) {
            Status s = ep.graph->erase_node(m);
            (void)s;
            dropped[k] = true;
        }
    }
    for (size_t k = 0; k < names.size(); ++k)
        (dropped[k] ? step.removed_unused : step.created).push_back(names[k]);
    if (Status s = ep.graph->lint(); !s.ok()) return s.error();
    return step;
}

Result<DecompReport> run_decompositions(ExportedProgram& ep, const DecompTable& table) {
    DecompReport report;
    for (Node* n : ep.graph->nodes()) {
        if (!table.find(*n)) continue;
        auto step = decompose_node(ep, table, n);
        if (!step.ok()) return step.error();
        report.steps.push_back(step.take());
    }
    for (Node* n : ep.graph->nodes()) {
        if (n->op() != Op::CallFunction) continue;
        bool outside = table.level == IrLevel::CoreAten
                           ? !in_core_aten(*n)
                           : (!n->schema() || n->schema()->is_mutable());
        if (table.level != IrLevel::Training && outside)
            report.kept_without_rule.push_back(n->name() + " (" + n->target() + ")");
    }
    return report;
}

std::string DecompReport::str() const {
    std::string s;
    for (const auto& st : steps) {
        s += "  %" + st.node + ": " + st.rule + "\n    new:";
        for (const auto& c : st.created) s += " %" + c;
        if (!st.removed_unused.empty()) {
            s += "  (unused, dropped:";
            for (const auto& r : st.removed_unused) s += " %" + r;
            s += ")";
        }
        s += "\n";
    }
    for (const auto& k : kept_without_rule) s += "  kept (no rule): %" + k + "\n";
    return s;
}

std::vector<std::pair<std::string, int>> op_counts(const Graph& g) {
    std::vector<std::pair<std::string, int>> out;
    for (Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction) continue;
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const auto& p) { return p.first == n->target(); });
        if (it == out.end())
            out.emplace_back(n->target(), 1);
        else
            ++it->second;
    }
    return out;
}

} // namespace pt2lab
