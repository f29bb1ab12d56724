// The page's words (src/app/page_strings.inc): every row in both languages with the
// same printf conversions; the words the HTML side reads exist; no English text
// reaches an ImGui text or button call in src/app/ui without the table; every place
// on screen the lessons name (**Code** tab, **程式碼**分頁) is a label of the table;
// the page's starting language.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "page_strings.h"

using namespace pt2lab::app;

namespace {

const std::string kRoot = PT2LAB_SOURCE_DIR;

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Files in `dir` whose names end with `suffix`, sorted.
std::vector<std::string> files_in(const std::string& dir, const std::string& suffix) {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > suffix.size() &&
                n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
                out.push_back(n);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The printf conversions of a format, in order ("%d", "%zu", "%.1f"; "%%" left out).
std::vector<std::string> conversions(const std::string& f) {
    std::vector<std::string> out;
    for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] != '%') continue;
        size_t j = i + 1;
        if (j < f.size() && f[j] == '%') {
            i = j;
            continue;
        }
        while (j < f.size() && std::strchr("-+ #0123456789.", f[j])) ++j;
        while (j < f.size() && std::strchr("hlzjtL", f[j])) ++j;
        if (j < f.size()) out.push_back(f.substr(i, j - i + 1));
        i = j;
    }
    return out;
}

bool is_ident(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Source text with comments blanked (string and character literals kept, newlines
// kept so offsets still give line numbers).
std::string strip_comments(const std::string& s) {
    std::string out = s;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            for (++i; i < s.size() && s[i] != c; ++i)
                if (s[i] == '\\') ++i;
        } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
            for (; i < s.size() && s[i] != '\n'; ++i) out[i] = ' ';
        } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
            size_t end = s.find("*/", i + 2);
            end = end == std::string::npos ? s.size() : end + 2;
            for (; i < end; ++i)
                if (s[i] != '\n') out[i] = ' ';
            --i;
        }
    }
    return out;
}

// The string literals between `begin` and the parenthesis that closes the call
// opened at `begin` - 1, with their offsets.
std::vector<std::pair<size_t, std::string>> call_literals(const std::string& s, size_t begin) {
    std::vector<std::pair<size_t, std::string>> out;
    int depth = 1;
    for (size_t i = begin; i < s.size() && depth > 0; ++i) {
        char c = s[i];
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == '\'') {
            for (++i; i < s.size() && s[i] != '\''; ++i)
                if (s[i] == '\\') ++i;
        } else if (c == '"') {
            size_t at = i;
            std::string lit;
            for (++i; i < s.size() && s[i] != '"'; ++i) {
                if (s[i] == '\\' && i + 1 < s.size()) ++i;
                lit += s[i];
            }
            out.emplace_back(at, lit);
        }
    }
    return out;
}

// What may stay English on screen without the table: torch's own words (fx and
// meta field names, tensor attributes, observer fields, Python literals), API and
// product names. Words with '_' or '.' (gm.code, zero_point) count as code anyway.
const std::set<std::string> kAllowedWords = {
    "ExportedProgram", "pt2lab", "EN",         "op",    "target", "overload", "val",  "shape",
    "dtype",           "stride", "device",     "torch", "FQN",    "min",      "max",  "scale",
    "observer",        "buffer", "persistent", "SQNR",  "dB",     "inf",      "True", "False",
};

// The English words of a label's visible part (before "##"), conversions left out.
std::vector<std::string> english_words(std::string lit) {
    size_t hidden = lit.find("##");
    if (hidden != std::string::npos) lit.resize(hidden);
    std::vector<std::string> out;
    for (size_t i = 0; i < lit.size();) {
        if (lit[i] == '%') { // a printf conversion
            ++i;
            while (i < lit.size() && std::strchr("-+ #0123456789.hlzjtL", lit[i])) ++i;
            ++i;
            continue;
        }
        if (!std::isalpha(static_cast<unsigned char>(lit[i]))) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < lit.size() && (is_ident(lit[j]) || lit[j] == '.')) ++j;
        std::string w = lit.substr(i, j - i);
        i = j;
        while (!w.empty() && w.back() == '.') w.pop_back();
        bool code = w.find('_') != std::string::npos || w.find('.') != std::string::npos;
        if (w.size() >= 2 && !code && !kAllowedWords.count(w)) out.push_back(w);
    }
    return out;
}

