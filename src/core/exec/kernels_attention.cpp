// Transformer kernels: bmm, softmax (softmax.int, _softmax), layer norm
// (layer_norm, native_layer_norm) and scaled_dot_product_attention (the math
// path: softmax(q k^T * scale + mask) v). Accumulation in double.
#include <cmath>
#include <limits>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

Status require_float(const std::string& op, const Tensor& t, const char* what) {
    if (t.dtype != ScalarType::Float)
        return kernel_error(op + ": expected " + what + " to be float32, got " + t.type_str());
    return {};
}

// c[b] = a[b] @ m[b] for a: [B, N, K], m: [B, K, P] (float32 data, double sums).
void batched_matmul(const float* a, const float* m, float* c, int64_t B, int64_t N, int64_t K,
                    int64_t P) {
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < N; ++i)
            for (int64_t j = 0; j < P; ++j) {
                double acc = 0.0;
                for (int64_t k = 0; k < K; ++k)
                    acc += double(a[(b * N + i) * K + k]) * double(m[(b * K + k) * P + j]);
                c[(b * N + i) * P + j] = static_cast<float>(acc);
            }
}

// Softmax of x along `dim` into y (same shape): exp(x - max) / sum, per row.
void softmax_rows(const float* x, float* y, int64_t outer, int64_t n, int64_t inner) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * n * inner + i; // x: [outer, n, inner]
            double mx = -std::numeric_limits<double>::infinity();
            for (int64_t k = 0; k < n; ++k) mx = std::max(mx, double(x[base + k * inner]));
            double sum = 0.0;
            for (int64_t k = 0; k < n; ++k) sum += std::exp(double(x[base + k * inner]) - mx);
            for (int64_t k = 0; k < n; ++k)
                y[base + k * inner] =
                    static_cast<float>(std::exp(double(x[base + k * inner]) - mx) / sum);
        }
}

Result<Value> softmax_impl(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = a.schema().overload_str();
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (Status s = require_float(op, *x.value(), "the input"); !s.ok()) return s.error();
    const Tensor& in = *x.value();
    auto d = a.integer(1);
    if (!d.ok()) return d.error();
    auto dim = wrap_dim(d.value(), std::max<int64_t>(in.dim(), 1));
    if (!dim.ok()) return kernel_error(op + ": " + dim.error().message);
    if (a.size() > 2 && a[2].kind == Value::Kind::Dtype && a[2].dtype != ScalarType::Float)
        return kernel_error(op + ": only dtype=None or torch.float32 runs here");
    auto yr = new_tensor(opt, ScalarType::Float, in.sizes, op);
    if (!yr.ok()) return yr.error();
    if (Status s = charge_work(opt, work_of({in.numel(), 3}), op); !s.ok()) return s.error();
    int64_t outer = 1, inner = 1, n = in.dim() ? in.sizes[static_cast<size_t>(dim.value())] : 1;
    for (int64_t k = 0; k < dim.value(); ++k) outer *= in.sizes[static_cast<size_t>(k)];
    for (int64_t k = dim.value() + 1; k < in.dim(); ++k) inner *= in.sizes[static_cast<size_t>(k)];
    softmax_rows(in.f32(), yr.value().f32(), outer, n, inner);
    return Value::of(yr.take());
}

struct LayerNormOut {
    Tensor y, mean, rstd;
};

