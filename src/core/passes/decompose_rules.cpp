// Decomposition rules for the ops the torchvision families and the transformer
// layers reach, each written after what torch 2.14.1's run_decompositions
// prints for it: in-place activations -> functional ones, dropout (eval) ->
// nothing, view-like CompositeImplicit ops -> view / clone, and the Core ATen
// forms of hardswish, hardsigmoid, silu, transpose, softmax, layer_norm, split.
#include <algorithm>
#include <cmath>
#include <optional>

#include "graph/op_schema.h"
#include "passes/decomp_context.h"
#include "passes/meta_strides.h"

namespace pt2lab {

using namespace decomp;

namespace {

// torch's is_contiguous: strides are the contiguous ones, ignoring size-1 dims.
bool is_contiguous(const TensorMeta& m) {
    int64_t expected = 1;
    for (size_t k = m.sizes.size(); k-- > 0;) {
        if (m.sizes[k] == 1) continue;
        if (k < m.strides.size() && m.strides[k] != expected) return false;
        expected *= m.sizes[k];
    }
    return true;
}

MetaVal with_strides(MetaVal v, std::vector<int64_t> strides) {
    if (v.is_tensor()) v.tensor.strides = std::move(strides);
    return v;
}

Argument contiguous_format() {
    return Argument::memory_format(1); // torch.contiguous_format
}

std::vector<int64_t> int_items(const Argument& a) {
    std::vector<int64_t> out;
    if (a.kind == ArgKind::Int) out.push_back(a.i);
    for (const Argument& x : a.items)
        if (x.kind == ArgKind::Int) out.push_back(x.i);
    return out;
}

// The call's arguments in schema order with the trailing defaults dropped, as
// export records them.
std::vector<Argument> trimmed(const std::string& target, std::vector<Argument> args) {
    const OpInfo* op = find_op(target);
    Kwargs none;
    if (op) drop_trailing_defaults(op->schema, args, none);
    return args;
}

// An in-place op -> its functional form; self's later readers (and its buffer) take the
// result, as functionalization does.
Status to_functional(DecompContext& c, const char* target, const char* name) {
    Node& n = *c.node;
    if (n.args().empty() || !n.args()[0].is_node())
        return rule_error(n, n.target() + " writes to something that is not a node");
    Node* self = n.args()[0].node;
    Node* f = c.emit(target, n.args(), n.kwargs(), name, n.meta.val);
    if (Status s = c.replace_with(f); !s.ok()) return s;
    c.functionalize(self, f);
    return {};
}

const TensorMeta* input_meta(const Node& n) {
    return n.args().empty() ? nullptr : tensor_meta(n.args()[0]);
}

} // namespace

// reshape(x, shape) -> view(x, shape) when a view can express it (ATen's computeStride
// on the input's strides), else clone(x, memory_format=torch.contiguous_format) +
// _unsafe_view(clone, shape) (whose Core ATen form is a view again)
Status rule_reshape(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta* x = input_meta(n);
    if (!x || !n.meta.val.is_tensor())
        return rule_error(n, "reshape's input has no shape metadata");
    const std::vector<int64_t>& out = n.meta.val.tensor.sizes;
    auto strides = view_strides(x->sizes, x->strides, out);
    if (strides) {
        Node* v = c.emit("torch.ops.aten.view.default", {n.args()[0], n.args()[1]}, {}, "view",
                         with_strides(n.meta.val, *strides));
        return c.replace_with(v);
    }
    MetaVal cloned = n.args()[0].node->meta.val;
    cloned.tensor.strides = contiguous_strides(x->sizes);
    Node* cl = c.emit("torch.ops.aten.clone.default", {n.args()[0]},
                      {{"memory_format", contiguous_format()}}, "clone", cloned);
    Node* v = c.emit("torch.ops.aten._unsafe_view.default", {Argument::from_node(cl), n.args()[1]},
                     {}, "_unsafe_view", with_strides(n.meta.val, contiguous_strides(out)));
    return c.replace_with(v);
}

// _unsafe_view(x, size) -> view(x, size)
Status rule_unsafe_view(DecompContext& c) {
    Node& n = *c.node;
    Node* v =
        c.emit("torch.ops.aten.view.default", {n.args()[0], n.args()[1]}, {}, "view", n.meta.val);
    return c.replace_with(v);
}

Status rule_hardtanh_(DecompContext& c) {
    return to_functional(c, "torch.ops.aten.hardtanh.default", "hardtanh");
}
Status rule_hardswish_(DecompContext& c) {
    return to_functional(c, "torch.ops.aten.hardswish.default", "hardswish");
}
Status rule_silu_(DecompContext& c) {
    return to_functional(c, "torch.ops.aten.silu.default", "silu");
}

bool dropout_is_eval(const Node& n) {
    return n.args().size() >= 3 && n.args()[2].kind == ArgKind::Bool && !n.args()[2].b;
}

// dropout(x, p, False) / dropout_(x, p, False) -> x (the identity in eval)
Status rule_dropout(DecompContext& c) {
    Node& n = *c.node;
    if (n.args().empty() || !n.args()[0].is_node())
        return rule_error(n, "dropout's input is not a node");
    return c.replace_with(n.args()[0].node);
}

// contiguous(x) -> clone(x, memory_format=torch.contiguous_format)
Status rule_contiguous(DecompContext& c) {
    Node& n = *c.node;
    Node* cl = c.emit("torch.ops.aten.clone.default", {n.args()[0]},
                      {{"memory_format", contiguous_format()}}, "clone", n.meta.val);
    return c.replace_with(cl);
}

// chunk's and split's arguments: the literal positive int at 1 (`count`: chunks or
// split_size), the literal dim at 2, and the input's size along that dim.
Status split_args(const Node& n, const char* op, const char* count_name, int64_t& count,
                  Argument& dim, int64_t& size) {
    const TensorMeta* x = input_meta(n);
    Argument k = arg_or_default(n, 1);
    dim = arg_or_default(n, 2);
    if (!x || k.kind != ArgKind::Int || dim.kind != ArgKind::Int || k.i <= 0)
        return rule_error(n, std::string(op) + " needs shape metadata and a literal positive " +
                                 count_name + " and dim");
    auto d = wrap_dim_index(dim.i, static_cast<int64_t>(x->sizes.size()));
    if (!d) return rule_error(n, std::string(op) + "'s dim is out of range");
    count = k.i;
    size = x->sizes[static_cast<size_t>(*d)];
    return {};
}

// chunk(x, chunks, dim) -> split.Tensor(x, ceil(size(dim) / chunks), dim)
Status rule_chunk(DecompContext& c) {
    Node& n = *c.node;
    int64_t chunks = 0, size = 0;
    Argument dim;
    if (Status st = split_args(n, "chunk", "chunks", chunks, dim, size); !st.ok()) return st;
    const int64_t step = (size + chunks - 1) / chunks;
    const char* target = "torch.ops.aten.split.Tensor";
    Node* s = c.emit(target, trimmed(target, {n.args()[0], Argument::from_int(step), dim}), {},
                     "split", n.meta.val);
    return c.replace_with(s);
}

// split.Tensor(x, split_size, dim) -> split_with_sizes(x, [split_size, ..., rest], dim)
Status rule_split(DecompContext& c) {
    Node& n = *c.node;
    int64_t size = 0, total = 0;
    Argument dim;
    if (Status st = split_args(n, "split", "split_size", size, dim, total); !st.ok()) return st;
    std::vector<int64_t> sizes;
    for (int64_t s = 0; s < total; s += size) sizes.push_back(std::min(size, total - s));
    const char* target = "torch.ops.aten.split_with_sizes.default";
    Node* s = c.emit(target, trimmed(target, {n.args()[0], Argument::int_list(sizes), dim}), {},
                     "split_with_sizes", n.meta.val);
    return c.replace_with(s);
}

// transpose.int(x, dim0, dim1) -> permute(x, <identity with dim0 and dim1 swapped>)
Status rule_transpose(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta* x = input_meta(n);
    Argument a0 = arg_or_default(n, 1), a1 = arg_or_default(n, 2);
    if (!x || a0.kind != ArgKind::Int || a1.kind != ArgKind::Int)
        return rule_error(n, "transpose needs shape metadata and literal dims");
    const int64_t r = static_cast<int64_t>(x->sizes.size());
    auto d0 = wrap_dim_index(a0.i, r), d1 = wrap_dim_index(a1.i, r);
    if (!d0 || !d1) return rule_error(n, "transpose's dims are out of range");
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < r; ++d) perm.push_back(d == *d0 ? *d1 : d == *d1 ? *d0 : d);
    Node* p = c.emit("torch.ops.aten.permute.default", {n.args()[0], Argument::int_list(perm)}, {},
                     "permute", n.meta.val);
    return c.replace_with(p);
}

