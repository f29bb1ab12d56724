// The generic decomposition pass and its per-op rules.
#include "passes/decompose.h"

#include "passes/decomp_context.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "graph/namespace.h"
#include "graph/op_schema.h"
#include "util/check.h"

namespace pt2lab {

const char* ir_level_name(IrLevel l) {
    switch (l) {
    case IrLevel::Training: return "Training IR";
    case IrLevel::Inference: return "Inference IR";
    case IrLevel::CoreAten: return "Core ATen";
    }
    return "?";
}

using namespace decomp;

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
    Node* seen = write_into_view_base(c, self, r);
    if (Status s = c.replace_with(seen); !s.ok()) return s;
    c.functionalize(self, seen);
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

bool linear_decomposes(const Node& n) {
    const TensorMeta* x = n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
    return (x && x->sizes.size() == 2) || linear_nd_applies(n) || linear_fold_applies(n);
}

// linear(x[M, K], w[N, K], b) -> permute(w, [1, 0]) + addmm(b, x, permute); without bias, mm(x,
// permute)
Status rule_linear(DecompContext& c) {
    Node& n = *c.node;
    if (linear_nd_applies(n)) return linear_nd(c);
    if (linear_fold_applies(n)) return linear_fold(c);
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

namespace {
// c10's is_channels_last_strides_2d (what suggest_memory_format asks) for a 4-D tensor.
bool channels_last_strides_2d(const TensorMeta& m) {
    if (m.sizes.size() != 4 || m.strides.size() != 4 || m.strides[1] == 0) return false;
    int64_t min = 0;
    for (size_t d : {size_t(1), size_t(3), size_t(2), size_t(0)}) {
        if (m.sizes[d] == 0 || m.strides[d] < min) return false;
        if (d == 0 && min == m.strides[1]) return false;
        min = m.strides[d];
        if (m.sizes[d] > 1) min *= m.sizes[d];
    }
    return true;
}
} // namespace

// adaptive_avg_pool2d -> mean.dim(x, [-1, -2], True) for a 1x1 output, else _adaptive_avg_pool2d
// (+ as_strided for a channels-last input)
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
    // ATen restrides the mean of a channels-last input in place (as_strided_, which
    // functionalization writes as as_strided): [n, c, 1, 1] with strides [c, 1, c, c]
    const TensorMeta* x = tensor_meta(n.args()[0]);
    if (one && x && n.meta.val.is_tensor() && channels_last_strides_2d(*x)) {
        const int64_t N = x->sizes[0], C = x->sizes[1];
        MetaVal v = n.meta.val;
        v.tensor.sizes = {N, C, 1, 1};
        v.tensor.strides = {C, 1, C, C};
        r = c.emit("torch.ops.aten.as_strided.default",
                   {Argument::from_node(r), Argument::int_list({N, C, 1, 1}),
                    Argument::int_list({C, 1, C, C})},
                   {}, "as_strided", v);
    }
    return c.replace_with(r);
}

// flatten.using_ints / unflatten.int -> view(x, <output shape>) (lowered already by
// run_decompositions({}) in torch 2.14)
Status rule_to_view(DecompContext& c) {
    Node& n = *c.node;
    if (!n.meta.val.is_tensor()) return rule_error(n, "no shape metadata to build the view from");
    Node* v =
        c.emit("torch.ops.aten.view.default",
               {n.args()[0], Argument::int_list(n.meta.val.tensor.sizes)}, {}, "view", n.meta.val);
    return c.replace_with(v);
}

namespace {
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
        [[maybe_unused]] const OpId id = OpId::name;                                               \
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

namespace {
// The output specs name what the output node returns: after a rule replaced a returned
// node, its spec names the new one (torch 2.14: "addmm: USER_OUTPUT", not "linear").
void sync_output_specs(ExportedProgram& ep) {
    Node* out = ep.graph->output_node();
    if (!out || out->args().empty()) return;
    const Argument& ret = out->args()[0];
    auto& specs = ep.signature.outputs;
    if (ret.kind != ArgKind::Tuple && ret.kind != ArgKind::List) {
        if (specs.size() == 1 && ret.is_node()) specs[0].arg = ret.node->name();
        return;
    }
    for (size_t k = 0; k < specs.size() && k < ret.items.size(); ++k)
        if (ret.items[k].is_node()) specs[k].arg = ret.items[k].node->name();
}
} // namespace

std::vector<Node*> decomposable_nodes(const ExportedProgram& ep, const DecompTable& table) {
    std::vector<Node*> out;
    for (Node* n : ep.graph->nodes())
        if (table.find(*n)) out.push_back(n);
    return out;
}

namespace {
// Applies n's rule, then the rules of the nodes it created, until none is left
// (torch decomposes until every op is in the target opset: chunk -> split ->
// split_with_sizes). `created` gets the surviving new nodes, in graph order.
Status apply_rules(ExportedProgram& ep, const DecompTable& table, Node* n,
                   std::vector<Node*>& created, std::vector<const Node*>& erased,
                   std::set<const Node*>& functionalized, int depth) {
    const DecompRule* rule = table.find(*n);
    DecompContext ctx{ep, *ep.graph, n, {}, {}, nullptr, {}};
    Status applied = rule->apply(ctx);
    erased.insert(erased.end(), ctx.erased.begin(), ctx.erased.end());
    if (!applied.ok()) return applied;
    // A functionalized value decomposed further: what replaced it holds the new contents.
    if (functionalized.erase(n) && ctx.replacement) functionalized.insert(ctx.replacement);
    functionalized.insert(ctx.functionalized.begin(), ctx.functionalized.end());
    for (Node* m : ctx.created) {
        // A rule never creates its own op, so the depth only guards against a table bug.
        if (depth < 8 && table.find(*m)) {
            if (Status s = apply_rules(ep, table, m, created, erased, functionalized, depth + 1);
                !s.ok())
                return s;
        } else {
            created.push_back(m);
        }
    }
    return {};
}

// torch's run_decompositions retraces the program, so every call_function node
// is named afresh, in graph order, after its op (view, view_1, ...; any -> any_1).
// A multi-output op is unpacked right away into one getitem per output, so its
// unused outputs still take a name (getitem, [getitem_1, getitem_2], getitem_3).
std::string op_name_base(const Node& n) {
    const std::string& t = n.target();
    if (t.rfind("torch.ops.", 0) == 0) {
        size_t a = t.find('.', 10), b = a == std::string::npos ? a : t.find('.', a + 1);
        if (b != std::string::npos) return t.substr(a + 1, b - a - 1);
    } else if (t.rfind("operator.", 0) == 0) {
        return t.substr(9);
    }
    return n.name();
}

// Whether the op returns a view of its first argument (Tensor(a) in, Tensor(a) out).
bool is_view_op(const Node& n) {
    const OpSchema* s = n.schema();
    return s && !s->arguments.empty() && !s->returns.empty() &&
           !s->arguments[0].type.alias.empty() && !s->arguments[0].type.mutable_alias() &&
           !s->returns[0].type.alias.empty() && !s->returns[0].type.mutable_alias();
}

class RetraceNaming {
public:
    // `written`: the functionalized new contents of tensors written in place. A view of
    // one is made twice by the retrace's functionalization (the first, stale copy is
    // dropped), so it takes the second of two names (add_ then permute: permute_1).
    // Only views taken straight off such a value are modelled (a value that is itself a
    // view, written through a view of an intermediate, is write_into_view_base's, whose
    // names kRetraceSkip gives); a chain of views off it takes more names in torch (each
    // sync replays the chain).
    RetraceNaming(Graph& g, const std::set<const Node*>& written)
        : g_(g), nodes_(g.nodes()), written_(written) {}
    // Up to `count` more nodes; true once every node has its new name. The graph must
    // not change between calls.
    bool step(size_t count) {
        const size_t end_of = phase_ < 2 ? nodes_.size() : order_.size();
        const size_t end = std::min(end_of, at_ + count);
        for (; at_ < end; ++at_) {
            if (phase_ == 0) {
                if (nodes_[at_]->op() != Op::CallFunction) names_.reserve(nodes_[at_]->name());
            } else if (phase_ == 1) {
                name(nodes_[at_]);
            } else if (phase_ == 2) { // a new name may be another node's old one
                PT2LAB_CHECK(g_.force_name(order_[at_], "__retrace_" + std::to_string(at_)));
            } else {
                PT2LAB_CHECK(g_.force_name(order_[at_], name_of_[order_[at_]]));
            }
        }
        if (at_ < end_of) return false;
        at_ = 0;
        return ++phase_ == 4;
    }
    size_t done() const { return at_; }
    size_t total() const { return phase_ < 2 ? nodes_.size() : order_.size(); }

private:
    void name(Node* n) {
        if (n->op() != Op::CallFunction || name_of_.count(n)) return;
        order_.push_back(n);
        // names torch's trace gave to nodes it then dropped (kRetraceSkip), or the stale
        // first copy of a view of a tensor written in place
        auto skip = n->meta.other.find(kRetraceSkip);
        if (skip != n->meta.other.end()) {
            for (size_t at = 0; at <= skip->second.size();) {
                const size_t comma = std::min(skip->second.find(',', at), skip->second.size());
                names_.create_name(skip->second.substr(at, comma - at));
                at = comma + 1;
            }
            n->meta.other.erase(skip);
        } else if (is_view_op(*n) && !n->args().empty() && n->args()[0].is_node() &&
                   written_.count(n->args()[0].node) && !is_view_op(*n->args()[0].node)) {
            names_.create_name(op_name_base(*n));
        }
        name_of_[n] = names_.create_name(op_name_base(*n));
        if (n->meta.val.kind != MetaVal::Kind::Tuple || n->meta.val.items.empty()) return;
        std::vector<std::string> outputs;
        for (size_t k = 0; k < n->meta.val.items.size(); ++k)
            outputs.push_back(names_.create_name("getitem"));
        for (Node* u : n->users()) {
            if (!u->is(OpId::getitem) || u->args().size() < 2 || name_of_.count(u)) continue;
            const Argument& i = u->args()[1];
            if (i.kind != ArgKind::Int || i.i < 0 || size_t(i.i) >= outputs.size()) continue;
            name_of_[u] = outputs[static_cast<size_t>(i.i)];
            order_.push_back(u);
        }
    }

