// Kernel interface: one function per op overload of the schema table, taking
// its arguments in schema order. Kernels are readable reference loops with
// shape comments; conv2d also has a fast path (conv_fast.cpp) that the tests
// compare against the reference. Errors are plain messages; the interpreter
// adds "while executing %node".
#pragma once

#include <string>
#include <vector>

#include "exec/tensor.h"
#include "graph/node.h"
#include "graph/op_table.h"

namespace pt2lab {

struct KernelOptions {
    bool fast_conv = false; // im2col + tiled GEMM instead of the reference loop
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

// The kernel of an op table row, or null when pt2lab cannot run it.
KernelFn find_kernel(const OpInfo& op);
// The kernel a call_function node runs, or null (unknown op, or no kernel).
KernelFn find_kernel(const Node& n);

// Shared helpers for kernels.
Error kernel_error(const std::string& message, const std::string& hint = {});
std::string shape_str(const std::vector<int64_t>& sizes);
// Broadcast shape of a and b, or an error naming both.
Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);
// Normalizes a possibly negative dim against `rank`.
Result<int64_t> wrap_dim(int64_t d, int64_t rank);

// Conv parameters shared by conv2d and convolution.
struct ConvParams {
    int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1}, groups = 1;
};
// x: [N, C, H, W], w: [O, C/groups, KH, KW], b: [O] or null -> [N, O, OH, OW]
Result<Tensor> conv2d_reference(const Tensor& x, const Tensor& w, const Tensor* b,
                                const ConvParams& p);
Result<Tensor> conv2d_fast(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p);
// Validates shapes and returns the output shape.
Result<std::vector<int64_t>> conv2d_output_shape(const Tensor& x, const Tensor& w, const Tensor* b,
                                                 const ConvParams& p);

} // namespace pt2lab
