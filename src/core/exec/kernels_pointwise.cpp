// Elementwise kernels: relu, add/sub/mul/div with broadcasting (and their
// in-place forms), copy_.
#include <cmath>

#include "exec/kernels.h"
#include "util/checked.h"

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

enum class BinOp { Add, Sub, Mul, Div };

// Element k of an integer (or bool) tensor as int64, exactly (no trip through double).
int64_t get_i64(const Tensor& t, int64_t k) {
    switch (t.dtype) {
    case ScalarType::Long: return t.data<int64_t>()[k];
    case ScalarType::Int: return t.data<int32_t>()[k];
    case ScalarType::Byte:
    case ScalarType::Bool: return t.data<uint8_t>()[k];
    case ScalarType::Char: return t.data<int8_t>()[k];
    default: return saturate_cast<int64_t>(t.get(k));
    }
}

// Two's-complement wrap-around, as torch's int64 arithmetic does (C++ signed overflow
// is undefined).
int64_t wrap_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// o[k] = a[k] (op) alpha * b[k] over same-shape float32 tensors (a residual add):
// the broadcast loop's arithmetic, element for element, without its index
// bookkeeping and per-element dtype dispatch, so each loop vectorizes.
// Out of line: V8 swaps in optimized code between calls (see conv_fast.cpp).
// a, b, o: [n]
__attribute__((noinline)) void same_shape_f32(BinOp kind, const float* a, const float* b,
                                              double alpha, float* o, int64_t n) {
    const float al = static_cast<float>(alpha);
    switch (kind) {
    case BinOp::Add:
        if (alpha == 1.0)
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] + b[k];
        else
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] + al * b[k];
        break;
    case BinOp::Sub:
        if (alpha == 1.0)
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] - b[k];
        else
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] - al * b[k];
        break;
    case BinOp::Mul:
        for (int64_t k = 0; k < n; ++k) o[k] = a[k] * b[k];
        break;
    case BinOp::Div:
        for (int64_t k = 0; k < n; ++k) o[k] = a[k] / b[k];
        break;
    }
}

// One row of a float32 broadcast: o[k] = a[k * as] (op) alpha * b[k * bs], with each
// step 0 (a broadcast value) or 1; the same arithmetic as the element loop below.
// Out of line, like same_shape_f32. a, b: [n] or [1]; o: [n]
__attribute__((noinline)) void row_f32(BinOp kind, const float* a, int64_t as, const float* b,
                                       int64_t bs, double alpha, float* o, int64_t n) {
    if (as == 1 && bs == 1) return same_shape_f32(kind, a, b, alpha, o, n);
    const float al = static_cast<float>(alpha);
    if (as == 1) { // a row against one value of b (a squeeze-excitation scale, a bias)
        const float y = b[0];
        switch (kind) {
        case BinOp::Add:
            if (alpha == 1.0)
                for (int64_t k = 0; k < n; ++k) o[k] = a[k] + y;
            else
                for (int64_t k = 0; k < n; ++k) o[k] = a[k] + al * y;
            break;
        case BinOp::Sub:
            if (alpha == 1.0)
                for (int64_t k = 0; k < n; ++k) o[k] = a[k] - y;
            else
                for (int64_t k = 0; k < n; ++k) o[k] = a[k] - al * y;
            break;
        case BinOp::Mul:
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] * y;
            break;
        case BinOp::Div:
            for (int64_t k = 0; k < n; ++k) o[k] = a[k] / y;
            break;
        }
        return;
    }
    for (int64_t k = 0; k < n; ++k) {
        const float x = a[k * as], y = b[k * bs];
        switch (kind) {
        case BinOp::Add: o[k] = alpha == 1.0 ? x + y : x + al * y; break;
        case BinOp::Sub: o[k] = alpha == 1.0 ? x - y : x - al * y; break;
        case BinOp::Mul: o[k] = x * y; break;
        case BinOp::Div: o[k] = x / y; break;
        }
    }
}

