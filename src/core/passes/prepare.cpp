// prepare_pt2e with XNNPACKQuantizer().set_global(get_symmetric_quantization_config()),
// step for step as torch.ao does it (torch 2.6, the code torchao took over):
//   1. _fuse_conv_bn_ (fold_bn.cpp) and transform_for_annotation (scalar add/mul
//      operands become _tensor_constant_N attributes);
//   2. the annotators in XNNPACKQuantizer.STATIC_OPS order, then propagate_annotation
//      (ops that share their input's quantization);
//   3. prepare(): every annotated input edge and output gets a spec; SharedQuantizationSpec
//      and implicit sharing (an output and the edges that read it) are merged by union-find
//      into groups; each group is one observer instance; walking the original nodes, input
//      observers go after their producers and output observers after their node, named
//      activation_post_process_<first unused N>.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "passes/pt2e.h"
#include "util/check.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {

// An input edge (arg -> node) or a node's output (arg == nullptr).
struct EdgeOrNode {
    Node* arg = nullptr;
    Node* node = nullptr;
    bool operator<(const EdgeOrNode& o) const {
        return std::pair(arg, node) < std::pair(o.arg, o.node);
    }
    bool operator==(const EdgeOrNode& o) const { return arg == o.arg && node == o.node; }
};
EdgeOrNode output_of(Node* n) {
    return {nullptr, n};
}

// QuantizationSpec (an observer config), None (left float, like the bias), or
// SharedQuantizationSpec(edge_or_node).
struct QSpec {
    enum class Kind { Config, None, Shared } kind = Kind::None;
    ObserverConfig config;
    EdgeOrNode shared;
    std::optional<int> ch_axis; // the weight spec's ch_axis=0 (per-tensor all the same)
};
QSpec spec_of(const ObserverConfig& c, std::optional<int> ch_axis = std::nullopt) {
    return {QSpec::Kind::Config, c, {}, ch_axis};
}
QSpec no_spec() {
    return {};
}
QSpec shared_with(EdgeOrNode e) {
    return {QSpec::Kind::Shared, {}, e, std::nullopt};
}

// repr() of the torch.ao objects, as torch 2.6 prints them (a Node prints as its name).
std::string edge_repr(const EdgeOrNode& e) {
    return e.arg ? "(" + e.arg->name() + ", " + e.node->name() + ")" : e.node->name();
}
std::string qspec_repr(const QSpec& q) {
    switch (q.kind) {
    case QSpec::Kind::None: return "None";
    case QSpec::Kind::Shared:
        return "SharedQuantizationSpec(edge_or_node=" + edge_repr(q.shared) + ")";
    case QSpec::Kind::Config: break;
    }
    const ObserverConfig& c = q.config;
    return std::string("QuantizationSpec(dtype=torch.") +
           (c.dtype == ScalarType::Byte ? "uint8" : "int8") +
           ", observer_or_fake_quant_ctr=functools.partial(<class "
           "'torch.ao.quantization.observer." +
           c.kind_name() + "'>, eps=" + py_float_repr(c.eps) +
           "){}, quant_min=" + std::to_string(c.quant_min) +
           ", quant_max=" + std::to_string(c.quant_max) + ", qscheme=torch." +
           (c.qscheme == QScheme::PerTensorAffine ? "per_tensor_affine" : "per_tensor_symmetric") +
           ", ch_axis=" + (q.ch_axis ? std::to_string(*q.ch_axis) : "None") + ", is_dynamic=False)";
}

// QuantizationAnnotation: what the quantizer writes into node.meta["quantization_annotation"].
struct Annotation {
    std::vector<std::pair<Node*, QSpec>> inputs; // input_qspec_map, in insertion order
    std::optional<QSpec> output;
    bool annotated = false;
    std::string repr() const {
        std::string s = "QuantizationAnnotation(input_qspec_map={";
        for (size_t k = 0; k < inputs.size(); ++k)
            s += (k ? ", " : "") + inputs[k].first->name() + ": " + qspec_repr(inputs[k].second);
        return s + "}, output_qspec=" + (output ? qspec_repr(*output) : "None") +
               ", allow_implicit_sharing=True, _annotated=" + (annotated ? "True" : "False") + ")";
    }
    void set_input(Node* n, QSpec q) {
        for (auto& [k, v] : inputs)
            if (k == n) {
                v = q;
                return;
            }
        inputs.emplace_back(n, q);
    }
};

