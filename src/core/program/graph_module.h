// GraphModule: a Graph with its owning module, as torch.fx.GraphModule:
// attributes that get_attr reads, submodules that call_module calls
// (observers, _guards_fn), and the generated code, which changes only when
// recompile() runs (as in torch: edit the graph, then recompile).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/printer.h"
#include "program/observer_spec.h"
#include "program/tensor_data.h"
#include "util/clone_ptr.h"

namespace pt2lab {

struct Submodule {
    std::string type;    // "MinMaxObserver", "HistogramObserver", "GuardsFn"
    bool impure = false; // kept by dead-code elimination (GuardsFn._is_impure)
    std::optional<ObserverConfig> observer;
    // Another observer submodule whose instance this one is (torch: one module object
    // under two attribute names, as prepare_pt2e makes for shared quantization specs).
    std::string shares;
};

// Everything a GraphModule holds besides its graph (and its last recompile),
// apart so that a copy can take a graph copied in pieces (GraphModule::clone_with).
struct GraphModuleFields {
    CodegenOptions codegen; // _PyTreeCodeGen with forward's names for ep.module()
    TensorMap attrs;        // get_attr targets -> tensors
    std::map<std::string, Submodule> submodules; // call_module targets
    std::string guards_fn_code;                  // the _guards_fn forward text (torch >= 2.9)
    // A symbolic_trace module's own description: its class ("StyleModules") and
    // the torch that traced it (empty for ep.module()).
    std::string class_name, traced_by;
};

struct GraphModule : GraphModuleFields {
    ClonePtr<Graph> graph;

    GraphModule() = default;
    GraphModule(GraphModule&&) = default;
    GraphModule& operator=(GraphModule&&) = default;
    // A copy with its own graph (attributes shared: they are immutable).
    GraphModule clone() const { return GraphModule(*this); }
    // clone() with the copy of the graph made already (GraphCloning, in pieces).
    GraphModule clone_with(std::unique_ptr<Graph> copy_of_graph) const {
        GraphModule m;
        static_cast<GraphModuleFields&>(m) = *this;
        m.graph = std::move(copy_of_graph);
        m.compiled_ = compiled_;
        return m;
    }

    // gm.code: the code as of the last recompile() (written from that graph the
    // first time it is asked for: opening a big file does not wait for it).
    const std::string& code() const;
    // For each line of code(), the id of the node that produced it (0: none), as of
    // the last recompile() (torch's _lineno_map); the node may be gone since.
    const std::vector<uint32_t>& code_line_nodes() const;
    // code() in pieces (a page writes a big graph's code over frames): whether it is
    // written, a writer of it (from the last recompile's graph; needs a recompile
    // done), and its result taken in.
    bool code_written() const { return !compiled_ || compiled_->written; }
    CodeWriting code_writing() const;
    void adopt_code(CodeLines lines) const;
    // Regenerates code() from the graph (GraphModule.recompile()).
    void recompile();
    // recompile() with a copy of the graph made already (GraphCloning, in pieces).
    void recompile_with(std::unique_ptr<Graph> copy_of_graph);
    // Frees the graph's nodes and, when nothing else holds it, the last recompile's,
    // until `deadline`; true once they are gone (Graph::shed). The module is
    // unusable after: for an owner about to drop it.
    bool shed(std::chrono::steady_clock::time_point deadline);
    // The graph forward() runs: the graph as of the last recompile(). In torch a
    // GraphModule runs its generated code, which graph edits leave alone until
    // recompile(); a module never compiled runs its graph.
    const Graph& forward_graph() const { return compiled_ ? *compiled_->graph : *graph; }
    // True when the graph changed since the last recompile (forward is stale): its
    // code differs from the compiled code. Linear and without writing code when
    // the two graphs are the same node for node (what every recompile leaves).
    bool stale() const;
    // stale() where it needs no code written: nullopt when the two graphs differ
    // node for node, where only their code can say (StaleGlancing in pieces).
    std::optional<bool> stale_at_a_glance() const;

    // graph.lint() with the owning module: also checks that get_attr and
    // call_module targets exist, with torch's messages.
    Status lint() const;
    // graph.eliminate_dead_code() with this module's impure submodules.
    // `lint_first` false: the caller ran lint() just before (a pass in pieces).
    Result<bool> eliminate_dead_code(bool lint_first = true);
    // What makes a call_module node impure here (its submodule says so), for
    // DeadCodeEliminating.
    std::function<bool(const Node&)> impure_modules() const;
    // First unused "activation_post_process_N" (torch.ao's get_new_attr_name_with_prefix).
    // A caller that only adds names passes `next` (starts at 0, advanced past each name
    // returned) so that naming n submodules stays linear.
    std::string new_submodule_name(const std::string& prefix, int* next = nullptr) const;

private:
    GraphModule(const GraphModule&) = default; // through clone(): copies are explicit
    // The last recompile: the graph as it was and its code, written when first
    // read. Never edited after, so copies share it (and the code written once).
    struct Compiled {
        std::shared_ptr<const Graph> graph;
        CodegenOptions codegen;
        mutable bool written = false;
        mutable std::string src;
        mutable std::vector<uint32_t> line_nodes;
        void write() const;
        void adopt(CodeLines lines) const;
    };
    std::shared_ptr<const Compiled> compiled_;
    friend class StaleGlancing;
};

// GraphModule::stale_at_a_glance() a piece at a time: comparing a 24k-node graph
// with its last recompile takes 15-17 ms natively, too long for one of the page's
// tasks. The module must not change while it steps.
class StaleGlancing {
public:
    using Clock = std::chrono::steady_clock;
    explicit StaleGlancing(const GraphModule& gm);
    // Compares nodes until `deadline` (at least a few hundred); true once it knows.
    bool step(Clock::time_point deadline);
    // Once step() said so: stale_at_a_glance()'s answer.
    std::optional<bool> result() const { return result_; }

private:
    std::vector<Node*> was_, now_;
    size_t at_ = 0;
    bool known_ = false;
    std::optional<bool> result_;
};

// GraphModule::lint in pieces: the graph (GraphLinting), then the get_attr and
// call_module targets, about `nodes` nodes a step; step() says whether it is over
// and status() is lint()'s answer. The module must not change meanwhile.
class ModuleLinting {
public:
    explicit ModuleLinting(const GraphModule& gm);
    bool step(size_t nodes);
    const Status& status() const { return status_; }
    size_t done() const; // nodes checked in the part now checked (of graph->size())

private:
    const GraphModule& gm_;
    GraphLinting graph_;
    bool graph_over_ = false;
    std::vector<Node*> nodes_; // the targets' part
    size_t at_ = 0;
    Status status_;
};

} // namespace pt2lab
