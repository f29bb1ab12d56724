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
#include "util/bytes.h"

namespace pt2lab {

// An allocator whose resize() leaves new bytes as they are (no zero fill): a
// kernel that writes every element of its result (conv2d's) skips a pass.
template <class T> struct DefaultInitAllocator : std::allocator<T> {
    template <class U> struct rebind { using other = DefaultInitAllocator<U>; };
    using std::allocator<T>::allocator;
    template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
};
using ByteBuffer = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

// A tensor's bytes, copy on write: a buffer of its own, or a read-only view
// shared with a program's TensorData (and so, often, with the file's bytes).
// Every non-const access (data(), operator[], resize) goes through unshare(),
// which first copies a shared view into a buffer of its own, so writing a
// tensor never changes the program it came from. Reading never copies.
class TensorStorage {
public:
    TensorStorage() = default;
    // Shares `view`'s bytes; its data is aligned for the tensor's dtype.
    explicit TensorStorage(Bytes view) : view_(std::move(view)), shared_(true) {}

    // Whether the bytes are a shared read-only view (not yet written).
    bool shared() const { return shared_; }
    const uint8_t* data() const { return shared_ ? view_.data() : own_.data(); }
    uint8_t* data() { return unshare().data(); }
    size_t size() const { return shared_ ? view_.size() : own_.size(); }
    bool empty() const { return size() == 0; }
    const uint8_t& operator[](size_t k) const { return data()[k]; }
    uint8_t& operator[](size_t k) { return unshare()[k]; }
    const uint8_t* begin() const { return data(); }
    const uint8_t* end() const { return data() + size(); }
    void assign(size_t n, uint8_t v) {
        view_ = Bytes();
        shared_ = false;
        own_.assign(n, v);
    }
    // n bytes of its own whose values are unspecified: for a result every element of
    // which its kernel writes before anything reads it.
    void allocate_unfilled(size_t n) {
        view_ = Bytes();
        shared_ = false;
        own_.clear();
        own_.resize(n);
    }
    void resize(size_t n) { unshare().resize(n); }
    // The bytes as an immutable Bytes: the shared view itself, or a copy of its own buffer.
    Bytes to_bytes() const {
        return shared_ ? view_ : Bytes(std::vector<uint8_t>(own_.begin(), own_.end()));
    }

    friend bool operator==(const TensorStorage& a, const TensorStorage& b) {
        return a.size() == b.size() &&
               (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
    }
    friend bool operator!=(const TensorStorage& a, const TensorStorage& b) { return !(a == b); }

private:
    // The one place a shared view becomes a buffer of its own (before a write).
    ByteBuffer& unshare() {
        if (shared_) {
            own_.assign(view_.begin(), view_.end());
            view_ = Bytes();
            shared_ = false;
        }
        return own_;
    }

    ByteBuffer own_;
    Bytes view_;
    bool shared_ = false;
};

struct Tensor {
    ScalarType dtype = ScalarType::Float;
    std::vector<int64_t> sizes;
    TensorStorage storage; // numel * itemsize bytes, C order

    static Tensor empty(ScalarType dtype, std::vector<int64_t> sizes);
    // The same shape with unspecified values (TensorStorage::allocate_unfilled).
    static Tensor unfilled(ScalarType dtype, std::vector<int64_t> sizes);
    static Tensor zeros(ScalarType dtype, std::vector<int64_t> sizes) {
        return empty(dtype, std::move(sizes));
    }
    // Shares d's bytes (copy on write: the first write copies them).
    static Tensor from_data(const TensorData& d);
    static Tensor scalar_i64(int64_t v);
    // float32 filled with SeededRng(seed).normal() in order: the same values on
    // every machine and build (the tests' and benchmarks' random inputs).
    static Tensor seeded_normal(std::vector<int64_t> sizes, uint64_t seed);
    TensorData to_data() const; // shares a shared view, else copies the bytes

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
