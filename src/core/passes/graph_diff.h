// A structural diff between two versions of a graph, by node name: what a
// step added, removed, rewired (inputs changed) or otherwise changed (target,
// constant arguments), for the page to highlight.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace pt2lab {

struct GraphDiff {
    std::vector<std::string> added;   // in `after` only
    std::vector<std::string> removed; // in `before` only
    std::vector<std::string> rewired; // same name, different input nodes
    std::vector<std::string> changed; // same name, different op, target or constant arguments
    bool empty() const {
        return added.empty() && removed.empty() && rewired.empty() && changed.empty();
    }
    std::string str() const; // "+a +b -c ~d *e"
};

GraphDiff diff_graphs(const Graph& before, const Graph& after);

// diff_graphs in pieces: step(n) compares about n more nodes and says whether
// the diff is whole; then take() gives it. Neither graph may change meanwhile.
class GraphDiffing {
public:
    GraphDiffing(const Graph& before, const Graph& after);
    bool step(size_t nodes);
    GraphDiff take() { return std::move(d_); }
    size_t done() const { return at_; }
    size_t total() const { return after_nodes_.size() + before_nodes_.size(); }

private:
    const Graph &before_, &after_;
    std::vector<Node*> after_nodes_, before_nodes_;
    size_t at_ = 0; // over after_nodes_, then before_nodes_
    GraphDiff d_;
};

} // namespace pt2lab
