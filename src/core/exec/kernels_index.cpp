// Indexing and scatter kernels the Swin and MaxViT exports reach: index.Tensor
// (advanced indexing with integer index tensors), slice_scatter, constant_pad_nd
// and pad (constant mode), alias, zero and
// zero_, expand_as (as_strided: kernels_strided.cpp). Results are contiguous copies, as
// every executor tensor is.
#include <cstring>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Result<Value> kernel_expand(const CallArgs& a, const KernelOptions& opt);

namespace {

// Row-major coordinates of flat index k in `sizes` (innermost last).
void unravel(int64_t k, const std::vector<int64_t>& sizes, std::vector<int64_t>& coord) {
    coord.assign(sizes.size(), 0);
    for (size_t d = sizes.size(); d-- > 0;) {
        if (sizes[d] == 0) return;
        coord[d] = k % sizes[d];
        k /= sizes[d];
    }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> s(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) s[d - 1] = s[d] * sizes[d];
    return s;
}

} // namespace

// index.Tensor(self, indices): self[indices], each non-None index an integer tensor
// (int64 / int32) indexing one dim; the indices broadcast together. Their result dims
// stand where the indexed dims were when those are adjacent, else in front (numpy's
// rule, as torch). x: [..], indices: up to rank(x) tensors or None.
Result<Value> kernel_index_tensor(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.index.Tensor";
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const Tensor& in = *x.value();
    const Value& list = a[1];
    if (list.kind != Value::Kind::Tuple)
        return kernel_error(op + ": argument 'indices' must be a list of tensors or None, got " +
                            list.describe());
    if (static_cast<int64_t>(list.items.size()) > in.dim())
        return kernel_error(op + ": too many indices for tensor of dimension " +
                            std::to_string(in.dim()) + " (got " +
                            std::to_string(list.items.size()) + ")");
    std::vector<const Tensor*> idx(static_cast<size_t>(in.dim()), nullptr);
    std::vector<int64_t> bshape;
    int64_t first = -1, last = -1;
    bool adjacent = true;
    for (size_t d = 0; d < list.items.size(); ++d) {
        const Value& v = list.items[d];
        if (v.kind == Value::Kind::None) continue;
        if (!v.is_tensor())
            return kernel_error(op + ": index " + std::to_string(d) +
                                " must be a tensor or None, got " + v.describe());
        const Tensor& t = *v.tensor;
        if (t.dtype != ScalarType::Long && t.dtype != ScalarType::Int)
            return kernel_error(op + ": tensors used as indices must be long or int tensors, got " +
                                    t.type_str(),
                                "boolean masks are not supported by pt2lab's index kernel");
        auto b = broadcast_shapes(bshape, t.sizes);
        if (!b.ok())
            return kernel_error(op +
                                ": shape mismatch: indexing tensors could not be broadcast "
                                "together: " +
                                b.error().message);
        bshape = b.take();
        idx[d] = &t;
        if (first >= 0 && last != static_cast<int64_t>(d) - 1) adjacent = false;
        if (first < 0) first = static_cast<int64_t>(d);
        last = static_cast<int64_t>(d);
    }
    if (first < 0) { // no index tensor: a copy
        auto y = copy_tensor(opt, in, op);
        if (!y.ok()) return y.error();
        return Value::of(y.take());
    }
    // Result dims: kept dims before `first` (adjacent case), the broadcast index dims,
    // then the remaining kept dims.
    std::vector<int64_t> out;
    std::vector<int64_t> kept; // x dims not indexed, in order
    for (int64_t d = 0; d < in.dim(); ++d)
        if (!idx[static_cast<size_t>(d)]) kept.push_back(d);
    const int64_t at = adjacent ? first : 0; // where the broadcast dims start in `out`
    size_t kept_before = 0;
    while (kept_before < kept.size() && kept[kept_before] < at) ++kept_before;
    for (size_t k = 0; k < kept_before; ++k) out.push_back(in.sizes[static_cast<size_t>(kept[k])]);
    out.insert(out.end(), bshape.begin(), bshape.end());
    for (size_t k = kept_before; k < kept.size(); ++k)
        out.push_back(in.sizes[static_cast<size_t>(kept[k])]);
    auto yr = new_tensor(opt, in.dtype, out, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    const std::vector<int64_t> xs = strides_of(in.sizes);
    const size_t item = scalar_type_size(in.dtype);
    const size_t nb = bshape.size();
    std::vector<int64_t> oc, bc(nb);
    for (int64_t k = 0; k < y.numel(); ++k) {
        unravel(k, out, oc);
        // the broadcast coordinate, then each index tensor's element at it
        for (size_t j = 0; j < nb; ++j) bc[j] = oc[kept_before + j];
        int64_t src = 0;
        for (size_t k2 = 0; k2 < kept.size(); ++k2) {
            const size_t pos = k2 < kept_before ? k2 : k2 + nb;
            src += oc[pos] * xs[static_cast<size_t>(kept[k2])];
        }
        for (int64_t d = 0; d < in.dim(); ++d) {
            const Tensor* t = idx[static_cast<size_t>(d)];
            if (!t) continue;
            int64_t e = 0, s = 1; // t's element at bc, t broadcast to bshape
            for (size_t j = t->sizes.size(); j-- > 0;) {
                const int64_t c = bc[j + nb - t->sizes.size()];
                e += (t->sizes[j] == 1 ? 0 : c) * s;
                s *= t->sizes[j];
            }
            int64_t i = static_cast<int64_t>(t->get(e));
            const int64_t n = in.sizes[static_cast<size_t>(d)];
            if (i < -n || i >= n)
                return kernel_error(op + ": index " + std::to_string(i) +
                                    " is out of bounds for dimension " + std::to_string(d) +
                                    " with size " + std::to_string(n));
            if (i < 0) i += n;
            src += i * xs[static_cast<size_t>(d)];
        }
        std::memcpy(&y.storage[static_cast<size_t>(k) * item],
                    &in.storage[static_cast<size_t>(src) * item], item);
    }
    return Value::of(yr.take());
}

namespace {

// base[..., start::step (length), ...] = src along r.dim, in place.
// base: [outer, n, inner], src: [outer, length, inner] (same dtype).
Status scatter_slice(Tensor& base, const Tensor& src, const SliceRange& r, const std::string& op) {
    std::vector<int64_t> want = base.sizes;
    want[static_cast<size_t>(r.dim)] = r.length;
    if (src.sizes != want)
        return kernel_error(op +
                            ": expected src to have a size equal to the slice of self. src "
                            "size = " +
                            shape_str(src.sizes) + ", slice size = " + shape_str(want));
    if (src.dtype != base.dtype)
        return kernel_error(op + ": src " + src.type_str() + " and self " + base.type_str() +
                            " must have the same dtype");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r.dim; ++d) outer *= base.sizes[static_cast<size_t>(d)];
    for (int64_t d = r.dim + 1; d < base.dim(); ++d) inner *= base.sizes[static_cast<size_t>(d)];
    const int64_t n = base.sizes[static_cast<size_t>(r.dim)];
    const size_t item = scalar_type_size(base.dtype);
    uint8_t* out = base.storage.data();
    const uint8_t* in = src.storage.data();
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < r.length; ++k)
            std::memcpy(out + static_cast<size_t>((o * n + r.start + k * r.step) * inner) * item,
                        in + static_cast<size_t>((o * r.length + k) * inner) * item,
                        static_cast<size_t>(inner) * item);
    return {};
}

} // namespace

