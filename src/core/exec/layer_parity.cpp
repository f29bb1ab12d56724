// Layers of a quantized graph paired with the float graph by the names
// convert_pt2e keeps, compared run against run, and the one that loses most.
#include "exec/layer_parity.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace pt2lab {

namespace {

bool is_conv(const Node& n) {
    return n.is(OpId::conv2d) || n.is(OpId::convolution);
}

bool is_float(ScalarType t) {
    return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half ||
           t == ScalarType::BFloat16;
}

// The float node whose value a quantized conv `f` (the float graph's conv of the same
// name) stands for: the output of the batch norm folded into it when that batch norm
// is gone from the quantized graph (passes/fold_bn.cpp: the conv takes over its
// users), else `f` itself; null when the batch norm's output has no node to read.
const Node* folded_into(const Node& f, const Graph& quantized) {
    if (!is_conv(f)) return &f;
    for (const Node* bn : f.users()) {
        if (!(bn->is(OpId::batch_norm) || bn->is(OpId::native_bn_no_training))) continue;
        if (bn->args().empty() || !bn->args()[0].is_node() || bn->args()[0].node != &f) continue;
        if (quantized.find(bn->name())) continue; // not folded
        if (bn->is(OpId::batch_norm)) return bn;
        for (const Node* g : bn->users())
            if (g->is(OpId::getitem) && g->args().size() == 2 &&
                g->args()[1].kind == ArgKind::Int && g->args()[1].i == 0)
                return g;
        return nullptr;
    }
    return &f;
}

} // namespace

LayerPairing::LayerPairing(const Graph& quantized, const Graph& floating)
    : quantized_(quantized), floating_(floating), nodes_(quantized.nodes()) {
}

bool LayerPairing::step(size_t nodes) {
    for (size_t k = 0; k < nodes && next_ < nodes_.size(); ++k) {
        const Node& n = *nodes_[next_++];
        if (n.op() != Op::CallFunction) continue;
        if (n.target().find("quantized_decomposed.") != std::string::npos) continue;
        const Node* f = floating_.find(n.name());
        if (!f || f->op() != Op::CallFunction || f->target() != n.target()) continue;
        const Node* ref = folded_into(*f, quantized_);
        if (!ref) continue;
        std::string op = n.target();
        if (op.rfind("torch.ops.", 0) == 0) op.erase(0, 10);
        refs_->insert(ref->name());
        pairs_.push_back({n.name(), ref->name(), std::move(op)});
    }
    return next_ >= nodes_.size();
}

std::vector<LayerPair> pair_layers(const Graph& quantized, const Graph& floating) {
    LayerPairing p(quantized, floating);
    while (!p.step(4096)) {
    }
    return p.take();
}

void LayerTable::add(const LayerPair& layer, const RunResult& quantized,
                     const RunResult& floating) {
    auto a = quantized.values.find(layer.node);
    auto b = floating.values.find(layer.reference);
    add_values(layer, a == quantized.values.end() ? nullptr : &a->second,
               quantized.values_not_kept > 0, b == floating.values.end() ? nullptr : &b->second,
               floating.values_not_kept > 0);
}

void LayerTable::add_values(const LayerPair& layer, const Value* a, bool a_dropped, const Value* b,
                            bool b_dropped) {
    if (!a || !b) {
        // Every node of a run is kept until the cap: a missing value was dropped.
        if ((!a && a_dropped) || (!b && b_dropped)) ++not_kept;
        return;
    }
    if (!a->is_tensor() || !b->is_tensor()) return;
    const Tensor &x = *a->tensor, &y = *b->tensor;
    if (!is_float(x.dtype) || x.dtype != y.dtype || x.sizes != y.sizes) return;
    rows.push_back({layer, compare_tensors(layer.node, x, y)});
}

LayerStream::LayerStream(std::vector<LayerPair> layers, const RunResult& floating)
    : layers_(std::move(layers)), floating_(floating), rows_(layers_.size()),
      seen_(layers_.size(), Seen::No) {
    for (size_t k = 0; k < layers_.size(); ++k) index_.emplace(layers_[k].node, k);
}

void LayerStream::on_value(const Node& n, const Value& v) {
    auto it = index_.find(n.name());
    if (it == index_.end()) return;
    const auto t0 = std::chrono::steady_clock::now();
    const size_t k = it->second;
    const LayerPair& layer = layers_[k];
    auto b = floating_.values.find(layer.reference);
    LayerTable one; // at most one row, or one not kept
    one.add_values(layer, &v, false, b == floating_.values.end() ? nullptr : &b->second,
                   floating_.values_not_kept > 0);
    if (seen_[k] == Seen::No) ++compared_;
    if (!one.rows.empty()) {
        rows_[k] = std::move(one.rows.front());
        seen_[k] = Seen::Row;
    } else
        seen_[k] = one.not_kept ? Seen::NotKept : Seen::Nothing;
    ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

LayerTable LayerStream::take() {
    LayerTable t;
    t.rows.reserve(compared_);
    for (size_t k = 0; k < layers_.size(); ++k) {
        if (seen_[k] == Seen::Row) t.rows.push_back(std::move(rows_[k]));
        t.not_kept += seen_[k] == Seen::NotKept;
        seen_[k] = Seen::No;
    }
    return t;
}

std::string LayerTable::summary() const {
    std::string s = "  layers: " + std::to_string(rows.size()) + " compared with the float run";
    if (not_kept)
        s += ", " + std::to_string(not_kept) + " left out (a run did not keep their values)";
    s += "\n";
    if (worst < 0) return s + "  no layer lost anything\n";
    const LayerParity& w = rows[static_cast<size_t>(worst)];
    char buf[96];
    if (w.parity.nonfinite_new > 0)
        std::snprintf(buf, sizeof buf, "%lld NaN, %lld Inf", static_cast<long long>(w.parity.nan),
                      static_cast<long long>(w.parity.inf));
    else
        std::snprintf(buf, sizeof buf, "SQNR %.1f dB", w.parity.sqnr_db);
    return s + "  most lost at %" + w.layer.node + " (" + w.layer.op + "): " + buf + "\n";
}

int worst_layer(const std::vector<LayerParity>& rows) {
    int worst = -1;
    for (size_t k = 0; k < rows.size(); ++k) {
        const TensorParity& p = rows[k].parity;
        if (p.nonfinite_new > 0) return static_cast<int>(k);
        if (std::isinf(p.sqnr_db) && p.sqnr_db > 0) continue; // identical: nothing lost
        if (worst < 0 || p.sqnr_db < rows[static_cast<size_t>(worst)].parity.sqnr_db)
            worst = static_cast<int>(k);
    }
    return worst;
}

} // namespace pt2lab
