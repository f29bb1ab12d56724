// Kernel interface: one function per op overload of the schema table, taking
// its arguments in schema order. Kernels are readable reference loops with
// shape comments; conv2d also has a fast path (conv_fast.cpp) that the tests
// compare against the reference. Errors are plain messages; the interpreter
// adds "while executing %node".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/conv_epilogue.h"
#include "exec/kernel_job.h"
#include "exec/tensor.h"
#include "graph/node.h"
#include "graph/op_table.h"
#include "util/limits.h"

namespace pt2lab {

struct KernelOptions {
    bool fast_conv = false; // im2col + tiled GEMM instead of the reference loop
    // The run's budget (interpreter.h): every result and scratch buffer is
    // charged to it before it is allocated, and loops charge their work.
    // Null (kernels called directly): only the one-tensor limit applies.
    Budget* budget = nullptr;
    // The work (multiply-adds, element visits) of one unit of a kernel job
    // (kernel_job.h): how finely a run can pause inside a node. Tests make it small.
    uint64_t unit_work = kUnitWork;
};

// A call's arguments, by schema position (absent optional/default ones filled in).
class CallArgs {
public:
    CallArgs(const OpSchema& schema, std::vector<Value> values)
        : schema_(schema), v_(std::move(values)) {}
    const OpSchema& schema() const { return schema_; }
    size_t size() const { return v_.size(); }
    const Value& operator[](size_t i) const { return v_[i]; }
    Value& at(size_t i) { return v_[i]; }
    const std::string& name(size_t i) const { return schema_.arguments[i].name; }

    // The tensor argument i (error unless a tensor).
    Result<std::shared_ptr<Tensor>> tensor(size_t i) const;
    // The optional tensor argument i: null for None.
    Result<std::shared_ptr<Tensor>> opt_tensor(size_t i) const;
    // An int list argument; a single int expands to `n` copies (SymInt[2] stride=1).
    Result<std::vector<int64_t>> ints(size_t i, size_t n = 0) const;
    Result<int64_t> integer(size_t i) const;
    Result<double> real(size_t i) const; // ints and bools convert
    Result<bool> boolean(size_t i) const;
    Result<ScalarType> dtype(size_t i) const;

private:
    Error bad(size_t i, const std::string& want) const;
    const OpSchema& schema_;
    std::vector<Value> v_;
};

using KernelFn = Result<Value> (*)(const CallArgs& args, const KernelOptions& opt);

// A kernel that can pause inside the call (kernel_job.h): the same checks and
// charges as the kernel, then the work as units. The arguments' tensors must
// outlive the job (the interpreter keeps the call's CallArgs beside it).
using JobFn = Result<std::unique_ptr<KernelJob>> (*)(const CallArgs& args,
                                                     const KernelOptions& opt);
// The job form of a node's kernel, or null when it always runs in one call.
JobFn find_job(const Node& n);
// A job run to its end: what the one-call kernels return.
Result<Value> job_value(Result<std::unique_ptr<KernelJob>> job);
Result<Tensor> job_tensor(Result<std::unique_ptr<KernelJob>> job);

// The kernel of an op table row, or null when pt2lab cannot run it.
KernelFn find_kernel(const OpInfo& op);
// The kernel a call_function node runs, or null (unknown op, or no kernel).
KernelFn find_kernel(const Node& n);

// Shared helpers for kernels.
Error kernel_error(const std::string& message, const std::string& hint = {});
// A zeroed tensor for a result of `op`: its element count checked, its bytes and
// one visit per element charged to the run's budget first.
Result<Tensor> new_tensor(const KernelOptions& opt, ScalarType dtype, std::vector<int64_t> sizes,
                          const std::string& op);
// The same, its values unspecified: for kernels that write every element
// (conv2d), which then skip a pass over the result.
Result<Tensor> new_unfilled_tensor(const KernelOptions& opt, ScalarType dtype,
                                   std::vector<int64_t> sizes, const std::string& op);
// A copy of `x` for a result of `op` (reshapes, clones), charged like new_tensor.
Result<Tensor> copy_tensor(const KernelOptions& opt, const Tensor& x, const std::string& op);
// Scratch bytes (conv's im2col buffer) and work (multiply-adds, element visits)
// for `op`; nullopt means the count overflowed and is refused.
Status charge_bytes(const KernelOptions& opt, std::optional<uint64_t> n, const std::string& op);
Status charge_work(const KernelOptions& opt, std::optional<uint64_t> n, const std::string& op);
// The product of counts, or nullopt when it overflows (for charge_work).
std::optional<uint64_t> work_of(std::initializer_list<int64_t> counts);
std::string shape_str(const std::vector<int64_t>& sizes);
// The range slice.Tensor / slice_scatter select along dim: start, step and length,
// the bounds clamped into [0, size] as Python's slices are (None: the whole range; a
// negative bound counts from the end). Arguments at `first` (dim), first + 1 (start),
// first + 2 (end), first + 3 (step) of `x`'s call (kernels_view.cpp).
struct SliceRange {
    int64_t dim = 0, start = 0, step = 1, length = 0;
};
Result<SliceRange> slice_range(const CallArgs& a, size_t first, const Tensor& x,
                               const std::string& op);
// Broadcast shape of a and b, or an error naming both.
Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);
// Normalizes a possibly negative dim against `rank`.
Result<int64_t> wrap_dim(int64_t d, int64_t rank);