// swapaxes(x, a, b) -> transpose.int(x, a, b) (its CompositeImplicit form)
Status rule_swapaxes(DecompContext& c) {
    Node& n = *c.node;
    Node* t = c.emit("torch.ops.aten.transpose.int", n.args(), {}, "transpose", n.meta.val);
    return c.replace_with(t);
}

// squeeze.dim(x, d) -> squeeze.dims(x, [d])
Status rule_squeeze_dim(DecompContext& c) {
    Node& n = *c.node;
    Argument d = arg_or_default(n, 1);
    if (d.kind != ArgKind::Int) return rule_error(n, "squeeze's dim is not a literal int");
    Node* s = c.emit("torch.ops.aten.squeeze.dims", {n.args()[0], Argument::int_list({d.i})}, {},
                     "squeeze", n.meta.val);
    return c.replace_with(s);
}

bool softmax_no_dtype(const Node& n) {
    return arg_or_default(n, 2).is_none();
}

// softmax.int(x, dim) -> _softmax(x, dim, False)
Status rule_softmax(DecompContext& c) {
    Node& n = *c.node;
    Node* s = c.emit("torch.ops.aten._softmax.default",
                     {n.args()[0], arg_or_default(n, 1), Argument::from_bool(false)}, {},
                     "_softmax", n.meta.val);
    return c.replace_with(s);
}

