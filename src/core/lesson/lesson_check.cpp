// Checking lessons: parse, compare translations, open graphs, run every step
// and evaluate its `expect` claims (pt2lab lesson check, test_lesson_walk.cpp).
#include "lesson/lesson_check.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "io/program_loader.h"
#include "util/check.h"
#include "util/json_read.h"

namespace pt2lab {

std::string CheckProblem::str() const {
    return file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message;
}

std::string CourseCheck::summary() const {
    std::string s = std::to_string(lesson_ids()) + " lessons (" + std::to_string(lessons.size()) +
                    " files), " + std::to_string(steps) + " steps, " +
                    std::to_string(expectations) + " expectations: ";
    const int other = static_cast<int>(problems.size()) - failed_expectations;
    if (ok()) return s + "all hold";
    return s + std::to_string(failed_expectations) + " do not hold, " + std::to_string(other) +
           " other problem" + (other == 1 ? "" : "s");
}

int CourseCheck::lesson_ids() const {
    std::set<std::string> ids;
    for (const auto& l : lessons)
        if (l.parsed) ids.insert(l.lesson.id);
    return static_cast<int>(ids.size());
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

std::string sorted_list(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return "[" + join(v) + "]";
}

ExpectOutcome outcome(const char* name, std::string expected, std::string actual, bool holds,
                      std::string detail = {}) {
    return {name, std::move(expected), std::move(actual), holds ? std::string() : detail, holds};
}

const char* parity_class(const ParityReport& p) {
    return p.bit_identical() ? "bit_identical" : p.allclose() ? "allclose" : "differs";
}

} // namespace

std::vector<ExpectOutcome> check_step_expect(const LessonRunner& runner, const LessonStep& step,
                                             const LessonStepReport& report) {
    // The claims are about the runner's current step (lint reads its graph).
    PT2LAB_CHECK(runner.step() == step.index);
    const StepExpect& e = step.expect;
    std::vector<ExpectOutcome> out;
    std::vector<const LessonActionReport*> runs;
    for (const auto& a : report.actions)
        if (a.run) runs.push_back(&a);

    if (!e.lint.empty()) {
        std::string msg = runner.step_workspace().lint_message(GraphView::Module);
        std::string actual = msg.empty() ? "ok" : "error";
        out.push_back(outcome("lint", e.lint, actual, actual == e.lint,
                              msg.empty() ? "lint found nothing wrong" : msg));
    }
    if (!e.parity.empty()) {
        // Every run of the step must show the claimed parity with the file as loaded.
        bool holds = !runs.empty();
        std::vector<std::string> seen, why;
        for (const LessonActionReport* a : runs) {
            const ParityReport& p = a->run->parity;
            bool ok = e.parity == "bit_identical" ? p.bit_identical()
                      : e.parity == "allclose"    ? p.allclose()
                                                  : !p.bit_identical() && p.max_abs() > 0.0;
            std::string cls = parity_class(p);
            // Bit-identical to the file's graph is also PyTorch's eager output, when stored.
            if (e.parity == "bit_identical" && a->run->reference &&
                !a->run->reference->allclose()) {
                ok = false;
                cls += " but not PyTorch's eager output";
                why.push_back("run on " + a->graph +
                              " vs the file's eager output: " + a->run->reference->verdict());
            }
            if (std::find(seen.begin(), seen.end(), cls) == seen.end()) seen.push_back(cls);
            if (!ok) why.push_back("run on " + a->graph + ": " + p.verdict());
            holds = holds && ok;
        }
        out.push_back(outcome("parity", e.parity, runs.empty() ? "no run" : join(seen), holds,
                              runs.empty() ? "the step runs nothing to compare" : join(why, "; ")));
    }
    if (!e.torch_error_kind.empty()) {
        std::vector<std::string> types;
        for (const auto& a : report.actions)
            if (!a.torch_error_type.empty() &&
                std::find(types.begin(), types.end(), a.torch_error_type) == types.end())
                types.push_back(a.torch_error_type);
        bool holds = e.torch_error_kind == "none"
                         ? types.empty()
                         : types == std::vector<std::string>{e.torch_error_kind};
        std::string detail;
        for (const auto& a : report.actions)
            if (!a.torch_error_type.empty())
                detail += (detail.empty() ? "" : "; ") + a.kind + ": " + a.torch_error_type + ": " +
                          a.torch_error;
        out.push_back(outcome("torch_error", e.torch_error_kind,
                              types.empty() ? "none" : join(types), holds, detail));
    }
    if (!e.added.empty()) {
        bool holds = std::set<std::string>(e.added.begin(), e.added.end()) ==
                     std::set<std::string>(report.diff.added.begin(), report.diff.added.end());
        out.push_back(
            outcome("added", sorted_list(e.added), sorted_list(report.diff.added), holds));
    }
    if (!e.removed.empty()) {
        bool holds = std::set<std::string>(e.removed.begin(), e.removed.end()) ==
                     std::set<std::string>(report.diff.removed.begin(), report.diff.removed.end());
        out.push_back(
            outcome("removed", sorted_list(e.removed), sorted_list(report.diff.removed), holds));
    }
    if (e.changed >= 0) {
        const char* actual = report.changed ? "true" : "false";
        out.push_back(outcome("changed", e.changed == 1 ? "true" : "false", actual,
                              report.changed == (e.changed == 1)));
    }
    if (e.same_outputs >= 0) {
        // The claim compares the outputs of the step's runs with each other.
        std::string actual = "fewer than two runs";
        bool holds = false;
        if (auto c = compare_step_runs(report)) {
            actual = c->bit_identical ? "true" : "false";
            holds = c->bit_identical == (e.same_outputs == 1);
        }
        out.push_back(
            outcome("same_outputs", e.same_outputs == 1 ? "true" : "false", actual, holds));
    }
    return out;
}

namespace {

bool is_dir(const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& file) {
    size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
}

std::string base_name(const std::string& file) {
    size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? file : file.substr(slash + 1);
}

// "m00-4.en.md" -> ("m00-4", "en"); false when not so named.
bool split_name(const std::string& file, std::string& id, std::string& lang) {
    std::string n = base_name(file);
    if (n.size() < 4 || n.compare(n.size() - 3, 3, ".md") != 0) return false;
    n.resize(n.size() - 3);
    size_t dot = n.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= n.size()) return false;
    id = n.substr(0, dot);
    lang = n.substr(dot + 1);
    return true;
}

// The parser's and runner's errors say "line N: $.path" in `where`: as
// "FILE:N: $.path: message (hint: ...)".
CheckProblem located(const Error& e, const std::string& file, int fallback_line = 0) {
    CheckProblem p;
    p.file = e.file.empty() ? file : e.file;
    p.line = fallback_line;
    std::string where = e.where;
    if (where.rfind("line ", 0) == 0) {
        size_t i = 5;
        int n = 0;
        while (i < where.size() && where[i] >= '0' && where[i] <= '9' && n < 100000000)
            n = n * 10 + (where[i++] - '0');
        if (i > 5) {
            p.line = n;
            where = where.substr(i);
            if (where.rfind(": ", 0) == 0) where = where.substr(2);
        }
    }
    p.message = (where.empty() ? "" : where + ": ") + e.message;
    if (!e.hint.empty()) p.message += " (hint: " + e.hint + ")";
    return p;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    size_t a = 0;
    while (a <= text.size()) {
        size_t b = text.find('\n', a);
        if (b == std::string::npos) b = text.size();
        lines.push_back(text.substr(a, b - a));
        a = b + 1;
    }
    return lines;
}

// The first line (1-based) in [from, to) holding `needle`, else 0.
int find_line(const std::vector<std::string>& lines, const std::string& needle, int from = 1,
              int to = INT_MAX) {
    for (int i = std::max(from, 1); i <= static_cast<int>(lines.size()) && i < to; ++i)
        if (lines[static_cast<size_t>(i - 1)].find(needle) != std::string::npos) return i;
    return 0;
}

// The line of a step's `expect` claim `name` (its step block), else the heading's.
int expect_line(const std::vector<std::string>& lines, const Lesson& l, const LessonStep& st,
                const std::string& name) {
    size_t k = static_cast<size_t>(st.index);
    int end = k < l.steps.size() ? l.steps[k].line : INT_MAX;
    int at = find_line(lines, "\"expect\"", st.line, end);
    if (!at) return st.line;
    std::string key = name == "torch_error" ? "\"torch_error\"" : "\"" + name + "\"";
    int field = find_line(lines, key, at, end);
    return field ? field : at;
}

struct OpenedGraph {
    std::string resolved; // "" when not found
    std::vector<uint8_t> bytes;
    std::string error; // why it does not open ("" when it opens)
};

void check_translations(CourseCheck& c) {
    std::map<std::string, std::map<std::string, const LessonCheck*>> by_id; // id -> lang -> file
    std::map<std::string, std::string> named;                               // id -> a file
    for (const auto& lc : c.lessons) {
        std::string id, lang;
        if (!split_name(lc.file, id, lang)) continue;
        named.emplace(id, lc.file);
        by_id[id][lang] = &lc;
    }
    for (const auto& [id, langs] : by_id) {
        for (const char* const* lang = kLessonLangs; *lang; ++lang)
            if (!langs.count(*lang))
                c.problems.push_back({named[id], 0,
                                      "lesson " + id + " has no " + *lang + " file (hint: write " +
                                          id + "." + *lang + ".md beside it)"});
        const Lesson* ref = nullptr;
        for (const char* const* lang = kLessonLangs; *lang; ++lang) {
            auto it = langs.find(*lang);
            if (it == langs.end() || !it->second->parsed) continue;
            const Lesson& tr = it->second->lesson;
            if (!ref) {
                ref = &tr;
                continue;
            }
            std::string diff = compare_translations(*ref, tr);
            if (diff.empty()) continue;
            CheckProblem p{tr.file, 0, "differs from " + ref->file + ": " + diff};
            auto step_line = [&](const std::string& d) {
                size_t k = 0, i = 5;
                if (d.rfind("step ", 0) != 0) return 0;
                while (i < d.size() && d[i] >= '0' && d[i] <= '9' && k < 100000)
                    k = k * 10 + static_cast<size_t>(d[i++] - '0');
                return k >= 1 && k <= tr.steps.size() ? tr.steps[k - 1].line : 0;
            };
            p.line = step_line(diff);
            if (ref->steps.size() != tr.steps.size()) {
                // Where they part: the first step that differs over the steps both have,
                // else the end of the shorter one.
                size_t n = std::min(ref->steps.size(), tr.steps.size());
                Lesson a = *ref, b = tr;
                a.steps.resize(n);
                b.steps.resize(n);
                std::string first = compare_translations(a, b);
                if (!first.empty()) {
                    p.message += " (first difference: " + first + ")";
                    p.line = step_line(first);
                } else if (tr.steps.size() > n) {
                    p.message += " (step " + std::to_string(n + 1) + " has no counterpart)";
                    p.line = tr.steps[n].line;
                } else {
                    p.message +=
                        " (" + base_name(tr.file) + " ends after step " + std::to_string(n) + ")";
                    p.line = n ? tr.steps[n - 1].line : 0;
                }
            }
            p.message += " (hint: both languages must have the same steps, actions and answers)";
            c.problems.push_back(std::move(p));
        }
    }
}

// Where a lesson's graphs come from: files under the lesson's folder (check_course)
// or a reader (check_lesson_text, the page's dropped lesson).
struct GraphSource {
    // The key a graph path is read and cached under; "" with `missing` set when none.
    std::function<std::string(const std::string& path, std::string& missing)> resolve;
    std::function<Result<std::vector<uint8_t>>(const std::string& resolved)> read;
};

GraphSource files_near(const std::string& dir) {
    return {[dir](const std::string& path, std::string& missing) {
                std::string r = resolve_lesson_graph(dir, path);
                if (r.empty()) missing = "looked under " + dir + " and the folders above it";
                return r;
            },
            [](const std::string& resolved) { return read_file_bytes(resolved); }};
}

void run_lesson(CourseCheck& c, LessonCheck& lc, const std::vector<std::string>& lines,
                std::map<std::string, OpenedGraph>& graphs, const GraphSource& source) {
    const Lesson& l = lc.lesson;
    for (const auto& st : l.steps) lc.steps.push_back({st.index, st.line, st.title, {}, {}, false});
    c.steps += static_cast<int>(l.steps.size());
    bool all_open = true;
    for (const LessonGraph& g : l.graphs) {
        int line = find_line(lines, "\"" + g.path + "\"");
        std::string missing;
        std::string resolved = source.resolve(g.path, missing);
        if (resolved.empty()) {
            c.problems.push_back(
                {lc.file, line,
                 "graph \"" + g.key + "\": " + g.path + " not found (" + missing + ")"});
            all_open = false;
            continue;
        }
        auto it = graphs.find(resolved);
        if (it == graphs.end()) {
            OpenedGraph og;
            og.resolved = resolved;
            auto bytes = source.read(resolved);
            if (!bytes.ok()) {
                og.error = bytes.error().str();
            } else {
                og.bytes = bytes.take();
                auto w = Workspace::open(og.bytes, resolved); // as the runner opens it
                if (!w.ok()) og.error = w.error().str();
                if (!w.ok()) og.bytes.clear();
            }
            it = graphs.emplace(resolved, std::move(og)).first;
        }
        if (!it->second.error.empty()) {
            c.problems.push_back(
                {lc.file, line,
                 "graph \"" + g.key + "\" (" + g.path + ") does not open: " + it->second.error});
            all_open = false;
        }
    }
    if (!all_open) return;
    LessonRunner::FileReader read =
        [&graphs, &source](const std::string& path) -> Result<std::vector<uint8_t>> {
        std::string missing;
        auto it = graphs.find(source.resolve(path, missing));
        PT2LAB_CHECK(it != graphs.end()); // every graph was opened above
        return it->second.bytes;
    };
    auto opened = LessonRunner::open(l, read);
    if (!opened.ok()) {
        c.problems.push_back(located(opened.error(), lc.file));
        return;
    }
    LessonRunner& r = *opened.value();
    for (const LessonStep& st : l.steps) {
        StepCheck& sc = lc.steps[static_cast<size_t>(st.index - 1)];
        Status at = r.go_to(st.index);
        LessonStepReport rep;
        rep.step = st.index;
        if (at.ok() && !st.actions.empty()) {
            auto done = r.perform();
            if (!done.ok())
                at = done.error();
            else
                rep = done.take();
        }
        if (!at.ok()) {
            CheckProblem p = located(at.error(), lc.file);
            p.file = lc.file; // the action's own file:line is in the runner's message
            p.line = st.line;
            p.message = "step " + std::to_string(st.index) + " \"" + st.title +
                        "\" does not run: " + p.message;
            c.problems.push_back(std::move(p));
            return; // the steps after it stand on this one
        }
        sc.ran = true;
        sc.actions = rep.actions;
        sc.expects = check_step_expect(r, st, rep);
        for (const ExpectOutcome& o : sc.expects) {
            ++c.expectations;
            if (o.holds) continue;
            ++c.failed_expectations;
            c.problems.push_back({lc.file, expect_line(lines, l, st, o.name),
                                  "step " + std::to_string(st.index) + " \"" + st.title +
                                      "\": expect " + o.name + " " + o.expected +
                                      " does not hold: the step gives " + o.actual +
                                      (o.detail.empty() ? "" : " (" + o.detail + ")")});
        }
    }
}

} // namespace

