// Layered graph layout (see graph_layout.h): oriented edges, longest-path
// layers, dummies, barycenter sweeps, isotonic x placement per layer.
#include "graph_layout.h"

#include <algorithm>
#include <numeric>

namespace pt2lab::app {
namespace {

// Compressed adjacency: neighbours of v are idx[start[v] .. start[v + 1]).
struct Adjacency {
    std::vector<int> start, idx;
    void build(int n, const std::vector<std::pair<int, int>>& pairs, bool by_first) {
        start.assign(static_cast<size_t>(n) + 1, 0);
        for (const auto& p : pairs) ++start[static_cast<size_t>(by_first ? p.first : p.second) + 1];
        for (int v = 0; v < n; ++v) start[v + 1] += start[v];
        idx.resize(pairs.size());
        std::vector<int> fill(start.begin(), start.end() - 1);
        for (const auto& p : pairs) {
            int key = by_first ? p.first : p.second;
            idx[static_cast<size_t>(fill[key]++)] = by_first ? p.second : p.first;
        }
    }
    int begin(int v) const { return start[v]; }
    int end(int v) const { return start[v + 1]; }
    int degree(int v) const { return start[v + 1] - start[v]; }
};

// Inversions of `seq` over values in [0, n): crossings of a layer pair whose
// segments are sorted by their upper end.
int64_t inversions(const std::vector<int>& seq, int n, std::vector<int>& tree) {
    tree.assign(static_cast<size_t>(n) + 1, 0);
    int64_t count = 0;
    int64_t seen = 0;
    for (int v : seq) {
        int64_t not_greater = 0;
        for (int i = v + 1; i > 0; i -= i & -i) not_greater += tree[i];
        count += seen - not_greater;
        for (int i = v + 1; i <= n; i += i & -i) ++tree[i];
        ++seen;
    }
    return count;
}

struct Work {
    int n = 0;                                 // real nodes
    int total = 0;                             // real + dummy nodes
    std::vector<int> layer;                    // per node (real and dummy)
    std::vector<float> width;                  // per node
    std::vector<float> height;                 // per node
    std::vector<std::vector<int>> layers;      // node ids per layer, in order
    std::vector<int> pos;                      // index of each node within its layer
    std::vector<std::pair<int, int>> segments; // upper -> lower, between adjacent layers
    Adjacency up, down;                        // neighbours in the layer above / below
    std::vector<float> x;
};

int64_t crossings(const Work& w) {
    int64_t total = 0;
    std::vector<int> tree;
    std::vector<std::pair<int, int>> pairs;
    std::vector<int> seq;
    for (size_t l = 0; l + 1 < w.layers.size(); ++l) {
        pairs.clear();
        for (int u : w.layers[l])
            for (int k = w.down.begin(u); k < w.down.end(u); ++k)
                pairs.push_back({w.pos[u], w.pos[w.down.idx[k]]});
        std::sort(pairs.begin(), pairs.end());
        seq.clear();
        for (const auto& p : pairs) seq.push_back(p.second);
        total += inversions(seq, static_cast<int>(w.layers[l + 1].size()), tree);
    }
    return total;
}

// Reorders one layer by the mean position of each node's neighbours in the
// adjacent layer; nodes without such neighbours keep their place.
void sort_layer(Work& w, std::vector<int>& nodes, const Adjacency& adj, std::vector<float>& key) {
    for (int v : nodes) {
        int deg = adj.degree(v);
        if (deg == 0) {
            key[v] = static_cast<float>(w.pos[v]);
            continue;
        }
        float sum = 0;
        for (int k = adj.begin(v); k < adj.end(v); ++k)
            sum += static_cast<float>(w.pos[adj.idx[k]]);
        key[v] = sum / static_cast<float>(deg);
    }
    std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) { return key[a] < key[b]; });
    for (size_t i = 0; i < nodes.size(); ++i) w.pos[nodes[i]] = static_cast<int>(i);
}

void order_layers(Work& w, int sweeps) {
    std::vector<float> key(static_cast<size_t>(w.total), 0);
    std::vector<std::vector<int>> best = w.layers;
    int64_t best_crossings = crossings(w);
    for (int s = 0; s < sweeps && best_crossings > 0; ++s) {
        bool downward = s % 2 == 0;
        int count = static_cast<int>(w.layers.size());
        for (int i = 1; i < count; ++i) {
            int l = downward ? i : count - 1 - i;
            sort_layer(w, w.layers[static_cast<size_t>(l)], downward ? w.up : w.down, key);
        }
        int64_t c = crossings(w);
        if (c < best_crossings) {
            best_crossings = c;
            best = w.layers;
        }
    }
    w.layers = std::move(best);
    for (auto& layer : w.layers)
        for (size_t i = 0; i < layer.size(); ++i) w.pos[layer[i]] = static_cast<int>(i);
}

