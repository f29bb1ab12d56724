// Tensor storage helpers and Value constructors.
#include "exec/tensor.h"

#include "util/check.h"
#include "util/rng.h"

#include "util/checked.h"

namespace pt2lab {

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
}

Tensor Tensor::empty(ScalarType dtype, std::vector<int64_t> sizes) {
    Tensor t;
    t.dtype = dtype;
    t.sizes = std::move(sizes);
    t.storage.assign(static_cast<size_t>(t.numel()) * scalar_type_size(dtype), 0);
    return t;
}

Tensor Tensor::unfilled(ScalarType dtype, std::vector<int64_t> sizes) {
    Tensor t;
    t.dtype = dtype;
    t.sizes = std::move(sizes);
    t.storage.allocate_unfilled(static_cast<size_t>(t.numel()) * scalar_type_size(dtype));
    return t;
}

Tensor Tensor::from_data(const TensorData& d) {
    Tensor t;
    t.dtype = d.dtype;
    t.sizes = d.sizes;
    t.storage = TensorStorage(d.bytes);
    return t;
}

Tensor Tensor::seeded_normal(std::vector<int64_t> sizes, uint64_t seed) {
    Tensor t = empty(ScalarType::Float, std::move(sizes));
    SeededRng rng(seed);
    float* d = t.f32();
    for (int64_t k = 0; k < t.numel(); ++k) d[k] = rng.normal();
    return t;
}

Tensor Tensor::scalar_i64(int64_t v) {
    Tensor t = empty(ScalarType::Long, {});
    t.data<int64_t>()[0] = v;
    return t;
}

TensorData Tensor::to_data() const {
    TensorData d;
    d.dtype = dtype;
    d.sizes = sizes;
    d.bytes = storage.to_bytes();
    return d;
}

double Tensor::get(int64_t k) const {
    switch (dtype) {
    case ScalarType::Float: return data<float>()[k];
    case ScalarType::Double: return data<double>()[k];
    case ScalarType::Long: return static_cast<double>(data<int64_t>()[k]);
    case ScalarType::Int: return data<int32_t>()[k];
    case ScalarType::Byte: return data<uint8_t>()[k];
    case ScalarType::Char: return data<int8_t>()[k];
    case ScalarType::Bool: return data<uint8_t>()[k] ? 1.0 : 0.0;
    default: PT2LAB_CHECK(false && "dtype not handled by the executor"); return 0.0;
    }
}

void Tensor::set(int64_t k, double v) {
    switch (dtype) {
    case ScalarType::Float: data<float>()[k] = static_cast<float>(v); break;
    case ScalarType::Double: data<double>()[k] = v; break;
    // Saturating: NaN and out-of-range values would be undefined behaviour in C++.
    case ScalarType::Long: data<int64_t>()[k] = saturate_cast<int64_t>(v); break;
    case ScalarType::Int: data<int32_t>()[k] = saturate_cast<int32_t>(v); break;
    case ScalarType::Byte: data<uint8_t>()[k] = saturate_cast<uint8_t>(v); break;
    case ScalarType::Char: data<int8_t>()[k] = saturate_cast<int8_t>(v); break;
    case ScalarType::Bool: data<uint8_t>()[k] = v != 0.0; break;
    default: PT2LAB_CHECK(false && "dtype not handled by the executor");
    }
}

std::string Tensor::type_str() const {
    std::string s = std::string(scalar_type_abbr(dtype)) + "[";
    for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
    return s + "]";
}

Value Value::of(Tensor t) {
    return of(std::make_shared<Tensor>(std::move(t)));
}
Value Value::of(std::shared_ptr<Tensor> t) {
    Value v;
    v.kind = Kind::Tensor;
    v.tensor = std::move(t);
    return v;
}
Value Value::tuple(std::vector<Value> items) {
    Value v;
    v.kind = Kind::Tuple;
    v.items = std::move(items);
    return v;
}
Value Value::integer(int64_t x) {
    Value v;
    v.kind = Kind::Int;
    v.i = x;
    return v;
}
Value Value::real(double x) {
    Value v;
    v.kind = Kind::Float;
    v.f = x;
    return v;
}
Value Value::boolean(bool x) {
    Value v;
    v.kind = Kind::Bool;
    v.b = x;
    return v;
}

std::string Value::describe() const {
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Tensor: return tensor->type_str();
    case Kind::Tuple: return "tuple of " + std::to_string(items.size());
    case Kind::Int: return "int " + std::to_string(i);
    case Kind::Float: return "float";
    case Kind::Bool: return b ? "True" : "False";
    case Kind::Dtype: return "torch." + std::string(scalar_type_name(dtype));
    case Kind::String: return "str";
    }
    return "?";
}

} // namespace pt2lab
