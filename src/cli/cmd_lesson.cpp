// pt2lab lesson check PATH [--no-index]: a printer over check_course
// (lesson/lesson_check.h): one line per step, the problems as FILE:LINE:
// message on stderr, a summary line, and a course folder's index.json.
#include <cstdio>

#include "cli.h"
#include "lesson/lesson_check.h"

namespace pt2lab {

namespace {

std::string first_line(const std::string& s) {
    size_t nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string base_name(const std::string& file) {
    size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? file : file.substr(slash + 1);
}

// `m00-4.en.md:57 step 3 "title": erase_node: ... (torch RuntimeError: ...) ->
// lint error ok; torch_error RuntimeError ok`
std::string step_line(const LessonCheck& lc, const StepCheck& sc) {
    std::string s = base_name(lc.file) + ":" + std::to_string(sc.line) + " step " +
                    std::to_string(sc.index) + " \"" + sc.title + "\": ";
    if (!sc.ran) return s + "not run";
    std::string did;
    for (const LessonActionReport& a : sc.actions) {
        did += (did.empty() ? "" : "; ") + a.kind;
        std::string summary = first_line(a.summary);
        if (!summary.empty()) did += ": " + summary;
        if (a.run) did += " [" + a.run->parity.verdict() + "]";
        if (!a.torch_error_type.empty())
            did += " (torch " + a.torch_error_type + ": " + first_line(a.torch_error) + ")";
    }
    s += did.empty() ? "no actions" : did;
    std::string claims;
    for (const ExpectOutcome& o : sc.expects) {
        claims += (claims.empty() ? "" : "; ") + o.name + " " + o.actual;
        if (o.actual != o.expected) claims += " (expected " + o.expected + ")";
        claims += o.holds ? " ok" : " FAILS";
    }
    return s + " -> " + (claims.empty() ? "no claims" : claims);
}

Status write_text(const std::string& path, const std::string& text) {
    Error e =
        make_error("", "cannot write the file", "check the folder is writable, or --no-index");
    e.file = path;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return e;
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok &= std::fclose(f) == 0;
    if (!ok) return e;
    return {};
}

} // namespace

int cmd_lesson(const std::vector<std::string>& args) {
    std::vector<std::string> positional;
    bool index = true;
    for (const auto& a : args) {
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        }
        if (a == "--no-index")
            index = false;
        else if (a.rfind("--", 0) == 0)
            return usage_error("unknown option " + a + " for lesson check (it takes --no-index)");
        else
            positional.push_back(a);
    }
    if (positional.empty() || positional[0] != "check")
        return usage_error("lesson needs a subcommand: pt2lab lesson check PATH");
    if (positional.size() != 2)
        return usage_error("lesson check needs one PATH: a lesson file <id>.<lang>.md or a "
                           "course folder");
    auto checked = check_course(positional[1]);
    if (!checked.ok()) return input_error(checked.error());
    const CourseCheck& c = checked.value();
    for (const LessonCheck& lc : c.lessons)
        for (const StepCheck& sc : lc.steps) std::printf("%s\n", step_line(lc, sc).c_str());
    for (const CheckProblem& p : c.problems) std::fprintf(stderr, "%s\n", p.str().c_str());
    std::string summary = std::to_string(c.lesson_ids()) + " lessons (" +
                          std::to_string(c.lessons.size()) + " files), " + std::to_string(c.steps) +
                          " steps, " + std::to_string(c.expectations) + " expectations: ";
    const int other = static_cast<int>(c.problems.size()) - c.failed_expectations;
    if (c.ok())
        summary += "all hold";
    else
        summary += std::to_string(c.failed_expectations) + " do not hold, " +
                   std::to_string(other) + " other problem" + (other == 1 ? "" : "s") +
                   " (on stderr)";
    std::printf("%s\n", summary.c_str());
    if (!c.ok()) return 1;
    if (c.folder && index) {
        // Only a course that passes is listed for a page.
        std::string path = c.path + (c.path.back() == '/' ? "" : "/") + "index.json";
        if (Status s = write_text(path, course_index_json(c)); !s.ok())
            return input_error(s.error());
        std::printf("wrote %s\n", path.c_str());
    }
    return 0;
}

} // namespace pt2lab