// Places one layer: x as close as possible (weighted least squares) to
// `desired`, keeping the order and a minimum distance between neighbours.
void place_layer(Work& w, const std::vector<int>& nodes, const std::vector<float>& desired,
                 const std::vector<float>& weight, float gap) {
    size_t m = nodes.size();
    if (m == 0) return;
    // With o_i the smallest offset of node i from node 0, y_i = x_i - o_i must
    // be non-decreasing: isotonic regression of desired_i - o_i.
    std::vector<float> offset(m, 0);
    for (size_t i = 1; i < m; ++i)
        offset[i] = offset[i - 1] + (w.width[nodes[i - 1]] + w.width[nodes[i]]) * 0.5f + gap;
    struct Block {
        float sum_wy, sum_w;
        size_t count;
    };
    std::vector<Block> blocks;
    blocks.reserve(m);
    for (size_t i = 0; i < m; ++i) {
        float wt = weight[nodes[i]];
        blocks.push_back({wt * (desired[nodes[i]] - offset[i]), wt, 1});
        while (blocks.size() > 1) {
            Block& b = blocks[blocks.size() - 1];
            Block& a = blocks[blocks.size() - 2];
            if (a.sum_wy / a.sum_w <= b.sum_wy / b.sum_w) break;
            a.sum_wy += b.sum_wy;
            a.sum_w += b.sum_w;
            a.count += b.count;
            blocks.pop_back();
        }
    }
    size_t i = 0;
    for (const Block& b : blocks) {
        float y = b.sum_wy / b.sum_w;
        for (size_t k = 0; k < b.count; ++k, ++i) w.x[nodes[i]] = y + offset[i];
    }
}

void place_x(Work& w, const LayoutOptions& opt) {
    w.x.assign(static_cast<size_t>(w.total), 0);
    for (auto& layer : w.layers) {
        float x = 0;
        for (size_t i = 0; i < layer.size(); ++i) {
            if (i > 0) x += (w.width[layer[i - 1]] + w.width[layer[i]]) * 0.5f + opt.node_gap;
            w.x[layer[i]] = x;
        }
        float shift = x * 0.5f; // centre every layer on 0 to start with
        for (int v : layer) w.x[v] -= shift;
    }
    // Long edges should run straight: their dummies pull harder.
    std::vector<float> weight(static_cast<size_t>(w.total), 1.0f);
    for (int v = w.n; v < w.total; ++v) weight[v] = 4.0f;
    std::vector<float> desired(static_cast<size_t>(w.total), 0);
    auto mean_of = [&](int v, const Adjacency& a, const Adjacency* b) {
        float sum = 0;
        int count = 0;
        for (int k = a.begin(v); k < a.end(v); ++k, ++count) sum += w.x[a.idx[k]];
        if (b)
            for (int k = b->begin(v); k < b->end(v); ++k, ++count) sum += w.x[b->idx[k]];
        return count ? sum / static_cast<float>(count) : w.x[v];
    };
    int count = static_cast<int>(w.layers.size());
    for (int round = 0; round < opt.place_rounds; ++round) {
        for (int l = 1; l < count; ++l) {
            for (int v : w.layers[static_cast<size_t>(l)]) desired[v] = mean_of(v, w.up, nullptr);
            place_layer(w, w.layers[static_cast<size_t>(l)], desired, weight, opt.node_gap);
        }
        for (int l = count - 2; l >= 0; --l) {
            for (int v : w.layers[static_cast<size_t>(l)]) desired[v] = mean_of(v, w.down, nullptr);
            place_layer(w, w.layers[static_cast<size_t>(l)], desired, weight, opt.node_gap);
        }
    }
    // A last balanced pass: each node between its neighbours above and below.
    for (int l = 0; l < count; ++l) {
        for (int v : w.layers[static_cast<size_t>(l)]) desired[v] = mean_of(v, w.up, &w.down);
        place_layer(w, w.layers[static_cast<size_t>(l)], desired, weight, opt.node_gap);
    }
}

} // namespace

