// The strides torch's fake tensors give a rule's new nodes, for rules that must
// decide as ATen does whether a reshape is a view or a copy (reshape, einsum).
// Pure functions of sizes and strides; private to passes/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace pt2lab::decomp {

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> s(sizes.size(), 1);
    for (size_t k = sizes.size(); k-- > 1;) s[k - 1] = s[k] * std::max<int64_t>(sizes[k], 1);
    return s;
}

// ATen's computeStride: the strides a view of (sizes, strides) with `shape` would have,
// or nullopt when no view can express it (reshape then copies).
inline std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& sizes,
                                                        const std::vector<int64_t>& strides,
                                                        const std::vector<int64_t>& shape) {
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    if (numel == 0 || sizes.empty()) return contiguous_strides(shape);
    std::vector<int64_t> out(shape.size(), 0);
    int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
    int64_t chunk_base_stride = strides.back(), tensor_numel = 1, view_numel = 1;
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
        tensor_numel *= sizes[static_cast<size_t>(d)];
        if (d == 0 || (sizes[static_cast<size_t>(d) - 1] != 1 &&
                       strides[static_cast<size_t>(d) - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 &&
                   (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1)) {
                out[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
                view_numel *= shape[static_cast<size_t>(view_d)];
                --view_d;
            }
            if (view_numel != tensor_numel) return std::nullopt;
            if (d > 0) {
                chunk_base_stride = strides[static_cast<size_t>(d) - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if (view_d != -1) return std::nullopt;
    return out;
}

} // namespace pt2lab::decomp
