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

// sum_k a[k] * b(k) in double, k in order from 0: one output of a product
// (b an element accessor, for transposed weights).
template <class B> double dot_double(const float* a, B b, int64_t K) {
    double acc = 0.0;
    for (int64_t k = 0; k < K; ++k) acc += double(a[k]) * double(b(k));
    return acc;
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
// A unit is a run of outputs (row-major over [M, N]).
Result<std::unique_ptr<KernelJob>> job_linear(const CallArgs& a, const KernelOptions& opt) {
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
    const bool fast = opt.fast_conv;
    if (fast) {
        if (Status s = charge_work(opt, work_of({M, N, K}), "aten.linear.default"); !s.ok())
            return s.error();
    } else if (Status s = accumulator(opt, M, N, K, "aten.linear.default"); !s.ok()) {
        return s.error();
    }
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* y = job->result.tensor->f32();
    const float *xd = X.f32(), *wd = Wt.f32(), *bd = bias ? bias->f32() : nullptr;
    then_items(*job, M * N, items_per_unit(opt.unit_work, static_cast<uint64_t>(K), M * N),
               [=](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                       const int64_t m = i / N, n = i % N;
                       if (fast) { // y[m, n] = x[m, :] . w[n, :] (+ b[n]), rows read in place
                           y[i] = dot_fast(xd + m * K, wd + n * K, K) + (bd ? bd[n] : 0.0f);
                           continue;
                       }
                       const double c = dot_double(
                           xd + m * K, [&](int64_t k) { return wd[n * K + k]; }, K);
                       y[i] = static_cast<float>(c + (bd ? double(bd[n]) : 0.0));
                   }
               });
    return job;
}

Result<Value> kernel_linear(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_linear(a, opt));
}

// addmm(self, mat1, mat2, *, beta=1, alpha=1): beta * self + alpha * (mat1[M, K] @ mat2[K, N]);
// self broadcasts to [M, N]
Result<std::unique_ptr<KernelJob>> job_addmm(const CallArgs& a, const KernelOptions& opt) {
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
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* y = job->result.tensor->f32();
    const float *ad = A.f32(), *bd = B.f32(), *sd = S.f32();
    const int64_t s_dim = S.dim(), s0 = s_dim >= 1 ? S.sizes[0] : 1,
                  s1 = s_dim == 2 ? S.sizes[1] : 1;
    const double be = beta.value(), al = alpha.value();
    then_items(*job, M * N, items_per_unit(opt.unit_work, static_cast<uint64_t>(K), M * N),
               [=](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                       const int64_t m = i / N, n = i % N;
                       const double c = dot_double(
                           ad + m * K, [&](int64_t k) { return bd[k * N + n]; }, K);
                       // self [N] / [1, N] / [M, 1] / [M, N] broadcast
                       int64_t si = 0;
                       if (s_dim == 1)
                           si = s0 == 1 ? 0 : n;
                       else if (s_dim == 2)
                           si = (s0 == 1 ? 0 : m) * s1 + (s1 == 1 ? 0 : n);
                       const double self_term = be == 0.0 ? 0.0 : be * double(sd[si]);
                       y[i] = static_cast<float>(self_term + al * c);
                   }
               });
    return job;
}

Result<Value> kernel_addmm(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_addmm(a, opt));
}

// mm(self [M, K], mat2 [K, N]) -> [M, N]
Result<std::unique_ptr<KernelJob>> job_mm(const CallArgs& a, const KernelOptions& opt) {
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
    auto job = std::make_unique<KernelJob>();
    job->result = Value::of(yr.take());
    float* y = job->result.tensor->f32();
    const float *ad = A.f32(), *bd = B.f32();
    then_items(*job, M * N, items_per_unit(opt.unit_work, static_cast<uint64_t>(K), M * N),
               [=](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                       const int64_t m = i / N, n = i % N;
                       y[i] = static_cast<float>(dot_double(
                           ad + m * K, [&](int64_t k) { return bd[k * N + n]; }, K));
                   }
               });
    return job;
}

Result<Value> kernel_mm(const CallArgs& a, const KernelOptions& opt) {
    return job_value(job_mm(a, opt));
}

} // namespace pt2lab
