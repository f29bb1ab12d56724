// Activation kernels beyond relu: hardtanh, hardsigmoid, hardswish, sigmoid,
// tanh, silu, gelu, clamp and their in-place forms; dropout (identity in eval, refused
// in training: pt2lab does not reproduce torch's random masks).
#include <cmath>
#include <cstdint>

#include "exec/conv_epilogue.h"
#include "exec/kernels.h"
#include "exec/simd.h"

namespace pt2lab {

namespace {

// Not M_SQRT2 / M_PI: those are POSIX extensions some C libraries hide under -std=c++17.
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

// y = f(x) elementwise over a float32 tensor; `f` maps double -> double and the
// result is rounded to float32 once.
template <class F> Result<Value> unary_float(const CallArgs& a, const KernelOptions& opt, F&& f) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = a.schema().overload_str();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error(op + ": expected float32, got " + x.value()->type_str());
    auto yr = new_tensor(opt, ScalarType::Float, x.value()->sizes, op);
    if (!yr.ok()) return yr.error();
    const Tensor& xt = *x.value(); // read only: a non-const access un-shares
    const float* xd = xt.f32();    // x: [any]
    float* yd = yr.value().f32();  // y: same shape
    for (int64_t k = 0; k < yr.value().numel(); ++k) yd[k] = static_cast<float>(f(double(xd[k])));
    return Value::of(yr.take());
}

// In place: computes the functional kernel, then writes it into self (the same
// tensor object, so every alias of self sees the new values) and returns self.
Result<Value> in_place(const CallArgs& a, Result<Value> y) {
    if (!y.ok()) return y;
    a[0].tensor->storage = std::move(y.value().tensor->storage);
    return a[0];
}

// clamp(v, lo, hi) with NaN passing through (ATen's clamp/hardtanh).
double clamp_nan(double v, double lo, double hi) {
    if (std::isnan(v)) return v;
    return v < lo ? lo : (v > hi ? hi : v);
}

// y[k] = clamp(x[k], lo, hi), NaN passing through (both compares are false for
// NaN); y may be x (in place). Float compares: the same result as clamp_nan on
// the values widened to double.
// Four lanes at a time as vector selects (V8 compiles scalar float selects to
// branches, which mispredict on random signs: ~10x slower on MobileNet's ReLU6).
// The arithmetic is conv_epilogue.h's, which a fused conv applies instead.
void hardtanh_loop(const float* x, float* y, int64_t n, float lo, float hi) {
    const f32x4 lo4 = {lo, lo, lo, lo}, hi4 = {hi, hi, hi, hi};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) store4(y + k, clamp4(load4(x + k), lo4, hi4));
    for (; k < n; ++k) y[k] = clamp1(x[k], lo, hi);
}

// A float32 kernel made of one loop, loop(x, y, n) with y possibly x: its result in a
// new tensor, or in place (it writes self, which every alias sees, and returns it).
template <class Loop>
Result<Value> float_loop_kernel(const CallArgs& a, const KernelOptions& opt, bool in_place,
                                Loop&& loop) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = a.schema().overload_str();
    const Tensor& t = *x.value();
    if (t.dtype != ScalarType::Float)
        return kernel_error(op + ": expected float32, got " + t.type_str());
    if (in_place) {
        if (Status s = charge_work(opt, t.numel(), op); !s.ok()) return s.error();
        float* d = a[0].tensor->f32(); // a write: un-shares bytes shared with the program
        loop(d, d, t.numel());
        return a[0];
    }
    auto yr = new_tensor(opt, ScalarType::Float, t.sizes, op);
    if (!yr.ok()) return yr.error();
    loop(t.f32(), yr.value().f32(), t.numel()); // x, y: [any]
    return Value::of(yr.take());
}

// hardtanh (in_place false) or hardtanh_ (true: writes self, which every alias sees).
Result<Value> hardtanh_impl(const CallArgs& a, const KernelOptions& opt, bool in_place) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto lo = a.real(1), hi = a.real(2);
    if (!lo.ok()) return lo.error();
    if (!hi.ok()) return hi.error();
    const float l = static_cast<float>(lo.value()), h = static_cast<float>(hi.value());
    return float_loop_kernel(a, opt, in_place, [l, h](const float* xs, float* ys, int64_t n) {
        hardtanh_loop(xs, ys, n, l, h);
    });
}

double hardsigmoid_of(double v) {
    return clamp_nan(v + 3.0, 0.0, 6.0) / 6.0;
}

// float32 as ATen computes it: x * min(max(x + 3, 0), 6) / 6
double hardswish_of(double v) {
    float x = static_cast<float>(v);
    float r = x + 3.0f;
    r = std::isnan(r) ? r : (r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r));
    return double(x * r / 6.0f);
}

