// BatchNorm folding into the preceding convolution (torchao's
// fold_bn_weights_into_conv_node / _fuse_conv_bn_), in float32:
//   w' = w * (bn_w * rsqrt(rv + eps))[:, None, None, None]
//   b' = (b - rm) * rsqrt(rv + eps) * bn_w + bn_b
#include <cmath>
#include <cstring>

#include "passes/pt2e.h"

namespace pt2lab {

namespace {

bool is_conv(const Node& n) {
    return n.is(OpId::conv2d) || n.is(OpId::convolution);
}

bool is_bn(const Node& n) {
    return n.is(OpId::batch_norm) || n.is(OpId::native_bn_no_training);
}

// The float32 tensor a get_attr argument reads, or null.
std::shared_ptr<const TensorData> attr_of(const GraphModule& gm, const Argument& a) {
    if (!a.is_node() || a.node->op() != Op::GetAttr) return nullptr;
    auto it = gm.attrs.find(a.node->target());
    if (it == gm.attrs.end() || it->second->dtype != ScalarType::Float) return nullptr;
    return it->second;
}

} // namespace

Status fold_bn_node(GraphModule& gm, Node* bn, FoldReport& report, int64_t* elements) {
    Graph& g = *gm.graph;
    if (!is_bn(*bn)) return {};
    if (bn->args().empty() || !bn->args()[0].is_node() || !is_conv(*bn->args()[0].node)) return {};
    Node* conv = bn->args()[0].node;
    const bool legit = !bn->is(OpId::batch_norm);
    // batch_norm(input, w, b, rm, rv, training, momentum, eps, cudnn); legit: (input, w, b, rm,
    // rv, momentum, eps)
    const size_t eps_at = legit ? 6 : 7;
    if (!legit &&
        (bn->args().size() < 6 || bn->args()[5].kind != ArgKind::Bool || bn->args()[5].b)) {
        report.skipped.push_back(
            "%" + bn->name() +
            ": training-mode batch_norm (prepare_pt2e folds eval-mode exports; QAT keeps "
            "the batch norm)");
        return {};
    }
    if (bn->args().size() <= eps_at ||
        (bn->args()[eps_at].kind != ArgKind::Float && bn->args()[eps_at].kind != ArgKind::Int))
        return make_error("%" + bn->name(), "cannot read the batch norm's eps");
    const double eps = bn->args()[eps_at].kind == ArgKind::Float ? bn->args()[eps_at].f
                                                                 : double(bn->args()[eps_at].i);
    auto w = attr_of(gm, conv->args().size() > 1 ? conv->args()[1] : Argument());
    Argument bias_arg = conv->args().size() > 2 ? conv->args()[2] : Argument::none();
    auto cb = attr_of(gm, bias_arg);
    auto bw = attr_of(gm, bn->args()[1]), bb = attr_of(gm, bn->args()[2]);
    auto rm = attr_of(gm, bn->args()[3]), rv = attr_of(gm, bn->args()[4]);
    if (!w || !rm || !rv || (!bias_arg.is_none() && !cb)) {
        report.skipped.push_back("%" + bn->name() +
                                 ": the conv weight or batch norm statistics are not attributes");
        return {};
    }
    const int64_t O = w->sizes[0], per = w->numel() / O;
    if (rm->numel() != O || rv->numel() != O)
        return make_error("%" + bn->name(), "batch norm and conv channel counts differ");
    // float32 arithmetic, as torch does it, written straight into the new tensors'
    // bytes (one buffer each: a second copy of ResNet-18's 47 MB of weights was most
    // of prepare_pt2e's time, page faults included).
    auto fused_w = std::make_shared<TensorData>();
    fused_w->dtype = ScalarType::Float;
    fused_w->sizes = w->sizes;
    fused_w->requires_grad = w->requires_grad;
    fused_w->stand_in = w->stand_in;
    auto fused_b = std::make_shared<TensorData>();
    fused_b->dtype = ScalarType::Float;
    fused_b->sizes = {O};
    std::vector<uint8_t> wbytes(static_cast<size_t>(w->numel()) * sizeof(float)),
        bbytes(static_cast<size_t>(O) * sizeof(float));
    float* fw = reinterpret_cast<float*>(wbytes.data());
    float* fb = reinterpret_cast<float*>(bbytes.data());
    const float* wv = w->f32();
    const float* rvv = rv->f32();
    const float* rmv = rm->f32();
    const float* bwv = bw ? bw->f32() : nullptr;
    const float* bbv = bb ? bb->f32() : nullptr;
    const float* cbv = cb ? cb->f32() : nullptr;
    for (int64_t o = 0; o < O; ++o) {
        float rsq = 1.0f / std::sqrt(rvv[o] + static_cast<float>(eps));
        float gamma = bwv ? bwv[o] : 1.0f, beta = bbv ? bbv[o] : 0.0f;
        float s = gamma * rsq;
        const float* src = wv + o * per;
        float* dst = fw + o * per;
        for (int64_t k = 0; k < per; ++k) dst[k] = src[k] * s;
        float b0 = cbv ? cbv[o] : 0.0f;
        fb[o] = (b0 - rmv[o]) * rsq * gamma + beta;
    }
    fused_w->bytes = Bytes(std::move(wbytes));
    fused_b->bytes = Bytes(std::move(bbytes));
    Node* wnode = conv->args()[1].node;
    gm.attrs[wnode->target()] = fused_w;
    std::vector<Argument> cargs = conv->args();
    if (cb) {
        gm.attrs[bias_arg.node->target()] = fused_b;
    } else {
        // A new parameter named after the weight, read by a get_attr placed before the conv.
        std::string name = wnode->target() + "_bias";
        gm.attrs[name] = fused_b;
        Node* bnode;
        {
            auto at = g.inserting_before(conv);
            bnode = g.get_attr(name);
        }
        bnode->meta = wnode->meta;
        bnode->meta.val.tensor.sizes = {O};
        bnode->meta.val.tensor.strides = {1};
        while (cargs.size() < 3) cargs.push_back(Argument::none());
        cargs[2] = Argument::from_node(bnode);
        conv->set_args(cargs);
        report.new_parameters.push_back(name);
    }
    if (legit) {
        std::vector<Node*> users = bn->users();
        for (Node* u : users)
            if (u->is(OpId::getitem) && u->args().size() == 2 &&
                u->args()[1].kind == ArgKind::Int && u->args()[1].i == 0)
                u->replace_all_uses_with(conv);
    } else {
        bn->replace_all_uses_with(conv);
    }
    report.folded.push_back("%" + bn->name() + " into %" + conv->name());
    if (elements) *elements += w->numel();
    return {};
}

Result<FoldReport> fold_conv_bn(GraphModule& gm) {
    FoldReport report;
    for (Node* bn : gm.graph->nodes())
        if (Status s = fold_bn_node(gm, bn, report); !s.ok()) return s.error();
    if (!report.folded.empty()) {
        auto dce = gm.eliminate_dead_code();
        if (!dce.ok()) return dce.error();
        gm.recompile();
    }
    return report;
}

} // namespace pt2lab
