// Copy as Python: what was done to a Workspace's file, written as a script
// against torch's own API. Each action that made a history entry adds its
// lines when it is committed (Workspace::State::script), so undo and redo take
// them away and bring them back with the state; the script is the header (the
// imports the steps need and the torch.export.load of the file) and the steps
// of the state that is current.
#pragma once

#include <string>
#include <vector>

#include "workspace/workspace.h"

namespace pt2lab {

// One committed action as Python.
struct PythonStep {
    Action::Kind kind = Action::Kind::Run;
    std::string code; // "# 2. Insert the observer\n...": a comment line, then the statements
};

// The statements for action `a` (number `index` in the script) that changed
// the workspace from `before` to the state it committed, as `out` describes.
// `file_has_samples`: the file carries example inputs (a run on "Auto" used them).
// `label` is its history entry's.
PythonStep python_step(const Action& a, const ActionOutcome& out, const Workspace::State& before,
                       bool file_has_samples, int index, const std::string& label);

// The whole script for `steps` over the file `file` (its base name). `program`:
// the file is an ExportedProgram torch.export.load reads (else a symbolic_trace
// graph, which the script says torch cannot load).
std::string python_script(const std::string& file, bool program,
                          const std::vector<PythonStep>& steps);

} // namespace pt2lab
