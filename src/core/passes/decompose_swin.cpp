// Decomposition rules for the ops the Swin and Swin v2 exports reach, each
// written after what torch 2.14.1's run_decompositions prints for them: pad,
// zero_ (a write into a slice), zero, expand_as, clamp_min, linalg_vector_norm
// (ord 2) and matmul (both operands at least 3-D, ATen's _matmul_impl).
#include <algorithm>

#include "passes/decomp_context.h"

namespace pt2lab {

using namespace decomp;

namespace {

std::vector<int64_t> ints_of(const Argument& a) {
    std::vector<int64_t> out;
    for (const Argument& x : a.items)
        if (x.kind == ArgKind::Int) out.push_back(x.i);
    return out;
}

bool int_list(const Argument& a) {
    if (!a.is_sequence()) return false;
    for (const Argument& x : a.items)
        if (x.kind != ArgKind::Int) return false;
    return true;
}

// ATen's expand meta: the input's strides for the dims it keeps, 0 for new leading
// dims and for size-1 dims made larger.
MetaVal expanded(const TensorMeta& x, const std::vector<int64_t>& sizes, bool requires_grad) {
    MetaVal v = tensor_val(x.dtype, sizes, requires_grad);
    const size_t lead = sizes.size() - x.sizes.size();
    for (size_t k = 0; k < sizes.size(); ++k)
        v.tensor.strides[k] =
            k < lead || (x.sizes[k - lead] == 1 && sizes[k] != 1) ? 0 : x.strides[k - lead];
    return v;
}

} // namespace

bool pad_is_constant(const Node& n) {
    const Argument mode = arg_or_default(n, 2);
    const Argument value = arg_or_default(n, 3);
    return mode.kind == ArgKind::String && mode.s == "constant" &&
           (value.kind == ArgKind::None || value.kind == ArgKind::Float ||
            value.kind == ArgKind::Int);
}

// pad(x, pad, "constant", value) -> constant_pad_nd(x, pad, value or 0.0)
Status rule_pad(DecompContext& c) {
    Node& n = *c.node;
    Argument value = arg_or_default(n, 3);
    if (value.kind == ArgKind::None) value = Argument::from_float(0.0);
    Node* p = c.emit("torch.ops.aten.constant_pad_nd.default", {n.args()[0], n.args()[1], value},
                     {}, "constant_pad_nd", n.meta.val);
    return c.replace_with(p);
}

// zero_(x) -> zero(x); when x is a slice of a tensor (export's view of it), the write
// goes into that tensor as functionalization writes it: slice_scatter(base, zero, dim,
// start, end, step), which later readers of the base read instead.
Status rule_zero_(DecompContext& c) {
    Node& n = *c.node;
    if (n.args().empty() || !n.args()[0].is_node())
        return rule_error(n, "zero_ writes to something that is not a node");
    Node* self = n.args()[0].node;
    Node* z = c.emit("torch.ops.aten.zero.default", {n.args()[0]}, {}, "zero", n.meta.val);
    Node* base = nullptr;
    if (self->is(OpId::slice_tensor) && !self->args().empty() && self->args()[0].is_node()) {
        base = self->args()[0].node;
        std::vector<Argument> args = {self->args()[0], Argument::from_node(z)};
        for (size_t k = 1; k < self->args().size(); ++k) args.push_back(self->args()[k]);
        Node* s = c.emit("torch.ops.aten.slice_scatter.default", std::move(args), {},
                         "slice_scatter", base->meta.val);
        s->meta.other[kRetraceSkip] = "slice"; // the slice regenerated after the write
        if (Status st = c.replace_with(z); !st.ok()) return st;
        c.functionalize(base, s);
        return {};
    }
    if (Status st = c.replace_with(z); !st.ok()) return st;
    c.functionalize(self, z);
    return {};
}

// zero(x) -> full_like(x, 0, pin_memory=False, memory_format=torch.preserve_format)
Status rule_zero(DecompContext& c) {
    Node& n = *c.node;
    Node* f = c.emit(
        "torch.ops.aten.full_like.default", {n.args()[0], Argument::from_int(0)},
        {{"pin_memory", Argument::from_bool(false)}, {"memory_format", Argument::memory_format(4)}},
        "full_like", n.meta.val);
    return c.replace_with(f);
}

// expand_as(x, other) -> expand(x, other's sizes)
Status rule_expand_as(DecompContext& c) {
    Node& n = *c.node;
    if (n.args().size() < 2 || !tensor_meta(n.args()[1]))
        return rule_error(n, "expand_as's other has no shape metadata");
    Node* e = c.emit("torch.ops.aten.expand.default",
                     {n.args()[0], Argument::int_list(tensor_meta(n.args()[1])->sizes)}, {},
                     "expand", n.meta.val);
    return c.replace_with(e);
}

// clamp_min(x, min) -> clamp(x, min)
Status rule_clamp_min(DecompContext& c) {
    Node& n = *c.node;
    Node* e =
        c.emit("torch.ops.aten.clamp.default", {n.args()[0], n.args()[1]}, {}, "clamp", n.meta.val);
    return c.replace_with(e);
}

// torch's reference decomposes ord 2 (an even ord of a float tensor: no abs) over
// literal dims; other ords are not written here.
bool vector_norm_decomposes(const Node& n) {
    const Argument ord = arg_or_default(n, 1), dim = arg_or_default(n, 2);
    const bool two =
        (ord.kind == ArgKind::Float && ord.f == 2.0) || (ord.kind == ArgKind::Int && ord.i == 2);
    const Argument dtype = arg_or_default(n, 4);
    const TensorMeta* x = n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
    return two && int_list(dim) && !dim.items.empty() && dtype.kind == ArgKind::None && x &&
           x->dtype == ScalarType::Float && n.meta.val.is_tensor();
}

// linalg_vector_norm(x, 2, dims, keepdim) -> pow(sum(pow(x, 2), dims wrapped, keepdim), 0.5)
Status rule_linalg_vector_norm(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta& x = *tensor_meta(n.args()[0]);
    const Argument ord = arg_or_default(n, 1), keep = arg_or_default(n, 3);
    std::vector<int64_t> dims;
    for (int64_t d : ints_of(arg_or_default(n, 2))) {
        auto w = wrap_dim_index(d, static_cast<int64_t>(x.sizes.size()));
        if (!w) return rule_error(n, "linalg_vector_norm's dim is out of range");
        dims.push_back(*w);
    }
    const double p = ord.kind == ArgKind::Float ? ord.f : double(ord.i);
    Node* sq = c.emit("torch.ops.aten.pow.Tensor_Scalar", {n.args()[0], ord}, {}, "pow",
                      tensor_val(x.dtype, x.sizes, n.meta.val.tensor.requires_grad));
    std::vector<Argument> sum_args = {Argument::from_node(sq), Argument::int_list(dims)};
    if (keep.kind == ArgKind::Bool && keep.b) sum_args.push_back(keep);
    Node* s = c.emit("torch.ops.aten.sum.dim_IntList", std::move(sum_args), {}, "sum", n.meta.val);
    Node* r =
        c.emit("torch.ops.aten.pow.Tensor_Scalar",
               {Argument::from_node(s), Argument::from_float(1.0 / p)}, {}, "pow", n.meta.val);
    return c.replace_with(r);
}

// ATen's _matmul_impl takes its batched path (no folding) when both operands have
// at least 3 dims.
bool matmul_decomposes(const Node& n) {
    if (n.args().size() < 2) return false;
    const TensorMeta *a = tensor_meta(n.args()[0]), *b = tensor_meta(n.args()[1]);
    return a && b && a->sizes.size() >= 3 && b->sizes.size() >= 3 && n.meta.val.is_tensor();
}

// matmul(a: [..., n, m], b: [..., m, p]) -> expand each to the broadcast batch, reshape to
// [batch, n, m] / [batch, m, p] (reshape's rule: a view, or clone + view), bmm, and
// _unsafe_view to [..., n, p]
Status rule_matmul(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta &a = *tensor_meta(n.args()[0]), &b = *tensor_meta(n.args()[1]);
    const std::vector<int64_t> ab(a.sizes.begin(), a.sizes.end() - 2),
        bb(b.sizes.begin(), b.sizes.end() - 2);
    const size_t rank = std::max(ab.size(), bb.size());
    std::vector<int64_t> batch(rank);
    for (size_t k = 0; k < rank; ++k) {
        const int64_t da = k < rank - ab.size() ? 1 : ab[k - (rank - ab.size())];
        const int64_t db = k < rank - bb.size() ? 1 : bb[k - (rank - bb.size())];
        if (da != db && da != 1 && db != 1)
            return rule_error(n, "matmul's batch dims do not broadcast");
        batch[k] = da == 1 ? db : da;
    }
    int64_t product = 1;
    for (int64_t s : batch) product *= s;
    const bool rg = n.meta.val.tensor.requires_grad;
    auto side = [&](const Argument& x, const TensorMeta& m) {
        std::vector<int64_t> want = batch;
        want.push_back(m.sizes[m.sizes.size() - 2]);
        want.push_back(m.sizes.back());
        Node* e = c.emit("torch.ops.aten.expand.default", {x, Argument::int_list(want)}, {},
                         "expand", expanded(m, want, rg));
        const std::vector<int64_t> flat = {product, want[want.size() - 2], want.back()};
        return c.emit("torch.ops.aten.reshape.default",
                      {Argument::from_node(e), Argument::int_list(flat)}, {}, "reshape",
                      tensor_val(m.dtype, flat, rg));
    };
    Node* ra = side(n.args()[0], a);
    Node* rb = side(n.args()[1], b);
    Node* mm = c.emit(
        "torch.ops.aten.bmm.default", {Argument::from_node(ra), Argument::from_node(rb)}, {}, "bmm",
        tensor_val(a.dtype, {product, a.sizes[a.sizes.size() - 2], b.sizes.back()}, rg));
    Node* v = c.emit("torch.ops.aten._unsafe_view.default",
                     {Argument::from_node(mm), Argument::int_list(n.meta.val.tensor.sizes)}, {},
                     "_unsafe_view", n.meta.val);
    return c.replace_with(v);
}

// linear(x, w) without a bias on an input of rank > 2: ATen's matmul(x, w.t()), which
// folds x to 2-D
bool linear_fold_applies(const Node& n) {
    const TensorMeta* x = n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
    const TensorMeta* w = n.args().size() < 2 ? nullptr : tensor_meta(n.args()[1]);
    return x && w && x->sizes.size() > 2 && w->sizes.size() == 2 &&
           arg_or_default(n, 2).is_none() && n.meta.val.is_tensor();
}

// linear(x[..., K], w[N, K]) -> permute(w, [1, 0]), reshape(x, [M, K]) (a view, or clone +
// view), mm, _unsafe_view to [..., N]. A view regenerated for x after an in-place write
// (write_into_view_base) comes after the permute, where torch's trace first reads it.
Status linear_fold(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta &x = *tensor_meta(n.args()[0]), &w = *tensor_meta(n.args()[1]);
    const bool rg = n.meta.val.tensor.requires_grad;
    Node* p = c.emit("torch.ops.aten.permute.default", {n.args()[1], Argument::int_list({1, 0})},
                     {}, "permute", tensor_val(w.dtype, {w.sizes[1], w.sizes[0]}, rg));
    p->meta.val.tensor.strides = {1, w.sizes[1]};
    Node* in = n.args()[0].node;
    if (in && in->meta.other.count(kRetraceSkip) && in->users().size() == 1 &&
        in->is(OpId::view)) { // torch's trace makes it here, so it carries linear's meta
        NodeMeta m = n.meta;
        m.val = in->meta.val;
        m.other[kRetraceSkip] = in->meta.other[kRetraceSkip];
        in->meta = std::move(m);
        c.g.move_before(in, &n);
    }
    int64_t M = 1;
    for (size_t d = 0; d + 1 < x.sizes.size(); ++d) M *= x.sizes[d];
    const std::vector<int64_t> flat = {M, x.sizes.back()};
    Node* r = c.emit("torch.ops.aten.reshape.default", {n.args()[0], Argument::int_list(flat)}, {},
                     "reshape", tensor_val(x.dtype, flat, rg));
    Node* mm = c.emit("torch.ops.aten.mm.default", {Argument::from_node(r), Argument::from_node(p)},
                      {}, "mm", tensor_val(x.dtype, {M, w.sizes[0]}, rg));
    Node* v = c.emit("torch.ops.aten._unsafe_view.default",
                     {Argument::from_node(mm), Argument::int_list(n.meta.val.tensor.sizes)}, {},
                     "_unsafe_view", n.meta.val);
    return c.replace_with(v);
}

// Functionalization of an in-place write into view(base) (torch 2.14.1, as its trace
// prints it): the base becomes view(value, base's shape), and self's readers read a view
// of that again (two views made and dropped in between still take their names).
Node* write_into_view_base(DecompContext& c, Node* self, Node* value) {
    if (!self->is(OpId::view) || self->args().empty() || !self->args()[0].is_node()) return value;
    Node* base = self->args()[0].node;
    const TensorMeta* bm = tensor_meta(self->args()[0]);
    if (base->op() != Op::CallFunction || !bm || !self->meta.val.is_tensor()) return value;
    Node* nb = c.emit("torch.ops.aten.view.default",
                      {Argument::from_node(value), Argument::int_list(bm->sizes)}, {}, "view",
                      base->meta.val);
    Node* again = c.emit("torch.ops.aten.view.default",
                         {Argument::from_node(nb), Argument::int_list(self->meta.val.tensor.sizes)},
                         {}, "view", self->meta.val);
    again->meta.other[kRetraceSkip] = "view,view";
    c.functionalize(base, nb);
    return again;
}

} // namespace pt2lab
