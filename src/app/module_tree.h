// The module tree of a graph, from each node's nn_module_stack: which module
// (self.stages[0][3].conv1 -> "stages.0.3.conv1") every node belongs to, so the
// graph view can show a collapsed module as one box. Pure (no ImGui).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "program/exported_program.h"

namespace pt2lab::app {

struct ModuleGroup {
    std::string path; // "stages.0.3"; "" for the root (the exported model itself)
    std::string type; // the module's class, short: "Conv2d", "Sequential"
    int parent = -1;  // group index; -1 for the root
    std::vector<int> children;
    int depth = 0; // root 0
    int nodes = 0; // graph nodes inside it and its children (absorbed weights included)
    int calls = 0; // of which not absorbed (calls, not weights)
    // Collapsing it hides something: it holds more than one call. A module
    // with one call (a Conv2d) shows that call with its weights.
    bool collapsible = false;
};

// Expanded module paths; the root is always expanded.
using ExpandedSet = std::set<std::string>;

struct ModuleTree {
    std::vector<ModuleGroup> groups; // groups[0] is the root; a parent precedes its children
    std::unordered_map<std::string, int> by_path;
    // Per graph node (graph order): its innermost group (0 = the root).
    // Weights (parameter, buffer and constant placeholders, get_attr) have no
    // nn_module_stack: they join the innermost group holding all their users.
    // Nor have the observers and quantize / dequantize nodes the PT2E passes
    // insert: they join the group of the value they read (or, reading a weight,
    // are placed by their users).
    std::vector<int> node_group;
    std::vector<uint8_t> absorbed; // per graph node: placed by others, not a call of its group

    int find(const std::string& path) const; // -1 when absent
    // The collapsed group graph node `i` is hidden in (the outermost collapsed,
    // collapsible ancestor), or -1 when the node itself is shown.
    int shown_as(size_t i, const ExpandedSet& expanded) const;
    // Group indices from the root's child down to g (g included; the root left out).
    std::vector<int> chain(int g) const;
    // Every collapsible group's path (to expand everything).
    ExpandedSet all_paths() const;
};

// sig: the program's signature (which placeholders are weights); null for a
// module graph, where get_attr nodes are the weights.
ModuleTree build_module_tree(const Graph& g, const GraphSignature* sig);

} // namespace pt2lab::app
