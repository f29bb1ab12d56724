// Checking a course (lesson/lesson_check.h and `pt2lab lesson check`): the
// shipped course passes; a copy broken four ways (a bad step block, a missing
// graph, a claim that does not hold, a translation missing a step) fails with
// exit 1 and a message naming file and line. Starts the native CLI, so it is
// built only natively (tests/CMakeLists.txt), like test_cli.cpp.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lesson/catalog.h"
#include "lesson/lesson_check.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

struct Run {
    int status;
    std::string out, err;
};

// As test_cli.cpp runs the CLI (PT2LAB_CLI, else the binary this build made).
Run run_cli(const std::string& args) {
    const char* cli = std::getenv("PT2LAB_CLI");
    if (!cli) cli = PT2LAB_CLI_PATH;
    std::string err_file = "pt2lab_lesson_check_stderr.txt";
    std::string cmd = std::string(cli) + " " + args + " 2>" + err_file;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    Run r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = read_text(err_file);
    std::remove(err_file.c_str());
    return r;
}

void write_text(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
}

std::string base_name(const std::string& p) {
    return p.substr(p.find_last_of('/') + 1);
}

// A copy of the shipped course in a fresh temp folder: the lessons, and their
// graphs under its own assets/ (as a teacher's course folder holds them).
struct TempCourse {
    std::string dir;
    TempCourse() {
        char tmpl[] = "/tmp/pt2lab_course_XXXXXX";
        REQUIRE(mkdtemp(tmpl));
        dir = tmpl;
        for (const char* sub : {"/assets", "/assets/graphs", "/assets/fx"})
            REQUIRE(mkdir((dir + sub).c_str(), 0755) == 0);
        for (const auto& rel : list_dir("assets/lessons", ".md"))
            write_text(dir + "/" + base_name(rel), read_text(source_path(rel)));
        for (const char* sub : {"graphs", "fx"})
            for (const auto& rel : list_dir(std::string("assets/") + sub, ""))
                write_text(dir + "/assets/" + sub + "/" + base_name(rel),
                           read_text(source_path(rel)));
    }
    ~TempCourse() { std::system(("rm -rf '" + dir + "'").c_str()); }
    std::string path(const std::string& name) const { return dir + "/" + name; }
    std::string read(const std::string& name) const { return read_text(path(name)); }
    // Replaces the first `from` in a lesson file; fails the test when it is not there.
    void edit(const std::string& name, const std::string& from, const std::string& to) const {
        std::string text = read(name);
        size_t at = text.find(from);
        INFO(name << ": " << from);
        REQUIRE(at != std::string::npos);
        write_text(path(name), text.replace(at, from.size(), to));
    }
};

// The 1-based line of the first occurrence of `needle` in `text` at or after `from`.
int line_of(const std::string& text, const std::string& needle, size_t from = 0) {
    size_t at = text.find(needle, from);
    REQUIRE(at != std::string::npos);
    int line = 1;
    for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
    return line;
}

// Where line `line` (1-based) of `text` starts.
size_t line_start(const std::string& text, int line) {
    size_t at = 0;
    for (int k = 1; k < line; ++k) at = text.find('\n', at) + 1;
    return at;
}

// The shipped m00-4 in English, parsed (titles and lines the tests name).
const Lesson& m00_4_en() {
    static Lesson l = [] {
        auto r = parse_lesson(read_text(source_path("assets/lessons/m00-4.en.md")),
                              "assets/lessons/m00-4.en.md");
        REQUIRE(r.ok());
        return r.take();
    }();
    return l;
}

std::string step_head(const LessonStep& st) {
    return ":" + std::to_string(st.line) + " step " + std::to_string(st.index) + " \"" + st.title +
           "\": ";
}

} // namespace

TEST_CASE("the shipped course passes its check: every step runs, every claim holds", "[lesson]") {
    auto c = check_course(source_path("assets/lessons"));
    REQUIRE(c.ok());
    const CourseCheck& cc = c.value();
    for (const auto& p : cc.problems) INFO(p.str());
    CHECK(cc.ok());
    CHECK(cc.folder);
    CHECK(cc.lessons.size() == 10);
    CHECK(cc.lesson_ids() == 5);
    CHECK(cc.steps >= 2 * 30);
    CHECK(cc.expectations >= 2 * 40);
    CHECK(cc.failed_expectations == 0);
    for (const auto& l : cc.lessons) {
        CHECK(l.parsed);
        for (const auto& s : l.steps) CHECK(s.ran);
    }
    // the index lists every lesson once, by order, in both languages
    auto index = nlohmann::json::parse(course_index_json(cc));
    REQUIRE(index["lessons"].size() == 5);
    CHECK(index["format"] == "pt2lab-course");
    CHECK(index["lessons"][0]["id"] == "m00");
    CHECK(index["lessons"][4]["id"] == "m00-4");
    CHECK(index["lessons"][4]["languages"] == nlohmann::json({"zh-TW", "en"}));
    CHECK(index["lessons"][4]["files"]["en"] == "m00-4.en.md");
    CHECK(index["lessons"][4]["graphs"]["main"] == "assets/graphs/conv_relu.pt2");
    CHECK(index["lessons"][4]["steps"] == m00_4_en().steps.size());
    // one lesson file alone: no translation to compare, its own steps run
    auto one = check_course(source_path("assets/lessons/m00-4.en.md"));
    REQUIRE(one.ok());
    CHECK(one.value().ok());
    CHECK_FALSE(one.value().folder);
    CHECK(one.value().steps == static_cast<int>(m00_4_en().steps.size()));
    CHECK_FALSE(check_course(source_path("assets/lessons/nope.en.md")).ok());
}

