// Tensor and Value: what the executor computes with. Tensors are contiguous
// (the graph's metadata strides are shown, never used for layout) and hold
// float32, int64, int32, uint8, int8 or bool. Values are what a node yields:
// a tensor, a tuple of values, a scalar or None.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "program/exported_program.h"

namespace pt2lab {

struct Tensor {
    ScalarType dtype = ScalarType::Float;
    std::vector<int64_t> sizes;
    std::vector<uint8_t> storage; // numel * itemsize bytes, C order

    static Tensor empty(ScalarType dtype, std::vector<int64_t> sizes);
    static Tensor zeros(ScalarType dtype, std::vector<int64_t> sizes) {
        return empty(dtype, std::move(sizes));
    }
    static Tensor from_data(const TensorData& d);
    static Tensor scalar_i64(int64_t v);
    TensorData to_data() const;

    int64_t numel() const;
    int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
    int64_t size(int64_t d) const { return sizes[static_cast<size_t>(d < 0 ? d + dim() : d)]; }
    template <class T> T* data() { return reinterpret_cast<T*>(storage.data()); }
    template <class T> const T* data() const { return reinterpret_cast<const T*>(storage.data()); }
    float* f32() { return data<float>(); }
    const float* f32() const { return data<float>(); }

    // Element k converted to double / written from double (the executor's
    // dtypes: float32/64, int64/32, uint8, int8, bool); integer writes saturate.
    double get(int64_t k) const;
    void set(int64_t k, double v);

    // "f32[2, 8, 16, 16]"
    std::string type_str() const;
};

// What a node evaluates to.
struct Value {
    enum class Kind { None, Tensor, Tuple, Int, Float, Bool, Dtype, String } kind = Kind::None;
    std::shared_ptr<Tensor> tensor; // shared: in-place ops and get_attr alias module state
    std::vector<Value> items;
    int64_t i = 0;
    double f = 0.0;
    bool b = false;
    ScalarType dtype = ScalarType::Unknown;
    std::string s;

    static Value none() { return {}; }
    static Value of(Tensor t);
    static Value of(std::shared_ptr<Tensor> t);
    static Value tuple(std::vector<Value> items);
    static Value integer(int64_t v);
    static Value real(double v);
    static Value boolean(bool v);

    bool is_tensor() const { return kind == Kind::Tensor; }
    bool is_number() const {
        return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
    }
    double number() const {
        return kind == Kind::Float ? f : kind == Kind::Bool ? (b ? 1.0 : 0.0) : double(i);
    }
    // Short description for error messages: "f32[2, 3]", "int 3", "tuple of 3".
    std::string describe() const;
};

} // namespace pt2lab