bool target_is(const Node& n, std::initializer_list<const char*> targets) {
    if (n.op() != Op::CallFunction) return false;
    for (const char* t : targets)
        if (n.target() == t) return true;
    return false;
}
const std::initializer_list<const char*> kRelu = {"torch.ops.aten.relu.default",
                                                  "torch.ops.aten.relu_.default"};
const std::initializer_list<const char*> kConv = {"torch.ops.aten.conv1d.default",
                                                  "torch.ops.aten.conv2d.default"};
const std::initializer_list<const char*> kLinear = {"torch.ops.aten.linear.default"};
const std::initializer_list<const char*> kAdd = {"torch.ops.aten.add.Tensor",
                                                 "torch.ops.aten.add_.Tensor"};
const std::initializer_list<const char*> kMul = {"torch.ops.aten.mul.Tensor",
                                                 "torch.ops.aten.mul_.Tensor"};
// _is_share_obs_or_fq_op
const std::initializer_list<const char*> kShareOps = {
    "torch.ops.aten.relu.default",
    "torch.ops.aten.hardtanh.default",
    "torch.ops.aten.hardtanh_.default",
    "torch.ops.aten.max_pool2d.default",
    "torch.ops.aten.mean.default",
    "torch.ops.aten.mean.dim",
    "torch.ops.aten.permute.default",
    "torch.ops.aten.permute_copy.default",
    "torch.ops.aten.squeeze.dim",
    "torch.ops.aten.squeeze_copy.dim",
    "torch.ops.aten.adaptive_avg_pool2d.default",
    "torch.ops.aten.view_copy.default",
    "torch.ops.aten.view.default",
    "torch.ops.aten.slice_copy.Tensor",
    "torch.ops.aten.flatten.using_ints",
};

// Erases entries of `c` (a map from its front, a vector from its back) while `budget`
// lasts, taking them off it; true when `c` is empty. A 10k-node graph's annotations
// and specs freed at once took ~8 ms natively.
template <class Map> bool shed_some(Map& c, size_t& budget) {
    for (; budget > 0 && !c.empty(); --budget) c.erase(c.begin());
    return c.empty();
}
template <class T> bool shed_some(std::vector<T>& c, size_t& budget) {
    for (; budget > 0 && !c.empty(); --budget) c.pop_back();
    return c.empty();
}

Node* node_arg(const Node& n, size_t k) {
    return k < n.args().size() && n.args()[k].is_node() ? n.args()[k].node : nullptr;
}

class Annotator {
public:
    explicit Annotator(GraphModule& gm) : gm_(gm) {}

    std::map<Node*, Annotation> ann;
    std::vector<std::string> patterns;

    // XNNPACKQuantizer's annotators in its order, then the shared specs: step k
    // walks the graph once, and walks it in pieces (visit one node of it at a time),
    // so a caller can spread a 10k-node graph over frames.
    static constexpr int kSteps = 11;
    void visit(int k, Node* n) {
        switch (k) {
        case 0: op_relu(n, kLinear, "linear"); break;
        case 1: plain(n, kLinear, "linear"); break;
        case 2: op_relu(n, kConv, "conv"); break;
        case 3: plain(n, kConv, "conv"); break;
        case 4: adaptive_avg_pool2d(n); break;
        case 5: binary_relu(n, kAdd, "add"); break;
        case 6: binary(n, kAdd, "add"); break;
        case 7: binary_relu(n, kMul, "mul"); break;
        case 8: binary(n, kMul, "mul"); break;
        case 9: cat(n); break;
        default: propagate(n); break;
        }
    }

private:
    GraphModule& gm_;
    const ObserverConfig act_ = ObserverConfig::activation(), wt_ = ObserverConfig::weight();

    bool is_annotated(std::initializer_list<Node*> nodes) {
        for (Node* n : nodes)
            if (n && ann.count(n) && ann[n].annotated) return true;
        return false;
    }
    void mark(std::initializer_list<Node*> nodes) {
        for (Node* n : nodes)
            if (n) ann[n].annotated = true;
    }
    // The float output a quantized add/mul input needs (_is_input_non_float_tensor).
    static bool float_tensor(const Node& n) {
        return n.meta.val.is_tensor() && n.meta.val.tensor.dtype == ScalarType::Float;
    }