TEST_CASE("check_step_expect says which claim does not hold and what the step gave", "[lesson]") {
    auto cat = load_lesson_catalog(source_path("assets/lessons"));
    REQUIRE(cat.ok());
    Lesson l = *cat.value().find("m00-4", "en");
    // step 3 claims lint error and torch's RuntimeError: claim the opposite
    LessonStep& st = l.steps[2];
    REQUIRE(st.expect.lint == "error");
    REQUIRE(st.expect.torch_error_kind == "RuntimeError");
    st.expect.lint = "ok";
    st.expect.torch_error_kind = "none";
    st.expect.parity = "bit_identical"; // the step runs nothing
    auto r = LessonRunner::open(l, LessonRunner::files_under(PT2LAB_SOURCE_DIR));
    REQUIRE(r.ok());
    REQUIRE(r.value()->go_to(3).ok());
    auto rep = r.value()->perform();
    REQUIRE(rep.ok());
    std::vector<ExpectOutcome> out = check_step_expect(*r.value(), st, rep.value());
    REQUIRE(out.size() == 4); // lint, parity, torch_error, changed
    CHECK(out[0].name == "lint");
    CHECK_FALSE(out[0].holds);
    CHECK(out[0].actual == "error");
    CHECK_FALSE(out[0].detail.empty()); // lint's own message
    CHECK(out[1].name == "parity");
    CHECK_FALSE(out[1].holds);
    CHECK(out[1].actual == "no run");
    CHECK(out[2].name == "torch_error");
    CHECK_FALSE(out[2].holds);
    CHECK(out[2].actual == "RuntimeError");
    CHECK(out[3].name == "changed");
    CHECK(out[3].holds);
}

TEST_CASE("pt2lab lesson check: the shipped course passes with exit 0", "[cli]") {
    Run r = run_cli("lesson check " + source_path("assets/lessons") + " --no-index");
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("5 lessons (10 files), ") != std::string::npos);
    CHECK(r.out.find(" expectations: all hold\n") != std::string::npos);
    CHECK(r.out.find("m00-4.en.md" + step_head(m00_4_en().steps[6])) != std::string::npos);
    CHECK(r.out.find("FAILS") == std::string::npos);
    struct stat st {};
    CHECK(stat(source_path("assets/lessons/index.json").c_str(), &st) != 0); // --no-index
    // usage
    CHECK(run_cli("lesson").status == 2);
    CHECK(run_cli("lesson check").status == 2);
    CHECK(run_cli("lesson frob x").status == 2);
    CHECK(run_cli("lesson check a b").status == 2);
    CHECK(run_cli("lesson check x --bogus").status == 2);
    Run missing = run_cli("lesson check /nonexistent/course");
    CHECK(missing.status == 1);
    CHECK(missing.err.find("/nonexistent/course: no such lesson file or course folder") !=
          std::string::npos);
}