// A float32 broadcast a row at a time: the dimensions both operands walk the same way
// are merged (TensorIterator's coalescing), so [1, C, H, W] * [1, C, 1, 1] is C rows of
// H * W against one value each, instead of an index walk per element. False when the
// innermost steps are not 0 or 1 (then the element loop does it).
bool broadcast_rows_f32(BinOp kind, const float* a, const float* b, double alpha, float* o,
                        std::vector<int64_t> shape, std::vector<int64_t> sa,
                        std::vector<int64_t> sb) {
    if (shape.empty()) return false;
    for (size_t d = shape.size() - 1; d-- > 0;) // merge d with d + 1 where both continue
        if (sa[d] == sa[d + 1] * shape[d + 1] && sb[d] == sb[d + 1] * shape[d + 1]) {
            shape[d] *= shape[d + 1];
            sa[d] = sa[d + 1], sb[d] = sb[d + 1];
            shape.erase(shape.begin() + d + 1);
            sa.erase(sa.begin() + d + 1);
            sb.erase(sb.begin() + d + 1);
        }
    const int64_t n = shape.back(), as = sa.back(), bs = sb.back();
    if ((as != 0 && as != 1) || (bs != 0 && bs != 1)) return false;
    shape.pop_back(), sa.pop_back(), sb.pop_back();
    if (shape.empty()) {
        row_f32(kind, a, as, b, bs, alpha, o, n);
        return true;
    }
    for_each_broadcast(shape, sa, sb, [&](int64_t r, int64_t ia, int64_t ib) {
        row_f32(kind, a + ia, as, b + ib, bs, alpha, o + r * n, n);
    });
    return true;
}

// out = a (op) alpha * b, with PyTorch's promotion for the cases graphs hold:
// float wins over integers; a Python int scalar keeps the tensor's dtype.
Result<Tensor> binary(const KernelOptions& opt, const char* op, BinOp kind, const Tensor& a,
                      const Value& bv, double alpha, const ScalarType* out_dtype) {
    Tensor scalar_holder;
    const Tensor* b = nullptr;
    bool b_is_float;
    if (bv.is_tensor()) {
        b = bv.tensor.get();
        b_is_float = is_float(b->dtype);
    } else if (bv.is_number()) {
        scalar_holder = Tensor::empty(
            bv.kind == Value::Kind::Float ? ScalarType::Double : ScalarType::Long, {});
        if (bv.kind == Value::Kind::Float)
            scalar_holder.set(0, bv.number());
        else
            scalar_holder.data<int64_t>()[0] = bv.kind == Value::Kind::Bool ? bv.b : bv.i;
        b = &scalar_holder;
        b_is_float = bv.kind == Value::Kind::Float;
    } else {
        return kernel_error(std::string(op) + ": 'other' must be a tensor or a number, got " +
                            bv.describe());
    }
    ScalarType result = is_float(a.dtype) ? a.dtype : (b_is_float ? ScalarType::Float : a.dtype);
    if (bv.is_tensor() && is_float(b->dtype) && !is_float(a.dtype)) result = b->dtype;
    if (kind == BinOp::Div && !is_float(result)) result = ScalarType::Float; // true division
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
    if (result != ScalarType::Float && result != ScalarType::Long && result != ScalarType::Int)
        return kernel_error(std::string(op) + ": dtype " + std::string(scalar_type_name(result)) +
                            " is not supported");
    auto made = new_tensor(opt, result, shape.value(), op);
    if (!made.ok()) return made;
    Tensor& out = made.value();
    auto sa = broadcast_strides(a.sizes, out.sizes), sb = broadcast_strides(b->sizes, out.sizes);
    if (result == ScalarType::Float && a.dtype == ScalarType::Float &&
        b->dtype == ScalarType::Float && a.sizes == b->sizes) {
        same_shape_f32(kind, a.f32(), b->f32(), alpha, out.f32(), out.numel());
    } else if (result == ScalarType::Float && a.dtype == ScalarType::Float &&
               b->dtype == ScalarType::Float && out.numel() > 0 &&
               broadcast_rows_f32(kind, a.f32(), b->f32(), alpha, out.f32(), out.sizes, sa, sb)) {
        // done, a row at a time
    } else if (result == ScalarType::Float) {
        const float al = static_cast<float>(alpha);
        float* o = out.f32();
        for_each_broadcast(out.sizes, sa, sb, [&](int64_t k, int64_t ia, int64_t ib) {
            float x = static_cast<float>(a.get(ia)), y = static_cast<float>(b->get(ib));
            switch (kind) {
            case BinOp::Add: o[k] = alpha == 1.0 ? x + y : x + al * y; break;
            case BinOp::Sub: o[k] = alpha == 1.0 ? x - y : x - al * y; break;
            case BinOp::Mul: o[k] = x * y; break;
            case BinOp::Div: o[k] = x / y; break;
            }
        });
    } else {
        const int64_t al = saturate_cast<int64_t>(alpha);
        for_each_broadcast(out.sizes, sa, sb, [&](int64_t k, int64_t ia, int64_t ib) {
            int64_t x = get_i64(a, ia), y = get_i64(*b, ib);
            int64_t v = kind == BinOp::Add   ? wrap_add(x, wrap_mul(al, y))
                        : kind == BinOp::Sub ? wrap_add(x, wrap_mul(wrap_mul(-1, al), y))
                                             : wrap_mul(x, y);
            if (result == ScalarType::Long)
                out.data<int64_t>()[k] = v;
            else
                out.data<int32_t>()[k] = static_cast<int32_t>(v); // wraps, like torch's int32
        });
    }
    return made;
}

