// EditSession: a learner's live GraphModule with undo/redo, edited through
// actions named after torch.fx's API (insert in inserting_after/before,
// replace_all_uses_with, replace_input_with, erase_node, eliminate_dead_code,
// lint, recompile, set_args). When torch would raise (erasing a used node,
// lint finding a self-loop) the action still "runs": its result carries
// torch's message and the graph is as torch leaves it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "program/graph_module.h"

namespace pt2lab {

struct NodeSpec {
    Op op = Op::CallFunction;
    std::string target;
    std::vector<Argument>
        args; // node references may be unresolved (by name, see Argument::node_name)
    Kwargs kwargs;
    std::string name;        // candidate name; "" = fx's default from the target
    std::string module_type; // call_module: the submodule to register if missing ("MinMaxObserver")
};

struct EditAction {
    enum class Kind {
        Insert,
        ReplaceAllUsesWith,
        ReplaceInputWith,
        EraseNode,
        EliminateDeadCode,
        Lint,
        Recompile,
        SetArgs,
        Undo,
        Redo,
    } kind = Kind::Lint;
    bool after = true;                 // Insert: inserting_after (else inserting_before)
    std::optional<std::string> anchor; // Insert: anchor node; nullopt = None
    std::vector<NodeSpec> nodes;       // Insert: created in one scope, in order
    std::string node;                  // the node acted on
    std::string with;                  // ReplaceAllUsesWith: replacement
    std::optional<std::vector<std::string>>
        skip_users;                   // ReplaceAllUsesWith: delete_user_cb skips these
    std::string old_input, new_input; // ReplaceInputWith
    std::vector<Argument> args;       // SetArgs
    std::string label;                // shown in the undo history
};

struct ActionResult {
    std::vector<std::string> created; // Insert
    std::vector<std::string> changed; // ReplaceAllUsesWith: users changed, in order
    std::optional<bool> dce_changed;  // EliminateDeadCode
    std::string error;                // what torch would raise ("" when fine)
    std::string code;                 // Recompile: the new gm.code
};

class EditSession {
public:
    explicit EditSession(GraphModule gm) : gm_(std::move(gm)) {}

    const GraphModule& module() const { return gm_; }
    GraphModule& module() { return gm_; }

    // Applies one action. Errors are for actions that make no sense (unknown
    // node names); torch-style refusals are results (ActionResult::error).
    // Every action that changes the graph can be undone.
    Result<ActionResult> apply(const EditAction& a);

    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }
    // Labels of the undoable steps, oldest first.
    std::vector<std::string> history() const;
    // Records the current module before an outside change (a pass), so it can be undone.
    void checkpoint(const std::string& label);

private:
    struct Snapshot {
        std::string label;
        GraphModule gm;
    };
    Status undo();
    Status redo();
    GraphModule gm_;
    std::vector<Snapshot> undo_, redo_;
};

// Resolves unresolved node references (Argument::node_name) against g.
Status resolve_node_names(Argument& a, const Graph& g);

} // namespace pt2lab