// An eval batch norm's per-channel y = x * alpha[c] + beta[c] (kernels_norm.cpp):
// alpha = w / sqrt(rv + eps), beta = b - rm * alpha, in float32 as ATen's CPU
// kernel computes them; absent w, b, rm, rv count as 1, 0, 0, 1. alpha, beta: [C].
void bn_eval_coefficients(const float* w, const float* b, const float* rm, const float* rv,
                          double eps, int64_t C, float* alpha, float* beta);

// Conv parameters shared by conv2d and convolution.
struct ConvParams {
    int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1}, groups = 1;
};
// x: [N, C, H, W], w: [O, C/groups, KH, KW], b: [O] or null -> [N, O, OH, OW].
// The result, the scratch and the multiply-adds are charged to opt.budget.
Result<Tensor> conv2d_reference(const Tensor& x, const Tensor& w, const Tensor* b,
                                const ConvParams& p, const KernelOptions& opt = KernelOptions());
// Each conv as a job (kernel_job.h) whose units are runs of output planes (the
// reference and depthwise convs) or of 8-column GEMM panels and the transforms
// before and after them (im2col, Winograd); the tensors and `ep` (copied; its
// alpha and beta arrays are not) must outlive the job.
Result<std::unique_ptr<KernelJob>> conv2d_reference_job(const Tensor& x, const Tensor& w,
                                                        const Tensor* b, const ConvParams& p,
                                                        const KernelOptions& opt);
Result<std::unique_ptr<KernelJob>> conv2d_fast_job(const Tensor& x, const Tensor& w,
                                                   const Tensor* b, const ConvParams& p,
                                                   const KernelOptions& opt,
                                                   const ConvEpilogue* ep = nullptr);
Result<std::unique_ptr<KernelJob>> conv2d_im2col_job(const Tensor& x, const Tensor& w,
                                                     const Tensor* b, const ConvParams& p,
                                                     const KernelOptions& opt,
                                                     const ConvEpilogue* ep = nullptr);
Result<std::unique_ptr<KernelJob>> conv2d_winograd_job(const Tensor& x, const Tensor& w,
                                                       const Tensor* b, const ConvParams& p,
                                                       const KernelOptions& opt,
                                                       const ConvEpilogue* ep = nullptr);
// The fast paths take an epilogue (conv_epilogue.h): the eval batch norm and
// activation that follow the conv, applied to each output before it is stored.
Result<Tensor> conv2d_fast(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                           const KernelOptions& opt = KernelOptions(),
                           const ConvEpilogue* ep = nullptr);
// The fast path's general case: im2col + GEMM (depthwise: a direct kernel per channel).
Result<Tensor> conv2d_im2col(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                             const KernelOptions& opt = KernelOptions(),
                             const ConvEpilogue* ep = nullptr);
// Winograd F(2x2, 3x3) (conv_winograd.cpp): a 3x3, stride-1, undilated, ungrouped
// float conv; conv2d_fast takes it when conv2d_winograd_suits (enough channels and tiles).
bool conv2d_winograd_suits(const Tensor& x, const Tensor& w, const ConvParams& p);
Result<Tensor> conv2d_winograd(const Tensor& x, const Tensor& w, const Tensor* b,
                               const ConvParams& p, const KernelOptions& opt = KernelOptions(),
                               const ConvEpilogue* ep = nullptr);
// A conv2d call (convolution: an aten.convolution call), arguments in schema order,
// on the fast path with the epilogue `ep`: what the interpreter runs for a conv
// fused with the batch norm and activation after it (conv_fusion.h).
Result<Value> conv_with_epilogue(const CallArgs& a, bool convolution, const ConvEpilogue& ep,
                                 const KernelOptions& opt);
Result<std::unique_ptr<KernelJob>> conv_with_epilogue_job(const CallArgs& a, bool convolution,
                                                          const ConvEpilogue& ep,
                                                          const KernelOptions& opt);
// The result of a convolution, its shape validated by conv2d_output_shape, its
// values unspecified (every conv path writes each element),
// its bytes and multiply-adds charged (shared by the reference and the fast conv).
Result<Tensor> conv2d_result(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p,
                             const KernelOptions& opt);
// Validates shapes and arguments as ATen does (its messages) with checked
// arithmetic, and returns the output shape.
Result<std::vector<int64_t>> conv2d_output_shape(const Tensor& x, const Tensor& w, const Tensor* b,
                                                 const ConvParams& p);

} // namespace pt2lab
