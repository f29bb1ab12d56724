// 2-D convolution: the reference loop (double accumulation, the definition
// the tests check against PyTorch) and the conv2d / convolution kernels.
#include "exec/kernels.h"

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
    if (g <= 0) return kernel_error("conv2d: groups must be positive, got " + std::to_string(g));
    if (x.sizes[1] != w.sizes[1] * g)
        return kernel_error("conv2d: input " + x.type_str() + " has " + std::to_string(x.sizes[1]) +
                            " channels but weight " + w.type_str() + " with groups=" +
                            std::to_string(g) + " expects " + std::to_string(w.sizes[1] * g));
    if (w.sizes[0] % g != 0)
        return kernel_error("conv2d: " + std::to_string(w.sizes[0]) +
                            " output channels are not divisible by groups=" + std::to_string(g));
    if (b && (b->dim() != 1 || b->sizes[0] != w.sizes[0]))
        return kernel_error("conv2d: bias " + b->type_str() + " does not match " +
                            std::to_string(w.sizes[0]) + " output channels");
    for (int k = 0; k < 2; ++k)
        if (p.stride[k] <= 0 || p.dilation[k] <= 0 || p.padding[k] < 0)
            return kernel_error(
                "conv2d: stride and dilation must be positive and padding non-negative");
    int64_t oh =
        (x.sizes[2] + 2 * p.padding[0] - p.dilation[0] * (w.sizes[2] - 1) - 1) / p.stride[0] + 1;
    int64_t ow =
        (x.sizes[3] + 2 * p.padding[1] - p.dilation[1] * (w.sizes[3] - 1) - 1) / p.stride[1] + 1;
    if (oh <= 0 || ow <= 0)
        return kernel_error("conv2d: input " + x.type_str() +
                            " (padded) is smaller than the kernel " +
                            shape_str({w.sizes[2], w.sizes[3]}) + " with dilation " +
                            shape_str({p.dilation[0], p.dilation[1]}));
    return std::vector<int64_t>{x.sizes[0], w.sizes[0], oh, ow};
}

Result<Tensor> conv2d_reference(const Tensor& x, const Tensor& w, const Tensor* b,
                                const ConvParams& p) {
    auto shape = conv2d_output_shape(x, w, b, p);
    if (!shape.ok()) return shape.error();
    Tensor y = Tensor::empty(ScalarType::Float, shape.value());
    const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
    const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
    const int64_t OH = y.sizes[2], OW = y.sizes[3], G = p.groups, OG = O / G;
    const float* xd = x.f32(); // x: [N, C, H, W]
    const float* wd = w.f32(); // w: [O, C/G, KH, KW]
    float* yd = y.f32();       // y: [N, O, OH, OW]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o) {
            const int64_t g = o / OG;
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    double acc = b ? b->f32()[o] : 0.0;
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
    return y;
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

Result<Value> run_conv(const CallArgs& a, const ConvParams& p, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto w = a.tensor(1);
    if (!w.ok()) return w.error();
    auto b = a.opt_tensor(2);
    if (!b.ok()) return b.error();
    auto y = opt.fast_conv ? conv2d_fast(*x.value(), *w.value(), b.value().get(), p)
                           : conv2d_reference(*x.value(), *w.value(), b.value().get(), p);
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

} // namespace

// conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
Result<Value> kernel_conv2d(const CallArgs& a, const KernelOptions& opt) {
    auto p = read_params(a, 3, 4, 5, 6);
    if (!p.ok()) return p.error();
    return run_conv(a, p.value(), opt);
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
Result<Value> kernel_convolution(const CallArgs& a, const KernelOptions& opt) {
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
    return run_conv(a, p.value(), opt);
}

} // namespace pt2lab
