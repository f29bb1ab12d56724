// Workspace: the one open file a UI (the page, the lesson engine, the CLI)
// holds for as long as it likes. It owns the ExportedProgram, its
// ep.module(), the executor state, the edit history, the last structural
// diff, the code of each view with its line -> node map, and a version that
// changes on every edit. It is not a UI: it draws nothing and keeps no
// selection.
//
// Every change is an Action. An action either applies completely (and can be
// undone / redone) or fails with an Error and leaves the workspace exactly as
// it was: it runs on a copy of the state, which replaces the current state
// only on success. Nodes carry stable ids (Node::id) that survive undo and
// redo; a UI keeps ids, never Node pointers, and looks nodes up again with
// node(view, id) after every version change.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edit/edit_action.h"
#include "exec/interpreter.h"
#include "exec/layer_parity.h"
#include "exec/parity.h"
#include "exec/run_profile.h"
#include "io/zip.h"
#include "passes/decompose.h"
#include "passes/graph_diff.h"
#include "passes/pt2e.h"
#include "program/exported_program.h"
#include "util/limits.h"

namespace pt2lab {

// Which graph: the ExportedProgram's (ep.graph, lifted parameters as
// placeholders) or ep.module()'s (get_attr, copy_ for mutations). Lessons'
// edits and the PT2E passes act on the module; decompositions on the program
// (as in PyTorch: ep.run_decompositions(), then ep.module() again).
enum class GraphView { Program, Module };
const char* graph_view_name(GraphView v); // "ExportedProgram", "ep.module()"

// Where a run's inputs come from.
struct InputSource {
    enum class Kind {
        Auto,   // the file's sample inputs if it has them, else Seeded
        Sample, // data/sample_inputs/model.pt: torch.export.save writes export()'s
                // example args and kwargs there (the program's example_inputs)
        Seeded, // pt2lab's documented generator, SeededRng(seed).normal(), shaped by the graph
        Given,  // `tensors` (the CLI's --input x.npy files), described by `label`
    } kind = Kind::Auto;
    uint64_t seed = 0;           // Seeded
    std::vector<Tensor> tensors; // Given: one per forward() input
    std::string label;           // Given: where they came from ("from --input")
};

// One change (or question) to the workspace, as data: the page's buttons, the
// lesson steps, the CLI and the tests all speak this. The kinds, their JSON
// names, fields, labels and history rule are one table: action_rows.inc.
struct Action {
    enum class Kind {
#define PT2LAB_ACTION_KIND(Enum, name, history) Enum,
#include "workspace/action_rows.inc"
#undef PT2LAB_ACTION_KIND
    } kind = Kind::Run;
    // Edit: a torch.fx edit on the module (EditAction: insert, replace_all_uses_with,
    // replace_input_with, erase_node, eliminate_dead_code, lint, recompile, set_args;
    // undo / redo are Workspace::undo / redo)
    EditAction edit;
    IrLevel level = IrLevel::CoreAten; // Decompose (run_decompositions), DecomposeNode (one node)
    std::vector<std::string> keep;     // Decompose: op overloads kept (no rule applied)
    std::string node;                  // DecomposeNode, InsertObserver: the node, by name
    bool fold_quantize = true;         // Convert (convert_pt2e); refused before any calibration
    // Run: the module's forward (or, with view Program, ep.graph's) on the live state;
    // Calibrate: the module on `inputs`, then on `repeat - 1` seeded batches
    // (SeededRng(1..).normal()) so its observers record.
    InputSource inputs;
    int repeat = 1;
    GraphView view = GraphView::Module; // Run: which graph runs
    bool check_guards = true;           // Run: evaluate _guards_fn (torch does)
    // Run: the blocked conv2d kernel (exec/conv_fast.cpp, several times faster on
    // real models; its float order differs from torch's, within 1e-4) in this run
    // and in the original's run it is compared with. Off: the reference loops.
    bool fast_kernels = false;
    bool train = true; // SetTraining: module.train() / module.eval(); ep.module() refuses,
                       // as in torch (the mode is fixed at export); a symbolic_trace
                       // module switches
    std::string label; // shown in the history; "" = a default per kind