    // _annotate_linear / _annotate_conv: inputs (act, weight, bias: left float), output act.
    void plain(Node* n, std::initializer_list<const char*> targets, const char* what) {
        if (!target_is(*n, targets)) return;
        Node *x = node_arg(*n, 0), *w = node_arg(*n, 1), *b = node_arg(*n, 2);
        if (!x || !w) return;
        // _annotate_linear looks at the node alone, _annotate_conv at node, weight, bias
        bool linear = target_is(*n, kLinear);
        if (linear ? is_annotated({n}) : is_annotated({n, w, b})) return;
        Annotation a;
        a.set_input(x, spec_of(act_));
        a.set_input(w, spec_of(wt_, 0));
        if (b) a.set_input(b, no_spec());
        a.output = spec_of(act_);
        a.annotated = true;
        ann[n] = a;
        mark({w, b});
        patterns.push_back(std::string(what) + " (%" + n->name() + ")");
    }

    // _annotate_linear_relu / _do_annotate_conv_relu: the op's inputs, the relu's output.
    void op_relu(Node* relu, std::initializer_list<const char*> targets, const char* what) {
        if (!target_is(*relu, kRelu)) return;
        Node* op = node_arg(*relu, 0);
        if (!op || !target_is(*op, targets) || op->users().size() > 1) return;
        Node *x = node_arg(*op, 0), *w = node_arg(*op, 1), *b = node_arg(*op, 2);
        if (!x || !w) return;
        if (is_annotated({relu, op, w, b})) return;
        Annotation a;
        a.set_input(x, spec_of(act_));
        a.set_input(w, spec_of(wt_, 0));
        if (b) a.set_input(b, no_spec());
        a.annotated = true;
        mark({w, b});
        fuse_relu(op, a, relu, what);
    }
    // An op -> relu pair: the op takes annotation `a` (its inputs), the relu the
    // output observer of the pair.
    void fuse_relu(Node* op, const Annotation& a, Node* relu, const char* what) {
        ann[op] = a;
        Annotation r;
        r.output = spec_of(act_);
        r.annotated = true;
        ann[relu] = r;
        patterns.push_back(std::string(what) + " -> relu (%" + op->name() + " -> %" + relu->name() +
                           ")");
    }
    // _annotate_adaptive_avg_pool2d: input shared with its producer's output when that is
    // annotated (else an activation spec), output shared with the input edge.
    void adaptive_avg_pool2d(Node* pool) {
        if (!target_is(*pool, {"torch.ops.aten.adaptive_avg_pool2d.default"})) return;
        if (is_annotated({pool})) return;
        Node* x = node_arg(*pool, 0);
        if (!x) return;
        bool producer_out = ann.count(x) && ann[x].annotated && ann[x].output &&
                            ann[x].output->kind != QSpec::Kind::None;
        Annotation a;
        a.set_input(x, producer_out ? shared_with(output_of(x)) : spec_of(act_));
        a.output = shared_with({x, pool});
        a.annotated = true;
        ann[pool] = a;
        patterns.push_back("adaptive_avg_pool2d (%" + pool->name() + ")");
    }

    // _is_input_large_scalar: a one-element attribute past torch.histc's upper bound.
    bool large_scalar(const Node& in) const {
        if (in.op() != Op::GetAttr) return false;
        auto t = gm_.attrs.find(in.target());
        if (t == gm_.attrs.end() || t->second->numel() != 1 ||
            t->second->dtype != ScalarType::Float)
            return false;
        return std::fabs(t->second->f32()[0]) > 3.4028235e15f;
    }
    // Tensor inputs of add/mul, or false when the op is left alone.
    bool binary_inputs(const Node& op, std::vector<Node*>& inputs) {
        for (size_t k = 0; k < 2 && k < op.args().size(); ++k) {
            if (!op.args()[k].is_node()) continue;
            Node* in = op.args()[k].node;
            if (large_scalar(*in) || !float_tensor(*in)) return false;
            inputs.push_back(in);
        }
        return true;
    }
    void binary_relu(Node* relu, std::initializer_list<const char*> targets, const char* what) {
        if (!target_is(*relu, kRelu)) return;
        Node* op = node_arg(*relu, 0);
        if (!op || !target_is(*op, targets) || op->users().size() > 1) return;
        if (is_annotated({relu, op})) return;
        std::vector<Node*> inputs;
        if (!binary_inputs(*op, inputs)) return;
        Annotation a;
        for (Node* in : inputs) a.set_input(in, spec_of(act_));
        a.annotated = true;
        fuse_relu(op, a, relu, what);
    }
    void binary(Node* op, std::initializer_list<const char*> targets, const char* what) {
        if (!target_is(*op, targets) || is_annotated({op})) return;
        std::vector<Node*> inputs;
        if (!binary_inputs(*op, inputs)) return;
        Annotation a;
        for (Node* in : inputs) a.set_input(in, spec_of(act_));
        a.output = spec_of(act_);
        a.annotated = true;
        ann[op] = a;
        patterns.push_back(std::string(what) + " (%" + op->name() + ")");
    }

