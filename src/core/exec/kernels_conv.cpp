// 2-D convolution: the reference loop (double accumulation, the definition
// the tests check against PyTorch) and the conv2d / convolution kernels.
#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Result<std::vector<int64_t>> conv2d_output_shape(const Tensor& x, const Tensor& w, const Tensor* b,
                                                 const ConvParams& p) {
    if (x.dtype != ScalarType::Float || w.dtype != ScalarType::Float ||
        (b && b->dtype != ScalarType::Float))
        return kernel_error("conv2d: only float32 tensors are supported (input " + x.type_str() +
                            ", weight " + w.type_str() + ")");
    if (x.dim() != 4)
        return kernel_error("conv2d: expected a 4-D input [N, C, H, W], got " + x.type_str());
    if (w.dim() != 4)
        return kernel_error("conv2d: expected a 4-D weight [O, C/groups, KH, KW], got " +
                            w.type_str());
    const int64_t g = p.groups;
    if (g <= 0) return kernel_error("conv2d: non-positive groups is not supported");
    for (int k = 0; k < 2; ++k) {
        if (p.stride[k] <= 0) return kernel_error("conv2d: non-positive stride is not supported");
        if (p.padding[k] < 0) return kernel_error("conv2d: negative padding is not supported");
        if (p.dilation[k] <= 0) return kernel_error("conv2d: dilation should be greater than zero");
    }
    if (w.sizes[0] < g)
        return kernel_error("conv2d: Given groups=" + std::to_string(g) +
                            ", expected weight to be at least " + std::to_string(g) +
                            " at dimension 0, but got weight of size " + shape_str(w.sizes) +
                            " instead");
    auto channels = checked_mul(w.sizes[1], g);
    if (!channels || x.sizes[1] != *channels)
        return kernel_error("conv2d: input " + x.type_str() + " has " + std::to_string(x.sizes[1]) +
                            " channels but weight " + w.type_str() +
                            " with groups=" + std::to_string(g) + " expects " +
                            (channels ? std::to_string(*channels) : std::string("too many")));
    if (w.sizes[0] % g != 0)
        return kernel_error("conv2d: " + std::to_string(w.sizes[0]) +
                            " output channels are not divisible by groups=" + std::to_string(g));
    if (b && (b->dim() != 1 || b->sizes[0] != w.sizes[0]))
        return kernel_error("conv2d: bias " + b->type_str() + " does not match " +
                            std::to_string(w.sizes[0]) + " output channels");
    if (w.sizes[2] <= 0 || w.sizes[3] <= 0)
        return kernel_error("conv2d: kernel size should be greater than zero, but got "
                            "kernel_height: " +
                            std::to_string(w.sizes[2]) +
                            " kernel_width: " + std::to_string(w.sizes[3]));
    // Per spatial dim: padded = in + 2 * pad, extent = dilation * (k - 1) + 1, all checked.
    int64_t padded[2], extent[2], out[2];
    for (int k = 0; k < 2; ++k) {
        auto pd = checked_add(x.sizes[2 + k], checked_mul(2, p.padding[k]).value_or(INT64_MAX));
        auto ex = checked_mul(p.dilation[k], w.sizes[2 + k] - 1);
        if (!pd || !ex || *ex == INT64_MAX)
            return kernel_error("conv2d: padding " + std::to_string(p.padding[k]) +
                                " or dilation " + std::to_string(p.dilation[k]) +
                                " overflows 64-bit arithmetic");
        padded[k] = *pd;
        extent[k] = *ex + 1;
    }
    if (padded[0] < extent[0] || padded[1] < extent[1])
        return kernel_error("conv2d: Calculated padded input size per channel: (" +
                            std::to_string(padded[0]) + " x " + std::to_string(padded[1]) +
                            "). Kernel size: (" + std::to_string(extent[0]) + " x " +
                            std::to_string(extent[1]) +
                            "). Kernel size can't be greater than actual input size");
    if ((x.sizes[2] == 0 || x.sizes[3] == 0) && x.sizes[0] != 0 && x.sizes[1] != 0)
        return kernel_error(
            "conv2d: Only zero batch or zero channel inputs are supported, but got input shape: " +
            shape_str(x.sizes));
    for (int k = 0; k < 2; ++k) out[k] = (padded[k] - extent[k]) / p.stride[k] + 1;
    return std::vector<int64_t>{x.sizes[0], w.sizes[0], out[0], out[1]};
}

Result<Tensor> conv2d_result(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                             const KernelOptions& opt) {
    auto shape = conv2d_output_shape(x, w, b, p);
    if (!shape.ok()) return shape.error();
    const std::vector<int64_t>& s = shape.value();
    auto y = new_unfilled_tensor(opt, ScalarType::Float, s, "aten.conv2d.default");
    if (!y.ok()) return y;
    // N * O * OH * OW outputs, each C/groups * KH * KW multiply-adds.
    Status st =
        charge_work(opt, work_of({s[0], s[1], s[2], s[3], w.sizes[1], w.sizes[2], w.sizes[3]}),
                    "aten.conv2d.default");
    if (!st.ok()) return st.error();
    return y;
}