std::string resolve_lesson_graph(const std::string& lesson_dir, const std::string& path) {
    if (is_file(lesson_dir + "/" + path)) return lesson_dir + "/" + path;
    char* abs = realpath(lesson_dir.c_str(), nullptr);
    if (!abs) return "";
    std::string d = abs;
    std::free(abs);
    while (!d.empty() && d != "/") {
        d = dir_of(d);
        std::string candidate = (d == "/" ? "" : d) + "/" + path;
        if (is_file(candidate)) return candidate;
    }
    return "";
}

Result<CourseCheck> check_course(const std::string& path) {
    CourseCheck c;
    c.path = path;
    c.folder = is_dir(path);
    std::vector<std::string> files;
    if (c.folder) {
        DIR* d = opendir(path.c_str());
        if (!d) return make_error(path, "cannot list the course folder");
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 3 && n.compare(n.size() - 3, 3, ".md") == 0 && is_file(path + "/" + n))
                files.push_back((path.back() == '/' ? path : path + "/") + n);
        }
        closedir(d);
        std::sort(files.begin(), files.end());
        if (files.empty())
            return make_error(path, "no lesson files (<id>.<lang>.md) in the folder",
                              "a course folder holds its lessons and, under assets/, their graphs");
    } else if (is_file(path)) {
        files.push_back(path);
    } else {
        return make_error(path, "no such lesson file or course folder");
    }
    std::vector<std::vector<std::string>> texts;
    for (const auto& f : files) {
        LessonCheck lc;
        lc.file = f;
        auto bytes = read_file_bytes(f);
        std::string text;
        if (!bytes.ok()) {
            c.problems.push_back(located(bytes.error(), f));
        } else {
            text.assign(bytes.value().begin(), bytes.value().end());
            auto l = parse_lesson(text, f);
            if (!l.ok())
                c.problems.push_back(located(l.error(), f));
            else
                lc.parsed = true, lc.lesson = l.take();
        }
        texts.push_back(split_lines(text));
        c.lessons.push_back(std::move(lc));
    }
    if (c.folder) check_translations(c);
    std::map<std::string, OpenedGraph> graphs; // by resolved path: read and opened once
    for (size_t i = 0; i < c.lessons.size(); ++i)
        if (c.lessons[i].parsed)
            run_lesson(c, c.lessons[i], texts[i], graphs, files_near(dir_of(c.lessons[i].file)));
    return c;
}

