// View-like shape kernels the vision and transformer exports reach (results are
// materialized contiguous copies, as every executor tensor is contiguous):
// transpose, select, slice, squeeze, unsqueeze, unflatten, expand, contiguous,
// _unsafe_view; and the ops that split or join along a dimension: cat, chunk,
// split, split_with_sizes.
#include <cstring>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Result<Value> kernel_permute(const CallArgs& a, const KernelOptions& opt);
Result<Value> kernel_view(const CallArgs& a, const KernelOptions& opt);

namespace {

// A copy of x with new sizes (same element count, same bytes).
Result<Value> reshaped(const KernelOptions& opt, const Tensor& x, std::vector<int64_t> sizes,
                       const std::string& op) {
    auto y = copy_tensor(opt, x, op);
    if (!y.ok()) return y.error();
    y.value().sizes = std::move(sizes);
    return Value::of(y.take());
}

// Sizes as [outer, size(dim), inner] around `dim`.
void split_dims(const Tensor& x, int64_t dim, int64_t& outer, int64_t& inner) {
    outer = 1;
    inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.sizes[static_cast<size_t>(d)];
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.sizes[static_cast<size_t>(d)];
}

// y = x[..., start:start + length, ...] along dim (contiguous copy).
Result<Tensor> narrow_copy(const KernelOptions& opt, const Tensor& x, int64_t dim, int64_t start,
                           int64_t length, const std::string& op) {
    std::vector<int64_t> sizes = x.sizes;
    sizes[static_cast<size_t>(dim)] = length;
    auto yr = new_tensor(opt, x.dtype, sizes, op);
    if (!yr.ok()) return yr;
    int64_t outer, inner;
    split_dims(x, dim, outer, inner);
    const int64_t n = x.sizes[static_cast<size_t>(dim)];
    const size_t item = scalar_type_size(x.dtype);
    const size_t row = static_cast<size_t>(length * inner) * item;
    for (int64_t o = 0; o < outer; ++o) // x: [outer, n, inner] -> y: [outer, length, inner]
        if (row)
            std::memcpy(&yr.value().storage[static_cast<size_t>(o) * row],
                        &x.storage[static_cast<size_t>((o * n + start) * inner) * item], row);
    return yr;
}

// The pieces of x along dim with the given lengths (they sum to size(dim)).
Result<Value> pieces(const KernelOptions& opt, const Tensor& x, int64_t dim,
                     const std::vector<int64_t>& lengths, const std::string& op) {
    std::vector<Value> out;
    int64_t start = 0;
    for (int64_t len : lengths) {
        auto p = narrow_copy(opt, x, dim, start, len, op);
        if (!p.ok()) return p.error();
        out.push_back(Value::of(p.take()));
        start += len;
    }
    return Value::tuple(std::move(out));
}

Result<int64_t> dim_arg(const CallArgs& a, size_t i, int64_t rank, const std::string& op) {
    auto d = a.integer(i);
    if (!d.ok()) return d.error();
    auto w = wrap_dim(d.value(), rank);
    if (!w.ok()) return kernel_error(op + ": " + w.error().message);
    return w.value();
}

} // namespace

// transpose.int(self, dim0, dim1): swaps two dimensions
Result<Value> kernel_transpose(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.transpose.int";
    const int64_t r = std::max<int64_t>(x.value()->dim(), 1);
    auto d0 = dim_arg(a, 1, r, op), d1 = dim_arg(a, 2, r, op);
    if (!d0.ok()) return d0.error();
    if (!d1.ok()) return d1.error();
    if (x.value()->dim() == 0) return reshaped(opt, *x.value(), {}, op);
    std::vector<Value> perm;
    for (int64_t d = 0; d < r; ++d)
        perm.push_back(Value::integer(d == d0.value()   ? d1.value()
                                      : d == d1.value() ? d0.value()
                                                        : d));
    CallArgs p(op_info(OpId::permute).schema, {a[0], Value::tuple(std::move(perm))});
    return kernel_permute(p, opt);
}

