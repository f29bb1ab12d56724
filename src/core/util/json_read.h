// Helpers for reading untrusted JSON without exceptions: every accessor
// checks the type and reports the JSON path ("$.graph_module.graph.nodes[3]").
// Internal to src/core/io.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace pt2lab {

// ordered: key order carries meaning (kwargs order in fx graphs, dict contexts).
using json = nlohmann::ordered_json;

// Parses text; on failure the error carries nlohmann's message with the byte
// position, and `file`.
Result<json> parse_json_text(const std::string& text, const std::string& file,
                             const std::string& where = "$");

// A JSON value together with its path, for precise error messages.
struct JsonAt {
    const json* v;
    std::string path;
    const std::string* file;

    Error error(const std::string& message, const std::string& hint = {}) const;

    bool is_object() const { return v->is_object(); }
    bool is_array() const { return v->is_array(); }
    bool has(const char* key) const { return v->is_object() && v->find(key) != v->end(); }
    size_t size() const { return v->size(); }

    // Member `key` (null JsonAt.v when absent).
    JsonAt get(const std::string& key) const;
    JsonAt index(size_t i) const;

    Result<JsonAt> member(const std::string& key) const;   // error when absent
    Result<JsonAt> object(const std::string& key) const;   // member that must be an object
    Result<JsonAt> array(const std::string& key) const;    // member that must be an array
    Result<std::string> str(const std::string& key) const; // member that must be a string
    Result<int64_t> integer(const std::string& key) const; // member that must be an integer
    Result<bool> boolean(const std::string& key) const;
    std::string str_or(const std::string& key, const std::string& fallback) const;

    Result<std::string> as_str() const;
    Result<int64_t> as_int() const;
    Result<double> as_double() const; // numbers and "Infinity"/"-Infinity"/"NaN"
    Result<bool> as_bool() const;

    // The single key of a tagged-union object ({"as_tensor": {...}}).
    Result<std::string> union_key() const;
};

JsonAt json_root(const json& j, const std::string* file, std::string path = "$");

// Short, one-line preview of a JSON value for messages.
std::string json_preview(const json& j, size_t max_len = 60);

} // namespace pt2lab