// layer_norm(x, shape, w, b, eps, cudnn) -> native_layer_norm(x, shape, w, b, eps) + getitem 0
Status rule_layer_norm(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta* x = input_meta(n);
    Argument shape = arg_or_default(n, 1);
    if (!x || !n.meta.val.is_tensor()) return rule_error(n, "layer_norm has no shape metadata");
    const size_t k = int_items(shape).size();
    if (k == 0 || k > x->sizes.size()) return rule_error(n, "layer_norm's normalized_shape is odd");
    std::vector<int64_t> stat(x->sizes.begin(), x->sizes.end() - static_cast<long>(k));
    stat.insert(stat.end(), k, 1);
    MetaVal s = tensor_val(x->dtype, stat);
    std::vector<MetaVal> vals = {n.meta.val, s, s};
    Node* f = c.emit("torch.ops.aten.native_layer_norm.default",
                     {arg_or_default(n, 0), shape, arg_or_default(n, 2), arg_or_default(n, 3),
                      arg_or_default(n, 4)},
                     {}, "native_layer_norm", tuple_val(vals));
    auto items = c.getitems(f, vals);
    return c.replace_with(items[0]);
}

// silu(x) -> mul(x, sigmoid(x))
Status rule_silu(DecompContext& c) {
    Node& n = *c.node;
    Argument x = n.args()[0];
    Node* s = c.emit("torch.ops.aten.sigmoid.default", {x}, {}, "sigmoid", n.meta.val);
    Node* m =
        c.emit("torch.ops.aten.mul.Tensor", {x, Argument::from_node(s)}, {}, "mul", n.meta.val);
    return c.replace_with(m);
}

namespace {
// relu6(x + 3): add(x, 3), clamp(add, 0), clamp(clamp, None, 6); returns the last
Node* relu6_of_x_plus_3(DecompContext& c, const Argument& x, const MetaVal& val) {
    Node* add = c.emit("torch.ops.aten.add.Tensor", {x, Argument::from_int(3)}, {}, "add", val);
    Node* lo = c.emit("torch.ops.aten.clamp.default",
                      {Argument::from_node(add), Argument::from_int(0)}, {}, "clamp", val);
    return c.emit("torch.ops.aten.clamp.default",
                  {Argument::from_node(lo), Argument::none(), Argument::from_int(6)}, {}, "clamp",
                  val);
}
} // namespace

