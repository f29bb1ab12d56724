// Shape kernels (results are materialized contiguous copies): permute, t,
// view, reshape, flatten, clone, detach; plus getitem, sym_size and
// _assert_tensor_metadata.
#include "exec/kernels.h"

namespace pt2lab {

namespace {
// Resolves one -1 in `shape` against numel; errors name the op.
Result<std::vector<int64_t>> infer_shape(const char* op, std::vector<int64_t> shape, int64_t numel,
                                         const std::string& from) {
    int64_t known = 1;
    int infer = -1;
    for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == -1) {
            if (infer >= 0)
                return kernel_error(std::string(op) + ": only one dimension can be inferred");
            infer = static_cast<int>(k);
        } else if (shape[k] < 0) {
            return kernel_error(std::string(op) + ": invalid shape dimension " +
                                std::to_string(shape[k]));
        } else {
            known *= shape[k];
        }
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return kernel_error(std::string(op) + ": shape " + shape_str(shape) +
                                " is invalid for input " + from);
        shape[static_cast<size_t>(infer)] = numel / known;
    } else if (known != numel) {
        return kernel_error(std::string(op) + ": shape " + shape_str(shape) +
                            " is invalid for input " + from);
    }
    return shape;
}

Result<Value> reshape_like(const CallArgs& a, const char* op) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto shape = a.ints(1);
    if (!shape.ok()) return shape.error();
    auto s = infer_shape(op, shape.value(), x.value()->numel(), x.value()->type_str());
    if (!s.ok()) return s.error();
    Tensor y = *x.value();
    y.sizes = s.value();
    return Value::of(std::move(y));
}
} // namespace

// permute(self, dims): y[i0, i1, ...] = x[... permuted ...], materialized
Result<Value> kernel_permute(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto dims = a.ints(1);
    if (!dims.ok()) return dims.error();
    const Tensor& in = *x.value();
    const int64_t r = in.dim();
    if (static_cast<int64_t>(dims.value().size()) != r)
        return kernel_error("aten.permute.default: " + std::to_string(dims.value().size()) +
                            " dims given for a tensor of " + std::to_string(r) + " dimensions");
    std::vector<int64_t> perm, seen(static_cast<size_t>(r), 0);
    for (int64_t d : dims.value()) {
        auto w = wrap_dim(d, r);
        if (!w.ok()) return kernel_error("aten.permute.default: " + w.error().message);
        if (seen[static_cast<size_t>(w.value())]++)
            return kernel_error("aten.permute.default: repeated dim");
        perm.push_back(w.value());
    }
    std::vector<int64_t> in_strides(static_cast<size_t>(r), 1), out_sizes(static_cast<size_t>(r));
    for (int64_t k = r - 2; k >= 0; --k)
        in_strides[static_cast<size_t>(k)] =
            in_strides[static_cast<size_t>(k) + 1] * in.sizes[static_cast<size_t>(k) + 1];
    for (int64_t k = 0; k < r; ++k)
        out_sizes[static_cast<size_t>(k)] =
            in.sizes[static_cast<size_t>(perm[static_cast<size_t>(k)])];
    Tensor y = Tensor::empty(in.dtype, out_sizes);
    const size_t item = scalar_type_size(in.dtype);
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    for (int64_t k = 0; k < y.numel(); ++k) {
        int64_t src = 0;
        for (int64_t d = 0; d < r; ++d)
            src += idx[static_cast<size_t>(d)] *
                   in_strides[static_cast<size_t>(perm[static_cast<size_t>(d)])];
        std::memcpy(&y.storage[static_cast<size_t>(k) * item],
                    &in.storage[static_cast<size_t>(src) * item], item);
        for (int64_t d = r; d-- > 0;) {
            if (++idx[static_cast<size_t>(d)] < out_sizes[static_cast<size_t>(d)]) break;
            idx[static_cast<size_t>(d)] = 0;
        }
    }
    return Value::of(std::move(y));
}

