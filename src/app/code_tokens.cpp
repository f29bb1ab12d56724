// Python line tokenizer for syntax colouring (see code_tokens.h). Enough of
// Python's lexical rules for generated code: names, dotted names, numbers
// (1e-05, 0.1, -inf is a name), strings with escapes, comments.
#include "code_tokens.h"

#include <array>

namespace pt2lab::app {
namespace {

bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) {
    return ident_start(c) || (c >= '0' && c <= '9');
}
bool digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_keyword(std::string_view w) {
    static const std::array<std::string_view, 22> kw = {
        "def",  "return", "None",  "True", "False",  "class", "import", "from",
        "as",   "if",     "else",  "for",  "in",     "not",   "and",    "or",
        "pass", "lambda", "while", "with", "assert", "del"};
    for (auto k : kw)
        if (k == w) return true;
    return false;
}

bool is_target_root(std::string_view w) {
    static const std::array<std::string_view, 6> roots = {"torch",  "operator",  "builtins",
                                                          "pytree", "fx_pytree", "math"};
    for (auto r : roots)
        if (r == w) return true;
    return false;
}

} // namespace

std::vector<Token> tokenize_python_line(std::string_view s) {
    std::vector<Token> out;
    size_t i = 0;
    auto push = [&](size_t b, size_t e, TokenKind k) {
        if (!out.empty() && out.back().kind == k && out.back().end == b &&
            (k == TokenKind::Space || k == TokenKind::Punct)) {
            out.back().end = e;
            return;
        }
        out.push_back({b, e, k});
    };
    while (i < s.size()) {
        char c = s[i];
        size_t b = i;
        if (c == ' ' || c == '\t') {
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
            push(b, i, TokenKind::Space);
        } else if (c == '#') {
            push(b, s.size(), TokenKind::Comment);
            i = s.size();
        } else if (c == '\'' || c == '"') {
            ++i;
            while (i < s.size() && s[i] != c) i += s[i] == '\\' ? 2 : 1;
            i = i < s.size() ? i + 1 : s.size();
            push(b, i, TokenKind::String);
        } else if (digit(c) || (c == '.' && i + 1 < s.size() && digit(s[i + 1]))) {
            while (i < s.size() &&
                   (ident_char(s[i]) || s[i] == '.' ||
                    ((s[i] == '-' || s[i] == '+') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
                ++i;
            push(b, i, TokenKind::Number);
        } else if (ident_start(c)) {
            size_t first_end = i;
            while (first_end < s.size() && ident_char(s[first_end])) ++first_end;
            i = first_end;
            // A dotted chain: name.name.name
            while (i + 1 < s.size() && s[i] == '.' && ident_start(s[i + 1])) {
                ++i;
                while (i < s.size() && ident_char(s[i])) ++i;
            }
            std::string_view first = s.substr(b, first_end - b);
            TokenKind k = TokenKind::Name;
            if (i > first_end)
                k = first == "self"         ? TokenKind::Attribute
                    : is_target_root(first) ? TokenKind::Target
                                            : TokenKind::Name;
            else if (is_keyword(first))
                k = TokenKind::Keyword;
            push(b, i, k);
        } else {
            ++i;
            push(b, i, TokenKind::Punct);
        }
    }
    return out;
}

} // namespace pt2lab::app
