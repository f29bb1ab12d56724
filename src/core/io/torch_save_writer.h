// Writes the torch.save file torch.export.save keeps its example inputs in
// (data/sample_inputs/model.pt): a zip with the root folder "archive" holding
// data.pkl, a protocol-2 pickle of ((t0, t1, ...), {}) built the way Python's
// pickler builds it (_rebuild_tensor_v2 over persistent storage ids, memo
// included), and one raw little-endian storage per tensor in data/<k>. The
// reader is io/pickle.h.
#pragma once

#include <cstdint>
#include <vector>

#include "program/tensor_data.h"
#include "util/status.h"

namespace pt2lab {

// torch.save(((inputs...), {})): the positional example inputs, no keyword ones.
Result<std::vector<uint8_t>> write_sample_inputs(const std::vector<const TensorData*>& inputs);

// The pickle alone (data.pkl), for tests: tensor k reads storage "k".
std::vector<uint8_t> sample_inputs_pickle(const std::vector<const TensorData*>& inputs);

// The 40 digits torch's zip writer stores in .data/serialization_id, made here from
// the records' names and CRCs (torch's are its own; any 40 digits load).
std::string serialization_id(const std::vector<std::string>& names,
                             const std::vector<uint32_t>& crcs);

} // namespace pt2lab
