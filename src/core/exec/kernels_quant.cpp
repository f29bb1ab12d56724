// quantized_decomposed quantize/dequantize (per tensor and per channel),
// evaluated exactly as torch.ao's _decomposed.py does in float32:
//   q  = clamp(round_half_even(x * float(1.0 / scale)) + zero_point, quant_min,
//   quant_max).to(dtype) dq = (float(q) - zero_point) * float(scale)
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "exec/kernels.h"
#include "exec/simd.h"
#include "util/checked.h"

namespace pt2lab {

namespace {

Status check_range(const char* op, ScalarType dtype, int64_t qmin, int64_t qmax) {
    int64_t lo, hi;
    if (dtype == ScalarType::Byte)
        lo = 0, hi = 255;
    else if (dtype == ScalarType::Char)
        lo = -128, hi = 127;
    else if (dtype == ScalarType::Int)
        lo = INT32_MIN, hi = INT32_MAX;
    else
        return kernel_error(std::string(op) + ": dtype torch." +
                            std::string(scalar_type_name(dtype)) +
                            " is not a quantized dtype (uint8, int8, int32)");
    if (qmin < lo || qmax > hi || qmin > qmax)
        return kernel_error(std::string(op) + ": quant_min " + std::to_string(qmin) +
                            " / quant_max " + std::to_string(qmax) + " are outside torch." +
                            std::string(scalar_type_name(dtype)) + "'s range [" +
                            std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return {};
}

float quantize_one(float x, float inv_scale, int64_t zp, int64_t qmin, int64_t qmax) {
    float r = std::nearbyint(x * inv_scale) + static_cast<float>(zp);
    if (std::isnan(r)) return static_cast<float>(qmin);
    return std::fmin(std::fmax(r, static_cast<float>(qmin)), static_cast<float>(qmax));
}

typedef int32_t i32x4 __attribute__((vector_size(16), aligned(4)));
typedef int16_t i16x8 __attribute__((vector_size(16), aligned(2)));
// N lanes of the quantized type T (int8 or uint8), read and written unaligned.
template <class T, int N> struct Lanes {
    typedef T type __attribute__((vector_size(N * sizeof(T)), aligned(1)));
};
template <class T> using lanes4 = typename Lanes<T, 4>::type;
template <class T> using lanes16 = typename Lanes<T, 16>::type;

// y[k] = quantize_one(x[k]) for n elements of the quantized type T (uint8 or int8), four
// lanes at a time with the same bits. t = x * inv is clamped first to [qmin - zp, qmax - zp]
// (NaN to the low end, as quantize_one does): rounding commutes with a clamp whose ends are
// integers, and |t| <= 2^22 then, where (t + 1.5 * 2^23) - 1.5 * 2^23 is t rounded half to
// even (float's spacing is 1 there), nearbyint's result in the default rounding mode. One
// libm nearbyint call per element was 60 % of a converted MobileNet v2's forward.
template <class T>
void quantize_run(const float* x, T* y, int64_t n, float inv, int64_t zp, int64_t qmin,
                  int64_t qmax) {
    const float lo = static_cast<float>(qmin - zp), hi = static_cast<float>(qmax - zp);
    const float magic = 12582912.0f, z = static_cast<float>(zp);
    const f32x4 lo4 = {lo, lo, lo, lo}, hi4 = {hi, hi, hi, hi}, inv4 = {inv, inv, inv, inv};
    const f32x4 magic4 = {magic, magic, magic, magic}, z4 = {z, z, z, z};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        f32x4 t = load4(x + k) * inv4;
        t = t > lo4 ? t : lo4;
        t = t < hi4 ? t : hi4;
        const f32x4 r = ((t + magic4) - magic4) + z4;
        const lanes4<T> q = __builtin_convertvector(__builtin_convertvector(r, i32x4), lanes4<T>);
        std::memcpy(y + k, &q, sizeof q);
    }
    for (; k < n; ++k) {
        float t = x[k] * inv;
        t = t > lo ? t : lo;
        t = t < hi ? t : hi;
        y[k] = static_cast<T>(((t + magic) - magic) + z);
    }
}

// quantize_run applies where its clamp ends are within float's exact integers near zero.
bool quantize_lanes_apply(int64_t zp, int64_t qmin, int64_t qmax) {
    constexpr int64_t kLimit = int64_t{1} << 22;
    return std::llabs(qmin - zp) <= kLimit && std::llabs(qmax - zp) <= kLimit;
}

// y[k] = (float(x[k]) - z) * s, sixteen values a load, four lanes at a time (the same
// float operations). Widening sixteen bytes through 16-bit lanes is a few instructions
// where four bytes alone went one lane at a time (SSE2: 2x natively; WebAssembly: 10-20 %).
template <class T> void dequantize_run(const T* x, float* y, int64_t n, float z, float s) {
    const f32x4 z4 = {z, z, z, z}, s4 = {s, s, s, s};
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        lanes16<T> q;
        std::memcpy(&q, x + k, sizeof q);
        const i16x8 lo =
            __builtin_convertvector(__builtin_shufflevector(q, q, 0, 1, 2, 3, 4, 5, 6, 7), i16x8);
        const i16x8 hi = __builtin_convertvector(
            __builtin_shufflevector(q, q, 8, 9, 10, 11, 12, 13, 14, 15), i16x8);
        const i32x4 w[4] = {
            __builtin_convertvector(__builtin_shufflevector(lo, lo, 0, 1, 2, 3), i32x4),
            __builtin_convertvector(__builtin_shufflevector(lo, lo, 4, 5, 6, 7), i32x4),
            __builtin_convertvector(__builtin_shufflevector(hi, hi, 0, 1, 2, 3), i32x4),
            __builtin_convertvector(__builtin_shufflevector(hi, hi, 4, 5, 6, 7), i32x4)};
        for (int j = 0; j < 4; ++j)
            store4(y + k + 4 * j, (__builtin_convertvector(w[j], f32x4) - z4) * s4);
    }
    for (; k + 4 <= n; k += 4) {
        lanes4<T> q;
        std::memcpy(&q, x + k, sizeof q);
        store4(y + k, (__builtin_convertvector(q, f32x4) - z4) * s4);
    }
    for (; k < n; ++k) y[k] = (static_cast<float>(x[k]) - z) * s;
}

struct QArgs {
    std::shared_ptr<Tensor> x;
    int64_t qmin, qmax;
    ScalarType dtype;
};

Result<QArgs> read_q(const CallArgs& a, const char* op, size_t qmin_at) {
    QArgs q;
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    q.x = x.value();
    auto lo = a.integer(qmin_at), hi = a.integer(qmin_at + 1);
    auto dt = a.dtype(qmin_at + 2);
    if (!lo.ok()) return lo.error();
    if (!hi.ok()) return hi.error();
    if (!dt.ok()) return dt.error();
    q.qmin = lo.value(), q.qmax = hi.value(), q.dtype = dt.value();
    if (Status s = check_range(op, q.dtype, q.qmin, q.qmax); !s.ok()) return s.error();
    return q;
}

// Moves `axis` to the front conceptually: element k belongs to channel (k / inner) % channels.
Result<std::pair<int64_t, int64_t>> channel_layout(const Tensor& x, int64_t axis, const char* op) {
    if (x.dim() == 0)
        return kernel_error(std::string(op) + ": a 0-dim tensor has no channel axis " +
                            std::to_string(axis));
    auto w = wrap_dim(axis, x.dim());
    if (!w.ok()) return kernel_error(std::string(op) + ": " + w.error().message);
    int64_t inner = 1;
    for (int64_t d = w.value() + 1; d < x.dim(); ++d) inner *= x.sizes[static_cast<size_t>(d)];
    return std::make_pair(x.sizes[static_cast<size_t>(w.value())], inner);
}

} // namespace

// quantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype)
Result<Value> kernel_quantize_per_tensor(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "quantized_decomposed.quantize_per_tensor.default";
    auto q = read_q(a, op, 3);
    if (!q.ok()) return q.error();
    if (q.value().x->dtype != ScalarType::Float)
        return kernel_error(std::string(op) +
                            ": Expecting input to have dtype torch.float32, but got dtype: torch." +
                            std::string(scalar_type_name(q.value().x->dtype)));
    auto scale = a.real(1);
    auto zp = a.integer(2);
    if (!scale.ok()) return scale.error();
    if (!zp.ok()) return zp.error();
    const float inv = static_cast<float>(1.0 / scale.value());
    const Tensor& x = *q.value().x;
    auto yr = new_unfilled_tensor(opt, q.value().dtype, x.sizes, op); // every element written
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    const int64_t n = x.numel(), lo = q.value().qmin, hi = q.value().qmax;
    const bool lanes = quantize_lanes_apply(zp.value(), lo, hi);
    if (y.dtype == ScalarType::Char && lanes)
        quantize_run(x.f32(), y.data<int8_t>(), n, inv, zp.value(), lo, hi);
    else if (y.dtype == ScalarType::Byte && lanes)
        quantize_run(x.f32(), y.data<uint8_t>(), n, inv, zp.value(), lo, hi);
    else
        for (int64_t k = 0; k < n; ++k) y.set(k, quantize_one(x.f32()[k], inv, zp.value(), lo, hi));
    return Value::of(yr.take());
}

