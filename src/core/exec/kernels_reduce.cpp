// Reductions and pooling: mean, max_pool2d, adaptive_avg_pool2d. Shapes and
// arguments are checked the way ATen checks them (same conditions, torch's
// wording where it has one); every size is computed with checked arithmetic,
// and pooling windows are clipped to the input before the loops, so a huge
// kernel costs no more than the input it covers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exec/kernels.h"
#include "exec/phase_plane.h"
#include "exec/simd.h"
#include "util/checked.h"

namespace pt2lab {

namespace {

Result<std::shared_ptr<Tensor>> float_input(const CallArgs& a, const char* op) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error(std::string(op) + ": expected float32, got " + x.value()->type_str());
    return x.value();
}

// Mean over the dims marked in `reduce` (one flag per dim); double accumulation.
Result<Tensor> mean_over(const KernelOptions& opt, const char* op, const Tensor& x,
                         const std::vector<bool>& reduce, bool keepdim) {
    std::vector<int64_t> out_sizes;
    for (int64_t d = 0; d < x.dim(); ++d) {
        if (reduce[static_cast<size_t>(d)]) {
            if (keepdim) out_sizes.push_back(1);
        } else {
            out_sizes.push_back(x.sizes[static_cast<size_t>(d)]);
        }
    }
    auto yr = new_tensor(opt, ScalarType::Float, out_sizes, op);
    if (!yr.ok()) return yr;
    Tensor& y = yr.value();
    if (Status s = charge_bytes(opt, work_of({y.numel(), 8}), op); !s.ok()) return s.error();
    if (Status s = charge_work(opt, work_of({x.numel()}), op); !s.ok()) return s.error();
    std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
    int64_t count = 1;
    for (int64_t d = 0; d < x.dim(); ++d)
        if (reduce[static_cast<size_t>(d)]) count *= x.sizes[static_cast<size_t>(d)];
    std::vector<int64_t> idx(x.sizes.size(), 0);
    for (int64_t k = 0; k < x.numel(); ++k) {
        int64_t o = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            if (!reduce[d]) o = o * x.sizes[d] + idx[d];
        acc[static_cast<size_t>(o)] += x.f32()[k];
        for (size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < x.sizes[d]) break;
            idx[d] = 0;
        }
    }
    // A mean over no elements is NaN, as in torch.
    for (int64_t k = 0; k < y.numel(); ++k)
        y.f32()[k] =
            static_cast<float>(count ? acc[static_cast<size_t>(k)] / double(count) : std::nan(""));
    return yr;
}

// Floor division (ATen's div_rtn): pooling output sizes round toward -inf.
int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string pair_str(int64_t a, int64_t b) {
    return std::to_string(a) + "x" + std::to_string(b);
}

} // namespace