// slice_scatter(self, src, dim=0, start=None, end=None, step=1): a copy of self whose
// slice (as slice.Tensor takes it) is src
Result<Value> kernel_slice_scatter(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.slice_scatter.default";
    auto x = a.tensor(0), src = a.tensor(1);
    if (!x.ok()) return x.error();
    if (!src.ok()) return src.error();
    auto r = slice_range(a, 2, *x.value(), op);
    if (!r.ok()) return r.error();
    auto y = copy_tensor(opt, *x.value(), op);
    if (!y.ok()) return y.error();
    if (Status s = scatter_slice(y.value(), *src.value(), r.value(), op); !s.ok()) return s.error();
    return Value::of(y.take());
}

// A write into a slice writes the sliced tensor (torch's view semantics, which the
// executor's contiguous slice copies lack): `slice` holds slice.Tensor's arguments,
// `written` the slice's values after an in-place op; they go back into the base
// (argument 0 of `slice`), which later readers share.
Status write_back_slice(const CallArgs& slice, const Tensor& written) {
    const std::string op = "aten.slice.Tensor";
    auto base = slice.tensor(0);
    if (!base.ok()) return base.error();
    auto r = slice_range(slice, 1, *base.value(), op);
    if (!r.ok()) return r.error();
    return scatter_slice(*base.value(), written, r.value(), op + " (written in place)");
}

