// Exception-free JSON access with paths in every error.
#include "util/json_read.h"

#include <cmath>
#include <limits>
#include <memory>
#include <unordered_set>
#include <vector>

namespace pt2lab {

namespace {

// Builds the DOM from nlohmann's (iterative) SAX parser, so that hostile text
// cannot cost more than linear time or reach any recursion:
//  - nesting deeper than kMaxJsonDepth is refused before it is built (copy,
//    dump and destruction of a json value recurse; deeper values never exist);
//  - object members are collected beside the object and moved into it when it
//    closes: no ordered_map key search per member (quadratic for a 100k-key
//    object), and no deep copies when the member vector grows (the vector of
//    pair<const string, json> copies on reallocation, because that pair's
//    move may throw); duplicates are found with a hash set once an object
//    grows past a few keys, and refused;
//  - integers past int64 are refused, so every accessor can read int64.
class DomBuilder : public nlohmann::json_sax<json> {
public:
    explicit DomBuilder(json& root) : root_(root) {}

    bool null() override { return value(json(nullptr)); }
    bool boolean(bool b) override { return value(json(b)); }
    bool number_integer(number_integer_t i) override { return value(json(i)); }
    bool number_unsigned(number_unsigned_t u) override {
        if (u > static_cast<number_unsigned_t>(INT64_MAX))
            return fail("integer " + std::to_string(u) +
                        " is out of range (pt2lab reads 64-bit signed integers)");
        return value(json(static_cast<number_integer_t>(u)));
    }
    bool number_float(number_float_t f, const string_t&) override { return value(json(f)); }
    bool string(string_t& s) override { return value(json(std::move(s))); }
    bool binary(binary_t&) override { return fail("binary values are not JSON"); }
    bool start_object(std::size_t) override { return open(json::value_t::object); }
    bool start_array(std::size_t) override { return open(json::value_t::array); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        Frame& f = stack_.back();
        auto& members = f.members;
        if (f.keys) {
            if (!f.keys->insert(k).second) return duplicate(f, k);
        } else {
            for (const auto& m : members)
                if (m.first == k) return duplicate(f, k);
            if (members.size() >= kLinearKeys) {
                f.keys = std::make_unique<std::unordered_set<std::string>>();
                for (const auto& m : members) f.keys->insert(m.first);
                f.keys->insert(k);
            }
        }
        members.emplace_back(std::move(k), json());
        f.pending = &members.back().second;
        return true;
    }
    bool parse_error(std::size_t pos, const std::string&,
                     const nlohmann::detail::exception& ex) override {
        if (message.empty()) {
            message = ex.what();
            // nlohmann prefixes "[json.exception.parse_error.101] "; keep the readable part.
            size_t close_at = message.find("] ");
            if (message.rfind("[json.exception", 0) == 0 && close_at != std::string::npos)
                message = message.substr(close_at + 2);
            message = "invalid JSON: " + message;
            position = pos;
        }
        return false;
    }

    std::string message; // the first error, "" on success
    std::string path;    // where it happened (guard errors)
    size_t position = 0;

private:
    static constexpr size_t kLinearKeys = 16;
    struct Frame {
        json* v;
        json* pending = nullptr; // object: the member value the next value fills
        std::string bad_key;     // object: a refused key (for the error's path)
        // object: its members until it closes (a non-const key: moves on growth)
        std::vector<std::pair<std::string, json>> members;
        std::unique_ptr<std::unordered_set<std::string>> keys;
    };

