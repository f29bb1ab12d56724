// The depthwise fast conv against the reference loop over a table of shapes, and
// max_pool2d (the reference loop and the fast path) against a brute-force loop
// written the way ATen's CPU kernel is (padding, dilation, ceil_mode, NaN, indices), and the
// same-shape float arithmetic against the broadcast loop's. Real-torch goldens for these ops are in
// test_exec_cases.cpp; these cover the cases the goldens do not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/interpreter.h"
#include "exec/kernels.h"
#include "exec/parity.h"

using namespace pt2lab;

namespace {

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
        Tensor x = Tensor::seeded_normal(c.x, ++seed),
               w = Tensor::seeded_normal({C * c.mult, 1, c.kh, c.kw}, ++seed),
               b = Tensor::seeded_normal({C * c.mult}, ++seed);
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

namespace {

struct PoolCase {
    const char* name;
    std::vector<int64_t> x; // [N, C, H, W] or [C, H, W]
    int64_t k[2], stride[2], pad[2], dil[2];
    bool ceil;
};

// max_pool2d as ATen's CPU loop computes it: the window clipped to the input, the
// max by `val > max || isnan(val)` from -inf (so the last NaN wins), the index of
// the first tap in bounds when nothing beats -inf.
void brute_max_pool(const Tensor& x, const PoolCase& c, int64_t OH, int64_t OW, Tensor& y,
                    Tensor& idx) {
    const int64_t H = x.size(-2), W = x.size(-1), B = x.numel() / (H * W);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
                float best = -std::numeric_limits<float>::infinity();
                int64_t arg = -1;
                for (int64_t i = 0; i < c.k[0]; ++i)
                    for (int64_t j = 0; j < c.k[1]; ++j) {
                        const int64_t ih = oh * c.stride[0] - c.pad[0] + i * c.dil[0];
                        const int64_t iw = ow * c.stride[1] - c.pad[1] + j * c.dil[1];
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        if (arg < 0) arg = ih * W + iw;
                        const float v = x.f32()[b * H * W + ih * W + iw];
                        if (v > best || std::isnan(v)) best = v, arg = ih * W + iw;
                    }
                y.f32()[(b * OH + oh) * OW + ow] = best;
                idx.data<int64_t>()[(b * OH + oh) * OW + ow] = arg;
            }
}

Argument pair(const int64_t* v) {
    return Argument::list({Argument::from_int(v[0]), Argument::from_int(v[1])});
}

} // namespace