// The calls whose string arguments the learner sees: Dear ImGui's text, buttons,
// menus, tabs, tooltips, fields and table headers, the draw list's text, and the
// panels' own helpers (ui/widgets.h, lesson_panel.cpp, graph_toolbar.cpp).
const char* const kVisibleCalls[] = {
    "Text",
    "TextUnformatted",
    "TextDisabled",
    "TextColored",
    "TextWrapped",
    "BulletText",
    "LabelText",
    "Button",
    "SmallButton",
    "Checkbox",
    "RadioButton",
    "MenuItem",
    "BeginMenu",
    "Selectable",
    "BeginTabItem",
    "TabItemButton",
    "TreeNode",
    "CollapsingHeader",
    "SetTooltip",
    "InputInt",
    "InputFloat",
    "InputText",
    "InputTextWithHint",
    "ProgressBar",
    "TableSetupColumn",
    "BeginCombo",
    "SeparatorText",
    "AddText",
    "badge",
    "section",
    "fact",
    "help_marker",
    "text_wrapped",
    "inline_text",
    "segment",
    "inert_button",
};

std::map<std::string, std::set<std::string>> place_labels() {
    std::map<std::string, std::set<std::string>> out;
    for (size_t i = 0; i < str_count(); ++i) {
        const StrRow& r = str_rows()[i];
        std::string k = r.key;
        if (k.rfind("tab_", 0) == 0 || k.rfind("panel_", 0) == 0) {
            out["en"].insert(r.en);
            out["zh-TW"].insert(r.zh);
        }
    }
    return out;
}

} // namespace

TEST_CASE("every row of the page's words in both languages, with the same conversions",
          "[strings]") {
    REQUIRE(str_count() > 100);
    std::set<std::string> keys;
    for (size_t i = 0; i < str_count(); ++i) {
        const StrRow& r = str_rows()[i];
        INFO(r.key);
        CHECK(keys.insert(r.key).second);
        CHECK(std::string(r.en).size() > 0);
        CHECK(std::string(r.zh).size() > 0);
        CHECK(conversions(r.en) == conversions(r.zh));
    }
    CHECK(std::string(text(Str::tab_code, "en")) == "Code");
    CHECK(std::string(text(Str::tab_code, "zh-TW")) == "程式碼");
    CHECK(std::string(key(Str::tab_code)) == "tab_code");
    CHECK(strf(text(Str::lesson_step_of, "zh-TW"), 3, 8) == "第 3 / 8 步");
    CHECK(conversions("%d of %zu, %.1f %% %s") ==
          std::vector<std::string>{"%d", "%zu", "%.1f", "%s"});
}

TEST_CASE("the page starts in the last choice, else the browser's language", "[strings]") {
    CHECK(page_language("", "") == "zh-TW"); // unknown: the course's language
    CHECK(page_language("", "en-US") == "en");
    CHECK(page_language("", "fr") == "en");
    CHECK(page_language("", "zh") == "zh-TW");
    CHECK(page_language("", "zh-TW") == "zh-TW");
    CHECK(page_language("", "zh-CN") == "zh-TW");
    CHECK(page_language("", "zh-Hant-HK") == "zh-TW");
    CHECK(page_language("", "zu") == "en");
    CHECK(page_language("en", "zh-TW") == "en");
    CHECK(page_language("zh-TW", "en-GB") == "zh-TW");
    CHECK(page_language("de", "en-GB") == "en"); // not a page language: as if none
}

TEST_CASE("the HTML side reads only words the table sends it", "[strings]") {
    for (const char* lang : {"en", "zh-TW"}) {
        nlohmann::json words = nlohmann::json::parse(web_words_json(lang));
        REQUIRE(words.is_object());
        for (const auto& [k, v] : words.items()) {
            INFO(lang << " " << k);
            CHECK(!v.get<std::string>().empty());
        }
        // web/text_view.js reads w.<key>, web/bridge.js words.<key>.
        for (const char* file : {"web/text_view.js", "web/bridge.js"}) {
            std::string js = read_text(kRoot + "/" + file);
            REQUIRE(!js.empty());
            size_t used = 0;
            for (const char* prefix : {"w.", "words."}) {
                std::string p = prefix;
                for (size_t at = js.find(p); at != std::string::npos; at = js.find(p, at + 1)) {
                    if (at > 0 && (is_ident(js[at - 1]) || js[at - 1] == '.')) continue;
                    size_t b = at + p.size(), e = b;
                    while (e < js.size() && is_ident(js[e])) ++e;
                    std::string k = js.substr(b, e - b);
                    if (k.empty() || k == "length") continue;
                    INFO(file << ": " << prefix << k);
                    CHECK(words.contains(k));
                    ++used;
                }
            }
            CHECK(used > 3);
        }
    }
}