    // _annotate_cat: the first tensor input gets an activation spec; every other input
    // and the output share the (first input, cat) edge, so one observer instance sees all.
    // torch.ao picks the cats by source partition (torch.cat); an export's aten.cat.default
    // comes from torch.cat (torch.concat / concatenate trace to the same op).
    void cat(Node* n) {
        if (!target_is(*n, {"torch.ops.aten.cat.default"}) || is_annotated({n})) return;
        if (n->args().empty() || !n->args()[0].is_sequence()) return;
        const std::vector<Argument>& inputs = n->args()[0].items;
        if (inputs.empty()) return;
        Node* first = inputs[0].is_node() ? inputs[0].node : nullptr;
        Annotation a;
        if (first) a.set_input(first, spec_of(act_));
        const QSpec shared = shared_with({first, n});
        for (size_t k = 1; k < inputs.size(); ++k) {
            if (!inputs[k].is_node()) continue;
            bool seen = false;
            for (const auto& [in, q] : a.inputs) seen |= in == inputs[k].node;
            if (!seen) a.set_input(inputs[k].node, shared);
        }
        a.output = shared;
        a.annotated = true;
        ann[n] = a;
        patterns.push_back("cat (%" + n->name() + ")");
    }

    // propagate_annotation: an op that keeps its input's quantization shares it.
    void propagate(Node* n) {
        if (!target_is(*n, kShareOps)) return;
        Node* prev = node_arg(*n, 0);
        if (!prev || !ann.count(prev) || !ann[prev].output ||
            ann[prev].output->kind == QSpec::Kind::None)
            return;
        if (ann.count(n) && ann[n].annotated) return;
        Annotation a;
        a.set_input(prev, shared_with(output_of(prev)));
        a.output = shared_with(output_of(prev));
        a.annotated = true;
        ann[n] = a;
    }
};

// _convert_scalars_to_attrs: a Python number operand of add/mul becomes a 0-d float32
// buffer _tensor_constant_N read by a get_attr inserted before the op. One node at a time.
void scalar_to_attr(GraphModule& gm, Node* n) {
    Graph& g = *gm.graph;
    if (!target_is(*n, {"torch.ops.aten.add.Tensor", "torch.ops.aten.mul.Tensor"})) return;
    std::vector<Argument> args = n->args();
    bool changed = false;
    for (Argument& a : args) {
        if (a.is_node() || (a.kind != ArgKind::Float && a.kind != ArgKind::Int)) continue;
        std::string name = gm.new_submodule_name("_tensor_constant_");
        auto t = std::make_shared<TensorData>();
        t->dtype = ScalarType::Float;
        float v = static_cast<float>(a.kind == ArgKind::Float ? a.f : double(a.i));
        std::vector<uint8_t> b(sizeof v);
        std::memcpy(b.data(), &v, sizeof v);
        t->bytes = Bytes(std::move(b));
        gm.attrs[name] = t;
        Node* attr;
        {
            auto at = g.inserting_before(n);
            attr = g.get_attr(name);
        }
        attr->meta.val.kind = MetaVal::Kind::Tensor;
        attr->meta.val.tensor.dtype = ScalarType::Float;
        a = Argument::from_node(attr);
        changed = true;
    }
    if (changed) n->set_args(args);
}

// prepare(): specs per edge/node, groups by union-find, one observer per group.
class Placer {
public:
    Placer(GraphModule& gm, std::map<Node*, Annotation>& ann) : gm_(gm), ann_(ann) {}

