// Summaries of tensors for the page's tables: shape, dtype, min / max / mean
// and the first values, for stored weights (TensorData) and executor values
// (Tensor). Pure C++ over the core's types; no ImGui.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/tensor.h"
#include "program/tensor_data.h"

namespace pt2lab::app {

struct TensorSummary {
    std::string type; // "f32[8, 3, 3, 3]"
    int64_t numel = 0;
    bool numeric = false; // the dtype has values the page can read (not float16, complex ...)
    double min = 0, max = 0, mean = 0;
    int64_t nonfinite = 0;     // NaN / inf elements (left out of min, max, mean)
    std::vector<double> first; // the first few values, in storage order
};

TensorSummary summarize(const TensorData& t, size_t first_count = 6);
// Only the type, for a tensor whose bytes are still arriving (Workspace::file_whole).
TensorSummary type_only(ScalarType dtype, const std::vector<int64_t>& sizes);
TensorSummary summarize(const Tensor& t, size_t first_count = 6);

// A number as the page prints it: up to 6 significant digits, like %g
// ("0.260267", "1e-05", "-3", "inf").
std::string format_number(double v);
// "[0.260267, 0.43717, 0, 1.08891, ...]" (the ellipsis when there are more values).
std::string format_values(const std::vector<double>& v, int64_t numel);

} // namespace pt2lab::app
