// PyJson: JSON text written the way Python's json.dumps writes it with its
// defaults (", " and ": " separators, ASCII only with \uXXXX escapes, floats
// as repr(float)), which is how torch.export.save writes its JSON records.
// Text only, no DOM: a program's JSON is written as its nodes are walked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/json_read.h"

namespace pt2lab {

class PyJson {
public:
    PyJson& begin_object();
    PyJson& end_object();
    PyJson& begin_array();
    PyJson& end_array();
    // An object member's key; the value follows.
    PyJson& key(std::string_view k);
    PyJson& str(std::string_view s);
    PyJson& integer(int64_t v);
    // repr(float); torch writes inf and nan as the strings "Infinity", "-Infinity", "NaN".
    PyJson& number(double v);
    PyJson& boolean(bool v);
    PyJson& null();
    // A value already written as JSON text (by another PyJson).
    PyJson& raw(std::string_view text);
    // A parsed JSON value, written again in this style (key order kept).
    PyJson& value(const json& v);

    const std::string& text() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    void separate();
    std::string out_;
    std::vector<bool> first_; // per open container: nothing written in it yet
    bool after_key_ = false;
};

// json.dumps(s): a quoted, escaped string (\uXXXX for non-ASCII; invalid UTF-8 as U+FFFD).
std::string py_json_string(std::string_view s);

} // namespace pt2lab