// mean.dim(self, dim?, keepdim=False, *, dtype=None)
Result<Value> kernel_mean_dim(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten.mean.dim";
    auto x = float_input(a, op);
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    std::vector<bool> reduce(in.sizes.size(), false);
    bool all = a[1].kind == Value::Kind::None;
    if (!all) {
        auto dims = a.ints(1);
        if (!dims.ok()) return dims.error();
        if (dims.value().empty()) all = true;
        for (int64_t d : dims.value()) {
            // A 0-d tensor accepts dim 0 / -1, as torch does, and has nothing to reduce.
            auto w = wrap_dim(d, in.dim());
            if (!w.ok()) return kernel_error(std::string(op) + ": " + w.error().message);
            if (in.dim() == 0) continue;
            if (reduce[static_cast<size_t>(w.value())])
                return kernel_error(std::string(op) + ": dim " + std::to_string(w.value()) +
                                    " appears multiple times");
            reduce[static_cast<size_t>(w.value())] = true;
        }
    }
    if (all) std::fill(reduce.begin(), reduce.end(), true);
    auto keep = a.boolean(2);
    if (!keep.ok()) return keep.error();
    auto y = mean_over(opt, op, in, reduce, keep.value());
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

// mean(self, *, dtype=None): mean of all elements, 0-dim result
Result<Value> kernel_mean(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten.mean.default";
    auto x = float_input(a, op);
    if (!x.ok()) return x.error();
    auto y =
        mean_over(opt, op, *x.value(), std::vector<bool>(x.value()->sizes.size(), true), false);
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

namespace {
// The window taps along one axis, per output position o: tap i reads
// start[o] + i * dil, and only the taps [lo[o], hi[o]) lie inside [0, len).
// Computed once per call (not per element, not per plane), so the loops below
// test no bounds.
struct PoolTaps {
    std::vector<int64_t> start, lo, hi; // [out]
};
PoolTaps pool_taps(int64_t out, int64_t stride, int64_t pad, int64_t dil, int64_t kk, int64_t len) {
    PoolTaps t;
    for (int64_t o = 0; o < out; ++o) {
        const int64_t start = o * stride - pad;
        t.start.push_back(start);
        t.lo.push_back(start >= 0 ? 0 : (-start + dil - 1) / dil);
        t.hi.push_back(start >= len ? 0 : std::min(kk, (len - 1 - start) / dil + 1));
    }
    return t;
}

// One plane of max_pool2d, as ATen's CPU loop computes it: from -inf, a tap
// replaces the max when `v > max || isnan(v)`, so a NaN wins (and the last NaN's
// position is the index); a window with nothing above -inf keeps its first tap's
// position. `idx` null: the values only. Out of line: called once per plane, so
// V8 optimizes it during a model's first run (see conv_fast.cpp).
// x: [H, W]  y, idx: [OH, OW]
template <bool kIndices>
__attribute__((noinline)) void max_pool_plane(const float* xs, int64_t W, const PoolTaps& rows,
                                              const PoolTaps& cols, int64_t DH, int64_t DW,
                                              float* y, int64_t* idx) {
    const int64_t OH = static_cast<int64_t>(rows.start.size());
    const int64_t OW = static_cast<int64_t>(cols.start.size());
    for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t h0 = rows.start[oh], ilo = rows.lo[oh], ihi = rows.hi[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t w0 = cols.start[ow], jlo = cols.lo[ow], jhi = cols.hi[ow];
            // ATen's one test split in two: the max of the non-NaN taps (a select,
            // no branch to mispredict), and the last NaN (a branch rarely taken),
            // which wins over any max.
            float best = -std::numeric_limits<float>::infinity(), nan = 0.0f;
            int64_t arg = (h0 + ilo * DH) * W + w0 + jlo * DW, nan_arg = -1;
            for (int64_t i = ilo; i < ihi; ++i) {
                const int64_t row = (h0 + i * DH) * W + w0; // xs[row + j*DW] is x[ih, iw]
                for (int64_t j = jlo; j < jhi; ++j) {
                    const float v = xs[row + j * DW];
                    if (v != v) nan = v, nan_arg = row + j * DW; // NaN
                    if (kIndices) arg = v > best ? row + j * DW : arg;
                    best = v > best ? v : best;
                }
            }
            y[oh * OW + ow] = nan_arg >= 0 ? nan : best;
            if (kIndices) idx[oh * OW + ow] = nan_arg >= 0 ? nan_arg : arg;
        }
    }
}

// The fast path (KernelOptions::fast_conv, values only): each plane copied into
// a -inf-padded plane stored by column phase (phase_plane.h, as the fast
// depthwise conv pads its planes), then 4 outputs at a time in f32x4. A -inf tap
// never replaces the max (v > max is false), so the padding changes nothing,
// and each lane computes exactly what max_pool_plane computes: the same
// `v > max` select and the last NaN winning.
typedef int32_t i32x4 __attribute__((vector_size(16), aligned(4)));

// One plane over the padded plane: y[oh, ow] = max_t xp[oh*row_step + off[t] + ow].
// xp: [rows, S, WQ]  off: [T]  y: [OH, OW]
__attribute__((noinline)) void pool_plane_fast(const float* xp, int64_t row_step,
                                               const int64_t* off, int64_t T, float* y, int64_t OH,
                                               int64_t OW) {
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t oh = 0; oh < OH; ++oh, xp += row_step, y += OW)
        for (int64_t ow = 0; ow < OW; ow += 4) {
            f32x4 best = {-inf, -inf, -inf, -inf}, nan = {0, 0, 0, 0};
            i32x4 any_nan = {0, 0, 0, 0};
            for (int64_t t = 0; t < T; ++t) {
                const f32x4 v = load4(xp + off[t] + ow);
                const i32x4 is_nan = v != v;
                nan = is_nan ? v : nan;
                any_nan |= is_nan;
                best = v > best ? v : best;
            }
            best = any_nan ? nan : best;
            if (ow + 4 <= OW)
                store4(y + ow, best);
            else
                for (int64_t k = 0; k < OW - ow; ++k) y[ow + k] = best[k];
        }
}

// The fast path when its padded plane is not much larger than the input and
// the work (else the reference loop runs): its units added to `job`, a run of
// planes each. Returns false without adding any then.
bool max_pool_fast(KernelJob& job, const Tensor& in, int64_t batch, const std::vector<int64_t>& K,
                   const std::vector<int64_t>& st, const std::vector<int64_t>& P,
                   const std::vector<int64_t>& D, int64_t OH, int64_t OW, float* y,
                   const KernelOptions& opt, const std::string& op) {
    const int64_t H = in.size(-2), W = in.size(-1);
    const PhasePlane g = phase_plane(K[0], K[1], OH, OW, st[0], st[1], D[0], D[1], 4);
    if (!phase_plane_fits(g, H, W, work_of({OH, OW, K[0], K[1]}))) return false;
    if (!charge_bytes(opt, work_of({g.rows, g.row_floats(), 4}), op).ok()) return false;
    auto xp_buf = std::make_shared<std::vector<float>>(static_cast<size_t>(g.rows * g.row_floats()),
                                                       -std::numeric_limits<float>::infinity());
    auto off_buf =
        std::make_shared<const std::vector<int64_t>>(phase_plane_taps(K[0], K[1], D[0], D[1], g));
    job.keep.push_back(xp_buf);
    job.keep.push_back(off_buf);
    float* xp = xp_buf->data();
    const int64_t* off = off_buf->data();
    const int64_t T = static_cast<int64_t>(off_buf->size()), row_step = st[0] * g.row_floats();
    const int64_t P0 = P[0], P1 = P[1];
    const float* xd = in.f32();
    then_items(job, batch,
               items_per_unit(opt.unit_work, work_of({OH, OW, T}).value_or(UINT64_MAX), batch),
               [=](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) { // x: [B, H, W] -> y: [B, OH, OW]
                       fill_phase_plane(xd + b * H * W, H, W, P0, P1, g, xp);
                       pool_plane_fast(xp, row_step, off, T, y + b * OH * OW, OH, OW);
                   }
               });
    return true;
}

