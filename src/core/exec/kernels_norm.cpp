// Batch normalization at every IR level: batch_norm (eval and train, running
// stats updated in place), _native_batch_norm_legit_no_training and
// _native_batch_norm_legit_functional (new running stats as outputs).
// Empty inputs follow ATen: batch_norm returns an empty result and leaves the
// running statistics alone; training over zero values per channel is refused.
#include <cmath>
#include <vector>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

struct BnInputs {
    std::shared_ptr<Tensor> x, w, b, rm, rv;
    // Read-only views: reading through a non-const Tensor would un-share the
    // state's weights (tensor.h's copy on write) for nothing.
    const Tensor* weight() const { return w.get(); }
    const Tensor* bias() const { return b.get(); }
    const Tensor* mean() const { return rm.get(); }
    const Tensor* var() const { return rv.get(); }
};

// Checks x: [N, C, ...] and every per-channel tensor: [C].
Status check_bn(const char* op, const BnInputs& in) {
    const Tensor& x = *in.x;
    if (x.dtype != ScalarType::Float || x.dim() < 2)
        return kernel_error(std::string(op) + ": expected a float32 input [N, C, ...], got " +
                            x.type_str());
    const int64_t C = x.sizes[1];
    for (const auto* t : {&in.w, &in.b, &in.rm, &in.rv}) {
        if (!*t) continue;
        if ((*t)->dtype != ScalarType::Float || (*t)->numel() != C || (*t)->dim() != 1)
            return kernel_error(std::string(op) + ": per-channel tensor " + (*t)->type_str() +
                                " does not match the input's " + std::to_string(C) +
                                " channels (input " + x.type_str() + ")");
    }
    return {};
}

// Elements per (n, c) plane: the product of the sizes after N and C (no division,
// so an empty batch or channel count is fine).
int64_t plane_size(const Tensor& x) {
    int64_t s = 1;
    for (size_t d = 2; d < x.sizes.size(); ++d) s *= x.sizes[d];
    return s;
}

// y[s] = x[s] * alpha + beta over one channel's plane. Out of line: called once
// per channel, so V8 optimizes it during a model's first run (see conv_fast.cpp).
// The arithmetic is conv_epilogue.h's, which a fused conv applies instead.
__attribute__((noinline)) void scale_shift(const float* x, float* y, int64_t S, float alpha,
                                           float beta) {
    for (int64_t s = 0; s < S; ++s) y[s] = scale_shift1(x[s], alpha, beta);
}

} // namespace

void bn_eval_coefficients(const float* w, const float* b, const float* rm, const float* rv,
                          double eps, int64_t C, float* alpha, float* beta) {
    for (int64_t c = 0; c < C; ++c) {
        const float mean = rm ? rm[c] : 0.0f, var = rv ? rv[c] : 1.0f;
        const float invstd = 1.0f / std::sqrt(var + static_cast<float>(eps));
        alpha[c] = invstd * (w ? w[c] : 1.0f);
        beta[c] = (b ? b[c] : 0.0f) - mean * alpha[c];
    }
}

