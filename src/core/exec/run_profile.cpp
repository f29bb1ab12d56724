#include "exec/run_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace pt2lab {
namespace {

// The interpreter's call_module nodes are the guards and observers (torch.ao's
// activation_post_process_N), each its own row.
std::string op_label(const Node& n) {
    if (n.op() == Op::CallModule) return n.target() == "_guards_fn" ? "_guards_fn" : "observer";
    if (n.op() != Op::CallFunction) return std::string(op_name(n.op()));
    std::string op = n.target();
    if (op.rfind("torch.ops.", 0) == 0) op.erase(0, 10);
    return op;
}

} // namespace

RunProfile profile_of(const std::vector<NodeTime>& times, double total_ms, int runs) {
    RunProfile p;
    p.runs = std::max(runs, 1);
    const double per = 1.0 / p.runs;
    p.run_ms = total_ms * per;
    std::map<const Node*, size_t> at; // node -> its entry (each forward times it again)
    for (const NodeTime& t : times) {
        if (!t.node) continue;
        auto [it, added] = at.emplace(t.node, p.nodes.size());
        if (added) p.nodes.push_back({t.node->name(), op_label(*t.node), 0.0, t.fused});
        p.nodes[it->second].ms += t.ms * per;
    }
    std::map<std::string, size_t> index; // op -> row of p.ops
    for (const RunProfile::Entry& e : p.nodes) {
        auto [it, added] = index.emplace(e.op, p.ops.size());
        if (added) p.ops.push_back({e.op, 0, 0, 0.0});
        RunProfile::Op& row = p.ops[it->second];
        ++row.nodes;
        row.fused += e.fused;
        row.ms += e.ms;
        p.nodes_ms += e.ms;
        p.fused += e.fused;
    }
    std::sort(p.ops.begin(), p.ops.end(), [](const RunProfile::Op& a, const RunProfile::Op& b) {
        return a.ms != b.ms ? a.ms > b.ms : a.op < b.op;
    });
    std::stable_sort(
        p.nodes.begin(), p.nodes.end(),
        [](const RunProfile::Entry& a, const RunProfile::Entry& b) { return a.ms > b.ms; });
    return p;
}

std::string RunProfile::str(size_t max_ops, size_t max_nodes) const {
    std::string out;
    char line[512];
    const std::string mean_note = runs > 1 ? ", the mean of " + std::to_string(runs) + " runs" : "";
    std::snprintf(line, sizeof line,
                  "profile:  %.2f ms in %zu nodes (%zu fused into the conv before them) of a "
                  "%.2f ms forward%s\n",
                  nodes_ms, nodes.size(), fused, run_ms, mean_note.c_str());
    out += line;
    for (size_t i = 0; i < ops.size() && i < max_ops; ++i) {
        const Op& o = ops[i];
        const std::string fused_note = o.fused ? " (" + std::to_string(o.fused) + " fused)" : "";
        std::snprintf(line, sizeof line, "  %5.1f %%  %9.3f ms  %5zu node%s  %s%s\n",
                      100 * share(o.ms), o.ms, o.nodes, o.nodes == 1 ? " " : "s", o.op.c_str(),
                      fused_note.c_str());
        out += line;
    }
    if (ops.size() > max_ops)
        out += "  ... " + std::to_string(ops.size() - max_ops) + " more ops\n";
    if (max_nodes > 0 && !nodes.empty()) out += "slowest nodes:\n";
    for (size_t i = 0; i < nodes.size() && i < max_nodes; ++i) {
        const Entry& e = nodes[i];
        std::snprintf(line, sizeof line, "  %5.1f %%  %9.3f ms  %s (%s)\n", 100 * share(e.ms), e.ms,
                      e.node.c_str(), e.op.c_str());
        out += line;
    }
    return out;
}

} // namespace pt2lab
