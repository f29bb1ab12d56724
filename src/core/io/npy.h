// NumPy .npy files (format 1.0/2.0/3.0, little-endian, C order): read and write.
#pragma once

#include <string>
#include <vector>

#include "program/exported_program.h"

namespace pt2lab {

Result<TensorData> read_npy(const std::vector<uint8_t>& bytes, const std::string& file);
std::vector<uint8_t> write_npy(const TensorData& t);

} // namespace pt2lab
