// Lesson catalog: list, parse, group by id, check languages and translations.
#include "lesson/catalog.h"

#include <dirent.h>

#include <algorithm>

#include "io/program_loader.h"

namespace pt2lab {

const Lesson* LessonCatalog::find(const std::string& id, const std::string& lang) const {
    for (const auto& e : entries) {
        if (e.id != id) continue;
        auto it = e.by_lang.find(lang);
        return it == e.by_lang.end() ? nullptr : &it->second;
    }
    return nullptr;
}

namespace {
Error catalog_error(const std::string& file, const std::string& message,
                    const std::string& hint = {}) {
    Error e = make_error("", message, hint);
    e.file = file;
    return e;
}
} // namespace

Result<LessonCatalog>
lesson_catalog(const std::vector<std::pair<std::string, std::string>>& files) {
    LessonCatalog cat;
    for (const auto& [file, text] : files) {
        auto l = parse_lesson(text, file);
        if (!l.ok()) return l.error();
        Lesson lesson = l.take();
        auto it = std::find_if(cat.entries.begin(), cat.entries.end(),
                               [&](const LessonCatalog::Entry& e) { return e.id == lesson.id; });
        if (it == cat.entries.end()) {
            cat.entries.push_back({lesson.id, lesson.order, {}});
            it = cat.entries.end() - 1;
        }
        if (it->by_lang.count(lesson.lang))
            return catalog_error(file,
                                 "a second file for lesson " + lesson.id + " in " + lesson.lang);
        it->by_lang.emplace(lesson.lang, std::move(lesson));
    }
    for (const auto& e : cat.entries) {
        const Lesson* first = nullptr;
        for (const char* const* lang = kLessonLangs; *lang; ++lang) {
            auto it = e.by_lang.find(*lang);
            if (it == e.by_lang.end())
                return catalog_error(e.by_lang.begin()->second.file,
                                     "lesson " + e.id + " has no " + *lang + " file",
                                     "write " + e.id + "." + *lang + ".md beside it");
            if (!first) {
                first = &it->second;
                continue;
            }
            std::string diff = compare_translations(*first, it->second);
            if (!diff.empty())
                return catalog_error(
                    it->second.file, "differs from " + first->file + ": " + diff,
                    "both languages must have the same steps, actions and answers");
        }
    }
    std::sort(cat.entries.begin(), cat.entries.end(),
              [](const LessonCatalog::Entry& a, const LessonCatalog::Entry& b) {
                  return a.order != b.order ? a.order < b.order : a.id < b.id;
              });
    return cat;
}

Result<LessonCatalog> load_lesson_catalog(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = opendir(dir.c_str());
    if (!d) return catalog_error(dir, "cannot list the lesson folder");
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 3 && n.compare(n.size() - 3, 3, ".md") == 0) names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& n : names) {
        std::string path = dir + "/" + n;
        auto bytes = read_file_bytes(path);
        if (!bytes.ok()) return bytes.error();
        files.emplace_back(path, std::string(bytes.value().begin(), bytes.value().end()));
    }
    if (files.empty()) return catalog_error(dir, "no lesson files (*.md) in the folder");
    return lesson_catalog(files);
}

} // namespace pt2lab
