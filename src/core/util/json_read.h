// Helpers for reading untrusted JSON without exceptions: every accessor
// checks the type and reports the JSON path ("$.graph_module.graph.nodes[3]").
// Internal to src/core/io.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace pt2lab {

// ordered: key order carries meaning (kwargs order in fx graphs, dict contexts).
using json = nlohmann::ordered_json;

// Deepest nesting of arrays and objects pt2lab reads (torch.export files
// nest about 10 levels; every reader of the value may recurse this deep).
constexpr size_t kMaxJsonDepth = 256;

// Parses text in linear time; on failure the error says what was wrong with
// its line, column and byte, and names `file`. Refuses (with the JSON path) nesting
// deeper than kMaxJsonDepth, duplicate keys in one object and integers past
// int64, so every value it returns is safe to copy, dump and read as int64.
Result<json> parse_json_text(std::string_view text, const std::string& file,
                             const std::string& where = "$");

// The same parse in steps, for a caller that must keep doing other things (the
// page opening a big file between frames): parse_json_text is one of these
// stepped to the end. `text` must outlive the parser.
class JsonParser {
public:
    JsonParser(std::string_view text, std::string file, std::string where = "$");
    ~JsonParser();
    JsonParser(const JsonParser&) = delete;
    JsonParser& operator=(const JsonParser&) = delete;
    // Reads about `bytes` more of the text (at least one token); true once the
    // whole text is read or has failed.
    bool step(size_t bytes);
    size_t done() const; // bytes read
    size_t size() const; // of the text
    // The value or the error (with the JSON path, the line and column); after step() said true.
    Result<json> finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

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

// An object's members in order, indexable (a reader that stops partway keeps an index).
inline const json::object_t::Container& json_members(const json& object) {
    return static_cast<const json::object_t::Container&>(*object.get_ptr<const json::object_t*>());
}

// Short, one-line preview of a JSON value for messages; costs O(max_len).
std::string json_preview(const json& j, size_t max_len = 60);

} // namespace pt2lab
