// The graph view's scene: a labelled box per node of a core Graph, its edges,
// the layered layout, and the last change's diff (ghosts for removed nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "graph_layout.h"
#include "passes/graph_diff.h"
#include "program/exported_program.h"
#include "program/graph_module.h"

namespace pt2lab::app {

enum class DiffMark { None, Added, Rewired, Changed, Removed };
const char* diff_mark_name(DiffMark m); // "added", ...

struct SceneNode {
    uint32_t id = 0;  // Node::id in the graph; 0 for a ghost
    std::string name; // node name
    Op op = Op::CallFunction;
    std::string kind;   // what it is, short: "aten.conv2d", "parameter", "input", "getitem"
    std::string detail; // the value's type: "f32[2, 8, 16, 16]"; "" when unknown
    std::string target; // the full target (search matches it)
    DiffMark mark = DiffMark::None;
    bool runnable = true; // false: the executor has no kernel for its op (set by the caller)
    LayoutPoint size;
};

struct Scene {
    std::vector<SceneNode> nodes;           // graph order, ghosts placed near their old neighbours
    std::vector<std::pair<int, int>> edges; // producer -> consumer, node indices
    std::vector<std::vector<int>> inputs, users; // per node, node indices
    Layout layout;
    std::unordered_map<uint32_t, int> by_id; // Node::id -> index (ghosts excluded)
    std::unordered_map<std::string, int> by_name;

    int find_id(uint32_t id) const;
    int find_name(const std::string& name) const;
};

// Text widths for the layout, in layout units: `mono` for the detail line.
struct SceneMetrics {
    std::function<float(const std::string&, bool mono)> text_width;
    float line_height = 17;
    float pad_x = 10, pad_y = 6;
    float min_width = 70;
};

// The short "what" of a node: "aten.conv2d" (overload "default" left out),
// "aten.add.Tensor", "getitem", "parameter" / "buffer" / "constant" / "input"
// for placeholders (sig: the program's signature, null for a module), the
// attribute path for get_attr, the submodule for call_module, "output".
std::string node_kind_label(const Node& n, const GraphSignature* sig);
// meta['val'] as print_readable shows it: "f32[2, 8, 16, 16]", "(f32[8], f32[8])", "Sym(s0)".
std::string node_value_type(const Node& n);

// What a scene reads besides the graph: the program's signature (placeholder
// kinds; null for a module) and the module's submodules (call_module types).
struct SceneContext {
    const GraphSignature* signature = nullptr;
    const std::map<std::string, Submodule>* submodules = nullptr;
};

// Builds the scene of g. With a diff (the last transformation on this graph)
// the nodes it names are marked, and its removed nodes are taken from `prev`
// (the scene before the transformation) as ghosts wired to their old neighbours.
Scene build_scene(const Graph& g, const SceneContext& ctx, const SceneMetrics& m,
                  const GraphDiff* diff = nullptr, const Scene* prev = nullptr,
                  const LayoutOptions& opt = {});

// Case-insensitive substring match on a node's name, target and kind label.
bool scene_node_matches(const SceneNode& n, const std::string& query);

} // namespace pt2lab::app
