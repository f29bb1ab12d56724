// Reductions and pooling: mean, max_pool2d, adaptive_avg_pool2d.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

Result<Tensor> float_input(const CallArgs& a, const char* op) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error(std::string(op) + ": expected float32, got " + x.value()->type_str());
    return *x.value();
}

// Mean over `dims` (already wrapped, sorted, unique); double accumulation.
Tensor mean_over(const Tensor& x, const std::vector<bool>& reduce, bool keepdim) {
    std::vector<int64_t> out_sizes, kept;
    for (int64_t d = 0; d < x.dim(); ++d) {
        if (reduce[static_cast<size_t>(d)]) {
            if (keepdim) out_sizes.push_back(1);
        } else {
            out_sizes.push_back(x.sizes[static_cast<size_t>(d)]);
        }
    }
    Tensor y = Tensor::empty(ScalarType::Float, out_sizes);
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
    for (int64_t k = 0; k < y.numel(); ++k)
        y.f32()[k] =
            static_cast<float>(count ? acc[static_cast<size_t>(k)] / double(count) : std::nan(""));
    return y;
}

} // namespace

// mean.dim(self, dim?, keepdim=False, *, dtype=None)
Result<Value> kernel_mean_dim(const CallArgs& a, const KernelOptions&) {
    auto x = float_input(a, "aten.mean.dim");
    if (!x.ok()) return x.error();
    std::vector<bool> reduce(x.value().sizes.size(), false);
    bool all = a[1].kind == Value::Kind::None;
    if (!all) {
        auto dims = a.ints(1);
        if (!dims.ok()) return dims.error();
        if (dims.value().empty()) all = true;
        for (int64_t d : dims.value()) {
            auto w = wrap_dim(d, x.value().dim());
            if (!w.ok()) return kernel_error("aten.mean.dim: " + w.error().message);
            if (reduce[static_cast<size_t>(w.value())])
                return kernel_error("aten.mean.dim: dim " + std::to_string(w.value()) +
                                    " appears multiple times");
            reduce[static_cast<size_t>(w.value())] = true;
        }
    }
    if (all) std::fill(reduce.begin(), reduce.end(), true);
    auto keep = a.boolean(2);
    if (!keep.ok()) return keep.error();
    return Value::of(mean_over(x.value(), reduce, keep.value()));
}

// mean(self, *, dtype=None): mean of all elements, 0-dim result
Result<Value> kernel_mean(const CallArgs& a, const KernelOptions&) {
    auto x = float_input(a, "aten.mean.default");
    if (!x.ok()) return x.error();
    return Value::of(mean_over(x.value(), std::vector<bool>(x.value().sizes.size(), true), false));
}