TEST_CASE("no English text reaches an ImGui text or button call without the table", "[strings]") {
    std::string dir = kRoot + "/src/app/ui";
    std::vector<std::string> files = files_in(dir, ".cpp");
    REQUIRE(files.size() > 10);
    std::vector<std::string> offences;
    size_t literals = 0;
    for (const std::string& name : files) {
        std::string src = strip_comments(read_text(dir + "/" + name));
        for (const char* call : kVisibleCalls) {
            std::string c = std::string(call) + "(";
            for (size_t at = src.find(c); at != std::string::npos; at = src.find(c, at + 1)) {
                if (at > 0 && is_ident(src[at - 1])) continue;
                for (const auto& [off, lit] : call_literals(src, at + c.size())) {
                    ++literals;
                    std::vector<std::string> words = english_words(lit);
                    if (words.empty()) continue;
                    size_t line = 1 + std::count(src.begin(), src.begin() + off, '\n');
                    offences.push_back("src/app/ui/" + name + ":" + std::to_string(line) + ": " +
                                       call + "(\"" + lit + "\"): \"" + words[0] + "\"");
                }
            }
        }
    }
    for (const std::string& o : offences) UNSCOPED_INFO(o);
    CHECK(offences.empty());
    CHECK(literals > 50); // the scan does see the calls' literals
    // The scanner itself: a sentence is English, API names and the allowed words are not.
    CHECK(english_words("Run (R)") == std::vector<std::string>{"Run"});
    CHECK(english_words("%zu nodes") == std::vector<std::string>{"nodes"});
    CHECK(english_words("print_readable()").empty());
    CHECK(english_words("ep.module()").empty());
    CHECK(english_words("min / max").empty());
    CHECK(english_words("##search").empty());
    CHECK(english_words("gm.code is stale") == std::vector<std::string>{"is", "stale"});
}

TEST_CASE("every place the lessons name on screen is a label of the page", "[strings]") {
    // The lessons name a place as its label in bold, then the kind of place:
    // "the **Code** tab", "the **Node** panel"; "**程式碼**分頁", "**節點**面板".
    // Every "tab" / "panel" (分頁 / 面板) in a lesson is written so, and the label
    // is the table's tab or panel label in the lesson's language.
    std::map<std::string, std::set<std::string>> places = place_labels();
    REQUIRE(places["en"].size() >= 7);
    // The built-in course, the course made with the teachers' kit and the template lesson.
    std::vector<std::string> files;
    for (const char* dir : {"/assets/lessons", "/courses/pt2e", "/tools/lesson_template"})
        for (const std::string& name : files_in(kRoot + dir, ".md"))
            files.push_back(kRoot + dir + "/" + name);
    REQUIRE(files.size() >= 14);
    std::map<std::string, int> named; // per language
    for (const std::string& name : files) {
        std::string lang = name.find(".zh-TW.") != std::string::npos ? "zh-TW" : "en";
        std::string text = read_text(name);
        std::vector<std::string> nouns = lang == "en" ? std::vector<std::string>{"tab", "panel"}
                                                      : std::vector<std::string>{"分頁", "面板"};
        for (const std::string& noun : nouns) {
            for (size_t at = text.find(noun); at != std::string::npos;
                 at = text.find(noun, at + 1)) {
                if (lang == "en" &&
                    ((at > 0 && is_ident(text[at - 1])) ||
                     (at + noun.size() < text.size() && is_ident(text[at + noun.size()]))))
                    continue; // "table", "tabs" are other words
                size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
                INFO(name << ":" << line << ": " << noun);
                size_t end = at;
                if (end > 0 && text[end - 1] == ' ') --end; // "**Code** tab", "**Observer** 分頁"
                bool bold = end >= 4 && text.compare(end - 2, 2, "**") == 0;
                CHECK(bold); // a place is named by its label in bold
                size_t open = bold ? text.rfind("**", end - 3) : std::string::npos;
                if (open == std::string::npos) continue;
                std::string label = text.substr(open + 2, end - 2 - open - 2);
                INFO("label: " << label);
                CHECK(places[lang].count(label) == 1);
                ++named[lang];
            }
        }
    }
    CHECK(named["en"] >= 5);
    CHECK(named["zh-TW"] >= 5);
}
