// The page's words (see page_strings.h): the table from page_strings.inc, lookups, the
// starting language and the HTML's share of the rows as JSON.
#include "page_strings.h"

#include <cstdarg>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace pt2lab::app {
namespace {

constexpr StrRow kRows[] = {
#define PT2LAB_STR(key, en, zh) {#key, en, zh},
#include "page_strings.inc"
#undef PT2LAB_STR
};

// One row per key (the enum and the array come from the same rows, in order).
constexpr size_t kCount = 0
#define PT2LAB_STR(key, en, zh) +1
#include "page_strings.inc"
#undef PT2LAB_STR
    ;
static_assert(sizeof kRows / sizeof kRows[0] == kCount, "one row per Str key");

// Every row has both languages (an empty one would show as nothing on the page).
constexpr bool all_translated() {
    for (const StrRow& r : kRows)
        if (!r.en[0] || !r.zh[0]) return false;
    return true;
}
static_assert(all_translated(), "a row of page_strings.inc has an empty text");

// What the page's HTML shows, by key: web/text_view.js and index.html's elements
// read these (and nothing else) from window.pt2lab.words.
constexpr Str kWebWords[] = {
    Str::web_title,
    Str::web_toggle,
    Str::web_lesson,
    Str::web_canvas,
    Str::web_drop,
    Str::web_history,
    Str::web_close,
    Str::web_step,
    Str::web_action,
    Str::lesson_done,
    Str::web_results,
    Str::torch_raises,
    Str::torch_raises_type,
    Str::an_error,
    Str::web_parity,
    Str::web_parity_n,
    Str::res_line,
    Str::res_changed,
    Str::res_unchanged,
    Str::res_runs,
    Str::parity_bit_identical,
    Str::parity_differs,
    Str::web_diff,
    Str::diff_added,
    Str::diff_removed,
    Str::diff_rewired,
    Str::diff_changed,
    Str::web_list_sep,
    Str::web_part_sep,
    Str::web_end,
    Str::web_no_diff,
    Str::web_graph,
    Str::web_view_program,
    Str::web_nodes,
    Str::web_ops,
    Str::web_highlight,
    Str::web_lint,
    Str::web_lint_ok,
    Str::lesson_check,
    Str::lesson_quiz,
    Str::web_answer,
    Str::web_choose,
    Str::web_answered,
    Str::lesson_right,
    Str::lesson_wrong,
    Str::lesson_predicted,
    Str::web_prev,
    Str::web_next,
    Str::web_last,
    Str::web_link,
    Str::web_none,
    Str::lesson_next_lesson,
    Str::lesson_next_lesson_tip,
};

} // namespace

const StrRow* str_rows() {
    return kRows;
}

size_t str_count() {
    return kCount;
}

const char* text(Str s, std::string_view lang) {
    const StrRow& r = kRows[static_cast<size_t>(s)];
    return lang == "en" ? r.en : r.zh;
}

const char* key(Str s) {
    return kRows[static_cast<size_t>(s)].key;
}

std::string page_language(const std::string& saved, const std::string& browser) {
    if (saved == "en" || saved == "zh-TW") return saved;
    if (browser.empty()) return "zh-TW";
    bool zh = browser.size() >= 2 && (browser[0] == 'z' || browser[0] == 'Z') &&
              (browser[1] == 'h' || browser[1] == 'H') &&
              (browser.size() == 2 || browser[2] == '-' || browser[2] == '_');
    return zh ? "zh-TW" : "en";
}

std::string web_words_json(std::string_view lang) {
    nlohmann::json j = nlohmann::json::object();
    for (Str s : kWebWords) j[key(s)] = text(s, lang);
    return j.dump();
}

std::string strf(const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    int n = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
    if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
    va_end(again);
    return out;
}

} // namespace pt2lab::app
