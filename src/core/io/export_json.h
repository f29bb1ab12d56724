// Reader for torch.export's serialized ExportedProgram JSON (schema.yaml,
// major 8 fully; older majors best-effort with a warning).
#pragma once

#include <string>

#include "program/exported_program.h"

namespace pt2lab {

// Fills ep.graph, ep.signature and the program metadata from `text`.
// `file` names the source in errors (e.g. "model.pt2:models/model.json").
Status read_exported_program_json(const std::string& text, const std::string& file,
                                  ExportedProgram& ep);

// The schema major versions this reader knows.
constexpr int kSchemaMajorSupported = 8;

} // namespace pt2lab
