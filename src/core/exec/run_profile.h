// Where a forward's time went: each node's time (RunOptions::node_times) gathered
// by op and sorted, with each one's share of the whole. The page's Run tab shows it
// ("Where the time went"), `pt2lab run --profile` prints it; both from one run of
// the same Workspace action. Times are the steady clock's around each kernel, so a
// node fused into the conv before it (conv_fusion.h) costs nothing of its own: its
// time is in the conv's. A Run of several forwards gives each node's mean: a browser's
// clock counts in steps of 0.1 ms (5 us where the page is cross-origin isolated), so
// one forward's small nodes read 0 or 0.1 ms, and the mean of ten reads finer.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exec/interpreter.h"

namespace pt2lab {

struct RunProfile {
    struct Op {
        std::string op;   // "aten.conv2d.default" (no "torch.ops."), "observer", "_guards_fn"
        size_t nodes = 0; // nodes of this op that ran
        size_t fused = 0; // ... of which computed inside the conv before them
        double ms = 0;
    };
    struct Entry {
        std::string node; // the node's name
        std::string op;
        double ms = 0;
        bool fused = false;
    };
    int runs = 0;             // forwards measured; every time below is the mean over them
    double nodes_ms = 0;      // the nodes' times added up
    double run_ms = 0;        // the forward's wall time (placeholders, outputs, bookkeeping too)
    size_t fused = 0;         // nodes computed inside the conv before them
    std::vector<Op> ops;      // by op, most time first (ties: by name)
    std::vector<Entry> nodes; // every node timed, most time first (ties: graph order)

    // A node's or op's share of nodes_ms, in [0, 1] (0 when nothing took time).
    double share(double ms) const { return nodes_ms > 0 ? ms / nodes_ms : 0.0; }
    // The table `pt2lab run --profile` prints: the ops, then the slowest nodes.
    std::string str(size_t max_ops = 20, size_t max_nodes = 10) const;
};

// The profile of `runs` forwards of one graph whose nodes appended `times` (in
// execution order), which took `total_ms` in all: each node's and op's mean. The
// nodes must still be alive (their names are copied).
RunProfile profile_of(const std::vector<NodeTime>& times, double total_ms, int runs = 1);

// The same in pieces: a converted 10k-node graph times 17,812 nodes, whose rows (two
// strings each, then sorted) take 11-18 ms natively, too long for one of the page's
// slices. `times` and its nodes must outlive it and not change while it works.
class RunProfiling {
public:
    RunProfiling(const std::vector<NodeTime>& times, double total_ms, int runs = 1);
    // Works until `deadline` (at least a few hundred rows); true once the profile is made.
    bool step(std::chrono::steady_clock::time_point deadline);
    RunProfile take() { return std::move(p_); }

private:
    const std::vector<NodeTime>& times_;
    RunProfile p_;
    size_t next_ = 0; // the next of times_ to add, then of p_.nodes to count
    int phase_ = 0;   // 0 rows, 1 ops, 2 sorted
    std::unordered_map<const Node*, size_t> at_;         // node -> its row of p_.nodes
    std::vector<size_t> op_rows_;                        // row of p_.nodes -> its row of p_.ops
    std::unordered_map<std::string_view, size_t> label_; // call_function target -> op row
    std::unordered_map<std::string, size_t> op_index_;   // op label -> its row of p_.ops
};

} // namespace pt2lab
