// lift: the ExportedProgram of a module, the inverse of unlift (passes/unlift.h)
// and what torch.export.export(gm, example_inputs) records for an ep.module()
// after graph edits or convert_pt2e, up to the retrace's renaming:
//  1. the graph forward() runs (the last recompile's, as torch traces forward);
//  2. every get_attr of a tensor becomes a lifted placeholder, parameters first,
//     then buffers, then constants, all before the user inputs; a target the
//     program lifted before keeps its placeholder name and kind, a new one
//     takes the kind torch.ao registers it with (fold_bn's `<weight>_bias` a
//     parameter, convert's `_frozen_param<N>` and prepare's `_tensor_constant<N>`
//     buffers) and torch's name (p_ / b_ / c_ + the path with '.' as '_');
//  3. the _guards_fn call goes (export records no guard module); in-place ops
//     (add_, the copy_ of a buffer mutation) stay, so the dialect is TRAINING.
// A module that calls other modules (observers after prepare_pt2e or an
// edit), Python functions (torch.relu) or methods has no ExportedProgram:
// torch.export would trace them into other ops, or fail (HistogramObserver's
// forward branches on its data), so lift says so, naming the node.
#pragma once

#include "program/exported_program.h"

namespace pt2lab {

// `base` is the program the module was unlifted from: signature kinds and
// names, module call graph, example inputs and provenance come from it.
Result<ExportedProgram> lift(const GraphModule& gm, const ExportedProgram& base);

} // namespace pt2lab
