// The page's own words in its two languages, from one table (page_strings.inc): the
// C++ UI looks them up by key, the page's HTML gets its rows as JSON
// (web_words_json). What a lesson says is the lesson's (assets/lessons); what
// torch and the core print stays as they print it. No ImGui here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pt2lab::app {

// One key per row of page_strings.inc.
enum class Str : unsigned short {
#define PT2LAB_STR(key, en, zh) key,
#include "page_strings.inc"
#undef PT2LAB_STR
};

struct StrRow {
    const char* key; // "tab_code": stable across languages (widget ids, JSON keys)
    const char* en;
    const char* zh; // zh-TW
};
// Every row, in table order (for tests and the HTML's words).
const StrRow* str_rows();
size_t str_count();

// The page's languages: the lesson languages, "zh-TW" (the course's) and "en".
// The text of `s` in `lang`: "en" is English, anything else Traditional Chinese.
const char* text(Str s, std::string_view lang);
// The row's key.
const char* key(Str s);

// The page's language when it starts: the learner's last choice (`saved`, the
// lesson language kept in localStorage), else the browser's (navigator.language:
// zh* -> zh-TW, any other -> en), else zh-TW.
std::string page_language(const std::string& saved, const std::string& browser);

// The rows the page's HTML shows (the text view's controls and index.html's own
// elements) in `lang`, as a JSON object {key: text}; web/text_view.js fills in
// their printf conversions (%s, %d) itself.
std::string web_words_json(std::string_view lang);

// printf into a std::string (the table's formats).
std::string strf(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

} // namespace pt2lab::app
