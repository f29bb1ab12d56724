// Winograd F(2x2, 3x3) for 3x3, stride-1, undilated, ungrouped convolutions
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016).
// A 2x2 block of outputs comes from a 4x4 tile d of the input and a filter g as
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A
//   G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
//   B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
//   A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
// so a tile costs 16 multiplies per (output, input) channel pair instead of 36.
// Summed over input channels, the 16 element-wise products are 16 GEMMs
//   M[e] (O x T) = U[e] (O x C) @ V[e] (C x T),  e = 4*row + col of the 4x4 tile
// with U the transformed filters and V the transformed input tiles, run on the
// fast conv's GEMM (gemm.h). The transforms round differently from the direct
// sum, by a few float32 ulps of the largest terms (the tests bound it).
// Tiles are transformed four at a time, one per vector lane, along a tile row.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/gemm.h"
#include "exec/kernels.h"

namespace pt2lab {

namespace {

constexpr int64_t kLanes = 4; // tiles per vector

// U[e][o][c] = (G g G^T)[e] for the C filters g = w[o, c] of one output channel o.
// Out of line and called once per output channel, so V8 optimizes it early.
// w: [O, C, 3, 3]  U: [16][O][C]
__attribute__((noinline)) void transform_filters(const float* w, int64_t o, int64_t O, int64_t C,
                                                 float* U) {
    const int64_t OC = O * C;
    for (int64_t c = 0; c < C; ++c) {
        const float* g = w + (o * C + c) * 9;
        float t[4][3]; // G g: [4, 3]
        for (int j = 0; j < 3; ++j) {
            t[0][j] = g[j];
            t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
            t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
            t[3][j] = g[6 + j];
        }
        for (int i = 0; i < 4; ++i) { // (G g) G^T, row i
            const float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                                0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
            for (int k = 0; k < 4; ++k) U[(i * 4 + k) * OC + o * C + c] = u[k];
        }
    }
}

// V[e] for one row of tiles of one channel: tiles (th, 0 .. TW4) read the padded
// plane's rows 2th .. 2th+3 (`rows`, row stride Q), four tiles per step. Each V[e]
// is a packed GEMM B operand [panels][C][8]; tile t sits in panel t/8, lane t%8
// of row c. vs: the stride between the 16 V[e].
__attribute__((noinline)) void transform_input_row(const float* rows, int64_t Q, int64_t TW4,
                                                   int64_t t_first, int64_t c, int64_t C,
                                                   int64_t vs, float* V) {
    for (int64_t tw = 0; tw < TW4; tw += kLanes) {
        // d[i][j]: element (i, j) of the four 4x4 tiles, tile k in lane k
        f32x4 d[4][4];
        for (int i = 0; i < 4; ++i) {
            const float* p = rows + i * Q + 2 * tw; // tile k's columns are p[2k .. 2k+3]
            const f32x4 a = load4(p), b = load4(p + 4), a2 = load4(p + 2), b2 = load4(p + 6);
            d[i][0] = __builtin_shufflevector(a, b, 0, 2, 4, 6);
            d[i][1] = __builtin_shufflevector(a, b, 1, 3, 5, 7);
            d[i][2] = __builtin_shufflevector(a2, b2, 0, 2, 4, 6);
            d[i][3] = __builtin_shufflevector(a2, b2, 1, 3, 5, 7);
        }
        f32x4 r[4][4]; // B^T d
        for (int j = 0; j < 4; ++j) {
            r[0][j] = d[0][j] - d[2][j];
            r[1][j] = d[1][j] + d[2][j];
            r[2][j] = d[2][j] - d[1][j];
            r[3][j] = d[1][j] - d[3][j];
        }
        const int64_t t = t_first + tw;
        float* out = V + (t / kPanel) * C * kPanel + c * kPanel + t % kPanel;
        for (int i = 0; i < 4; ++i) { // (B^T d) B, row i
            store4(out + (i * 4 + 0) * vs, r[i][0] - r[i][2]);
            store4(out + (i * 4 + 1) * vs, r[i][1] + r[i][2]);
            store4(out + (i * 4 + 2) * vs, r[i][2] - r[i][1]);
            store4(out + (i * 4 + 3) * vs, r[i][1] - r[i][3]);
        }
    }
}

// Y = post(A^T M A (+ bias)) for one row of tiles of one output channel (post: the
// channel's epilogue): the 2 output rows 2th, 2th+1 (of OH), columns up to OW. M[e] is [O][T2] (row
// stride T2, the stride between the 16 is O*T2); m points at M[0][o][th*TW4].
__attribute__((noinline)) void transform_output_row(const float* m, int64_t ms, int64_t TW4,
                                                    float bias, const ChannelEpilogue& post,
                                                    float* y, int64_t rows, int64_t OW) {
    for (int64_t tw = 0; tw < TW4; tw += kLanes) {
        f32x4 s[2][4]; // A^T M: [2, 4]
        for (int j = 0; j < 4; ++j) {
            const f32x4 m0 = load4(m + (0 + j) * ms + tw), m1 = load4(m + (4 + j) * ms + tw);
            const f32x4 m2 = load4(m + (8 + j) * ms + tw), m3 = load4(m + (12 + j) * ms + tw);
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
        }
        const f32x4 bb = {bias, bias, bias, bias};
        const int64_t col = 2 * tw, cols = std::min<int64_t>(2 * kLanes, OW - col);
        for (int64_t i = 0; i < rows; ++i) { // (A^T M) A, row i: tile k's outputs in lane k
            const f32x4 y0 = post(s[i][0] + s[i][1] + s[i][2] + bb);
            const f32x4 y1 = post(s[i][1] - s[i][2] - s[i][3] + bb);
            float out[2 * kLanes]; // the four tiles' two columns, interleaved
            store4(out, __builtin_shufflevector(y0, y1, 0, 4, 1, 5));
            store4(out + 4, __builtin_shufflevector(y0, y1, 2, 6, 3, 7));
            std::memcpy(y + i * OW + col, out, static_cast<size_t>(cols) * sizeof(float));
        }
    }
}

// The tile grid of an OH x OW output: TH x TW4 tiles of 2x2, TW4 rounded up to
// whole vectors (the extra tiles read zeros and are not written out).
struct Tiles {
    int64_t TH, TW4, T2, NP;
    Tiles(int64_t OH, int64_t OW)
        : TH((OH + 1) / 2), TW4(((OW + 1) / 2 + kLanes - 1) / kLanes * kLanes), T2(TH * TW4),
          NP(panels_of(T2)) {}
};

// The convs F(2x2, 3x3) computes: 3x3 filters, stride 1, undilated, ungrouped.
bool winograd_conv(const Tensor& w, const ConvParams& p) {
    return w.dim() == 4 && w.sizes[2] == 3 && w.sizes[3] == 3 && p.stride[0] == 1 &&
           p.stride[1] == 1 && p.dilation[0] == 1 && p.dilation[1] == 1 && p.groups == 1;
}

} // namespace

bool conv2d_winograd_suits(const Tensor& x, const Tensor& w, const ConvParams& p) {
    if (x.dim() != 4 || !winograd_conv(w, p)) return false;
    if (x.dtype != ScalarType::Float || w.dtype != ScalarType::Float) return false;
    // Enough channels for the transforms to pay off, and enough tiles that
    // transforming the filters on every call (16/9 of their size) costs little.
    const int64_t OH = x.sizes[2] + 2 * p.padding[0] - 2, OW = x.sizes[3] + 2 * p.padding[1] - 2;
    return x.sizes[1] >= 16 && w.sizes[0] >= 16 && OH > 0 && OW > 0 && Tiles(OH, OW).T2 >= 32;
}

Result<Tensor> conv2d_winograd(const Tensor& x, const Tensor& w, const Tensor* b,
                               const ConvParams& p, const KernelOptions& opt,
                               const ConvEpilogue* ep) {
    return job_tensor(conv2d_winograd_job(x, w, b, p, opt, ep));
}

// The units: runs of filters transformed, then per image runs of input channels
// transformed, the 16 GEMMs over runs of 8-tile panels, and runs of output
// channels transformed back; each writes what one call writes, in the same order.
Result<std::unique_ptr<KernelJob>> conv2d_winograd_job(const Tensor& x, const Tensor& w,
                                                       const Tensor* b, const ConvParams& p,
                                                       const KernelOptions& opt,
                                                       const ConvEpilogue* ep) {
    if (!winograd_conv(w, p))
        return kernel_error("conv2d (Winograd): needs a 3x3, stride-1, undilated, ungrouped conv");
    auto yr = conv2d_result(x, w, b, p, opt);
    if (!yr.ok()) return yr.error();
    const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    const int64_t O = w.sizes[0], OH = yr.value().sizes[2], OW = yr.value().sizes[3];
    const int64_t ph = p.padding[0], pw = p.padding[1];
    const Tiles g(OH, OW);
    // The zero-padded plane: every tile's 4x4 patch in bounds, plus 2 columns the
    // vector loads of the last group read past it.
    const int64_t R = 2 * g.TH + 2, Q = 2 * g.TW4 + 4;
    const int64_t vs = g.NP * kPanel * C; // floats per transformed-input element e
    // U [16, O, C], V [16, NP, C, 8], M [16, O, T2], the plane [R, Q].
    if (Status s = charge_bytes(opt, work_of({17, O * C + vs + O * g.T2 + R * Q, 4}),
                                "conv2d (Winograd) scratch");
        !s.ok())
        return s.error();
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* yd = job->result.tensor->f32(); // y: [N, O, OH, OW]
    const float *xd = x.f32(), *wd = w.f32(), *bd = b ? b->f32() : nullptr;
    std::shared_ptr<const ConvEpilogue> epc;
    if (ep) epc = std::make_shared<const ConvEpilogue>(*ep);
    std::shared_ptr<float[]> U_buf(new float[static_cast<size_t>(16 * O * C)]);
    std::shared_ptr<float[]> V_buf(new float[static_cast<size_t>(16 * vs)]);
    std::shared_ptr<float[]> M_buf(new float[static_cast<size_t>(16 * O * g.T2)]);
    auto plane_buf = std::make_shared<std::vector<float>>(static_cast<size_t>(R * Q), 0.0f);
    job->keep = {epc, U_buf, V_buf, M_buf, plane_buf};
    const ConvEpilogue* e = epc.get();
    float *U = U_buf.get(), *V = V_buf.get(), *M = M_buf.get(), *plane = plane_buf->data();
    then_items(*job, O, items_per_unit(opt.unit_work, work_of({C, 64}).value_or(UINT64_MAX), O),
               [=](int64_t o0, int64_t o1) {
                   for (int64_t o = o0; o < o1; ++o) transform_filters(wd, o, O, C, U);
               });
    // The last panel's lanes past T2 (never written by the input transform) are zero.
    if (g.T2 % kPanel)
        job->then(1, [=](int64_t) {
            for (int64_t e16 = 0; e16 < 16; ++e16)
                for (int64_t c = 0; c < C; ++c) {
                    float* lanes = V + e16 * vs + (g.NP - 1) * C * kPanel + c * kPanel;
                    std::fill(lanes + g.T2 % kPanel, lanes + kPanel, 0.0f);
                }
        });
    const int64_t in_per =
        items_per_unit(opt.unit_work, work_of({R, Q, 16}).value_or(UINT64_MAX), C);
    const int64_t gemm_per =
        items_per_unit(opt.unit_work, work_of({O, C, kPanel}).value_or(UINT64_MAX), g.NP);
    const int64_t gemm_units = unit_count(g.NP, gemm_per);
    const int64_t out_per =
        items_per_unit(opt.unit_work, work_of({g.T2, 16}).value_or(UINT64_MAX), O);
    for (int64_t n = 0; n < N; ++n) {
        then_items(*job, C, in_per, [=](int64_t c0, int64_t c1) {
            for (int64_t c = c0; c < c1; ++c) {
                // x[n, c] into the plane at (ph, pw), as far as the tiles read it
                const float* xc = xd + (n * C + c) * H * W;
                const int64_t hs = std::min(H, R - ph), ws = std::min(W, Q - pw);
                for (int64_t h = std::max<int64_t>(0, -ph); h < hs; ++h)
                    for (int64_t wi = std::max<int64_t>(0, -pw); wi < ws; ++wi)
                        plane[(ph + h) * Q + pw + wi] = xc[h * W + wi];
                for (int64_t th = 0; th < g.TH; ++th)
                    transform_input_row(plane + 2 * th * Q, Q, g.TW4, th * g.TW4, c, C, vs, V);
            }
        });
        // M[e] [O, T2] = U[e] [O, C] @ V[e] [C, T2], for each of the 16 elements, by panel runs
        job->then(16 * gemm_units, [=](int64_t u) {
            const int64_t e16 = u / gemm_units, j0 = (u % gemm_units) * gemm_per;
            const int64_t j1 = std::min(g.NP, j0 + gemm_per);
            const int64_t t0 = j0 * kPanel, cols = std::min(g.T2, j1 * kPanel) - t0;
            gemm_packed(U + e16 * O * C, V + e16 * vs + j0 * C * kPanel, M + e16 * O * g.T2 + t0, O,
                        cols, C, g.T2, nullptr);
        });
        then_items(*job, O, out_per, [=](int64_t o0, int64_t o1) {
            for (int64_t o = o0; o < o1; ++o) {
                float* yo = yd + (n * O + o) * OH * OW;
                const float bias = bd ? bd[o] : 0.0f;
                const ChannelEpilogue post(e, o);
                for (int64_t th = 0; th < g.TH; ++th)
                    transform_output_row(M + o * g.T2 + th * g.TW4, O * g.T2, g.TW4, bias, post,
                                         yo + 2 * th * OW, std::min<int64_t>(2, OH - 2 * th), OW);
            }
        });
    }
    return job;
}

} // namespace pt2lab
