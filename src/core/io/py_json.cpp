// Python json.dumps's text: separators, string escapes, float repr.
#include "io/py_json.h"

#include <cmath>
#include <cstdio>

#include "util/pyrepr.h"

namespace pt2lab {

namespace {

// The next code point of UTF-8 text at s[i] (advancing i); U+FFFD for a bad sequence.
uint32_t next_code_point(std::string_view s, size_t& i) {
    const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    const uint8_t c = b(i);
    if (c < 0x80) {
        ++i;
        return c;
    }
    const int extra = (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 0;
    if (extra == 0 || i + extra >= s.size()) {
        ++i;
        return 0xfffd;
    }
    uint32_t cp = c & (0x3f >> extra);
    for (int k = 1; k <= extra; ++k) {
        if ((b(i + k) & 0xc0) != 0x80) {
            ++i;
            return 0xfffd;
        }
        cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    i += extra + 1;
    if (cp < kMin[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0xfffd;
    return cp;
}

void append_u(std::string& out, uint32_t unit) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", unit);
    out += buf;
}

} // namespace

std::string py_json_string(std::string_view s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = next_code_point(s, i);
        switch (cp) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (cp >= 0x20 && cp < 0x7f) {
                out += static_cast<char>(cp);
            } else if (cp < 0x10000) {
                append_u(out, cp);
            } else { // a surrogate pair, as Python writes it
                cp -= 0x10000;
                append_u(out, 0xd800 | (cp >> 10));
                append_u(out, 0xdc00 | (cp & 0x3ff));
            }
        }
    }
    return out + "\"";
}

void PyJson::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ", ";
        first_.back() = false;
    }
}

PyJson& PyJson::begin_object() {
    separate();
    out_ += '{';
    first_.push_back(true);
    return *this;
}
PyJson& PyJson::end_object() {
    PT2LAB_CHECK(!first_.empty() && !after_key_);
    first_.pop_back();
    out_ += '}';
    return *this;
}
PyJson& PyJson::begin_array() {
    separate();
    out_ += '[';
    first_.push_back(true);
    return *this;
}
PyJson& PyJson::end_array() {
    PT2LAB_CHECK(!first_.empty() && !after_key_);
    first_.pop_back();
    out_ += ']';
    return *this;
}
PyJson& PyJson::key(std::string_view k) {
    PT2LAB_CHECK(!after_key_);
    separate();
    out_ += py_json_string(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
}
PyJson& PyJson::str(std::string_view s) {
    separate();
    out_ += py_json_string(s);
    return *this;
}
PyJson& PyJson::integer(int64_t v) {
    separate();
    out_ += std::to_string(v);
    return *this;
}
PyJson& PyJson::number(double v) {
    if (std::isnan(v)) return str("NaN");
    if (std::isinf(v)) return str(v > 0 ? "Infinity" : "-Infinity");
    separate();
    out_ += py_float_repr(v);
    return *this;
}
PyJson& PyJson::boolean(bool v) {
    separate();
    out_ += v ? "true" : "false";
    return *this;
}
PyJson& PyJson::null() {
    separate();
    out_ += "null";
    return *this;
}

PyJson& PyJson::raw(std::string_view text) {
    separate();
    out_ += text;
    return *this;
}

PyJson& PyJson::value(const json& v) {
    switch (v.type()) {
    case json::value_t::object:
        begin_object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            key(it.key());
            value(*it);
        }
        return end_object();
    case json::value_t::array:
        begin_array();
        for (const auto& x : v) value(x);
        return end_array();
    case json::value_t::string: return str(v.get_ref<const std::string&>());
    case json::value_t::boolean: return boolean(v.get<bool>());
    case json::value_t::number_integer: return integer(v.get<int64_t>());
    case json::value_t::number_unsigned: return integer(static_cast<int64_t>(v.get<uint64_t>()));
    case json::value_t::number_float: return number(v.get<double>());
    case json::value_t::null:
    case json::value_t::binary:
    case json::value_t::discarded: return null();
    }
    return null();
}

} // namespace pt2lab