// The window geometry of a 2-D pooling op, checked as ATen's pooling checks it.
struct PoolGeometry {
    std::vector<int64_t> K, stride, P, D; // kernel, stride (default: the kernel), padding, dilation
    bool ceil = false;
    int64_t out[2] = {0, 0};        // output rows, columns
    std::vector<int64_t> out_sizes; // the input's sizes with those two last
    int64_t batch = 0;              // the planes: N * C, or C for a 3-D input
};

// kernel_size, stride=[], padding=0[, dilation=1], ceil_mode=False from argument 1 on
// (avg_pool2d has no dilation: 1), for a 3-D [C, H, W] or 4-D [N, C, H, W] input.
Result<PoolGeometry> pool_geometry(const CallArgs& a, const std::string& op, const Tensor& in,
                                   bool has_dilation) {
    // Like ATen: 3-D [C, H, W] or 4-D [N, C, H, W], only the batch may be empty.
    bool shape_ok = (in.dim() == 3 && in.sizes[0] && in.sizes[1] && in.sizes[2]) ||
                    (in.dim() == 4 && in.sizes[1] && in.sizes[2] && in.sizes[3]);
    if (!shape_ok)
        return kernel_error(op +
                            ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                            "size for input, but got: " +
                            shape_str(in.sizes));
    auto two = [&](size_t i, const char* what, bool empty_ok) -> Result<std::vector<int64_t>> {
        auto v = a.ints(i);
        if (!v.ok()) return v.error();
        if (v.value().empty() && empty_ok) return v;
        if (v.value().size() == 1) return std::vector<int64_t>(2, v.value()[0]);
        if (v.value().size() != 2)
            return kernel_error(op + ": " + what + " must either be a single int, or a tuple of " +
                                "two ints");
        return v;
    };
    PoolGeometry g;
    auto k = two(1, "kernel_size", false);
    if (!k.ok()) return k.error();
    g.K = k.take();
    auto s = two(2, "stride", true);
    if (!s.ok()) return s.error();
    g.stride = s.value().empty() ? g.K : s.value();
    auto p = two(3, "padding", false);
    if (!p.ok()) return p.error();
    g.P = p.take();
    g.D = {1, 1};
    if (has_dilation) {
        auto d = two(4, "dilation", false);
        if (!d.ok()) return d.error();
        g.D = d.take();
    }
    auto ceil = a.boolean(has_dilation ? 5 : 4);
    if (!ceil.ok()) return ceil.error();
    g.ceil = ceil.value();
    const std::vector<int64_t>&K = g.K, &stride = g.stride, &P = g.P, &D = g.D;
    // ATen's pooling narrows every parameter to int (safe_downcast: "integer out of range").
    using Param = std::pair<const std::vector<int64_t>*, const char*>;
    for (const Param& pr : {Param(&K, "kernel_size"), Param(&stride, "stride"),
                            Param(&P, "padding"), Param(&D, "dilation")})
        for (int64_t v : *pr.first)
            if (v > INT32_MAX || v < INT32_MIN)
                return kernel_error(op + ": " + pr.second + " " + std::to_string(v) +
                                    " is out of range: torch's pooling takes 32-bit sizes "
                                    "(integer out of range)");
    if (K[0] <= 0 || K[1] <= 0)
        return kernel_error(op + ": kernel size should be greater than zero, but got kH: " +
                            std::to_string(K[0]) + " kW: " + std::to_string(K[1]));
    if (stride[0] <= 0 || stride[1] <= 0)
        return kernel_error(op + ": stride should be greater than zero, but got dH: " +
                            std::to_string(stride[0]) + " dW: " + std::to_string(stride[1]));
    if (D[0] <= 0 || D[1] <= 0)
        return kernel_error(op + ": dilation should be greater than zero, but got dilationH: " +
                            std::to_string(D[0]) + " dilationW: " + std::to_string(D[1]));
    const int64_t H = in.size(-2), W = in.size(-1);
    for (int i = 0; i < 2; ++i) {
        const int64_t len = i == 0 ? H : W, kk = K[static_cast<size_t>(i)],
                      st = stride[static_cast<size_t>(i)], pd = P[static_cast<size_t>(i)],
                      dl = D[static_cast<size_t>(i)];
        if (pd < 0 || pd > kk / 2)
            return kernel_error(op + ": pad should be at most half of kernel size, but got pad=" +
                                std::to_string(pd) + " and kernel_size=" + std::to_string(kk));
        // len + 2 * pad - dilation * (kernel - 1) - 1 (+ stride - 1), checked.
        auto span = checked_mul(dl, kk - 1);
        auto padded = checked_add(len, checked_mul(2, pd).value_or(INT64_MAX));
        std::optional<int64_t> num =
            span && padded ? checked_add(*padded, -*span - 1) : std::nullopt;
        if (num && g.ceil) num = checked_add(*num, st - 1);
        if (!num)
            return kernel_error(op + ": kernel_size " + std::to_string(kk) + ", dilation " +
                                std::to_string(dl) + " and padding " + std::to_string(pd) +
                                " overflow 64-bit arithmetic");
        int64_t o = floor_div(*num, st) + 1;
        if (g.ceil && (o - 1) * st >= len + pd) --o; // last window starts inside
        g.out[i] = o;
    }
    if (g.out[0] < 1 || g.out[1] < 1)
        return kernel_error(op + ": Given input size: (" + pair_str(H, W) +
                            "). Calculated output size: (" + pair_str(g.out[0], g.out[1]) +
                            "). Output size is too small");
    g.out_sizes = in.sizes;
    g.out_sizes[g.out_sizes.size() - 2] = g.out[0];
    g.out_sizes[g.out_sizes.size() - 1] = g.out[1];
    g.batch = in.dim() == 4 ? in.sizes[0] * in.sizes[1] : in.sizes[0];
    return g;
}

