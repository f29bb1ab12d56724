// The graph view's scene: a labelled box per node of a core Graph, its edges,
// the layered layout, and the last change's diff (ghosts for removed nodes).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "graph_layout.h"
#include "module_tree.h"
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
    std::string kind;   // what it is, short: "aten.conv2d", "parameter", "input", "getitem";
                        // a call_module's type, after its target where that is not its
                        // name: "body.0 · Conv2d"
    std::string detail; // the value's type: "f32[2, 8, 16, 16]"; "" when unknown
    std::string target; // the full target (search matches it)
    DiffMark mark = DiffMark::None;
    bool runnable = true; // false: the executor has no kernel for its op (set by the caller)
    LayoutPoint size;
    // A collapsed module (ModuleTree group index), drawn as one box standing for
    // its `members` graph nodes (id 0, name = the module path); -1 for a node.
    int group = -1;
    int members = 0;
    // Parameters, buffers and constants drawn inside this box (SceneContext::
    // weights_inside): one line each, "weight: f32[16, 3, 3, 3]", and their node ids.
    std::vector<std::string> weights;
    std::vector<uint32_t> weight_ids;
};

// An expanded module around its shown nodes: a labelled frame (click to collapse).
struct SceneFrame {
    int group = 0;    // ModuleTree index
    std::string path; // "stages.0.3"
    std::string type; // "Block"
    int depth = 1;
    LayoutPoint lo, hi; // bounds of its members' boxes, layout units
};

struct Scene {
    std::vector<SceneNode> nodes;           // graph order, ghosts placed near their old neighbours
    std::vector<std::pair<int, int>> edges; // producer -> consumer, node indices
    std::vector<std::vector<int>> inputs, users; // per node, node indices
    Layout layout;
    std::unordered_map<uint32_t, int> by_id; // Node::id -> index (ghosts excluded)
    std::unordered_map<std::string, int> by_name;
    // Nodes inside a collapsed module: Node::id -> the index of the module's box.
    std::unordered_map<uint32_t, int> hidden_in;
    int weights_inside = 0; // weight nodes drawn inside their reader's box
    // With weights inside: weights nothing reads (an eval-mode num_batches_tracked),
    // not drawn at all; node ids.
    std::vector<uint32_t> unused_weights;
    std::vector<SceneFrame> frames; // outer modules first
    // Per layout edge: its route's bounds {x0, y0, x1, y1} (the view culls with them).
    std::vector<std::array<float, 4>> edge_bounds;
    double layout_ms = 0; // how long layout_layered took

    int find_id(uint32_t id) const;
    // The box that shows node `id`: its own, or its collapsed module's; -1 if none.
    int find_shown(uint32_t id) const;
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
// Placeholder name -> its input spec, for labelling many nodes
// (GraphSignature::input_for searches linearly).
using InputSpecIndex = std::unordered_map<std::string, const InputSpec*>;
InputSpecIndex index_inputs(const GraphSignature* sig);
std::string node_kind_label(const Node& n, const GraphSignature* sig, const InputSpecIndex& index);
// meta['val'] as print_readable shows it: "f32[2, 8, 16, 16]", "(f32[8], f32[8])", "Sym(s0)".
std::string node_value_type(const Node& n);

// What a scene reads besides the graph: the program's signature (placeholder
// kinds; null for a module) and the module's submodules (call_module types).
struct SceneContext {
    const GraphSignature* signature = nullptr;
    const std::map<std::string, Submodule>* submodules = nullptr;
    // Module grouping: with both set, nodes of collapsed modules become one box per module.
    const ModuleTree* modules = nullptr;
    const ExpandedSet* expanded = nullptr;
    // Draw a parameter / buffer / constant placeholder (or a get_attr) that one
    // node reads inside that node's box, as the course's figures and Netron do,
    // instead of as a box of its own (hidden_in maps its id to the reader's box);
    // one that nothing reads is not drawn (Scene::unused_weights).
    bool weights_inside = false;
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
