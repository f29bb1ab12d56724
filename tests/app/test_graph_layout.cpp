// The graph view's layered layout: layers follow edges, nodes never overlap,
// orderings avoid crossings a planar drawing does not need, cycles and
// self-loops lay out, and big graphs stay linear in size.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "graph_layout.h"

using namespace pt2lab::app;

namespace {

LayoutInput boxes(int n, float w = 80, float h = 30) {
    LayoutInput in;
    in.sizes.assign(static_cast<size_t>(n), {w, h});
    return in;
}

// Every pair of nodes in one layer is at least the gap apart (no overlap).
void require_no_overlap(const LayoutInput& in, const Layout& l, float gap) {
    std::vector<std::vector<int>> by_layer(static_cast<size_t>(l.layers));
    for (size_t v = 0; v < in.sizes.size(); ++v)
        by_layer[static_cast<size_t>(l.layer[v])].push_back(int(v));
    for (auto& nodes : by_layer) {
        std::sort(nodes.begin(), nodes.end(),
                  [&](int a, int b) { return l.center[a].x < l.center[b].x; });
        for (size_t i = 1; i < nodes.size(); ++i) {
            int a = nodes[i - 1], b = nodes[i];
            float need = (in.sizes[a].x + in.sizes[b].x) * 0.5f + gap;
            INFO("nodes " << a << " and " << b);
            REQUIRE(l.center[b].x - l.center[a].x >= need - 1e-3f);
        }
    }
}

} // namespace

TEST_CASE("a chain stacks one node per layer, straight down", "[layout]") {
    LayoutInput in = boxes(4);
    in.edges = {{0, 1}, {1, 2}, {2, 3}};
    Layout l = layout_layered(in);
    REQUIRE(l.layers == 4);
    for (int v = 0; v < 4; ++v) CHECK(l.layer[v] == v);
    for (int v = 1; v < 4; ++v) {
        CHECK(l.center[v].x == Approx(l.center[0].x));
        CHECK(l.center[v].y > l.center[v - 1].y + 30);
    }
    REQUIRE(l.edges.size() == 3);
    for (const auto& e : l.edges) {
        REQUIRE(e.points.size() == 2);
        CHECK(e.points.front().y == Approx(l.center[e.src].y + 15)); // bottom of the source
        CHECK(e.points.back().y == Approx(l.center[e.dst].y - 15));  // top of the destination
    }
}

TEST_CASE("sources sit just above their first user; long edges get dummies", "[layout]") {
    // x -> conv -> bn -> relu -> out; w feeds conv, bn_w feeds bn; x also feeds out (a skip).
    LayoutInput in = boxes(7);
    // 0 w, 1 bn_w, 2 x, 3 conv, 4 bn, 5 relu, 6 out
    in.edges = {{2, 3}, {0, 3}, {3, 4}, {1, 4}, {4, 5}, {5, 6}, {2, 6}};
    Layout l = layout_layered(in);
    CHECK(l.layer[2] == 0);
    CHECK(l.layer[0] == 0);
    CHECK(l.layer[3] == 1);
    CHECK(l.layer[1] == 1); // pulled down beside conv, next to bn
    CHECK(l.layer[4] == 2);
    CHECK(l.layer[6] == 4);
    CHECK(l.dummies == 3); // x -> out crosses layers 1, 2, 3
    const LayoutEdge& skip = l.edges.back();
    REQUIRE(skip.src == 2);
    REQUIRE(skip.points.size() == 5);
    for (size_t k = 1; k < skip.points.size(); ++k) CHECK(skip.points[k].y > skip.points[k - 1].y);
    require_no_overlap(in, l, LayoutOptions{}.node_gap);
}

TEST_CASE("the ordering sweeps remove crossings the input order has", "[layout]") {
    // Two parallel chains given in an order that crosses: a0 -> b1, a1 -> b0.
    LayoutInput in = boxes(4);
    in.edges = {{0, 3}, {1, 2}};
    Layout l = layout_layered(in);
    CHECK(count_crossings(l) == 0);
    // A wider case: a "twisted ladder" of three layers, given in an order
    // with many crossings, is planar (reverse the middle layer): the sweeps find it.
    LayoutInput ladder = boxes(9); // layers: 0-2, 3-5, 6-8
    ladder.edges = {{0, 5}, {1, 4}, {2, 3}, {3, 8}, {4, 7}, {5, 6}, {0, 4}, {1, 3}};
    Layout ll = layout_layered(ladder);
    CHECK(ll.layer[4] == 1);
    CHECK(ll.layer[7] == 2);
    CHECK(count_crossings(ll) == 0);
    require_no_overlap(ladder, ll, LayoutOptions{}.node_gap);
}

