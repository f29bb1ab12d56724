// Comparison, boolean and selection kernels (what sdpa's Core ATen form uses for
// fully masked rows): eq.Scalar, logical_not, any.dim, where.self, full_like; the
// factories full and zeros (an LSTM's initial state).
#include <cmath>
#include <cstring>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

namespace {

bool truthy(const Tensor& t, int64_t k) {
    double v = t.get(k);
    return v != 0.0 || std::isnan(v);
}

} // namespace

// eq.Scalar(self, other) -> bool tensor
Result<Value> kernel_eq_scalar(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto other = a.real(1);
    if (!other.ok()) return other.error();
    auto yr = new_tensor(opt, ScalarType::Bool, x.value()->sizes, "aten.eq.Scalar");
    if (!yr.ok()) return yr.error();
    const Tensor& in = *x.value();
    // A float tensor compares in float32 (the scalar rounded to it), as torch does.
    const double o =
        in.dtype == ScalarType::Float ? double(static_cast<float>(other.value())) : other.value();
    for (int64_t k = 0; k < in.numel(); ++k) yr.value().data<uint8_t>()[k] = in.get(k) == o;
    return Value::of(yr.take());
}

// logical_not(self) -> bool tensor
Result<Value> kernel_logical_not(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto yr = new_tensor(opt, ScalarType::Bool, x.value()->sizes, "aten.logical_not.default");
    if (!yr.ok()) return yr.error();
    for (int64_t k = 0; k < x.value()->numel(); ++k)
        yr.value().data<uint8_t>()[k] = !truthy(*x.value(), k);
    return Value::of(yr.take());
}

// any.dim(self, dim, keepdim=False) -> bool tensor (uint8 for a uint8 input, as torch)
Result<Value> kernel_any_dim(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.any.dim";
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto d = a.integer(1);
    if (!d.ok()) return d.error();
    auto keep = a.boolean(2);
    if (!keep.ok()) return keep.error();
    const Tensor& in = *x.value();
    auto dim = wrap_dim(d.value(), std::max<int64_t>(in.dim(), 1));
    if (!dim.ok()) return kernel_error(op + ": " + dim.error().message);
    std::vector<int64_t> out = in.sizes;
    int64_t outer = 1, inner = 1, n = 1;
    if (in.dim() > 0) {
        n = in.sizes[static_cast<size_t>(dim.value())];
        for (int64_t k = 0; k < dim.value(); ++k) outer *= in.sizes[static_cast<size_t>(k)];
        for (int64_t k = dim.value() + 1; k < in.dim(); ++k)
            inner *= in.sizes[static_cast<size_t>(k)];
        if (keep.value())
            out[static_cast<size_t>(dim.value())] = 1;
        else
            out.erase(out.begin() + dim.value());
    }
    const ScalarType dt = in.dtype == ScalarType::Byte ? ScalarType::Byte : ScalarType::Bool;
    auto yr = new_tensor(opt, dt, out, op);
    if (!yr.ok()) return yr.error();
    for (int64_t o = 0; o < outer; ++o) // x: [outer, n, inner] -> y: [outer, inner]
        for (int64_t i = 0; i < inner; ++i) {
            bool any = false;
            for (int64_t k = 0; k < n && !any; ++k) any = truthy(in, (o * n + k) * inner + i);
            yr.value().data<uint8_t>()[o * inner + i] = any;
        }
    return Value::of(yr.take());
}

