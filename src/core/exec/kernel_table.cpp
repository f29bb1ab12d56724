// Which kernel runs which op: the kernel column of the op table (graph/op_rows.inc).
#include "exec/kernels.h"

namespace pt2lab {

// Declares every kernel the table names.
#define K(fn) Result<Value> fn(const CallArgs&, const KernelOptions&);
#define NO_KERNEL
#define PT2LAB_OP(id, schema, kernel, decomposition, flags) kernel
#include "graph/op_rows.inc"
#undef PT2LAB_OP
#undef K
#undef NO_KERNEL

namespace {

#define K(fn) fn
#define NO_KERNEL nullptr
const KernelFn kKernels[] = {
#define PT2LAB_OP(id, schema, kernel, decomposition, flags) kernel,
#include "graph/op_rows.inc"
#undef PT2LAB_OP
};
#undef K
#undef NO_KERNEL
static_assert(sizeof(kKernels) / sizeof(kKernels[0]) == kOpCount, "one kernel slot per op");

} // namespace

KernelFn find_kernel(const OpInfo& op) {
    return kKernels[static_cast<size_t>(op.id)];
}

KernelFn find_kernel(const Node& n) {
    return n.op_info() ? find_kernel(*n.op_info()) : nullptr;
}

} // namespace pt2lab