namespace {
// max_pool2d(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False); indices
// optional
Result<Value> max_pool(const CallArgs& a, bool with_indices) {
    const char* op =
        with_indices ? "aten.max_pool2d_with_indices.default" : "aten.max_pool2d.default";
    auto x = float_input(a, op);
    if (!x.ok()) return x.error();
    const Tensor& in = x.value();
    if (in.dim() != 4 && in.dim() != 3)
        return kernel_error(std::string(op) + ": expected a 3-D or 4-D input, got " +
                            in.type_str());
    auto k = a.ints(1, 2);
    if (!k.ok()) return k.error();
    auto s = a.ints(2);
    if (!s.ok()) return s.error();
    std::vector<int64_t> stride = s.value().empty() ? k.value() : s.value();
    if (stride.size() == 1) stride.assign(2, stride[0]);
    auto p = a.ints(3, 2);
    if (!p.ok()) return p.error();
    auto d = a.ints(4, 2);
    if (!d.ok()) return d.error();
    auto ceil = a.boolean(5);
    if (!ceil.ok()) return ceil.error();
    const int64_t batch = in.dim() == 4 ? in.sizes[0] * in.sizes[1] : in.sizes[0];
    const int64_t H = in.size(-2), W = in.size(-1);
    int64_t out[2];
    for (int i = 0; i < 2; ++i) {
        const int64_t len = i == 0 ? H : W;
        const int64_t kk = k.value()[static_cast<size_t>(i)], st = stride[static_cast<size_t>(i)];
        const int64_t pd = p.value()[static_cast<size_t>(i)],
                      dl = d.value()[static_cast<size_t>(i)];
        if (kk <= 0 || st <= 0 || dl <= 0 || pd < 0)
            return kernel_error(std::string(op) + ": kernel, stride and dilation must be positive");
        if (pd > kk / 2)
            return kernel_error(
                std::string(op) +
                ": padding should be at most half of the kernel size, got padding " +
                std::to_string(pd) + " and kernel " + std::to_string(kk));
        int64_t num = len + 2 * pd - dl * (kk - 1) - 1 + (ceil.value() ? st - 1 : 0);
        int64_t o = num / st + 1;
        if (ceil.value() && (o - 1) * st >= len + pd)
            --o; // last window must start inside the input
        if (o <= 0)
            return kernel_error(std::string(op) + ": output size is too small for input " +
                                in.type_str());
        out[i] = o;
    }
    std::vector<int64_t> out_sizes = in.sizes;
    out_sizes[out_sizes.size() - 2] = out[0];
    out_sizes[out_sizes.size() - 1] = out[1];
    Tensor y = Tensor::empty(ScalarType::Float, out_sizes);
    Tensor idx = Tensor::empty(ScalarType::Long, out_sizes);
    for (int64_t b = 0; b < batch; ++b) { // x: [B, H, W] -> y: [B, OH, OW]
        const float* xs = in.f32() + b * H * W;
        for (int64_t oh = 0; oh < out[0]; ++oh)
            for (int64_t ow = 0; ow < out[1]; ++ow) {
                float best = -std::numeric_limits<float>::infinity();
                int64_t arg = -1;
                for (int64_t i = 0; i < k.value()[0]; ++i) {
                    int64_t ih = oh * stride[0] - p.value()[0] + i * d.value()[0];
                    if (ih < 0 || ih >= H) continue;
                    for (int64_t j = 0; j < k.value()[1]; ++j) {
                        int64_t iw = ow * stride[1] - p.value()[1] + j * d.value()[1];
                        if (iw < 0 || iw >= W) continue;
                        float v = xs[ih * W + iw];
                        if (v > best || std::isnan(v) || arg < 0) {
                            best = v;
                            arg = ih * W + iw;
                            if (std::isnan(v)) goto done;
                        }
                    }
                }
            done:
                y.f32()[(b * out[0] + oh) * out[1] + ow] = best;
                idx.data<int64_t>()[(b * out[0] + oh) * out[1] + ow] = arg;
            }
    }
    if (!with_indices) return Value::of(std::move(y));
    return Value::tuple({Value::of(std::move(y)), Value::of(std::move(idx))});
}
} // namespace

Result<Value> kernel_max_pool2d(const CallArgs& a, const KernelOptions&) {
    return max_pool(a, false);
}
Result<Value> kernel_max_pool2d_with_indices(const CallArgs& a, const KernelOptions&) {
    return max_pool(a, true);
}

// adaptive_avg_pool2d(self, output_size): window i covers [floor(i*H/OH), ceil((i+1)*H/OH))
Result<Value> kernel_adaptive_avg_pool2d(const CallArgs& a, const KernelOptions&) {
    auto x = float_input(a, "aten.adaptive_avg_pool2d.default");
    if (!x.ok()) return x.error();
    const Tensor& in = x.value();
    if (in.dim() != 4 && in.dim() != 3)
        return kernel_error("aten.adaptive_avg_pool2d.default: expected a 3-D or 4-D input, got " +
                            in.type_str());
    auto os = a.ints(1, 2);
    if (!os.ok()) return os.error();
    const int64_t OH = os.value()[0], OW = os.value()[1];
    if (OH <= 0 || OW <= 0)
        return kernel_error("aten.adaptive_avg_pool2d.default: output size must be positive");
    const int64_t H = in.size(-2), W = in.size(-1), batch = in.numel() / (H * W);
    std::vector<int64_t> out_sizes = in.sizes;
    out_sizes[out_sizes.size() - 2] = OH;
    out_sizes[out_sizes.size() - 1] = OW;
    Tensor y = Tensor::empty(ScalarType::Float, out_sizes);
    for (int64_t b = 0; b < batch; ++b) // x: [B, H, W] -> y: [B, OH, OW]
        for (int64_t oh = 0; oh < OH; ++oh) {
            const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
            for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
                double sum = 0.0;
                for (int64_t i = h0; i < h1; ++i)
                    for (int64_t j = w0; j < w1; ++j) sum += in.f32()[(b * H + i) * W + j];
                y.f32()[(b * OH + oh) * OW + ow] =
                    static_cast<float>(sum / double((h1 - h0) * (w1 - w0)));
            }
        }
    return Value::of(std::move(y));
}

} // namespace pt2lab
