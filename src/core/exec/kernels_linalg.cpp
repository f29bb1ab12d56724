// Matrix kernels: linear, addmm, mm (double accumulation). linear has a fast
// path (KernelOptions::fast_conv, the fast kernels): float dot products eight
// lanes at a time, which the tests compare against the reference loop.
#include "exec/kernels.h"
#include "exec/simd.h"

namespace pt2lab {

namespace {
Status require_float(const char* op, const Tensor& t) {
    if (t.dtype != ScalarType::Float)
        return kernel_error(std::string(op) + ": expected float32, got " + t.type_str());
    return {};
}

// The double accumulator [M, N] and the M * N * K multiply-adds of a product, charged.
Status accumulator(const KernelOptions& opt, int64_t M, int64_t N, int64_t K, const char* op) {
    if (Status s = charge_bytes(opt, work_of({M, N, 8}), op); !s.ok()) return s;
    return charge_work(opt, work_of({M, N, K}), op);
}

// c[M, N] = a[M, K] @ b[K, N] where b is given by element accessor (for transposed weights).
template <class B>
void matmul(const float* a, B b, int64_t M, int64_t K, int64_t N, std::vector<double>& c) {
    c.assign(static_cast<size_t>(M * N), 0.0);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; ++k) acc += double(a[m * K + k]) * double(b(k, n));
            c[static_cast<size_t>(m * N + n)] = acc;
        }
}
// sum_k x[k] * w[k] in float: eight partial sums (lane j takes k = j mod 8), then
// added pairwise, then the tail. Out of line: called once per output, so V8
// optimizes it during a model's first run (see gemm.cpp's tile_4x8).
__attribute__((noinline)) float dot_fast(const float* x, const float* w, int64_t K) {
    f32x4 s0 = {0, 0, 0, 0}, s1 = s0;
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        s0 += load4(x + k) * load4(w + k);
        s1 += load4(x + k + 4) * load4(w + k + 4);
    }
    const f32x4 s = s0 + s1;
    float acc = (s[0] + s[1]) + (s[2] + s[3]);
    for (; k < K; ++k) acc += x[k] * w[k];
    return acc;
}
} // namespace

// linear(input, weight, bias=None): input [..., in], weight [out, in], bias [out] -> [..., out]
Result<Value> kernel_linear(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    auto w = a.tensor(1);
    auto b = a.opt_tensor(2);
    if (!x.ok()) return x.error();
    if (!w.ok()) return w.error();
    if (!b.ok()) return b.error();
    const Tensor &X = *x.value(), &Wt = *w.value();
    for (const Tensor* t : {&X, &Wt})
        if (Status s = require_float("aten.linear.default", *t); !s.ok()) return s.error();
    if (Wt.dim() != 2 || X.dim() < 1 || X.sizes.back() != Wt.sizes[1])
        return kernel_error("aten.linear.default: input " + X.type_str() + " and weight " +
                            Wt.type_str() +
                            " do not fit (input's last dimension must equal weight's second)");
    // M: the product of the leading dims (not numel / K: K may be 0).
    const int64_t K = Wt.sizes[1], N = Wt.sizes[0];
    int64_t M = 1;
    for (size_t d = 0; d + 1 < X.sizes.size(); ++d) M *= X.sizes[d];
    const Tensor* bias = b.value().get();
    if (bias && (bias->dtype != ScalarType::Float || bias->numel() != N))
        return kernel_error("aten.linear.default: bias " + bias->type_str() + " does not match " +
                            std::to_string(N) + " outputs");
    std::vector<int64_t> out_sizes = X.sizes;
    out_sizes.back() = N;
    auto yr = new_tensor(opt, ScalarType::Float, out_sizes, "aten.linear.default");
    if (!yr.ok()) return yr.error();
    if (opt.fast_conv) { // y[m, n] = x[m, :] . w[n, :] (+ b[n]), rows read in place
        if (Status s = charge_work(opt, work_of({M, N, K}), "aten.linear.default"); !s.ok())
            return s.error();
        Tensor& y = yr.value();
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n)
                y.f32()[m * N + n] =
                    dot_fast(X.f32() + m * K, Wt.f32() + n * K, K) + (bias ? bias->f32()[n] : 0.0f);
        return Value::of(yr.take());
    }
    if (Status s = accumulator(opt, M, N, K, "aten.linear.default"); !s.ok()) return s.error();
    std::vector<double> c;
    const float* wd = Wt.f32();
    matmul(
        X.f32(), [&](int64_t k, int64_t n) { return wd[n * K + k]; }, M, K, N, c);
    Tensor& y = yr.value();
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n)
            y.f32()[m * N + n] = static_cast<float>(c[static_cast<size_t>(m * N + n)] +
                                                    (bias ? double(bias->f32()[n]) : 0.0));
    return Value::of(yr.take());
}