// x: [*, D1..Dk] normalised over the trailing `normalized_shape` [D1..Dk];
// weight, bias: [D1..Dk] or null. mean and rstd: [*, 1..1] (k ones).
Result<LayerNormOut> layer_norm_impl(const CallArgs& a, const KernelOptions& opt, size_t eps_at) {
    const std::string op = a.schema().overload_str();
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto shape = a.ints(1);
    if (!shape.ok()) return shape.error();
    auto w = a.opt_tensor(2), b = a.opt_tensor(3);
    if (!w.ok()) return w.error();
    if (!b.ok()) return b.error();
    auto eps = a.real(eps_at);
    if (!eps.ok()) return eps.error();
    const Tensor& in = *x.value();
    if (Status s = require_float(op, in, "the input"); !s.ok()) return s.error();
    const std::vector<int64_t>& ns = shape.value();
    const size_t k = ns.size();
    bool fits = k >= 1 && k <= in.sizes.size();
    for (size_t i = 0; fits && i < k; ++i) fits = in.sizes[in.sizes.size() - k + i] == ns[i];
    if (!fits)
        return kernel_error(op + ": Given normalized_shape=" + shape_str(ns) +
                            ", expected input with shape [*, " +
                            (ns.empty() ? std::string() : shape_str(ns).substr(1)) +
                            ", but got input of size" + shape_str(in.sizes));
    int64_t D = 1;
    for (int64_t s : ns) D *= s;
    const int64_t M = D == 0 ? 0 : in.numel() / D; // x: [M, D]
    for (const auto* t : {&w.value(), &b.value()}) {
        if (!*t) continue;
        if (Status s = require_float(op, **t, "weight and bias"); !s.ok()) return s.error();
        if ((*t)->sizes != ns)
            return kernel_error(op + ": weight/bias " + (*t)->type_str() +
                                " must have the normalized shape " + shape_str(ns));
    }
    std::vector<int64_t> stat(in.sizes.begin(), in.sizes.end() - static_cast<long>(k));
    stat.insert(stat.end(), k, 1);
    auto y = new_tensor(opt, ScalarType::Float, in.sizes, op);
    if (!y.ok()) return y.error();
    auto mean = new_tensor(opt, ScalarType::Float, stat, op);
    if (!mean.ok()) return mean.error();
    auto rstd = new_tensor(opt, ScalarType::Float, stat, op);
    if (!rstd.ok()) return rstd.error();
    if (Status s = charge_work(opt, work_of({in.numel(), 3}), op); !s.ok()) return s.error();
    const float* xd = in.f32();
    const Tensor* wt = w.value().get(); // read only: a non-const access un-shares
    const Tensor* bt = b.value().get();
    const float* wd = wt ? wt->f32() : nullptr;
    const float* bd = bt ? bt->f32() : nullptr;
    for (int64_t m = 0; m < M; ++m) {
        double mu = 0.0, var = 0.0;
        for (int64_t d = 0; d < D; ++d) mu += xd[m * D + d];
        mu /= double(D);
        for (int64_t d = 0; d < D; ++d) var += (xd[m * D + d] - mu) * (xd[m * D + d] - mu);
        var /= double(D); // biased, as torch
        const double r = 1.0 / std::sqrt(var + eps.value());
        for (int64_t d = 0; d < D; ++d) {
            double v = (xd[m * D + d] - mu) * r;
            if (wd) v *= wd[d];
            if (bd) v += bd[d];
            y.value().f32()[m * D + d] = static_cast<float>(v);
        }
        mean.value().f32()[m] = static_cast<float>(mu);
        rstd.value().f32()[m] = static_cast<float>(r);
    }
    return LayerNormOut{y.take(), mean.take(), rstd.take()};
}

} // namespace

