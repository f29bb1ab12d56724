// convert_pt2e(fold_quantize): observers become quantize -> dequantize pairs
// with literal qparams; then weight quantizes fold into int8 constants.
#include <cstdio>

#include "exec/kernels.h"
#include <map>

#include "passes/pt2e.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {
const std::string kQuantize = op_info(OpId::quantize_per_tensor).schema.target();
const std::string kDequantize = op_info(OpId::dequantize_per_tensor).schema.target();

// DuplicateDQPass for one node: a dequantize read by several annotated nodes gets a
// copy per reader (each inserted right after it, so later copies come first); dead
// code goes after all of them.
void duplicate_dq(Graph& g, Node* dq) {
    if (dq->op() != Op::CallFunction || dq->target() != kDequantize) return;
    std::vector<Node*> users = dq->users();
    if (users.size() <= 1) return;
    for (Node* user : users) {
        if (!has_valid_annotation(*user)) continue;
        Node* copy;
        {
            auto at = g.inserting_after(dq);
            copy = g.call_function(dq->target(), dq->args(), dq->kwargs(), dq->name());
        }
        copy->meta = dq->meta;
        user->replace_input_with(dq, copy);
    }
}

MetaVal quantized_val(const MetaVal& v, ScalarType dt) {
    MetaVal q = v;
    if (q.is_tensor()) {
        q.tensor.dtype = dt;
        q.tensor.requires_grad = false;
    }
    return q;
}
} // namespace

struct Converting::Impl {
    GraphModule& gm;
    const ModuleState& state;
    const bool fold_quantize;
    ConvertReport report;
    std::vector<Node*> nodes; // the graph's nodes when the stage now began (each_node)
    size_t next = 0;          // the next of them, or of `quantizes` (folding)
    std::vector<Node*> quantizes;
    std::map<const Observer*, QParams> qparams_of;
    int frozen = 0; // _frozen_param<N> made so far
    std::unique_ptr<GraphCloning> snapshot;
    std::unique_ptr<DeadCodeEliminating> dce; // the stage "eliminate dead code" under way
    Stages stages;

    Impl(GraphModule& m, const ModuleState& st, bool fold) : gm(m), state(st), fold_quantize(fold) {
        stages.add("observers to quantize / dequantize", [this](Stages::Clock::time_point) {
            return each_node([this](Node* n) { return convert_one(n); });
        });
        stages.add("duplicate shared dequantize (DuplicateDQPass)",
                   [this](Stages::Clock::time_point) {
                       return each_node([this](Node* n) {
                           duplicate_dq(*gm.graph, n);
                           return Status{};
                       });
                   });
        add_dead_code_elimination();
        if (fold_quantize) {
            stages.add("fold weight quantize into int8 constants",
                       [this](Stages::Clock::time_point) -> Result<bool> {
                           int64_t elements = 0;
                           // Bounded by elements (big weights) and by nodes (many small ones).
                           for (size_t n = 0;
                                next < quantizes.size() && elements < piece_size().elements &&
                                n < piece_size().nodes;
                                ++next, ++n)
                               if (Status s = fold_one(next, elements); !s.ok()) return s.error();
                           stages.work_unit = "quantize";
                           stages.work_done = next;
                           stages.work_total = quantizes.size();
                           return next >= quantizes.size();
                       });
            add_dead_code_elimination();
        }
        add_lint(stages, gm);
        add_recompile(stages, gm, snapshot);
    }

    // One piece of a stage that visits the graph's nodes as they were when it
    // began, in order: `visit` on the next few hundred; true when all are done.
    template <class Visit> Result<bool> each_node(Visit visit) {
        if (next == 0) nodes = gm.graph->nodes();
        for (size_t end = std::min(nodes.size(), next + piece_size().nodes); next < end; ++next)
            if (Status s = visit(nodes[next]); !s.ok()) return s.error();
        stages.work_done = next;
        stages.work_total = nodes.size();
        if (next < nodes.size()) return false;
        next = 0;
        return true;
    }

    // gm.eliminate_dead_code() as two stages: its lint, then the walk.
    void add_dead_code_elimination() {
        add_lint(stages, gm);
        stages.add("eliminate dead code", [this](Stages::Clock::time_point) -> Result<bool> {
            if (!dce) dce = std::make_unique<DeadCodeEliminating>(*gm.graph, gm.impure_modules());
            const bool over = dce->step(4 * piece_size().nodes);
            stages.work_done = dce->done();
            stages.work_total = dce->total();
            if (!over) return false;
            dce.reset();
            return true;
        });
    }

