// Checking lessons the way `pt2lab lesson check` and the tests do: parse every
// file, compare translations, open every graph, run every step headless and
// evaluate each step's `expect` claims. It only reads: writing index.json and
// printing are the CLI's (docs/LESSONS.md "Checking a course").
#pragma once

#include <string>
#include <vector>

#include "lesson/lesson.h"
#include "lesson/runner.h"

namespace pt2lab {

// One `expect` claim of a step, evaluated on the live graphs.
struct ExpectOutcome {
    std::string name;     // the claim's field: "lint", "parity", "torch_error", "added", ...
    std::string expected; // as the step claims it ("error", "bit_identical", "RuntimeError")
    std::string actual;   // what the step did, in the same words ("ok", "differs", "none")
    std::string detail;   // why, when it does not hold (the lint message, the parity table)
    bool holds = false;
};

// Evaluates every `expect` claim of `step` (the runner's current step) after its
// actions: `report` is what perform() returned, or an empty report for a step
// without actions. `lint` is read on the step's graph (module view), `parity`
// over every run of the step (and, claimed bit-identical, against the file's
// PyTorch eager output when it has one), `torch_error` over every action.
std::vector<ExpectOutcome> check_step_expect(const LessonRunner& runner, const LessonStep& step,
                                             const LessonStepReport& report);

// A problem the check found, located: "FILE:LINE: message" (line 0: the file as
// a whole, "FILE: message"). The message keeps the parser's or runner's words.
struct CheckProblem {
    std::string file;
    int line = 0;
    std::string message;
    std::string str() const;
};

struct StepCheck {
    int index = 0; // 1-based
    int line = 0;  // the step's "## " heading
    std::string title;
    std::vector<LessonActionReport> actions; // what the button did, in order
    std::vector<ExpectOutcome> expects;
    bool ran = false; // false: an earlier step or this one failed to run
};

struct LessonCheck {
    std::string file; // as listed ("assets/lessons/m00-4.en.md")
    bool parsed = false;
    Lesson lesson; // when parsed
    std::vector<StepCheck> steps;
};

struct CourseCheck {
    std::string path;                 // as given
    bool folder = false;              // a course folder (else one lesson file)
    std::vector<LessonCheck> lessons; // file-name order
    std::vector<CheckProblem> problems;
    int steps = 0, expectations = 0, failed_expectations = 0;
    bool ok() const { return problems.empty(); }
    int lesson_ids() const; // distinct lesson ids among the parsed files
    // "1 lessons (2 files), 4 steps, 12 expectations: all hold" (or how many do not
    // hold and how many other problems there are).
    std::string summary() const;
};

// Where a course's lesson finds a graph it names ("assets/graphs/x.pt2"): first
// under the lesson file's folder, then under each folder above it (nearest
// first), so the shipped course (assets/lessons, graphs in assets/graphs) and a
// teacher's folder holding its own assets/ both resolve. "" when none exists.
std::string resolve_lesson_graph(const std::string& lesson_dir, const std::string& path);

// Checks one lesson file `<id>.<lang>.md` or every `*.md` of a folder:
//  1. parses each file (parse_lesson's line-carrying errors);
//  2. for a folder, compares each id's translations (compare_translations) and
//     reports an id missing a language;
//  3. opens every graph a lesson names through the Workspace, naming the
//     lesson line that names a missing or broken graph;
//  4. runs every step through a LessonRunner and evaluates its `expect`.
// An error value only when PATH itself cannot be read (no such file or folder,
// no lesson files in it); everything about the lessons is in `problems`.
Result<CourseCheck> check_course(const std::string& path);

// Checks one lesson given as text (a lesson file dropped on the page), its graphs
// read through `read` by the paths the lesson names: the same problems, located
// the same way, as check_course finds for the file.
CourseCheck check_lesson_text(const std::string& file, const std::string& text,
                              const LessonRunner::FileReader& read);

// The course's index.json (docs/LESSONS.md "Checking a course"): the lessons by
// order, each with its languages, files, titles, summaries, step count and graphs.
std::string course_index_json(const CourseCheck& check);

} // namespace pt2lab