// hardsigmoid(x) -> div(clamp(clamp(add(x, 3), 0), None, 6), 6)
Status rule_hardsigmoid(DecompContext& c) {
    Node& n = *c.node;
    Node* r = relu6_of_x_plus_3(c, n.args()[0], n.meta.val);
    Node* d = c.emit("torch.ops.aten.div.Tensor", {Argument::from_node(r), Argument::from_int(6)},
                     {}, "div", n.meta.val);
    return c.replace_with(d);
}

// hardswish(x) -> div(mul(x, clamp(clamp(add(x, 3), 0), None, 6)), 6)
Status rule_hardswish(DecompContext& c) {
    Node& n = *c.node;
    Argument x = n.args()[0];
    Node* r = relu6_of_x_plus_3(c, x, n.meta.val);
    Node* m =
        c.emit("torch.ops.aten.mul.Tensor", {x, Argument::from_node(r)}, {}, "mul", n.meta.val);
    Node* d = c.emit("torch.ops.aten.div.Tensor", {Argument::from_node(m), Argument::from_int(6)},
                     {}, "div", n.meta.val);
    return c.replace_with(d);
}

// linear on an input of rank > 2 (contiguous, with a bias, as ATen's _flatten_nd_linear):
// view(x, [M, K]) + permute(w, [1, 0]) + addmm(b, view, permute) + view(addmm, [..., N])
Status linear_nd(DecompContext& c) {
    Node& n = *c.node;
    Argument x = arg_or_default(n, 0), w = arg_or_default(n, 1), b = arg_or_default(n, 2);
    const TensorMeta* xm = tensor_meta(x);
    const TensorMeta* wm = tensor_meta(w);
    if (!xm || !wm || wm->sizes.size() != 2 || !n.meta.val.is_tensor())
        return rule_error(n, "linear has no shape metadata");
    int64_t M = 1;
    for (size_t d = 0; d + 1 < xm->sizes.size(); ++d) M *= xm->sizes[d];
    const std::vector<int64_t> flat = {M, xm->sizes.back()};
    Node* v = c.emit("torch.ops.aten.view.default", {x, Argument::int_list(flat)}, {}, "view",
                     tensor_val(xm->dtype, flat));
    Node* p = c.emit(
        "torch.ops.aten.permute.default", {w, Argument::int_list({1, 0})}, {}, "permute",
        with_strides(tensor_val(wm->dtype, {wm->sizes[1], wm->sizes[0]}), {1, wm->sizes[1]}));
    Node* mm =
        c.emit("torch.ops.aten.addmm.default", {b, Argument::from_node(v), Argument::from_node(p)},
               {}, "addmm", tensor_val(xm->dtype, {M, wm->sizes[0]}));
    Node* out = c.emit("torch.ops.aten.view.default",
                       {Argument::from_node(mm), Argument::int_list(n.meta.val.tensor.sizes)}, {},
                       "view", n.meta.val);
    return c.replace_with(out);
}

namespace {
// Strides of an elementwise result (TensorIterator): the input's own when it is
// non-overlapping and dense, else contiguous.
std::vector<int64_t> elementwise_strides(const TensorMeta& m) {
    std::vector<size_t> order(m.sizes.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return m.strides[a] < m.strides[b]; });
    int64_t expected = 1;
    for (size_t k : order) {
        if (m.sizes[k] == 1) continue;
        if (m.strides[k] != expected) return contiguous_strides(m.sizes);
        expected *= m.sizes[k];
    }
    return m.strides;
}

TensorMeta meta_like(ScalarType dt, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    TensorMeta m;
    m.dtype = dt;
    m.sizes = std::move(sizes);
    m.strides = std::move(strides);
    return m;
}

MetaVal val_of(const TensorMeta& m) {
    return with_strides(tensor_val(m.dtype, m.sizes), m.strides);
}

struct Made {
    Node* node;
    TensorMeta meta;
};

Made emit_meta(DecompContext& c, const std::string& target, std::vector<Argument> args,
               Kwargs kwargs, const std::string& name, TensorMeta m) {
    Node* n = c.emit(target, std::move(args), std::move(kwargs), name, val_of(m));
    return {n, std::move(m)};
}

