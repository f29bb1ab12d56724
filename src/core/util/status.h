// Error values for user-data problems (bad files, bad JSON, unknown ops).
// The core never throws: every fallible call returns Status or Result<T>.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "util/check.h"

namespace pt2lab {

// What went wrong with user data, and where. Rendered as
//   "<file>: <where>: <message> (hint: <hint>)"
struct Error {
    std::string file;    // file the input came from; "" when not from a file
    std::string where;   // JSON path ("$.graph_module.graph.nodes[3]"), zip entry or node ("%relu")
    std::string message; // what is wrong, in plain words
    std::string hint;    // what the user can do about it; may be ""

    std::string str() const;
};

Error make_error(std::string where, std::string message, std::string hint = {});

// Success or an Error.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error e) : error_(std::move(e)) {}
    bool ok() const { return !error_.has_value(); }
    const Error& error() const {
        PT2LAB_CHECK(error_);
        return *error_;
    }
    Error& error() {
        PT2LAB_CHECK(error_);
        return *error_;
    }

private:
    std::optional<Error> error_;
};

// A value or an Error.
template <class T> class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}
    Result(Error e) : error_(std::move(e)) {}
    bool ok() const { return value_.has_value(); }
    T& value() {
        PT2LAB_CHECK(value_);
        return *value_;
    }
    const T& value() const {
        PT2LAB_CHECK(value_);
        return *value_;
    }
    T take() {
        PT2LAB_CHECK(value_);
        return std::move(*value_);
    }
    const Error& error() const {
        PT2LAB_CHECK(error_);
        return *error_;
    }
    Error& error() {
        PT2LAB_CHECK(error_);
        return *error_;
    }
    Status status() const { return ok() ? Status() : Status(*error_); }

private:
    std::optional<T> value_;
    std::optional<Error> error_;
};

} // namespace pt2lab
