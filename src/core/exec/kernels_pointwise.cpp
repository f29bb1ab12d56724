// Elementwise kernels: relu, add/sub/mul with broadcasting (and their
// in-place forms), copy_.
#include <cmath>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

bool is_float(ScalarType t) {
    return t == ScalarType::Float || t == ScalarType::Double;
}

// Strides of `shape` as seen from `out` (0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& out) {
    std::vector<int64_t> strides(out.size(), 0);
    int64_t s = 1;
    for (size_t k = shape.size(); k-- > 0;) {
        size_t o = k + out.size() - shape.size();
        strides[o] = shape[k] == 1 ? 0 : s;
        s *= shape[k];
    }
    return strides;
}

// Calls fn(out_index, a_index, b_index) over the broadcast shape `out`.
template <class F>
void for_each_broadcast(const std::vector<int64_t>& out, const std::vector<int64_t>& sa,
                        const std::vector<int64_t>& sb, F&& fn) {
    int64_t n = 1;
    for (int64_t s : out) n *= s;
    std::vector<int64_t> idx(out.size(), 0);
    int64_t ia = 0, ib = 0;
    for (int64_t k = 0; k < n; ++k) {
        fn(k, ia, ib);
        for (size_t d = out.size(); d-- > 0;) {
            ++idx[d];
            ia += sa[d];
            ib += sb[d];
            if (idx[d] < out[d]) break;
            ia -= sa[d] * out[d];
            ib -= sb[d] * out[d];
            idx[d] = 0;
        }
    }
}

enum class BinOp { Add, Sub, Mul };

// out = a (op) alpha * b, with PyTorch's promotion for the cases graphs hold:
// float wins over integers; a Python int scalar keeps the tensor's dtype.
Result<Tensor> binary(const char* op, BinOp kind, const Tensor& a, const Value& bv, double alpha,
                      const ScalarType* out_dtype) {
    Tensor scalar_holder;
    const Tensor* b = nullptr;
    bool b_is_float;
    if (bv.is_tensor()) {
        b = bv.tensor.get();
        b_is_float = is_float(b->dtype);
    } else if (bv.is_number()) {
        scalar_holder = Tensor::empty(
            bv.kind == Value::Kind::Float ? ScalarType::Double : ScalarType::Long, {});
        scalar_holder.set(0, bv.number());
        b = &scalar_holder;
        b_is_float = bv.kind == Value::Kind::Float;
    } else {
        return kernel_error(std::string(op) + ": 'other' must be a tensor or a number, got " +
                            bv.describe());
    }
    ScalarType result = is_float(a.dtype) ? a.dtype : (b_is_float ? ScalarType::Float : a.dtype);
    if (bv.is_tensor() && is_float(b->dtype) && !is_float(a.dtype)) result = b->dtype;
    if (out_dtype) {
        if (is_float(result) && !is_float(*out_dtype))
            return kernel_error(std::string(op) + ": result type " +
                                (result == ScalarType::Float ? "Float" : "Double") +
                                " can't be cast to the desired output type " +
                                std::string(scalar_type_name(*out_dtype)));
        result = *out_dtype;
    }
    auto shape = broadcast_shapes(a.sizes, b->sizes);
    if (!shape.ok()) return kernel_error(std::string(op) + ": " + shape.error().message);
    if (out_dtype && shape.value() != a.sizes)
        return kernel_error(std::string(op) + ": output with shape " + shape_str(a.sizes) +
                            " doesn't match the broadcast shape " + shape_str(shape.value()));
    Tensor out = Tensor::empty(result, shape.value());
    auto sa = broadcast_strides(a.sizes, out.sizes), sb = broadcast_strides(b->sizes, out.sizes);
    if (result == ScalarType::Float) {
        const float al = static_cast<float>(alpha);
        float* o = out.f32();
        for_each_broadcast(out.sizes, sa, sb, [&](int64_t k, int64_t ia, int64_t ib) {
            float x = static_cast<float>(a.get(ia)), y = static_cast<float>(b->get(ib));
            switch (kind) {
            case BinOp::Add: o[k] = alpha == 1.0 ? x + y : x + al * y; break;
            case BinOp::Sub: o[k] = alpha == 1.0 ? x - y : x - al * y; break;
            case BinOp::Mul: o[k] = x * y; break;
            }
        });
    } else if (result == ScalarType::Long || result == ScalarType::Int) {
        const int64_t al = static_cast<int64_t>(alpha);
        for_each_broadcast(out.sizes, sa, sb, [&](int64_t k, int64_t ia, int64_t ib) {
            int64_t x = static_cast<int64_t>(a.get(ia)), y = static_cast<int64_t>(b->get(ib));
            int64_t v = kind == BinOp::Add ? x + al * y : kind == BinOp::Sub ? x - al * y : x * y;
            out.set(k, static_cast<double>(v));
        });
    } else {
        return kernel_error(std::string(op) + ": dtype " + std::string(scalar_type_name(result)) +
                            " is not supported");
    }
    return out;
}