// select.int(self, dim, index): x[..., index, ...], that dimension removed
Result<Value> kernel_select(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.select.int";
    const Tensor& in = *x.value();
    if (in.dim() == 0) return kernel_error(op + ": select() cannot be applied to a 0-dim tensor.");
    auto dim = dim_arg(a, 1, in.dim(), op);
    if (!dim.ok()) return dim.error();
    auto index = a.integer(2);
    if (!index.ok()) return index.error();
    const int64_t n = in.sizes[static_cast<size_t>(dim.value())];
    int64_t i = index.value();
    if (i < -n || i >= n)
        return kernel_error(op + ": select(): index " + std::to_string(i) +
                            " out of range for tensor of size " + shape_str(in.sizes) +
                            " at dimension " + std::to_string(dim.value()));
    if (i < 0) i += n;
    auto y = narrow_copy(opt, in, dim.value(), i, 1, op);
    if (!y.ok()) return y.error();
    y.value().sizes.erase(y.value().sizes.begin() + dim.value());
    return Value::of(y.take());
}

Result<SliceRange> slice_range(const CallArgs& a, size_t first, const Tensor& x,
                               const std::string& op) {
    if (x.dim() == 0) return kernel_error(op + ": slice() cannot be applied to a 0-dim tensor.");
    auto dim = dim_arg(a, first, x.dim(), op);
    if (!dim.ok()) return dim.error();
    auto step = a.integer(first + 3);
    if (!step.ok()) return step.error();
    if (step.value() <= 0) return kernel_error(op + ": slice step must be positive");
    const int64_t n = x.sizes[static_cast<size_t>(dim.value())];
    auto bound = [&](size_t i, int64_t absent) -> Result<int64_t> {
        if (a[i].kind == Value::Kind::None) return absent;
        auto v = a.integer(i);
        if (!v.ok()) return v.error();
        int64_t b = v.value();
        if (b < 0) b = b < -n ? 0 : b + n;
        return b > n ? n : b;
    };
    auto start = bound(first + 1, 0), end = bound(first + 2, n);
    if (!start.ok()) return start.error();
    if (!end.ok()) return end.error();
    SliceRange r;
    r.dim = dim.value();
    r.start = start.value();
    r.step = step.value();
    r.length = end.value() > r.start ? (end.value() - r.start + r.step - 1) / r.step : 0;
    return r;
}

// slice.Tensor(self, dim=0, start=None, end=None, step=1): x[..., start:end:step, ...] along
// dim, start and end clamped into [0, size(dim)] as Python's slices are (a copy, as select's)
Result<Value> kernel_slice(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.slice.Tensor";
    const Tensor& in = *x.value();
    auto r = slice_range(a, 1, in, op);
    if (!r.ok()) return r.error();
    const int64_t n = in.sizes[static_cast<size_t>(r.value().dim)];
    const int64_t s = r.value().start, st = r.value().step, len = r.value().length;
    const int64_t dim = r.value().dim;
    if (st == 1) {
        auto y = narrow_copy(opt, in, dim, s, len, op);
        if (!y.ok()) return y.error();
        return Value::of(y.take());
    }
    std::vector<int64_t> sizes = in.sizes;
    sizes[static_cast<size_t>(dim)] = len;
    auto yr = new_tensor(opt, in.dtype, sizes, op);
    if (!yr.ok()) return yr.error();
    int64_t outer, inner;
    split_dims(in, dim, outer, inner);
    const size_t item = scalar_type_size(in.dtype);
    const size_t row = static_cast<size_t>(inner) * item;
    for (int64_t o = 0; o < outer; ++o) // x: [outer, n, inner] -> y: [outer, len, inner]
        for (int64_t k = 0; k < len && row; ++k)
            std::memcpy(&yr.value().storage[static_cast<size_t>(o * len + k) * row],
                        &in.storage[static_cast<size_t>((o * n + s + k * st) * inner) * item], row);
    return Value::of(yr.take());
}

// squeeze.dim(self, dim): drops dim if its size is 1
Result<Value> kernel_squeeze_dim(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.squeeze.dim";
    const Tensor& in = *x.value();
    auto dim = dim_arg(a, 1, std::max<int64_t>(in.dim(), 1), op);
    if (!dim.ok()) return dim.error();
    std::vector<int64_t> sizes = in.sizes;
    if (in.dim() > 0 && sizes[static_cast<size_t>(dim.value())] == 1)
        sizes.erase(sizes.begin() + dim.value());
    return reshaped(opt, in, sizes, op);
}

