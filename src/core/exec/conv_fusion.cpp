// The pattern match behind the interpreter's conv fusion (conv_fusion.h).
#include "exec/conv_fusion.h"

#include <vector>

#include "graph/op_table.h"

namespace pt2lab {

namespace {

// `user` is `n`'s only user and reads it exactly once, as its first argument.
bool only_first_arg_of(const Node* n, const Node* user) {
    if (n->users().size() != 1 || n->users()[0] != user) return false;
    if (user->args().empty() || !user->args()[0].is_node() || user->args()[0].node != n)
        return false;
    int reads = 0;
    auto count = [&](const Node* m) { reads += m == n; };
    for (const Argument& a : user->args()) for_each_node(a, count);
    for (const auto& kv : user->kwargs()) for_each_node(kv.second, count);
    return reads == 1;
}

bool is_activation(const Node* n) {
    return n->is(OpId::hardtanh) || n->is(OpId::hardtanh_) || n->is(OpId::relu) ||
           n->is(OpId::relu_);
}

} // namespace

std::map<const Node*, ConvFusion> plan_conv_fusions(const Graph& g) {
    const std::vector<Node*> order = g.nodes();
    std::map<const Node*, ConvFusion> plan;
    for (size_t i = 0; i < order.size();) i = plan_conv_fusion_at(order, i, plan);
    return plan;
}

size_t plan_conv_fusion_at(const std::vector<Node*>& order, size_t i,
                           std::map<const Node*, ConvFusion>& plan) {
    // order[j], or null past the end
    auto at = [&](size_t j) -> const Node* { return j < order.size() ? order[j] : nullptr; };
    const Node* conv = order[i];
    if (conv->op() != Op::CallFunction || !(conv->is(OpId::conv2d) || conv->is(OpId::convolution)))
        return i + 1;
    ConvFusion f;
    f.conv = conv;
    const Node* tail = conv; // the group's last node so far
    size_t j = i + 1;
    const Node* next = at(j);
    if (next && (next->is(OpId::batch_norm) || next->is(OpId::native_bn_no_training)) &&
        only_first_arg_of(conv, next)) {
        const Node* bn = next;
        const Node* item = nullptr;
        if (bn->is(OpId::native_bn_no_training)) { // its output 0, through the next getitem
            item = at(j + 1);
            if (!item || !item->is(OpId::getitem) || !only_first_arg_of(bn, item) ||
                item->args().size() != 2 || item->args()[1].kind != ArgKind::Int ||
                item->args()[1].i != 0 || !item->kwargs().empty())
                item = nullptr;
        }
        if (bn->is(OpId::batch_norm) || item) {
            f.bn = bn, f.item = item, tail = item ? item : bn;
            j += item ? 2 : 1;
        }
    }
    next = at(j);
    if (next && is_activation(next) && only_first_arg_of(tail, next)) f.act = next, ++j;
    if (!f.bn && !f.act) return i + 1;
    plan[conv] = f;
    return j;
}

} // namespace pt2lab