// where.self(condition, self, other): condition ? self : other, broadcast over all three
Result<Value> kernel_where_self(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.where.self";
    auto c = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
    if (!c.ok()) return c.error();
    if (!x.ok()) return x.error();
    if (!y.ok()) return y.error();
    const Tensor &C = *c.value(), &X = *x.value(), &Y = *y.value();
    if (C.dtype != ScalarType::Bool && C.dtype != ScalarType::Byte)
        return kernel_error(op +
                            ": where expected condition to be a boolean tensor, but got a "
                            "tensor with dtype " +
                            std::string(scalar_type_name(C.dtype)));
    if (X.dtype != Y.dtype)
        return kernel_error(op + ": self " + X.type_str() + " and other " + Y.type_str() +
                            " must have the same dtype here");
    auto s1 = broadcast_shapes(C.sizes, X.sizes);
    if (!s1.ok()) return kernel_error(op + ": " + s1.error().message);
    auto shape = broadcast_shapes(s1.value(), Y.sizes);
    if (!shape.ok()) return kernel_error(op + ": " + shape.error().message);
    auto yr = new_tensor(opt, X.dtype, shape.value(), op);
    if (!yr.ok()) return yr.error();
    Tensor& out = yr.value();
    const std::vector<int64_t>& os = out.sizes;
    // Index of element k of `out` in a tensor of shape `s` broadcast to `os`.
    auto source = [&](const std::vector<int64_t>& s, int64_t k) {
        int64_t idx = 0, stride = 1, rem = k;
        for (size_t d = os.size(); d-- > 0;) {
            const int64_t coord = rem % os[d];
            rem /= os[d];
            const size_t sd = d + s.size();
            if (sd < os.size()) continue;
            const int64_t size = s[sd - os.size()];
            idx += (size == 1 ? 0 : coord) * stride;
            stride *= size;
        }
        return idx;
    };
    const size_t item = scalar_type_size(X.dtype);
    for (int64_t k = 0; k < out.numel(); ++k) {
        const bool take_x = C.data<uint8_t>()[source(C.sizes, k)] != 0;
        const Tensor& from = take_x ? X : Y;
        std::memcpy(&out.storage[static_cast<size_t>(k) * item],
                    &from.storage[static_cast<size_t>(source(from.sizes, k)) * item], item);
    }
    return Value::of(yr.take());
}

// full_like(self, fill_value, *, dtype=None, layout, device, pin_memory, memory_format)
Result<Value> kernel_full_like(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto fill = a.real(1);
    if (!fill.ok()) return fill.error();
    ScalarType dt = a[2].kind == Value::Kind::Dtype ? a[2].dtype : x.value()->dtype;
    auto yr = new_tensor(opt, dt, x.value()->sizes, "aten.full_like.default");
    if (!yr.ok()) return yr.error();
    for (int64_t k = 0; k < yr.value().numel(); ++k) yr.value().set(k, fill.value());
    return Value::of(yr.take());
}

namespace {
// A factory's result: `sizes` (each >= 0) of `dtype` filled with `value`; `name` is
// what torch's refusal of a negative size names ("zeros").
Result<Value> filled(const KernelOptions& opt, const std::vector<int64_t>& sizes, ScalarType dtype,
                     double value, const std::string& op, const std::string& name) {
    for (int64_t s : sizes)
        if (s < 0)
            return kernel_error(op + ": " + name + ": Dimension size must be non-negative.",
                                "size " + shape_str(sizes));
    auto yr = new_tensor(opt, dtype, sizes, op);
    if (!yr.ok()) return yr.error();
    if (value != 0.0) // new_tensor zero-fills
        for (int64_t k = 0; k < yr.value().numel(); ++k) yr.value().set(k, value);
    return Value::of(yr.take());
}
} // namespace

// full(size, fill_value, *, dtype=None, layout, device, pin_memory): without a dtype,
// the fill value's (float32 for a float, int64 for an int, bool for a bool), as torch
Result<Value> kernel_full(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.full.default";
    auto size = a.ints(0);
    if (!size.ok()) return size.error();
    auto fill = a.real(1);
    if (!fill.ok()) return fill.error();
    ScalarType dt = a[2].kind == Value::Kind::Dtype  ? a[2].dtype
                    : a[1].kind == Value::Kind::Int  ? ScalarType::Long
                    : a[1].kind == Value::Kind::Bool ? ScalarType::Bool
                                                     : ScalarType::Float;
    return filled(opt, size.value(), dt, fill.value(), op, "full");
}

// zeros(size, *, dtype=None, layout, device, pin_memory): float32 unless a dtype is given
Result<Value> kernel_zeros(const CallArgs& a, const KernelOptions& opt) {
    auto size = a.ints(0);
    if (!size.ok()) return size.error();
    ScalarType dt = a[1].kind == Value::Kind::Dtype ? a[1].dtype : ScalarType::Float;
    return filled(opt, size.value(), dt, 0.0, "aten.zeros.default", "zeros");
}

} // namespace pt2lab