// y = hardswish(x) over n floats, four lanes at a time: hardswish_of's float arithmetic
// (x + 3, clamped with NaN passing through, times x, over 6), so the same bits; it was
// 44 % of MobileNet v3-small's forward one double at a time. y may be x.
void hardswish_loop(const float* x, float* y, int64_t n) {
    const f32x4 zero = {0, 0, 0, 0}, three = {3, 3, 3, 3}, six = {6, 6, 6, 6};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        const f32x4 v = load4(x + k);
        store4(y + k, v * clamp4(v + three, zero, six) / six);
    }
    for (; k < n; ++k) y[k] = static_cast<float>(hardswish_of(x[k]));
}

// hardswish (in_place false) or hardswish_ (true: writes self, which every alias sees).
Result<Value> hardswish_impl(const CallArgs& a, const KernelOptions& opt, bool in_place) {
    return float_loop_kernel(a, opt, in_place, hardswish_loop);
}

double sigmoid_of(double v) {
    return 1.0 / (1.0 + std::exp(-v));
}

// The fast kernels' sigmoid and silu (KernelOptions::fast_conv, "fast kernels" in the
// page): float32, four lanes at a time, as ATen's vectorized CPU kernels compute them
// (1 / (1 + e^-x) and x / (1 + e^-x) in float), with e^x from exp4. The reference
// kernels above take each value through double and libm's exp: in WebAssembly a
// software call per element, which made silu half of EfficientNet-B0's forward.
typedef int32_t i32x4 __attribute__((vector_size(16), aligned(4)));

f32x4 splat4(float v) {
    return f32x4{v, v, v, v};
}

// e^x for four floats: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so r is
// exact), e^r by Cephes' degree-6 polynomial for expf, 2^n put into the exponent bits.
// Within 2 ulp of the correctly rounded value over the normal range. Below -87.3 (where
// e^x is no longer a normal float) it gives 2^-126 times e^r's rounding; from 88.72 up,
// n = 128 makes the exponent field all ones: +inf. NaN stays NaN. Only + - * and
// compares: the same bits natively and in WebAssembly (-ffp-contract=off).
f32x4 exp4(f32x4 x) {
    x = clamp4(x, splat4(-87.3365447504f), splat4(89.0f));
    const f32x4 fx = x * splat4(1.44269504088896341f) + splat4(0.5f);
    i32x4 n = __builtin_convertvector(fx, i32x4); // toward zero ...
    n += __builtin_convertvector(n, f32x4) > fx;  // ... then down: floor(fx) (true is -1)
    const f32x4 nf = __builtin_convertvector(n, f32x4);
    const f32x4 r = x - nf * splat4(0.693359375f) - nf * splat4(-2.12194440e-4f);
    const f32x4 r2 = r * r;
    f32x4 p = splat4(1.9875691500e-4f);
    p = p * r + splat4(1.3981999507e-3f);
    p = p * r + splat4(8.3334519073e-3f);
    p = p * r + splat4(4.1665795894e-2f);
    p = p * r + splat4(1.6666665459e-1f);
    p = p * r + splat4(5.0000001201e-1f);
    p = p * r2 + r + splat4(1.0f);
    const i32x4 bits = (n + 127) << 23;
    f32x4 scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

// y = sigmoid(x) (silu false) or silu(x) over n floats; y may be x.
void sigmoid_loop(const float* x, float* y, int64_t n, bool silu) {
    const f32x4 one = splat4(1.0f);
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        const f32x4 v = load4(x + k);
        const f32x4 d = one + exp4(-v);
        store4(y + k, (silu ? v : one) / d);
    }
    if (k == n) return;
    float tail[4] = {0, 0, 0, 0};
    for (int64_t i = k; i < n; ++i) tail[i - k] = x[i];
    const f32x4 v = load4(tail);
    f32x4 out = (silu ? v : one) / (one + exp4(-v));
    store4(tail, out);
    for (int64_t i = k; i < n; ++i) y[i] = tail[i - k];
}

// sigmoid / silu on the fast kernels; in place writes self (which every alias sees).
Result<Value> sigmoid_fast(const CallArgs& a, const KernelOptions& opt, bool silu, bool in_place) {
    return float_loop_kernel(a, opt, in_place, [silu](const float* xs, float* ys, int64_t n) {
        sigmoid_loop(xs, ys, n, silu);
    });
}