// bmm(self[B, N, K], mat2[B, K, P]) -> [B, N, P]
Result<Value> kernel_bmm(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.bmm.default";
    auto x = a.tensor(0), m = a.tensor(1);
    if (!x.ok()) return x.error();
    if (!m.ok()) return m.error();
    const Tensor &A = *x.value(), &M = *m.value();
    for (const Tensor* t : {&A, &M})
        if (Status s = require_float(op, *t, "both operands"); !s.ok()) return s.error();
    if (A.dim() != 3 || M.dim() != 3)
        return kernel_error(op + ": batch1 must be a 3D tensor (got " + A.type_str() + " and " +
                            M.type_str() + ")");
    if (A.sizes[0] != M.sizes[0] || A.sizes[2] != M.sizes[1])
        return kernel_error(
            op + ": Expected size for first two dimensions of batch2 tensor to be: [" +
            std::to_string(A.sizes[0]) + ", " + std::to_string(A.sizes[2]) + "] but got: [" +
            std::to_string(M.sizes[0]) + ", " + std::to_string(M.sizes[1]) + "].");
    const int64_t B = A.sizes[0], N = A.sizes[1], K = A.sizes[2], P = M.sizes[2];
    auto yr = new_tensor(opt, ScalarType::Float, {B, N, P}, op);
    if (!yr.ok()) return yr.error();
    if (Status s = charge_work(opt, work_of({B, N, P, K}), op); !s.ok()) return s.error();
    batched_matmul(A.f32(), M.f32(), yr.value().f32(), B, N, K, P);
    return Value::of(yr.take());
}

// softmax.int(self, dim, dtype=None) / _softmax(self, dim, half_to_float=False)
Result<Value> kernel_softmax(const CallArgs& a, const KernelOptions& opt) {
    return softmax_impl(a, opt);
}
Result<Value> kernel__softmax(const CallArgs& a, const KernelOptions& opt) {
    auto h = a.boolean(2);
    if (!h.ok()) return h.error();
    if (h.value())
        return kernel_error("aten._softmax.default: conversion from Half to Float is only "
                            "supported on CUDA (half_to_float=True)");
    return softmax_impl(a, opt);
}

// layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True)
Result<Value> kernel_layer_norm(const CallArgs& a, const KernelOptions& opt) {
    auto r = layer_norm_impl(a, opt, 4);
    if (!r.ok()) return r.error();
    return Value::of(std::move(r.value().y));
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd)
Result<Value> kernel_native_layer_norm(const CallArgs& a, const KernelOptions& opt) {
    auto r = layer_norm_impl(a, opt, 4);
    if (!r.ok()) return r.error();
    return Value::tuple({Value::of(std::move(r.value().y)), Value::of(std::move(r.value().mean)),
                         Value::of(std::move(r.value().rstd))});
}

