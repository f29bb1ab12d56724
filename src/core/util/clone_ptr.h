// ClonePtr<T>: an owning pointer whose copies are deep (T::clone()), so a
// struct holding a Graph can be copied member by member without a hand-kept
// list of fields that goes stale when a field is added.
#pragma once

#include <memory>

#include "util/check.h"

namespace pt2lab {

template <class T> class ClonePtr {
public:
    ClonePtr() = default;
    ClonePtr(std::unique_ptr<T> p) : p_(std::move(p)) {}
    ClonePtr(const ClonePtr& o) : p_(o.p_ ? o.p_->clone() : nullptr) {}
    ClonePtr(ClonePtr&&) noexcept = default;
    ClonePtr& operator=(const ClonePtr& o) {
        if (this != &o) p_ = o.p_ ? o.p_->clone() : nullptr;
        return *this;
    }
    ClonePtr& operator=(ClonePtr&&) noexcept = default;
    ClonePtr& operator=(std::unique_ptr<T> p) {
        p_ = std::move(p);
        return *this;
    }

    T* get() const { return p_.get(); }
    T* operator->() const {
        PT2LAB_CHECK(p_);
        return p_.get();
    }
    T& operator*() const {
        PT2LAB_CHECK(p_);
        return *p_;
    }
    explicit operator bool() const { return p_ != nullptr; }

private:
    std::unique_ptr<T> p_;
};

} // namespace pt2lab
