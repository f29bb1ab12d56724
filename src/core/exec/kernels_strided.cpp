// View kernels ConvNeXt and MaxViT reach: as_strided (Core ATen's form of
// adaptive_avg_pool2d on a channels-last input) and swapaxes (transpose's alias).
// Executor tensors are contiguous, so as_strided reads its input's elements in C
// order: torch's result whenever torch's input is contiguous too.
#include <cstring>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Result<Value> kernel_transpose(const CallArgs& a, const KernelOptions& opt);

namespace {
std::string int_list_str(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
    return s + "]";
}
} // namespace

// as_strided(self, size, stride, storage_offset=None): y[i] = x.flat[offset + sum_d i_d *
// stride_d], the offset 0 when None
Result<Value> kernel_as_strided(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.as_strided.default";
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto size = a.ints(1), stride = a.ints(2);
    if (!size.ok()) return size.error();
    if (!stride.ok()) return stride.error();
    int64_t offset = 0;
    if (a[3].kind != Value::Kind::None) {
        auto o = a.integer(3);
        if (!o.ok()) return o.error();
        offset = o.value();
    }
    const Tensor& in = *x.value();
    const std::vector<int64_t>&sz = size.value(), &st = stride.value();
    if (sz.size() != st.size())
        return kernel_error(op + ": mismatch in length of strides and shape");
    for (int64_t s : st)
        if (s < 0)
            return kernel_error(op +
                                ": as_strided: Negative strides are not supported at the "
                                "moment, got strides: " +
                                int_list_str(st));
    if (offset < 0)
        return kernel_error(op + ": Tensor: invalid storage offset " + std::to_string(offset));
    auto numel = checked_numel(sz);
    if (!numel) return kernel_error(op + ": invalid size " + int_list_str(sz));
    // The last element read, as c10's computeStorageNbytes counts it (nothing for no elements).
    const int64_t item = static_cast<int64_t>(scalar_type_size(in.dtype));
    std::optional<int64_t> need = 0;
    if (*numel > 0) {
        need = checked_add(offset, 1);
        for (size_t d = 0; d < sz.size() && need; ++d) {
            auto span = checked_mul(sz[d] - 1, st[d]);
            need = span ? checked_add(*need, *span) : std::nullopt;
        }
        need = need ? checked_mul(*need, item) : std::nullopt;
    }
    const int64_t have = in.numel() * item;
    if (!need || *need > have)
        return kernel_error(op + ": setStorage: sizes " + int_list_str(sz) + ", strides " +
                            int_list_str(st) + ", storage offset " + std::to_string(offset) +
                            ", and itemsize " + std::to_string(item) +
                            " requiring a storage size of " +
                            (need ? std::to_string(*need) : std::string("more than 2^63")) +
                            " are out of bounds for storage of size " + std::to_string(have));
    auto yr = new_tensor(opt, in.dtype, sz, op);
    if (!yr.ok()) return yr.error();
    Tensor& y = yr.value();
    std::vector<int64_t> idx(sz.size(), 0);
    for (int64_t k = 0; k < *numel; ++k) {
        int64_t src = offset;
        for (size_t d = 0; d < sz.size(); ++d) src += idx[d] * st[d];
        std::memcpy(&y.storage[static_cast<size_t>(k * item)],
                    &in.storage[static_cast<size_t>(src * item)], static_cast<size_t>(item));
        for (size_t d = sz.size(); d-- > 0;) {
            if (++idx[d] < sz[d]) break;
            idx[d] = 0;
        }
    }
    return Value::of(yr.take());
}

// swapaxes(self, axis0, axis1): transpose.int under numpy's name
Result<Value> kernel_swapaxes(const CallArgs& a, const KernelOptions& opt) {
    CallArgs t(op_info(OpId::transpose_int).schema, {a[0], a[1], a[2]});
    return kernel_transpose(t, opt);
}

} // namespace pt2lab
