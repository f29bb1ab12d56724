// The interpreter: runs a Graph node by node (torch.fx Interpreter style),
// keeping one value per node for the inspector. Kernels come from the op
// schema table; module state (parameters, buffers, observers) lives in a
// ModuleState that in-place ops and buffer mutations update, so running a
// train-mode graph twice counts num_batches_tracked up. Errors name the node:
// "while executing %batch_norm: ...". Every run has a Budget (util/limits.h)
// for the memory its values take and the work its kernels do, sized from the
// file the program came from; kernels refuse, naming the node, before
// allocating past it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/conv_fusion.h"
#include "exec/kernels.h"
#include "exec/observer.h"
#include "program/exported_program.h"
#include "util/check.h"

namespace pt2lab {

struct ModuleState {
    std::map<std::string, std::shared_ptr<Tensor>> tensors; // FQN -> parameter / buffer / constant
    // call_module target -> observer; submodules that share an instance share the pointer
    std::map<std::string, std::shared_ptr<Observer>> observers;
    uint64_t file_size = 0; // size of the file the state came from: sizes the run budget

    // The program's parameters, buffers and constants, sharing the program's
    // bytes (no copy): a tensor's first write (an in-place op, a buffer
    // mutation) copies it (tensor.h's TensorStorage), so the program never changes.
    static ModuleState from_program(const ExportedProgram& ep);
    // A module's attributes, shared in the same way, with a fresh observer per
    // observer submodule.
    static ModuleState from_module(const GraphModule& gm);
    // Adds a fresh observer for every observer submodule the state lacks (after edits).
    void add_missing_observers(const GraphModule& gm);
    // Own Tensor objects (observers included, sharing kept); their bytes are
    // copied, except bytes still shared with a program, which stay shared.
    ModuleState clone() const;
    // A deep copy of observers that keeps which names share an instance.
    static std::map<std::string, std::shared_ptr<Observer>>
    copy_observers(const std::map<std::string, std::shared_ptr<Observer>>& from);
    // A copy that shares the tensors (copy a tensor before writing it) and has
    // its own observers: what a history of states keeps cheaply.
    ModuleState share() const;
};

// How long one call_function (or call_module: an observer) node took (steady clock),
// for the Run's profile (exec/run_profile.h) and benchmarks' per-op breakdowns.
struct NodeTime {
    const Node* node = nullptr;
    double ms = 0.0;
    bool fused = false; // computed inside the conv before it (conv_fusion.h): its time is there
};

struct RunPlan;

struct RunOptions {
    KernelOptions kernels;    // kernels.budget is set by the run itself
    Limits limits;            // the run budget's limits (defaults: the page's)
    bool check_guards = true; // evaluate _guards_fn calls
    // Keep the nodes' values (for the inspector and per-node parity), in graph order
    // while they fit in keep_values_bytes (0: half the run's byte budget); the rest
    // are dropped once read, as without keep_values, and counted in values_not_kept.
    bool keep_values = true;
    uint64_t keep_values_bytes = 0;
    // With keep_values: keep only the values of these nodes (by name), e.g. the
    // float run a quantized one is compared with layer by layer (layer_parity.h);
    // null keeps every node's. Values left out by it are not counted as not kept.
    std::shared_ptr<const std::set<std::string>> keep_only;
    // With keep_values: a value that an in-place op later writes (hardtanh_ after a
    // conv) is kept as its node made it, a copy, instead of the alias every write
    // changes (torch's aliasing, what the inspector shows by default). The per-layer
    // comparison needs each node's own value.
    bool keep_before_writes = false;
    // Without keep_values and with the fast conv: fuse each conv with the eval
    // batch norm and activation after it (conv_fusion.h; the same bits, fewer passes).
    bool fuse_convs = true;
    // When set, called with each node's value as the run commits it, in graph order and
    // before any later node runs: before an in-place op after it writes it, and before a
    // run that keeps no values drops it. A quantized Run compares its layers with the
    // float run's this way, while each value is in cache (layer_parity.h, LayerStream).
    // A value that conv fusion hides (a fused conv's own) is none: a caller that needs
    // those turns fuse_convs off.
    std::function<void(const Node&, const Value&)> on_value;
    // When set, every call_function and call_module node appends its time here, in
    // execution order.
    std::vector<NodeTime>* node_times = nullptr;
    // What the run needs to know of its graph beforehand, made in pieces (RunPlanning)
    // and shared by the runs of one action; when null or for another graph, the run
    // makes its own at once.
    std::shared_ptr<const RunPlan> plan;
    // The state already has an observer for each observer submodule (the caller ran
    // ModuleState::add_missing_observers on the module): of_module skips it.
    bool observers_ready = false;
};

// A run's plan of a graph: its nodes in order, the values each step lets go (the
// last step that reads them) and, for a run that fuses, the conv groups
// (conv_fusion.h). The graph must not change while a plan of it is used.
struct RunPlan {
    const Graph* graph = nullptr;
    bool fused = false; // made with the conv groups
    std::vector<Node*> nodes;
    std::vector<std::vector<const Node*>> release; // per step
    std::map<const Node*, ConvFusion> fusions;     // by conv node
    // Whether a run with these options would use this plan as it is.
    bool fits(const Graph& g, bool fuse) const { return graph == &g && fused == fuse; }
};

// A RunPlan made in pieces: step(n) looks at about n more nodes and says whether
// the plan is whole; then take() gives it (a 17k-node graph's plan took 17 ms).
class RunPlanning {
public:
    RunPlanning(const Graph& g, bool fuse);
    bool step(size_t nodes);
    std::shared_ptr<const RunPlan> take();
    size_t done() const { return done_; }
    size_t total() const { return 3 * plan_->nodes.size(); }

private:
    std::shared_ptr<RunPlan> plan_;
    std::optional<NodePositions> positions_; // of plan_->nodes
    size_t phase_ = 0, next_ = 0, done_ = 0;
};
// Whether runs with these options fuse convs (and so need a plan made with fuse).
bool run_fuses(const RunOptions& opt);

// Node name -> value, shared by the copies of a result until one is written
// (copy on write): a run's report is kept by the state, the action's outcome and
// the workspace's last outcome, and 20k values copied thrice took 40 ms of a frame.
class ValueMap {
public:
    using Map = std::map<std::string, Value>;
    Map::const_iterator find(const std::string& name) const { return map().find(name); }
    Map::const_iterator begin() const { return map().begin(); }
    Map::const_iterator end() const { return map().end(); }
    size_t count(const std::string& name) const { return map().count(name); }
    const Value& at(const std::string& name) const { // a name the run kept (checked)
        auto it = map().find(name);
        PT2LAB_CHECK(it != map().end());
        return it->second;
    }
    size_t size() const { return p_ ? p_->size() : 0; }
    bool empty() const { return size() == 0; }
    Value& operator[](const std::string& name) {
        if (!p_)
            p_ = std::make_shared<Map>();
        else if (p_.use_count() > 1)
            p_ = std::make_shared<Map>(*p_);
        return (*p_)[name];
    }

private:
    const Map& map() const { return p_ ? *p_ : empty_; }
    std::shared_ptr<Map> p_;
    static inline const Map empty_{};
};

struct RunResult {
    std::vector<Value> outputs;            // the user outputs, flattened, in order
    std::vector<std::string> output_names; // the graph values they came from
    ValueMap values;                       // node name -> value (when keep_values)
    size_t values_not_kept = 0;            // values past keep_values_bytes
    uint64_t values_kept_bytes = 0;
};

// A run in progress, resumable between nodes and inside heavy ones, so that a
// caller can spread a long forward over slices of its own (the page runs a slice per frame and
// keeps drawing). run_graph / run_program / run_module below start one and
// advance it to the end. The graph (program, module) and the state must
// outlive it; a run dropped half-way has written to `state` only what the
// nodes it ran wrote (the Workspace runs on a copy, so it drops the copy too).
class Execution {
public:
    // Placeholders take `inputs` in order (or their default).
    static std::unique_ptr<Execution> of_graph(const Graph& g, std::vector<Value> inputs,
                                               ModuleState& state, const RunOptions& opt = {});
    // ep.graph: lifted placeholders read `state`, user inputs come from `inputs`;
    // finish() writes the BUFFER_MUTATION outputs back to `state`.
    static Result<std::unique_ptr<Execution>> of_program(const ExportedProgram& ep,
                                                         ModuleState& state,
                                                         const std::vector<Tensor>& inputs,
                                                         const RunOptions& opt = {});
    // ep.module() as torch calls it: its forward_graph() (the graph as of the
    // last recompile()); get_attr reads `state`; placeholders take `inputs`.
    static Result<std::unique_ptr<Execution>> of_module(const GraphModule& gm, ModuleState& state,
                                                        const std::vector<Tensor>& inputs,
                                                        const RunOptions& opt = {});
    ~Execution();
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;

