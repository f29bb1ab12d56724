// Checked integer arithmetic for every size, stride, offset, count and
// version that comes from a file: the result or "does not fit", never a
// wrapped value (and never undefined behaviour). Also the saturating
// float -> integer conversion the executor uses where C++ would be undefined.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace pt2lab {

// a * b and a + b, or nullopt when the exact result does not fit in int64.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}
inline std::optional<uint64_t> checked_mul_u64(uint64_t a, uint64_t b) {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}
inline std::optional<uint64_t> checked_add_u64(uint64_t a, uint64_t b) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// The element count of `sizes`, or nullopt when a size is negative or the
// product of the non-zero sizes does not fit in int64. Requiring the non-zero
// product to fit (as c10's safe_compute_numel does) means every partial
// product a kernel forms (flatten's merged dimension, a contiguous stride)
// fits as well, even for a tensor with a zero dimension.
inline std::optional<int64_t> checked_numel(const std::vector<int64_t>& sizes) {
    int64_t nonzero = 1;
    bool empty = false;
    for (int64_t s : sizes) {
        if (s < 0) return std::nullopt;
        if (s == 0) {
            empty = true;
            continue;
        }
        auto p = checked_mul(nonzero, s);
        if (!p) return std::nullopt;
        nonzero = *p;
    }
    return empty ? 0 : nonzero;
}

// numel * itemsize as bytes, or nullopt on overflow / invalid sizes.
inline std::optional<uint64_t> checked_nbytes(const std::vector<int64_t>& sizes, size_t itemsize) {
    auto n = checked_numel(sizes);
    if (!n) return std::nullopt;
    return checked_mul_u64(static_cast<uint64_t>(*n), itemsize);
}

// x converted to integer type T: NaN gives 0, values past T's range give its
// nearest end (C++ leaves both undefined; torch's own casts give arbitrary values).
template <class T> T saturate_cast(double x) {
    if (std::isnan(x)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    // 2^bits as a double is exact; anything at or above it is out of range.
    constexpr double hi_excl = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
    if (x <= lo) return std::numeric_limits<T>::min();
    if (x >= hi_excl) return std::numeric_limits<T>::max();
    return static_cast<T>(x);
}

} // namespace pt2lab