// scaled_dot_product_attention(query[*, L, E], key[*, S, E], value[*, S, Ev], attn_mask=None,
// dropout_p=0., is_causal=False, *, scale=None, enable_gqa=False) -> [*, L, Ev]
// The batch dims `*` must be equal in the three (no broadcasting, no GQA here); a bool
// mask [L, S] or [*, L, S] keeps True entries, a float mask is added to the scores.
Result<Value> kernel_sdpa(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.scaled_dot_product_attention.default";
    auto q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
    if (!q.ok()) return q.error();
    if (!k.ok()) return k.error();
    if (!v.ok()) return v.error();
    auto mask = a.opt_tensor(3);
    if (!mask.ok()) return mask.error();
    auto p = a.real(4);
    if (!p.ok()) return p.error();
    auto causal = a.boolean(5);
    if (!causal.ok()) return causal.error();
    const Tensor &Q = *q.value(), &Kt = *k.value(), &Vt = *v.value();
    for (const Tensor* t : {&Q, &Kt, &Vt})
        if (Status s = require_float(op, *t, "query, key and value"); !s.ok()) return s.error();
    if (p.value() != 0.0)
        return kernel_error(op + ": dropout_p=" + std::to_string(p.value()) +
                                " draws a random mask, and pt2lab does not reproduce torch's "
                                "random numbers",
                            "export the model after model.eval()");
    if (Q.dim() < 2 || Kt.dim() != Q.dim() || Vt.dim() != Q.dim())
        return kernel_error(op + ": query, key and value must have the same rank >= 2, got " +
                            Q.type_str() + ", " + Kt.type_str() + ", " + Vt.type_str());
    const size_t r = Q.sizes.size();
    for (size_t d = 0; d + 2 < r; ++d)
        if (Kt.sizes[d] != Q.sizes[d] || Vt.sizes[d] != Q.sizes[d])
            return kernel_error(op + ": batch dimensions of query " + Q.type_str() + ", key " +
                                Kt.type_str() + " and value " + Vt.type_str() +
                                " differ (broadcasting and grouped-query attention do not run "
                                "here)");
    const int64_t L = Q.sizes[r - 2], E = Q.sizes[r - 1], S = Kt.sizes[r - 2], Ev = Vt.sizes[r - 1];
    if (Kt.sizes[r - 1] != E || Vt.sizes[r - 2] != S)
        return kernel_error(op + ": key " + Kt.type_str() + " and value " + Vt.type_str() +
                            " do not fit query " + Q.type_str());
    int64_t B = 1;
    for (size_t d = 0; d + 2 < r; ++d) B *= Q.sizes[d];
    const Tensor* M = mask.value().get();
    if (M) {
        if (M->dtype != ScalarType::Bool && M->dtype != ScalarType::Float)
            return kernel_error(op + ": attn_mask must be bool or float32, got " + M->type_str());
        bool per_batch = M->dim() == static_cast<int64_t>(r) && M->numel() == B * L * S;
        if (!(M->numel() == L * S && M->sizes.back() == S) && !per_batch)
            return kernel_error(op + ": attn_mask " + M->type_str() +
                                " must be [L, S] or the full [*, L, S] (L=" + std::to_string(L) +
                                ", S=" + std::to_string(S) + ")");
    }
    double scale = 1.0 / std::sqrt(double(E));
    if (a[6].is_number()) scale = a[6].number();
    std::vector<int64_t> out(Q.sizes.begin(), Q.sizes.end() - 1);
    out.push_back(Ev);
    auto yr = new_tensor(opt, ScalarType::Float, out, op);
    if (!yr.ok()) return yr.error();
    if (Status s = charge_bytes(opt, work_of({S, 8}), op); !s.ok()) return s.error();
    if (Status s = charge_work(opt, work_of({B, L, S, E + Ev}), op); !s.ok()) return s.error();
    const bool full_mask = M && M->numel() == B * L * S && M->numel() != L * S;
    std::vector<double> w(static_cast<size_t>(S));
    const double neg_inf = -std::numeric_limits<double>::infinity();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < L; ++i) {
            const float* qi = Q.f32() + (b * L + i) * E; // q: [B, L, E]
            double mx = neg_inf;
            for (int64_t j = 0; j < S; ++j) {
                const float* kj = Kt.f32() + (b * S + j) * E; // k: [B, S, E]
                double s = 0.0;
                for (int64_t e = 0; e < E; ++e) s += double(qi[e]) * double(kj[e]);
                s *= scale;
                if (causal.value() && j > i) s = neg_inf;
                if (M) {
                    const int64_t mi = (full_mask ? b * L * S : 0) + i * S + j;
                    if (M->dtype == ScalarType::Bool)
                        s = M->data<uint8_t>()[mi] ? s : neg_inf;
                    else
                        s += double(M->f32()[mi]);
                }
                w[static_cast<size_t>(j)] = s;
                mx = std::max(mx, s);
            }
            double sum = 0.0;
            for (int64_t j = 0; j < S; ++j) {
                double e = mx == neg_inf ? 0.0 : std::exp(w[static_cast<size_t>(j)] - mx);
                w[static_cast<size_t>(j)] = e;
                sum += e;
            }
            float* yi = yr.value().f32() + (b * L + i) * Ev; // y: [B, L, Ev]
            for (int64_t e = 0; e < Ev; ++e) {
                double acc = 0.0;
                for (int64_t j = 0; j < S; ++j)
                    acc += w[static_cast<size_t>(j)] * double(Vt.f32()[(b * S + j) * Ev + e]);
                // a fully masked row gives zeros (torch's math path: softmax NaN -> 0)
                yi[e] = static_cast<float>(sum > 0.0 ? acc / sum : 0.0);
            }
        }
    return Value::of(yr.take());
}

} // namespace pt2lab
