// convert_pt2e(fold_quantize): observers become quantize -> dequantize pairs
// with literal qparams; then weight quantizes fold into int8 constants.
#include <cstdio>

#include "exec/kernels.h"
#include "passes/pt2e.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {
const std::string kQuantize = op_info(OpId::quantize_per_tensor).schema.target();
const std::string kDequantize = op_info(OpId::dequantize_per_tensor).schema.target();

MetaVal quantized_val(const MetaVal& v, ScalarType dt) {
    MetaVal q = v;
    if (q.is_tensor()) {
        q.tensor.dtype = dt;
        q.tensor.requires_grad = false;
    }
    return q;
}
} // namespace

Result<ConvertReport> convert_pt2e(GraphModule& gm, const ModuleState& state, bool fold_quantize) {
    ConvertReport report;
    Graph& g = *gm.graph;
    std::vector<Node*> quantizes;
    for (Node* obs : g.nodes()) {
        if (obs->op() != Op::CallModule) continue;
        auto sub = gm.submodules.find(obs->target());
        if (sub == gm.submodules.end() || !sub->second.observer) continue;
        auto rt = state.observers.find(obs->target());
        QParams q; // an observer that never ran gives torch's defaults (1.0, 0)
        if (rt != state.observers.end()) {
            auto qp = rt->second->calculate_qparams();
            if (!qp.ok()) return make_error("%" + obs->name(), qp.error().message);
            q = qp.value();
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
    }
    if (fold_quantize) {
        // constant_fold: quantize(get_attr weight) -> get_attr _frozen_param<N> holding the int8
        // tensor.
        int count = 0;
        for (size_t k = 0; k < quantizes.size(); ++k) {
            Node* qn = quantizes[k];
            const Argument& in = qn->args()[0];
            if (!in.is_node() || in.node->op() != Op::GetAttr) continue;
            auto w = gm.attrs.find(in.node->target());
            if (w == gm.attrs.end()) continue;
            const OpSchema* schema = qn->schema();
            std::vector<Value> vals = {
                Value::of(Tensor::from_data(*w->second)), Value::real(qn->args()[1].f),
                Value::integer(qn->args()[2].i), Value::integer(qn->args()[3].i),
                Value::integer(qn->args()[4].i)};
            Value dt;
            dt.kind = Value::Kind::Dtype;
            dt.dtype = qn->args()[5].dtype;
            vals.push_back(dt);
            auto folded = find_kernel(*qn)(CallArgs(*schema, vals), {});
            if (!folded.ok()) return make_error("%" + qn->name(), folded.error().message);
            std::string name = "_frozen_param" + std::to_string(count++);
            gm.attrs[name] = std::make_shared<TensorData>(folded.value().tensor->to_data());
            Node* attr;
            {
                auto at = g.inserting_before(qn);
                attr = g.get_attr(name);
            }
            attr->meta = qn->meta;
            qn->replace_all_uses_with(attr);
            if (Status s = g.erase_node(qn); !s.ok()) return s.error();
            report.converted[k].quantize.clear();
            report.converted[k].frozen_param = name;
        }
        auto dce = gm.eliminate_dead_code();
        if (!dce.ok()) return dce.error();
    }
    if (Status s = gm.lint(); !s.ok()) return s.error();
    gm.recompile();
    return report;
}

std::string ConvertReport::str() const {
    std::string s;
    char buf[256];
    for (const auto& c : converted) {
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
