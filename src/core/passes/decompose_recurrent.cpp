// Core ATen rules for the recurrent layers (nn.LSTM, nn.GRU) and their zero
// initial state, written after what torch 2.14.1's run_decompositions prints:
// the layer unrolled over time (torch/_decomp/decompositions.py lstm_impl /
// gru_impl), node for node in torch's order. One layer, one direction, with
// biases, batch_first: other recurrent layers keep their node (reported as kept
// without a rule) rather than get an order nobody compared with torch's.
#include <optional>

#include "graph/op_schema.h"
#include "passes/decomp_context.h"

namespace pt2lab {

using namespace decomp;

namespace {

// Emits the unrolled layer's nodes (float32 values of the given sizes), trailing
// default arguments dropped as torch's printer shows them.
struct Unroll {
    DecompContext& c;
    bool grad; // the layer's outputs require grad (its parameters do)

    Node* op(const char* target, std::vector<Argument> args, const char* name,
             std::vector<int64_t> sizes, bool from_params = true) {
        if (const OpInfo* info = find_op(target)) {
            Kwargs none;
            drop_trailing_defaults(info->schema, args, none);
        }
        return c.emit(target, std::move(args), {}, name,
                      tensor_val(ScalarType::Float, std::move(sizes), from_params && grad));
    }
    static Argument node(Node* n) { return Argument::from_node(n); }
    static Argument ints(std::vector<int64_t> v) { return Argument::int_list(v); }
    static Argument i(int64_t v) { return Argument::from_int(v); }

