// The fast conv paths against the reference loop (double accumulation, which
// the case table checks against PyTorch): Winograd F(2x2, 3x3) and the im2col +
// GEMM path on the shapes that reach their edge cases. Each output is checked
// against a bound scaled by its own magnitude sum, conv(|x|, |w|) + |b|: float32
// rounding of a sum grows with the sum of its terms' magnitudes, not with the result.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "exec/kernels.h"
#include "exec/warm_up.h"

using namespace pt2lab;

namespace {

Tensor abs_of(const Tensor& t) {
    Tensor a = t;
    for (int64_t k = 0; k < a.numel(); ++k) a.f32()[k] = std::fabs(a.f32()[k]);
    return a;
}

struct ConvCase {
    std::vector<int64_t> x, w;
    int64_t pad;
    bool bias;
};

// Largest |got - want| / (magnitude sum) over the outputs; got and want same shape.
double worst_relative(const Tensor& got, const Tensor& want, const Tensor& magnitude) {
    REQUIRE(got.sizes == want.sizes);
    double worst = 0.0;
    for (int64_t k = 0; k < got.numel(); ++k) {
        double scale = std::max(double(magnitude.f32()[k]), 1e-30);
        worst = std::max(worst, std::fabs(double(got.f32()[k]) - double(want.f32()[k])) / scale);
    }
    return worst;
}

template <class Conv> void check_against_reference(const ConvCase& c, ConvParams p, Conv conv) {
    INFO("x " << Tensor::empty(ScalarType::Float, c.x).type_str() << ", w "
              << Tensor::empty(ScalarType::Float, c.w).type_str() << ", padding " << c.pad
              << (c.bias ? ", bias" : ""));
    p.padding[0] = p.padding[1] = c.pad;
    Tensor x = Tensor::seeded_normal(c.x, 11), w = Tensor::seeded_normal(c.w, 12),
           b = Tensor::seeded_normal({c.w[0]}, 13);
    const Tensor* bp = c.bias ? &b : nullptr;
    auto want = conv2d_reference(x, w, bp, p);
    REQUIRE(want.ok());
    Tensor ax = abs_of(x), aw = abs_of(w), ab = abs_of(b);
    auto magnitude = conv2d_reference(ax, aw, c.bias ? &ab : nullptr, p);
    REQUIRE(magnitude.ok());
    auto got = conv(x, w, bp, p);
    REQUIRE(got.ok());
    // float32 carries 2^-24 relative; the sums and transforms lose a few of those
    // (measured: at most 2.6e-7 for Winograd, 1.8e-7 for im2col on these cases)
    CHECK(worst_relative(got.value(), want.value(), magnitude.value()) < 1e-6);
}

} // namespace

TEST_CASE("Winograd F(2x2, 3x3) matches the reference conv on odd sizes, paddings and batches",
          "[exec][conv]") {
    const ConvCase cases[] = {
        {{1, 16, 8, 8}, {16, 16, 3, 3}, 1, true},     // whole tiles
        {{2, 17, 9, 13}, {19, 17, 3, 3}, 1, true},    // odd output rows and columns, batch 2,
                                                      // channels off the 4-row tiles
        {{1, 20, 11, 7}, {24, 20, 3, 3}, 0, false},   // no padding, no bias
        {{1, 16, 6, 10}, {16, 16, 3, 3}, 2, true},    // padding 2
        {{1, 300, 10, 10}, {8, 300, 3, 3}, 1, true},  // K past one GEMM block
        {{1, 64, 56, 56}, {64, 64, 3, 3}, 1, false},  // ResNet's first stage
        {{1, 256, 14, 14}, {256, 256, 3, 3}, 1, true} // ResNet's third stage
    };
    for (const ConvCase& c : cases)
        check_against_reference(c, ConvParams(),
                                [](const Tensor& x, const Tensor& w, const Tensor* b,
                                   const ConvParams& p) { return conv2d_winograd(x, w, b, p); });
}

