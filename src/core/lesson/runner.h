// LessonRunner: walks a Lesson over live Workspaces, one per lesson graph.
// Step k's state is always "steps 1..k-1 performed" (plus step k once its
// button ran), reached by replaying the actions from freshly opened files, so
// a deep link (#m00-4/3) restores the exact graph. It reports what each step
// changed (node ids to highlight, the structural diff, torch's errors, runs)
// and checks answers. No UI: the page draws from what this returns.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lesson/lesson.h"
#include "workspace/workspace.h"

namespace pt2lab {

// What one action of a step did.
struct LessonActionReport {
    std::string graph; // the lesson graph key it acted on
    std::string kind;  // "run", "insert", "train", ...
    std::string summary;
    // What PyTorch raises for this call ("" when nothing): the exception type
    // and its message, e.g. "RuntimeError" / "Tried to erase Node ...".
    std::string torch_error_type, torch_error;
    bool changed = false;
    std::optional<RunReport> run; // run actions
};

// What performing a step did, for the page's highlights and the tests.
struct LessonStepReport {
    int step = 0;
    std::vector<LessonActionReport> actions;
    bool changed = false; // any action changed a graph or a state
    // The step's graph (in the step's view), before -> after its actions.
    GraphDiff diff;
    std::vector<uint32_t> added_ids, rewired_ids, changed_ids; // ids in the graph after
    std::vector<uint32_t> removed_ids;                         // ids the removed nodes had
};

// The outputs of a step's runs against each other (each against the first), when the
// step made two or more: what an `expect` of same_outputs claims, and what the lesson
// panel says under the step's results ("the 3 runs' outputs: bit-identical").
struct StepRunsCompared {
    size_t runs = 0;
    bool bit_identical = true;
    double max_abs = 0; // the largest |difference| over every output of every pair
};
std::optional<StepRunsCompared> compare_step_runs(const LessonStepReport& report);

struct LessonCheckResult {
    bool correct = false;
    std::string feedback; // Markdown inline text
};

class LessonRunner {
public:
    // Reads a lesson asset's bytes; `path` is the LessonGraph's ("assets/graphs/conv_relu.pt2").
    using FileReader = std::function<Result<std::vector<uint8_t>>(const std::string& path)>;
    // Reads files relative to `root` (the folder that holds assets/).
    static FileReader files_under(const std::string& root);

    // Opens every graph of the lesson; the runner stands at step 1, nothing performed.
    static Result<std::unique_ptr<LessonRunner>> open(const Lesson& lesson, FileReader read);

    const Lesson& lesson() const { return lesson_; }
    int step_count() const { return static_cast<int>(lesson_.steps.size()); }
    int step() const { return step_; } // 1-based
    const LessonStep& current() const { return lesson_.steps[static_cast<size_t>(step_ - 1)]; }
    bool performed() const { return performed_; } // the current step's actions have run
    // The report of the current step's actions, once performed.
    const std::optional<LessonStepReport>& report() const { return report_; }

    // Runs the current step's actions (its button). Refused when already
    // performed or the step has no actions. An action that fails leaves the
    // runner at the state before the step.
    Result<LessonStepReport> perform();
    // Goes to step k (1-based) with steps 1..k-1 performed, and step k too when
    // `perform_it`. Going forward performs the skipped steps; going back replays
    // from freshly opened files. On error the runner is reset to step 1.
    Status go_to(int k, bool perform_it = false);
    Status next() { return go_to(step_ + 1); }
    Status previous() { return go_to(step_ - 1); }
    Status reset() { return go_to(1); }

    // The same lesson in another language: text changes, the place and the graphs stay.
    Status switch_language(const Lesson& translated);

    // The workspace of a lesson graph key (null for an unknown key).
    const Workspace* workspace(const std::string& key) const;
    // The current step's graph and view.
    const Workspace& step_workspace() const;
    GraphView step_view() const;
    // The current step's highlights and inspector selection as node ids in its
    // graph and view; names the graph does not have (yet) are left out.
    std::vector<uint32_t> highlight_ids() const;
    uint32_t selected_id() const; // 0 = none
    // Nodes of the step's graph in call order: call_function targets
    // ("torch.ops.aten.conv2d.default").
    std::vector<std::string> op_sequence(const std::string& key) const;

    LessonCheckResult check_answer(int option) const;

    // "#m00-4/3" for the current step; parse_deep_link("#m00-4/3") -> ("m00-4", 3).
    std::string deep_link() const;
    static bool parse_deep_link(const std::string& hash, std::string& id, int& step);

private:
    LessonRunner() = default;
    Status open_all();
    Result<LessonStepReport> run_step(const LessonStep& st);

    Lesson lesson_;
    FileReader read_;
    std::map<std::string, std::vector<uint8_t>> bytes_; // per path, read once
    std::map<std::string, std::unique_ptr<Workspace>> ws_;
    int step_ = 1;
    bool performed_ = false;
    std::optional<LessonStepReport> report_;
};

} // namespace pt2lab