    // Runs nodes until the graph is done or `deadline` has passed. The deadline
    // is looked at after each node and, inside a heavy node (a conv, a large
    // matrix product, a pool, a HistogramObserver's observe: kernel_job.h), after
    // each unit of its work, so a call can stop inside a node and the next call
    // resumes it; at least one unit runs per call. A paused and resumed run
    // computes the same bits as one advanced to the end. Returns the first
    // error, naming its node.
    Status advance(std::chrono::steady_clock::time_point deadline);
    Status advance(); // to the end
    bool done() const;
    size_t nodes_done() const;  // nodes run to their end so far
    size_t nodes_total() const; // nodes of the graph
    // How far the node paused inside has got, in [0, 1) (0 between nodes).
    double node_fraction() const;
    // The user outputs, once done().
    Result<RunResult> finish();

private:
    struct Impl;
    explicit Execution(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Runs any graph; placeholders take `inputs` in order (or their default).
Result<RunResult> run_graph(const Graph& g, const std::vector<Value>& inputs, ModuleState& state,
                            const RunOptions& opt = {});

// Runs ep.graph: lifted placeholders read `state`, user inputs come from `inputs`;
// BUFFER_MUTATION outputs are written back to `state`; returns the user outputs.
Result<RunResult> run_program(const ExportedProgram& ep, ModuleState& state,
                              const std::vector<Tensor>& inputs, const RunOptions& opt = {});

// Runs ep.module() as torch calls it: its forward_graph() (the graph as of the
// last recompile()); get_attr reads `state`; placeholders take `inputs`.
Result<RunResult> run_module(const GraphModule& gm, ModuleState& state,
                             const std::vector<Tensor>& inputs, const RunOptions& opt = {});

// The program's example inputs (data/sample_inputs/model.pt), as executor tensors.
std::vector<Tensor> example_inputs(const ExportedProgram& ep);
// One tensor per user input, shaped by the graph's metadata, filled from
// pt2lab's documented generator: one SeededRng(seed), inputs in order, normal().
// Refused (before allocating) when the shapes are past the run's limits, e.g.
// a symbolic size whose hint is 2^40.
Result<std::vector<Tensor>> seeded_inputs(const ExportedProgram& ep, uint64_t seed,
                                          const Limits& limits = Limits());
// The same for any graph (sig: null for a module's graph, whose placeholders are
// all inputs); `file_size` sizes the budget as for the file the graph came from.
Result<std::vector<Tensor>> seeded_inputs(const Graph& g, const GraphSignature* sig, uint64_t seed,
                                          const Limits& limits = Limits(), uint64_t file_size = 0);

// The shapes user inputs must have (from the placeholders' metadata), in order.
std::vector<std::pair<std::string, TensorMeta>> user_input_specs(const Graph& g,
                                                                 const GraphSignature* sig);

} // namespace pt2lab
