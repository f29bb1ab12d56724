// Exception-free JSON access with paths in every error.
#include "util/json_read.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_set>
#include <vector>

#include "util/utf8.h"

namespace pt2lab {

namespace {

// Builds the DOM from the tokenizer below (iterative: its own stack), so that
// hostile text cannot cost more than linear time or reach any recursion:
//  - nesting deeper than kMaxJsonDepth is refused before it is built (copy,
//    dump and destruction of a json value recurse; deeper values never exist);
//  - object members are collected beside the object and moved into it when it
//    closes: no ordered_map key search per member (quadratic for a 100k-key
//    object), and no deep copies when the member vector grows (the vector of
//    pair<const string, json> copies on reallocation, because that pair's
//    move may throw); duplicates are found with a hash set once an object
//    grows past a few keys, and refused;
//  - integers past int64 are refused, so every accessor can read int64.
class DomBuilder {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    explicit DomBuilder(json& root) : root_(root) {}

    bool null() { return value(json(nullptr)); }
    bool boolean(bool b) { return value(json(b)); }
    bool number_integer(number_integer_t i) { return value(json(i)); }
    bool number_unsigned(number_unsigned_t u) {
        if (u > static_cast<number_unsigned_t>(INT64_MAX))
            return fail("integer " + std::to_string(u) +
                        " is out of range (pt2lab reads 64-bit signed integers)");
        return value(json(static_cast<number_integer_t>(u)));
    }
    bool number_float(number_float_t f) { return value(json(f)); }
    bool string(string_t& s) { return value(json(std::move(s))); }
    bool start_object(std::size_t) { return open(json::value_t::object); }
    bool start_array(std::size_t) { return open(json::value_t::array); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(string_t& k) {
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
    std::string message; // the first error, "" on success
    std::string path;    // where it happened (guard errors)

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

// The tokenizer over DomBuilder: strict RFC 8259 (what nlohmann's strict
// parser accepts: no comments, no trailing commas, no leading zeros, UTF-8
// checked in strings, nothing but whitespace after the value), with its state
// kept between calls so that step() can stop after any token.
struct JsonParser::Impl {
    Impl(std::string_view t, std::string f, std::string w)
        : text(t), file(std::move(f)), where(std::move(w)), builder(root) {}

    enum class Expect : uint8_t {
        Value,        // a value (the root, after ':' or ',' in an array)
        ValueOrClose, // after '['
        KeyOrClose,   // after '{'
        Key,          // after ',' in an object
        Colon,        // after a key
        CommaOrClose, // after a member or an element
        End,          // after the root: whitespace only
    };

    std::string_view text;
    std::string file, where;
    json root;
    DomBuilder builder;
    size_t pos = 0;
    Expect expect = Expect::Value;
    std::vector<char> open; // '{' or '[' per level being read
    bool over = false;
    std::string error, hint, error_path; // error_path: a guard's JSON path
    std::string scratch;                 // string and number text

    bool fail_at(size_t at, const std::string& what) {
        size_t line = 1, col = 1;
        for (size_t k = 0; k < at && k < text.size(); ++k) {
            if (text[k] == '\n')
                ++line, col = 1;
            else
                ++col;
        }
        error = "invalid JSON: " + what + " at line " + std::to_string(line) + ", column " +
                std::to_string(col) + " (byte " + std::to_string(at) + ")";
        over = true;
        return false;
    }
    bool guard_failed() { // a DomBuilder check refused the value
        error = builder.message;
        hint = builder.hint;
        error_path = builder.path;
        over = true;
        return false;
    }
    static bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
    void skip_space() {
        while (pos < text.size() && space(text[pos])) ++pos;
    }
    static const char* found_word(char c) {
        switch (c) {
        case '}': return "'}'";
        case ']': return "']'";
        case ',': return "','";
        case ':': return "':'";
        default: return nullptr;
        }
    }
    std::string found(size_t at) const {
        if (at >= text.size()) return "the end of the text";
        char c = text[at];
        if (const char* w = found_word(c)) return w;
        if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
            return std::string("'") + c + "'";
        char b[16];
        std::snprintf(b, sizeof b, "byte 0x%02x", static_cast<unsigned char>(c));
        return b;
    }

    // One token; false when it failed.
    bool token() {
        skip_space();
        if (expect == Expect::End) {
            if (pos < text.size()) return fail_at(pos, "text after the value (" + found(pos) + ")");
            over = true;
            return true;
        }
        if (pos >= text.size()) return fail_at(pos, "unexpected end of the text");
        const char c = text[pos];
        switch (expect) {
        case Expect::Colon:
            if (c != ':') return fail_at(pos, "expected ':' after a key, found " + found(pos));
            ++pos;
            expect = Expect::Value;
            return true;
        case Expect::CommaOrClose: {
            const char close = open.back() == '{' ? '}' : ']';
            if (c == ',') {
                ++pos;
                expect = open.back() == '{' ? Expect::Key : Expect::Value;
                return true;
            }
            if (c != close)
                return fail_at(pos,
                               std::string("expected ',' or '") + close + "', found " + found(pos));
            return close_level();
        }
        case Expect::KeyOrClose:
            if (c == '}') return close_level();
            [[fallthrough]];
        case Expect::Key:
            if (c != '"') return fail_at(pos, "expected a key (a string), found " + found(pos));
            if (!string_token()) return false;
            if (!builder.key(scratch)) return guard_failed();
            expect = Expect::Colon;
            return true;
        case Expect::ValueOrClose:
            if (c == ']') return close_level();
            [[fallthrough]];
        case Expect::Value: return value(c);
        case Expect::End: break;
        }
        return true;
    }

    bool close_level() {
        const bool object = open.back() == '{';
        ++pos;
        open.pop_back();
        if (!(object ? builder.end_object() : builder.end_array())) return guard_failed();
        after_value();
        return true;
    }
    void after_value() { expect = open.empty() ? Expect::End : Expect::CommaOrClose; }

    bool value(char c) {
        bool ok = true;
        switch (c) {
        case '{':
        case '[':
            ok = c == '{' ? builder.start_object(0) : builder.start_array(0);
            if (!ok) return guard_failed();
            ++pos;
            open.push_back(c);
            expect = c == '{' ? Expect::KeyOrClose : Expect::ValueOrClose;
            return true;
        case '"':
            if (!string_token()) return false;
            ok = builder.string(scratch);
            break;
        case 't': ok = literal("true") && builder.boolean(true); break;
        case 'f': ok = literal("false") && builder.boolean(false); break;
        case 'n': ok = literal("null") && builder.null(); break;
        default:
            if (c == '-' || (c >= '0' && c <= '9')) {
                ok = number();
                break;
            }
            return fail_at(pos, "expected a value, found " + found(pos));
        }
        if (over) return false; // the literal or number failed
        if (!ok) return guard_failed();
        after_value();
        return true;
    }

    bool literal(const char* word) {
        const size_t n = std::strlen(word);
        if (text.substr(pos, n) != word) {
            size_t k = 0;
            while (k < n && pos + k < text.size() && text[pos + k] == word[k]) ++k;
            fail_at(pos + k, std::string("invalid literal (expected ") + word + ")");
            return false;
        }
        pos += n;
        return true;
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }
    bool number() {
        const size_t start = pos;
        size_t p = pos;
        const size_t n = text.size();
        bool negative = false, integral = true;
        if (text[p] == '-') negative = true, ++p;
        if (p >= n || !digit(text[p])) return fail_at(p, "invalid number: expected a digit");
        if (text[p] == '0') {
            ++p;
            if (p < n && digit(text[p]))
                return fail_at(p, "invalid number: leading zeros are not JSON");
        } else {
            while (p < n && digit(text[p])) ++p;
        }
        if (p < n && text[p] == '.') {
            integral = false;
            ++p;
            if (p >= n || !digit(text[p]))
                return fail_at(p, "invalid number: expected a digit after '.'");
            while (p < n && digit(text[p])) ++p;
        }
        if (p < n && (text[p] == 'e' || text[p] == 'E')) {
            integral = false;
            ++p;
            if (p < n && (text[p] == '+' || text[p] == '-')) ++p;
            if (p >= n || !digit(text[p]))
                return fail_at(p, "invalid number: expected a digit in the exponent");
            while (p < n && digit(text[p])) ++p;
        }
        pos = p;
        if (integral) {
            // Digits accumulated with overflow checks; past 64 bits it is read as a
            // float, as nlohmann does (the builder refuses unsigned past int64).
            uint64_t u = 0;
            bool overflow = false;
            for (size_t k = start + (negative ? 1 : 0); k < p; ++k) {
                const uint64_t d = static_cast<uint64_t>(text[k] - '0');
                if (u > (UINT64_MAX - d) / 10) {
                    overflow = true;
                    break;
                }
                u = u * 10 + d;
            }
            if (!overflow) {
                if (!negative) return builder.number_unsigned(u);
                if (u <= static_cast<uint64_t>(INT64_MAX) + 1)
                    return builder.number_integer(u == static_cast<uint64_t>(INT64_MAX) + 1
                                                      ? INT64_MIN
                                                      : -static_cast<int64_t>(u));
            }
        }
        scratch.assign(text.data() + start, p - start);
        const double d = std::strtod(scratch.c_str(), nullptr);
        if (!std::isfinite(d)) return fail_at(start, "number " + scratch + " is out of range");
        return builder.number_float(d);
    }

    static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }
    bool hex4(size_t at, uint32_t& out) {
        if (at + 4 > text.size()) return fail_at(at, "invalid string: \\u needs four hex digits");
        out = 0;
        for (size_t k = 0; k < 4; ++k) {
            int h = hex(text[at + k]);
            if (h < 0) return fail_at(at + k, "invalid string: \\u needs four hex digits");
            out = out * 16 + static_cast<uint32_t>(h);
        }
        return true;
    }
    void put_utf8(uint32_t cp) { append_utf8(scratch, cp); }
    // Length of the well-formed UTF-8 sequence at `at` (RFC 3629: no overlongs,
    // no surrogates, nothing past U+10FFFF), 0 when ill-formed.
    size_t utf8_length(size_t at) const {
        auto b = [&](size_t k) {
            return at + k < text.size() ? static_cast<unsigned char>(text[at + k]) : 0u;
        };
        const unsigned c = b(0);
        auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
            return b(k) >= lo && b(k) <= hi;
        };
        if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
        if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
        if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
        if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
        if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
        if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
        if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
        return 0;
    }

    // The string at pos (its opening quote) into scratch.
    bool string_token() {
        scratch.clear();
        size_t p = pos + 1;
        const size_t n = text.size();
        while (true) {
            size_t run = p;
            while (run < n) {
                const auto u = static_cast<unsigned char>(text[run]);
                if (u == '"' || u == '\\' || u < 0x20 || u >= 0x80) break;
                ++run;
            }
            scratch.append(text.data() + p, run - p);
            p = run;
            if (p >= n) return fail_at(pos, "invalid string: it never ends");
            const auto u = static_cast<unsigned char>(text[p]);
            if (u == '"') {
                pos = p + 1;
                return true;
            }
            if (u < 0x20)
                return fail_at(p, "invalid string: control character " + found(p) +
                                      " must be escaped");
            if (u >= 0x80) {
                const size_t len = utf8_length(p);
                if (!len) return fail_at(p, "invalid string: ill-formed UTF-8 " + found(p));
                scratch.append(text.data() + p, len);
                p += len;
                continue;
            }
            // A backslash.
            if (p + 1 >= n) return fail_at(p, "invalid string: it never ends");
            const char e = text[p + 1];
            p += 2;
            switch (e) {
            case '"': scratch += '"'; break;
            case '\\': scratch += '\\'; break;
            case '/': scratch += '/'; break;
            case 'b': scratch += '\b'; break;
            case 'f': scratch += '\f'; break;
            case 'n': scratch += '\n'; break;
            case 'r': scratch += '\r'; break;
            case 't': scratch += '\t'; break;
            case 'u': {
                uint32_t cp = 0;
                if (!hex4(p, cp)) return false;
                p += 4;
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    return fail_at(p - 6, "invalid string: a low surrogate without a high one");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo = 0;
                    if (p + 1 >= n || text[p] != '\\' || text[p + 1] != 'u')
                        return fail_at(p, "invalid string: a high surrogate without a low one");
                    if (!hex4(p + 2, lo)) return false;
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return fail_at(p, "invalid string: a high surrogate without a low one");
                    p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                put_utf8(cp);
                break;
            }
            default: return fail_at(p - 2, "invalid string: unknown escape \\" + found(p - 1));
            }
        }
    }
};

JsonParser::JsonParser(std::string_view text, std::string file, std::string where)
    : impl_(std::make_unique<Impl>(text, std::move(file), std::move(where))) {
}
JsonParser::~JsonParser() = default;

bool JsonParser::step(size_t bytes) {
    Impl& p = *impl_;
    const size_t stop = bytes >= p.text.size() - p.pos ? p.text.size() : p.pos + bytes;
    while (!p.over) {
        if (!p.token()) break;
        // At the end of the text the next token says whether it is complete.
        if (p.pos >= stop && p.pos < p.text.size()) return false;
    }
    return true;
}

size_t JsonParser::done() const {
    return impl_->pos;
}
size_t JsonParser::size() const {
    return impl_->text.size();
}

Result<json> JsonParser::finish() {
    Impl& p = *impl_;
    PT2LAB_CHECK(p.over);
    if (p.error.empty()) return std::move(p.root);
    Error e = p.error_path.empty()
                  ? make_error(p.where, p.error,
                               "the file is damaged or was edited by hand; export it again")
                  : make_error(p.error_path, p.error, p.hint);
    e.file = p.file;
    return e;
}

Result<json> parse_json_text(std::string_view text, const std::string& file,
                             const std::string& where) {
    JsonParser p(text, file, where);
    p.step(SIZE_MAX);
    return p.finish();
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