Layout layout_layered(const LayoutInput& in, const LayoutOptions& opt) {
    Layout out;
    Work w;
    w.n = static_cast<int>(in.sizes.size());
    const int n = w.n;
    out.center.assign(static_cast<size_t>(n), {});
    out.layer.assign(static_cast<size_t>(n), 0);
    out.order.assign(static_cast<size_t>(n), 0);
    if (n == 0) return out;

    // 1. Distinct edges, oriented along the node order.
    struct Oriented {
        int from, to; // from < to
        int input;    // index into out.edges
    };
    std::vector<Oriented> oriented;
    {
        std::vector<std::pair<int, int>> seen;
        seen.reserve(in.edges.size());
        for (const auto& e : in.edges) {
            if (e.first < 0 || e.second < 0 || e.first >= n || e.second >= n) continue;
            seen.push_back(e);
        }
        std::vector<size_t> idx(seen.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(),
                         [&](size_t a, size_t b) { return seen[a] < seen[b]; });
        std::vector<bool> keep(seen.size(), false);
        for (size_t k = 0; k < idx.size(); ++k)
            keep[idx[k]] = k == 0 || seen[idx[k]] != seen[idx[k - 1]];
        for (size_t k = 0; k < seen.size(); ++k) {
            if (!keep[k]) continue;
            LayoutEdge e;
            e.src = seen[k].first;
            e.dst = seen[k].second;
            e.self_loop = e.src == e.dst;
            e.back = e.src > e.dst;
            int input = static_cast<int>(out.edges.size());
            out.edges.push_back(e);
            if (!e.self_loop)
                oriented.push_back({std::min(e.src, e.dst), std::max(e.src, e.dst), input});
        }
    }

    // 2. Longest-path layers in node order; then each source moves down to
    // just above its nearest user (parameters sit beside the op reading them).
    std::vector<int>& layer = out.layer;
    {
        std::vector<std::pair<int, int>> pairs;
        pairs.reserve(oriented.size());
        for (const auto& e : oriented) pairs.push_back({e.from, e.to});
        Adjacency preds, succs;
        preds.build(n, pairs, false);
        succs.build(n, pairs, true);
        for (int v = 0; v < n; ++v)
            for (int k = preds.begin(v); k < preds.end(v); ++k)
                layer[v] = std::max(layer[v], layer[preds.idx[k]] + 1);
        for (int v = 0; v < n; ++v) {
            if (preds.degree(v) != 0 || succs.degree(v) == 0) continue;
            int nearest = -1;
            for (int k = succs.begin(v); k < succs.end(v); ++k)
                nearest =
                    nearest < 0 ? layer[succs.idx[k]] : std::min(nearest, layer[succs.idx[k]]);
            layer[v] = std::max(0, nearest - 1);
        }
    }
    int layers = 0;
    for (int v = 0; v < n; ++v) layers = std::max(layers, layer[v] + 1);
    out.layers = layers;

    // 3. Dummy nodes: one per layer a long edge crosses.
    w.layer = layer;
    w.width.resize(static_cast<size_t>(n));
    w.height.resize(static_cast<size_t>(n));
    for (int v = 0; v < n; ++v) {
        w.width[v] = in.sizes[v].x;
        w.height[v] = in.sizes[v].y;
    }
    std::vector<std::vector<int>> chain(out.edges.size()); // dummies of each edge, top to bottom
    for (const auto& e : oriented) {
        int upper = e.from, lower = e.to;
        int prev = upper;
        for (int l = layer[upper] + 1; l < layer[lower]; ++l) {
            int d = static_cast<int>(w.layer.size());
            w.layer.push_back(l);
            w.width.push_back(opt.dummy_width);
            w.height.push_back(0);
            chain[static_cast<size_t>(e.input)].push_back(d);
            w.segments.push_back({prev, d});
            prev = d;
        }
        w.segments.push_back({prev, lower});
    }
    w.total = static_cast<int>(w.layer.size());
    out.dummies = w.total - n;
    w.up.build(w.total, w.segments, false);
    w.down.build(w.total, w.segments, true);

    // 4. Ordering: node order (dummies after the real nodes) is the starting point.
    w.layers.assign(static_cast<size_t>(layers), {});
    for (int v = 0; v < w.total; ++v) w.layers[static_cast<size_t>(w.layer[v])].push_back(v);
    w.pos.assign(static_cast<size_t>(w.total), 0);
    for (auto& l : w.layers)
        for (size_t i = 0; i < l.size(); ++i) w.pos[l[i]] = static_cast<int>(i);
    order_layers(w, opt.order_sweeps);

    // 5. Coordinates.
    place_x(w, opt);
    std::vector<float> layer_top(static_cast<size_t>(layers), 0),
        layer_h(static_cast<size_t>(layers), 0);
    for (int v = 0; v < n; ++v) layer_h[layer[v]] = std::max(layer_h[layer[v]], w.height[v]);
    for (int l = 1; l < layers; ++l)
        layer_top[l] = layer_top[l - 1] + layer_h[l - 1] + opt.layer_gap;
    float min_x = 0, max_x = 0;
    bool first = true;
    for (int v = 0; v < w.total; ++v) {
        float half = w.width[v] * 0.5f;
        if (first || w.x[v] - half < min_x) min_x = w.x[v] - half;
        if (first || w.x[v] + half > max_x) max_x = w.x[v] + half;
        first = false;
    }
    for (int v = 0; v < n; ++v) {
        out.center[v] = {w.x[v] - min_x, layer_top[layer[v]] + layer_h[layer[v]] * 0.5f};
        out.order[v] = w.pos[v];
    }
    out.width = max_x - min_x;
    out.height = layer_top[layers - 1] + layer_h[layers - 1];

    // 6. Routes, with ports spread along each node's top (inputs) and bottom
    // (outputs) in the order their first route point lies.
    auto dummy_point = [&](int d) {
        int l = w.layer[d];
        return LayoutPoint{w.x[d] - min_x, layer_top[l] + layer_h[l] * 0.5f};
    };
    for (size_t i = 0; i < out.edges.size(); ++i) {
        LayoutEdge& e = out.edges[i];
        if (e.self_loop) continue;
        int upper = std::min(e.src, e.dst), lower = std::max(e.src, e.dst);
        // Top-down: the bottom of the upper node, the dummies, the top of the lower node.
        e.points.push_back({out.center[upper].x, out.center[upper].y + w.height[upper] * 0.5f});
        for (int d : chain[i]) e.points.push_back(dummy_point(d));
        e.points.push_back({out.center[lower].x, out.center[lower].y - w.height[lower] * 0.5f});
    }
    // Ports: the k edges meeting one side of a node share it evenly, sorted by
    // the x of the route point next to the node.
    struct PortUse {
        int edge;
        bool first; // the edge's first point (else its last)
        float toward;
    };
    std::vector<std::vector<PortUse>> top(static_cast<size_t>(n)), bottom(static_cast<size_t>(n));
    for (size_t i = 0; i < out.edges.size(); ++i) {
        const LayoutEdge& e = out.edges[i];
        if (e.self_loop) continue;
        int upper = std::min(e.src, e.dst), lower = std::max(e.src, e.dst);
        const auto& p = e.points;
        bottom[upper].push_back({static_cast<int>(i), true, p[1].x});
        top[lower].push_back({static_cast<int>(i), false, p[p.size() - 2].x});
    }
    auto spread = [&](std::vector<PortUse>& uses, int v) {
        if (uses.size() < 2) return;
        std::stable_sort(uses.begin(), uses.end(),
                         [](const PortUse& a, const PortUse& b) { return a.toward < b.toward; });
        float span = w.width[v] * 0.7f;
        for (size_t k = 0; k < uses.size(); ++k) {
            float t = (static_cast<float>(k) + 0.5f) / static_cast<float>(uses.size()) - 0.5f;
            auto& pts = out.edges[static_cast<size_t>(uses[k].edge)].points;
            LayoutPoint& pt = uses[k].first ? pts.front() : pts.back();
            pt.x = out.center[v].x + t * span;
        }
    };
    for (int v = 0; v < n; ++v) {
        spread(top[v], v);
        spread(bottom[v], v);
    }
    for (LayoutEdge& e : out.edges)
        if (e.back) std::reverse(e.points.begin(), e.points.end());
    return out;
}

int64_t count_crossings(const Layout& layout) {
    // Segments between adjacent layers, with the x of both ends, per layer pair.
    std::vector<std::vector<std::pair<float, float>>> per_pair(
        static_cast<size_t>(std::max(0, layout.layers - 1)));
    for (const LayoutEdge& e : layout.edges) {
        if (e.self_loop || e.points.size() < 2) continue;
        std::vector<LayoutPoint> pts = e.points;
        if (e.back) std::reverse(pts.begin(), pts.end());
        int top_layer = layout.layer[static_cast<size_t>(std::min(e.src, e.dst))];
        for (size_t k = 0; k + 1 < pts.size(); ++k)
            per_pair[static_cast<size_t>(top_layer) + k].push_back({pts[k].x, pts[k + 1].x});
    }
    int64_t total = 0;
    for (const auto& segs : per_pair)
        for (size_t a = 0; a < segs.size(); ++a)
            for (size_t b = a + 1; b < segs.size(); ++b) {
                float du = segs[a].first - segs[b].first, dl = segs[a].second - segs[b].second;
                if ((du < 0 && dl > 0) || (du > 0 && dl < 0)) ++total;
            }
    return total;
}

} // namespace pt2lab::app
