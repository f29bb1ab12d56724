// Exception-free JSON access with paths in every error.
#include "util/json_read.h"

#include <cmath>
#include <limits>

namespace pt2lab {

namespace {
// SAX handler that accepts everything and keeps the first parse error.
struct ErrorCatcher : nlohmann::json_sax<json> {
    std::string message;
    size_t position = 0;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t pos, const std::string&,
                     const nlohmann::detail::exception& ex) override {
        position = pos;
        message = ex.what();
        return false;
    }
};
} // namespace

Result<json> parse_json_text(const std::string& text, const std::string& file,
                             const std::string& where) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) return j;
    ErrorCatcher c;
    json::sax_parse(text, &c, nlohmann::detail::input_format_t::json, /*strict=*/true);
    std::string msg = c.message.empty() ? "invalid JSON" : c.message;
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the readable part.
    size_t close = msg.find("] ");
    if (msg.rfind("[json.exception", 0) == 0 && close != std::string::npos)
        msg = msg.substr(close + 2);
    Error e = make_error(where, "invalid JSON: " + msg,
                         "the file is damaged or was edited by hand; export it again");
    e.file = file;
    return e;
}

Error JsonAt::error(const std::string& message, const std::string& hint) const {
    Error e = make_error(path, message, hint);
    if (file) e.file = *file;
    return e;
}

JsonAt json_root(const json& j, const std::string* file, std::string path) {
    return JsonAt{&j, std::move(path), file};
}

JsonAt JsonAt::get(const std::string& key) const {
    static const json kNull;
    if (!v->is_object()) return JsonAt{&kNull, path + "." + key, file};
    auto it = v->find(key);
    if (it == v->end()) return JsonAt{nullptr, path + "." + key, file};
    return JsonAt{&*it, path + "." + key, file};
}

JsonAt JsonAt::index(size_t i) const {
    return JsonAt{&(*v)[i], path + "[" + std::to_string(i) + "]", file};
}

std::string json_preview(const json& j, size_t max_len) {
    std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > max_len) s = s.substr(0, max_len) + "...";
    return s;
}

namespace {
const char* type_word(const json& j) {
    switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_float: return "a float";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    default: return "something else";
    }
}
} // namespace

Result<JsonAt> JsonAt::member(const std::string& key) const {
    if (!v->is_object()) return error(std::string("expected an object, found ") + type_word(*v));
    JsonAt m = get(key);
    if (!m.v) return error("missing key \"" + key + "\"");
    return m;
}

Result<JsonAt> JsonAt::object(const std::string& key) const {
    auto m = member(key);
    if (!m.ok()) return m;
    if (!m.value().v->is_object())
        return m.value().error(std::string("expected an object, found ") + type_word(*m.value().v));
    return m;
}

Result<JsonAt> JsonAt::array(const std::string& key) const {
    auto m = member(key);
    if (!m.ok()) return m;
    if (!m.value().v->is_array())
        return m.value().error(std::string("expected an array, found ") + type_word(*m.value().v));
    return m;
}

Result<std::string> JsonAt::as_str() const {
    if (!v->is_string()) return error(std::string("expected a string, found ") + type_word(*v));
    return v->get_ref<const std::string&>();
}

Result<int64_t> JsonAt::as_int() const {
    if (v->is_number_integer()) return v->get<int64_t>();
    return error(std::string("expected an integer, found ") + type_word(*v) + " " +
                 json_preview(*v));
}

Result<double> JsonAt::as_double() const {
    if (v->is_number()) return v->get<double>();
    if (v->is_string()) {
        const auto& s = v->get_ref<const std::string&>();
        if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
        if (s == "NaN" || s == "nan") return std::nan("");
    }
    return error(std::string("expected a number, found ") + type_word(*v) + " " + json_preview(*v));
}

Result<bool> JsonAt::as_bool() const {
    if (v->is_boolean()) return v->get<bool>();
    return error(std::string("expected true or false, found ") + type_word(*v));
}

Result<std::string> JsonAt::str(const std::string& key) const {
    auto m = member(key);
    if (!m.ok()) return m.error();
    return m.value().as_str();
}

Result<int64_t> JsonAt::integer(const std::string& key) const {
    auto m = member(key);
    if (!m.ok()) return m.error();
    return m.value().as_int();
}

Result<bool> JsonAt::boolean(const std::string& key) const {
    auto m = member(key);
    if (!m.ok()) return m.error();
    return m.value().as_bool();
}

std::string JsonAt::str_or(const std::string& key, const std::string& fallback) const {
    JsonAt m = get(key);
    if (!m.v || !m.v->is_string()) return fallback;
    return m.v->get_ref<const std::string&>();
}

Result<std::string> JsonAt::union_key() const {
    if (!v->is_object())
        return error(std::string("expected a one-key object, found ") + type_word(*v));
    if (v->size() != 1) {
        // Tolerate serializers that also write null members for the other union fields.
        std::string found;
        int non_null = 0;
        for (auto it = v->begin(); it != v->end(); ++it)
            if (!it->is_null()) ++non_null, found = it.key();
        if (non_null == 1) return found;
        return error("expected exactly one key, found " + std::to_string(v->size()) + ": " +
                     json_preview(*v));
    }
    return v->begin().key();
}

} // namespace pt2lab
