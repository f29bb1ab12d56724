// The lesson list: every assets/lessons/<id>.<lang>.md found by listing the
// folder (adding a lesson is adding its files), grouped by id, in lesson
// order, each id present in every language with the same steps.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lesson/lesson.h"

namespace pt2lab {

struct LessonCatalog {
    struct Entry {
        std::string id;
        int order = 0;
        std::map<std::string, Lesson> by_lang; // "zh-TW" / "en" -> the lesson
    };
    std::vector<Entry> entries; // by `order`, then id

    const Lesson* find(const std::string& id, const std::string& lang) const;
    std::string default_lang() const { return kLessonLangs[0]; }
};

// Builds the catalog from (file, text) pairs; errors name the file at fault
// (a lesson missing a language, two files with one id and language,
// translations whose steps differ).
Result<LessonCatalog> lesson_catalog(const std::vector<std::pair<std::string, std::string>>& files);
// Lists `dir` (e.g. "assets/lessons", natively or in the page's virtual file
// system) and reads every *.md in it.
Result<LessonCatalog> load_lesson_catalog(const std::string& dir);

} // namespace pt2lab