    // The specs and their sharing groups, for the nodes as they are now.
    // Collects and groups the specs in pieces of about `count` nodes or specs (a 10k-node
    // graph has ~20k specs: one piece of it all took 25-30 ms natively); true once done.
    bool group_specs(size_t count) {
        auto chunk = [&](size_t total, auto&& one) {
            for (size_t end = std::min(total, at_ + count); at_ < end; ++at_) one(at_);
            if (at_ < total) return false;
            at_ = 0;
            phase_ = static_cast<Grouping>(static_cast<int>(phase_) + 1);
            return phase_ == Grouping::Done;
        };
        switch (phase_) {
        case Grouping::Collect:
            if (at_ == 0 && before_.empty()) before_ = gm_.graph->nodes();
            return chunk(before_.size(), [&](size_t k) { collect_spec(before_[k]); });
        case Grouping::Index:
            return chunk(specs_.size(), [&](size_t k) { spec_index_.emplace(specs_[k].first, k); });
        case Grouping::Parents:
            return chunk(specs_.size(),
                         [&](size_t k) { parent_.emplace(specs_[k].first, specs_[k].first); });
        case Grouping::Unite: return chunk(specs_.size(), [&](size_t k) { unite_spec(k); });
        case Grouping::Number: {
            const bool over = chunk(specs_.size(), [&](size_t k) { number_spec(k); });
            if (over) root_id_.clear();
            return over;
        }
        case Grouping::Done: return true;
        }
        return true;
    }
    // After place(): lets go of what grouping built, up to `budget` entries at a time;
    // true once it is all gone.
    bool shed(size_t& budget) {
        return shed_some(specs_, budget) && shed_some(spec_index_, budget) &&
               shed_some(parent_, budget) && shed_some(group_, budget) &&
               shed_some(before_, budget);
    }
    // What group_specs() walks now, and how far it is.
    const char* grouping_unit() const { return phase_ == Grouping::Collect ? "node" : "spec"; }
    size_t grouping_done() const { return at_; }
    size_t grouping_total() const {
        return phase_ == Grouping::Collect ? before_.size() : specs_.size();
    }
    // Observers for up to `count` more of those nodes; true once all have theirs.
    bool place(size_t count, PrepareReport& report) {
        for (size_t end = std::min(before_.size(), next_ + count); next_ < end; ++next_) {
            Node* n = before_[next_];
            auto a = ann_.find(n);
            if (a == ann_.end()) continue;
            n->meta.other[kAnnotationKey] = a->second.repr(); // the weights' empty ones too
            input_observers(n, report);
            output_observer(n, report);
        }
        return next_ >= before_.size();
    }
    size_t placed() const { return next_; }
    size_t nodes() const { return before_.size(); }

private:
    GraphModule& gm_;
    std::map<Node*, Annotation>& ann_;
    std::vector<Node*> before_;                       // the nodes before any observer, in order
    size_t next_ = 0;                                 // the next of them to place observers for
    std::vector<std::pair<EdgeOrNode, QSpec>> specs_; // edge_or_node_to_qspec, in order
    std::map<EdgeOrNode, size_t> spec_index_;         // its first entry for each key
    std::map<EdgeOrNode, EdgeOrNode> parent_;         // shared_with_map
    std::map<EdgeOrNode, int> group_;                 // edge_or_node_to_group_id
    std::map<int, std::string> instance_;             // group -> first observer name
    int next_name_ = 0;                               // new_submodule_name resumes here
    std::map<std::string, int> observer_group_;       // observer name -> group
    // group_specs() in pieces: the phase it is in and its place there.
    enum class Grouping { Collect, Index, Parents, Unite, Number, Done };
    Grouping phase_ = Grouping::Collect;
    size_t at_ = 0;
    std::map<EdgeOrNode, int> root_id_; // Number: each group's root -> its id
    int next_group_ = 0;

