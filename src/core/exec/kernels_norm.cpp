// Batch normalization at every IR level: batch_norm (eval and train, running
// stats updated in place), _native_batch_norm_legit_no_training and
// _native_batch_norm_legit_functional (new running stats as outputs).
#include <cmath>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

struct BnInputs {
    std::shared_ptr<Tensor> x, w, b, rm, rv;
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

// Eval: y = x * alpha + beta per channel, with alpha = w / sqrt(rv + eps) and
// beta = b - rm * alpha computed in float32 as ATen's CPU kernel does.
Tensor bn_eval(const BnInputs& in, double eps) {
    const Tensor& x = *in.x;
    const int64_t N = x.sizes[0], C = x.sizes[1], S = x.numel() / (N * C); // x: [N, C, S]
    Tensor y = Tensor::empty(ScalarType::Float, x.sizes);
    for (int64_t c = 0; c < C; ++c) {
        float mean = in.rm ? in.rm->f32()[c] : 0.0f;
        float var = in.rv ? in.rv->f32()[c] : 1.0f;
        float invstd = 1.0f / std::sqrt(var + static_cast<float>(eps));
        float alpha = invstd * (in.w ? in.w->f32()[c] : 1.0f);
        float beta = (in.b ? in.b->f32()[c] : 0.0f) - mean * alpha;
        for (int64_t n = 0; n < N; ++n) {
            const float* xs = x.f32() + (n * C + c) * S;
            float* ys = y.f32() + (n * C + c) * S;
            for (int64_t s = 0; s < S; ++s) ys[s] = xs[s] * alpha + beta;
        }
    }
    return y;
}

struct BnTrainResult {
    Tensor y, save_mean, save_rstd, new_rm, new_rv;
};

// Train: normalise with the batch statistics (biased variance); running stats
// move by `momentum` toward the batch mean and the unbiased batch variance.
BnTrainResult bn_train(const BnInputs& in, double momentum, double eps) {
    const Tensor& x = *in.x;
    const int64_t N = x.sizes[0], C = x.sizes[1], S = x.numel() / (N * C); // x: [N, C, S]
    const int64_t count = N * S;
    BnTrainResult r{Tensor::empty(ScalarType::Float, x.sizes),
                    Tensor::empty(ScalarType::Float, {C}), Tensor::empty(ScalarType::Float, {C}),
                    Tensor::empty(ScalarType::Float, {C}), Tensor::empty(ScalarType::Float, {C})};
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
        const double w = in.w ? in.w->f32()[c] : 1.0, b = in.b ? in.b->f32()[c] : 0.0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) {
                int64_t k = (n * C + c) * S + s;
                r.y.f32()[k] = static_cast<float>((x.f32()[k] - mean) * invstd * w + b);
            }
        r.save_mean.f32()[c] = static_cast<float>(mean);
        r.save_rstd.f32()[c] = static_cast<float>(invstd);
        const double unbiased = count > 1 ? sq / double(count - 1) : var;
        const double rm = in.rm ? in.rm->f32()[c] : 0.0, rv = in.rv ? in.rv->f32()[c] : 1.0;
        r.new_rm.f32()[c] = static_cast<float>(momentum * mean + (1.0 - momentum) * rm);
        r.new_rv.f32()[c] = static_cast<float>(momentum * unbiased + (1.0 - momentum) * rv);
    }
    return r;
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
Result<Value> kernel_batch_norm(const CallArgs& a, const KernelOptions&) {
    auto in = read_bn(a, "aten.batch_norm.default");
    if (!in.ok()) return in.error();
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (!mode.value().training) {
        if (!in.value().rm || !in.value().rv)
            return kernel_error(
                "aten.batch_norm.default: eval mode needs running_mean and running_var");
        return Value::of(bn_eval(in.value(), mode.value().eps));
    }
    BnTrainResult r = bn_train(in.value(), mode.value().momentum, mode.value().eps);
    // The running stats are buffers: updated in place, as BatchNorm does.
    if (in.value().rm) in.value().rm->storage = r.new_rm.storage;
    if (in.value().rv) in.value().rv->storage = r.new_rv.storage;
    return Value::of(std::move(r.y));
}

// _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var, momentum,
// eps)
//   -> (out, save_mean f32[0], save_rstd f32[0])  (empty on CPU, as ATen returns them)
Result<Value> kernel_native_bn_no_training(const CallArgs& a, const KernelOptions&) {
    auto in = read_bn(a, "aten._native_batch_norm_legit_no_training.default");
    if (!in.ok()) return in.error();
    if (!in.value().rm || !in.value().rv)
        return kernel_error("running_mean and running_var are required");
    auto eps = a.real(6);
    if (!eps.ok()) return eps.error();
    return Value::tuple({Value::of(bn_eval(in.value(), eps.value())),
                         Value::of(Tensor::empty(ScalarType::Float, {0})),
                         Value::of(Tensor::empty(ScalarType::Float, {0}))});
}

// _native_batch_norm_legit_functional(input, weight?, bias?, running_mean, running_var, training,
// momentum, eps)
//   -> (out, save_mean, save_rstd, new_running_mean, new_running_var); inputs are not modified.
Result<Value> kernel_native_bn_functional(const CallArgs& a, const KernelOptions&) {
    auto in = read_bn(a, "aten._native_batch_norm_legit_functional.default");
    if (!in.ok()) return in.error();
    if (!in.value().rm || !in.value().rv)
        return kernel_error("running_mean and running_var are required");
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (!mode.value().training) {
        return Value::tuple({Value::of(bn_eval(in.value(), mode.value().eps)),
                             Value::of(Tensor::empty(ScalarType::Float, {0})),
                             Value::of(Tensor::empty(ScalarType::Float, {0})),
                             Value::of(Tensor(*in.value().rm)), Value::of(Tensor(*in.value().rv))});
    }
    BnTrainResult r = bn_train(in.value(), mode.value().momentum, mode.value().eps);
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
Result<Value> native_bn(const CallArgs& a, const char* op, bool needs_running_stats) {
    auto in = read_bn(a, op);
    if (!in.ok()) return in.error();
    if (needs_running_stats && (!in.value().rm || !in.value().rv))
        return kernel_error(std::string(op) + ": running_mean and running_var are required");
    auto mode = read_mode(a);
    if (!mode.ok()) return mode.error();
    if (!mode.value().training) {
        if (!in.value().rm || !in.value().rv)
            return kernel_error(std::string(op) + ": eval mode needs running_mean and running_var");
        return Value::tuple({Value::of(bn_eval(in.value(), mode.value().eps)),
                             Value::of(Tensor::empty(ScalarType::Float, {0})),
                             Value::of(Tensor::empty(ScalarType::Float, {0}))});
    }
    BnTrainResult r = bn_train(in.value(), mode.value().momentum, mode.value().eps);
    if (in.value().rm) in.value().rm->storage = r.new_rm.storage;
    if (in.value().rv) in.value().rv->storage = r.new_rv.storage;
    return Value::tuple({Value::of(std::move(r.y)), Value::of(std::move(r.save_mean)),
                         Value::of(std::move(r.save_rstd))});
}

} // namespace

// native_batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps)
Result<Value> kernel_native_batch_norm(const CallArgs& a, const KernelOptions&) {
    return native_bn(a, "aten.native_batch_norm.default", false);
}

// _native_batch_norm_legit(input, weight?, bias?, running_mean(a!), running_var(b!), training,
// momentum, eps)
Result<Value> kernel_native_bn_legit(const CallArgs& a, const KernelOptions&) {
    return native_bn(a, "aten._native_batch_norm_legit.default", true);
}

} // namespace pt2lab
