// The depthwise fast conv against the reference loop over a table of shapes.
// Real-torch goldens are in test_exec_cases.cpp; these cover the shapes the
// goldens do not.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "exec/interpreter.h"
#include "exec/kernels.h"
#include "exec/parity.h"
#include "util/rng.h"

using namespace pt2lab;

namespace {

Tensor random_tensor(std::vector<int64_t> sizes, uint64_t seed) {
    Tensor t = Tensor::empty(ScalarType::Float, std::move(sizes));
    SeededRng rng(seed);
    for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = rng.normal();
    return t;
}

struct DwCase {
    const char* name;
    std::vector<int64_t> x; // [N, C, H, W]
    int64_t mult, kh, kw;   // filters per channel, kernel
    int64_t stride[2], pad[2], dil[2];
    bool bias;
};

} // namespace

TEST_CASE("the depthwise fast conv agrees with the reference loop", "[exec]") {
    const DwCase cases[] = {
        {"3x3 s1 p1, 14x14", {1, 8, 14, 14}, 1, 3, 3, {1, 1}, {1, 1}, {1, 1}, true},
        {"3x3 s2 p1, 112x112", {1, 3, 112, 112}, 1, 3, 3, {2, 2}, {1, 1}, {1, 1}, true},
        {"3x3 s1 p1, 7x7", {1, 16, 7, 7}, 1, 3, 3, {1, 1}, {1, 1}, {1, 1}, true},
        {"3x3 s2 p1, odd 13x13", {1, 5, 13, 13}, 1, 3, 3, {2, 2}, {1, 1}, {1, 1}, true},
        {"3x3 s1 p0, 13x7", {1, 4, 13, 7}, 1, 3, 3, {1, 1}, {0, 0}, {1, 1}, false},
        {"5x5 s1 p2, 14x14", {1, 6, 14, 14}, 1, 5, 5, {1, 1}, {2, 2}, {1, 1}, true},
        {"5x5 s2 p2, 15x15", {1, 6, 15, 15}, 1, 5, 5, {2, 2}, {2, 2}, {1, 1}, true},
        {"5x5 s2 p1, 9x11", {1, 3, 9, 11}, 1, 5, 5, {2, 2}, {1, 1}, {1, 1}, true},
        {"3x3 dilation 2 p2, 13x13", {1, 4, 13, 13}, 1, 3, 3, {1, 1}, {2, 2}, {2, 2}, true},
        {"3x3 dilation 2 s2 p1, 17x12", {1, 4, 17, 12}, 1, 3, 3, {2, 2}, {1, 1}, {2, 2}, true},
        {"batch 2, 3x3 s1 p1", {2, 5, 10, 9}, 1, 3, 3, {1, 1}, {1, 1}, {1, 1}, true},
        {"multiplier 2, 3x3 s1 p1", {1, 4, 12, 12}, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}, true},
        {"multiplier 3, batch 2, 5x5 s2 p2", {2, 3, 11, 11}, 3, 5, 5, {2, 2}, {2, 2}, {1, 1}, true},
        {"one input channel, 8 filters 3x3", {1, 1, 9, 9}, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, true},
        {"3x1 s(2,1) p(1,0)", {1, 3, 10, 6}, 1, 3, 1, {2, 1}, {1, 0}, {1, 1}, true},
        {"1x5 s(1,3) p(0,2)", {1, 3, 6, 20}, 1, 1, 5, {1, 3}, {0, 2}, {1, 1}, true},
        {"3x3 s3, stride 3 phases", {1, 2, 16, 19}, 1, 3, 3, {3, 3}, {1, 1}, {1, 1}, true},
        {"a 3x3 kernel on a 1x1 input, padded",
         {1, 4, 1, 1},
         1,
         3,
         3,
         {1, 1},
         {1, 1},
         {1, 1},
         true},
        // huge dilation over a small input: the plane would be mostly padding, so
        // the fast conv takes its per-row fallback
        {"3x3 dilation 40 p40, 3x3", {1, 2, 3, 3}, 1, 3, 3, {1, 1}, {40, 40}, {40, 40}, true},
    };
    uint64_t seed = 10;
    for (const DwCase& c : cases) {
        INFO(c.name);
        const int64_t C = c.x[1];
        Tensor x = random_tensor(c.x, ++seed),
               w = random_tensor({C * c.mult, 1, c.kh, c.kw}, ++seed),
               b = random_tensor({C * c.mult}, ++seed);
        ConvParams p;
        for (int i = 0; i < 2; ++i) {
            p.stride[i] = c.stride[i];
            p.padding[i] = c.pad[i];
            p.dilation[i] = c.dil[i];
        }
        p.groups = C;
        auto ref = conv2d_reference(x, w, c.bias ? &b : nullptr, p);
        auto fast = conv2d_fast(x, w, c.bias ? &b : nullptr, p);
        REQUIRE(ref.ok());
        REQUIRE(fast.ok());
        REQUIRE(fast.value().sizes == ref.value().sizes);
        TensorParity tp = compare_tensors("dw", fast.value(), ref.value(), Tolerance{1e-5, 1e-5});
        INFO("max |diff| " << tp.max_abs);
        CHECK(tp.allclose);
    }
}

