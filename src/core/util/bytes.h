// Bytes: an immutable byte range whose owner it keeps alive, either a buffer
// of its own or a view into a bigger one (a .pt2 file's bytes). Copying a
// Bytes never copies the bytes; nothing can write through one.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace pt2lab {

class Bytes {
public:
    Bytes() = default;
    // Takes the vector (moved, not copied).
    explicit Bytes(std::vector<uint8_t> v) {
        auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(v));
        data_ = owned->data();
        size_ = owned->size();
        owner_ = std::move(owned);
    }
    // A view of [data, data + size) that keeps `owner` (what holds those bytes) alive.
    Bytes(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
        : owner_(std::move(owner)), data_(data), size_(size) {}
    // A whole shared buffer.
    static Bytes of(std::shared_ptr<const std::vector<uint8_t>> v) {
        const uint8_t* d = v->data();
        size_t n = v->size();
        return Bytes(std::move(v), d, n);
    }

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const uint8_t* begin() const { return data_; }
    const uint8_t* end() const { return data_ + size_; }
    uint8_t operator[](size_t k) const { return data_[k]; }
    // Bytes [offset, offset + n) of this range, sharing its owner; the caller checked the range.
    Bytes slice(size_t offset, size_t n) const { return Bytes(owner_, data_ + offset, n); }
    // Whether `p` points into this range (tests check that a tensor aliases a file).
    bool contains(const void* p) const {
        auto* b = static_cast<const uint8_t*>(p);
        return size_ && b >= data_ && b < data_ + size_;
    }
    std::vector<uint8_t> to_vector() const { return std::vector<uint8_t>(begin(), end()); }

    // Equal contents (not the same buffer).
    friend bool operator==(const Bytes& a, const Bytes& b) {
        return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data_, b.data_, a.size_) == 0);
    }
    friend bool operator!=(const Bytes& a, const Bytes& b) { return !(a == b); }

private:
    std::shared_ptr<const void> owner_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

} // namespace pt2lab