    Node* slice(Node* x, int64_t start, std::vector<int64_t> sizes, bool from_params) {
        return op("torch.ops.aten.slice.Tensor", {node(x), i(0), i(start), i(start + 1)}, "slice",
                  std::move(sizes), from_params);
    }
    Node* squeeze0(Node* x, std::vector<int64_t> sizes, bool from_params = true) {
        return op("torch.ops.aten.squeeze.dims", {node(x), ints({0})}, "squeeze", std::move(sizes),
                  from_params);
    }
    Node* permute(Argument x, std::vector<int64_t> perm, std::vector<int64_t> sizes,
                  bool from_params) {
        return op("torch.ops.aten.permute.default", {std::move(x), ints(std::move(perm))},
                  "permute", std::move(sizes), from_params);
    }
    Node* view(Node* x, std::vector<int64_t> sizes, bool from_params = true) {
        return op("torch.ops.aten.view.default", {node(x), ints(sizes)}, "view", sizes,
                  from_params);
    }
    // F.linear(x [M, K], w [N, K], b [N]) as Core ATen has it: permute(w) + addmm
    Node* linear(Node* x, const Argument& w, const Argument& b, int64_t M, int64_t K, int64_t N) {
        Node* wt = permute(w, {1, 0}, {K, N}, true);
        return op("torch.ops.aten.addmm.default", {b, node(x), node(wt)}, "addmm", {M, N});
    }
    std::vector<Node*> split(Node* x, int64_t parts, int64_t H, int64_t dim,
                             std::vector<int64_t> sizes) {
        std::vector<Argument> size_list(static_cast<size_t>(parts), i(H));
        sizes[static_cast<size_t>(dim)] = H;
        std::vector<MetaVal> vals(static_cast<size_t>(parts),
                                  tensor_val(ScalarType::Float, sizes, grad));
        Node* s = op("torch.ops.aten.split_with_sizes.default",
                     {node(x), Argument::list(size_list), i(dim)}, "split_with_sizes", {});
        s->meta.val = tuple_val(vals);
        return c.getitems(s, vals);
    }
    Node* unary(const char* target, const char* name, Node* x, std::vector<int64_t> sizes) {
        return op(target, {node(x)}, name, std::move(sizes));
    }
    Node* binary(const char* target, const char* name, Node* a, Node* b,
                 std::vector<int64_t> sizes) {
        return op(target, {node(a), node(b)}, name, std::move(sizes));
    }
    Node* cat(const std::vector<Node*>& xs, std::vector<int64_t> sizes) {
        std::vector<Argument> items;
        for (Node* x : xs) items.push_back(node(x));
        return op("torch.ops.aten.cat.default", {Argument::list(items)}, "cat", std::move(sizes));
    }
};

// The layer's geometry, read from the node's metadata.
struct Layer {
    int64_t T = 0, B = 0, I = 0, H = 0;
    Argument x;
    std::vector<Node*> state;     // h0 (and c0)
    std::vector<Argument> params; // w_ih, w_hh, b_ih, b_hh
    bool grad = false;
};

bool literal_bool(const Argument& a, bool want) {
    return a.kind == ArgKind::Bool && a.b == want;
}

// Whether the node is a one-layer, one-direction, batch_first layer with biases whose
// shapes are known and whose outputs are each read through getitem.
std::optional<Layer> layer_of(const Node& n, size_t states) {
    if (n.args().size() < 9) return std::nullopt;
    const auto& a = n.args();
    if (!literal_bool(a[3], true) || a[4].kind != ArgKind::Int || a[4].i != 1 ||
        !literal_bool(a[7], false) || !literal_bool(a[8], true))
        return std::nullopt;
    Layer l;
    l.x = a[0];
    const TensorMeta* x = tensor_meta(a[0]);
    if (!x || x->sizes.size() != 3) return std::nullopt;
    l.B = x->sizes[0];
    l.T = x->sizes[1];
    l.I = x->sizes[2];
    std::vector<Argument> hx = states == 1 ? std::vector<Argument>{a[1]} : a[1].items;
    if ((states == 2 && a[1].kind != ArgKind::List) || hx.size() != states) return std::nullopt;
    for (const Argument& h : hx) {
        const TensorMeta* m = tensor_meta(h);
        if (!m || m->sizes.size() != 3 || m->sizes[0] != 1 || m->sizes[1] != l.B)
            return std::nullopt;
        l.H = m->sizes[2];
        l.state.push_back(h.node);
    }
    if (a[2].kind != ArgKind::List || a[2].items.size() != 4) return std::nullopt;
    for (const Argument& p : a[2].items) {
        const TensorMeta* m = tensor_meta(p);
        if (!m) return std::nullopt;
        l.grad = l.grad || m->requires_grad;
        l.params.push_back(p);
    }
    if (l.T < 1) return std::nullopt;
    for (const Node* u : n.users())
        if (!u->is(OpId::getitem) || u->args().size() < 2 || u->args()[1].kind != ArgKind::Int ||
            u->args()[1].i < 0 || u->args()[1].i >= int64_t(states) + 1)
            return std::nullopt;
    return l;
}

// The layer's getitem readers read `outputs` instead; they and the layer go.
Status replace_outputs(DecompContext& c, const std::vector<Node*>& outputs) {
    std::vector<Node*> users = c.node->users();
    for (Node* u : users) {
        u->replace_all_uses_with(outputs[static_cast<size_t>(u->args()[1].i)]);
        if (Status s = c.erase_later_node(u); !s.ok()) return s;
    }
    return c.g.erase_node(c.node);
}

} // namespace

bool lstm_decomposes(const Node& n) {
    return layer_of(n, 2).has_value();
}
bool gru_decomposes(const Node& n) {
    return layer_of(n, 1).has_value();
}

// zeros(size, dtype, layout, device, pin_memory) -> full(size, 0, ...), every keyword written
Status rule_zeros(DecompContext& c) {
    Node& n = *c.node;
    Argument dtype = arg_or_default(n, 1), layout = arg_or_default(n, 2);
    Argument device = arg_or_default(n, 3), pin = arg_or_default(n, 4);
    Kwargs kw = {
        {"dtype", dtype.kind == ArgKind::None ? Argument::from_dtype(ScalarType::Float) : dtype},
        {"layout", layout.kind == ArgKind::None ? Argument::layout(7) : layout}, // torch.strided
        {"device", device.kind == ArgKind::None ? Argument::device("cpu") : device},
        {"pin_memory", pin.kind == ArgKind::None ? Argument::from_bool(false) : pin}};
    Node* f = c.emit("torch.ops.aten.full.default", {arg_or_default(n, 0), Argument::from_int(0)},
                     std::move(kw), "full", n.meta.val);
    return c.replace_with(f);
}

// lstm.input -> per time step: h @ w_hh^T + b_hh + the step's precomputed input, split
// into four gates, sigmoid / tanh, the new cell and hidden state; cat of the hidden states
Status rule_lstm(DecompContext& c) {
    auto layer = layer_of(*c.node, 2);
    if (!layer) return rule_error(*c.node, "lstm: not a one-layer batch_first LSTM with biases");
    const Layer& l = *layer;
    const int64_t T = l.T, B = l.B, I = l.I, H = l.H, G = 4 * H;
    Unroll u{c, l.grad};
    // hidden = list(zip(hx[0], hx[1])): each state's layer 0
    Node* h0 = u.squeeze0(u.slice(l.state[0], 0, {1, B, H}, false), {B, H}, false);
    Node* c0 = u.squeeze0(u.slice(l.state[1], 0, {1, B, H}, false), {B, H}, false);
    Node* xt = u.permute(l.x, {1, 0, 2}, {T, B, I}, false);
    Node* hx = u.op("torch.ops.aten.unsqueeze.default", {u.node(h0), u.i(0)}, "unsqueeze",
                    {1, B, H}, false);
    Node* cx = u.op("torch.ops.aten.unsqueeze.default", {u.node(c0), u.i(0)}, "unsqueeze",
                    {1, B, H}, false);
    Node* flat = u.view(xt, {T * B, I}, false);
    Node* pre = u.view(u.linear(flat, l.params[0], l.params[2], T * B, I, G), {T, B, G});
    std::vector<Node*> steps;
    for (int64_t t = 0; t < T; ++t) steps.push_back(u.slice(pre, t, {1, B, G}, true));
    for (Node*& s : steps) s = u.squeeze0(s, {B, G});
    std::vector<Node*> hs;
    for (int64_t t = 0; t < T; ++t) {
        Node* hh =
            u.view(u.linear(u.view(hx, {B, H}), l.params[1], l.params[3], B, H, G), {1, B, G});
        Node* gates = u.binary("torch.ops.aten.add.Tensor", "add", hh, steps[size_t(t)], {1, B, G});
        auto g = u.split(gates, 4, H, 2, {1, B, G});
        const std::vector<int64_t> s = {1, B, H};
        Node* in_gate = u.unary("torch.ops.aten.sigmoid.default", "sigmoid", g[0], s);
        Node* forget_gate = u.unary("torch.ops.aten.sigmoid.default", "sigmoid", g[1], s);
        Node* cell_gate = u.unary("torch.ops.aten.tanh.default", "tanh", g[2], s);
        Node* out_gate = u.unary("torch.ops.aten.sigmoid.default", "sigmoid", g[3], s);
        Node* kept = u.binary("torch.ops.aten.mul.Tensor", "mul", forget_gate, cx, s);
        Node* added = u.binary("torch.ops.aten.mul.Tensor", "mul", in_gate, cell_gate, s);
        cx = u.binary("torch.ops.aten.add.Tensor", "add", kept, added, s);
        hx = u.binary("torch.ops.aten.mul.Tensor", "mul", out_gate,
                      u.unary("torch.ops.aten.tanh.default", "tanh", cx, s), s);
        hs.push_back(hx);
    }
    Node* seq = u.cat(hs, {T, B, H});
    Node* h_last = u.squeeze0(hx, {B, H});
    Node* c_last = u.squeeze0(cx, {B, H});
    Node* out = u.permute(u.node(seq), {1, 0, 2}, {B, T, H}, true);
    Node* h_n = u.view(u.cat({h_last}, {B, H}), {1, B, H});
    Node* c_n = u.view(u.cat({c_last}, {B, H}), {1, B, H});
    return replace_outputs(c, {out, h_n, c_n});
}

// gru.input -> per time step: the step's precomputed input and h @ w_hh^T + b_hh, each split
// into three gates; reset and update gates, the new gate, (h - new) * update + new
Status rule_gru(DecompContext& c) {
    auto layer = layer_of(*c.node, 1);
    if (!layer) return rule_error(*c.node, "gru: not a one-layer batch_first GRU with biases");
    const Layer& l = *layer;
    const int64_t T = l.T, B = l.B, I = l.I, H = l.H, G = 3 * H;
    Unroll u{c, l.grad};
    Node* h0 = u.squeeze0(u.slice(l.state[0], 0, {1, B, H}, false), {B, H}, false);
    Node* xt = u.permute(l.x, {1, 0, 2}, {T, B, I}, false);
    Node* flat = u.view(xt, {T * B, I}, false);
    Node* pre = u.view(u.linear(flat, l.params[0], l.params[2], T * B, I, G), {T, B, G});
    Node* hx = u.op("torch.ops.aten.unsqueeze.default", {u.node(h0), u.i(0)}, "unsqueeze",
                    {1, B, H}, false);
    std::vector<Node*> steps;
    for (int64_t t = 0; t < T; ++t) steps.push_back(u.slice(pre, t, {1, B, G}, true));
    for (Node*& s : steps) s = u.squeeze0(s, {B, G});
    std::vector<Node*> hs;
    const std::vector<int64_t> s = {1, B, H};
    for (int64_t t = 0; t < T; ++t) {
        auto ig = u.split(steps[size_t(t)], 3, H, 1, {B, G});
        Node* hh =
            u.view(u.linear(u.view(hx, {B, H}), l.params[1], l.params[3], B, H, G), {1, B, G});
        auto hg = u.split(hh, 3, H, 2, {1, B, G});
        Node* reset = u.unary("torch.ops.aten.sigmoid.default", "sigmoid",
                              u.binary("torch.ops.aten.add.Tensor", "add", hg[0], ig[0], s), s);
        Node* update = u.unary("torch.ops.aten.sigmoid.default", "sigmoid",
                               u.binary("torch.ops.aten.add.Tensor", "add", hg[1], ig[1], s), s);
        Node* scaled = u.binary("torch.ops.aten.mul.Tensor", "mul", hg[2], reset, s);
        Node* fresh = u.unary("torch.ops.aten.tanh.default", "tanh",
                              u.binary("torch.ops.aten.add.Tensor", "add", ig[2], scaled, s), s);
        Node* diff = u.binary("torch.ops.aten.sub.Tensor", "sub", hx, fresh, s);
        hx = u.binary("torch.ops.aten.add.Tensor", "add",
                      u.binary("torch.ops.aten.mul.Tensor", "mul", diff, update, s), fresh, s);
        hs.push_back(hx);
    }
    Node* seq = u.cat(hs, {T, B, H});
    Node* h_last = u.squeeze0(hx, {B, H});
    Node* out = u.permute(u.node(seq), {1, 0, 2}, {B, T, H}, true);
    Node* h_n = u.view(u.cat({h_last}, {B, H}), {1, B, H});
    return replace_outputs(c, {out, h_n});
}

} // namespace pt2lab