namespace {

// x padded by `pad` (pairs from the last dim backwards; negative entries crop),
// new elements `value`. x: [..] -> y: [.., size + lo + hi].
Result<Value> pad_constant(const KernelOptions& opt, const Tensor& x,
                           const std::vector<int64_t>& pad, double value, const std::string& op) {
    if (pad.size() % 2 != 0)
        return kernel_error(op + ": Length of pad must be even but instead it equals " +
                            std::to_string(pad.size()));
    if (static_cast<int64_t>(pad.size() / 2) > x.dim())
        return kernel_error(op +
                            ": Length of pad should be no more than twice the number of "
                            "dimensions of the input. Pad length is " +
                            std::to_string(pad.size()) + " while the input has " +
                            std::to_string(x.dim()) + " dimensions.");
    std::vector<int64_t> lo(static_cast<size_t>(x.dim()), 0), out = x.sizes;
    for (size_t p = 0; p < pad.size() / 2; ++p) {
        const size_t d = static_cast<size_t>(x.dim()) - 1 - p;
        lo[d] = pad[2 * p];
        out[d] = x.sizes[d] + pad[2 * p] + pad[2 * p + 1];
        if (out[d] < 0)
            return kernel_error(op + ": The input size " + std::to_string(x.sizes[d]) +
                                ", plus negative padding " + std::to_string(pad[2 * p]) + " and " +
                                std::to_string(pad[2 * p + 1]) +
                                " resulted in a negative output size, which is invalid. Check "
                                "dimension " +
                                std::to_string(d) + " of your input.");
    }
    auto yr = new_tensor(opt, x.dtype, out, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    const std::vector<int64_t> xs = strides_of(x.sizes);
    std::vector<int64_t> c;
    for (int64_t k = 0; k < y.numel(); ++k) {
        unravel(k, out, c);
        int64_t src = 0;
        bool inside = true;
        for (size_t d = 0; d < c.size() && inside; ++d) {
            const int64_t s = c[d] - lo[d];
            inside = s >= 0 && s < x.sizes[d];
            src += s * xs[d];
        }
        y.set(k, inside ? x.get(src) : value);
    }
    return Value::of(yr.take());
}

} // namespace

// constant_pad_nd(self, pad, value=0)
Result<Value> kernel_constant_pad_nd(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto pad = a.ints(1);
    if (!pad.ok()) return pad.error();
    auto value = a.real(2);
    if (!value.ok()) return value.error();
    return pad_constant(opt, *x.value(), pad.value(), value.value(),
                        "aten.constant_pad_nd.default");
}

// pad(self, pad, mode="constant", value=None): the constant mode (value None is 0)
Result<Value> kernel_pad(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.pad.default";
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto pad = a.ints(1);
    if (!pad.ok()) return pad.error();
    const std::string mode = a[2].kind == Value::Kind::String ? a[2].s : "constant";
    if (mode != "constant")
        return kernel_error(op + ": padding mode '" + mode + "' is not supported",
                            "pt2lab pads with a constant only");
    double value = 0.0;
    if (a[3].kind != Value::Kind::None) {
        auto v = a.real(3);
        if (!v.ok()) return v.error();
        value = v.value();
    }
    if (pad.value().size() % 2 != 0)
        return kernel_error(op + ": Padding length must be divisible by 2");
    if (static_cast<int64_t>(pad.value().size()) > 2 * x.value()->dim())
        return kernel_error(op +
                            ": Padding length should be less than or equal to two times the "
                            "input dimension but got padding length " +
                            std::to_string(pad.value().size()) + " and input of dimension " +
                            std::to_string(x.value()->dim()));
    return pad_constant(opt, *x.value(), pad.value(), value, op);
}

// alias(self): self's values (a copy: the executor has no views)
Result<Value> kernel_alias(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto y = copy_tensor(opt, *x.value(), "aten.alias.default");
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

// zero(self): zeros of self's shape and dtype
Result<Value> kernel_zero(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto y = new_tensor(opt, x.value()->dtype, x.value()->sizes, "aten.zero.default");
    if (!y.ok()) return y.error();
    return Value::of(y.take());
}

// zero_(self): self set to zeros in place (the same tensor object, so its aliases see it)
Result<Value> kernel_zero_(const CallArgs& a, const KernelOptions& opt) {
    auto y = kernel_zero(a, opt);
    if (!y.ok()) return y;
    a[0].tensor->storage = std::move(y.value().tensor->storage);
    return a[0];
}

// expand_as(self, other): expand(self, other.size())
Result<Value> kernel_expand_as(const CallArgs& a, const KernelOptions& opt) {
    auto other = a.tensor(1);
    if (!other.ok()) return other.error();
    std::vector<Value> sizes;
    for (int64_t s : other.value()->sizes) sizes.push_back(Value::integer(s));
    static const OpSchema& expand = find_op("torch.ops.aten.expand.default")->schema;
    return kernel_expand(
        CallArgs(expand, {a[0], Value::tuple(std::move(sizes)), Value::boolean(false)}), opt);
}

} // namespace pt2lab
