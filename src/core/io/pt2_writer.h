// Writes a PT2 archive that torch.export.load (torch >= 2.8) reads: the
// layout torch.export.save of torch 2.14 writes, one model named "model":
//   data/weights/weight_N + model_weights_config.json   parameters, persistent buffers
//   data/constants/tensor_N + model_constants_config.json  constants, non-persistent buffers
//   models/model.json               the program (io/export_json_writer.h)
//   data/sample_inputs/model.pt     its example inputs (io/torch_save_writer.h)
//   archive_format, archive_version, .data/version, byteorder, .data/serialization_id
// under one root folder, stored, 64-byte aligned (io/zip_writer.h). The reader
// is io/program_loader.h; docs/FORMATS.md section 1 says what is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "program/exported_program.h"

namespace pt2lab {

// The archive's bytes. `root` names its root folder (torch uses the file's name
// without .pt2); `current`, when given, holds tensors by FQN that replace the
// program's own values (the live state of a workspace whose runs moved buffers).
Result<std::vector<uint8_t>> write_pt2(const ExportedProgram& ep, const std::string& root,
                                       const TensorMap* current = nullptr);

// The root folder torch would use for a file: its base name without ".pt2" ("model" if empty).
std::string archive_root_for(const std::string& file_name);

} // namespace pt2lab
