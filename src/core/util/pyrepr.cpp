// Python-compatible repr of floats and strings, and Python's reserved names.
#include "util/pyrepr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pt2lab {

namespace {

// Shortest "%.*e" form that parses back to exactly v. Returns the digits
// (no dot) and the decimal exponent of the first digit.
void shortest_digits(double v, std::string& digits, int& exp10) {
    char buf[64];
    auto round_trips = [&](int prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec, v);
        return std::strtod(buf, nullptr) == v;
    };
    // A form with one more digit, correctly rounded, is at least as close to v, so
    // the precisions that round-trip are those from the shortest on (the one
    // place this could fail, the lopsided interval around a power of two, holds
    // for all 2^-1074..2^1023 and their neighbours): a binary search over 0..16
    // (17 digits always do).
    int lo = 0, hi = 16;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (round_trips(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    std::snprintf(buf, sizeof buf, "%.*e", lo, v);
    // buf looks like "d.ddddde+XX" or "de-XX"
    const char* e = std::strchr(buf, 'e');
    digits.clear();
    for (const char* p = buf; p < e; ++p)
        if (*p >= '0' && *p <= '9') digits += *p;
    exp10 = std::atoi(e + 1);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

} // namespace

std::string py_float_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string sign = std::signbit(v) ? "-" : "";
    if (v == 0.0) return sign + "0.0";
    std::string digits;
    int exp10 = 0;
    shortest_digits(std::fabs(v), digits, exp10);
    // Python's float_repr_style 'short': decpt = exp10 + 1; exponent form if
    // decpt <= -4 or decpt > 16.
    int decpt = exp10 + 1;
    std::string out;
    if (decpt <= -4 || decpt > 16) {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        out += eb;
    } else if (decpt <= 0) {
        out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    } else if (static_cast<size_t>(decpt) >= digits.size()) {
        out = digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
        out = digits.substr(0, static_cast<size_t>(decpt)) + "." +
              digits.substr(static_cast<size_t>(decpt));
    }
    return sign + out;
}

std::string py_str_repr(std::string_view s) {
    bool has_single = s.find('\'') != std::string_view::npos;
    bool has_double = s.find('"') != std::string_view::npos;
    char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    for (unsigned char c : s) {
        if (c == static_cast<unsigned char>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else {
            out += static_cast<char>(c); // UTF-8 bytes of printable text pass through
        }
    }
    out += quote;
    return out;
}

bool py_is_identifier(std::string_view s) {
    if (s.empty()) return false;
    auto alpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (!alpha(s[0])) return false;
    return std::all_of(s.begin() + 1, s.end(),
                       [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

namespace {
// keyword.kwlist of Python 3.11.
const char* const kKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

// sorted(builtins.__dict__) of Python 3.11 (what torch.fx's namespace refuses to shadow).
#include "util/builtin_names.inc"
} // namespace

bool py_is_keyword(std::string_view s) {
    return std::any_of(std::begin(kKeywords), std::end(kKeywords),
                       [&](const char* k) { return s == k; });
}

bool py_is_builtin_name(std::string_view s) {
    return std::binary_search(std::begin(kBuiltinNames), std::end(kBuiltinNames), s,
                              [](std::string_view a, std::string_view b) { return a < b; });
}

} // namespace pt2lab