    static Action of(EditAction e) {
        Action a;
        a.kind = Kind::Edit;
        a.edit = std::move(e);
        return a;
    }
    static Action of(Kind k) {
        Action a;
        a.kind = k;
        return a;
    }
};
const char* action_kind_name(Action::Kind k); // "decompose", "prepare", ...

// What one run produced and how it compares with the file as loaded.
struct RunReport {
    uint64_t version = 0;               // the workspace version it ran at
    GraphView view = GraphView::Module; // the graph that ran (Action::view)
    bool fast_kernels = false;          // Action::fast_kernels
    int repeat = 1;                     // runs made (Action::repeat)
    double ms = 0;                      // the last run's wall time (steady clock)
    std::string
        inputs_label; // "sample inputs (data/sample_inputs/model.pt)", "SeededRng(0).normal()"
    RunResult result; // the last repetition's outputs and per-node values
    std::vector<Tensor> inputs; // forward()'s inputs, in order (their bytes shared, not copied)
    // The module's forward was stale: the graph changed since its last
    // recompile(), so (as in torch) the run used the code of that recompile.
    bool stale = false;
    // This module's outputs vs the original program's on the same inputs and
    // initial state: bit-identical after observers, the quantization error after convert.
    ParityReport parity;
    // vs PyTorch's eager outputs stored in the file (lesson assets), when present.
    std::optional<ParityReport> reference;
    // A quantized run against the file as loaded (float), layer by layer
    // (exec/layer_parity.h); none for other runs, or when the file as loaded is itself
    // quantized. Shared, as the profile (a converted 10k-node graph has thousands of rows).
    std::shared_ptr<const LayerTable> layers;
    // The layers' float run was the last quantized Run's, on the same inputs and kernels
    // (Workspace::layer_baseline_), not run again.
    bool layers_float_reused = false;
    // Besides the forwards: the float run for the layers (0 when reused, else run before
    // the forwards) and comparing them (inside the last forward, each layer as it is made:
    // `ms` leaves that time out).
    double float_run_ms = 0, layers_ms = 0;
    // Why there is no `reference` although the file has one ("" otherwise): it is
    // for one forward from the saved state, and this state has moved on.
    std::string reference_skipped;
    // The run kept its nodes' values (RunResult::values): false for a model whose
    // values add up to more than Limits::keep_values_bytes, whose Run runs fused.
    bool values_kept = true;
    uint64_t values_bytes = 0; // what its graph's values take (values_bytes), when measured
    // Where the last forward's time went, node by node and op by op (shared: reports
    // are copied to the state, the outcome and the last run).
    std::shared_ptr<const RunProfile> profile;
};

// What all the call_function values of `g` take, from their shapes (meta "val"):
// what a Run that keeps them would hold (Limits::keep_values_bytes).
uint64_t values_bytes(const Graph& g);

// The result of an applied action.
struct ActionOutcome {
    std::string summary;     // what happened, in a few lines (pass reports, "nothing changed")
    std::string torch_error; // what torch would raise (erase of a used node, lint); "" when none
    std::string torch_exception;        // its exception type: "RuntimeError", "NotImplementedError"
    bool changed = false;               // the graph or the state changed (a history entry was made)
    GraphView view = GraphView::Module; // the graph the action acted on
    GraphDiff diff;                     // of that graph, before -> after
    std::optional<RunReport> run;       // Run
    ActionResult edit;                  // Edit: created nodes, rewired users, new code
};

// A view's code with, per line, the id of the node that produced it (0 = none).
struct CodeView {
    std::string text;
    std::vector<uint32_t> line_nodes; // one per '\n'-separated line of text
    bool stale = false; // Module: the graph changed since the last recompile (text is gm.code)
};

struct HistoryEntry {
    std::string label;
    Action::Kind kind = Action::Kind::Run;
    GraphView view = GraphView::Module;
};

// How far the action in flight has got (Workspace::begin .. finish).
struct ActionProgress {
    std::string what;             // "run 1 of 3", "calibrate: batch 4 of 9", "baseline run"
    uint64_t done = 0, total = 0; // work units of the whole action (nodes run), done <= total
    double seconds = 0;           // since begin()
};

// How a file is opened.
struct OpenOptions {
    Limits limits;         // memory and work budgets (the page's defaults; the CLI's --limit)
    bool guards_fn = true; // ep.module() gets torch's _guards_fn call (the CLI's --no-guards)
    // Refuse pt2lab's symbolic_trace graph JSON (the CLI's run, decompose, prepare and
    // convert work on ExportedPrograms): the program loader says what the file is.
    bool programs_only = false;
    // Ranges of a .pt2 still being read in (zip_late_ranges): the page opens a big
    // file's graph before its weights are in. The workspace is not file_whole() until
    // check_arrived() has checked them; the bytes must not move meanwhile.
    std::vector<ByteRange> late;
};

class Workspace;

// How far an open has got (Opening::progress).
struct OpenProgress {
    std::string what; // "reading models/model.json: 3.1 of 6.9 MB", "building ep.module()"
    uint64_t done = 0, total = 0; // of the whole open, in thousandths (done <= total)
    double seconds = 0;           // since the open began
};

// A file being opened in pieces, for a caller that must keep doing other
// things (the page draws frames while it opens): Workspace::open is one of
// these stepped to the end. step() works until `seconds` have passed (<= 0:
// to the end) and says whether the open is over (done or failed); dropping it
// before then drops everything read so far.
class Opening {
public:
    Opening(std::vector<uint8_t> bytes, std::string file, OpenOptions opt = {});
    // Over a buffer the caller shares (OpenOptions::late: one still being filled in).
    Opening(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string file,
            OpenOptions opt = {});
    ~Opening();
    Opening(const Opening&) = delete;
    Opening& operator=(const Opening&) = delete;
    bool step(double seconds = 0);
    OpenProgress progress() const;
    const std::string& file() const;
    uint64_t file_size() const;
    Result<std::unique_ptr<Workspace>> finish(); // once step() said the open is over

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

class Workspace {
public:
    // Opens a file's bytes: a .pt2 archive, an ExportedProgram .json, or
    // pt2lab's symbolic_trace graph JSON (a module only: no program view, no
    // decompositions). On error nothing is created; the caller keeps what it had.
    // This is the one way any surface (page, CLI, lesson runner, tests, fuzzers)
    // opens a file: one sniff, one loader, one budget rule.
    static Result<std::unique_ptr<Workspace>>
    open(std::vector<uint8_t> bytes, const std::string& file, const OpenOptions& opt = {});
    // A file on disk (the CLI, tests), named by its base name as a dropped file is.
    static Result<std::unique_ptr<Workspace>> open_file(const std::string& path,
                                                        const OpenOptions& opt = {});
    // Over a program or a module already in memory (tests, the lesson engine).
    static Result<std::unique_ptr<Workspace>> from_program(ExportedProgram ep,
                                                           const OpenOptions& opt = {});
    static std::unique_ptr<Workspace> from_module(GraphModule gm, const std::string& file,
                                                  uint64_t file_size = 0,
                                                  const OpenOptions& opt = {});
    ~Workspace();
    // Frees what this workspace holds a piece at a time until `deadline` (its
    // history's states, then the current one and the file as loaded, each big
    // graph node by node): true once all is gone. For a page retiring the
    // workspace of the file it replaced over frames (40k nodes freed at once took
    // 190 ms); the workspace is unusable after the first call, except to be shed
    // further or destroyed.
    bool shed(std::chrono::steady_clock::time_point deadline);
    // The states an action let go of (the redo branch a new change cuts, the undo step
    // past the history's limit) are not freed by the commit (a 10k-node program's
    // redo branch took 65-150 ms natively) but kept here for the caller to free a piece
    // at a time until `deadline`: true once none is left. Dropped with the workspace
    // otherwise.
    bool shed_dropped(std::chrono::steady_clock::time_point deadline);
    bool has_dropped() const { return !dropped_.empty() || !retired_.empty(); }
    // Whether the commit keeps what it let go of for shed_dropped (the page) or frees
    // it at once (the default: the CLI, the lesson runner, the tests).
    void set_shed_dropped_later(bool later) { shed_later_ = later; }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    // --- reading -------------------------------------------------------------
    // Changes on every applied change, undo and redo; never goes back.
    uint64_t version() const { return version_; }
    const std::string& file() const { return file_; }
    // Bytes of the file it was opened from: sizes every budget (util/limits.h).
    uint64_t file_size() const { return file_size_; }
    const Limits& limits() const { return options_.limits; }
    // False for a symbolic_trace graph: only the Module view exists.
    bool has_program() const;
    const ExportedProgram& program() const;  // current (decomposed, if it was); has_program()
    const ExportedProgram& original() const; // as loaded; has_program()
    const GraphModule& module() const;       // current ep.module(), edits included
    const Graph& graph(GraphView v) const;   // Program needs has_program()
    IrLevel level() const;                   // of program(): the lowest level its ops are at
    // The node with this id in the view's graph, or null if it is gone.
    const Node* node(GraphView v, uint32_t id) const;
    const Node* find(GraphView v, const std::string& name) const;
    // Code of a view (cached per version): Program = ep.graph_module.code,
    // Module = gm.code as of its last recompile (CodeView::stale says if the graph moved on).
    const CodeView& code(GraphView v) const;
    // code(v) in pieces, for a page that writes a big graph's code over frames:
    // whether it is at hand, and writing it until `deadline` (true once it is;
    // how far in nodes walked of all). A new version starts over.
    bool code_ready(GraphView v) const;
    bool write_code(GraphView v, std::chrono::steady_clock::time_point deadline,
                    size_t* done = nullptr, size_t* total = nullptr) const;
    // print_readable of the view (cached per version).
    const std::string& readable(GraphView v) const;
    // str(ep) of program() (cached per version); has_program().
    const std::string& program_str() const;
    // The live executor state (parameters, buffers, observers) that runs update.
    const ModuleState& state() const;
    // Whether any observer has seen data (cached per version; thousands at 10k nodes).
    bool observers_calibrated() const;
    // The last run's report (RunReport::version says which version it ran at).
    const std::optional<RunReport>& last_run() const;
    // What the last apply / undo / redo did (diff, summary); empty right after opening.
    const std::optional<ActionOutcome>& last_outcome() const { return last_outcome_; }
    // Ops of the view's graph the executor has no kernel for, each with its node ids.
    struct UnsupportedOp {
        std::string target;
        std::vector<uint32_t> nodes;
    };
    const std::vector<UnsupportedOp>& unsupported_ops(GraphView v) const; // cached per version
    // Lint of the view's graph now: torch's message, or "" when it passes.
    std::string lint_message(GraphView v) const;
    // Whether running the module now may change its state (observers record,
    // ops write buffers: graph/written_attrs.h), so a page does not run it on its own.
    bool run_changes_state() const;

