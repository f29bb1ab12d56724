// einsum's Core ATen rule: the nodes ATen's own einsum (native/Linear.cpp) leaves
// when torch 2.14.1's run_decompositions() traces it: per operand an unsqueeze for
// each label it lacks and a permute to the aligned order; per pair of operands
// (left to right) sumproduct_pair's permute, reshape (a view, or clone + view when
// the strides allow no view), bmm, view and permute; a last view that drops the
// contracted dims. Equations that need a sum (a label only one operand has, a lone
// operand with contracted labels), a diagonal, an ellipsis or a path keep einsum.
#include <deque>

#include "graph/einsum_equation.h"
#include "passes/decomp_context.h"
#include "passes/meta_strides.h"

namespace pt2lab {

using namespace decomp;

namespace {

// A tensor of the lowering: its node (none in a dry run) and the sizes and strides
// torch's fake tensor gives it, which decide whether a reshape is a view.
struct Val {
    Argument arg;
    std::vector<int64_t> sizes, strides;
    int64_t size(int64_t d) const { return sizes[static_cast<size_t>(d)]; }
};

class Lowering {
public:
    // c null: a dry run, which only checks that the rule covers the equation.
    Lowering(DecompContext* c, const Node& einsum) : c_(c), n_(einsum) {}

    bool ok() const { return why_.empty(); }
    const std::string& why() const { return why_; }
    void refuse(const std::string& why) {
        if (why_.empty()) why_ = why;
    }

    Val unsqueeze(const Val& x, int64_t dim) {
        Val y = x;
        const size_t d = static_cast<size_t>(dim);
        // ATen's inferUnsqueezeGeometry
        const int64_t st = d >= x.sizes.size() ? 1 : x.sizes[d] * x.strides[d];
        y.sizes.insert(y.sizes.begin() + dim, 1);
        y.strides.insert(y.strides.begin() + dim, st);
        return emit("torch.ops.aten.unsqueeze.default", {x.arg, Argument::from_int(dim)}, {},
                    "unsqueeze", y);
    }
    Val permute(const Val& x, const std::vector<int64_t>& perm) {
        Val y;
        for (int64_t p : perm) {
            y.sizes.push_back(x.size(p));
            y.strides.push_back(x.strides[static_cast<size_t>(p)]);
        }
        return emit("torch.ops.aten.permute.default", {x.arg, Argument::int_list(perm)}, {},
                    "permute", y);
    }
    Val view(const Val& x, const std::vector<int64_t>& shape) {
        auto st = view_strides(x.sizes, x.strides, shape);
        if (!st) {
            refuse("a view ATen takes has no strides here");
            return x;
        }
        return emit("torch.ops.aten.view.default", {x.arg, Argument::int_list(shape)}, {}, "view",
                    Val{{}, shape, *st});
    }
    // reshape: a view when the strides allow, else clone + _unsafe_view (Core ATen: view)
    Val reshape(const Val& x, const std::vector<int64_t>& shape) {
        if (view_strides(x.sizes, x.strides, shape)) return view(x, shape);
        Val cl = emit("torch.ops.aten.clone.default", {x.arg},
                      {{"memory_format", Argument::memory_format(1)}}, "clone",
                      Val{{}, x.sizes, contiguous_strides(x.sizes)});
        return view(cl, shape);
    }
    Val bmm(const Val& a, const Val& b) {
        std::vector<int64_t> s = {a.size(0), a.size(1), b.size(2)};
        return emit("torch.ops.aten.bmm.default", {a.arg, b.arg}, {}, "bmm",
                    Val{{}, s, contiguous_strides(s)});
    }
    // A product with nothing to sum: only as the last step, where the strides torch's
    // TensorIterator picks no longer matter.
    Val mul(const Val& a, const Val& b) {
        std::vector<int64_t> s = a.sizes;
        for (size_t d = 0; d < s.size(); ++d) s[d] = std::max(s[d], b.sizes[d]);
        return emit("torch.ops.aten.mul.Tensor", {a.arg, b.arg}, {}, "mul",
                    Val{{}, s, contiguous_strides(s)});
    }

    // The last node takes the einsum's own metadata (the same sizes and strides).
    void finish(const Val& result) {
        if (c_ && result.arg.is_node()) result.arg.node->meta.val = n_.meta.val;
    }

private:
    Val emit(const char* target, std::vector<Argument> args, Kwargs kwargs, const char* name,
             Val y) {
        if (!c_ || !ok()) return y;
        MetaVal v = n_.meta.val;
        v.tensor.sizes = y.sizes;
        v.tensor.strides = y.strides;
        v.tensor.storage_offset = 0;
        v.tensor.symbolic_sizes.clear();
        y.arg = Argument::from_node(c_->emit(target, std::move(args), std::move(kwargs), name, v));
        return y;
    }

