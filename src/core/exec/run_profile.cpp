#include "exec/run_profile.h"

#include <algorithm>
#include <cstdio>

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
    RunProfiling making(times, total_ms, runs);
    while (!making.step(std::chrono::steady_clock::time_point::max())) {
    }
    return making.take();
}

RunProfiling::RunProfiling(const std::vector<NodeTime>& times, double total_ms, int runs)
    : times_(times) {
    p_.runs = std::max(runs, 1);
    p_.run_ms = total_ms / p_.runs;
    at_.reserve(times.size());
    p_.nodes.reserve(times.size());
    op_rows_.reserve(times.size());
}

bool RunProfiling::step(std::chrono::steady_clock::time_point deadline) {
    constexpr size_t kRows = 512; // between looks at the clock
    const double per = 1.0 / p_.runs;
    // Each node's row (each forward times it again); its op's label made once a target.
    while (phase_ == 0) {
        const size_t end = std::min(times_.size(), next_ + kRows);
        for (; next_ < end; ++next_) {
            const NodeTime& t = times_[next_];
            if (!t.node) continue;
            auto [it, added] = at_.emplace(t.node, p_.nodes.size());
            if (added) {
                const Node& n = *t.node;
                // A call_function's label is its target's (looked up by the target's
                // text, not made again); the other ops' labels are short.
                size_t row = 0;
                auto l = label_.end();
                if (n.op() == Op::CallFunction) l = label_.find(std::string_view(n.target()));
                if (l != label_.end()) {
                    row = l->second;
                } else {
                    auto [o, new_op] = op_index_.emplace(op_label(n), p_.ops.size());
                    if (new_op) p_.ops.push_back({o->first, 0, 0, 0.0});
                    row = o->second;
                    if (n.op() == Op::CallFunction)
                        label_.emplace(std::string_view(n.target()), row);
                }
                p_.nodes.push_back({n.name(), p_.ops[row].op, 0.0, t.fused});
                op_rows_.push_back(row);
            }
            p_.nodes[it->second].ms += t.ms * per;
        }
        if (next_ == times_.size()) phase_ = 1, next_ = 0;
        if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    while (phase_ == 1) {
        const size_t end = std::min(p_.nodes.size(), next_ + 4 * kRows);
        for (; next_ < end; ++next_) {
            RunProfile::Entry& e = p_.nodes[next_];
            RunProfile::Op& row = p_.ops[op_rows_[next_]];
            ++row.nodes;
            row.fused += e.fused;
            row.ms += e.ms;
            p_.nodes_ms += e.ms;
            p_.fused += e.fused;
        }
        if (next_ == p_.nodes.size()) phase_ = 2;
        if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    std::sort(p_.ops.begin(), p_.ops.end(), [](const RunProfile::Op& a, const RunProfile::Op& b) {
        return a.ms != b.ms ? a.ms > b.ms : a.op < b.op;
    });
    std::stable_sort(
        p_.nodes.begin(), p_.nodes.end(),
        [](const RunProfile::Entry& a, const RunProfile::Entry& b) { return a.ms > b.ms; });
    return true;
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