    // --- a file still arriving ---------------------------------------------------
    // False while weights the open viewed before they were read in (OpenOptions::late)
    // are unchecked: until then begin(), apply() and save_pt2() are refused and no
    // weight value may be read; the graphs, the code and every shape may.
    bool file_whole() const { return arriving_k_ >= arriving_.size(); }
    // The late bytes are in: checks those records' CRCs until `deadline` (at least a
    // piece), true once all are checked (file_whole()), or an Error naming the file and
    // the damaged record; `done` / `total` in bytes.
    Result<bool> check_arrived(std::chrono::steady_clock::time_point deadline,
                               uint64_t* done = nullptr, uint64_t* total = nullptr);

    // --- saving --------------------------------------------------------------
    // The program to save: program() while ep.module() is its unlift (no module
    // change since), else the program torch.export.export would record for the
    // module (passes/lift.h: a converted module lifts; a prepared one, with its
    // observers, is refused as torch refuses to export it). has_program().
    Result<ExportedProgram> program_to_save() const;
    // program_to_save() as a .pt2 archive torch.export.load (torch >= 2.8) reads
    // (io/pt2_writer.h), with the weights as they are now: a train-mode run moves
    // BatchNorm's running statistics, and so does torch's, whose ep.module() shares
    // its tensors with ep.state_dict. `root` names the archive's root folder
    // (archive_root_for(file name)). The committed state, also while an action runs.
    Result<std::vector<uint8_t>> save_pt2(const std::string& root = "model") const;