Result<Value> dropout_impl(const CallArgs& a, const KernelOptions& opt, bool inplace) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto p = a.real(1);
    if (!p.ok()) return p.error();
    auto train = a.boolean(2);
    if (!train.ok()) return train.error();
    const std::string op = a.schema().overload_str();
    if (p.value() < 0.0 || p.value() > 1.0)
        return kernel_error(op + ": dropout probability has to be between 0 and 1, but got " +
                            std::to_string(p.value()));
    if (train.value() && p.value() != 0.0)
        return kernel_error(
            op + ": dropout in training mode (train=True, p=" + std::to_string(p.value()) +
                ") draws a random mask, and pt2lab does not reproduce torch's "
                "random numbers",
            "export the model after model.eval(), where dropout is the identity");
    if (inplace) return a[0]; // the identity, in place: self unchanged
    auto y = copy_tensor(opt, *x.value(), op);
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

} // namespace

// hardtanh(self, min_val=-1, max_val=1): clamp to [min_val, max_val] (ReLU6: [0, 6])
Result<Value> kernel_hardtanh(const CallArgs& a, const KernelOptions& opt) {
    return hardtanh_impl(a, opt, false);
}
Result<Value> kernel_hardtanh_(const CallArgs& a, const KernelOptions& opt) {
    return hardtanh_impl(a, opt, true);
}

// hardsigmoid(self): relu6(x + 3) / 6
Result<Value> kernel_hardsigmoid(const CallArgs& a, const KernelOptions& opt) {
    return unary_float(a, opt, hardsigmoid_of);
}

// hardswish(self): x * relu6(x + 3) / 6
Result<Value> kernel_hardswish(const CallArgs& a, const KernelOptions& opt) {
    return hardswish_impl(a, opt, false);
}
Result<Value> kernel_hardswish_(const CallArgs& a, const KernelOptions& opt) {
    return hardswish_impl(a, opt, true);
}

// sigmoid(self): 1 / (1 + exp(-x))
Result<Value> kernel_sigmoid(const CallArgs& a, const KernelOptions& opt) {
    if (opt.fast_conv) return sigmoid_fast(a, opt, false, false);
    return unary_float(a, opt, sigmoid_of);
}

// tanh(self) (the LSTM and GRU cells at Core ATen, MaxViT)
Result<Value> kernel_tanh(const CallArgs& a, const KernelOptions& opt) {
    return unary_float(a, opt, [](double v) { return std::tanh(v); });
}

// silu(self): x * sigmoid(x)
Result<Value> kernel_silu(const CallArgs& a, const KernelOptions& opt) {
    if (opt.fast_conv) return sigmoid_fast(a, opt, true, false);
    return unary_float(a, opt, [](double v) { return v * sigmoid_of(v); });
}
Result<Value> kernel_silu_(const CallArgs& a, const KernelOptions& opt) {
    if (opt.fast_conv) return sigmoid_fast(a, opt, true, true);
    return in_place(a, kernel_silu(a, opt));
}

// gelu(self, *, approximate="none"): x * Phi(x) with the exact erf, or the tanh form
Result<Value> kernel_gelu(const CallArgs& a, const KernelOptions& opt) {
    const Value& mode = a[1];
    std::string approximate = mode.kind == Value::Kind::String ? mode.s : "none";
    if (approximate == "none")
        return unary_float(a, opt,
                           [](double v) { return 0.5 * v * (1.0 + std::erf(v * kInvSqrt2)); });
    if (approximate == "tanh")
        return unary_float(a, opt, [](double v) {
            const double k = kSqrt2OverPi;
            return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
        });
    return kernel_error("aten.gelu.default: approximate argument must be either none or tanh.");
}

// clamp(self, min=None, max=None); at least one bound
Result<Value> kernel_clamp(const CallArgs& a, const KernelOptions& opt) {
    const bool has_lo = a[1].is_number(), has_hi = a[2].is_number();
    if (!has_lo && !has_hi)
        return kernel_error("aten.clamp.default: At least one of 'min' or 'max' must not be None");
    const double lo = has_lo ? double(static_cast<float>(a[1].number())) : -INFINITY;
    const double hi = has_hi ? double(static_cast<float>(a[2].number())) : INFINITY;
    // torch: min then max, so max wins when min > max
    return unary_float(a, opt, [&](double v) {
        if (std::isnan(v)) return v;
        double r = v < lo ? lo : v;
        return r > hi ? hi : r;
    });
}

// dropout(input, p, train): the identity when not training
Result<Value> kernel_dropout(const CallArgs& a, const KernelOptions& opt) {
    return dropout_impl(a, opt, false);
}
Result<Value> kernel_dropout_(const CallArgs& a, const KernelOptions& opt) {
    return dropout_impl(a, opt, true);
}

} // namespace pt2lab
