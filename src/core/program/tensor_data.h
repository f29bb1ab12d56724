// TensorData: a stored tensor (weights, constants, example inputs) as raw
// little-endian bytes plus dtype and shape; TensorMap shares them by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "util/bytes.h"

namespace pt2lab {

// A tensor's bytes plus its shape. Data is the raw little-endian storage,
// already cut to this tensor (contiguous, storage_offset applied). The bytes
// are immutable and often a view into the .pt2 file's buffer (no copy); they
// are always aligned for the dtype, so f32() may be read directly.
struct TensorData {
    ScalarType dtype = ScalarType::Float;
    std::vector<int64_t> sizes;
    Bytes bytes;
    bool requires_grad = false;
    bool stand_in = false; // deterministic stand-in values, not the real weights

    int64_t numel() const;
    const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
};

// Tensors are shared (not copied) between a program and the modules made from it.
using TensorMap = std::map<std::string, std::shared_ptr<const TensorData>>;

} // namespace pt2lab
