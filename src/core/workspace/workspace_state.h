// The undoable state of a Workspace and the helpers that keep its executor
// state in step with its module. Internal to src/core/workspace.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "workspace/workspace.h"

namespace pt2lab {

struct Workspace::State {
    std::optional<ExportedProgram> ep; // absent for a symbolic_trace module
    GraphModule gm;                    // ep.module(), with the module actions applied
    ModuleState exec;                  // live parameters, buffers and observers
    // The attribute data each exec tensor was made from: a tensor is rebuilt only
    // when its attribute changes (folding), so buffers keep what runs wrote.
    std::map<std::string, const TensorData*> exec_source;
    int module_actions = 0; // module changes since gm was last built from ep
    std::optional<RunReport> last_run;

    // A copy for an action to work on. Graphs are deep-copied, observers too;
    // tensors are shared until a run is about to write them (make_writable).
    std::unique_ptr<State> copy() const;
};

// Brings s.exec in line with s.gm: tensors for new or changed attributes,
// none for removed ones, a fresh observer per new observer submodule.
void sync_exec_state(Workspace::State& s);

// get_attr targets that ops of g write in place (copy_, add_ on a buffer).
std::set<std::string> mutated_attrs(const Graph& g);

// Gives s.exec private copies of the tensors a run of s.gm writes, so states
// kept in the history keep their values.
void make_writable(Workspace::State& s);

// The IR level a program's ops are at: Training while any op has an
// inference-level decomposition, Inference while any has a Core ATen one.
IrLevel ir_level_of(const Graph& g);

} // namespace pt2lab