    // Where the next value goes.
    json* slot() {
        if (stack_.empty()) return &root_;
        Frame& f = stack_.back();
        if (f.v->is_array()) {
            f.v->get_ptr<json::array_t*>()->emplace_back();
            return &f.v->get_ptr<json::array_t*>()->back();
        }
        json* p = f.pending;
        f.pending = nullptr;
        return p;
    }
    bool value(json v) {
        *slot() = std::move(v);
        return true;
    }
    bool open(json::value_t t) {
        if (stack_.size() >= kMaxJsonDepth)
            return fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                        "no torch.export file nests this deep; the file is damaged or was made "
                        "to crash readers");
        json* s = slot();
        *s = json(t);
        Frame f;
        f.v = s;
        stack_.push_back(std::move(f));
        return true;
    }
    bool close() {
        Frame& f = stack_.back();
        if (f.v->is_object()) {
            auto& obj = static_cast<json::object_t::Container&>(*f.v->get_ptr<json::object_t*>());
            obj.reserve(f.members.size());
            for (auto& m : f.members) obj.emplace_back(std::move(m.first), std::move(m.second));
        }
        stack_.pop_back();
        return true;
    }
    bool duplicate(Frame& f, const std::string& k) {
        f.bad_key = k;
        return fail("duplicate key \"" + k + "\" in one object",
                    "JSON allows it, but pt2lab will not guess which value is meant; keep one");
    }
    bool fail(const std::string& msg, const std::string& why = {}) {
        message = msg;
        hint = why;
        path = current_path();
        return false;
    }
    // "$.graph_module.graph.nodes[3]" for the value about to be read (in an
    // array: the next element); long paths keep their first and last components.
    std::string current_path() const {
        std::vector<std::string> parts;
        for (size_t k = 0; k < stack_.size(); ++k) {
            const Frame& f = stack_[k];
            size_t n = f.v->size();
            if (f.v->is_array())
                parts.push_back("[" + std::to_string(k + 1 == stack_.size() ? n : n - 1) + "]");
            else
                parts.push_back("." + (!f.bad_key.empty()  ? f.bad_key
                                       : f.members.empty() ? std::string()
                                                           : f.members.back().first));
        }
        std::string s = "$";
        const size_t head = 8, tail = 4;
        for (size_t k = 0; k < parts.size(); ++k) {
            if (parts.size() > head + tail && k == head)
                s += "...(" + std::to_string(parts.size() - head - tail) + " more levels)...";
            if (parts.size() > head + tail && k >= head && k < parts.size() - tail) continue;
            s += parts[k];
        }
        return s;
    }

public:
    std::string hint;

private:
    json& root_;
    std::vector<Frame> stack_;
};

} // namespace

Result<json> parse_json_text(const std::string& text, const std::string& file,
                             const std::string& where) {
    json root;
    DomBuilder b(root);
    bool ok = json::sax_parse(text, &b, nlohmann::detail::input_format_t::json, /*strict=*/true);
    if (ok && b.message.empty()) return root;
    Error e = b.path.empty()
                  ? make_error(where, b.message.empty() ? "invalid JSON" : b.message,
                               "the file is damaged or was edited by hand; export it again")
                  : make_error(b.path, b.message, b.hint);
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

namespace {
// Appends JSON text for j until `out` holds more than `max` characters: the
// cost is bounded by the preview's length, not by the value's size.
void preview_into(const json& j, std::string& out, size_t max) {
    if (out.size() > max) return;
    switch (j.type()) {
    case json::value_t::object: {
        out += '{';
        bool first = true;
        for (auto it = j.begin(); it != j.end() && out.size() <= max; ++it) {
            if (!first) out += ',';
            first = false;
            preview_into(json(it.key().substr(0, max)), out, max);
            out += ':';
            preview_into(*it, out, max);
        }
        out += '}';
        return;
    }
    case json::value_t::array: {
        out += '[';
        for (size_t k = 0; k < j.size() && out.size() <= max; ++k) {
            if (k) out += ',';
            preview_into(j[k], out, max);
        }
        out += ']';
        return;
    }
    case json::value_t::string: {
        const auto& s = j.get_ref<const std::string&>();
        out += json(s.size() > max ? s.substr(0, max) : s)
                   .dump(-1, ' ', false, json::error_handler_t::replace);
        return;
    }
    default: out += j.dump(); return;
    }
}
} // namespace

std::string json_preview(const json& j, size_t max_len) {
    std::string s;
    preview_into(j, s, max_len);
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