// max_pool2d(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False); indices
// optional. A unit is a run of planes.
Result<std::unique_ptr<KernelJob>> max_pool(const CallArgs& a, const KernelOptions& opt,
                                            bool with_indices) {
    const std::string op =
        with_indices ? "aten.max_pool2d_with_indices.default" : "aten.max_pool2d.default";
    auto x = float_input(a, op.c_str());
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    auto geom = pool_geometry(a, op, in, /*has_dilation=*/true);
    if (!geom.ok()) return geom.error();
    const PoolGeometry& g = geom.value();
    const std::vector<int64_t>&K = g.K, &stride = g.stride, &P = g.P, &D = g.D;
    const int64_t H = in.size(-2), W = in.size(-1);
    const int64_t* out = g.out;
    auto yr = new_tensor(opt, ScalarType::Float, g.out_sizes, op);
    if (!yr.ok()) return yr.error();
    // The indices only when returned (max_pool2d has no use for them).
    auto ir =
        new_tensor(opt, ScalarType::Long, with_indices ? g.out_sizes : std::vector<int64_t>{0}, op);
    if (!ir.ok()) return ir.error();
    // Each window visits at most min(kernel, input) rows and columns; the tap
    // tables hold 3 int64 per output row and column.
    const int64_t taps = std::min(K[0], H) * std::min(K[1], W);
    if (Status st = charge_work(opt, work_of({yr.value().numel(), taps}), op); !st.ok())
        return st.error();
    if (Status st = charge_bytes(opt, work_of({out[0] + out[1], 3, 8}), op); !st.ok())
        return st.error();
    auto job = std::make_unique<KernelJob>();
    job->result = with_indices ? Value::tuple({Value::of(yr.take()), Value::of(ir.take())})
                               : Value::of(yr.take());
    float* y = (with_indices ? job->result.items[0] : job->result).tensor->f32();
    int64_t* idx = with_indices ? job->result.items[1].tensor->data<int64_t>() : nullptr;
    const int64_t plane = out[0] * out[1];
    if (opt.fast_conv && !with_indices &&
        max_pool_fast(*job, in, g.batch, K, stride, P, D, out[0], out[1], y, opt, op))
        return job;
    auto taps_buf = std::make_shared<const std::pair<PoolTaps, PoolTaps>>(
        pool_taps(out[0], stride[0], P[0], D[0], K[0], H),
        pool_taps(out[1], stride[1], P[1], D[1], K[1], W));
    job->keep.push_back(taps_buf);
    const PoolTaps &rows = taps_buf->first, &cols = taps_buf->second;
    const int64_t DH = D[0], DW = D[1];
    const float* xd = in.f32();
    then_items(*job, g.batch,
               items_per_unit(opt.unit_work, work_of({plane, taps}).value_or(UINT64_MAX), g.batch),
               [=, &rows, &cols](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) { // x: [B, H, W] -> y, idx: [B, OH, OW]
                       const float* xs = xd + b * H * W;
                       if (idx)
                           max_pool_plane<true>(xs, W, rows, cols, DH, DW, y + b * plane,
                                                idx + b * plane);
                       else
                           max_pool_plane<false>(xs, W, rows, cols, DH, DW, y + b * plane, nullptr);
                   }
               });
    return job;
}
} // namespace

