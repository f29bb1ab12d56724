// Which kernel runs which op: one row per op overload of the schema table.
#include <cstring>

#include "exec/kernels.h"

namespace pt2lab {

#define PT2LAB_KERNEL(fn) Result<Value> fn(const CallArgs&, const KernelOptions&);
PT2LAB_KERNEL(kernel_conv2d)
PT2LAB_KERNEL(kernel_convolution)
PT2LAB_KERNEL(kernel_batch_norm)
PT2LAB_KERNEL(kernel_native_bn_no_training)
PT2LAB_KERNEL(kernel_native_bn_functional)
PT2LAB_KERNEL(kernel_relu)
PT2LAB_KERNEL(kernel_relu_)
PT2LAB_KERNEL(kernel_mean_dim)
PT2LAB_KERNEL(kernel_mean)
PT2LAB_KERNEL(kernel_linear)
PT2LAB_KERNEL(kernel_permute)
PT2LAB_KERNEL(kernel_t)
PT2LAB_KERNEL(kernel_addmm)
PT2LAB_KERNEL(kernel_mm)
PT2LAB_KERNEL(kernel_add_tensor)
PT2LAB_KERNEL(kernel_add_inplace)
PT2LAB_KERNEL(kernel_add_scalar)
PT2LAB_KERNEL(kernel_sub_tensor)
PT2LAB_KERNEL(kernel_mul_tensor)
PT2LAB_KERNEL(kernel_copy_)
PT2LAB_KERNEL(kernel_max_pool2d)
PT2LAB_KERNEL(kernel_max_pool2d_with_indices)
PT2LAB_KERNEL(kernel_adaptive_avg_pool2d)
PT2LAB_KERNEL(kernel_flatten)
PT2LAB_KERNEL(kernel_view)
PT2LAB_KERNEL(kernel_reshape)
PT2LAB_KERNEL(kernel_clone)
PT2LAB_KERNEL(kernel_detach)
PT2LAB_KERNEL(kernel_getitem)
PT2LAB_KERNEL(kernel_sym_size)
PT2LAB_KERNEL(kernel_assert_tensor_metadata)
PT2LAB_KERNEL(kernel_quantize_per_tensor)
PT2LAB_KERNEL(kernel_dequantize_per_tensor)
PT2LAB_KERNEL(kernel_quantize_per_channel)
PT2LAB_KERNEL(kernel_dequantize_per_channel)
#undef PT2LAB_KERNEL

namespace {
struct Row {
    const char* target;
    KernelFn fn;
};

const Row kKernels[] = {
    {"torch.ops.aten.conv2d.default", kernel_conv2d},
    {"torch.ops.aten.convolution.default", kernel_convolution},
    {"torch.ops.aten.batch_norm.default", kernel_batch_norm},
    {"torch.ops.aten._native_batch_norm_legit_no_training.default", kernel_native_bn_no_training},
    {"torch.ops.aten._native_batch_norm_legit_functional.default", kernel_native_bn_functional},
    {"torch.ops.aten.relu.default", kernel_relu},
    {"torch.ops.aten.relu_.default", kernel_relu_},
    {"torch.ops.aten.mean.dim", kernel_mean_dim},
    {"torch.ops.aten.mean.default", kernel_mean},
    {"torch.ops.aten.linear.default", kernel_linear},
    {"torch.ops.aten.permute.default", kernel_permute},
    {"torch.ops.aten.t.default", kernel_t},
    {"torch.ops.aten.addmm.default", kernel_addmm},
    {"torch.ops.aten.mm.default", kernel_mm},
    {"torch.ops.aten.add.Tensor", kernel_add_tensor},
    {"torch.ops.aten.add_.Tensor", kernel_add_inplace},
    {"torch.ops.aten.add.Scalar", kernel_add_scalar},
    {"torch.ops.aten.sub.Tensor", kernel_sub_tensor},
    {"torch.ops.aten.mul.Tensor", kernel_mul_tensor},
    {"torch.ops.aten.copy_.default", kernel_copy_},
    {"torch.ops.aten.max_pool2d.default", kernel_max_pool2d},
    {"torch.ops.aten.max_pool2d_with_indices.default", kernel_max_pool2d_with_indices},
    {"torch.ops.aten.adaptive_avg_pool2d.default", kernel_adaptive_avg_pool2d},
    {"torch.ops.aten._adaptive_avg_pool2d.default", kernel_adaptive_avg_pool2d},
    {"torch.ops.aten.flatten.using_ints", kernel_flatten},
    {"torch.ops.aten.view.default", kernel_view},
    {"torch.ops.aten.reshape.default", kernel_reshape},
    {"torch.ops.aten.clone.default", kernel_clone},
    {"torch.ops.aten.detach.default", kernel_detach},
    {"torch.ops.aten.sym_size.int", kernel_sym_size},
    {"torch.ops.aten._assert_tensor_metadata.default", kernel_assert_tensor_metadata},
    {"torch.ops.quantized_decomposed.quantize_per_tensor.default", kernel_quantize_per_tensor},
    {"torch.ops.quantized_decomposed.dequantize_per_tensor.default", kernel_dequantize_per_tensor},
    {"torch.ops.quantized_decomposed.quantize_per_channel.default", kernel_quantize_per_channel},
    {"torch.ops.quantized_decomposed.dequantize_per_channel.default",
     kernel_dequantize_per_channel},
    {"operator.getitem", kernel_getitem},
};
} // namespace

KernelFn find_kernel(const OpSchema& schema) {
    std::string t = schema.target();
    for (const Row& r : kKernels)
        if (t == r.target) return r.fn;
    return nullptr;
}

std::vector<std::string> kernel_targets() {
    std::vector<std::string> out;
    for (const Row& r : kKernels) out.push_back(r.target);
    return out;
}

} // namespace pt2lab