    const QSpec* spec(const EdgeOrNode& e) const {
        auto it = spec_index_.find(e);
        return it == spec_index_.end() ? nullptr : &specs_[it->second].second;
    }
    void collect_spec(Node* n) {
        auto a = ann_.find(n);
        if (a == ann_.end()) return;
        for (const auto& [in, q] : a->second.inputs) specs_.emplace_back(EdgeOrNode{in, n}, q);
        if (a->second.output) specs_.emplace_back(output_of(n), *a->second.output);
    }
    // Iterative, with path compression: a chain of thousands of shared specs must not
    // recurse as deep as it is long.
    EdgeOrNode root(EdgeOrNode e) {
        EdgeOrNode r = e;
        for (EdgeOrNode p = parent_of(r); !(p == r); p = parent_of(r)) r = p;
        while (!(e == r)) {
            EdgeOrNode next = parent_of(e);
            parent_[e] = r;
            e = next;
        }
        return r;
    }
    // Every edge or node with a spec has a parent (group_specs() puts them all in first).
    const EdgeOrNode& parent_of(const EdgeOrNode& e) const {
        auto it = parent_.find(e);
        PT2LAB_CHECK(it != parent_.end());
        return it->second;
    }
    void unite(EdgeOrNode parent, EdgeOrNode child) {
        EdgeOrNode rp = root(parent), rc = root(child);
        parent_[rc] = rp;
    }
    // _unwrap_shared_qspec
    const QSpec* unwrap(const QSpec* q) {
        while (q && q->kind == QSpec::Kind::Shared) q = spec(root(q->shared));
        return q;
    }
    static bool same_attrs(const QSpec* a, const QSpec* b) {
        if (!a || !b || a->kind != QSpec::Kind::Config || b->kind != QSpec::Kind::Config)
            return false;
        return a->config.dtype == b->config.dtype && a->config.quant_min == b->config.quant_min &&
               a->config.quant_max == b->config.quant_max && a->config.qscheme == b->config.qscheme;
    }
    void union_input_edge_with(EdgeOrNode edge, const QSpec* edge_root, EdgeOrNode other) {
        const QSpec* q = spec(other);
        if (!q) return;
        if (same_attrs(unwrap(q), edge_root)) unite(other, edge);
    }
    // Every spec's own parent first (Parents), then each spec's unions in order:
    void unite_spec(size_t k) {
        const auto& [e, q] = specs_[k];
        if (e.arg) { // an input edge: implicit sharing with the producer's other readers
            const QSpec* edge_root = unwrap(&q);
            for (Node* user : e.arg->users())
                if (user != e.node) union_input_edge_with(e, edge_root, {e.arg, user});
            union_input_edge_with(e, edge_root, output_of(e.arg));
        }
        if (q.kind == QSpec::Kind::Shared) unite(q.shared, e);
    }
    // then the groups numbered in the order their first spec comes.
    void number_spec(size_t k) {
        const EdgeOrNode& e = specs_[k].first;
        EdgeOrNode r = root(e);
        auto [it, added] = root_id_.emplace(r, next_group_);
        if (added) ++next_group_;
        group_[e] = it->second;
    }
    // The group's observer config (its root spec), or none when the edge/node stays float.
    std::optional<std::pair<int, ObserverConfig>> observer_for(const EdgeOrNode& e) {
        const QSpec* q = unwrap(spec(e));
        if (!q || q->kind != QSpec::Kind::Config) return std::nullopt;
        auto g = group_.find(e);
        PT2LAB_CHECK(g != group_.end()); // group_specs() numbered every edge or node with a spec
        return std::make_pair(g->second, q->config);
    }
    bool is_observer_node(const Node* n) const {
        if (n->op() != Op::CallModule) return false;
        auto it = gm_.submodules.find(n->target());
        return it != gm_.submodules.end() && it->second.observer.has_value();
    }
    // _insert_obs_or_fq: a call_module after `after`, for the group's instance.
    Node* insert(Node* after, int gid, const ObserverConfig& cfg, const std::string& role,
                 Node* observed, PrepareReport& report) {
        Graph& g = *gm_.graph;
        std::string name = gm_.new_submodule_name("activation_post_process_", &next_name_);
        Submodule sub{cfg.kind_name(), false, cfg, {}};
        auto inst = instance_.find(gid);
        if (inst != instance_.end())
            sub.shares = inst->second;
        else
            instance_[gid] = name;
        gm_.submodules[name] = sub;
        observer_group_[name] = gid;
        Node* obs;
        {
            auto at = g.inserting_after(after);
            obs = g.call_module(name, {Argument::from_node(after)}, {}, name);
        }
        obs->meta.val = after->meta.val;
        obs->meta.nn_module_stack = after->meta.nn_module_stack;
        report.observers.push_back(
            {name, observed->name(),
             role + (sub.shares.empty() ? "" : ", shares the instance of %" + sub.shares), cfg});
        return obs;
    }
    // _maybe_insert_input_observer_for_arg_or_kwarg for one argument value.
    Argument input_arg(Node* n, const Argument& a, PrepareReport& report) {
        if (a.kind == ArgKind::List || a.kind == ArgKind::Tuple) {
            Argument out = a;
            for (Argument& x : out.items) x = input_arg(n, x, report);
            return out;
        }
        if (!a.is_node()) return a;
        Node* arg = a.node;
        Node* original = arg;
        while (is_observer_node(original)) original = original->args()[0].node;
        EdgeOrNode edge{original, n};
        if (!spec(edge)) return a;
        auto obs = observer_for(edge);
        if (!obs) return a;
        if (spec(output_of(original))) {
            auto out = observer_for(output_of(original));
            if (out && out->first == obs->first) return a; // the output's observer serves
        }
        for (Node* u : arg->users())
            if (is_observer_node(u) && observer_group_.count(u->target()) &&
                observer_group_[u->target()] == obs->first)
                return Argument::from_node(u);
        std::string role =
            (n->args().size() > 1 && n->args()[1].is_node() && n->args()[1].node == original &&
             obs->second.qscheme == QScheme::PerTensorSymmetric)
                ? "weight of %" + n->name()
                : "input of %" + n->name();
        return Argument::from_node(insert(arg, obs->first, obs->second, role, original, report));
    }
    void input_observers(Node* n, PrepareReport& report) {
        std::vector<Argument> args;
        for (const Argument& a : n->args()) args.push_back(input_arg(n, a, report));
        n->set_args(args);
    }
    void output_observer(Node* n, PrepareReport& report) {
        if (!n->meta.val.is_tensor() || !spec(output_of(n))) return;
        auto obs = observer_for(output_of(n));
        if (!obs) return;
        std::vector<Node*> users = n->users();
        Node* o = insert(n, obs->first, obs->second, "output of %" + n->name(), n, report);
        for (Node* u : users)
            if (u != o) u->replace_input_with(n, o);
    }
};

} // namespace