    // --- changing ------------------------------------------------------------
    // Applies an action completely, or returns an Error and changes nothing.
    // Actions that change nothing (lint, a refused erase) make no history entry.
    // Same as begin(a), advance() to the end, finish().
    Result<ActionOutcome> apply(const Action& a);

    // An action in slices, for a caller that must keep doing other things (the
    // page draws frames between slices). begin() takes the action; advance()
    // works on a copy of the state until `seconds` have passed (<= 0: to the
    // end; runs pause between nodes, so a slice overruns by at most one node)
    // and returns true once the work is done or has failed; finish() commits it
    // as apply() would and returns its outcome or error. Until then every
    // reading function shows the state as it was before begin(); cancel()
    // drops the copy, so the workspace is exactly as before. While busy(),
    // begin, apply, undo and redo are refused.
    Status begin(const Action& a);
    bool busy() const { return pending_ != nullptr; }
    bool advance(double seconds = 0);
    ActionProgress progress() const; // of the action in flight
    const Action* pending_action() const;
    void cancel();
    Result<ActionOutcome> finish();

    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }
    Status undo();
    Status redo();
    std::vector<HistoryEntry> undo_history() const; // oldest first
    // Copy as Python: the changes that led to the current state (undone ones left
    // out), as a script of torch calls on the file (workspace/python_script.h).
    std::string python_script() const;
    std::vector<HistoryEntry> redo_history() const; // the next redo first
    // How many undo steps are kept (older ones are dropped).
    static constexpr size_t kMaxHistory = 200;

