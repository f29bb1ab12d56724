// Node-by-name comparison of two graphs.
#include "passes/graph_diff.h"

#include <algorithm>

namespace pt2lab {

namespace {
std::vector<std::string> input_names(const Node& n) {
    std::vector<std::string> out;
    for (Node* in : n.input_nodes()) out.push_back(in->name());
    return out;
}

// Arguments with node references replaced by their names: compares constants and positions.
std::string args_signature(const Node& n) {
    std::string s =
        std::string(op_name(n.op())) + "|" + n.target() + "|" + arg_repr(Argument::tuple(n.args()));
    for (const auto& [k, v] : n.kwargs()) s += "|" + k + "=" + arg_repr(v);
    return s;
}
} // namespace

GraphDiffing::GraphDiffing(const Graph& before, const Graph& after)
    : before_(before), after_(after), after_nodes_(after.nodes()), before_nodes_(before.nodes()) {
}

bool GraphDiffing::step(size_t nodes) {
    for (size_t end = std::min(total(), at_ + nodes); at_ < end; ++at_) {
        if (at_ >= after_nodes_.size()) {
            const Node* n = before_nodes_[at_ - after_nodes_.size()];
            if (!after_.find(n->name())) d_.removed.push_back(n->name());
            continue;
        }
        const Node* n = after_nodes_[at_];
        Node* old = before_.find(n->name());
        if (!old) {
            d_.added.push_back(n->name());
        } else if (old->op() != n->op() || old->target() != n->target()) {
            d_.changed.push_back(n->name());
        } else if (input_names(*old) != input_names(*n)) {
            d_.rewired.push_back(n->name());
        } else if (args_signature(*old) != args_signature(*n)) {
            d_.changed.push_back(n->name());
        }
    }
    return at_ >= total();
}

GraphDiff diff_graphs(const Graph& before, const Graph& after) {
    GraphDiffing d(before, after);
    while (!d.step(size_t(-1) / 2)) {
    }
    return d.take();
}

std::string GraphDiff::str() const {
    std::string s;
    auto add = [&](const char* mark, const std::vector<std::string>& v) {
        for (const auto& n : v) s += (s.empty() ? "" : " ") + std::string(mark) + n;
    };
    add("+", added);
    add("-", removed);
    add("~", rewired);
    add("*", changed);
    return s.empty() ? "(no change)" : s;
}

} // namespace pt2lab
