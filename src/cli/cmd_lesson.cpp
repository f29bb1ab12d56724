// pt2lab lesson check PATH [--no-index]: a printer over check_course
// (lesson/lesson_check.h): one line per step, the problems as FILE:LINE:
// message on stderr, a summary line, and a course folder's index.json.
// pt2lab lesson python FILE --out DIR: after each step of the lesson, every
// graph that changed as Copy as Python writes it (DIR/<id>.<step>.<key>.py) and
// what pt2lab prints of it (DIR/<id>.<step>.<key>.json: str(gm.graph), gm.code,
// str(ep.graph)), for tools/python_roundtrip.py to check against real torch.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "graph/printer.h"
#include "io/program_loader.h"
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

// A lesson file's graphs, found as `pt2lab lesson check` finds them: under its
// folder, then the folders above it (resolve_lesson_graph).
LessonRunner::FileReader graphs_near(const std::string& file) {
    size_t slash = file.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
    return [dir](const std::string& path) -> Result<std::vector<uint8_t>> {
        const std::string found = resolve_lesson_graph(dir, path);
        if (found.empty())
            return make_error(path,
                              "not found (looked under " + dir + " and the folders above it)");
        return read_file_bytes(found);
    };
}

int lesson_python(const std::string& file, const std::string& out_dir) {
    auto bytes = read_file_bytes(file);
    if (!bytes.ok()) return input_error(bytes.error());
    auto lesson = parse_lesson(std::string(bytes.value().begin(), bytes.value().end()), file);
    if (!lesson.ok()) return input_error(lesson.error());
    auto runner = LessonRunner::open(lesson.value(), graphs_near(file));
    if (!runner.ok()) return input_error(runner.error());
    LessonRunner& r = *runner.value();
    std::map<std::string, std::string> last; // key -> the script written last
    int written = 0;
    for (int k = 1; k <= r.step_count(); ++k) {
        if (Status s = r.go_to(k, !r.lesson().steps[static_cast<size_t>(k - 1)].actions.empty());
            !s.ok())
            return input_error(s.error());
        for (const LessonGraph& g : r.lesson().graphs) {
            const Workspace* ws = r.workspace(g.key);
            if (!ws) continue;
            std::string script = ws->python_script();
            if (last[g.key] == script) continue;
            last[g.key] = script;
            std::string stem =
                out_dir + "/" + r.lesson().id + "." + std::to_string(k) + "." + g.key;
            nlohmann::json expected = {
                {"lesson", r.lesson().id},
                {"step", k},
                {"graph", g.key},
                {"file", g.path},
                {"gm_graph", graph_str(*ws->module().graph)},
                {"gm_code", ws->code(GraphView::Module).text},
            };
            if (ws->has_program()) expected["ep_graph"] = graph_str(*ws->program().graph);
            if (Status s = write_text(stem + ".py", script); !s.ok()) return input_error(s.error());
            if (Status s = write_text(stem + ".json", expected.dump(1) + "\n"); !s.ok())
                return input_error(s.error());
            std::printf("%s.py\n", stem.c_str());
            ++written;
        }
    }
    std::printf("%d scripts for %d steps of %s\n", written, r.step_count(), file.c_str());
    return 0;
}

} // namespace

int cmd_lesson(const std::vector<std::string>& args) {
    std::vector<std::string> positional;
    bool index = true;
    std::string out_dir;
    for (size_t k = 0; k < args.size(); ++k) {
        const std::string& a = args[k];
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        }
        if (a == "--out" && k + 1 < args.size())
            out_dir = args[++k];
        else if (a == "--no-index")
            index = false;
        else if (a.rfind("--", 0) == 0)
            return usage_error("unknown option " + a +
                               " for lesson (check takes --no-index, python --out DIR)");
        else
            positional.push_back(a);
    }
    if (!positional.empty() && positional[0] == "python") {
        if (positional.size() != 2 || out_dir.empty())
            return usage_error("lesson python needs one lesson file and --out DIR");
        return lesson_python(positional[1], out_dir);
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
    std::printf("%s%s\n", c.summary().c_str(), c.ok() ? "" : " (on stderr)");
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
