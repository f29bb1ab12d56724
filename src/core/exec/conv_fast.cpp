// Fast conv2d: im2col into one buffer, then a register-tiled GEMM
//   y[o, p] = sum_k w[o, k] * col[k, p]   (per image and group)
// with 4 x 8 output tiles held in vector registers (GCC/Clang vector
// extensions: SSE natively, SIMD128 in the -msimd128 WebAssembly build).
// Results match the reference loop within float32 rounding (the tests check).
#include <algorithm>
#include <cstring>
#include <memory>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

typedef float f32x4 __attribute__((vector_size(16), aligned(4)));

inline f32x4 load4(const float* p) {
    f32x4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store4(float* p, f32x4 v) {
    std::memcpy(p, &v, sizeof v);
}

// One 4 x 8 tile: C[4, 8] (row stride ldc) = a[K][4] (packed) @ b[K][8] (packed) + bias[4].
// Kept out of line on purpose: the engine's optimizing tier (V8's TurboFan in
// the browser) replaces a function's code between calls, never inside a running
// call, so a hot loop in a small function called thousands of times per conv is
// optimized during a model's first run instead of after it.
__attribute__((noinline)) void tile_4x8(const float* a, const float* b, int64_t K,
                                        const float* bias, float* C, int64_t ldc) {
    f32x4 c00 = {0, 0, 0, 0}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00;
    for (int64_t k = 0; k < K; ++k, a += 4, b += 8) {
        f32x4 b0 = load4(b), b1 = load4(b + 4);
        f32x4 w0 = {a[0], a[0], a[0], a[0]};
        f32x4 w1 = {a[1], a[1], a[1], a[1]};
        f32x4 w2 = {a[2], a[2], a[2], a[2]};
        f32x4 w3 = {a[3], a[3], a[3], a[3]};
        c00 += w0 * b0;
        c01 += w0 * b1;
        c10 += w1 * b0;
        c11 += w1 * b1;
        c20 += w2 * b0;
        c21 += w2 * b1;
        c30 += w3 * b0;
        c31 += w3 * b1;
    }
    f32x4 rows[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
    for (int r = 0; r < 4; ++r) {
        float bv = bias ? bias[r] : 0.0f;
        f32x4 bb = {bv, bv, bv, bv};
        store4(C + r * ldc, rows[r][0] + bb);
        store4(C + r * ldc + 4, rows[r][1] + bb);
    }
}

// The packing loops are out of line too, called once per tile / panel, so they
// are optimized early in a model's first run (see tile_4x8).
// dst[k][r] = A[r, k] for the 4 rows of one tile. A: [4, K] (row stride K)
__attribute__((noinline)) void pack_a_tile(const float* A, int64_t K, float* dst) {
    for (int64_t k = 0; k < K; ++k)
        for (int r = 0; r < 4; ++r) dst[k * 4 + r] = A[r * K + k];
}
// dst[k][0..8) = B[k, 0..8) for one 8-column panel. B: [K, 8] (row stride N)
__attribute__((noinline)) void pack_b_panel(const float* B, int64_t N, int64_t K, float* dst) {
    for (int64_t k = 0; k < K; ++k) std::memcpy(dst + k * 8, B + k * N, 8 * sizeof(float));
}

// One row of im2col: out[oh, ow] = x[ih, iw] for ih = oh*sh - ph + kh*dh (and iw
// likewise), 0 in the padding. Out of line: called C*KH*KW times per conv.
// x: [H, W]  out: [OH, OW]
__attribute__((noinline)) void im2col_row(const float* plane, int64_t H, int64_t W, int64_t kh,
                                          int64_t kw, const ConvParams& p, int64_t OH, int64_t OW,
                                          float* row) {
    for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
        float* out = row + oh * OW;
        if (ih < 0 || ih >= H) {
            std::fill(out, out + OW, 0.0f);
            continue;
        }
        for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t iw = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
            out[ow] = (iw >= 0 && iw < W) ? plane[ih * W + iw] : 0.0f;
        }
    }
}

// C[M, N] (row stride ldc) = A[M, K] @ B[K, N] (+ bias[m]); A, B row-major.
// Loop order: 8-column panels of B outer (packed into [K, 8], it stays in L1),
// 4-row tiles of A inner (packed into [K, 4], read as broadcasts).
void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K, int64_t ldc,
          const float* bias) {
    const int64_t M4 = M / 4 * 4, N8 = N / 8 * 8;
    std::unique_ptr<float[]> apack(new float[static_cast<size_t>(M4 * K)]); // [M/4][K][4]
    for (int64_t m = 0; m < M4; m += 4) pack_a_tile(A + m * K, K, apack.get() + m * K);
    std::unique_ptr<float[]> bpack(new float[static_cast<size_t>(K * 8)]); // [K][8]
    for (int64_t n = 0; n < N8; n += 8) {
        pack_b_panel(B + n, N, K, bpack.get());
        for (int64_t m = 0; m < M4; m += 4) {
            tile_4x8(apack.get() + m * K, bpack.get(), K, bias ? bias + m : nullptr,
                     C + m * ldc + n, ldc);
        }
    }
    // Edges: rows past the last full 4-row tile, columns past the last 8-column panel.
    auto scalar = [&](int64_t m, int64_t n) {
        float acc = 0.0f;
        for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
        C[m * ldc + n] = acc + (bias ? bias[m] : 0.0f);
    };
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = (m < M4 ? N8 : 0); n < N; ++n) scalar(m, n);
}