// matmul's reshape of an expanded operand to [batch, rows, cols]: a view when the
// strides allow one, else clone(contiguous_format) + view (Core ATen's _unsafe_view).
Made reshape_3d(DecompContext& c, const Made& x, const std::vector<int64_t>& shape) {
    if (auto st = view_strides(x.meta.sizes, x.meta.strides, shape))
        return emit_meta(c, "torch.ops.aten.view.default",
                         {Argument::from_node(x.node), Argument::int_list(shape)}, {}, "view",
                         meta_like(x.meta.dtype, shape, *st));
    Made cl = emit_meta(c, "torch.ops.aten.clone.default", {Argument::from_node(x.node)},
                        {{"memory_format", contiguous_format()}}, "clone",
                        meta_like(x.meta.dtype, x.meta.sizes, contiguous_strides(x.meta.sizes)));
    return emit_meta(c, "torch.ops.aten.view.default",
                     {Argument::from_node(cl.node), Argument::int_list(shape)}, {}, "view",
                     meta_like(x.meta.dtype, shape, contiguous_strides(shape)));
}

std::vector<int64_t> permuted(const std::vector<int64_t>& v, const std::vector<int64_t>& perm) {
    std::vector<int64_t> out;
    for (int64_t p : perm) out.push_back(v[static_cast<size_t>(p)]);
    return out;
}

Made permute_of(DecompContext& c, const Made& x, const std::vector<int64_t>& perm) {
    return emit_meta(
        c, "torch.ops.aten.permute.default",
        {Argument::from_node(x.node), Argument::int_list(perm)}, {}, "permute",
        meta_like(x.meta.dtype, permuted(x.meta.sizes, perm), permuted(x.meta.strides, perm)));
}

// expand(x, x's own sizes) then the 3-D reshape: the batch dims folded into one
Made batch_operand(DecompContext& c, const Made& x) {
    Made e = emit_meta(c, "torch.ops.aten.expand.default",
                       {Argument::from_node(x.node), Argument::int_list(x.meta.sizes)}, {},
                       "expand", x.meta);
    const size_t r = x.meta.sizes.size();
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < r; ++d) batch *= x.meta.sizes[d];
    return reshape_3d(c, e, {batch, x.meta.sizes[r - 2], x.meta.sizes[r - 1]});
}

// bmm of two 3-D operands, viewed back to [*batch, rows, cols]
Made bmm_back(DecompContext& c, const Made& a, const Made& b, std::vector<int64_t> out) {
    std::vector<int64_t> flat = {a.meta.sizes[0], a.meta.sizes[1], b.meta.sizes[2]};
    Made mm = emit_meta(c, "torch.ops.aten.bmm.default",
                        {Argument::from_node(a.node), Argument::from_node(b.node)}, {}, "bmm",
                        meta_like(a.meta.dtype, flat, contiguous_strides(flat)));
    return emit_meta(c, "torch.ops.aten.view.default",
                     {Argument::from_node(mm.node), Argument::int_list(out)}, {}, "view",
                     meta_like(a.meta.dtype, out, contiguous_strides(out)));
}
} // namespace

bool sdpa_plain(const Node& n) {
    const TensorMeta* q = input_meta(n);
    if (!q || q->sizes.size() != 4 || n.args().size() < 3) return false;
    for (size_t k = 0; k < 3; ++k)
        if (!tensor_meta(n.args()[k]) || tensor_meta(n.args()[k])->sizes.size() != 4) return false;
    Argument mask = arg_or_default(n, 3), p = arg_or_default(n, 4), causal = arg_or_default(n, 5);
    const bool no_dropout =
        (p.kind == ArgKind::Float && p.f == 0.0) || (p.kind == ArgKind::Int && p.i == 0);
    return mask.is_none() && no_dropout && causal.kind == ArgKind::Bool && !causal.b &&
           arg_or_default(n, 6).is_none() && tensor_meta(n.args()[1])->sizes[1] == q->sizes[1];
}