Result<Node*> insert_observer(GraphModule& gm, Node* node, const ObserverConfig& cfg) {
    Graph& g = *gm.graph;
    std::string name = gm.new_submodule_name("activation_post_process_");
    gm.submodules[name] = Submodule{cfg.kind_name(), false, cfg, {}};
    std::vector<Node*> users = node->users();
    Node* obs;
    {
        auto at = g.inserting_after(node);
        obs = g.call_module(name, {Argument::from_node(node)}, {}, name);
    }
    obs->meta.val = node->meta.val;
    obs->meta.nn_module_stack = node->meta.nn_module_stack;
    for (Node* u : users)
        if (u != obs) u->replace_input_with(node, obs);
    return obs;
}

struct Preparing::Impl {
    GraphModule& gm;
    PrepareReport report;
    Annotator annotator;
    Placer placer;
    std::unique_ptr<GraphCloning> snapshot; // recompile's copy of the graph
    std::vector<Node*> nodes;               // fold, then annotate: the graph's nodes, in order
    size_t next = 0;                        // the next of them
    int annotated = 0;                      // annotator steps done
    Stages stages;

    explicit Impl(GraphModule& m) : gm(m), annotator(m), placer(m, annotator.ann) {
        // fold_conv_bn, a piece of about piece_size().elements weights at a time; its
        // recompile is left to the one at the end.
        stages.add("fold BatchNorm into conv", [this](Stages::Clock::time_point) -> Result<bool> {
            if (nodes.empty()) nodes = gm.graph->nodes();
            int64_t elements = 0;
            for (size_t end = std::min(nodes.size(), next + piece_size().nodes);
                 next < end && elements < piece_size().elements; ++next)
                if (Status s = fold_bn_node(gm, nodes[next], report.fold, &elements); !s.ok())
                    return s.error();
            stages.work_done = next;
            stages.work_total = nodes.size();
            if (next < nodes.size()) return false;
            nodes = {}; // folding erased some: the stages after take the graph anew
            next = 0;
            return true;
        });
        add_lint(stages, gm);
        stages.add("eliminate dead code", [this](Stages::Clock::time_point) -> Result<bool> {
            if (report.fold.folded.empty()) return true;
            auto dce = gm.eliminate_dead_code(false); // linted just before
            if (!dce.ok()) return dce.error();
            return true;
        });
        // _convert_scalars_to_attrs, then the annotators, each a walk of the graph in
        // pieces of piece_size().nodes nodes.
        stages.add("turn scalar operands into attributes",
                   [this](Stages::Clock::time_point) -> Result<bool> {
                       if (nodes.empty()) nodes = gm.graph->nodes();
                       for (size_t end = std::min(nodes.size(), next + piece_size().nodes);
                            next < end; ++next)
                           scalar_to_attr(gm, nodes[next]);
                       stages.work_done = next;
                       stages.work_total = nodes.size();
                       if (next < nodes.size()) return false;
                       nodes = gm.graph->nodes(); // with the get_attrs it inserted
                       next = 0;
                       return true;
                   });
        stages.add("annotate (XNNPACKQuantizer)",
                   [this](Stages::Clock::time_point) -> Result<bool> {
                       for (size_t end = std::min(nodes.size(), next + piece_size().nodes);
                            next < end; ++next)
                           annotator.visit(annotated, nodes[next]);
                       if (next >= nodes.size()) next = 0, ++annotated;
                       stages.work_unit = "node";
                       stages.work_done = uint64_t(annotated) * nodes.size() + next;
                       stages.work_total = uint64_t(Annotator::kSteps) * nodes.size();
                       if (annotated < Annotator::kSteps) return false;
                       report.patterns = annotator.patterns;
                       nodes = {};
                       return true;
                   });
        stages.add("group the specs", [this](Stages::Clock::time_point) -> Result<bool> {
            const bool over = placer.group_specs(piece_size().nodes);
            stages.work_unit = placer.grouping_unit();
            stages.work_done = placer.grouping_done();
            stages.work_total = placer.grouping_total();
            return over;
        });
        stages.add("place observers", [this](Stages::Clock::time_point) -> Result<bool> {
            const bool over = placer.place(piece_size().nodes, report);
            stages.work_done = placer.placed();
            stages.work_total = placer.nodes();
            return over;
        });
        stages.add("let go of the annotations", [this](Stages::Clock::time_point) -> Result<bool> {
            size_t budget = 4 * piece_size().nodes;
            return shed_some(annotator.ann, budget) && placer.shed(budget);
        });
        add_lint(stages, gm);
        add_recompile(stages, gm, snapshot);
    }
};