// addmm(self, mat1, mat2, *, beta=1, alpha=1): beta * self + alpha * (mat1[M, K] @ mat2[K, N]);
// self broadcasts to [M, N]
Result<Value> kernel_addmm(const CallArgs& a, const KernelOptions& opt) {
    auto s = a.tensor(0), m1 = a.tensor(1), m2 = a.tensor(2);
    if (!s.ok()) return s.error();
    if (!m1.ok()) return m1.error();
    if (!m2.ok()) return m2.error();
    auto beta = a.real(3), alpha = a.real(4);
    if (!beta.ok()) return beta.error();
    if (!alpha.ok()) return alpha.error();
    const Tensor &S = *s.value(), &A = *m1.value(), &B = *m2.value();
    for (const Tensor* t : {&S, &A, &B})
        if (Status st = require_float("aten.addmm.default", *t); !st.ok()) return st.error();
    if (A.dim() != 2 || B.dim() != 2 || A.sizes[1] != B.sizes[0])
        return kernel_error("aten.addmm.default: mat1 " + A.type_str() + " and mat2 " +
                            B.type_str() + " cannot be multiplied");
    const int64_t M = A.sizes[0], K = A.sizes[1], N = B.sizes[1];
    auto bs = broadcast_shapes(S.sizes, {M, N});
    if (!bs.ok() || bs.value() != std::vector<int64_t>{M, N})
        return kernel_error("aten.addmm.default: self " + S.type_str() +
                            " does not broadcast to [" + std::to_string(M) + ", " +
                            std::to_string(N) + "]");
    auto yr = new_tensor(opt, ScalarType::Float, {M, N}, "aten.addmm.default");
    if (!yr.ok()) return yr.error();
    if (Status st = accumulator(opt, M, N, K, "aten.addmm.default"); !st.ok()) return st.error();
    Tensor& y = yr.value();
    std::vector<double> c;
    const float* bd = B.f32();
    matmul(
        A.f32(), [&](int64_t k, int64_t n) { return bd[k * N + n]; }, M, K, N, c);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            // self [N] / [1, N] / [M, 1] / [M, N] broadcast
            int64_t si = 0;
            if (S.dim() == 1)
                si = S.sizes[0] == 1 ? 0 : n;
            else if (S.dim() == 2)
                si = (S.sizes[0] == 1 ? 0 : m) * S.sizes[1] + (S.sizes[1] == 1 ? 0 : n);
            double self_term = beta.value() == 0.0 ? 0.0 : beta.value() * double(S.f32()[si]);
            y.f32()[m * N + n] =
                static_cast<float>(self_term + alpha.value() * c[static_cast<size_t>(m * N + n)]);
        }
    return Value::of(yr.take());
}

// mm(self[M, K], mat2[K, N]) -> [M, N]
Result<Value> kernel_mm(const CallArgs& a, const KernelOptions& opt) {
    auto m1 = a.tensor(0), m2 = a.tensor(1);
    if (!m1.ok()) return m1.error();
    if (!m2.ok()) return m2.error();
    const Tensor &A = *m1.value(), &B = *m2.value();
    if (A.dtype != ScalarType::Float || B.dtype != ScalarType::Float || A.dim() != 2 ||
        B.dim() != 2 || A.sizes[1] != B.sizes[0])
        return kernel_error("aten.mm.default: " + A.type_str() + " and " + B.type_str() +
                            " cannot be multiplied");
    const int64_t M = A.sizes[0], K = A.sizes[1], N = B.sizes[1];
    auto yr = new_tensor(opt, ScalarType::Float, {M, N}, "aten.mm.default");
    if (!yr.ok()) return yr.error();
    if (Status st = accumulator(opt, M, N, K, "aten.mm.default"); !st.ok()) return st.error();
    std::vector<double> c;
    const float* bd = B.f32();
    matmul(
        A.f32(), [&](int64_t k, int64_t n) { return bd[k * N + n]; }, M, K, N, c);
    Tensor& y = yr.value();
    for (int64_t k = 0; k < M * N; ++k) y.f32()[k] = static_cast<float>(c[static_cast<size_t>(k)]);
    return Value::of(yr.take());
}

} // namespace pt2lab
