// The lessons' checks test understanding, not the shape of the options
// (issue 22). For every lesson file, parsed with the project's own parser:
//
// - Length gives nothing away. Option lengths are counted in Unicode code
//   points of the option text with the Markdown backticks removed. In each
//   language the right option is the longest (strictly or tied) in at most a
//   third of the questions, and the shortest (strictly or tied) in at most
//   half of them, so that "pick the shortest" does not work either.
// - Options are of similar length: within a question the longest option is at
//   most 2.5 times the shortest. A question whose options are all short (the
//   longest under 16 code points: node names such as `x` / `p_conv_weight`,
//   numbers, one-word answers) is exempt, since a name cannot be padded.
//   2.5x leaves room for a short claim beside a longer one ("Only `output`"
//   beside "`output` and the observer itself") but not for the one careful,
//   qualified sentence among two stubs that the issue found.
// - The right option's feedback starts "Right." (zh-TW "對。"), and no wrong
//   option's does; every feedback says something.
// - Both languages have the same steps, options per check and right answers,
//   and the answers are spread: at least two positions per lesson, and over
//   the course no position holds more than 45% of the answers nor fewer than
//   20% (three options per question).
//
// Every course the project ships is held to this, each on its own (kCourses): the
// built-in one and courses/pt2e, made with the teachers' kit; the template lesson a
// teacher starts from is held to the per-question rules (kAllLessons).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lesson/catalog.h"
#include "lesson/lesson.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

// Code points of `s` (UTF-8) with the Markdown backticks removed.
size_t option_length(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) {
        if (c == '`') continue;
        if ((c & 0xC0) != 0x80) ++n; // not a continuation byte
    }
    return n;
}

constexpr size_t kShortOption = 16; // all options shorter than this: exempt from the ratio
constexpr double kMaxRatio = 2.5;   // longest / shortest within a question

const char* right_prefix(const std::string& lang) {
    return lang == "en" ? "Right." : "對。";
}

bool starts_with(const std::string& s, const std::string& p) {
    return s.compare(0, p.size(), p) == 0;
}

LessonCatalog load_catalog(const char* dir) {
    auto cat = load_lesson_catalog(source_path(dir));
    INFO(dir << ": " << (cat.ok() ? "" : cat.error().str()));
    REQUIRE(cat.ok());
    return cat.value();
}

// Every course the project ships: the built-in one and the course folder made with the
// teachers' kit (courses/pt2e); each is held to the bar on its own. The template lesson a
// teacher starts from (tools/lesson_template) is held to the per-question rules.
const std::vector<const char*> kCourses = {"assets/lessons", "courses/pt2e"};
const std::vector<const char*> kAllLessons = {"assets/lessons", "courses/pt2e",
                                              "tools/lesson_template"};

// Calls `f(lang, lesson, step)` for every step of every lesson file in `dirs`.
template <class F> void each_step(const std::vector<const char*>& dirs, F&& f) {
    for (const char* dir : dirs) {
        LessonCatalog c = load_catalog(dir);
        for (const auto& e : c.entries)
            for (const auto& [lang, l] : e.by_lang)
                for (const LessonStep& s : l.steps) f(lang, l, s);
    }
}

} // namespace

TEST_CASE("lesson checks: the right option is seldom the longest", "[lesson]") {
    for (const char* dir : kCourses) {
        INFO(dir);
        LessonCatalog c = load_catalog(dir);
        for (const char* lang : {"en", "zh-TW"}) {
            int total = 0, longest = 0, shortest = 0;
            std::ostringstream which_long, which_short;
            for (const auto& e : c.entries) {
                const Lesson* l = c.find(e.id, lang);
                REQUIRE(l);
                for (const LessonStep& s : l->steps) {
                    const Check& k = s.check;
                    if (k.options.empty()) continue;
                    ++total;
                    size_t right = option_length(k.options[static_cast<size_t>(k.answer)].text);
                    bool is_longest = true, is_shortest = true;
                    for (const CheckOption& o : k.options) {
                        if (option_length(o.text) > right) is_longest = false;
                        if (option_length(o.text) < right) is_shortest = false;
                    }
                    if (is_longest) {
                        ++longest;
                        which_long << " " << e.id << "/" << s.index;
                    }
                    if (is_shortest) {
                        ++shortest;
                        which_short << " " << e.id << "/" << s.index;
                    }
                }
            }
            INFO(lang << ": the right option is the longest in " << longest << " of " << total
                      << " questions:" << which_long.str());
            INFO(lang << ": the right option is the shortest in " << shortest << " of " << total
                      << " questions:" << which_short.str());
            CHECK(total > 0);
            CHECK(longest * 3 <= total);
            CHECK(shortest * 2 <= total);
        }
    }
}

TEST_CASE("lesson checks: options of similar length", "[lesson]") {
    each_step(kAllLessons, [](const std::string&, const Lesson& l, const LessonStep& s) {
        const Check& k = s.check;
        if (k.options.empty()) return;
        size_t lo = SIZE_MAX, hi = 0;
        for (const CheckOption& o : k.options) {
            lo = std::min(lo, option_length(o.text));
            hi = std::max(hi, option_length(o.text));
        }
        INFO(l.file << " step " << s.index << " (" << s.title << "): options of " << lo << " to "
                    << hi << " code points");
        CHECK(lo > 0);
        if (hi >= kShortOption)
            CHECK(static_cast<double>(hi) <= kMaxRatio * static_cast<double>(lo));
    });
}

TEST_CASE("lesson checks: feedback says right or why not", "[lesson]") {
    each_step(kAllLessons, [](const std::string& lang, const Lesson& l, const LessonStep& s) {
        const Check& k = s.check;
        INFO(l.file << " step " << s.index << " (" << s.title << ")");
        REQUIRE(k.options.size() >= 2);
        for (size_t i = 0; i < k.options.size(); ++i) {
            const std::string& fb = k.options[i].feedback;
            INFO("option " << i << ": " << fb);
            bool right = static_cast<int>(i) == k.answer;
            CHECK(starts_with(fb, right_prefix(lang)) == right);
            CHECK(option_length(fb) > (right ? option_length(right_prefix(lang)) + 4 : 8));
        }
    });
}

TEST_CASE("lesson checks: both languages step for step, answers spread", "[lesson]") {
    for (const char* dir : kCourses) {
        INFO(dir);
        LessonCatalog c = load_catalog(dir);
        std::map<int, int> positions;
        int total = 0;
        for (const auto& e : c.entries) {
            const Lesson* zh = c.find(e.id, "zh-TW");
            const Lesson* en = c.find(e.id, "en");
            REQUIRE(zh);
            REQUIRE(en);
            INFO(e.id);
            REQUIRE(zh->steps.size() == en->steps.size());
            std::map<int, int> here;
            for (size_t i = 0; i < zh->steps.size(); ++i) {
                const Check& a = zh->steps[i].check;
                const Check& b = en->steps[i].check;
                INFO("step " << i + 1);
                CHECK(a.options.size() == 3);
                CHECK(a.options.size() == b.options.size());
                CHECK(a.answer == b.answer);
                ++here[a.answer];
                ++positions[a.answer];
                ++total;
            }
            CHECK(here.size() >= 2);
        }
        for (int p = 0; p < 3; ++p) {
            INFO("answer position " << p << ": " << positions[p] << " of " << total);
            CHECK(positions[p] * 100 <= total * 45);
            CHECK(positions[p] * 100 >= total * 20);
        }
    }
}
