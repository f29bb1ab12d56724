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

// The kernels that can pause inside a call: the ones whose single call takes
// milliseconds on a 224x224 model (convs, large matrix products, pools).
Result<std::unique_ptr<KernelJob>> job_conv2d(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_convolution(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_linear(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_addmm(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_mm(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_max_pool2d(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_avg_pool2d(const CallArgs&, const KernelOptions&);
Result<std::unique_ptr<KernelJob>> job_adaptive_avg_pool2d(const CallArgs&, const KernelOptions&);

JobFn find_job(const Node& n) {
    if (!n.op_info()) return nullptr;
    switch (n.op_info()->id) {
    case OpId::conv2d: return job_conv2d;
    case OpId::convolution: return job_convolution;
    case OpId::linear: return job_linear;
    case OpId::addmm: return job_addmm;
    case OpId::mm: return job_mm;
    case OpId::max_pool2d: return job_max_pool2d;
    case OpId::avg_pool2d: return job_avg_pool2d;
    case OpId::adaptive_avg_pool2d:
    case OpId::adaptive_avg_pool2d_: return job_adaptive_avg_pool2d;
    default: return nullptr;
    }
}

} // namespace pt2lab
