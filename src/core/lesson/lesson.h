// A lesson as data: the parsed form of assets/lessons/<id>.<lang>.md (format in
// docs/LESSONS.md). Prose stays Markdown text for the app to render; the
// ```lesson and ```step JSON blocks become structured fields. No Markdown
// library and no UI here: this file only reads and validates.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace pt2lab {

// One graph a lesson works on: a torch.export file (.pt2 / ExportedProgram
// .json, opened as a Workspace the steps act on) or a symbolic_trace graph
// (assets/fx/*.json, shown read-only beside the others).
struct LessonGraph {
    std::string key;  // the name steps use ("main", "eval", "fx_modules")
    std::string path; // repo-relative ("assets/graphs/conv_relu.pt2")
    enum class Kind { Export, SymbolicTrace } kind = Kind::Export;
};

// One thing a step's button does, as data (nodes by name). `kind` is one of
// the Workspace actions (decompose, decompose_node, fold_conv_bn,
// insert_observer, prepare, calibrate, convert, eliminate_dead_code,
// recompile, run), a torch.fx edit (insert, replace_all_uses_with,
// replace_input_with, erase_node, set_args, lint; docs/FORMATS.md section 6),
// undo / redo, or train / eval (what ep.module().train() /
// .eval() do in PyTorch).
struct StepAction {
    std::string graph;    // the LessonGraph key it acts on
    std::string kind;     // see above
    std::string json;     // the action object as written (minus "graph"), for the runner
    std::string where;    // "m00-4.en.md:57: $.actions[1]" for errors found later
    bool is_edit = false; // a torch.fx edit action (parsed with parse_edit_action)
};

struct CheckOption {
    std::string text;     // Markdown inline text
    std::string feedback; // why this option is right or wrong
};

// A multiple-choice question (there is no input method for Chinese in the canvas).
struct Check {
    std::string question;
    std::vector<CheckOption> options;
    int answer = 0; // index into options
};

// What the step claims the learner will see after its actions, checked by the
// tests against real PyTorch and the engine. Unset fields claim nothing.
struct StepExpect {
    std::string lint;             // "" | "ok" | "error"
    std::string parity;           // "" | "bit_identical" | "allclose" | "differs" (last run)
    std::string torch_error_kind; // "" | "none" | the exception type torch raises ("RuntimeError")
    std::vector<std::string> added, removed; // node names the step adds / removes
    int changed = -1;                        // -1 unset, 0 / 1: whether the step changed a graph
    // -1 unset; 1: the step's runs (on several graphs) give bit-identical outputs; 0: they differ.
    int same_outputs = -1;
};

struct LessonStep {
    int index = 0;     // 1-based, as in deep links (#m00-4/3)
    int line = 0;      // line of the step's "## " heading
    std::string title; // the heading text
    std::string prose; // Markdown between the heading and the step block
    std::string after; // Markdown after the step block (read once the button was pressed)
    // The graph the step shows and in which form ("program" = the
    // ExportedProgram's ep.graph, "module" = ep.module()).
    std::string graph;
    std::string view = "module";
    std::vector<std::string> compare; // further graph keys shown beside it
    std::string button;               // the action button's label; "" when no actions
    std::vector<StepAction> actions;
    std::vector<std::string> highlight; // node names in `graph`/`view` after the actions
    std::string select;                 // node to open in the inspector ("" = none)
    std::vector<std::string> show;      // panels the step points at (see kShowPanels)
    StepExpect expect;
    Check check;
    bool is_quiz = false; // the lesson's closing chapter-map question
};

struct Lesson {
    std::string file;    // as given to parse_lesson
    std::string id;      // "m00-4"
    std::string lang;    // "zh-TW" | "en"
    int order = 0;       // position in the lesson list
    std::string title;   // the "# " heading
    std::string summary; // one line for the lesson list
    std::string intro;   // Markdown between the title and the first step
    std::vector<LessonGraph> graphs;
    std::vector<LessonStep> steps;

    const LessonGraph* find_graph(const std::string& key) const;
};

// Panels a step may point at ("show"): the page decides how to draw them.
extern const char* const kShowPanels[];
// Languages the lessons ship in; the first is the default.
extern const char* const kLessonLangs[];

// Parses one lesson file. `file` names it in errors ("assets/lessons/m00.en.md");
// its base name must be "<id>.<lang>.md" with the id of the ```lesson block.
// Errors carry the file, "line N" and the JSON path of the field at fault.
Result<Lesson> parse_lesson(const std::string& text, const std::string& file);

// Checks that two translations of one lesson have the same steps: same graphs,
// views, actions, highlights, expectations, number of options and answers.
// Returns "" when they match, else what differs first.
std::string compare_translations(const Lesson& a, const Lesson& b);

} // namespace pt2lab
