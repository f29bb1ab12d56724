// Node-by-name comparison of two graphs.
#include "passes/graph_diff.h"

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

GraphDiff diff_graphs(const Graph& before, const Graph& after) {
    GraphDiff d;
    for (Node* n : after.nodes()) {
        Node* old = before.find(n->name());
        if (!old) {
            d.added.push_back(n->name());
            continue;
        }
        if (old->op() != n->op() || old->target() != n->target()) {
            d.changed.push_back(n->name());
        } else if (input_names(*old) != input_names(*n)) {
            d.rewired.push_back(n->name());
        } else if (args_signature(*old) != args_signature(*n)) {
            d.changed.push_back(n->name());
        }
    }
    for (Node* n : before.nodes())
        if (!after.find(n->name())) d.removed.push_back(n->name());
    return d;
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