Result<std::unique_ptr<KernelJob>> conv2d_reference_job(const Tensor& x, const Tensor& w,
                                                        const Tensor* b, const ConvParams& p,
                                                        const KernelOptions& opt) {
    auto yr = conv2d_result(x, w, b, p, opt);
    if (!yr.ok()) return yr.error();
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    const Tensor& y = *job->result.tensor;
    const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
    const int64_t OH = y.sizes[2], OW = y.sizes[3], G = p.groups, OG = O / G;
    const float* xd = x.f32(); // x: [N, C, H, W]
    const float* wd = w.f32(); // w: [O, C/G, KH, KW]
    const float* bd = b ? b->f32() : nullptr;
    float* yd = job->result.tensor->f32(); // y: [N, O, OH, OW]
    // A unit is a run of (n, o) output planes.
    const int64_t per =
        items_per_unit(opt.unit_work, work_of({OH, OW, CG, KH, KW}).value_or(UINT64_MAX), N * O);
    then_items(*job, N * O, per, [=](int64_t begin, int64_t end) {
        for (int64_t no = begin; no < end; ++no) {
            const int64_t n = no / O, o = no % O, g = o / OG;
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    double acc = bd ? bd[o] : 0.0;
                    for (int64_t c = 0; c < CG; ++c) {
                        const int64_t ci = g * CG + c; // input channel
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            const int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
                            if (ih < 0 || ih >= H) continue;
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                const int64_t iw =
                                    ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
                                if (iw < 0 || iw >= W) continue;
                                acc += double(xd[((n * C + ci) * H + ih) * W + iw]) *
                                       double(wd[((o * CG + c) * KH + kh) * KW + kw]);
                            }
                        }
                    }
                    yd[((n * O + o) * OH + oh) * OW + ow] = static_cast<float>(acc);
                }
        }
    });
    return job;
}

Result<Tensor> conv2d_reference(const Tensor& x, const Tensor& w, const Tensor* b,
                                const ConvParams& p, const KernelOptions& opt) {
    return job_tensor(conv2d_reference_job(x, w, b, p, opt));
}

Result<std::unique_ptr<KernelJob>> conv2d_fast_job(const Tensor& x, const Tensor& w,
                                                   const Tensor* b, const ConvParams& p,
                                                   const KernelOptions& opt,
                                                   const ConvEpilogue* ep) {
    if (conv2d_winograd_suits(x, w, p)) return conv2d_winograd_job(x, w, b, p, opt, ep);
    return conv2d_im2col_job(x, w, b, p, opt, ep);
}

Result<Tensor> conv2d_fast(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                           const KernelOptions& opt, const ConvEpilogue* ep) {
    return job_tensor(conv2d_fast_job(x, w, b, p, opt, ep));
}

namespace {

Result<ConvParams> read_params(const CallArgs& a, size_t stride_at, size_t padding_at,
                               size_t dilation_at, size_t groups_at) {
    ConvParams p;
    auto s = a.ints(stride_at, 2);
    if (!s.ok()) return s.error();
    auto pd = a.ints(padding_at, 2);
    if (!pd.ok()) return pd.error();
    auto d = a.ints(dilation_at, 2);
    if (!d.ok()) return d.error();
    auto g = a.integer(groups_at);
    if (!g.ok()) return g.error();
    for (int k = 0; k < 2; ++k) {
        p.stride[k] = s.value()[static_cast<size_t>(k)];
        p.padding[k] = pd.value()[static_cast<size_t>(k)];
        p.dilation[k] = d.value()[static_cast<size_t>(k)];
    }
    p.groups = g.value();
    return p;
}

Result<std::unique_ptr<KernelJob>> run_conv(const CallArgs& a, const ConvParams& p,
                                            const KernelOptions& opt, const ConvEpilogue* ep) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto w = a.tensor(1);
    if (!w.ok()) return w.error();
    auto b = a.opt_tensor(2);
    if (!b.ok()) return b.error();
    const Tensor *xt = x.value().get(), *wt = w.value().get(), *bt = b.value().get();
    return opt.fast_conv ? conv2d_fast_job(*xt, *wt, bt, p, opt, ep)
                         : conv2d_reference_job(*xt, *wt, bt, p, opt);
}

// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1), or
// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
Result<std::unique_ptr<KernelJob>> conv_call(const CallArgs& a, bool convolution,
                                             const KernelOptions& opt, const ConvEpilogue* ep) {
    if (!convolution) {
        auto p = read_params(a, 3, 4, 5, 6);
        if (!p.ok()) return p.error();
        return run_conv(a, p.value(), opt, ep);
    }
    auto t = a.boolean(6);
    if (!t.ok()) return t.error();
    if (t.value())
        return kernel_error("aten.convolution.default: transposed convolution is not supported",
                            "pt2lab runs Conv2d, not ConvTranspose2d");
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dim() != 4)
        return kernel_error(
            "aten.convolution.default: only 2-D convolution (4-D input) is supported, got " +
            x.value()->type_str());
    auto p = read_params(a, 3, 4, 5, 8);
    if (!p.ok()) return p.error();
    return run_conv(a, p.value(), opt, ep);
}

} // namespace

Result<std::unique_ptr<KernelJob>> job_conv2d(const CallArgs& a, const KernelOptions& opt) {
    return conv_call(a, false, opt, nullptr);
}

Result<std::unique_ptr<KernelJob>> job_convolution(const CallArgs& a, const KernelOptions& opt) {
    return conv_call(a, true, opt, nullptr);
}

Result<Value> kernel_conv2d(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_conv2d(a, opt));
}

Result<Value> kernel_convolution(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_convolution(a, opt));
}

Result<std::unique_ptr<KernelJob>> conv_with_epilogue_job(const CallArgs& a, bool convolution,
                                                          const ConvEpilogue& ep,
                                                          const KernelOptions& opt) {
    if (!opt.fast_conv)
        return kernel_error("conv2d: an epilogue needs the fast conv (KernelOptions::fast_conv)");
    return conv_call(a, convolution, opt, &ep);
}

Result<Value> conv_with_epilogue(const CallArgs& a, bool convolution, const ConvEpilogue& ep,
                                 const KernelOptions& opt) {
    return job_value(conv_with_epilogue_job(a, convolution, ep, opt));
}

} // namespace pt2lab