CourseCheck check_lesson_text(const std::string& file, const std::string& text,
                              const LessonRunner::FileReader& read) {
    CourseCheck c;
    c.path = file;
    LessonCheck lc;
    lc.file = file;
    auto l = parse_lesson(text, file);
    if (!l.ok()) {
        c.problems.push_back(located(l.error(), file));
        c.lessons.push_back(std::move(lc));
        return c;
    }
    lc.parsed = true;
    lc.lesson = l.take();
    c.lessons.push_back(std::move(lc));
    GraphSource source{[](const std::string& path, std::string&) { return path; },
                       [&read](const std::string& path) { return read(path); }};
    std::map<std::string, OpenedGraph> graphs;
    run_lesson(c, c.lessons.front(), split_lines(text), graphs, source);
    return c;
}

std::string course_index_json(const CourseCheck& c) {
    std::map<std::string, std::vector<const Lesson*>> by_id;
    for (const auto& lc : c.lessons)
        if (lc.parsed) by_id[lc.lesson.id].push_back(&lc.lesson);
    std::vector<std::vector<const Lesson*>> groups;
    for (auto& [id, ls] : by_id) {
        std::sort(ls.begin(), ls.end(), [](const Lesson* a, const Lesson* b) {
            auto rank = [](const std::string& lang) {
                int k = 0;
                for (const char* const* p = kLessonLangs; *p; ++p, ++k)
                    if (lang == *p) return k;
                return k;
            };
            return rank(a->lang) < rank(b->lang);
        });
        groups.push_back(ls);
    }
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        return a[0]->order != b[0]->order ? a[0]->order < b[0]->order : a[0]->id < b[0]->id;
    });
    json lessons = json::array();
    for (const auto& g : groups) {
        const Lesson& first = *g[0];
        json e = json::object();
        e["id"] = first.id;
        e["order"] = first.order;
        json langs = json::array(), files = json::object(), titles = json::object(),
             summaries = json::object(), graphs = json::object();
        for (const Lesson* l : g) {
            langs.push_back(l->lang);
            files[l->lang] = base_name(l->file);
            titles[l->lang] = l->title;
            summaries[l->lang] = l->summary;
        }
        for (const LessonGraph& lg : first.graphs) graphs[lg.key] = lg.path;
        e["languages"] = langs;
        e["files"] = files;
        e["titles"] = titles;
        e["summaries"] = summaries;
        e["steps"] = first.steps.size();
        e["graphs"] = graphs;
        lessons.push_back(e);
    }
    json root = json::object();
    root["format"] = "pt2lab-course";
    root["version"] = 1;
    root["lessons"] = lessons;
    return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace pt2lab