// dequantize_per_tensor(input, scale, zero_point, quant_min, quant_max, dtype, *, out_dtype=None)
Result<Value> kernel_dequantize_per_tensor(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "quantized_decomposed.dequantize_per_tensor.default";
    auto q = read_q(a, op, 3);
    if (!q.ok()) return q.error();
    if (q.value().x->dtype != q.value().dtype)
        return kernel_error(std::string(op) + ": Expecting input to have dtype torch." +
                            std::string(scalar_type_name(q.value().dtype)) +
                            ", but got dtype: torch." +
                            std::string(scalar_type_name(q.value().x->dtype)));
    auto scale = a.real(1);
    auto zp = a.integer(2);
    if (!scale.ok()) return scale.error();
    if (!zp.ok()) return zp.error();
    const float s = static_cast<float>(scale.value()), z = static_cast<float>(zp.value());
    const Tensor& x = *q.value().x;
    auto yr = new_unfilled_tensor(opt, ScalarType::Float, x.sizes, op); // every element written
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    const int64_t n = x.numel();
    if (x.dtype == ScalarType::Char)
        dequantize_run(x.data<int8_t>(), y.f32(), n, z, s);
    else if (x.dtype == ScalarType::Byte)
        dequantize_run(x.data<uint8_t>(), y.f32(), n, z, s);
    else
        for (int64_t k = 0; k < n; ++k) y.f32()[k] = (static_cast<float>(x.get(k)) - z) * s;
    return Value::of(yr.take());
}

// quantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype)
Result<Value> kernel_quantize_per_channel(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "quantized_decomposed.quantize_per_channel.default";
    auto q = read_q(a, op, 4);
    if (!q.ok()) return q.error();
    auto scales = a.tensor(1), zps = a.tensor(2);
    auto axis = a.integer(3);
    if (!scales.ok()) return scales.error();
    if (!zps.ok()) return zps.error();
    if (!axis.ok()) return axis.error();
    const Tensor& x = *q.value().x;
    if (x.dtype != ScalarType::Float)
        return kernel_error(std::string(op) + ": expects a float32 input");
    auto layout = channel_layout(x, axis.value(), op);
    if (!layout.ok()) return layout.error();
    auto [channels, inner] = layout.value();
    if (scales.value()->numel() != channels || zps.value()->numel() != channels)
        return kernel_error(std::string(op) + ": " + std::to_string(channels) +
                            " channels but scales " + scales.value()->type_str() +
                            " and zero_points " + zps.value()->type_str());
    auto yr = new_tensor(opt, q.value().dtype, x.sizes, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    for (int64_t k = 0; k < x.numel(); ++k) {
        int64_t c = (k / inner) % channels;
        const float inv = static_cast<float>(1.0 / scales.value()->get(c));
        y.set(k, quantize_one(x.f32()[k], inv, saturate_cast<int64_t>(zps.value()->get(c)),
                              q.value().qmin, q.value().qmax));
    }
    return Value::of(yr.take());
}

// dequantize_per_channel(input, scales, zero_points?, axis, quant_min, quant_max, dtype, *,
// out_dtype=None)
Result<Value> kernel_dequantize_per_channel(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "quantized_decomposed.dequantize_per_channel.default";
    auto q = read_q(a, op, 4);
    if (!q.ok()) return q.error();
    auto scales = a.tensor(1);
    auto zps = a.opt_tensor(2);
    auto axis = a.integer(3);
    if (!scales.ok()) return scales.error();
    if (!zps.ok()) return zps.error();
    if (!axis.ok()) return axis.error();
    const Tensor& x = *q.value().x;
    auto layout = channel_layout(x, axis.value(), op);
    if (!layout.ok()) return layout.error();
    auto [channels, inner] = layout.value();
    if (scales.value()->numel() != channels)
        return kernel_error(std::string(op) + ": " + std::to_string(channels) +
                            " channels but scales " + scales.value()->type_str());
    auto yr = new_tensor(opt, ScalarType::Float, x.sizes, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    for (int64_t k = 0; k < x.numel(); ++k) {
        int64_t c = (k / inner) % channels;
        float z = zps.value() ? static_cast<float>(zps.value()->get(c)) : 0.0f;
        y.f32()[k] =
            (static_cast<float>(x.get(k)) - z) * static_cast<float>(scales.value()->get(c));
    }
    return Value::of(yr.take());
}

} // namespace pt2lab
