// Elementwise math, reductions and matmul the Swin v2 exports reach: exp,
// pow.Tensor_Scalar, clamp_min, sum.dim_IntList, linalg_vector_norm (cosine
// attention's F.normalize) and matmul (broadcast batched, 1-D operands as numpy).
// Float32 data with double arithmetic, rounded once.
#include <cmath>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

namespace {

Result<std::shared_ptr<Tensor>> float_tensor(const CallArgs& a, size_t i, const std::string& op) {
    auto x = a.tensor(i);
    if (!x.ok()) return x.error();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error(op + ": expected float32, got " + x.value()->type_str());
    return x.value();
}

template <class F>
Result<Value> map_float(const CallArgs& a, const KernelOptions& opt, const std::string& op, F&& f) {
    auto x = float_tensor(a, 0, op);
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    auto yr = new_tensor(opt, ScalarType::Float, in.sizes, op);
    if (!yr.ok()) return yr.error();
    const float* xd = in.f32();   // x: [any]
    float* yd = yr.value().f32(); // y: same shape
    for (int64_t k = 0; k < in.numel(); ++k) yd[k] = static_cast<float>(f(double(xd[k])));
    return Value::of(yr.take());
}

// The dims flagged by a reduction's `dim` argument (None or [] is every dim).
Result<std::vector<bool>> reduce_mask(const CallArgs& a, size_t i, int64_t rank,
                                      const std::string& op) {
    std::vector<bool> mask(static_cast<size_t>(rank), false);
    std::vector<int64_t> dims;
    if (a[i].kind != Value::Kind::None) {
        auto d = a.ints(i);
        if (!d.ok()) return d.error();
        dims = d.take();
    }
    if (dims.empty()) return std::vector<bool>(static_cast<size_t>(rank), true);
    for (int64_t d : dims) {
        auto w = wrap_dim(d, rank);
        if (!w.ok()) return kernel_error(op + ": " + w.error().message);
        if (rank == 0) continue;
        if (mask[static_cast<size_t>(w.value())])
            return kernel_error(op + ": dim " + std::to_string(w.value()) +
                                " appears multiple times in the list of dims");
        mask[static_cast<size_t>(w.value())] = true;
    }
    return mask;
}

// Reduces x over the dims in `mask`: acc = step(acc, x) from `init`, then done(acc).
// x: [..] -> y: [..] without (or, keepdim, with size 1 at) the reduced dims.
template <class Step, class Done>
Result<Value> reduce_float(const KernelOptions& opt, const std::string& op, const Tensor& x,
                           const std::vector<bool>& mask, bool keepdim, double init, Step&& step,
                           Done&& done) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < x.dim(); ++d) {
        if (!mask[static_cast<size_t>(d)])
            out.push_back(x.sizes[static_cast<size_t>(d)]);
        else if (keepdim)
            out.push_back(1);
    }
    auto yr = new_tensor(opt, ScalarType::Float, out, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    if (Status s = charge_bytes(opt, work_of({y.numel(), 8}), op); !s.ok()) return s.error();
    if (Status s = charge_work(opt, work_of({x.numel()}), op); !s.ok()) return s.error();
    std::vector<double> acc(static_cast<size_t>(y.numel()), init);
    std::vector<int64_t> idx(x.sizes.size(), 0);
    for (int64_t k = 0; k < x.numel(); ++k) {
        int64_t o = 0;
        for (size_t d = 0; d < idx.size(); ++d)
            if (!mask[d]) o = o * x.sizes[d] + idx[d];
        acc[static_cast<size_t>(o)] = step(acc[static_cast<size_t>(o)], double(x.f32()[k]));
        for (size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < x.sizes[d]) break;
            idx[d] = 0;
        }
    }
    for (int64_t k = 0; k < y.numel(); ++k)
        y.f32()[k] = static_cast<float>(done(acc[static_cast<size_t>(k)]));
    return Value::of(yr.take());
}

} // namespace

// exp(self)
Result<Value> kernel_exp(const CallArgs& a, const KernelOptions& opt) {
    return map_float(a, opt, "aten.exp.default", [](double v) { return std::exp(v); });
}

// pow.Tensor_Scalar(self, exponent)
Result<Value> kernel_pow_tensor_scalar(const CallArgs& a, const KernelOptions& opt) {
    auto e = a.real(1);
    if (!e.ok()) return e.error();
    const double p = e.value();
    return map_float(a, opt, "aten.pow.Tensor_Scalar", [p](double v) {
        if (p == 2.0) return v * v;
        if (p == 0.5) return std::sqrt(v);
        return std::pow(v, p);
    });
}

// clamp_min(self, min): max(self, min), NaN passing through
Result<Value> kernel_clamp_min(const CallArgs& a, const KernelOptions& opt) {
    auto m = a.real(1);
    if (!m.ok()) return m.error();
    const double lo = double(static_cast<float>(m.value()));
    return map_float(a, opt, "aten.clamp_min.default",
                     [lo](double v) { return std::isnan(v) || v >= lo ? v : lo; });
}

// sum.dim_IntList(self, dim, keepdim=False, *, dtype=None): float32 sums
Result<Value> kernel_sum_dim(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.sum.dim_IntList";
    auto x = float_tensor(a, 0, op);
    if (!x.ok()) return x.error();
    if (a[3].kind == Value::Kind::Dtype && a[3].dtype != ScalarType::Float)
        return kernel_error(op + ": only dtype=torch.float32 is supported");
    auto mask = reduce_mask(a, 1, x.value()->dim(), op);
    if (!mask.ok()) return mask.error();
    auto keep = a.boolean(2);
    if (!keep.ok()) return keep.error();
    return reduce_float(
        opt, op, *x.value(), mask.value(), keep.value(), 0.0,
        [](double s, double v) { return s + v; }, [](double s) { return s; });
}

// linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
// (sum |x|^ord)^(1/ord); ord inf / -inf: max / min |x|; ord 0: the count of non-zeros
Result<Value> kernel_linalg_vector_norm(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.linalg_vector_norm.default";
    auto x = float_tensor(a, 0, op);
    if (!x.ok()) return x.error();
    auto ord = a.real(1);
    if (!ord.ok()) return ord.error();
    if (a[4].kind == Value::Kind::Dtype && a[4].dtype != ScalarType::Float)
        return kernel_error(op + ": only dtype=torch.float32 is supported");
    auto mask = reduce_mask(a, 2, x.value()->dim(), op);
    if (!mask.ok()) return mask.error();
    auto keep = a.boolean(3);
    if (!keep.ok()) return keep.error();
    const double p = ord.value();
    const Tensor& in = *x.value();
    if (std::isinf(p)) {
        if (p < 0 && in.numel() == 0)
            return kernel_error(op + ": linalg.vector_norm cannot compute the -inf norm on an "
                                     "empty tensor because the operation does not have an "
                                     "identity");
        return reduce_float(
            opt, op, in, mask.value(), keep.value(), p > 0 ? 0.0 : INFINITY,
            [p](double s, double v) {
                const double m = std::fabs(v);
                if (std::isnan(m) || std::isnan(s)) return double(NAN);
                return p > 0 ? std::max(s, m) : std::min(s, m);
            },
            [](double s) { return s; });
    }
    if (p == 0.0)
        return reduce_float(
            opt, op, in, mask.value(), keep.value(), 0.0,
            [](double s, double v) { return s + (v != 0.0 ? 1.0 : 0.0); },
            [](double s) { return s; });
    return reduce_float(
        opt, op, in, mask.value(), keep.value(), 0.0,
        [p](double s, double v) {
            const double m = std::fabs(v);
            return s + (p == 2.0 ? m * m : p == 1.0 ? m : std::pow(m, p));
        },
        [p](double s) { return p == 2.0   ? std::sqrt(s)
                               : p == 1.0 ? s
                                          : std::pow(s, 1.0 / p); });
}

// matmul(self, other): numpy's matmul. 1-D operands gain a dim (removed again), the
// batch dims broadcast. self: [..., N, K], other: [..., K, P] -> [..., N, P].
Result<Value> kernel_matmul(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.matmul.default";
    auto x = float_tensor(a, 0, op), m = float_tensor(a, 1, op);
    if (!x.ok()) return x.error();
    if (!m.ok()) return m.error();
    const Tensor &A = *x.value(), &M = *m.value();
    if (A.dim() == 0 || M.dim() == 0)
        return kernel_error(op +
                            ": both arguments to matmul need to be at least 1D, but they "
                            "are " +
                            std::to_string(A.dim()) + "D and " + std::to_string(M.dim()) + "D");
    std::vector<int64_t> as = A.sizes, ms = M.sizes;
    const bool a1 = A.dim() == 1, m1 = M.dim() == 1;
    if (a1) as.insert(as.begin(), 1);
    if (m1) ms.push_back(1);
    const int64_t N = as[as.size() - 2], K = as.back(), P = ms.back();
    if (ms[ms.size() - 2] != K)
        return kernel_error(op + ": mat1 and mat2 shapes cannot be multiplied (" +
                            std::to_string(N) + "x" + std::to_string(K) + " and " +
                            std::to_string(ms[ms.size() - 2]) + "x" + std::to_string(P) + ")");
    const std::vector<int64_t> ab(as.begin(), as.end() - 2), mb(ms.begin(), ms.end() - 2);
    auto batch = broadcast_shapes(ab, mb);
    if (!batch.ok()) return kernel_error(op + ": " + batch.error().message);
    std::vector<int64_t> out = batch.value();
    if (!a1) out.push_back(N);
    if (!m1) out.push_back(P);
    auto yr = new_tensor(opt, ScalarType::Float, out, op);
    if (!yr.ok()) return yr.error();
    int64_t B = 1;
    for (int64_t s : batch.value()) B *= s;
    if (Status s = charge_work(opt, work_of({B, N, P, K}), op); !s.ok()) return s.error();
    // the start of batch b's matrix in an operand with batch sizes `bs` broadcast to `batch`
    auto offset = [&](const std::vector<int64_t>& bs, int64_t b, int64_t mat) {
        int64_t off = 0, stride = mat, rem = b;
        const std::vector<int64_t>& os = batch.value();
        for (size_t d = os.size(); d-- > 0;) {
            const int64_t c = rem % os[d];
            rem /= os[d];
            const size_t sd = d + bs.size();
            if (sd < os.size()) continue;
            const int64_t size = bs[sd - os.size()];
            off += (size == 1 ? 0 : c) * stride;
            stride *= size;
        }
        return off;
    };
    float* y = yr.value().f32();
    for (int64_t b = 0; b < B; ++b) {
        const float* pa = A.f32() + offset(ab, b, N * K); // [N, K]
        const float* pm = M.f32() + offset(mb, b, K * P); // [K, P]
        for (int64_t i = 0; i < N; ++i)
            for (int64_t j = 0; j < P; ++j) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; ++k)
                    acc += double(pa[i * K + k]) * double(pm[k * P + j]);
                y[(b * N + i) * P + j] = static_cast<float>(acc);
            }
    }
    return Value::of(yr.take());
}

} // namespace pt2lab