namespace {

// Eval: y = x * alpha + beta per channel, with alpha = w / sqrt(rv + eps) and
// beta = b - rm * alpha computed in float32 as ATen's CPU kernel does.
Result<Tensor> bn_eval(const KernelOptions& opt, const char* op, const BnInputs& in, double eps) {
    const Tensor& x = *in.x;
    const int64_t N = x.sizes[0], C = x.sizes[1], S = plane_size(x); // x: [N, C, S]
    auto yr = new_tensor(opt, ScalarType::Float, x.sizes, op);
    if (!yr.ok()) return yr;
    Tensor& y = yr.value();
    std::vector<float> alpha(static_cast<size_t>(C)), beta(static_cast<size_t>(C));
    bn_eval_coefficients(in.w ? in.weight()->f32() : nullptr, in.b ? in.bias()->f32() : nullptr,
                         in.rm ? in.mean()->f32() : nullptr, in.rv ? in.var()->f32() : nullptr, eps,
                         C, alpha.data(), beta.data());
    for (int64_t c = 0; c < C; ++c)
        for (int64_t n = 0; n < N; ++n)
            scale_shift(x.f32() + (n * C + c) * S, y.f32() + (n * C + c) * S, S,
                        alpha[static_cast<size_t>(c)], beta[static_cast<size_t>(c)]);
    return yr;
}

struct BnTrainResult {
    Tensor y, save_mean, save_rstd, new_rm, new_rv;
};

// Train: normalise with the batch statistics (biased variance); running stats
// move by `momentum` toward the batch mean and the unbiased batch variance
// (NaN from a single value, as in torch). Needs at least one value per channel.
Result<BnTrainResult> bn_train(const KernelOptions& opt, const char* op, const BnInputs& in,
                               double momentum, double eps) {
    const Tensor& x = *in.x;
    const int64_t N = x.sizes[0], C = x.sizes[1], S = plane_size(x); // x: [N, C, S]
    const int64_t count = N * S;
    if (count == 0)
        return kernel_error(std::string(op) +
                                ": training mode needs at least one value per channel, got input " +
                                x.type_str(),
                            "batch statistics of an empty batch do not exist");
    if (Status s = charge_work(opt, work_of({x.numel(), 3}), op); !s.ok()) return s.error();
    BnTrainResult r;
    const std::vector<int64_t> per_channel{C};
    for (Tensor* t : {&r.y, &r.save_mean, &r.save_rstd, &r.new_rm, &r.new_rv}) {
        auto made = new_tensor(opt, ScalarType::Float, t == &r.y ? x.sizes : per_channel, op);
        if (!made.ok()) return made.error();
        *t = made.take();
    }
    for (int64_t c = 0; c < C; ++c) {
        double sum = 0.0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) sum += x.f32()[(n * C + c) * S + s];
        const double mean = sum / double(count);
        double sq = 0.0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) {
                double d = x.f32()[(n * C + c) * S + s] - mean;
                sq += d * d;
            }
        const double var = sq / double(count);
        const double invstd = 1.0 / std::sqrt(var + eps);
        const double w = in.w ? in.weight()->f32()[c] : 1.0, b = in.b ? in.bias()->f32()[c] : 0.0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) {
                int64_t k = (n * C + c) * S + s;
                r.y.f32()[k] = static_cast<float>((x.f32()[k] - mean) * invstd * w + b);
            }
        r.save_mean.f32()[c] = static_cast<float>(mean);
        r.save_rstd.f32()[c] = static_cast<float>(invstd);
        const double unbiased = count > 1 ? sq / double(count - 1) : std::nan("");
        const double rm = in.rm ? in.mean()->f32()[c] : 0.0, rv = in.rv ? in.var()->f32()[c] : 1.0;
        r.new_rm.f32()[c] = static_cast<float>(momentum * mean + (1.0 - momentum) * rm);
        r.new_rv.f32()[c] = static_cast<float>(momentum * unbiased + (1.0 - momentum) * rv);
    }
    return r;
}

Result<Value> empty_of(const KernelOptions& opt, const char* op) {
    auto t = new_tensor(opt, ScalarType::Float, {0}, op);
    if (!t.ok()) return t.error();
    return Value::of(t.take());
}

Result<BnInputs> read_bn(const CallArgs& a, const char* op) {
    BnInputs in;
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    in.x = x.value();
    auto w = a.opt_tensor(1), b = a.opt_tensor(2), rm = a.opt_tensor(3), rv = a.opt_tensor(4);
    for (auto* r : {&w, &b, &rm, &rv})
        if (!r->ok()) return r->error();
    in.w = w.value(), in.b = b.value(), in.rm = rm.value(), in.rv = rv.value();
    Status s = check_bn(op, in);
    if (!s.ok()) return s.error();
    return in;
}

// (training, momentum, eps) at positions 5, 6, 7 (batch_norm and the functional form).
struct BnMode {
    bool training;
    double momentum, eps;
};
Result<BnMode> read_mode(const CallArgs& a) {
    auto training = a.boolean(5);
    auto momentum = a.real(6);
    auto eps = a.real(7);
    if (!training.ok()) return training.error();
    if (!momentum.ok()) return momentum.error();
    if (!eps.ok()) return eps.error();
    return BnMode{training.value(), momentum.value(), eps.value()};
}

} // namespace

// batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps,
// cudnn_enabled)
Result<Value> kernel_batch_norm(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten.batch_norm.default";
    auto in = read_bn(a, op);
    if (!in.ok()) return in.error();
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (in.value().x->numel() == 0) { // ATen's _batch_norm_impl_index: an empty result, stats kept
        auto y = copy_tensor(opt, *in.value().x, op);
        if (!y.ok()) return y.error();
        return Value::of(y.take());
    }
    if (!mode.value().training) {
        if (!in.value().rm || !in.value().rv)
            return kernel_error(
                "aten.batch_norm.default: eval mode needs running_mean and running_var");
        auto y = bn_eval(opt, op, in.value(), mode.value().eps);
        if (!y.ok()) return y.error();
        return Value::of(y.take());
    }
    auto tr = bn_train(opt, op, in.value(), mode.value().momentum, mode.value().eps);
    if (!tr.ok()) return tr.error();
    BnTrainResult& r = tr.value();
    // The running stats are buffers: updated in place, as BatchNorm does.
    if (in.value().rm) in.value().rm->storage = r.new_rm.storage;
    if (in.value().rv) in.value().rv->storage = r.new_rv.storage;
    return Value::of(std::move(r.y));
}