TEST_CASE("the fast conv takes Winograd only for 3x3 stride-1 convs with channels and tiles enough",
          "[exec][conv]") {
    auto suits = [](std::vector<int64_t> x, std::vector<int64_t> w, int64_t stride, int64_t pad,
                    int64_t groups = 1, int64_t dilation = 1) {
        ConvParams p;
        p.stride[0] = p.stride[1] = stride;
        p.padding[0] = p.padding[1] = pad;
        p.dilation[0] = p.dilation[1] = dilation;
        p.groups = groups;
        return conv2d_winograd_suits(Tensor::empty(ScalarType::Float, x),
                                     Tensor::empty(ScalarType::Float, w), p);
    };
    CHECK(suits({1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1));
    CHECK(suits({1, 256, 14, 14}, {256, 256, 3, 3}, 1, 1));       // 7 x 8 tiles
    CHECK_FALSE(suits({1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1));   // 4 x 4 tiles: filters dominate
    CHECK_FALSE(suits({1, 64, 56, 56}, {128, 64, 3, 3}, 2, 1));   // stride 2
    CHECK_FALSE(suits({1, 64, 56, 56}, {64, 64, 1, 1}, 1, 0));    // 1x1
    CHECK_FALSE(suits({1, 64, 56, 56}, {64, 1, 3, 3}, 1, 1, 64)); // depthwise
    CHECK_FALSE(suits({1, 64, 56, 56}, {64, 64, 3, 3}, 1, 2, 1, 2)); // dilated
    CHECK_FALSE(suits({2, 3, 16, 16}, {8, 3, 3, 3}, 1, 1));          // the lesson conv: 3 channels

    ConvParams five;
    auto refused = conv2d_winograd(Tensor::empty(ScalarType::Float, {1, 16, 8, 8}),
                                   Tensor::empty(ScalarType::Float, {16, 16, 5, 5}), nullptr, five);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("needs a 3x3, stride-1") != std::string::npos);
    CHECK(refused.error().file.empty()); // a kernel error names no file
}

TEST_CASE("the im2col GEMM matches the reference conv past its tile, panel and block edges",
          "[exec][conv]") {
    struct Strided {
        ConvCase c;
        int64_t stride;
    };
    const Strided cases[] = {
        {{{1, 3, 15, 15}, {5, 3, 3, 3}, 1, true}, 1},      // 5 output channels: one row past a tile
        {{{2, 40, 9, 7}, {12, 40, 3, 3}, 1, true}, 1},     // K = 360: two GEMM blocks; P = 63
        {{{1, 24, 7, 7}, {30, 24, 1, 1}, 0, false}, 1},    // pointwise, P = 49 (one column past)
        {{{1, 3, 23, 23}, {16, 3, 7, 7}, 3, true}, 2},     // ResNet's stem, stride 2
        {{{1, 64, 14, 14}, {128, 64, 3, 3}, 1, false}, 2}, // stride 2
        {{{1, 512, 7, 7}, {64, 512, 3, 3}, 1, true}, 1},   // K = 4608, 4 x 4 tiles (no Winograd)
        {{{1, 0, 5, 5}, {6, 0, 3, 3}, 1, true}, 1},        // no input channels: K = 0, the bias
        {{{1, 128, 5, 5}, {262, 128, 3, 3}, 1, true},
         1}, // 262 rows: 65 tiles and two single rows, five K blocks
    };
    for (const Strided& s : cases) {
        ConvParams p;
        p.stride[0] = p.stride[1] = s.stride;
        check_against_reference(s.c, p,
                                [](const Tensor& x, const Tensor& w, const Tensor* b,
                                   const ConvParams& q) { return conv2d_im2col(x, w, b, q); });
        check_against_reference(s.c, p,
                                [](const Tensor& x, const Tensor& w, const Tensor* b,
                                   const ConvParams& q) { return conv2d_fast(x, w, b, q); });
    }
}

TEST_CASE("the kernel warm-up graph runs every op it lists on the fast kernels", "[exec]") {
    Status s = warm_up_kernels();
    INFO((s.ok() ? std::string() : s.error().str()));
    REQUIRE(s.ok());
    // The conv paths and the ops the benchmark models and the zoo's families reach.
    std::vector<std::string> ops = warm_up_ops();
    // Every ATen op the zoo's exports call (tools/zoo_models.py; listed from their
    // training-IR graphs): a first run of one of them compiles none of its kernels.
    for (const char* op : {"adaptive_avg_pool2d.default",
                           "add.Tensor",
                           "add_.Tensor",
                           "batch_norm.default",
                           "bmm.default",
                           "cat.default",
                           "chunk.default",
                           "contiguous.default",
                           "conv2d.default",
                           "dropout.default",
                           "dropout_.default",
                           "flatten.using_ints",
                           "gelu.default",
                           "hardsigmoid.default",
                           "hardswish_.default",
                           "hardtanh_.default",
                           "layer_norm.default",
                           "linear.default",
                           "max_pool2d.default",
                           "mean.dim",
                           "mul.Tensor",
                           "permute.default",
                           "relu.default",
                           "relu_.default",
                           "reshape.default",
                           "scaled_dot_product_attention.default",
                           "select.int",
                           "sigmoid.default",
                           "silu_.default",
                           "softmax.int",
                           "squeeze.dim",
                           "transpose.int",
                           "unflatten.int",
                           "unsqueeze.default",
                           "view.default"})
        CHECK(std::count(ops.begin(), ops.end(), std::string("torch.ops.aten.") + op) >= 1);
    CHECK(std::count(ops.begin(), ops.end(), "torch.ops.aten.conv2d.default") == 10);
}
