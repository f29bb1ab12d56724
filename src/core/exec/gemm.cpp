// The fast convolutions' GEMM (gemm.h): 4 x 8 output tiles held in vector
// registers, K in blocks so the packed B panel stays in L1.
#include "exec/gemm.h"

#include <algorithm>
#include <vector>

namespace pt2lab {

namespace {

// The end of a tile of rows m, m + 1, ...: calls fin(e), and fin stores each
// vector v of row m + r as e(v + bias[r], r), e being those rows' epilogue (the
// identity when there is none). The kind of epilogue is chosen here, once per
// tile, so each of fin's instances is straight-line code with the accumulators
// still in registers (a per-row call or switch measured 6-33 % slower on
// MobileNet's 1x1 convs in V8: the smaller K, the more it costs).
template <class Fin>
__attribute__((always_inline)) inline void finish_tile(const ConvEpilogue* ep, int64_t m,
                                                       Fin&& fin) {
    if (!ep) return fin([](f32x4 v, int) { return v; });
    const float *alpha = ep->alpha ? ep->alpha + m : nullptr,
                *beta = alpha ? ep->beta + m : nullptr;
    const f32x4 lo = {ep->lo, ep->lo, ep->lo, ep->lo}, hi = {ep->hi, ep->hi, ep->hi, ep->hi};
    const auto bn = [=](f32x4 v, int r) {
        return scale_shift4(v, f32x4{alpha[r], alpha[r], alpha[r], alpha[r]},
                            f32x4{beta[r], beta[r], beta[r], beta[r]});
    };
    if (alpha) {
        switch (ep->act) {
        case ConvAct::None: return fin(bn);
        case ConvAct::Clamp: return fin([=](f32x4 v, int r) { return clamp4(bn(v, r), lo, hi); });
        case ConvAct::Relu: return fin([=](f32x4 v, int r) { return relu4(bn(v, r)); });
        }
    }
    switch (ep->act) {
    case ConvAct::None: return fin([](f32x4 v, int) { return v; });
    case ConvAct::Clamp: return fin([=](f32x4 v, int) { return clamp4(v, lo, hi); });
    case ConvAct::Relu: return fin([](f32x4 v, int) { return relu4(v); });
    }
}

// fin for finish_tile: stores vector i of row r at C[r * ldc + 4i] after adding
// bias[r] (when given) and applying e.
struct TileStore {
    const float* bias;
    float* C;
    int64_t ldc;
    template <class E>
    __attribute__((always_inline)) void operator()(const E& e, f32x4 v, int r, int i) const {
        if (bias) v += f32x4{bias[r], bias[r], bias[r], bias[r]};
        store4(C + r * ldc + 4 * i, e(v, r));
    }
};

// One 4 x 8 tile over a block of kc rows of K:
//   C[4, 8] (row stride ldc) (+)= A[4, kc] (row stride lda) @ b[kc][8] (a packed panel)
// `first` starts the sums from 0, else from what C holds (the sums of the earlier
// blocks: the additions happen in the same order as one unblocked loop, so
// blocking does not change a bit). `bias` (4 values) is added after the last block,
// then the epilogue `ep` of rows m .. m+3 (conv_epilogue.h) when given.
// Kept out of line on purpose: the engine's optimizing tier (V8's TurboFan in
// the browser) replaces a function's code between calls, never inside a running
// call, so a hot loop in a small function called thousands of times per conv is
// optimized during a model's first run instead of after it.
__attribute__((noinline)) void tile_4x8(const float* A, int64_t lda, const float* b, int64_t kc,
                                        bool first, const float* bias, const ConvEpilogue* ep,
                                        int64_t m, float* C, int64_t ldc) {
    f32x4 c00, c01, c10, c11, c20, c21, c30, c31;
    if (first) {
        c00 = f32x4{0, 0, 0, 0};
        c01 = c10 = c11 = c20 = c21 = c30 = c31 = c00;
    } else {
        c00 = load4(C), c01 = load4(C + 4);
        c10 = load4(C + ldc), c11 = load4(C + ldc + 4);
        c20 = load4(C + 2 * ldc), c21 = load4(C + 2 * ldc + 4);
        c30 = load4(C + 3 * ldc), c31 = load4(C + 3 * ldc + 4);
    }
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda;
    // c[r] += A[r, k] * b[k] for one k
    auto step = [&](int64_t k, const float* bk) {
        const f32x4 b0 = load4(bk), b1 = load4(bk + 4);
        const f32x4 w0 = {a0[k], a0[k], a0[k], a0[k]};
        const f32x4 w1 = {a1[k], a1[k], a1[k], a1[k]};
        const f32x4 w2 = {a2[k], a2[k], a2[k], a2[k]};
        const f32x4 w3 = {a3[k], a3[k], a3[k], a3[k]};
        c00 += w0 * b0;
        c01 += w0 * b1;
        c10 += w1 * b0;
        c11 += w1 * b1;
        c20 += w2 * b0;
        c21 += w2 * b1;
        c30 += w3 * b0;
        c31 += w3 * b1;
    };
    // One k per iteration: unrolling by two measured 20-30 % slower in V8 on the
    // conv bench's layers (bench/conv_bench.cpp), though faster on an isolated tile.
    for (int64_t k = 0; k < kc; ++k, b += kPanel) step(k, b);
    const TileStore put{bias, C, ldc};
    finish_tile(ep, m, [&](const auto& e) {
        put(e, c00, 0, 0), put(e, c01, 0, 1), put(e, c10, 1, 0), put(e, c11, 1, 1);
        put(e, c20, 2, 0), put(e, c21, 2, 1), put(e, c30, 3, 0), put(e, c31, 3, 1);
    });
}

// tile_4x8 for a last panel with at most 4 columns of C (a 7x7 output's 49th
// column): lanes 0-3 only, half the work; the same sums for those columns.
//   C[4, 4] (row stride ldc) (+)= A[4, kc] @ b[kc][0..4) (a packed panel, row stride 8)
__attribute__((noinline)) void tile_4x4(const float* A, int64_t lda, const float* b, int64_t kc,
                                        bool first, const float* bias, const ConvEpilogue* ep,
                                        int64_t m, float* C, int64_t ldc) {
    f32x4 c0, c1, c2, c3;
    if (first) {
        c0 = c1 = c2 = c3 = f32x4{0, 0, 0, 0};
    } else {
        c0 = load4(C), c1 = load4(C + ldc), c2 = load4(C + 2 * ldc), c3 = load4(C + 3 * ldc);
    }
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda;
    for (int64_t k = 0; k < kc; ++k, b += kPanel) {
        const f32x4 bk = load4(b);
        c0 += f32x4{a0[k], a0[k], a0[k], a0[k]} * bk;
        c1 += f32x4{a1[k], a1[k], a1[k], a1[k]} * bk;
        c2 += f32x4{a2[k], a2[k], a2[k], a2[k]} * bk;
        c3 += f32x4{a3[k], a3[k], a3[k], a3[k]} * bk;
    }
    const TileStore put{bias, C, ldc};
    finish_tile(ep, m, [&](const auto& e) {
        put(e, c0, 0, 0), put(e, c1, 1, 0), put(e, c2, 2, 0), put(e, c3, 3, 0);
    });
}

// One row of C past the last full 4-row tile, the same sums one lane at a time:
//   C[0, 8] (+)= A[0, kc] @ b[kc][8]
__attribute__((noinline)) void row_1x8(const float* A, const float* b, int64_t kc, bool first,
                                       const float* bias, const ConvEpilogue* ep, int64_t m,
                                       float* C) {
    f32x4 c0 = first ? f32x4{0, 0, 0, 0} : load4(C), c1 = first ? c0 : load4(C + 4);
    for (int64_t k = 0; k < kc; ++k, b += kPanel) {
        f32x4 w = {A[k], A[k], A[k], A[k]};
        c0 += w * load4(b);
        c1 += w * load4(b + 4);
    }
    const TileStore put{bias, C, 0};
    finish_tile(ep, m, [&](const auto& e) { put(e, c0, 0, 0), put(e, c1, 0, 1); });
}

// C[M, N] (row stride ldc) = A[M, K] (row-major) @ B (+ bias[m]), B packed into
// panels (see kPanel). Blocks of kKc rows of K outer, so a panel's block (8 kB)
// stays in L1 while every 4-row tile of A reads it, and A's block (M x kKc) stays
// in L2 across the panels. A is read in place: the weights are never repacked.
// Columns of the last panel past N go to a scratch [M][8] and are copied out.
constexpr int64_t kKc = 256;
} // namespace

void gemm_packed(const float* A, const float* Bp, float* C, int64_t M, int64_t N, int64_t K,
                 int64_t ldc, const float* bias, const ConvEpilogue* ep) {
    if (K == 0) { // an empty sum: the bias alone, then the epilogue (C may hold anything)
        for (int64_t m = 0; m < M; ++m) {
            const ChannelEpilogue e(ep, m);
            const float v = e(bias ? 0.0f + bias[m] : 0.0f);
            std::fill(C + m * ldc, C + m * ldc + N, v);
        }
        return;
    }
    const int64_t M4 = M / 4 * 4, NP = panels_of(N), tail = N - (NP - 1) * kPanel;
    std::vector<float> edge(tail < kPanel ? static_cast<size_t>(M * kPanel) : 0);
    for (int64_t k0 = 0; k0 < K; k0 += kKc) {
        const int64_t kc = std::min(kKc, K - k0);
        const bool first = k0 == 0, last = k0 + kc == K;
        const float* bias_last = last ? bias : nullptr;
        const ConvEpilogue* ep_last = last ? ep : nullptr;
        for (int64_t j = 0; j < NP; ++j) {
            const float* bp = Bp + j * K * kPanel + k0 * kPanel;
            const bool partial = j == NP - 1 && tail < kPanel;
            float* cj = partial ? edge.data() : C + j * kPanel;
            const int64_t ld = partial ? kPanel : ldc;
            // A last panel of at most 4 columns takes the half-width tile.
            const auto tile = partial && tail <= kPanel / 2 ? tile_4x4 : tile_4x8;
            for (int64_t m = 0; m < M4; m += 4)
                tile(A + m * K + k0, K, bp, kc, first, bias_last ? bias_last + m : nullptr, ep_last,
                     m, cj + m * ld, ld);
            for (int64_t m = M4; m < M; ++m)
                row_1x8(A + m * K + k0, bp, kc, first, bias_last ? bias_last + m : nullptr, ep_last,
                        m, cj + m * ld);
        }
    }
    if (!edge.empty())
        for (int64_t m = 0; m < M; ++m)
            std::memcpy(C + m * ldc + (NP - 1) * kPanel, edge.data() + m * kPanel,
                        static_cast<size_t>(tail) * sizeof(float));
}

} // namespace pt2lab