TEST_CASE("max_pool2d agrees with ATen's loop: padding, dilation, ceil_mode, NaN", "[exec]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const PoolCase cases[] = {
        {"resnet 3x3 s2 p1", {1, 4, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
        {"3x3 s2 p1 odd 13x13", {2, 3, 13, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
        {"2x2 s2 p0 ceil, odd 7x9", {1, 2, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
        {"3x3 s2 p1 ceil 10x10", {1, 2, 10, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
        {"3x2 s(1,2) p(1,1)", {3, 8, 11}, {3, 2}, {1, 2}, {1, 1}, {1, 1}, false},
        {"3x3 dilation 2 p1", {1, 2, 12, 13}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},
        {"3x3 dilation (2,3) s2 p1 ceil", {1, 2, 15, 16}, {3, 3}, {2, 2}, {1, 1}, {2, 3}, true},
        {"5x5 s3 p2 ceil", {1, 1, 14, 17}, {5, 5}, {3, 3}, {2, 2}, {1, 1}, true},
    };
    uint64_t seed = 100;
    for (const PoolCase& c : cases) {
        INFO(c.name);
        Tensor x = Tensor::seeded_normal(c.x, ++seed);
        // NaNs in a few places (two in one window), and an all -inf plane row.
        const int64_t H = x.size(-2), W = x.size(-1);
        x.f32()[3] = nan;
        x.f32()[W + 3] = nan;
        x.f32()[x.numel() - 1] = nan;
        x.f32()[(H / 2) * W + W / 2] = nan;
        for (int64_t j = 0; j < W; ++j)
            x.f32()[(H - 2) * W + j] = -std::numeric_limits<float>::infinity();
        for (int variant = 0; variant < 3; ++variant) { // values, fast values, indices
            const bool with_indices = variant == 2;
            RunOptions opt;
            opt.kernels.fast_conv = variant == 1;
            INFO((with_indices ? "with indices" : opt.kernels.fast_conv ? "fast" : "values"));
            Graph g;
            std::vector<Argument> args = {Argument::from_node(g.placeholder("x")),
                                          pair(c.k),
                                          pair(c.stride),
                                          pair(c.pad),
                                          pair(c.dil),
                                          Argument::from_bool(c.ceil)};
            Node* n =
                g.call_function(with_indices ? "torch.ops.aten.max_pool2d_with_indices.default"
                                             : "torch.ops.aten.max_pool2d.default",
                                std::move(args), {}, "pool");
            REQUIRE(n->schema());
            g.output(Argument::tuple({Argument::from_node(n)}));
            ModuleState state;
            auto r = run_graph(g, {Value::of(x)}, state, opt);
            INFO((r.ok() ? "" : r.error().str()));
            REQUIRE(r.ok());
            const Value& out = r.value().outputs[0];
            const Tensor& y = with_indices ? *out.items.at(0).tensor : *out.tensor;
            const int64_t OH = y.size(-2), OW = y.size(-1);
            Tensor ey = Tensor::zeros(ScalarType::Float, y.sizes),
                   ei = Tensor::zeros(ScalarType::Long, y.sizes);
            brute_max_pool(x, c, OH, OW, ey, ei);
            int64_t nans = 0, bad = 0;
            for (int64_t k = 0; k < y.numel(); ++k) {
                const float a = y.f32()[k], e = ey.f32()[k];
                nans += std::isnan(e);
                bad += std::isnan(e) ? !std::isnan(a) : !(a == e);
            }
            CHECK(nans > 0);
            CHECK(bad == 0);
            if (with_indices) {
                const Tensor& idx = *out.items.at(1).tensor;
                REQUIRE(idx.dtype == ScalarType::Long);
                int64_t wrong = 0;
                for (int64_t k = 0; k < idx.numel(); ++k)
                    wrong += idx.data<int64_t>()[k] != ei.data<int64_t>()[k];
                CHECK(wrong == 0);
            }
        }
    }
}

TEST_CASE("same-shape float add, sub, mul, div equal the broadcast loop's arithmetic", "[exec]") {
    Tensor a = Tensor::seeded_normal({2, 3, 5, 7}, 7), b = Tensor::seeded_normal({2, 3, 5, 7}, 8);
    struct Op {
        const char* target;
        bool alpha;
    };
    for (const Op& op :
         {Op{"torch.ops.aten.add.Tensor", true}, Op{"torch.ops.aten.add_.Tensor", true},
          Op{"torch.ops.aten.sub.Tensor", true}, Op{"torch.ops.aten.mul.Tensor", false},
          Op{"torch.ops.aten.div.Tensor", false}}) {
        for (double alpha : {1.0, 0.5}) {
            if (!op.alpha && alpha != 1.0) continue;
            INFO(op.target << " alpha " << alpha);
            Graph g;
            std::vector<Argument> args = {Argument::from_node(g.placeholder("a")),
                                          Argument::from_node(g.placeholder("b"))};
            Kwargs kwargs;
            if (op.alpha) kwargs.emplace_back("alpha", Argument::from_float(alpha));
            Node* n = g.call_function(op.target, std::move(args), kwargs, "op");
            REQUIRE(n->schema());
            g.output(Argument::tuple({Argument::from_node(n)}));
            ModuleState state;
            Tensor a_copy = a; // add_ writes its first input
            auto r =
                run_graph(g, {Value::of(std::move(a_copy)), Value::of(b)}, state, RunOptions());
            REQUIRE(r.ok());
            const Tensor& y = *r.value().outputs[0].tensor;
            REQUIRE(y.sizes == a.sizes);
            const std::string t = op.target;
            const float al = static_cast<float>(alpha);
            int64_t wrong = 0;
            for (int64_t k = 0; k < a.numel(); ++k) {
                const float x = a.f32()[k], v = b.f32()[k];
                const float e =
                    t.find(".add") != std::string::npos   ? (alpha == 1.0 ? x + v : x + al * v)
                    : t.find(".sub") != std::string::npos ? (alpha == 1.0 ? x - v : x - al * v)
                    : t.find(".mul") != std::string::npos ? x * v
                                                          : x / v;
                wrong += y.f32()[k] != e;
            }
            CHECK(wrong == 0);
        }
    }
}

// The broadcast rows (dimensions merged, a row against one value) against an index
// walk written here: every shape pair a squeeze-excitation, a bias or a mask gives.
TEST_CASE("broadcast float add, sub, mul, div a row at a time equal the element loop's", "[exec]") {
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{1, 6, 5, 7}, {1, 6, 1, 1}}, // squeeze-excitation's scale
        {{2, 6, 5, 7}, {6, 1, 1}},    // a per-channel bias, fewer dims
        {{2, 3, 5, 7}, {7}},          // along the last dimension
        {{2, 3, 5, 7}, {2, 1, 5, 1}}, // every other dimension
        {{1, 6, 1, 1}, {2, 6, 5, 7}}, // the small one first
        {{3, 1, 7}, {1, 5, 1}},       // both broadcast
        {{5, 7}, {}},                 // a 0-d tensor
        {{4, 1}, {1, 3}},
        {{2, 0, 3}, {1, 1, 3}}, // nothing to do
    };
    for (const auto& [sa, sb] : shapes)
        for (const char* target : {"torch.ops.aten.add.Tensor", "torch.ops.aten.sub.Tensor",
                                   "torch.ops.aten.mul.Tensor", "torch.ops.aten.div.Tensor"}) {
            for (double alpha : {1.0, 0.5}) {
                const std::string t = target;
                const bool has_alpha =
                    t.find(".add") != std::string::npos || t.find(".sub") != std::string::npos;
                if (!has_alpha && alpha != 1.0) continue;
                INFO(target << " " << shape_str(sa) << " with " << shape_str(sb) << " alpha "
                            << alpha);
                Tensor a = Tensor::seeded_normal(sa, 3), b = Tensor::seeded_normal(sb, 4);
                Graph g;
                std::vector<Argument> args = {Argument::from_node(g.placeholder("a")),
                                              Argument::from_node(g.placeholder("b"))};
                Kwargs kwargs;
                if (has_alpha) kwargs.emplace_back("alpha", Argument::from_float(alpha));
                Node* n = g.call_function(target, std::move(args), kwargs, "op");
                g.output(Argument::tuple({Argument::from_node(n)}));
                ModuleState state;
                auto r = run_graph(g, {Value::of(a), Value::of(b)}, state, RunOptions());
                INFO((r.ok() ? std::string() : r.error().str()));
                REQUIRE(r.ok());
                const Tensor& y = *r.value().outputs[0].tensor;
                // The broadcast shape and each operand's index, by hand.
                const size_t rank = std::max(sa.size(), sb.size());
                std::vector<int64_t> out(rank), pa(rank, 1), pb(rank, 1);
                for (size_t d = 0; d < sa.size(); ++d) pa[rank - sa.size() + d] = sa[d];
                for (size_t d = 0; d < sb.size(); ++d) pb[rank - sb.size() + d] = sb[d];
                for (size_t d = 0; d < rank; ++d) out[d] = pa[d] == 1 ? pb[d] : pa[d];
                REQUIRE(y.sizes == out);
                const float al = static_cast<float>(alpha);
                int64_t wrong = 0;
                std::vector<int64_t> idx(rank, 0);
                for (int64_t k = 0; k < y.numel(); ++k) {
                    int64_t ia = 0, ib = 0;
                    for (size_t d = 0; d < rank; ++d) {
                        ia = ia * pa[d] + (pa[d] == 1 ? 0 : idx[d]);
                        ib = ib * pb[d] + (pb[d] == 1 ? 0 : idx[d]);
                    }
                    const float x = a.f32()[ia], v = b.f32()[ib];
                    const float e =
                        t.find(".add") != std::string::npos   ? (alpha == 1.0 ? x + v : x + al * v)
                        : t.find(".sub") != std::string::npos ? (alpha == 1.0 ? x - v : x - al * v)
                        : t.find(".mul") != std::string::npos ? x * v
                                                              : x / v;
                    wrong += y.f32()[k] != e;
                    for (size_t d = rank; d-- > 0;) {
                        if (++idx[d] < out[d]) break;
                        idx[d] = 0;
                    }
                }
                CHECK(wrong == 0);
            }
        }
}

TEST_CASE("linear's fast float dot products agree with the double reference", "[exec]") {
    // K: whole eight-lane blocks, a tail only, both; batch dims in front; with and without bias
    struct Case {
        std::vector<int64_t> x;
        int64_t out;
        bool bias;
    };
    for (const Case& c : {Case{{1, 1280}, 1000, true}, Case{{3, 5}, 7, false},
                          Case{{2, 4, 37}, 9, true}, Case{{1, 0}, 3, true}}) {
        const int64_t K = c.x.back();
        INFO("x " << shape_str(c.x) << ", " << c.out << " outputs");
        Graph g;
        std::vector<Argument> args = {Argument::from_node(g.placeholder("x")),
                                      Argument::from_node(g.placeholder("w"))};
        std::vector<Value> in = {Value::of(Tensor::seeded_normal(c.x, 1)),
                                 Value::of(Tensor::seeded_normal({c.out, K}, 2))};
        if (c.bias) {
            args.push_back(Argument::from_node(g.placeholder("b")));
            in.push_back(Value::of(Tensor::seeded_normal({c.out}, 3)));
        }
        Node* n = g.call_function("torch.ops.aten.linear.default", std::move(args));
        g.output(Argument::tuple({Argument::from_node(n)}));
        Tensor y[2];
        for (bool fast : {false, true}) {
            ModuleState state;
            RunOptions opt;
            opt.kernels.fast_conv = fast;
            auto r = run_graph(g, in, state, opt);
            REQUIRE(r.ok());
            y[fast] = *r.value().outputs[0].tensor;
        }
        REQUIRE(y[1].sizes == y[0].sizes);
        // float sums of K products: within K ulps-ish of the sum of magnitudes
        const Tensor &x = *in[0].tensor, &w = *in[1].tensor;
        const int64_t M = x.numel() / std::max<int64_t>(K, 1);
        for (int64_t m = 0; m < (K ? M : 0); ++m)
            for (int64_t o = 0; o < c.out; ++o) {
                double mag = 0.0;
                for (int64_t k = 0; k < K; ++k)
                    mag += std::fabs(double(x.f32()[m * K + k]) * double(w.f32()[o * K + k]));
                const int64_t i = m * c.out + o;
                CHECK(std::fabs(double(y[1].f32()[i]) - double(y[0].f32()[i])) <=
                      1e-6 * (mag + 1.0));
            }
        if (K == 0) // an empty sum: the bias alone
            for (int64_t i = 0; i < y[1].numel(); ++i) CHECK(y[1].f32()[i] == y[0].f32()[i]);
    }
}

// quantize_per_tensor four lanes at a time against torch.ao's definition written here
// (clamp(nearbyint(x * float(1 / scale)) + zero_point, quant_min, quant_max), NaN to
// quant_min), and dequantize_per_tensor against (float(q) - zero_point) * scale: ties of
// every parity, both ends, NaN, infinities, and lengths that leave a tail.
TEST_CASE("quantize and dequantize per tensor, four lanes, equal torch.ao's arithmetic", "[exec]") {
    std::vector<float> xs;
    for (int k = -600; k <= 600; ++k) xs.push_back(static_cast<float>(k) * 0.25f);
    Tensor noise = Tensor::seeded_normal({997}, 11);
    for (int64_t k = 0; k < noise.numel(); ++k) xs.push_back(noise.f32()[k] * 40.0f);
    for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, 1e-40f, -0.0f,
                    8388607.5f, 4194304.5f, -4194304.5f})
        xs.push_back(v);
    struct Q {
        double scale;
        int64_t zp, lo, hi;
        ScalarType dtype;
    };
    for (const Q& q :
         {Q{0.5, 128, 0, 255, ScalarType::Byte}, Q{0.5, 0, -128, 127, ScalarType::Char},
          Q{0.1, -5, -128, 127, ScalarType::Char}, Q{0.023, 3, -127, 127, ScalarType::Char},
          Q{1e-6, 0, -128, 127, ScalarType::Char}}) {
        for (size_t len : {xs.size(), xs.size() - 1, size_t{3}}) {
            INFO("scale " << q.scale << " zero point " << q.zp << " length " << len);
            Tensor x = Tensor::zeros(ScalarType::Float, {static_cast<int64_t>(len)});
            std::copy(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(len), x.f32());
            Graph g;
            Node* in = g.placeholder("x");
            auto qargs = [&](Node* from) {
                return std::vector<Argument>{
                    Argument::from_node(from), Argument::from_float(q.scale),
                    Argument::from_int(q.zp),  Argument::from_int(q.lo),
                    Argument::from_int(q.hi),  Argument::from_dtype(q.dtype)};
            };
            Node* qn = g.call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default",
                                       qargs(in), {}, "q");
            Node* dq =
                g.call_function("torch.ops.quantized_decomposed.dequantize_per_tensor.default",
                                qargs(qn), {}, "dq");
            REQUIRE(qn->schema());
            REQUIRE(dq->schema());
            g.output(Argument::tuple({Argument::from_node(qn), Argument::from_node(dq)}));
            ModuleState state;
            auto r = run_graph(g, {Value::of(x)}, state, RunOptions());
            REQUIRE(r.ok());
            const Tensor& y = *r.value().outputs[0].tensor;
            const Tensor& back = *r.value().outputs[1].tensor;
            REQUIRE(y.dtype == q.dtype);
            const float inv = static_cast<float>(1.0 / q.scale);
            int64_t wrong_q = 0, wrong_dq = 0;
            for (size_t k = 0; k < len; ++k) {
                float e = std::nearbyint(xs[k] * inv) + static_cast<float>(q.zp);
                e = std::isnan(e) ? static_cast<float>(q.lo)
                                  : std::fmin(std::fmax(e, static_cast<float>(q.lo)),
                                              static_cast<float>(q.hi));
                const int64_t got = static_cast<int64_t>(y.get(static_cast<int64_t>(k)));
                wrong_q += got != static_cast<int64_t>(e);
                const float d = (static_cast<float>(got) - static_cast<float>(q.zp)) *
                                static_cast<float>(q.scale);
                wrong_dq += back.f32()[k] != d;
            }
            CHECK(wrong_q == 0);
            CHECK(wrong_dq == 0);
        }
    }
}