    DecompContext* c_;
    const Node& n_;
    std::string why_;
};

// sumproduct_pair(left, right, sum_dims, keepdim=True): (left * right) summed over
// sum_dims, as permute -> reshape -> bmm -> view -> permute.
Val sumproduct_pair(Lowering& L, Val left, Val right, const std::vector<int64_t>& sum_dims,
                    bool last) {
    if (sum_dims.empty()) {
        if (!last) L.refuse("a product with nothing to sum before another contraction");
        return L.mul(left, right);
    }
    const int64_t dim = static_cast<int64_t>(left.sizes.size());
    std::vector<int64_t> lro, lo, ro;
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    for (int64_t i = 0; i < dim; ++i) {
        const bool sl = left.size(i) != 1, sr = right.size(i) != 1;
        if (std::find(sum_dims.begin(), sum_dims.end(), i) != sum_dims.end()) {
            if (sl && sr)
                sum_size *= left.size(i);
            else if (sl || sr)
                L.refuse("a contracted label only one operand of a pair has (ATen sums it)");
        } else if (sl && sr) {
            lro.push_back(i);
            lro_size *= left.size(i);
        } else if (sl) {
            lo.push_back(i);
            lo_size *= left.size(i);
        } else {
            ro.push_back(i);
            ro_size *= right.size(i);
        }
    }
    std::vector<int64_t> out_size, lperm = lro, rperm = lro;
    for (int64_t d : lro) out_size.push_back(left.size(d));
    for (int64_t d : lo) out_size.push_back(left.size(d));
    for (size_t k = 0; k < sum_dims.size(); ++k) out_size.push_back(1);
    for (int64_t d : ro) out_size.push_back(right.size(d));
    using Parts = std::initializer_list<const std::vector<int64_t>*>;
    for (const auto* part : Parts{&lo, &sum_dims, &ro})
        lperm.insert(lperm.end(), part->begin(), part->end());
    for (const auto* part : Parts{&sum_dims, &ro, &lo})
        rperm.insert(rperm.end(), part->begin(), part->end());
    std::vector<int64_t> operm(out_size.size(), -1);
    int64_t at = 0;
    for (const auto* part : Parts{&lro, &lo, &sum_dims, &ro})
        for (int64_t d : *part) operm[static_cast<size_t>(d)] = at++;
    Val l = L.reshape(L.permute(left, lperm), {lro_size, lo_size, sum_size});
    Val r = L.reshape(L.permute(right, rperm), {lro_size, sum_size, ro_size});
    Val result = L.bmm(l, r);
    return L.permute(L.view(result, out_size), operm);
}

// ATen's einsum on the operands' metadata; emits when L is not a dry run.
Val lower(Lowering& L, const Node& n) {
    const Argument eq_arg = arg_or_default(n, 0), list = arg_or_default(n, 1);
    if (eq_arg.kind != ArgKind::String || !list.is_sequence() || list.items.empty()) {
        L.refuse("the equation or the operand list is not literal");
        return {};
    }
    if (!arg_or_default(n, 2).is_none()) L.refuse("a contraction path is given");
    std::vector<Val> inputs;
    std::vector<std::vector<int64_t>> sizes;
    for (const Argument& a : list.items) {
        const TensorMeta* m = tensor_meta(a);
        if (!m || m->strides.size() != m->sizes.size()) {
            L.refuse("an operand has no shape metadata");
            return {};
        }
        for (const std::string& s : m->symbolic_sizes)
            if (!s.empty()) L.refuse("an operand has a symbolic size");
        inputs.push_back(Val{a, m->sizes, m->strides});
        sizes.push_back(m->sizes);
    }
    auto parsed = parse_einsum(eq_arg.s, sizes);
    if (!parsed.ok()) {
        L.refuse(parsed.error().message);
        return {};
    }
    const EinsumEquation& eq = parsed.value();
    if (eq.repeats_a_label()) L.refuse("an operand repeats a label (ATen takes a diagonal)");
    if (!L.ok()) return {};

    const int64_t P = eq.aligned_dims, out_dims = eq.out_dims();
    std::vector<int64_t> dim_counts(static_cast<size_t>(P), 0);
    std::deque<Val> ops;
    for (size_t k = 0; k < inputs.size(); ++k) {
        Val op = inputs[k];
        std::vector<int64_t> permutation(static_cast<size_t>(P), -1);
        int64_t dim = 0;
        for (int label : eq.operands[k]) {
            const size_t p = static_cast<size_t>(eq.position[static_cast<size_t>(label)]);
            if (op.size(dim) != 1) ++dim_counts[p];
            permutation[p] = dim++;
        }
        for (int64_t& v : permutation)
            if (v == -1) {
                op = L.unsqueeze(op, dim);
                v = dim++;
            }
        ops.push_back(L.permute(op, permutation));
    }
    while (ops.size() > 1) {
        Val a = ops[0], b = ops[1];
        ops.erase(ops.begin(), ops.begin() + 2);
        std::vector<int64_t> sum_dims;
        for (int64_t d = out_dims; d < P; ++d) {
            size_t u = static_cast<size_t>(d);
            if (a.size(d) != 1 && b.size(d) != 1) {
                if (--dim_counts[u] == 1) {
                    sum_dims.push_back(d);
                    dim_counts[u] = 0;
                }
            } else if (dim_counts[u] == 1 && (a.size(d) != 1 || b.size(d) != 1)) {
                L.refuse("a contracted label only one operand has (ATen sums it first)");
            }
        }
        ops.push_front(sumproduct_pair(L, a, b, sum_dims, ops.empty()));
    }
    if (P > out_dims) {
        if (inputs.size() == 1) {
            L.refuse("a lone operand with contracted labels (ATen sums them)");
            return ops[0];
        }
        std::vector<int64_t> s(ops[0].sizes.begin(), ops[0].sizes.begin() + out_dims);
        return L.view(ops[0], s);
    }
    return ops[0];
}

} // namespace

bool einsum_decomposes(const Node& n) {
    Lowering dry(nullptr, n);
    lower(dry, n);
    return dry.ok() && n.meta.val.is_tensor();
}

Status rule_einsum(DecompContext& c) {
    Node& n = *c.node;
    Lowering L(&c, n);
    Val result = lower(L, n);
    if (!L.ok() || !result.arg.is_node())
        return rule_error(n, "einsum has no Core ATen rule here: " + L.why());
    L.finish(result);
    return c.replace_with(result.arg.node);
}

} // namespace pt2lab
