// The op table as the graph layer sees it: one OpInfo per row of
// graph/op_rows.inc (schema, Core ATen membership, side effects, in-place
// writes), found by target and cached by every call_function node. Kernels
// and decompositions are the same rows, read by exec/ and passes/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "graph/op_schema.h"

namespace pt2lab {

enum class OpId : uint16_t {
#define PT2LAB_OP(id, schema, kernel, decomposition, flags) id,
#include "graph/op_rows.inc"
#undef PT2LAB_OP
    Count
};
constexpr size_t kOpCount = static_cast<size_t>(OpId::Count);
// A new op is a new row plus its reference case from real PyTorch
// (tools/exec_reference.py -> tests/golden/exec/cases.json): bump this then.
static_assert(kOpCount == 100, "op_rows.inc changed: add the op's reference case, then the count");

// Row flags (op_rows.inc's last column).
enum : uint32_t {
    kOpCoreAten = 1u << 0,   // in the Core ATen opset (run_decompositions() keeps it)
    kOpSideEffect = 1u << 1, // kept by dead-code elimination
};
constexpr uint32_t op_writes_arg(unsigned k) {
    return 1u << (8 + k);
}

struct OpInfo {
    OpId id;
    const char* schema_text;
    uint32_t flags;
    OpSchema schema; // parsed schema_text

    bool core_aten() const { return flags & kOpCoreAten; }
    bool side_effect() const { return flags & kOpSideEffect; }
    // Whether a call may write argument k in place: an (a!) in the schema, or a
    // write the schema does not declare (batch_norm's running statistics).
    bool writes(size_t k) const;
};

// Every row, in table order (index = OpId).
const std::vector<OpInfo>& op_table();
const OpInfo& op_info(OpId id);
// The row for a call_function target ("torch.ops.aten.conv2d.default",
// "operator.getitem"), or null when pt2lab does not know the op.
const OpInfo* find_op(std::string_view target);

} // namespace pt2lab
