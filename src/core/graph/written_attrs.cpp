// get_attr targets a graph's ops write in place (see written_attrs.h).
#include "graph/written_attrs.h"

#include "graph/op_table.h"

namespace pt2lab {

namespace {

// False when the op's `training` argument is a literal False: batch_norm in eval
// mode reads its running statistics and writes nothing.
bool trains(const Node& n, const OpInfo& op) {
    int k = op.schema.arg_index("training");
    if (k < 0) return true;
    const Argument* a = nullptr;
    if (static_cast<size_t>(k) < n.args().size()) a = &n.args()[static_cast<size_t>(k)];
    for (const auto& [key, arg] : n.kwargs())
        if (key == "training") a = &arg;
    return !(a && a->kind == ArgKind::Bool && !a->b);
}

} // namespace

std::set<std::string> attrs_written_in_place(const Graph& g) {
    std::set<std::string> out;
    auto note = [&](const Argument& a) {
        if (a.is_node() && a.node && a.node->op() == Op::GetAttr) out.insert(a.node->target());
    };
    for (const Node* n : g.nodes()) {
        const OpInfo* op = n->op_info();
        if (n->op() != Op::CallFunction || !op) continue;
        if (!trains(*n, *op)) continue;
        for (size_t k = 0; k < n->args().size(); ++k)
            if (op->writes(k)) note(n->args()[k]);
        for (const auto& [key, arg] : n->kwargs()) {
            int k = op->schema.arg_index(key);
            if (k >= 0 && op->writes(static_cast<size_t>(k))) note(arg);
        }
    }
    return out;
}

} // namespace pt2lab
