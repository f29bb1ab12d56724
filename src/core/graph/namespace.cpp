// torch.fx's naming rules (_Namespace.create_name, _snake_case).
#include "graph/namespace.h"

#include <cctype>

#include "util/pyrepr.h"

namespace pt2lab {

namespace {
bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// fx's _custom_builtins: names the generated code binds itself.
bool is_custom_builtin(std::string_view s) {
    return s == "inf" || s == "nan" || s == "NoneType" || s == "torch" || s == "device" ||
           s == "fx_pytree" || s == "pytree";
}

bool is_illegal(const std::string& s) {
    return py_is_keyword(s) || py_is_builtin_name(s) || is_custom_builtin(s);
}
} // namespace

std::string snake_case(std::string_view s) {
    std::string out;
    bool prev_lower = false;
    for (char c : s) {
        bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
        if (prev_lower && upper) out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        prev_lower = std::islower(static_cast<unsigned char>(c)) != 0;
    }
    return out;
}

std::string sanitize_name(std::string_view raw) {
    // [^0-9a-zA-Z_]+ -> "_"
    std::string candidate;
    for (size_t i = 0; i < raw.size();) {
        if (is_word_char(raw[i])) {
            candidate += raw[i++];
        } else {
            candidate += '_';
            while (i < raw.size() && !is_word_char(raw[i])) ++i;
        }
    }
    if (candidate.empty()) candidate = "_unnamed";
    if (std::isdigit(static_cast<unsigned char>(candidate[0]))) candidate = "_" + candidate;
    return candidate;
}

namespace {
bool is_ascii_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!is_word_char(c)) return false;
    return true;
}

bool all_parts(std::string_view path, bool (*ok)(std::string_view)) {
    size_t start = 0;
    for (;;) {
        size_t dot = path.find('.', start);
        std::string_view part = path.substr(
            start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (!ok(part)) return false;
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}

// A submodule or attribute name: word characters and '-' (torchvision's RegNet
// names its blocks "block1-0"; codegen prints such a part as getattr(m, "block1-0"),
// inside quotes, where '-' is harmless).
bool is_attribute_part(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_word_char(c) && c != '-') return false;
    return true;
}
} // namespace

std::string node_name_problem(std::string_view name) {
    std::string shown = py_str_repr(name);
    if (!is_ascii_identifier(name))
        return "node name " + shown + " is not a Python identifier (torch.fx would have named it " +
               py_str_repr(sanitize_name(name)) + ")";
    if (py_is_keyword(std::string(name)))
        return "node name " + shown + " is a Python keyword (torch.fx would have named it " +
               py_str_repr(std::string(name) + "_1") + ")";
    return {};
}

std::string qualified_name_problem(std::string_view target) {
    if (all_parts(target, is_ascii_identifier)) return {};
    return "target " + py_str_repr(target) +
           " is not a qualified Python name (identifiers separated by '.')";
}

std::string attribute_path_problem(std::string_view path) {
    if (all_parts(path, is_attribute_part)) return {};
    return "attribute path " + py_str_repr(path) +
           " has a part that is not letters, digits, '_' and '-' (separated by '.')";
}

std::string Namespace::create_name(std::string_view raw) {
    std::string candidate = sanitize_name(raw);

    // ^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$ splits a numeric suffix off (the base is never
    // empty).
    std::string base = candidate;
    long long num = 0;
    bool has_num = false;
    size_t end = candidate.size();
    size_t d = end;
    while (d > 0 && std::isdigit(static_cast<unsigned char>(candidate[d - 1]))) --d;
    if (d < end && d > 1 && candidate[d - 1] == '_' && end - d < 18) {
        base = candidate.substr(0, d - 1);
        num = std::stoll(candidate.substr(d));
        has_num = true;
    }
    // torch 2.14's _Namespace.create_name, step for step.
    if (!has_num || used_.count(candidate)) {
        num = base_count_[base];
        if (is_illegal(candidate)) {
            ++num;
            candidate = base + "_" + std::to_string(num); // illegal names never end in _N
        }
    }
    while (used_.count(candidate)) {
        ++num;
        candidate = base + "_" + std::to_string(num);
    }
    used_.insert(candidate);
    base_count_[base] = num;
    return candidate;
}

} // namespace pt2lab