    Status convert_one(Node* obs) {
        Graph& g = *gm.graph;
        if (obs->op() != Op::CallModule) return {};
        auto sub = gm.submodules.find(obs->target());
        if (sub == gm.submodules.end() || !sub->second.observer) return {};
        auto rt = state.observers.find(obs->target());
        QParams q; // an observer that never ran gives torch's defaults (1.0, 0)
        if (rt != state.observers.end()) {
            // One instance under several names computes its qparams once.
            const Observer* instance = rt->second.get();
            auto known = qparams_of.find(instance);
            if (known == qparams_of.end()) {
                auto qp = instance->calculate_qparams();
                if (!qp.ok()) return make_error("%" + obs->name(), qp.error().message);
                known = qparams_of.emplace(instance, qp.value()).first;
            }
            q = known->second;
        }
        const ObserverConfig& cfg = *sub->second.observer;
        if (obs->args().size() != 1)
            return make_error("%" + obs->name(), "an observer must have exactly one input");
        Argument input = obs->args()[0];
        auto literals = [&](Argument first) {
            return std::vector<Argument>{first,
                                         Argument::from_float(static_cast<double>(q.scale)),
                                         Argument::from_int(q.zero_point),
                                         Argument::from_int(cfg.quant_min),
                                         Argument::from_int(cfg.quant_max),
                                         Argument::from_dtype(cfg.storage_dtype())};
        };
        Node *qn, *dq;
        {
            auto at = g.inserting_before(obs);
            qn = g.call_function(kQuantize, literals(input));
            dq = g.call_function(kDequantize, literals(Argument::from_node(qn)));
        }
        qn->meta = obs->meta;
        qn->meta.val = quantized_val(obs->meta.val, cfg.storage_dtype());
        dq->meta = obs->meta;
        ConvertedObserver c;
        c.observer = obs->target();
        obs->replace_all_uses_with(dq);
        if (Status s = g.erase_node(obs); !s.ok()) return s.error();
        c.scale = q.scale;
        c.zero_point = q.zero_point;
        c.quant_min = cfg.quant_min;
        c.quant_max = cfg.quant_max;
        c.dtype = cfg.storage_dtype();
        c.quantize = qn->name();
        c.dequantize = dq->name();
        gm.submodules.erase(sub);
        report.converted.push_back(c);
        quantizes.push_back(qn);
        return {};
    }

    // constant_fold: quantize(get_attr weight) -> get_attr _frozen_param<N> holding the
    // int8 tensor.
    Status fold_one(size_t k, int64_t& elements) {
        Graph& g = *gm.graph;
        Node* qn = quantizes[k];
        const Argument& in = qn->args()[0];
        if (!in.is_node() || in.node->op() != Op::GetAttr) return {};
        auto w = gm.attrs.find(in.node->target());
        if (w == gm.attrs.end()) return {};
        elements += w->second->numel();
        const OpSchema* schema = qn->schema();
        std::vector<Value> vals = {Value::of(Tensor::from_data(*w->second)),
                                   Value::real(qn->args()[1].f), Value::integer(qn->args()[2].i),
                                   Value::integer(qn->args()[3].i),
                                   Value::integer(qn->args()[4].i)};
        Value dt;
        dt.kind = Value::Kind::Dtype;
        dt.dtype = qn->args()[5].dtype;
        vals.push_back(dt);
        auto folded = find_kernel(*qn)(CallArgs(*schema, vals), {});
        if (!folded.ok()) return make_error("%" + qn->name(), folded.error().message);
        std::string name = "_frozen_param" + std::to_string(frozen++);
        gm.attrs[name] = std::make_shared<TensorData>(folded.value().tensor->to_data());
        Node* attr;
        {
            auto at = g.inserting_before(qn);
            attr = g.get_attr(name);
        }
        attr->meta = qn->meta;
        qn->replace_all_uses_with(attr);
        if (Status s = g.erase_node(qn); !s.ok()) return s;
        report.converted[k].quantize.clear();
        report.converted[k].frozen_param = name;
        return {};
    }
};

Converting::Converting(GraphModule& gm, const ModuleState& state, bool fold_quantize)
    : impl_(std::make_unique<Impl>(gm, state, fold_quantize)) {
}
Converting::~Converting() = default;
Result<bool> Converting::step(Clock::time_point deadline) {
    return impl_->stages.step(deadline);
}
std::string Converting::what() const {
    return "convert_pt2e: " + impl_->stages.what();
}
ConvertReport Converting::take() {
    PT2LAB_CHECK(impl_->stages.done());
    return std::move(impl_->report);
}

Result<ConvertReport> convert_pt2e(GraphModule& gm, const ModuleState& state, bool fold_quantize) {
    Converting c(gm, state, fold_quantize);
    auto r = c.step(Stages::Clock::time_point::max());
    if (!r.ok()) return r.error();
    return c.take();
}

std::string ConvertReport::str() const {
    return lines(0, converted.size());
}

std::string ConvertReport::lines(size_t from, size_t to) const {
    std::string s;
    char buf[256];
    for (size_t i = from; i < std::min(to, converted.size()); ++i) {
        const ConvertedObserver& c = converted[i];
        std::snprintf(
            buf, sizeof buf, "  %%%s -> %s%s%%%s  scale %s  zero_point %lld  [%lld, %lld] %s\n",
            c.observer.c_str(), c.quantize.empty() ? "" : ("%" + c.quantize + " -> ").c_str(),
            c.frozen_param.empty() ? "" : ("%" + c.frozen_param + " -> ").c_str(),
            c.dequantize.c_str(), py_float_repr(static_cast<double>(c.scale)).c_str(),
            static_cast<long long>(c.zero_point), static_cast<long long>(c.quant_min),
            static_cast<long long>(c.quant_max),
            c.dtype == ScalarType::Byte ? "torch.uint8" : "torch.int8");
        s += buf;
    }
    return s;
}

} // namespace pt2lab