// t(self): transpose of a tensor with at most 2 dimensions
Result<Value> kernel_t(const CallArgs& a, const KernelOptions& opt) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (x.value()->dim() > 2)
        return kernel_error("aten.t.default: expects a tensor with <= 2 dimensions, got " +
                            x.value()->type_str());
    if (x.value()->dim() < 2) return Value::of(Tensor(*x.value()));
    const OpSchema* permute = &op_info(OpId::permute).schema;
    CallArgs p(*permute, {a[0], Value::tuple({Value::integer(1), Value::integer(0)})});
    return kernel_permute(p, opt);
}

Result<Value> kernel_view(const CallArgs& a, const KernelOptions&) {
    return reshape_like(a, "aten.view.default");
}
Result<Value> kernel_reshape(const CallArgs& a, const KernelOptions&) {
    return reshape_like(a, "aten.reshape.default");
}

// flatten.using_ints(self, start_dim=0, end_dim=-1)
Result<Value> kernel_flatten(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto s = a.integer(1), e = a.integer(2);
    if (!s.ok()) return s.error();
    if (!e.ok()) return e.error();
    const Tensor& in = *x.value();
    if (in.dim() == 0) {
        Tensor y = in;
        y.sizes = {1};
        return Value::of(std::move(y));
    }
    auto sw = wrap_dim(s.value(), in.dim()), ew = wrap_dim(e.value(), in.dim());
    if (!sw.ok() || !ew.ok() || sw.value() > ew.value())
        return kernel_error("aten.flatten.using_ints: invalid start_dim " +
                            std::to_string(s.value()) + " / end_dim " + std::to_string(e.value()) +
                            " for " + in.type_str());
    std::vector<int64_t> sizes;
    int64_t merged = 1;
    for (int64_t d = 0; d < in.dim(); ++d) {
        if (d < sw.value() || d > ew.value())
            sizes.push_back(in.sizes[static_cast<size_t>(d)]);
        else {
            merged *= in.sizes[static_cast<size_t>(d)];
            if (d == ew.value()) sizes.push_back(merged);
        }
    }
    Tensor y = in;
    y.sizes = sizes;
    return Value::of(std::move(y));
}

Result<Value> kernel_clone(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    return Value::of(Tensor(*x.value()));
}

Result<Value> kernel_detach(const CallArgs& a, const KernelOptions& opt) {
    return kernel_clone(a, opt);
}

// operator.getitem(tuple, index)
Result<Value> kernel_getitem(const CallArgs& a, const KernelOptions&) {
    const Value& seq = a[0];
    auto i = a.integer(1);
    if (!i.ok()) return i.error();
    if (seq.kind != Value::Kind::Tuple)
        return kernel_error("getitem: expected a tuple, got " + seq.describe());
    int64_t n = static_cast<int64_t>(seq.items.size()),
            k = i.value() < 0 ? i.value() + n : i.value();
    if (k < 0 || k >= n)
        return kernel_error("getitem: index " + std::to_string(i.value()) +
                            " out of range for a tuple of " + std::to_string(n));
    return seq.items[static_cast<size_t>(k)];
}

// sym_size.int(self, dim) -> int
Result<Value> kernel_sym_size(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto d = a.integer(1);
    if (!d.ok()) return d.error();
    auto w = wrap_dim(d.value(), x.value()->dim());
    if (!w.ok()) return kernel_error("aten.sym_size.int: " + w.error().message);
    return Value::integer(x.value()->sizes[static_cast<size_t>(w.value())]);
}

// _assert_tensor_metadata(a, size=None, stride=None, dtype=None, *, device=None, layout=None)
Result<Value> kernel_assert_tensor_metadata(const CallArgs& a, const KernelOptions&) {
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    if (a[1].kind != Value::Kind::None) {
        auto s = a.ints(1);
        if (s.ok() && s.value() != x.value()->sizes)
            return kernel_error("Tensor sizes mismatch: expected " + shape_str(s.value()) +
                                ", got " + shape_str(x.value()->sizes));
    }
    if (a[3].kind == Value::Kind::Dtype && a[3].dtype != x.value()->dtype)
        return kernel_error("Tensor dtype mismatch: expected torch." +
                            std::string(scalar_type_name(a[3].dtype)) + ", got torch." +
                            std::string(scalar_type_name(x.value()->dtype)));
    return Value::none();
}

} // namespace pt2lab