    Graph& g_;
    std::vector<Node*> nodes_;
    // 0: reserve the names of the nodes that keep theirs, 1: name the call_functions in
    // graph order, 2 and 3: rename them in two passes.
    int phase_ = 0;
    size_t at_ = 0;
    std::map<Node*, std::string> name_of_;
    std::vector<Node*> order_;
    Namespace names_;
    const std::set<const Node*>& written_;
};
} // namespace

namespace {

// One node's rule (and the rules of what it made), and the drop of its unused
// outputs. Leaves the program half-changed on error: callers keep a copy.
// `erased` gets the nodes after n that a rule erased (a multi-output op's readers).
Result<DecompStep> apply_one(ExportedProgram& ep, const DecompTable& table, Node* n,
                             std::vector<const Node*>* erased = nullptr,
                             std::set<const Node*>* functionalized = nullptr) {
    const DecompRule* rule = table.find(*n);
    if (!rule)
        return make_error("%" + n->name(),
                          "no decomposition rule for " + n->target() + " in this table");
    DecompStep step;
    step.node = n->name();
    step.rule = rule->summary;
    std::vector<Node*> created;
    std::vector<const Node*> gone;
    std::set<const Node*> own;
    Status applied =
        apply_rules(ep, table, n, created, gone, functionalized ? *functionalized : own, 0);
    if (erased) erased->insert(erased->end(), gone.begin(), gone.end());
    if (!applied.ok()) return applied.error();
    sync_output_specs(ep);
    // The rule's outputs nobody reads (getitem_1 ...) go, as the retrace's DCE drops them.
    std::vector<std::string> names;
    for (Node* m : created) names.push_back(m->name());
    std::vector<bool> dropped(created.size(), false);
    for (size_t k = created.size(); k-- > 0;) {
        Node* m = created[k];
        if (m->users().empty() && !is_impure(*m)) {
            Status s = ep.graph->erase_node(m);
            (void)s;
            dropped[k] = true;
        }
    }
    for (size_t k = 0; k < names.size(); ++k)
        (dropped[k] ? step.removed_unused : step.created).push_back(names[k]);
    return step;
}

} // namespace

Result<DecompStep> decompose_node(ExportedProgram& ep, const DecompTable& table, Node* n) {
    auto before = ep.graph->clone();
    GraphSignature sig_before = ep.signature;
    auto step = apply_one(ep, table, n);
    if (step.ok()) {
        if (Status s = ep.graph->lint(); !s.ok()) step = s.error();
    }
    if (!step.ok()) {
        ep.graph = std::move(before); // leave the program as it was
        ep.signature = sig_before;
    }
    return step;
}

struct Decomposing::Impl {
    ExportedProgram& ep;
    const DecompTable table;
    DecompReport report;
    std::vector<Node*> nodes;             // the graph's nodes before, in order
    std::vector<const Node*> erased;      // those of them a rule erased since (never visited)
    std::set<const Node*> functionalized; // new contents of tensors written in place
    size_t next = 0;
    std::unique_ptr<GraphLinting> linting;
    std::unique_ptr<RetraceNaming> naming;
    Stages stages;