TEST_CASE("pt2lab lesson check: a course folder gets index.json; a broken copy fails naming "
          "file and line",
          "[cli]") {
    {
        TempCourse c;
        Run r = run_cli("lesson check " + c.dir);
        INFO(r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find("wrote " + c.path("index.json")) != std::string::npos);
        auto index = nlohmann::json::parse(c.read("index.json"), nullptr, false);
        REQUIRE(index.is_object());
        CHECK(index["lessons"].size() == 5);
        CHECK(index["lessons"][1]["titles"].size() == 2);
    }
    {
        // (a) a step block that is not JSON
        TempCourse c;
        const std::string f = "m00-4.en.md";
        std::string text = c.read(f);
        size_t fence = text.find("```step\n{", line_start(text, m00_4_en().steps[2].line));
        REQUIRE(fence != std::string::npos);
        const int fence_line = line_of(text, "```step", fence);
        write_text(c.path(f), text.insert(fence + 9, ",,"));
        Run r = run_cli("lesson check " + c.dir);
        INFO(r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find(c.path(f) + ":" + std::to_string(fence_line) + ": $: invalid JSON") !=
              std::string::npos); // the parser's words, at the block's fence
        CHECK(r.out.find("all hold") == std::string::npos);
        struct stat st {};
        CHECK(stat(c.path("index.json").c_str(), &st) != 0); // a failing course is not listed
    }
    {
        // (b) a graph that is missing, and one that does not open
        TempCourse c;
        std::remove(c.path("assets/graphs/conv_relu.pt2").c_str());
        write_text(c.path("assets/graphs/style_modules.pt2"), "not a zip");
        Run r = run_cli("lesson check " + c.dir);
        INFO(r.err);
        CHECK(r.status == 1);
        int line = line_of(c.read("m00-4.en.md"), "assets/graphs/conv_relu.pt2");
        CHECK(r.err.find(c.path("m00-4.en.md") + ":" + std::to_string(line) +
                         ": graph \"main\": assets/graphs/conv_relu.pt2 not found") !=
              std::string::npos);
        CHECK(r.err.find("assets/graphs/style_modules.pt2) does not open: ") != std::string::npos);
        CHECK(r.out.find("m00-4.en.md" + step_head(m00_4_en().steps[0]) + "not run") !=
              std::string::npos);
    }
    {
        // (c) a claim that does not hold (in both languages, so they still agree)
        TempCourse c;
        for (const char* f : {"m00-4.en.md", "m00-4.zh-TW.md"})
            c.edit(f, "\"expect\": {\"lint\": \"error\", \"torch_error\": \"RuntimeError\"",
                   "\"expect\": {\"lint\": \"ok\", \"torch_error\": \"RuntimeError\"");
        Run r = run_cli("lesson check " + c.dir);
        INFO(r.err);
        CHECK(r.status == 1);
        int line = line_of(c.read("m00-4.en.md"), "\"expect\": {\"lint\": \"ok\", \"torch_error\"");
        const LessonStep& st = m00_4_en().steps[2];
        CHECK(r.err.find(c.path("m00-4.en.md") + ":" + std::to_string(line) + ": step 3 \"" +
                         st.title + "\": expect lint ok does not hold: the step gives error (") !=
              std::string::npos);
        CHECK(r.out.find("lint error (expected ok) FAILS") != std::string::npos);
        CHECK(r.out.find("expectations: 2 do not hold, 0 other problems") != std::string::npos);
    }
    {
        // (d) a translation with a step missing: the en file loses step 4 (undo)
        TempCourse c;
        const Lesson& l = m00_4_en();
        REQUIRE(l.steps.size() > 5);
        std::string text = c.read("m00-4.en.md");
        size_t a = line_start(text, l.steps[3].line), b = line_start(text, l.steps[4].line);
        write_text(c.path("m00-4.en.md"), text.substr(0, a) + text.substr(b));
        Run r = run_cli("lesson check " + c.dir);
        INFO(r.err);
        CHECK(r.status == 1);
        // where they part: en's step 4 is now what was step 5, at the line step 4 had
        const std::string n = std::to_string(l.steps.size());
        CHECK(r.err.find(c.path("m00-4.en.md") + ":" + std::to_string(l.steps[3].line) +
                         ": differs from " + c.path("m00-4.zh-TW.md") + ": " + n + " steps vs " +
                         std::to_string(l.steps.size() - 1) + " (first difference: step 4: ") !=
              std::string::npos);
    }
}

// A lesson file dropped on the page is checked from its text, its graphs read through
// the page's reader: the same summary and the same located problems as the CLI's.
TEST_CASE("check_lesson_text checks a lesson given as text, graphs from a reader", "[lesson]") {
    const std::string file = "m00-4.en.md";
    const std::string text = read_text(source_path("assets/lessons/m00-4.en.md"));
    auto read = [](const std::string& path) -> Result<std::vector<uint8_t>> {
        if (path != "assets/graphs/conv_relu.pt2") return make_error(path, "not dropped");
        return read_file_bytes(source_path(path));
    };
    CourseCheck ok = check_lesson_text(file, text, read);
    for (const auto& p : ok.problems) INFO(p.str());
    CHECK(ok.ok());
    auto disk = check_course(source_path("assets/lessons/m00-4.en.md"));
    REQUIRE(disk.ok());
    CHECK(ok.summary() == disk.value().summary());
    CHECK(ok.summary().find("all hold") != std::string::npos);

    // A claim that does not hold names the line of the claim.
    std::string broken = text;
    const std::string claim = R"("expect": {"lint": "ok", "added": ["activation_post_process_0"])";
    size_t at = broken.find(claim);
    REQUIRE(at != std::string::npos);
    broken.replace(at, claim.size(),
                   R"("expect": {"lint": "error", "added": ["activation_post_process_0"])");
    int line = 1;
    for (size_t k = 0; k < at; ++k) line += broken[k] == '\n';
    CourseCheck bad = check_lesson_text(file, broken, read);
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.failed_expectations == 1);
    CHECK(bad.problems[0].file == file);
    CHECK(bad.problems[0].line == line);
    CHECK(bad.problems[0].message.find("expect lint error does not hold") != std::string::npos);
    CHECK(bad.summary().find("1 do not hold, 0 other problems") != std::string::npos);

    // A graph the reader lacks, and a file that does not parse.
    auto none = [](const std::string& path) -> Result<std::vector<uint8_t>> {
        return make_error(path, "not dropped");
    };
    CourseCheck missing = check_lesson_text(file, text, none);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.problems[0].str().find("conv_relu.pt2") != std::string::npos);
    CourseCheck unparsed = check_lesson_text(file, "# a title\n\n## a step\n\nno block\n", read);
    REQUIRE(unparsed.problems.size() == 1);
    CHECK(unparsed.problems[0].file == file);
}
