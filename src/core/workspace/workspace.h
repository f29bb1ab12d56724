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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edit/session.h"
#include "exec/interpreter.h"
#include "exec/parity.h"
#include "passes/decompose.h"
#include "passes/graph_diff.h"
#include "passes/pt2e.h"
#include "program/exported_program.h"

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
        Auto,    // the file's own: example inputs (extra/pt2lab), else sample inputs, else Seeded
        Example, // extra/pt2lab/inputs (pt2lab's lesson assets)
        Sample,  // data/sample_inputs/model.pt of a real torch.export.save archive
        Seeded,  // pt2lab's documented generator, SeededRng(seed).normal(), shaped by the graph
    } kind = Kind::Auto;
    uint64_t seed = 0; // Seeded
};

// One change (or question) to the workspace, as data: the page's buttons, the
// lesson steps and the tests all speak this.
struct Action {
    enum class Kind {
        Edit,              // a torch.fx edit on the module (EditAction; not Undo/Redo)
        Decompose,         // run_decompositions to `level` (Program; module rebuilt)
        DecomposeNode,     // decompose one node (`node`, a Program node id) at `level`
        FoldConvBn,        // conv-BN folding on the module
        InsertObserver,    // MinMaxObserver after `node` (Module node id), users rewired
        Prepare,           // prepare_pt2e on the module
        Calibrate,         // run the module `repeat` times (inputs, then seeds 1..) so observers
                           // record
        Convert,           // convert_pt2e (`fold_quantize`)
        EliminateDeadCode, // graph.eliminate_dead_code() on the module
        Recompile,         // gm.recompile()
        Run,               // run the module on `inputs` (`repeat` times) on the live state
    } kind = Kind::Run;
    EditAction edit;                 // Edit
    IrLevel level = IrLevel::CoreAten; // Decompose, DecomposeNode
    std::vector<std::string> keep;   // Decompose: op overloads kept (no rule applied)
    uint32_t node = 0;               // DecomposeNode, InsertObserver
    bool fold_quantize = true;       // Convert
    InputSource inputs;              // Run, Calibrate
    int repeat = 1;                  // Run, Calibrate
    std::string label;               // shown in the history; "" = a default per kind
};
const char* action_kind_name(Action::Kind k); // "decompose", "prepare", ...

// What one run produced and how it compares with the file as loaded.
struct RunReport {
    uint64_t version = 0;     // the workspace version it ran at
    std::string inputs_label; // "example inputs (extra/pt2lab)", "SeededRng(0).normal()", ...
    RunResult result;         // the last repetition's outputs and per-node values
    // This module's outputs vs the original program's on the same inputs and
    // initial state: bit-identical after observers, the quantization error after convert.
    ParityReport parity;
    // vs PyTorch's eager outputs stored in the file (lesson assets), when present.
    std::optional<ParityReport> reference;
};

// The result of an applied action.
struct ActionOutcome {
    std::string summary;     // what happened, in a few lines (pass reports, "nothing changed")
    std::string torch_error; // what torch would raise (erase of a used node, lint); "" when none
    bool changed = false;    // the graph or the state changed (a history entry was made)
    GraphView view = GraphView::Module; // the graph the action acted on
    GraphDiff diff;                     // of that graph, before -> after
    std::optional<RunReport> run;       // Run, Calibrate
};

// A view's code with, per line, the id of the node that produced it (0 = none).
struct CodeView {
    std::string text;
    std::vector<uint32_t> line_nodes; // one per '\n'-separated line of text
    bool stale = false; // Module: the graph changed since the last recompile (text is gm.code)
};

struct HistoryEntry {
    std::string label;
    Action::Kind kind;
};

class Workspace {
public:
    // Opens a file's bytes (a .pt2 archive or an ExportedProgram .json). On
    // error nothing is created; the caller keeps whatever it had.
    static Result<std::unique_ptr<Workspace>> open(std::vector<uint8_t> bytes,
                                                   const std::string& file);
    static Result<std::unique_ptr<Workspace>> open_file(const std::string& path);
    // A workspace over a program already in memory (tests, the lesson engine).
    static Result<std::unique_ptr<Workspace>> from_program(ExportedProgram ep);
    ~Workspace();

    // --- reading -------------------------------------------------------------
    uint64_t version() const { return version_; }
    const std::string& file() const;
    const ExportedProgram& program() const; // current (decomposed, if it was)
    const GraphModule& module() const;      // current ep.module(), edits included
    const ExportedProgram& original() const; // as loaded
    const Graph& graph(GraphView v) const;
    IrLevel level() const; // the IR level of program()
    // The node with this id in the view's graph, or null if it is gone.
    const Node* node(GraphView v, uint32_t id) const;
    const Node* find(GraphView v, const std::string& name) const;
    // Code of a view (cached per version): Program = ep.graph_module.code,
    // Module = gm.code as of its last recompile.
    const CodeView& code(GraphView v) const;
    // print_readable of the view (cached per version).
    const std::string& readable(GraphView v) const;
    // str(ep) of program() (cached per version).
    const std::string& program_str() const;
    // The live executor state (parameters, buffers, observers) runs update.
    const ModuleState& state() const;
    // Outcome of the last applied action (diff, summary), if any since open/undo/redo.
    const std::optional<ActionOutcome>& last_outcome() const { return last_outcome_; }
    // The last run's report (check .version against version() for staleness).
    const std::optional<RunReport>& last_run() const;
    // Ops of the view's graph the executor has no kernel for, with their node ids.
    struct UnsupportedOp {
        std::string target;
        std::vector<uint32_t> nodes;
    };
    std::vector<UnsupportedOp> unsupported_ops(GraphView v) const;
    // Lint of the view's graph now (torch's message, or "" when it passes).
    std::string lint_message(GraphView v) const;

    // --- changing ------------------------------------------------------------
    Result<ActionOutcome> apply(const Action& a);
    bool can_undo() const;
    bool can_redo() const;
    Status undo();
    Status redo();
    std::vector<HistoryEntry> undo_history() const; // oldest first
    std::vector<HistoryEntry> redo_history() const; // next redo last

private:
    struct State;
    struct Cache;
    Workspace();
    Result<ActionOutcome> apply_to(State& s, const Action& a) const;
    void commit(std::unique_ptr<State> next, const Action& a, ActionOutcome& outcome);
    void changed(); // version++, caches dropped

    std::string file_;
    std::unique_ptr<ExportedProgram> original_;
    std::unique_ptr<State> state_;
    std::vector<std::unique_ptr<State>> undo_, redo_;
    std::optional<ActionOutcome> last_outcome_;
    mutable std::unique_ptr<Cache> cache_;
    uint64_t version_ = 1;
};

} // namespace pt2lab