TEST_CASE("a node with several inputs sits under their middle", "[layout]") {
    LayoutInput in = boxes(4);
    in.edges = {{0, 3}, {1, 3}, {2, 3}};
    Layout l = layout_layered(in);
    float mid = (l.center[0].x + l.center[1].x + l.center[2].x) / 3;
    CHECK(l.center[3].x == Approx(mid).margin(0.5));
    // Its three input ports are spread along its top, left to right like their sources.
    std::vector<float> ports;
    for (const auto& e : l.edges) ports.push_back(e.points.back().x);
    CHECK(ports[0] < ports[1]);
    CHECK(ports[1] < ports[2]);
    require_no_overlap(in, l, LayoutOptions{}.node_gap);
}

TEST_CASE("self-loops and back edges (a bad rewire) still lay out", "[layout]") {
    // relu -> obs, obs consumes itself, output reads obs; plus a real cycle 3 -> 1.
    LayoutInput in = boxes(4);
    in.edges = {{0, 1}, {1, 1}, {1, 2}, {2, 3}, {3, 1}};
    Layout l = layout_layered(in);
    REQUIRE(l.edges.size() == 5);
    CHECK(l.edges[1].self_loop);
    CHECK(l.edges[1].points.empty());
    const LayoutEdge& back = l.edges[4];
    CHECK(back.back);
    REQUIRE(back.points.size() >= 2);
    // A back edge leaves the top of its (lower) source and enters the bottom of its target.
    CHECK(back.points.front().y == Approx(l.center[3].y - 15));
    CHECK(back.points.back().y == Approx(l.center[1].y + 15));
    CHECK(l.layer[3] > l.layer[1]);
}

TEST_CASE("repeated edges and out-of-range indices are tolerated", "[layout]") {
    LayoutInput in = boxes(2);
    in.edges = {{0, 1}, {0, 1}, {5, 1}, {-1, 0}};
    Layout l = layout_layered(in);
    CHECK(l.edges.size() == 1);
    CHECK(layout_layered(LayoutInput{}).layers == 0);
}

TEST_CASE("every node lies inside the reported bounds", "[layout]") {
    LayoutInput in;
    for (int v = 0; v < 30; ++v)
        in.sizes.push_back({float(40 + (v * 37) % 90), float(24 + v % 3 * 8)});
    for (int v = 1; v < 30; ++v) in.edges.push_back({(v * 7) % v, v});
    Layout l = layout_layered(in);
    for (int v = 0; v < 30; ++v) {
        CHECK(l.center[v].x - in.sizes[v].x / 2 >= -1e-3f);
        CHECK(l.center[v].x + in.sizes[v].x / 2 <= l.width + 1e-3f);
        CHECK(l.center[v].y - in.sizes[v].y / 2 >= -1e-3f);
        CHECK(l.center[v].y + in.sizes[v].y / 2 <= l.height + 1e-3f);
    }
    require_no_overlap(in, l, LayoutOptions{}.node_gap);
}

TEST_CASE("10k nodes: a chain of blocks with skips and fan-out lays out", "[layout]") {
    // Residual blocks: each block reads a parameter, fans out to two branches
    // that join again, and adds the block input (a skip over 3 layers).
    LayoutInput in;
    int prev = -1;
    auto add = [&](float w) {
        in.sizes.push_back({w, 36});
        return int(in.sizes.size()) - 1;
    };
    while (in.sizes.size() < 10000) {
        int param = add(90);
        int conv = add(110);
        if (prev >= 0) in.edges.push_back({prev, conv});
        in.edges.push_back({param, conv});
        int a = add(80), b = add(80);
        in.edges.push_back({conv, a});
        in.edges.push_back({conv, b});
        int join = add(80);
        in.edges.push_back({a, join});
        in.edges.push_back({b, join});
        if (prev >= 0) in.edges.push_back({prev, join});
        prev = join;
    }
    auto t0 = std::chrono::steady_clock::now();
    Layout l = layout_layered(in);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("layout of %zu nodes, %zu edges: %.1f ms, %d layers, %d dummies\n", in.sizes.size(),
                in.edges.size(), ms, l.layers, l.dummies);
    CHECK(l.layers > 5000);
    // Linear size: one dummy per skip edge per layer it crosses (2), none elsewhere.
    CHECK(l.dummies <= int(in.sizes.size()));
    for (const auto& e : l.edges) {
        REQUIRE(!e.back);
        CHECK(l.layer[e.dst] > l.layer[e.src]);
    }
}