    struct State; // the undoable part (workspace.cpp)
    // Frees a state a piece at a time (shed, shed_dropped): true once it is gone.
    static bool shed_state(std::shared_ptr<State>& st,
                           std::chrono::steady_clock::time_point deadline);

private:
    friend class Opening;
    // Over a program and the ep.module() made of it (Unlifting, in pieces).
    static std::unique_ptr<Workspace> from_unlifted(ExportedProgram ep, GraphModule gm,
                                                    const OpenOptions& opt,
                                                    std::vector<ArrivingRecord> arriving = {});
    struct Step {
        HistoryEntry entry;
        std::shared_ptr<State> state;
    };
    struct Cache;
    struct Pending; // the action in flight (workspace_jobs.cpp)
    Workspace();
    Result<std::vector<Tensor>> inputs_for(const InputSource& src, std::string& label) const;
    // An action done in one piece; `before_module` is the module as it was (the diff's base).
    Result<ActionOutcome> run_action(State& s, const Action& a,
                                     const GraphModule& before_module) const;
    void plan(Pending& p) const; // the stages of an action that is not a run
    void plan_decompose(Pending& p) const;

    Result<ActionOutcome> commit(std::unique_ptr<State> next, const Action& a,
                                 Result<ActionOutcome> outcome);
    Status switch_state(std::vector<Step>& from, std::vector<Step>& to, const char* what);
    void bump();

    std::string file_;
    uint64_t file_size_ = 0;
    OpenOptions options_;
    std::unique_ptr<Pending> pending_;
    // The file as loaded: the first state's program and module, shared with it (a
    // committed state is never changed in place; actions work on a copy), so they
    // outlive that state when the history drops it and cost no copy of the graph.
    std::shared_ptr<const ExportedProgram> original_;    // null for a module-only workspace
    std::shared_ptr<const GraphModule> original_module_; // ep.module() of original_, or the module
    std::shared_ptr<State> state_;
    std::vector<Step> undo_, redo_;
    std::vector<std::shared_ptr<State>> dropped_; // for shed_dropped
    // Finished actions' working state (a quantized Run of a converted 10k-node graph:
    // its float run's values, layer pairs, the state before): freed by shed_dropped, a
    // piece of its own, not in the piece that finishes the action.
    std::vector<std::unique_ptr<Pending>> retired_;
    bool shed_later_ = false;
    std::optional<ActionOutcome> last_outcome_;
    mutable std::unique_ptr<Cache> cache_;
    // The original module's outputs per input source (parity's reference), computed once.
    std::map<std::string, RunResult> baselines_;
    // The float run a quantized Run's layers were last compared with: its outputs and the
    // values of the float nodes in `refs` (the layers' references), for the inputs and
    // kernels of `key`. The next Run with that key and no other reference reuses it
    // instead of a float forward per Run. One at a time; dropped with baselines_.
    struct LayerBaseline {
        std::string key;
        std::shared_ptr<const std::set<std::string>> refs;
        RunResult result;
    };
    std::optional<LayerBaseline> layer_baseline_;
    uint64_t version_ = 1;
    // Records viewed before their bytes arrived, and how far check_arrived() got.
    std::vector<ArrivingRecord> arriving_;
    size_t arriving_k_ = 0;
    uint64_t arriving_at_ = 0; // bytes of record arriving_k_ checked
    uint32_t arriving_crc_ = 0;
};

} // namespace pt2lab
