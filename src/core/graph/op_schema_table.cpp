// The schema strings, exactly as ATen (native_functions.yaml) and
// torch.ao's quantized_decomposed library register them.
#include "graph/op_schema.h"

namespace pt2lab {

// One entry per op overload the lessons reach at any IR level, plus the
// ResNet-style model's ops. Adding an op starts here.
extern const char* const kOpSchemaStrings[];
const char* const kOpSchemaStrings[] = {
    // convolution
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] "
    "padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
    "padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> "
    "Tensor",
    // batch norm, at each IR level
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor "
    "running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "aten::_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor "
    "running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, "
    "Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
    "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) "
    "running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, "
    "Tensor, Tensor)",
    "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    // activations and reductions
    "aten::relu(Tensor self) -> Tensor",
    "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
    "Tensor",
    "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    // linear and its Core ATen pieces
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
    "aten::t(Tensor(a) self) -> Tensor(a)",
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
    "Tensor",
    "aten::mm(Tensor self, Tensor mat2) -> Tensor",
    // elementwise and in-place
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    // pooling and shape (ResNet-style model)
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] "
    "dilation=1, bool ceil_mode=False) -> Tensor",
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
    "padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "aten::detach(Tensor(a) self) -> Tensor(a)",
    "aten::sym_size.int(Tensor self, int dim) -> SymInt",
    "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, "
    "ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()",
    // PT2E quantize / dequantize (torch.ao.quantization.fx._decomposed)
    "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int "
    "quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int "
    "quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    "quantized_decomposed::quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, "
    "int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor",
    "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? "
    "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? "
    "out_dtype=None) -> Tensor",
    // Python's operator.getitem (multi-output ops are unpacked with it); not an ATen op
    "::getitem(Any a, int b) -> Any",
};

extern const size_t kOpSchemaCount;
const size_t kOpSchemaCount = sizeof(kOpSchemaStrings) / sizeof(kOpSchemaStrings[0]);

} // namespace pt2lab
