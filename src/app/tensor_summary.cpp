// Tensor summaries for the page's tables (see tensor_summary.h).
#include "tensor_summary.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace pt2lab::app {
namespace {

std::string type_of(ScalarType dtype, const std::vector<int64_t>& sizes) {
    std::string s(scalar_type_abbr(dtype));
    s += '[';
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(sizes[i]);
    }
    return s + ']';
}

bool readable(ScalarType t) {
    switch (t) {
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::Long:
    case ScalarType::Int:
    case ScalarType::Short:
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool: return true;
    default: return false;
    }
}

// Element k of raw little-endian storage (the dtypes readable() accepts).
double element(ScalarType t, const uint8_t* p, int64_t k) {
    auto load = [&](auto zero) {
        decltype(zero) v;
        std::memcpy(&v, p + static_cast<size_t>(k) * sizeof(v), sizeof(v));
        return static_cast<double>(v);
    };
    switch (t) {
    case ScalarType::Float: return load(float{});
    case ScalarType::Double: return load(double{});
    case ScalarType::Long: return load(int64_t{});
    case ScalarType::Int: return load(int32_t{});
    case ScalarType::Short: return load(int16_t{});
    case ScalarType::Byte: return load(uint8_t{});
    case ScalarType::Char: return load(int8_t{});
    case ScalarType::Bool: return p[k] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

TensorSummary summarize_bytes(ScalarType dtype, const std::vector<int64_t>& sizes,
                              const uint8_t* data, size_t bytes, size_t first_count) {
    TensorSummary s;
    s.type = type_of(dtype, sizes);
    s.numel = 1;
    for (int64_t d : sizes) s.numel *= d;
    size_t item = scalar_type_size(dtype);
    s.numeric = readable(dtype) && item > 0 && bytes >= static_cast<size_t>(s.numel) * item;
    if (!s.numeric) return s;
    double sum = 0;
    int64_t finite = 0;
    for (int64_t k = 0; k < s.numel; ++k) {
        double v = element(dtype, data, k);
        if (static_cast<size_t>(k) < first_count) s.first.push_back(v);
        if (!std::isfinite(v)) {
            ++s.nonfinite;
            continue;
        }
        if (finite == 0 || v < s.min) s.min = v;
        if (finite == 0 || v > s.max) s.max = v;
        sum += v;
        ++finite;
    }
    s.mean = finite ? sum / static_cast<double>(finite) : 0.0;
    return s;
}

} // namespace

TensorSummary summarize(const TensorData& t, size_t first_count) {
    return summarize_bytes(t.dtype, t.sizes, t.bytes.data(), t.bytes.size(), first_count);
}

TensorSummary type_only(ScalarType dtype, const std::vector<int64_t>& sizes) {
    return summarize_bytes(dtype, sizes, nullptr, 0, 0); // no bytes: not numeric
}

TensorSummary summarize(const Tensor& t, size_t first_count) {
    return summarize_bytes(t.dtype, t.sizes, t.storage.data(), t.storage.size(), first_count);
}

std::string format_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string format_values(const std::vector<double>& v, int64_t numel) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) s += ", ";
        s += format_number(v[i]);
    }
    if (static_cast<int64_t>(v.size()) < numel) s += v.empty() ? "..." : ", ...";
    return s + "]";
}

} // namespace pt2lab::app