// scaled_dot_product_attention(q[N, H, L, E], k[N, H, S, E], v[N, H, S, Ev]) (no mask, no
// dropout, not causal) -> torch 2.14's math path, as its Core ATen form prints:
// q * sqrt(scale) and k^T * sqrt(scale), matmul (expand + view + bmm + view), _softmax,
// the fully-masked-row guard (eq -inf, logical_not, any, logical_not, full_like 0, where),
// matmul with v, then the [L, N, H, Ev] layout of the flash kernel's output
// (permute, clone, permute)
Status rule_sdpa(DecompContext& c) {
    Node& n = *c.node;
    const TensorMeta *qm = tensor_meta(n.args()[0]), *km = tensor_meta(n.args()[1]),
                     *vm = tensor_meta(n.args()[2]);
    if (!qm || !km || !vm || !n.meta.val.is_tensor())
        return rule_error(n, "scaled_dot_product_attention has no shape metadata");
    const int64_t N = qm->sizes[0], H = qm->sizes[1], L = qm->sizes[2], E = qm->sizes[3];
    const int64_t S = km->sizes[2], Ev = vm->sizes[3];
    const double factor = std::sqrt(1.0 / std::sqrt(double(E)));
    const ScalarType dt = qm->dtype;
    Made q{n.args()[0].node, *qm}, k{n.args()[1].node, *km}, v{n.args()[2].node, *vm};
    Made qs = emit_meta(c, "torch.ops.aten.mul.Scalar",
                        {Argument::from_node(q.node), Argument::from_float(factor)}, {}, "mul",
                        meta_like(dt, qm->sizes, elementwise_strides(*qm)));
    Made kt = permute_of(c, k, {0, 1, 3, 2});
    Made ks = emit_meta(c, "torch.ops.aten.mul.Scalar",
                        {Argument::from_node(kt.node), Argument::from_float(factor)}, {}, "mul",
                        meta_like(dt, kt.meta.sizes, elementwise_strides(kt.meta)));
    Made a3 = batch_operand(c, qs);
    Made b3 = batch_operand(c, ks);
    Made scores = bmm_back(c, a3, b3, {N, H, L, S});
    const std::vector<int64_t> ss = scores.meta.sizes, row = {N, H, L, 1};
    Made soft = emit_meta(
        c, "torch.ops.aten._softmax.default",
        {Argument::from_node(scores.node), Argument::from_int(-1), Argument::from_bool(false)}, {},
        "_softmax", meta_like(dt, ss, contiguous_strides(ss)));
    Made eq = emit_meta(c, "torch.ops.aten.eq.Scalar",
                        {Argument::from_node(scores.node), Argument::from_float(-INFINITY)}, {},
                        "eq", meta_like(ScalarType::Bool, ss, contiguous_strides(ss)));
    Made ne = emit_meta(c, "torch.ops.aten.logical_not.default", {Argument::from_node(eq.node)}, {},
                        "logical_not", eq.meta);
    Made any =
        emit_meta(c, "torch.ops.aten.any.dim",
                  {Argument::from_node(ne.node), Argument::from_int(-1), Argument::from_bool(true)},
                  {}, "any", meta_like(ScalarType::Bool, row, contiguous_strides(row)));
    Made none = emit_meta(c, "torch.ops.aten.logical_not.default", {Argument::from_node(any.node)},
                          {}, "logical_not", any.meta);
    Made zeros = emit_meta(
        c, "torch.ops.aten.full_like.default",
        {Argument::from_node(soft.node), Argument::from_int(0)},
        {{"pin_memory", Argument::from_bool(false)}, {"memory_format", Argument::memory_format(4)}},
        "full_like", soft.meta);
    Made w = emit_meta(c, "torch.ops.aten.where.self",
                       {Argument::from_node(none.node), Argument::from_node(zeros.node),
                        Argument::from_node(soft.node)},
                       {}, "where", soft.meta);
    Made w3 = batch_operand(c, w);
    Made v3 = batch_operand(c, v);
    Made out = bmm_back(c, w3, v3, {N, H, L, Ev});
    Made p1 = permute_of(c, out, {2, 0, 1, 3});
    Made cl = emit_meta(c, "torch.ops.aten.clone.default", {Argument::from_node(p1.node)},
                        {{"memory_format", contiguous_format()}}, "clone",
                        meta_like(dt, p1.meta.sizes, contiguous_strides(p1.meta.sizes)));
    Made p2 = permute_of(c, cl, {1, 2, 0, 3});
    return c.replace_with(p2.node);
}

bool linear_nd_applies(const Node& n) {
    const TensorMeta* x = input_meta(n);
    return x && x->sizes.size() > 2 && is_contiguous(*x) && !arg_or_default(n, 2).is_none();
}

} // namespace pt2lab