Result<std::unique_ptr<KernelJob>> job_max_pool2d(const CallArgs& a, const KernelOptions& opt) {
    return max_pool(a, opt, false);
}
Result<Value> kernel_max_pool2d(const CallArgs& a, const KernelOptions& opt) {
    return job_value(max_pool(a, opt, false));
}
Result<Value> kernel_max_pool2d_with_indices(const CallArgs& a, const KernelOptions& opt) {
    return job_value(max_pool(a, opt, true));
}

// avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False,
// count_include_pad=True, divisor_override=None), as ATen's cpu_avg_pool: per output,
// the window clipped to the input summed row by row in float, divided by the
// override, else by the window's size with its padding (count_include_pad) or without.
Result<std::unique_ptr<KernelJob>> job_avg_pool2d(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.avg_pool2d.default";
    auto x = float_input(a, op.c_str());
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    auto geom = pool_geometry(a, op, in, /*has_dilation=*/false);
    if (!geom.ok()) return geom.error();
    const PoolGeometry& g = geom.value();
    auto include_pad = a.boolean(5);
    if (!include_pad.ok()) return include_pad.error();
    std::optional<int64_t> divisor;
    if (a[6].kind != Value::Kind::None) {
        auto d = a.integer(6);
        if (!d.ok()) return d.error();
        if (d.value() == 0) return kernel_error(op + ": divisor must be not zero");
        divisor = d.value();
    }
    const int64_t H = in.size(-2), W = in.size(-1), OH = g.out[0], OW = g.out[1];
    auto yr = new_tensor(opt, ScalarType::Float, g.out_sizes, op);
    if (!yr.ok()) return yr.error();
    if (Status st = charge_work(
            opt, work_of({yr.value().numel(), std::min(g.K[0], H), std::min(g.K[1], W)}), op);
        !st.ok())
        return st.error();
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* y = job->result.tensor->f32();
    const float* xd = in.f32();
    const int64_t KH = g.K[0], KW = g.K[1], SH = g.stride[0], SW = g.stride[1], PH = g.P[0],
                  PW = g.P[1];
    const bool count_pad = include_pad.value();
    then_items(
        *job, g.batch,
        items_per_unit(opt.unit_work,
                       work_of({OH, OW, std::min(KH, H), std::min(KW, W)}).value_or(UINT64_MAX),
                       g.batch),
        [=](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) {
                const float* xs = xd + b * H * W;
                for (int64_t oh = 0; oh < OH; ++oh) {
                    for (int64_t ow = 0; ow < OW; ++ow) {
                        int64_t ih0 = oh * SH - PH, iw0 = ow * SW - PW;
                        int64_t ih1 = std::min(ih0 + KH, H + PH);
                        int64_t iw1 = std::min(iw0 + KW, W + PW);
                        const int64_t pool_size = (ih1 - ih0) * (iw1 - iw0);
                        ih0 = std::max<int64_t>(ih0, 0), iw0 = std::max<int64_t>(iw0, 0);
                        ih1 = std::min(ih1, H), iw1 = std::min(iw1, W);
                        float& out = y[(b * OH + oh) * OW + ow];
                        if (ih0 >= ih1 || iw0 >= iw1) {
                            out = 0;
                            continue;
                        }
                        float sum = 0;
                        for (int64_t ih = ih0; ih < ih1; ++ih)
                            for (int64_t iw = iw0; iw < iw1; ++iw) sum += xs[ih * W + iw];
                        const int64_t factor = divisor     ? *divisor
                                               : count_pad ? pool_size
                                                           : (ih1 - ih0) * (iw1 - iw0);
                        out = sum / static_cast<float>(factor);
                    }
                }
            }
        });
    return job;
}