Result<Value> binary_kernel(const CallArgs& a, const KernelOptions& opt, const char* op, BinOp kind,
                            bool in_place, bool has_alpha) {
    auto self = a.tensor(0);
    if (!self.ok()) return self.error();
    double alpha = 1.0;
    if (has_alpha) {
        auto al = a.real(2);
        if (!al.ok()) return al.error();
        alpha = al.value();
    }
    ScalarType dt = self.value()->dtype;
    auto out = binary(opt, op, kind, *self.value(), a[1], alpha, in_place ? &dt : nullptr);
    if (!out.ok()) return out.error();
    if (!in_place) return Value::of(out.take());
    // In place: the result is `self`, updated (the same tensor object).
    self.value()->storage = std::move(out.value().storage);
    return Value::of(self.value());
}

// y[k] = max(x[k], 0), NaN staying NaN (clamp_min semantics); y may be x (in place).
// Selects, not branches (random signs would mispredict), four lanes at a time;
// the arithmetic is conv_epilogue.h's, which a fused conv applies instead.
void relu_loop(const float* x, float* y, int64_t n) {
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) store4(y + k, relu4(load4(x + k)));
    for (; k < n; ++k) y[k] = relu1(x[k]);
}

} // namespace

// relu(self): max(x, 0); NaN stays NaN (clamp_min semantics)
Result<Value> kernel_relu(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dtype != ScalarType::Float)
        return kernel_error("relu: expected float32, got " + x.value()->type_str());
    auto yr = new_tensor(opt, ScalarType::Float, x.value()->sizes, "aten.relu.default");
    if (!yr.ok()) return yr.error();
    relu_loop(x.value()->f32(), yr.value().f32(), yr.value().numel()); // x, y: [any]
    return Value::of(yr.take());
}

// relu_(self): the same values written into self (every alias of it sees them).
Result<Value> kernel_relu_(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    Tensor& t = *a[0].tensor;
    if (t.dtype != ScalarType::Float)
        return kernel_error("relu_: expected float32, got " + t.type_str());
    if (Status s = charge_work(opt, t.numel(), "aten.relu_.default"); !s.ok()) return s.error();
    relu_loop(t.f32(), t.f32(), t.numel());
    return a[0];
}

Result<Value> kernel_add_tensor(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.add.Tensor", BinOp::Add, false, true);
}
Result<Value> kernel_add_inplace(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.add_.Tensor", BinOp::Add, true, true);
}
Result<Value> kernel_add_scalar(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.add.Scalar", BinOp::Add, false, true);
}
Result<Value> kernel_sub_tensor(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.sub.Tensor", BinOp::Sub, false, true);
}
Result<Value> kernel_mul_tensor(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.mul.Tensor", BinOp::Mul, false, false);
}
Result<Value> kernel_mul_scalar(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.mul.Scalar", BinOp::Mul, false, false);
}
// div.Tensor(self, other): true division (integers divide to float32)
Result<Value> kernel_div_tensor(const CallArgs& a, const KernelOptions& opt) {
    return binary_kernel(a, opt, "aten.div.Tensor", BinOp::Div, false, false);
}

// copy_(self, src, non_blocking=False): src (broadcast, converted) into self; returns self.
Result<Value> kernel_copy_(const CallArgs& a, const KernelOptions& opt) {
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
    auto made = new_tensor(opt, dst.dtype, dst.sizes, "aten.copy_.default");
    if (!made.ok()) return made.error();
    Tensor& out = made.value();
    for_each_broadcast(dst.sizes, sd, ss, [&](int64_t k, int64_t, int64_t is) {
        if (dst.dtype == ScalarType::Long && !is_float(s.dtype))
            out.data<int64_t>()[k] = get_i64(s, is); // exact, not through double
        else
            out.set(k, s.get(is));
    });
    dst.storage = std::move(out.storage);
    return Value::of(self.value());
}

} // namespace pt2lab
