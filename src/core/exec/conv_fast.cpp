// Fast conv2d: im2col into one buffer, then a register-tiled GEMM (gemm.h)
//   y[o, p] = sum_k w[o, k] * col[k, p]   (per image and group)
// with 4 x 8 output tiles held in vector registers. Depthwise convs have their
// own small kernel; 3x3 stride-1 convs with enough channels go to Winograd
// F(2x2, 3x3) (conv_winograd.cpp).
// Results match the reference loop within float32 rounding (the tests check).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "exec/gemm.h"
#include "exec/kernels.h"
#include "exec/phase_plane.h"

namespace pt2lab {

namespace {

// dst[k][0..8) = B[k, n0 .. n0+8), zero past column N: one panel of a row-major
// B [K, N] (a pointwise conv's input). Out of line, called once per panel.
__attribute__((noinline)) void pack_panel(const float* B, int64_t N, int64_t K, int64_t n0,
                                          float* dst) {
    const int64_t cols = std::min(kPanel, N - n0);
    const float* src = B + n0;
    if (cols == kPanel) { // two vector copies per row (a memcpy call each would cost more)
        for (int64_t k = 0; k < K; ++k, dst += kPanel, src += N) {
            store4(dst, load4(src));
            store4(dst + 4, load4(src + 4));
        }
        return;
    }
    for (int64_t k = 0; k < K; ++k, dst += kPanel, src += N) {
        int64_t c = 0;
        for (; c < cols; ++c) dst[c] = src[c];
        for (; c < kPanel; ++c) dst[c] = 0.0f;
    }
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

// Row k of the packed B: row[0 .. P) into panels [ceil(P/8)][K][8] (zero past P).
__attribute__((noinline)) void scatter_row(const float* row, int64_t P, int64_t K, int64_t k,
                                           float* panels) {
    float* dst = panels + k * kPanel;
    int64_t n = 0;
    for (; n + kPanel <= P; n += kPanel, dst += K * kPanel)
        std::memcpy(dst, row + n, sizeof(float) * kPanel);
    if (n < P) {
        std::memcpy(dst, row + n, static_cast<size_t>(P - n) * sizeof(float));
        std::fill(dst + (P - n), dst + kPanel, 0.0f);
    }
}

// Depthwise conv of one channel (groups == channels, one filter each):
//   y[oh, ow] = sum_{kh, kw} w[kh, kw] * x[ih, iw] (0 in the padding) + bias
// accumulated in float in (kh, kw) order from 0, then + bias: exactly what the
// im2col + GEMM path computes for a 1-row GEMM, without building the [K, P]
// buffer. The fallback of the padded-plane path below (a huge stride or
// dilation over a small input). `acc` is scratch [OW]. Out of line for V8's
// tier-up (see tile_4x8).
// x: [H, W]  w: [KH, KW]  y: [OH, OW]
__attribute__((noinline)) void depthwise_channel(const float* x, int64_t H, int64_t W,
                                                 const float* w, int64_t KH, int64_t KW, float bias,
                                                 const ChannelEpilogue& e, float* y, int64_t OH,
                                                 int64_t OW, const ConvParams& p, float* acc) {
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
        for (int64_t ow = 0; ow < OW; ++ow) out[ow] = e(acc[ow] + bias);
    }
}

// The depthwise fast path reads a zero-padded copy of one input plane stored by
// column phase (phase_plane.h). The padding zeros are read like any input, so
// each output is the same float sum, in the same (kh, kw) order, as
// depthwise_channel computes above.

// Output columns are computed 8 at a time (see phase_plane's `block`).
constexpr int64_t kDwBlock = 8;

// y[ow .. ow + 8) = {c0, c1}, the lanes past OW dropped.
inline void dw_store(float* y, int64_t ow, int64_t OW, f32x4 c0, f32x4 c1) {
    if (ow + kDwBlock <= OW) {
        store4(y + ow, c0);
        store4(y + ow + 4, c1);
        return;
    }
    int64_t r = OW - ow;
    float* d = y + ow;
    if (r >= 4) store4(d, c0), c0 = c1, d += 4, r -= 4;
    if (r >= 1) d[0] = c0[0];
    if (r >= 2) d[1] = c0[1];
    if (r >= 3) d[2] = c0[2];
}

// One output channel of a depthwise conv over the padded plane:
//   y[oh, ow] = e((sum_t w[t] * xp[oh*row_step + off[t] + ow]) + bias)   (t = kh*KW + kw, in order)
// 8 outputs per block in two f32x4 sums. Out of line for V8's tier-up (see
// tile_4x8): called once per output channel.
// xp: [rows, S, WQ]  off, w: [T]  y: [OH, OW]
__attribute__((noinline)) void dw_channel(const float* xp, int64_t row_step, const int64_t* off,
                                          const float* w, int64_t T, float bias,
                                          const ChannelEpilogue& e, float* y, int64_t OH,
                                          int64_t OW) {
    const f32x4 bb = {bias, bias, bias, bias};
    for (int64_t oh = 0; oh < OH; ++oh, xp += row_step, y += OW)
        for (int64_t ow = 0; ow < OW; ow += kDwBlock) {
            f32x4 c0 = {0, 0, 0, 0}, c1 = c0;
            for (int64_t t = 0; t < T; ++t) {
                const float* r = xp + off[t] + ow;
                const f32x4 wv = {w[t], w[t], w[t], w[t]};
                c0 += wv * load4(r);
                c1 += wv * load4(r + 4);
            }
            dw_store(y, ow, OW, e(c0 + bb), e(c1 + bb));
        }
}

// dw_channel for a 3 x 3 kernel (MobileNet's): the nine weights held in
// registers across the channel, the same sums in the same order.
__attribute__((noinline)) void dw_channel_3x3(const float* xp, int64_t row_step, const int64_t* off,
                                              const float* w, float bias, const ChannelEpilogue& e,
                                              float* y, int64_t OH, int64_t OW) {
    const f32x4 bb = {bias, bias, bias, bias};
    f32x4 wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = f32x4{w[t], w[t], w[t], w[t]};
    const int64_t o0 = off[0], o1 = off[1], o2 = off[2], o3 = off[3], o4 = off[4], o5 = off[5],
                  o6 = off[6], o7 = off[7], o8 = off[8];
    for (int64_t oh = 0; oh < OH; ++oh, xp += row_step, y += OW)
        for (int64_t ow = 0; ow < OW; ow += kDwBlock) {
            const float* r = xp + ow;
            f32x4 c0 = {0, 0, 0, 0}, c1 = c0;
            auto tap = [&](int t, int64_t o) {
                c0 += wv[t] * load4(r + o);
                c1 += wv[t] * load4(r + o + 4);
            };
            tap(0, o0), tap(1, o1), tap(2, o2), tap(3, o3), tap(4, o4), tap(5, o5), tap(6, o6);
            tap(7, o7), tap(8, o8);
            dw_store(y, ow, OW, e(c0 + bb), e(c1 + bb));
        }
}

} // namespace

Result<Tensor> conv2d_im2col(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                             const KernelOptions& opt, const ConvEpilogue* ep) {
    return job_tensor(conv2d_im2col_job(x, w, b, p, opt, ep));
}

// The units: per (image, group), the im2col rows of a run of input channels
// (or the input packed into a run of panels), then the GEMM over a run of
// 8-column panels; a depthwise conv's units are runs of channels. Each output
// is the same sum in the same order as in one call: gemm_packed computes each
// column of C alone.
Result<std::unique_ptr<KernelJob>> conv2d_im2col_job(const Tensor& x, const Tensor& w,
                                                     const Tensor* b, const ConvParams& p,
                                                     const KernelOptions& opt,
                                                     const ConvEpilogue* ep) {
    auto yr = conv2d_result(x, w, b, p, opt);
    if (!yr.ok()) return yr.error();
    const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
    const int64_t OH = yr.value().sizes[2], OW = yr.value().sizes[3], G = p.groups, OG = O / G;
    const int64_t K = CG * KH * KW, P = OH * OW;
    // The packed im2col buffer [ceil(P/8)*8, K], one im2col row [P] and the GEMM's
    // edge columns [OG, 8]: at most (K + 1) * (P + 8 + 8 * OG) floats.
    if (Status s = charge_bytes(opt, work_of({K + 1, P + 8 + 8 * OG, 4}), "conv2d (fast) scratch");
        !s.ok())
        return s.error();
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* yd = job->result.tensor->f32(); // y: [N, O, OH, OW]
    const float* xd = x.f32();             // x: [N, C, H, W]
    const float* wd = w.f32();             // w: [O, C/G, KH, KW]
    const float* bd = b ? b->f32() : nullptr;
    // The epilogue, copied (the caller's may go before the job ends).
    std::shared_ptr<const ConvEpilogue> epc;
    if (ep) epc = std::make_shared<const ConvEpilogue>(*ep);
    job->keep.push_back(epc);
    const ConvEpilogue* e = epc.get();
    if (CG == 1) { // depthwise (OG filters per channel): no im2col, small kernels per channel
        const PhasePlane g = phase_plane(KH, KW, OH, OW, p.stride[0], p.stride[1], p.dilation[0],
                                         p.dilation[1], kDwBlock);
        const int64_t per =
            items_per_unit(opt.unit_work, work_of({OG, K, P}).value_or(UINT64_MAX), N * G);
        if (phase_plane_fits(g, H, W, work_of({K, P}))) {
            // plane: [rows, S, WQ], one input channel padded; off: [KH * KW] tap offsets
            if (Status s = charge_bytes(opt, work_of({g.rows, g.row_floats(), 4}),
                                        "conv2d (fast) depthwise plane");
                !s.ok())
                return s.error();
            auto plane =
                std::make_shared<std::vector<float>>(static_cast<size_t>(g.rows * g.row_floats()));
            auto off = std::make_shared<const std::vector<int64_t>>(
                phase_plane_taps(KH, KW, p.dilation[0], p.dilation[1], g));
            job->keep.push_back(plane);
            job->keep.push_back(off);
            float* pl = plane->data();
            const int64_t* of = off->data();
            const int64_t row_step = p.stride[0] * g.row_floats();
            then_items(*job, N * G, per, [=](int64_t begin, int64_t end) {
                for (int64_t nc = begin; nc < end; ++nc) {
                    const int64_t n = nc / G, c = nc % G;
                    // x[n, c]: [H, W] into the plane's interior (its padding stays 0)
                    fill_phase_plane(xd + (n * C + c) * H * W, H, W, p.padding[0], p.padding[1], g,
                                     pl);
                    for (int64_t o = c * OG; o < (c + 1) * OG; ++o) { // y[n, o] = x[n, c] * w[o]
                        const float bias = bd ? bd[o] : 0.0f;
                        float* yo = yd + (n * O + o) * P;
                        const ChannelEpilogue ce(e, o);
                        if (KH == 3 && KW == 3)
                            dw_channel_3x3(pl, row_step, of, wd + o * K, bias, ce, yo, OH, OW);
                        else
                            dw_channel(pl, row_step, of, wd + o * K, K, bias, ce, yo, OH, OW);
                    }
                }
            });
            return job;
        }
        auto acc = std::make_shared<std::vector<float>>(static_cast<size_t>(OW));
        job->keep.push_back(acc);
        float* ac = acc->data();
        then_items(*job, N * O,
                   items_per_unit(opt.unit_work, work_of({K, P}).value_or(UINT64_MAX), N * O),
                   [=](int64_t begin, int64_t end) {
                       for (int64_t no = begin; no < end; ++no) {
                           const int64_t n = no / O, o = no % O;
                           depthwise_channel(xd + (n * C + o / OG) * H * W, H, W, wd + o * K, KH,
                                             KW, bd ? bd[o] : 0.0f, ChannelEpilogue(e, o),
                                             yd + (n * O + o) * P, OH, OW, p, ac);
                       }
                   });
        return job;
    }
    // A 1x1, stride-1, unpadded conv's im2col is its input: only packed into panels.
    const bool pointwise = KH == 1 && KW == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
                           p.padding[0] == 0 && p.padding[1] == 0;
    // The packed B [ceil(P/8)][K][8]; every element is written below, so it is not zeroed first.
    const int64_t NP = panels_of(P);
    std::shared_ptr<float[]> col_buf(new float[static_cast<size_t>(NP * K * kPanel)]);
    auto row_buf = std::make_shared<std::vector<float>>(pointwise ? 0 : static_cast<size_t>(P));
    job->keep.push_back(col_buf);
    job->keep.push_back(row_buf);
    float *col = col_buf.get(), *row = row_buf->data();
    const int64_t pack_per =
        items_per_unit(opt.unit_work, work_of({K, kPanel}).value_or(UINT64_MAX), NP);
    const int64_t rows_per =
        items_per_unit(opt.unit_work, work_of({KH, KW, P}).value_or(UINT64_MAX), CG);
    const int64_t gemm_per =
        items_per_unit(opt.unit_work, work_of({OG, K, kPanel}).value_or(UINT64_MAX), NP);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t g = 0; g < G; ++g) {
            const float* xg = xd + (n * C + g * CG) * H * W;
            if (pointwise) { // x[n, g*CG:(g+1)*CG] is [CG, H*W] = [K, P]
                then_items(*job, NP, pack_per, [=](int64_t j0, int64_t j1) {
                    for (int64_t j = j0; j < j1; ++j)
                        pack_panel(xg, P, K, j * kPanel, col + j * K * kPanel);
                });
            } else { // col[(c, kh, kw), (oh, ow)] = x[n, g*CG + c, ih, iw] or 0 in the padding
                then_items(*job, CG, rows_per, [=](int64_t c0, int64_t c1) {
                    for (int64_t c = c0; c < c1; ++c)
                        for (int64_t kh = 0; kh < KH; ++kh)
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                im2col_row(xg + c * H * W, H, W, kh, kw, p, OH, OW, row);
                                scatter_row(row, P, K, (c * KH + kh) * KW + kw, col);
                            }
                });
            }
            // y[n, g*OG:(g+1)*OG][:, panels j0..j1) = ep(w[g*OG:(g+1)*OG] [OG, K] @ col + b)
            then_items(*job, NP, gemm_per, [=](int64_t j0, int64_t j1) {
                const ConvEpilogue eg = shifted(e, g * OG);
                const int64_t c0 = j0 * kPanel, cols = std::min(P, j1 * kPanel) - c0;
                gemm_packed(wd + g * OG * K, col + j0 * K * kPanel, yd + (n * O + g * OG) * P + c0,
                            OG, cols, K, P, bd ? bd + g * OG : nullptr, e ? &eg : nullptr);
            });
        }
    return job;
}

} // namespace pt2lab
