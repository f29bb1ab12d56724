// The undoable state of a Workspace and the helpers that keep its executor
// state in step with its module. Internal to src/core/workspace.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "passes/unlift.h"
#include "util/stages.h"
#include "workspace/python_script.h"
#include "workspace/workspace.h"

namespace pt2lab {

// Calibrate's summary, "  %obs: min .. max -> scale .. zero_point .." per observer,
// written in pieces (7,810 observers' lines after calibrating a 10k-node graph took
// 10-15 ms natively): the text so far and the next observer; the state must not change
// meanwhile (observer_lines below).
struct ObserverLines {
    std::string text;
    bool started = false;
    std::map<std::string, std::shared_ptr<Observer>>::const_iterator next;
};

struct Workspace::State {
    // The graphs are shared between states until an action changes them: a
    // committed state's program and module are never changed in place (an
    // action calls own_ep() / own_gm() first, which clone them once), so a run,
    // a calibration or a history entry costs no copy of the graph.
    std::shared_ptr<const ExportedProgram> ep; // null for a symbolic_trace module
    std::shared_ptr<const GraphModule> gm;     // ep.module(), with the module actions applied
    ModuleState exec;                          // live parameters, buffers and observers
    // The attribute data each exec tensor was made from: a tensor is rebuilt only
    // when its attribute changes (folding), so buffers keep what runs wrote.
    std::map<std::string, const TensorData*> exec_source;
    int module_actions = 0; // module changes since gm was last built from ep
    // exec holds the file's values as loaded: no run wrote a buffer, no observer recorded.
    bool exec_fresh = true;
    std::optional<RunReport> last_run;
    // The level a whole-program Decompose lowered ep to (what was done to it, not
    // a guess from its ops: an inference-IR program may hold only core ops).
    std::optional<IrLevel> decomposed_to;
    // Copy as Python: the actions that led here, as torch calls (python_script.h).
    std::vector<PythonStep> script;

    // A copy for an action to work on: graphs, tensors and observers shared
    // (see above); only runs write tensors and observers, and Workspace::begin
    // gives a run its own copies of those it writes (make_writable).
    std::unique_ptr<State> copy() const;
    // The program / module to change: this state's own clone, made on first use.
    ExportedProgram& own_ep();
    GraphModule& own_gm();
    // Replaces the program / module with a new one this state owns.
    void set_ep(ExportedProgram ep);
    void set_gm(GraphModule gm);

private:
    bool owns_ep_ = false, owns_gm_ = false;
};

// The action in flight (workspace_jobs.cpp).
struct Workspace::Pending {
    Action action;
    std::unique_ptr<State> next; // the copy the action works on
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    std::optional<Result<ActionOutcome>> result; // set once the work is over

    // --- Run and Calibrate: a sequence of forwards ---------------------------
    bool sliced = false;
    std::vector<std::vector<Tensor>> batches; // Calibrate: one per batch; Run: the inputs
    std::string label;                        // of the inputs
    int runs_total = 0, runs_done = 0;        // forwards of the live state
    bool baseline_needed = false, baseline_done = false;
    bool baseline_reused = false; // the float run of the last quantized Run (layer_baseline_)
    double baseline_ms = 0;       // the float run's forward, when it ran
    double layers_ms = 0;         // comparing the layers
    std::string baseline_key;
    RunResult baseline;
    ModuleState baseline_state;      // the file as loaded, for the baseline run
    std::unique_ptr<Execution> exec; // the forward in flight
    // The plan of the graph the next forward runs, made in pieces and kept for the
    // forwards after it (calibration batches): RunPlan, exec/interpreter.h.
    std::unique_ptr<RunPlanning> planning;
    std::shared_ptr<const RunPlan> plan, baseline_plan;
    double exec_ms = 0, last_ms = 0; // time spent in the current / last forward
    size_t nodes_per_run = 0, nodes_baseline = 0;
    uint64_t units_done = 0;         // nodes of finished forwards
    uint64_t values_bytes = 0;       // Run: what the graph's values take (values_bytes)
    RunOptions opt;                  // the live forwards'
    ModuleState before;              // Run: to tell whether it wrote anything
    bool graph_as_loaded = false;    // the view's graph is the file's own, unchanged
    bool before_fresh = false;       // Run: the state was the file's, as loaded
    RunResult last;                  // Run: the last forward's result
    std::vector<NodeTime> times;     // Run: the forward's nodes' times (RunOptions::node_times)
    std::vector<NodeTime> time_sums; // ... added up over the forwards so far
    double live_ms = 0;              // Run: the forwards' time, added up
    std::unique_ptr<RunProfiling> profiling;   // Run: the profile of time_sums, in pieces
    std::shared_ptr<const RunProfile> profile; // ... once made
    // Run of the module: did forward() run an older recompile (Workspace::write_code)?
    std::optional<bool> stale;
    // Run of a quantized graph: its layers against the float file as loaded
    // (exec/layer_parity.h), paired in pieces before the baseline runs (which keeps
    // only those float values), then compared as the last forward makes them.
    bool approximate = false;   // the graph that runs has quantize / dequantize nodes
    bool layers_wanted = false; // ... and the file as loaded has none
    std::unique_ptr<LayerPairing> pairing;
    std::vector<LayerPair> layer_pairs;
    std::shared_ptr<const std::set<std::string>> layer_refs; // the baseline keeps these
    bool layers_paired = false;
    size_t layers_done = 0;
    // The last forward compares its layers as it makes them (RunOptions::on_value), after
    // the float run: it keeps no values for them and runs with its memory reused.
    std::unique_ptr<LayerStream> stream;
    LayerTable layers;
    // Calibrate: the observers whose qparams the summary shows, and how many are done
    // (HistogramObserver's search takes milliseconds each: it is sliced too).
    std::vector<const Observer*> observers;
    size_t qparams_done = 0;
    ObserverLines observer_text; // Calibrate's summary, written in pieces