// Depthwise conv of one channel (groups == channels, one filter each):
//   y[oh, ow] = sum_{kh, kw} w[kh, kw] * x[ih, iw] (0 in the padding) + bias
// accumulated in float in (kh, kw) order from 0, then + bias: exactly what the
// im2col + GEMM path computes for a 1-row GEMM, without building the [K, P]
// buffer. `acc` is scratch [OW]. Out of line for V8's tier-up (see tile_4x8).
// x: [H, W]  w: [KH, KW]  y: [OH, OW]
__attribute__((noinline)) void depthwise_channel(const float* x, int64_t H, int64_t W,
                                                 const float* w, int64_t KH, int64_t KW, float bias,
                                                 float* y, int64_t OH, int64_t OW,
                                                 const ConvParams& p, float* acc) {
    const int64_t sh = p.stride[0], sw = p.stride[1], ph = p.padding[0], pw = p.padding[1];
    const int64_t dh = p.dilation[0], dw = p.dilation[1];
    for (int64_t oh = 0; oh < OH; ++oh) {
        std::fill(acc, acc + OW, 0.0f);
        for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t ih = oh * sh - ph + kh * dh;
            for (int64_t kw = 0; kw < KW; ++kw) {
                const float wv = w[kh * KW + kw];
                if (ih < 0 || ih >= H) {
                    for (int64_t ow = 0; ow < OW; ++ow) acc[ow] += wv * 0.0f;
                    continue;
                }
                // The columns whose input iw = ow*sw - pw + kw*dw lies inside [0, W).
                const int64_t off = kw * dw - pw;
                int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                int64_t hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / sw + 1;
                lo = std::min(lo, OW);
                hi = std::max(lo, std::min(hi, OW));
                const float* row =
                    x + ih * W; // row[off + ow*sw] is x[ih, iw], in bounds on [lo, hi)
                for (int64_t ow = 0; ow < lo; ++ow) acc[ow] += wv * 0.0f;
                if (sw == 1) {
                    const float* r = row + (off + lo);
                    for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += wv * r[ow - lo];
                } else {
                    for (int64_t ow = lo; ow < hi; ++ow) acc[ow] += wv * row[off + ow * sw];
                }
                for (int64_t ow = hi; ow < OW; ++ow) acc[ow] += wv * 0.0f;
            }
        }
        float* out = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ++ow) out[ow] = acc[ow] + bias;
    }
}

} // namespace

Result<Tensor> conv2d_fast(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                           const KernelOptions& opt) {
    auto yr = conv2d_result(x, w, b, p, opt);
    if (!yr.ok()) return yr;
    Tensor& y = yr.value();
    const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
    const int64_t OH = y.sizes[2], OW = y.sizes[3], G = p.groups, OG = O / G;
    const int64_t K = CG * KH * KW, P = OH * OW;
    // The im2col buffer [K, P] and the GEMM's packed panels ([OG, K] and [K, 8]).
    if (Status s = charge_bytes(opt, work_of({K, P + O / G + 8, 4}), "conv2d (fast) scratch");
        !s.ok())
        return s.error();
    if (CG == 1 && OG == 1) { // depthwise: no im2col, one small kernel per channel
        std::vector<float> acc(static_cast<size_t>(OW));
        for (int64_t n = 0; n < N; ++n)
            for (int64_t g = 0; g < G; ++g)
                depthwise_channel(x.f32() + (n * C + g) * H * W, H, W, w.f32() + g * K, KH, KW,
                                  b ? b->f32()[g] : 0.0f, y.f32() + (n * O + g) * P, OH, OW, p,
                                  acc.data());
        return yr;
    }
    // A 1x1, stride-1, unpadded conv's im2col is its input: the GEMM reads x directly.
    const bool pointwise = KH == 1 && KW == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
                           p.padding[0] == 0 && p.padding[1] == 0;
    // The one im2col buffer [K, P]; every element is written below, so it is not zeroed first.
    std::unique_ptr<float[]> col(pointwise ? nullptr : new float[static_cast<size_t>(K * P)]);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t g = 0; g < G; ++g) {
            if (pointwise) { // x[n, g*CG:(g+1)*CG] is [CG, H*W] = [K, P]
                gemm(w.f32() + g * OG * K, x.f32() + (n * C + g * CG) * H * W,
                     y.f32() + (n * O + g * OG) * P, OG, P, K, P, b ? b->f32() + g * OG : nullptr);
                continue;
            }
            // col[(c, kh, kw), (oh, ow)] = x[n, g*CG + c, ih, iw] or 0 in the padding
            for (int64_t c = 0; c < CG; ++c)
                for (int64_t kh = 0; kh < KH; ++kh)
                    for (int64_t kw = 0; kw < KW; ++kw)
                        im2col_row(x.f32() + (n * C + g * CG + c) * H * W, H, W, kh, kw, p, OH, OW,
                                   col.get() + ((c * KH + kh) * KW + kw) * P);
            // y[n, g*OG:(g+1)*OG] = w[g*OG:(g+1)*OG] [OG, K] @ col [K, P]
            gemm(w.f32() + g * OG * K, col.get(), y.f32() + (n * O + g * OG) * P, OG, P, K, P,
                 b ? b->f32() + g * OG : nullptr);
        }
    return yr;
}

} // namespace pt2lab