// squeeze.dims(self, dim[]): drops each listed dim whose size is 1
Result<Value> kernel_squeeze_dims(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto dims = a.ints(1);
    if (!dims.ok()) return dims.error();
    const std::string op = "aten.squeeze.dims";
    const Tensor& in = *x.value();
    std::vector<bool> drop(in.sizes.size(), false);
    for (int64_t d : dims.value()) {
        auto w = wrap_dim(d, std::max<int64_t>(in.dim(), 1));
        if (!w.ok()) return kernel_error(op + ": " + w.error().message);
        if (in.dim() == 0) continue;
        if (drop[static_cast<size_t>(w.value())])
            return kernel_error(op + ": dim " + std::to_string(w.value()) +
                                " appears multiple times in the list of dims");
        drop[static_cast<size_t>(w.value())] = in.sizes[static_cast<size_t>(w.value())] == 1;
    }
    std::vector<int64_t> sizes;
    for (size_t d = 0; d < in.sizes.size(); ++d)
        if (!drop[d]) sizes.push_back(in.sizes[d]);
    return reshaped(opt, in, sizes, op);
}

// unsqueeze(self, dim): a new size-1 dimension at dim (in [-(rank + 1), rank])
Result<Value> kernel_unsqueeze(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.unsqueeze.default";
    auto dim = dim_arg(a, 1, x.value()->dim() + 1, op);
    if (!dim.ok()) return dim.error();
    std::vector<int64_t> sizes = x.value()->sizes;
    sizes.insert(sizes.begin() + dim.value(), 1);
    return reshaped(opt, *x.value(), sizes, op);
}

// unflatten.int(self, dim, sizes): dim becomes `sizes` (one may be -1)
Result<Value> kernel_unflatten(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.unflatten.int";
    const Tensor& in = *x.value();
    if (in.dim() == 0)
        return kernel_error(op + ": Dimension specified as 0 but tensor has no dimensions");
    auto dim = dim_arg(a, 1, in.dim(), op);
    if (!dim.ok()) return dim.error();
    auto sizes = a.ints(2);
    if (!sizes.ok()) return sizes.error();
    if (sizes.value().empty()) return kernel_error(op + ": unflatten: sizes must be non-empty");
    const int64_t n = in.sizes[static_cast<size_t>(dim.value())];
    int64_t known = 1;
    int infer = -1;
    for (size_t k = 0; k < sizes.value().size(); ++k) {
        int64_t s = sizes.value()[k];
        if (s == -1 && infer < 0) {
            infer = static_cast<int>(k);
            continue;
        }
        auto p = s >= 0 ? checked_mul(known, s) : std::nullopt;
        if (!p) return kernel_error(op + ": invalid sizes " + shape_str(sizes.value()));
        known = *p;
    }
    std::vector<int64_t> got = sizes.value();
    if (infer >= 0) {
        if (known == 0 || n % known != 0)
            return kernel_error(op + ": sizes " + shape_str(got) + " do not fit dimension " +
                                std::to_string(dim.value()) + " of size " + std::to_string(n));
        got[static_cast<size_t>(infer)] = n / known;
    } else if (known != n) {
        return kernel_error(op + ": unflatten: Provided sizes " + shape_str(got) +
                            " don't multiply up to the size of dim " + std::to_string(dim.value()) +
                            " (" + std::to_string(n) + ") in the input tensor");
    }
    std::vector<int64_t> out(in.sizes.begin(), in.sizes.begin() + dim.value());
    out.insert(out.end(), got.begin(), got.end());
    out.insert(out.end(), in.sizes.begin() + dim.value() + 1, in.sizes.end());
    return reshaped(opt, in, out, op);
}