    // --- every other action: its work in pieces (Workspace::plan) -------------
    Stages stages;
    ActionOutcome outcome; // what the stages build
    bool over = false;     // known before the last stage: nothing changed
    std::shared_ptr<const GraphModule> before_module; // the module as it was: the diff's base
    std::unique_ptr<GraphCloning> cloning;            // a graph being copied
    std::unique_ptr<GraphDiffing> diffing;            // the new graph against the old
    std::unique_ptr<Preparing> preparing;
    std::unique_ptr<Converting> converting;
    PrepareReport prepare_report; // written into the summary a piece at a time
    ConvertReport convert_report; // the same
    size_t report_at = 0;
    // Decompose: the program being lowered, its report, its diff and its ep.module()
    std::unique_ptr<ExportedProgram> low;
    std::unique_ptr<Decomposing> decomposing;
    bool rules_applied = false;
    GraphDiff program_diff;
    std::unique_ptr<Unlifting> unlifting;
};

// What a summary adds when ep.module() is rebuilt over `module_actions` module changes.
std::string rebuilt_note(int module_actions);

// The rules of a Decompose or DecomposeNode action: its level's, minus the ops it keeps.
DecompTable decomp_table(const Action& a);

// The observer call_modules that have recorded nothing (convert would pick (1.0, 0)).
std::vector<std::string> unobserved(const Workspace::State& s);

// Brings s.exec in line with s.gm: tensors for new or changed attributes,
// none for removed ones, a fresh observer per new observer submodule.
// `file_size` (the file the state came from) sizes the run budgets.
void sync_exec_state(Workspace::State& s, uint64_t file_size);

// Gives s.exec private copies of the tensors a run of s.gm writes, so states
// kept in the history keep their values.
void make_writable(Workspace::State& s);

// "  %obs: min .. max -> scale .. zero_point .." per observer.
std::string observer_lines(const ModuleState& state);
// The same in pieces (ObserverLines, above).
bool observer_lines(const ModuleState& state, ObserverLines& at,
                    std::chrono::steady_clock::time_point deadline);

// Whether two states hold the same values (shared tensors are equal without a look).
bool same_values(const ModuleState& a, const ModuleState& b);

// The label of a run on the file's own inputs: torch's eager outputs on them
// (extra/pt2lab) are its reference.
extern const char* const kSampleInputsLabel;

// The IR level a program's ops are at: Training while any op has an
// inference-level decomposition, Inference while any has a Core ATen one.
// A guess from the ops alone, for a program that does not say (no verifiers):
// Training when an op has an inference decomposition, else Inference when one has
// a core one, else CoreAten. `aten_dialect`: the program says it is past training.
IrLevel ir_level_of(const Graph& g, bool aten_dialect = false);

} // namespace pt2lab
