// Layered (Sugiyama-style) layout for the graph view, top to bottom, over
// node sizes and edges only (no ImGui, no core types); O(V + E) per sweep.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pt2lab::app {

struct LayoutPoint {
    float x = 0, y = 0;
};

// What to lay out: node sizes and directed edges between node indices. The
// node order is a topological hint (torch.fx graph order is one): an edge to
// an earlier node is a back edge (a cycle, e.g. a node that consumes itself
// after a bad rewire) and is drawn upwards. Self-loops and repeated edges are allowed.
struct LayoutInput {
    std::vector<LayoutPoint> sizes; // width, height per node
    std::vector<std::pair<int, int>> edges;
};

struct LayoutOptions {
    float layer_gap = 44;   // vertical space between layers
    float node_gap = 22;    // horizontal space between neighbours in a layer
    float dummy_width = 10; // width a long edge takes in the layers it crosses
    int order_sweeps = 6;   // barycenter sweeps (each one down or up)
    int place_rounds = 4;   // coordinate assignment rounds (down + up each)
};

struct LayoutEdge {
    int src = 0, dst = 0;
    // Polyline from the source's port to the destination's port, through one
    // point per layer crossed. Forward edges leave the bottom of src and enter
    // the top of dst; back edges leave the top of src and enter the bottom of dst.
    std::vector<LayoutPoint> points;
    bool back = false;
    bool self_loop = false; // points is empty: the view draws a loop beside the node
};

struct Layout {
    std::vector<LayoutPoint> center; // per node
    std::vector<int> layer;          // per node, 0 = top
    std::vector<int> order;          // per node, index within its layer
    std::vector<LayoutEdge> edges;   // one per distinct input edge, in input order
    int layers = 0;
    int dummies = 0;
    float width = 0, height = 0; // bounds; every node lies in [0, width] x [0, height]
};

Layout layout_layered(const LayoutInput& in, const LayoutOptions& opt = {});

// Pairs of edge segments that cross between adjacent layers (the quantity the
// ordering sweeps reduce), counted on the laid-out result.
int64_t count_crossings(const Layout& layout);

} // namespace pt2lab::app
