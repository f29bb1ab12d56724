// What a fused convolution does to each output after its sum and bias: the eval
// batch norm that follows it in the graph (y * alpha[o] + beta[o], with bn_eval's
// coefficients) and then the activation after that (hardtanh's clamp or relu).
// The arithmetic is defined here once: bn_eval, hardtanh_loop and relu_loop call
// the same functions, so a conv with an epilogue writes the same bits as the
// conv, batch_norm and activation kernels run one after another (the tests
// compare them bit for bit). The interpreter fuses a conv this way only in runs
// that keep no intermediate values (interpreter.h, RunOptions::keep_values).
#pragma once

#include <cstdint>

#include "exec/simd.h"

namespace pt2lab {

enum class ConvAct : uint8_t {
    None,
    Clamp, // hardtanh(lo, hi): NaN passes through
    Relu,  // max(x, 0): NaN passes through, -0 becomes +0
};

// y = x * alpha + beta (float32, uncontracted: the build has -ffp-contract=off).
inline float scale_shift1(float x, float alpha, float beta) {
    return x * alpha + beta;
}
inline f32x4 scale_shift4(f32x4 x, f32x4 alpha, f32x4 beta) {
    return x * alpha + beta;
}
// hardtanh: lo > v ? lo : v, then > hi ? hi (both compares false for NaN).
inline float clamp1(float v, float lo, float hi) {
    const float r = lo > v ? lo : v;
    return r > hi ? hi : r;
}
// In WebAssembly the two selects are f32x4.pmax / pmin, which are defined as
// exactly these selects (pmax(a, b) = a < b ? b : a) and are one instruction
// each in V8 (maxps / minps); the compiler emits compare and bitselect for the
// plain form, which measured 15 % slower on MobileNet's depthwise convs.
inline f32x4 clamp4(f32x4 v, f32x4 lo, f32x4 hi) {
#ifdef __wasm_simd128__
    return __builtin_wasm_pmin_f32x4(__builtin_wasm_pmax_f32x4(v, lo), hi);
#else
    const f32x4 r = lo > v ? lo : v;
    return r > hi ? hi : r;
#endif
}
// relu: v > 0 ? v : +0, then NaN back (two selects, no branch).
inline float relu1(float v) {
    const float r = v > 0.0f ? v : 0.0f;
    return v != v ? v : r;
}
inline f32x4 relu4(f32x4 v) {
    const f32x4 zero = {0, 0, 0, 0};
#ifdef __wasm_simd128__
    const f32x4 r = __builtin_wasm_pmax_f32x4(zero, v); // 0 < v ? v : 0, as clamp4
#else
    const f32x4 r = v > zero ? v : zero;
#endif
    return v != v ? v : r;
}

// A conv's epilogue for all its output channels.
struct ConvEpilogue {
    const float* alpha = nullptr; // [O]: the batch norm's scale, null when none follows
    const float* beta = nullptr;  // [O]: its shift
    ConvAct act = ConvAct::None;
    float lo = 0.0f, hi = 0.0f; // Clamp's bounds
};

// The epilogue of channels o0, o0 + 1, ... as channels 0, 1, ... (one group's GEMM).
inline ConvEpilogue shifted(const ConvEpilogue* e, int64_t o0) {
    if (!e) return {};
    ConvEpilogue s = *e;
    if (s.alpha) s.alpha += o0, s.beta += o0;
    return s;
}

// The epilogue of one output channel, splatted for the vector loops.
struct ChannelEpilogue {
    bool bn = false;
    ConvAct act = ConvAct::None;
    float alpha = 1.0f, beta = 0.0f, lo = 0.0f, hi = 0.0f;
    f32x4 alpha4 = {1, 1, 1, 1}, beta4 = {0, 0, 0, 0}, lo4 = {0, 0, 0, 0}, hi4 = {0, 0, 0, 0};

    ChannelEpilogue() = default;
    ChannelEpilogue(const ConvEpilogue* e, int64_t o) {
        if (!e) return;
        bn = e->alpha != nullptr;
        act = e->act;
        if (bn) alpha = e->alpha[o], beta = e->beta[o];
        lo = e->lo, hi = e->hi;
        alpha4 = f32x4{alpha, alpha, alpha, alpha}, beta4 = f32x4{beta, beta, beta, beta};
        lo4 = f32x4{lo, lo, lo, lo}, hi4 = f32x4{hi, hi, hi, hi};
    }
    bool empty() const { return !bn && act == ConvAct::None; }

    f32x4 operator()(f32x4 v) const {
        if (bn) v = scale_shift4(v, alpha4, beta4);
        switch (act) {
        case ConvAct::None: return v;
        case ConvAct::Clamp: return clamp4(v, lo4, hi4);
        case ConvAct::Relu: return relu4(v);
        }
        return v;
    }
    float operator()(float v) const {
        if (bn) v = scale_shift1(v, alpha, beta);
        switch (act) {
        case ConvAct::None: return v;
        case ConvAct::Clamp: return clamp1(v, lo, hi);
        case ConvAct::Relu: return relu1(v);
        }
        return v;
    }
};

} // namespace pt2lab