// expand(self, size, *, implicit=False): size-1 dims repeat, new leading dims
// added, -1 keeps a size; materialized
Result<Value> kernel_expand(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto size = a.ints(1);
    if (!size.ok()) return size.error();
    const std::string op = "aten.expand.default";
    const Tensor& in = *x.value();
    const std::vector<int64_t>& want = size.value();
    if (want.size() < in.sizes.size())
        return kernel_error(op + ": the number of sizes provided (" + std::to_string(want.size()) +
                            ") must be greater or equal to the number of dimensions in the "
                            "tensor (" +
                            std::to_string(in.sizes.size()) + ")");
    const size_t lead = want.size() - in.sizes.size();
    std::vector<int64_t> out(want.size()), stride(want.size(), 0); // stride into x, 0 = repeat
    int64_t s = 1;
    for (size_t k = want.size(); k-- > 0;) {
        if (k < lead) {
            if (want[k] < 0)
                return kernel_error(
                    op + ": The expanded size of the tensor (" + std::to_string(want[k]) +
                    ") isn't allowed in a leading, non-existing dimension " + std::to_string(k));
            out[k] = want[k];
            continue;
        }
        const int64_t have = in.sizes[k - lead];
        out[k] = want[k] == -1 ? have : want[k];
        if (have != out[k] && have != 1)
            return kernel_error(op + ": The expanded size of the tensor (" +
                                std::to_string(out[k]) + ") must match the existing size (" +
                                std::to_string(have) + ") at non-singleton dimension " +
                                std::to_string(k) + ".  Target sizes: " + shape_str(want) +
                                ".  Tensor sizes: " + shape_str(in.sizes));
        stride[k] = have == 1 ? 0 : s;
        s *= have;
    }
    auto yr = new_tensor(opt, in.dtype, out, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    const size_t item = scalar_type_size(in.dtype);
    std::vector<int64_t> idx(out.size(), 0);
    int64_t src = 0;
    for (int64_t k = 0; k < y.numel(); ++k) {
        std::memcpy(&y.storage[static_cast<size_t>(k) * item],
                    &in.storage[static_cast<size_t>(src) * item], item);
        for (size_t d = out.size(); d-- > 0;) {
            src += stride[d];
            if (++idx[d] < out[d]) break;
            src -= stride[d] * out[d];
            idx[d] = 0;
        }
    }
    return Value::of(yr.take());
}

// contiguous(self, *, memory_format=contiguous_format): a contiguous copy
Result<Value> kernel_contiguous(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    return reshaped(opt, *x.value(), x.value()->sizes, "aten.contiguous.default");
}

// _unsafe_view(self, size): view's arithmetic (the graph guarantees contiguity)
Result<Value> kernel_unsafe_view(const CallArgs& a, const KernelOptions& opt) {
    return kernel_view(a, opt);
}

// cat(tensors[], dim=0): x_i: [..., n_i, ...] -> [..., sum n_i, ...]; legacy empty
// 1-D tensors ([0]) are skipped, as in torch
Result<Value> kernel_cat(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.cat.default";
    if (a[0].kind != Value::Kind::Tuple)
        return kernel_error(op + ": expected a list of tensors, got " + a[0].describe());
    std::vector<const Tensor*> parts;
    for (const Value& v : a[0].items) {
        if (!v.is_tensor())
            return kernel_error(op + ": expected a list of tensors, got " + v.describe());
        if (!(v.tensor->dim() == 1 && v.tensor->sizes[0] == 0)) parts.push_back(v.tensor.get());
    }
    if (a[0].items.empty()) return kernel_error(op + ": expected a non-empty list of Tensors");
    if (parts.empty()) return Value::of(*a[0].items[0].tensor);
    const Tensor& first = *parts[0];
    if (first.dim() == 0)
        return kernel_error(op +
                            ": zero-dimensional tensor (at position 0) cannot be concatenated");
    auto dim = dim_arg(a, 1, first.dim(), op);
    if (!dim.ok()) return dim.error();
    const int64_t d = dim.value();
    std::vector<int64_t> out = first.sizes;
    out[static_cast<size_t>(d)] = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
        const Tensor& t = *parts[k];
        if (t.dtype != first.dtype)
            return kernel_error(op + ": tensors of different dtypes (" + first.type_str() +
                                " and " + t.type_str() + ") are not supported");
        if (t.dim() != first.dim())
            return kernel_error(op + ": Tensors must have same number of dimensions: got " +
                                std::to_string(first.dim()) + " and " + std::to_string(t.dim()));
        for (int64_t e = 0; e < t.dim(); ++e)
            if (e != d && t.sizes[static_cast<size_t>(e)] != first.sizes[static_cast<size_t>(e)])
                return kernel_error(
                    op + ": Sizes of tensors must match except in dimension " + std::to_string(d) +
                    ". Expected size " + std::to_string(first.sizes[static_cast<size_t>(e)]) +
                    " but got size " + std::to_string(t.sizes[static_cast<size_t>(e)]) +
                    " for tensor number " + std::to_string(k) + " in the list.");
        auto sum = checked_add(out[static_cast<size_t>(d)], t.sizes[static_cast<size_t>(d)]);
        if (!sum) return kernel_error(op + ": the result's size does not fit in 64 bits");
        out[static_cast<size_t>(d)] = *sum;
    }
    auto yr = new_tensor(opt, first.dtype, out, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    int64_t outer, inner;
    split_dims(y, d, outer, inner);
    const size_t item = scalar_type_size(first.dtype);
    const int64_t total = out[static_cast<size_t>(d)];
    int64_t offset = 0; // along dim
    for (const Tensor* t : parts) {
        const int64_t n = t->sizes[static_cast<size_t>(d)];
        const size_t row = static_cast<size_t>(n * inner) * item;
        for (int64_t o = 0; o < outer; ++o) // t: [outer, n, inner] into y: [outer, total, inner]
            if (row)
                std::memcpy(&y.storage[static_cast<size_t>((o * total + offset) * inner) * item],
                            &t->storage[static_cast<size_t>(o) * row], row);
        offset += n;
    }
    return Value::of(yr.take());
}

// chunk(self, chunks, dim=0): pieces of ceil(size / chunks) (the last may be smaller)
Result<Value> kernel_chunk(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.chunk.default";
    auto chunks = a.integer(1);
    if (!chunks.ok()) return chunks.error();
    if (chunks.value() <= 0)
        return kernel_error(op + ": chunk expects `chunks` to be greater than 0, got: " +
                            std::to_string(chunks.value()));
    if (x.value()->dim() == 0)
        return kernel_error(op + ": chunk expects at least a 1-dimensional tensor");
    auto dim = dim_arg(a, 2, x.value()->dim(), op);
    if (!dim.ok()) return dim.error();
    const int64_t n = x.value()->sizes[static_cast<size_t>(dim.value())];
    const int64_t step = (n + chunks.value() - 1) / chunks.value();
    std::vector<int64_t> lengths;
    if (step == 0) {
        lengths.assign(static_cast<size_t>(std::min<int64_t>(chunks.value(), 1 << 16)), 0);
    } else {
        for (int64_t s = 0; s < n; s += step) lengths.push_back(std::min(step, n - s));
    }
    return pieces(opt, *x.value(), dim.value(), lengths, op);
}

// split.Tensor(self, split_size, dim=0): pieces of split_size (the last may be smaller)
Result<Value> kernel_split(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.split.Tensor";
    auto size = a.integer(1);
    if (!size.ok()) return size.error();
    if (x.value()->dim() == 0)
        return kernel_error(op + ": split expects at least a 1-dimensional tensor");
    auto dim = dim_arg(a, 2, x.value()->dim(), op);
    if (!dim.ok()) return dim.error();
    const int64_t n = x.value()->sizes[static_cast<size_t>(dim.value())];
    if (size.value() < 0 || (size.value() == 0 && n != 0))
        return kernel_error(op +
                            ": split_size can only be 0 if dimension size is 0, but got "
                            "dimension size of " +
                            std::to_string(n));
    std::vector<int64_t> lengths;
    if (n == 0) lengths.push_back(0);
    for (int64_t s = 0; s < n; s += size.value()) lengths.push_back(std::min(size.value(), n - s));
    return pieces(opt, *x.value(), dim.value(), lengths, op);
}

// split_with_sizes(self, split_sizes, dim=0): pieces of the given sizes (they sum to size(dim))
Result<Value> kernel_split_with_sizes(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    const std::string op = "aten.split_with_sizes.default";
    auto sizes = a.ints(1);
    if (!sizes.ok()) return sizes.error();
    if (x.value()->dim() == 0)
        return kernel_error(op + ": split expects at least a 1-dimensional tensor");
    auto dim = dim_arg(a, 2, x.value()->dim(), op);
    if (!dim.ok()) return dim.error();
    const int64_t n = x.value()->sizes[static_cast<size_t>(dim.value())];
    int64_t sum = 0;
    for (int64_t s : sizes.value()) {
        auto next = s >= 0 ? checked_add(sum, s) : std::nullopt;
        if (!next)
            return kernel_error(op +
                                ": split_with_sizes expects split_sizes have only "
                                "non-negative entries, but got split_sizes=" +
                                shape_str(sizes.value()));
        sum = *next;
    }
    if (sum != n)
        return kernel_error(op + ": split_with_sizes expects split_sizes to sum exactly to " +
                            std::to_string(n) + " (input tensor's size at dimension " +
                            std::to_string(dim.value()) +
                            "), but got split_sizes=" + shape_str(sizes.value()));
    return pieces(opt, *x.value(), dim.value(), sizes.value(), op);
}

} // namespace pt2lab
