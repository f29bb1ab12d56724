// Workspace and edit actions written as JSON (docs/FORMATS.md section 6): the
// fx edit scenarios, the lesson steps and the tests speak this.
#pragma once

#include <string>

#include "util/json_read.h"
#include "workspace/workspace.h"

namespace pt2lab {

// One torch.fx edit, e.g. {"kind": "insert", "where": "after", "anchor": "relu",
// "nodes": [...]}. Node references in arguments stay unresolved until applied.
Result<EditAction> edit_action_from_json(const JsonAt& a);
Result<EditAction> parse_edit_action(const std::string& json_text, const std::string& where);

// One Workspace action: any edit kind above (and "undo" / "redo"), or
//   {"kind": "decompose", "level": "inference" | "core", "keep": ["aten.conv2d.default"]}
//   {"kind": "decompose_node", "node": "batch_norm", "level": "inference" | "core"}
//   {"kind": "fold_conv_bn"}   {"kind": "prepare"}   {"kind": "insert_observer", "node": "relu"}
//   {"kind": "calibrate" | "run", "inputs": "auto" | "example" | "sample" | "seeded",
//    "seed": 0, "repeat": 1}
//   {"kind": "convert", "fold_quantize": true}
//   {"kind": "train" | "eval"}   (module.train() / module.eval())
// each with an optional "label".
Result<Action> action_from_json(const JsonAt& a);
Result<Action> parse_action(const std::string& json_text, const std::string& where);

} // namespace pt2lab