    Impl(ExportedProgram& p, DecompTable t) : ep(p), table(std::move(t)) {
        // One pass, one lint at the end: a copy and a lint per node made this
        // quadratic (minutes for 10k nodes). On error the caller's copy is dropped.
        stages.add("apply the rules", [this](Stages::Clock::time_point) -> Result<bool> {
            if (next == 0 && nodes.empty()) {
                if (table.level != IrLevel::Training) ep.verifiers = {"ATEN"}; // torch's dialect
                nodes = ep.graph->nodes();
            }
            for (size_t end = std::min(nodes.size(), next + piece_size().nodes); next < end;
                 ++next) {
                Node* n = nodes[next];
                if (std::find(erased.begin(), erased.end(), n) != erased.end()) continue;
                if (!table.find(*n)) continue;
                auto step = apply_one(ep, table, n, &erased, &functionalized);
                if (!step.ok()) return step.error();
                report.steps.push_back(step.take());
            }
            stages.work_done = next;
            stages.work_total = nodes.size();
            return next >= nodes.size();
        });
        stages.add("lint", [this](Stages::Clock::time_point) -> Result<bool> {
            if (!linting) linting = std::make_unique<GraphLinting>(*ep.graph);
            const bool over = linting->step(4 * piece_size().nodes);
            stages.work_done = linting->done();
            stages.work_total = ep.graph->size();
            if (!over) return false;
            Status s = linting->status();
            linting.reset();
            if (!s.ok()) return s.error();
            return true;
        });
        if (table.level != IrLevel::Training)
            stages.add("name the nodes afresh, as the retrace does",
                       [this](Stages::Clock::time_point) -> Result<bool> {
                           if (!naming)
                               naming = std::make_unique<RetraceNaming>(*ep.graph, functionalized);
                           const bool over = naming->step(piece_size().nodes);
                           stages.work_done = naming->done();
                           stages.work_total = naming->total();
                           if (!over) return false;
                           naming.reset();
                           sync_output_specs(ep);
                           return true;
                       });
        stages.add(
            "list the ops kept without a rule", [this](Stages::Clock::time_point) -> Result<bool> {
                for (Node* n : ep.graph->nodes()) {
                    if (n->op() != Op::CallFunction) continue;
                    bool outside = table.level == IrLevel::CoreAten
                                       ? !in_core_aten(*n)
                                       : (!n->schema() || n->schema()->is_mutable());
                    if (table.level != IrLevel::Training && outside)
                        report.kept_without_rule.push_back(n->name() + " (" + n->target() + ")");
                }
                return true;
            });
    }
};

Decomposing::Decomposing(ExportedProgram& ep, DecompTable table)
    : impl_(std::make_unique<Impl>(ep, std::move(table))) {
}
Decomposing::~Decomposing() = default;
Result<bool> Decomposing::step(Clock::time_point deadline) {
    return impl_->stages.step(deadline);
}
std::string Decomposing::what() const {
    return "run_decompositions: " + impl_->stages.what();
}
DecompReport Decomposing::take() {
    PT2LAB_CHECK(impl_->stages.done());
    return std::move(impl_->report);
}

Result<DecompReport> run_decompositions(ExportedProgram& ep, const DecompTable& table) {
    Decomposing d(ep, table);
    auto r = d.step(Stages::Clock::time_point::max());
    if (!r.ok()) return r.error();
    return d.take();
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
