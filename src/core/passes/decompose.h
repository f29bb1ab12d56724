// run_decompositions: lower an ExportedProgram from the training IR (what
// torch.export.export returns) to the inference IR (run_decompositions({}):
// functional, batch_norm -> _native_batch_norm_legit_*) or to Core ATen
// (run_decompositions(): also conv2d -> convolution, linear -> permute + addmm ...).
// Decompositions are data: one small rule per op overload, registered against
// the op schema table and run by one generic pass. A table can drop a rule to
// keep an op (as PyTorch allows); an op with no rule stays and is reported.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/op_table.h"
#include "program/exported_program.h"
#include "util/stages.h"

namespace pt2lab {

enum class IrLevel { Training, Inference, CoreAten };
const char* ir_level_name(IrLevel l); // "Training IR", "Inference IR", "Core ATen"

struct DecompContext;
struct DecompRule {
    OpId op;             // the op overload it replaces (a row of graph/op_rows.inc)
    IrLevel level;       // Inference rules also run at Core ATen
    const char* summary; // "conv2d -> convolution (all nine arguments)"
    // Builds the replacement before ctx.node, rewires its users and erases it;
    // an error leaves the graph unchanged.
    Status (*apply)(DecompContext& ctx);
    // Whether the rule applies to this node (e.g. linear with a 2-D input); null: always.
    bool (*applies)(const Node& n) = nullptr;
};

// All rules pt2lab knows: the decomposition column of the op table, in table order.
const std::vector<DecompRule>& decomposition_rules();

struct DecompTable {
    IrLevel level = IrLevel::CoreAten;
    std::vector<const DecompRule*> rules;

    static DecompTable for_level(IrLevel level); // {} -> Inference, default -> CoreAten
    // A copy without the rule for `target` (that op is kept, like
    // `del decomp_table[torch.ops.aten.conv2d.default]`).
    DecompTable without(const std::string& target) const;
    const DecompRule* find(const Node& n) const;
};

struct DecompStep {
    std::string node;                        // the node replaced ("batch_norm")
    std::string rule;                        // its rule's summary
    std::vector<std::string> created;        // the new nodes, in graph order
    std::vector<std::string> removed_unused; // outputs nobody uses, dropped (getitem_1 ...)
};

struct DecompReport {
    std::vector<DecompStep> steps;
    std::vector<std::string>
        kept_without_rule; // nodes whose op is outside the level and has no rule
    std::string str() const;
};

// Nodes that `table` would replace, in graph order.
std::vector<Node*> decomposable_nodes(const ExportedProgram& ep, const DecompTable& table);

// Decomposes one node (step mode, for the page); then drops the rule's unused
// outputs and lints. On error the program is as it was.
Result<DecompStep> decompose_node(ExportedProgram& ep, const DecompTable& table, Node* n);

// Decomposes every node the table has a rule for, in graph order, then
// eliminates dead code, as the retrace in run_decompositions does. Linear in
// the graph's size; on error the program is left half-decomposed, so callers
// work on a copy (the Workspace does).
Result<DecompReport> run_decompositions(ExportedProgram& ep, const DecompTable& table);

// run_decompositions in pieces (util/stages.h): step() works until `deadline` and
// says whether it is over; then take() gives the report. `ep` is changed as it
// goes (work on a copy), must outlive this and must not change meanwhile.
class Decomposing {
public:
    using Clock = Stages::Clock;
    Decomposing(ExportedProgram& ep, DecompTable table);
    ~Decomposing();
    Decomposing(const Decomposing&) = delete;
    Decomposing& operator=(const Decomposing&) = delete;
    Result<bool> step(Clock::time_point deadline);
    std::string what() const; // "run_decompositions: apply the rules: node 300 of 10000"
    DecompReport take();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Op counts: target -> number of call_function nodes, in first-seen order.
std::vector<std::pair<std::string, int>> op_counts(const Graph& g);

} // namespace pt2lab
