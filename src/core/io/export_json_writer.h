// Writes an ExportedProgram as torch.export.save's models/model.json: schema
// 8.20 JSON as torch/_export/serde/serialize.py's ExportedProgramSerializer
// writes it (the reader is io/export_json.h). Deterministic, exception-free;
// what torch could not load either (modules, Python functions, get_attr of
// tensors, ops outside pt2lab's schema table, symbolic shapes) is an Error
// naming the node.
#pragma once

#include <string>

#include "io/py_json.h"
#include "program/exported_program.h"

namespace pt2lab {

// The schema version written (the layout of torch 2.14's serializer).
constexpr int kWriteSchemaMajor = 8, kWriteSchemaMinor = 20;

Result<std::string> write_exported_program_json(const ExportedProgram& ep);

// A TensorMeta record {dtype, sizes, requires_grad, device, strides, storage_offset,
// layout} (contiguous strides when `meta` has none); also the weights configs' tensor_meta.
void write_tensor_meta(PyJson& j, const TensorMeta& meta);

} // namespace pt2lab