void add_lint(Stages& stages, GraphModule& gm) {
    auto linting = std::make_shared<std::unique_ptr<ModuleLinting>>();
    stages.add("lint", [&stages, &gm, linting](Stages::Clock::time_point) -> Result<bool> {
        std::unique_ptr<ModuleLinting>& l = *linting;
        if (!l) l = std::make_unique<ModuleLinting>(gm);
        const bool over = l->step(4 * piece_size().nodes);
        stages.work_done = l->done();
        stages.work_total = gm.graph->size();
        if (!over) return false;
        Status s = l->status();
        l.reset();
        if (!s.ok()) return s.error();
        return true;
    });
}

void add_recompile(Stages& stages, GraphModule& gm, std::unique_ptr<GraphCloning>& snapshot) {
    stages.add("recompile", [&stages, &gm, &snapshot](Stages::Clock::time_point) -> Result<bool> {
        if (!snapshot) snapshot = std::make_unique<GraphCloning>(*gm.graph);
        if (!snapshot->step(piece_size().nodes)) {
            stages.work_done =
                std::min(stages.work_done + piece_size().nodes, uint64_t(gm.graph->size()));
            stages.work_total = gm.graph->size();
            return false;
        }
        gm.recompile_with(snapshot->take());
        snapshot.reset();
        return true;
    });
}

Preparing::Preparing(GraphModule& gm) : impl_(std::make_unique<Impl>(gm)) {
}
Preparing::~Preparing() = default;
Result<bool> Preparing::step(Clock::time_point deadline) {
    return impl_->stages.step(deadline);
}
std::string Preparing::what() const {
    return "prepare_pt2e: " + impl_->stages.what();
}
PrepareReport Preparing::take() {
    PT2LAB_CHECK(impl_->stages.done());
    return std::move(impl_->report);
}

bool has_valid_annotation(const Node& n) {
    auto it = n.meta.other.find(kAnnotationKey);
    const char* empty = "QuantizationAnnotation(input_qspec_map={}, output_qspec=None,";
    return it != n.meta.other.end() && it->second.rfind(empty, 0) != 0;
}

Result<PrepareReport> prepare_pt2e(GraphModule& gm) {
    Preparing p(gm);
    auto r = p.step(Stages::Clock::time_point::max());
    if (!r.ok()) return r.error();
    return p.take();
}

Status calibrate(const GraphModule& gm, ModuleState& state,
                 const std::vector<std::vector<Tensor>>& batches) {
    for (const auto& batch : batches) {
        auto r = run_module(gm, state, batch);
        if (!r.ok()) return r.error();
    }
    return {};
}

std::string PrepareReport::str() const {
    return lines(0, line_count());
}

size_t PrepareReport::line_count() const {
    return fold.folded.size() + fold.new_parameters.size() + fold.skipped.size() + patterns.size() +
           observers.size();
}

std::string PrepareReport::lines(size_t from, size_t to) const {
    std::string s;
    size_t at = 0; // the first line of the part below
    auto part = [&](const auto& items, auto&& line) {
        for (size_t k = from > at ? from - at : 0; k < items.size() && at + k < to; ++k)
            line(items[k]);
        at += items.size();
    };
    part(fold.folded, [&](const std::string& f) { s += "  folded " + f + "\n"; });
    part(fold.new_parameters, [&](const std::string& p) { s += "  new parameter " + p + "\n"; });
    part(fold.skipped, [&](const std::string& k) { s += "  not folded: " + k + "\n"; });
    part(patterns, [&](const std::string& p) { s += "  pattern " + p + "\n"; });
    part(observers, [&](const ObserverPlacement& o) {
        s += "  %" + o.observer + " observes %" + o.observes + " (" + o.role +
             "): " + o.config.describe() + "\n";
    });
    return s;
}

} // namespace pt2lab