// _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var, momentum,
// eps)
//   -> (out, save_mean f32[0], save_rstd f32[0])  (empty on CPU, as ATen returns them)
Result<Value> kernel_native_bn_no_training(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten._native_batch_norm_legit_no_training.default";
    auto in = read_bn(a, op);
    if (!in.ok()) return in.error();
    if (!in.value().rm || !in.value().rv)
        return kernel_error("running_mean and running_var are required");
    auto eps = a.real(6);
    if (!eps.ok()) return eps.error();
    auto y = bn_eval(opt, op, in.value(), eps.value());
    if (!y.ok()) return y.error();
    auto m = empty_of(opt, op), r = empty_of(opt, op);
    if (!m.ok()) return m;
    if (!r.ok()) return r;
    return Value::tuple({Value::of(y.take()), m.take(), r.take()});
}

// _native_batch_norm_legit_functional(input, weight?, bias?, running_mean, running_var, training,
// momentum, eps)
//   -> (out, save_mean, save_rstd, new_running_mean, new_running_var); inputs are not modified.
Result<Value> kernel_native_bn_functional(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten._native_batch_norm_legit_functional.default";
    auto in = read_bn(a, op);
    if (!in.ok()) return in.error();
    if (!in.value().rm || !in.value().rv)
        return kernel_error("running_mean and running_var are required");
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (!mode.value().training) {
        auto y = bn_eval(opt, op, in.value(), mode.value().eps);
        if (!y.ok()) return y.error();
        auto m = empty_of(opt, op), r = empty_of(opt, op);
        if (!m.ok()) return m;
        if (!r.ok()) return r;
        auto rm = copy_tensor(opt, *in.value().rm, op), rv = copy_tensor(opt, *in.value().rv, op);
        if (!rm.ok()) return rm.error();
        if (!rv.ok()) return rv.error();
        return Value::tuple(
            {Value::of(y.take()), m.take(), r.take(), Value::of(rm.take()), Value::of(rv.take())});
    }
    auto tr = bn_train(opt, op, in.value(), mode.value().momentum, mode.value().eps);
    if (!tr.ok()) return tr.error();
    BnTrainResult& r = tr.value();
    return Value::tuple({Value::of(std::move(r.y)), Value::of(std::move(r.save_mean)),
                         Value::of(std::move(r.save_rstd)), Value::of(std::move(r.new_rm)),
                         Value::of(std::move(r.new_rv))});
}

} // namespace pt2lab

namespace pt2lab {

namespace {

// native_batch_norm / _native_batch_norm_legit: (out, save_mean, save_invstd).
// Train mode normalises with the batch statistics, returns them, and moves the
// running stats (when given) in place; eval mode uses the running stats and
// returns empty f32[0] for the saved statistics, as ATen's CPU kernel does.
Result<Value> native_bn(const CallArgs& a, const KernelOptions& opt, const char* op,
                        bool needs_running_stats) {
    auto in = read_bn(a, op);
    if (!in.ok()) return in.error();
    if (needs_running_stats && (!in.value().rm || !in.value().rv))
        return kernel_error(std::string(op) + ": running_mean and running_var are required");
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (!mode.value().training) {
        if (!in.value().rm || !in.value().rv)
            return kernel_error(std::string(op) + ": eval mode needs running_mean and running_var");
        auto y = bn_eval(opt, op, in.value(), mode.value().eps);
        if (!y.ok()) return y.error();
        auto m = empty_of(opt, op), r = empty_of(opt, op);
        if (!m.ok()) return m;
        if (!r.ok()) return r;
        return Value::tuple({Value::of(y.take()), m.take(), r.take()});
    }
    auto tr = bn_train(opt, op, in.value(), mode.value().momentum, mode.value().eps);
    if (!tr.ok()) return tr.error();
    BnTrainResult& r = tr.value();
    if (in.value().rm) in.value().rm->storage = r.new_rm.storage;
    if (in.value().rv) in.value().rv->storage = r.new_rv.storage;
    return Value::tuple({Value::of(std::move(r.y)), Value::of(std::move(r.save_mean)),
                         Value::of(std::move(r.save_rstd))});
}

} // namespace

// native_batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps)
Result<Value> kernel_native_batch_norm(const CallArgs& a, const KernelOptions& opt) {
    return native_bn(a, opt, "aten.native_batch_norm.default", false);
}

// _native_batch_norm_legit(input, weight?, bias?, running_mean(a!), running_var(b!), training,
// momentum, eps)
Result<Value> kernel_native_bn_legit(const CallArgs& a, const KernelOptions& opt) {
    return native_bn(a, opt, "aten._native_batch_norm_legit.default", true);
}

} // namespace pt2lab
