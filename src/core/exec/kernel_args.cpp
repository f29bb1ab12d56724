// Typed access to a call's arguments, with messages that name the argument;
// checked allocation and work accounting shared by the kernels.
#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Error kernel_error(const std::string& message, const std::string& hint) {
    return make_error("", message, hint);
}

namespace {
// A budget refusal as a kernel error: "<op>: <what the budget says>".
Error budget_error(const Status& s, const std::string& op) {
    return kernel_error(op + ": " + s.error().message, s.error().hint);
}
} // namespace

namespace {
Result<Tensor> charged_tensor(const KernelOptions& opt, ScalarType dtype,
                              std::vector<int64_t> sizes, const std::string& op, bool zeroed) {
    size_t item = scalar_type_size(dtype);
    Status s;
    if (opt.budget) {
        s = opt.budget->tensor(sizes, item, "result " + shape_str(sizes));
        if (s.ok()) s = opt.budget->work(checked_numel(sizes).value_or(0), "result");
    } else {
        Budget unlimited(Limits(), Budget::Scope::Run, 0);
        s = unlimited.tensor(sizes, item, "result " + shape_str(sizes));
    }
    if (!s.ok()) return budget_error(s, op + ": result " + shape_str(sizes));
    return zeroed ? Tensor::empty(dtype, std::move(sizes))
                  : Tensor::unfilled(dtype, std::move(sizes));
}
} // namespace

Result<Tensor> new_tensor(const KernelOptions& opt, ScalarType dtype, std::vector<int64_t> sizes,
                          const std::string& op) {
    return charged_tensor(opt, dtype, std::move(sizes), op, true);
}

Result<Tensor> new_unfilled_tensor(const KernelOptions& opt, ScalarType dtype,
                                   std::vector<int64_t> sizes, const std::string& op) {
    return charged_tensor(opt, dtype, std::move(sizes), op, false);
}

Result<Tensor> copy_tensor(const KernelOptions& opt, const Tensor& x, const std::string& op) {
    auto y = new_tensor(opt, x.dtype, x.sizes, op);
    if (!y.ok()) return y;
    y.value().storage = x.storage;
    return y;
}

Status charge_bytes(const KernelOptions& opt, std::optional<uint64_t> n, const std::string& op) {
    if (!n) return kernel_error(op + ": a buffer larger than 2^64 bytes");
    if (!opt.budget) return {};
    Status s = opt.budget->bytes(*n, op);
    if (!s.ok()) return budget_error(s, op);
    return {};
}

Status charge_work(const KernelOptions& opt, std::optional<uint64_t> n, const std::string& op) {
    if (!n) return kernel_error(op + ": more than 2^64 multiply-adds");
    if (!opt.budget) return {};
    Status s = opt.budget->work(*n, op);
    if (!s.ok()) return budget_error(s, op);
    return {};
}

std::optional<uint64_t> work_of(std::initializer_list<int64_t> counts) {
    for (int64_t c : counts)
        if (c == 0) return 0;
    uint64_t w = 1;
    for (int64_t c : counts) {
        if (c < 0) return std::nullopt;
        auto p = checked_mul_u64(w, static_cast<uint64_t>(c));
        if (!p) return std::nullopt;
        w = *p;
    }
    return w;
}

std::string shape_str(const std::vector<int64_t>& sizes) {
    std::string s = "[";
    for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
    return s + "]";
}

Error CallArgs::bad(size_t i, const std::string& want) const {
    std::string got = i < v_.size() ? v_[i].describe() : "nothing";
    return kernel_error(schema_.overload_str() + ": argument '" + name(i) + "' must be " + want +
                        ", got " + got);
}

Result<std::shared_ptr<Tensor>> CallArgs::tensor(size_t i) const {
    if (i >= v_.size() || !v_[i].is_tensor()) return bad(i, "a tensor");
    return v_[i].tensor;
}

Result<std::shared_ptr<Tensor>> CallArgs::opt_tensor(size_t i) const {
    if (i >= v_.size() || v_[i].kind == Value::Kind::None) return std::shared_ptr<Tensor>();
    if (!v_[i].is_tensor()) return bad(i, "a tensor or None");
    return v_[i].tensor;
}

Result<std::vector<int64_t>> CallArgs::ints(size_t i, size_t n) const {
    if (i >= v_.size()) return bad(i, "a list of ints");
    const Value& v = v_[i];
    if (v.kind == Value::Kind::Int) return std::vector<int64_t>(n ? n : 1, v.i);
    if (v.kind != Value::Kind::Tuple) return bad(i, "a list of ints");
    std::vector<int64_t> out;
    for (const Value& x : v.items) {
        if (x.kind != Value::Kind::Int) return bad(i, "a list of ints");
        out.push_back(x.i);
    }
    if (n && out.size() == 1) out.assign(n, out[0]);
    if (n && out.size() != n) return bad(i, "a list of " + std::to_string(n) + " ints");
    return out;
}

Result<int64_t> CallArgs::integer(size_t i) const {
    if (i >= v_.size()) return bad(i, "an int");
    if (v_[i].kind == Value::Kind::Int) return v_[i].i;
    if (v_[i].kind == Value::Kind::Bool) return int64_t(v_[i].b);
    return bad(i, "an int");
}

Result<double> CallArgs::real(size_t i) const {
    if (i >= v_.size() || !v_[i].is_number()) return bad(i, "a number");
    return v_[i].number();
}

Result<bool> CallArgs::boolean(size_t i) const {
    if (i >= v_.size()) return bad(i, "a bool");
    if (v_[i].kind == Value::Kind::Bool) return v_[i].b;
    if (v_[i].kind == Value::Kind::Int) return v_[i].i != 0;
    return bad(i, "a bool");
}

Result<ScalarType> CallArgs::dtype(size_t i) const {
    if (i >= v_.size() || v_[i].kind != Value::Kind::Dtype) return bad(i, "a dtype");
    return v_[i].dtype;
}

Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
    size_t n = std::max(a.size(), b.size());
    std::vector<int64_t> out(n);
    for (size_t k = 0; k < n; ++k) {
        int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
        int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
        if (da != db && da != 1 && db != 1)
            return kernel_error("shapes " + shape_str(a) + " and " + shape_str(b) +
                                " cannot be broadcast together (dimension " + std::to_string(k) +
                                ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
        out[k] = da == 1 ? db : da;
    }
    return out;
}

Result<int64_t> wrap_dim(int64_t d, int64_t rank) {
    int64_t r = rank == 0 ? 1 : rank;
    if (d < -r || d >= r)
        return kernel_error("dimension " + std::to_string(d) + " is out of range for a tensor of " +
                            std::to_string(rank) + " dimensions");
    return d < 0 ? d + r : d;
}

} // namespace pt2lab
