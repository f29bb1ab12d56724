// The einsum reference kernel: any equation ATen accepts without an ellipsis,
// float32 operands, as one loop over every output and contracted index (double
// sums). Not ATen's path (permute, bmm); the Core ATen rule
// (passes/decompose_einsum.cpp) writes that one out as graph nodes.
#include "exec/kernels.h"
#include "graph/einsum_equation.h"
#include "util/checked.h"

namespace pt2lab {

// einsum(equation, tensors, *, path=None) -> the sum over the contracted labels of the
// product of the operands. A path only orders ATen's pairwise contractions, so it does
// not change the result here.
Result<Value> kernel_einsum(const CallArgs& a, const KernelOptions& opt) {
    const std::string op = "aten.einsum.default";
    if (a[0].kind != Value::Kind::String)
        return kernel_error(op + ": expected the equation as a string, got " + a[0].describe());
    if (a[1].kind != Value::Kind::Tuple)
        return kernel_error(op + ": expected a list of tensors, got " + a[1].describe());
    std::vector<const Tensor*> ts;
    std::vector<std::vector<int64_t>> sizes;
    for (const Value& v : a[1].items) {
        if (!v.is_tensor())
            return kernel_error(op + ": expected a list of tensors, got " + v.describe());
        if (v.tensor->dtype != ScalarType::Float)
            return kernel_error(op + ": expected float32 operands, got " + v.tensor->type_str());
        ts.push_back(v.tensor.get());
        sizes.push_back(v.tensor->sizes);
    }
    auto parsed = parse_einsum(a[0].s, sizes);
    if (!parsed.ok()) return kernel_error(op + ": " + parsed.error().message, parsed.error().hint);
    const EinsumEquation& eq = parsed.value();

    // The aligned dims (output, then contracted), their sizes, and each operand's
    // element stride along them (0 where it broadcasts; a repeated label's strides add,
    // which walks the diagonal).
    const size_t P = static_cast<size_t>(eq.aligned_dims), O = eq.output.size();
    std::vector<int64_t> dim_size(P, 1);
    for (int l = 0; l < EinsumEquation::kLabels; ++l)
        if (eq.position[static_cast<size_t>(l)] >= 0)
            dim_size[static_cast<size_t>(eq.position[static_cast<size_t>(l)])] =
                eq.size[static_cast<size_t>(l)];
    std::vector<std::vector<int64_t>> stride(ts.size(), std::vector<int64_t>(P, 0));
    for (size_t k = 0; k < ts.size(); ++k) {
        int64_t s = 1;
        for (size_t d = sizes[k].size(); d-- > 0;) {
            const size_t p =
                static_cast<size_t>(eq.position[static_cast<size_t>(eq.operands[k][d])]);
            if (sizes[k][d] != 1) stride[k][p] += s;
            s *= sizes[k][d];
        }
    }
    std::vector<int64_t> out_sizes(dim_size.begin(), dim_size.begin() + static_cast<long>(O));
    auto yr = new_tensor(opt, ScalarType::Float, out_sizes, op);
    if (!yr.ok()) return yr.error();
    std::optional<uint64_t> work = static_cast<uint64_t>(ts.size());
    for (int64_t n : dim_size)
        work = work ? checked_mul_u64(*work, static_cast<uint64_t>(n)) : std::nullopt;
    if (Status s = charge_work(opt, work, op); !s.ok()) return s.error();
    if (work == uint64_t(0)) return Value::of(yr.take()); // an empty output or sum: zeros

    // y[o] = sum over c of prod over k of x_k[o, c]; `idx` walks (o, c) in C order.
    float* y = yr.value().f32();
    std::vector<int64_t> idx(P, 0);
    int64_t out_at = 0;
    double acc = 0.0;
    for (;;) {
        double prod = 1.0;
        for (size_t k = 0; k < ts.size(); ++k) {
            int64_t off = 0;
            for (size_t p = 0; p < P; ++p) off += idx[p] * stride[k][p];
            prod *= double(ts[k]->f32()[off]);
        }
        acc += prod;
        size_t p = P;
        while (p > O) { // the next contracted index
            if (++idx[p - 1] < dim_size[p - 1]) break;
            idx[--p] = 0;
        }
        if (p > O) continue;
        y[out_at++] = static_cast<float>(acc);
        acc = 0.0;
        while (p > 0) { // the next output index
            if (++idx[p - 1] < dim_size[p - 1]) break;
            idx[--p] = 0;
        }
        if (p == 0) break;
    }
    return Value::of(yr.take());
}

} // namespace pt2lab
