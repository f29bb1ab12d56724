// An einsum equation read the way ATen's einsum reads it (native/Linear.cpp): the
// labels of each operand and of the output, each label's place in the aligned
// order (output labels first, then the contracted ones in label order A-Z, a-z)
// and its size. Shared by the reference kernel (exec/kernels_einsum.cpp) and the
// Core ATen rule (passes/decompose_einsum.cpp). Ellipses ("...") are refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace pt2lab {

struct EinsumEquation {
    static constexpr int kLabels = 52; // A-Z are 0-25, a-z are 26-51

    std::vector<std::vector<int>> operands; // each operand's labels, one per dimension
    std::vector<int> output;                // the output's labels, in order
    // Per label: its position in the aligned order, or -1 when the equation does not use it.
    std::vector<int64_t> position = std::vector<int64_t>(kLabels, -1);
    int64_t aligned_dims = 0; // output labels + contracted labels
    // Per label: its size (1 when every operand has it as 1, which broadcasts).
    std::vector<int64_t> size = std::vector<int64_t>(kLabels, 1);

    int64_t out_dims() const { return static_cast<int64_t>(output.size()); }
    // Whether some operand repeats a label (einsum then takes a diagonal).
    bool repeats_a_label() const;
};

// The label's letter ('A' for 0, 'a' for 26).
char einsum_letter(int label);

// Reads `equation` for operands of the given sizes. The errors are ATen's
// ("einsum(): subscript b has size 4 for operand 1 which does not broadcast ...").
Result<EinsumEquation> parse_einsum(const std::string& equation,
                                    const std::vector<std::vector<int64_t>>& operand_sizes);

} // namespace pt2lab