Result<Value> binary_kernel(const CallArgs& a, const char* op, BinOp kind, bool in_place,
                            bool has_alpha) {
    auto self = a.tensor(0);
    if (!self.ok()) return self.error();
    double alpha = 1.0;
    if (has_alpha) {
        auto al = a.real(2);
        if (!al.ok()) return al.error();
        alpha = al.value();
    }
    ScalarType dt = self.value()->dtype;
    auto out = binary(op, kind, *self.value(), a[1], alpha, in_place ? &dt : nullptr);
    if (!out.ok()) return out.error();
    if (!in_place) return Value::of(out.take());
    // In place: the result is `self`, updated (the same tensor object).
    self.value()->storage = std::move(out.value().storage);
    return Value::of(self.value());
}

} // namespace

// relu(self): max(x, 0); NaN stays NaN (clamp_min semantics)
Result<Value> kernel_relu(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error("relu: expected float32, got " + x.value()->type_str());
    Tensor y = Tensor::empty(ScalarType::Float, x.value()->sizes);
    const float* xd = x.value()->f32();
    for (int64_t k = 0; k < y.numel(); ++k)
        y.f32()[k] = (xd[k] > 0.0f || std::isnan(xd[k])) ? xd[k] : 0.0f;
    return Value::of(std::move(y));
}

Result<Value> kernel_relu_(const CallArgs& a, const KernelOptions& opt) {
    auto y = kernel_relu(a, opt);
    if (!y.ok()) return y;
    a[0].tensor->storage = y.value().tensor->storage;
    return a[0];
}

Result<Value> kernel_add_tensor(const CallArgs& a, const KernelOptions&) {
    return binary_kernel(a, "aten.add.Tensor", BinOp::Add, false, true);
}
Result<Value> kernel_add_inplace(const CallArgs& a, const KernelOptions&) {
    return binary_kernel(a, "aten.add_.Tensor", BinOp::Add, true, true);
}
Result<Value> kernel_add_scalar(const CallArgs& a, const KernelOptions&) {
    return binary_kernel(a, "aten.add.Scalar", BinOp::Add, false, true);
}
Result<Value> kernel_sub_tensor(const CallArgs& a, const KernelOptions&) {
    return binary_kernel(a, "aten.sub.Tensor", BinOp::Sub, false, true);
}
Result<Value> kernel_mul_tensor(const CallArgs& a, const KernelOptions&) {
    return binary_kernel(a, "aten.mul.Tensor", BinOp::Mul, false, false);
}

// copy_(self, src, non_blocking=False): src (broadcast, converted) into self; returns self.
Result<Value> kernel_copy_(const CallArgs& a, const KernelOptions&) {
    auto self = a.tensor(0);
    if (!self.ok()) return self.error();
    auto src = a.tensor(1);
    if (!src.ok()) return src.error();
    Tensor& dst = *self.value();
    const Tensor& s = *src.value();
    auto shape = broadcast_shapes(dst.sizes, s.sizes);
    if (!shape.ok() || shape.value() != dst.sizes)
        return kernel_error("aten.copy_.default: cannot copy " + s.type_str() + " into " +
                            dst.type_str());
    auto ss = broadcast_strides(s.sizes, dst.sizes);
    auto sd = broadcast_strides(dst.sizes, dst.sizes);
    Tensor out = Tensor::empty(dst.dtype, dst.sizes);
    for_each_broadcast(dst.sizes, sd, ss,
                       [&](int64_t k, int64_t, int64_t is) { out.set(k, s.get(is)); });
    dst.storage = std::move(out.storage);
    return Value::of(self.value());
}

} // namespace pt2lab
