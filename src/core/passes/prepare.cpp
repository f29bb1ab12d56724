// prepare_pt2e with an XNNPACK-style quantizer (static, per-tensor, MinMaxObserver):
// annotate conv/linear (+ relu) patterns, then place observers in the
// original node order: input observers (input activation, weight) after their
// producers, rewiring only the annotated node's argument; the output observer
// after the pattern's last node, rewiring its other users. An argument that is
// already observed with the same settings reuses that observer.
#include <algorithm>

#include "passes/pt2e.h"

namespace pt2lab {

namespace {

bool is_conv(const Node& n) {
    return n.is(OpId::conv2d) || n.is(OpId::convolution);
}
bool is_linear(const Node& n) {
    return n.is(OpId::linear);
}
bool is_relu(const Node& n) {
    return n.is(OpId::relu) || n.is(OpId::relu_);
}

bool same_config(const ObserverConfig& a, const ObserverConfig& b) {
    return a.dtype == b.dtype && a.qscheme == b.qscheme && a.quant_min == b.quant_min &&
           a.quant_max == b.quant_max;
}

bool is_observer(const GraphModule& gm, const Node& n) {
    if (n.op() != Op::CallModule) return false;
    auto it = gm.submodules.find(n.target());
    return it != gm.submodules.end() && it->second.observer.has_value();
}

struct Annotation {
    Node* op;     // conv or linear
    Node* output; // the node whose output is observed (relu when fused)
    std::string pattern;
};

} // namespace

Result<Node*> insert_observer(GraphModule& gm, Node* node, const ObserverConfig& cfg) {
    Graph& g = *gm.graph;
    std::string name = gm.new_submodule_name("activation_post_process_");
    gm.submodules[name] = Submodule{"MinMaxObserver", false, cfg};
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

namespace {
// An observer of `producer` for one consumer argument (input activation / weight).
Result<Node*> observe_input(GraphModule& gm, Node* consumer, size_t arg_index,
                            const ObserverConfig& cfg, const std::string& role,
                            std::vector<ObserverPlacement>& placed) {
    Argument a = consumer->args()[arg_index];
    if (!a.is_node()) return static_cast<Node*>(nullptr);
    Node* producer = a.node;
    if (is_observer(gm, *producer))
        return producer; // already observed (e.g. by the producer's output observer)
    for (Node* u : producer->users())
        if (is_observer(gm, *u) && same_config(*gm.submodules[u->target()].observer, cfg)) {
            consumer->replace_input_with(producer, u); // share the existing observer
            return u;
        }
    Graph& g = *gm.graph;
    std::string name = gm.new_submodule_name("activation_post_process_");
    gm.submodules[name] = Submodule{"MinMaxObserver", false, cfg};
    Node* obs;
    {
        auto at = g.inserting_after(producer);
        obs = g.call_module(name, {Argument::from_node(producer)}, {}, name);
    }
    obs->meta.val = producer->meta.val;
    std::vector<Argument> args = consumer->args();
    args[arg_index] = Argument::from_node(obs);
    consumer->set_args(args);
    placed.push_back({name, producer->name(), role, cfg});
    return obs;
}
} // namespace

Result<PrepareReport> prepare_pt2e(GraphModule& gm) {
    PrepareReport report;
    auto fold = fold_conv_bn(gm);
    if (!fold.ok()) return fold.error();
    report.fold = fold.take();
    Graph& g = *gm.graph;
    if (Status s = gm.lint(); !s.ok()) return s.error();

    // Annotate: linear -> relu and conv -> relu first, then lone linear / conv.
    std::vector<Annotation> anns;
    std::vector<Node*> annotated;
    for (Node* n : g.nodes()) {
        if (!is_conv(*n) && !is_linear(*n)) continue;
        Node* out = n;
        std::string pattern = is_conv(*n) ? "conv" : "linear";
        if (n->users().size() == 1 && is_relu(*n->users()[0])) {
            out = n->users()[0];
            pattern += " -> relu";
        }
        anns.push_back(
            {n, out, pattern + " (%" + n->name() + (out != n ? " -> %" + out->name() : "") + ")"});
    }
    // Observers, in the original node order.
    const ObserverConfig act = ObserverConfig::activation(), wt = ObserverConfig::weight();
    for (const Annotation& a : anns) {
        report.patterns.push_back(a.pattern);
        auto in = observe_input(gm, a.op, 0, act, "input activation of %" + a.op->name(),
                                report.observers);
        if (!in.ok()) return in.error();
        auto w = observe_input(gm, a.op, 1, wt, "weight of %" + a.op->name(), report.observers);
        if (!w.ok()) return w.error();
        auto out = insert_observer(gm, a.output, act);
        if (!out.ok()) return out.error();
        report.observers.push_back(
            {out.value()->name(), a.output->name(), "output of " + a.pattern, act});
    }
    if (Status s = gm.lint(); !s.ok()) return s.error();
    gm.recompile();
    return report;
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
    std::string s;
    for (const auto& f : fold.folded) s += "  folded " + f + "\n";
    for (const auto& p : fold.new_parameters) s += "  new parameter " + p + "\n";
    for (const auto& k : fold.skipped) s += "  not folded: " + k + "\n";
    for (const auto& p : patterns) s += "  pattern " + p + "\n";
    for (const auto& o : observers)
        s += "  %" + o.observer + " observes %" + o.observes + " (" + o.role +
             "): " + o.config.describe() + "\n";
    return s;
}

} // namespace pt2lab