Result<Value> kernel_avg_pool2d(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_avg_pool2d(a, opt));
}

// adaptive_avg_pool2d(self, output_size) / _adaptive_avg_pool2d: window
// [floor(o * H / OH), ceil((o + 1) * H / OH)) per output row, the same for columns.
Result<std::unique_ptr<KernelJob>> job_adaptive_avg_pool2d(const CallArgs& a,
                                                           const KernelOptions& opt) {
    const std::string op = a.schema().overload_str();
    auto x = float_input(a, op.c_str());
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    auto os = a.ints(1);
    if (!os.ok()) return os.error();
    if (os.value().size() != 2) return kernel_error(op + ": output_size must be 2");
    const int64_t OH = os.value()[0], OW = os.value()[1];
    if (OH < 0 || OW < 0)
        return kernel_error(op +
                            ": elements of output_size must be greater than or equal to 0 but "
                            "received {" +
                            std::to_string(OH) + ", " + std::to_string(OW) + "}");
    if (in.dim() != 4 && in.dim() != 3)
        return kernel_error(op + ": Expected 3D or 4D tensor, but got " + shape_str(in.sizes));
    const int64_t H = in.size(-2), W = in.size(-1);
    // adaptive_avg_pool2d to [1, 1] is input.mean([-1, -2], keepdim=True) in
    // ATen (NaN over an empty plane); every other case checks the plane.
    const bool as_mean = op == "aten.adaptive_avg_pool2d.default" && OH == 1 && OW == 1;
    if (!as_mean)
        for (int64_t i = 1; i < in.dim(); ++i)
            if (in.sizes[static_cast<size_t>(i)] == 0)
                return kernel_error(op +
                                    ": Expected input to have non-zero size for non-batch "
                                    "dimensions, but input has sizes " +
                                    shape_str(in.sizes) + " with dimension " + std::to_string(i) +
                                    " being empty");
    std::vector<int64_t> out_sizes = in.sizes;
    out_sizes[out_sizes.size() - 2] = OH;
    out_sizes[out_sizes.size() - 1] = OW;
    auto yr = new_tensor(opt, ScalarType::Float, out_sizes, op);
    if (!yr.ok()) return yr.error();
    int64_t batch = 1; // the leading dims, as one
    for (size_t d = 0; d + 2 < in.sizes.size(); ++d) batch *= in.sizes[d];
    // Windows overlap by at most one row / column: about (H + OH) x (W + OW) visits per plane.
    if (Status s = charge_work(opt, work_of({batch, H + OH, W + OW}), op); !s.ok())
        return s.error();
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* y = job->result.tensor->f32();
    const float* xd = in.f32();
    // A unit is a run of planes.
    const int64_t per = items_per_unit(
        opt.unit_work, work_of({H + OH, W + OW}).value_or(UINT64_MAX), std::max<int64_t>(batch, 1));
    if (as_mean) {
        then_items(*job, batch, per, [=](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) {
                double sum = 0.0;
                for (int64_t k = 0; k < H * W; ++k) sum += xd[b * H * W + k];
                y[b] = static_cast<float>(H * W != 0 ? sum / double(H * W) : std::nan(""));
            }
        });
        return job;
    }
    then_items(*job, batch, per, [=](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) // x: [B, H, W] -> y: [B, OH, OW]
            for (int64_t oh = 0; oh < OH; ++oh) {
                const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
                    double sum = 0.0;
                    for (int64_t i = h0; i < h1; ++i)
                        for (int64_t j = w0; j < w1; ++j) sum += xd[(b * H + i) * W + j];
                    y[(b * OH + oh) * OW + ow] =
                        static_cast<float>(sum / double((h1 - h0) * (w1 - w0)));
                }
            }
    });
    return job;
}

Result<Value> kernel_adaptive_avg_pool2d(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_adaptive_avg_pool2d(a, opt));
}

} // namespace pt2lab
