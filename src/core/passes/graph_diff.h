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

} // namespace pt2lab
