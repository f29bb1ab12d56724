// Edit actions on a GraphModule, named after torch.fx's API (insert in
// inserting_after/before, replace_all_uses_with, replace_input_with,
// erase_node, eliminate_dead_code, lint, recompile, set_args), as data. When
// torch would raise (erasing a used node, lint finding a self-loop) the action
// still "runs": its result carries torch's message and the graph is as torch
// leaves it. Undo and redo belong to the Workspace (workspace/workspace.h).
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
    bool modified = false;            // the graph (or, for Recompile, gm.code) changed
};

// Applies one edit to gm in place (no history: the Workspace keeps that, by
// running actions on a copy). Errors are for actions that make no sense
// (unknown node names; Undo/Redo, which only a Workspace can do); a failed
// action may leave gm half-changed, so callers apply it to a copy.
// torch-style refusals are results (ActionResult::error) with gm unchanged.
Result<ActionResult> apply_edit(GraphModule& gm, const EditAction& a);

// True when the action can change the graph (Lint and Recompile cannot).
bool edit_changes_graph(EditAction::Kind k);
// The history label of an action without one: "insert", "erase_node", ...
const char* edit_label(EditAction::Kind k);

// Resolves unresolved node references (Argument::node_name) against g.
Status resolve_node_names(Argument& a, const Graph& g);

} // namespace pt2lab
