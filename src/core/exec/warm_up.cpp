#include "exec/warm_up.h"

#include "exec/interpreter.h"
#include "util/rng.h"

namespace pt2lab {

namespace {

// The graph: a small CNN stage (every conv path of the fast kernels: Winograd,
// im2col with stride, pointwise, depthwise 3x3 and 5x5, a 3-channel 7x7 stem,
// a half-width last GEMM panel, conv + batch norm + activation fused),
// the norms and activations the torchvision families use, pooling and a head,
// then a transformer block's ops. Small: what a first call costs in V8 is mostly
// compiling, which any size pays; the whole run takes a few milliseconds natively.
struct WarmUpGraph {
    Graph g;
    std::vector<Value> inputs;
    SeededRng rng{20261201};

    Node* input(const std::string& name, std::vector<int64_t> sizes) {
        Tensor t = Tensor::empty(ScalarType::Float, std::move(sizes));
        for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = 0.5f * rng.normal();
        inputs.push_back(Value::of(std::make_shared<Tensor>(std::move(t))));
        return g.placeholder(name);
    }
    Node* call(const std::string& op, std::vector<Argument> args) {
        return g.call_function("torch.ops.aten." + op, std::move(args));
    }
    static Argument n(Node* x) { return Argument::from_node(x); }
    static Argument ints(std::vector<int64_t> v) { return Argument::int_list(v); }
    Node* conv(Node* x, Node* w, int64_t stride, int64_t pad, int64_t groups = 1) {
        return call("conv2d.default", {n(x), n(w), Argument::none(), ints({stride, stride}),
                                       ints({pad, pad}), ints({1, 1}), Argument::from_int(groups)});
    }
    // A batch norm's parameters, made before its conv: as in an export, whose
    // parameters are all placeholders at the top, the conv, the batch norm and
    // the activation are then consecutive and run fused (conv_fusion.h).
    struct BnParams {
        Node *weight, *bias, *mean, *var;
    };
    BnParams bn_params(int64_t c, const std::string& name) {
        BnParams p;
        p.weight = input(name + "_weight", {c});
        p.bias = input(name + "_bias", {c});
        p.mean = input(name + "_mean", {c});
        Tensor var = Tensor::empty(ScalarType::Float, {c});
        for (int64_t k = 0; k < c; ++k) var.f32()[k] = 1.0f + 0.1f * float(k % 7);
        inputs.push_back(Value::of(std::make_shared<Tensor>(std::move(var))));
        p.var = g.placeholder(name + "_var");
        return p;
    }
    Node* batch_norm(Node* x, const BnParams& p) {
        return call("batch_norm.default", {n(x), n(p.weight), n(p.bias), n(p.mean), n(p.var),
                                           Argument::from_bool(false), Argument::from_float(0.1),
                                           Argument::from_float(1e-5), Argument::from_bool(false)});
    }
};

void build(WarmUpGraph& b) {
    auto n = WarmUpGraph::n;
    auto ints = WarmUpGraph::ints;
    // The stem: 3-channel 7x7 stride 2, then a max pool. [1, 3, 32, 32] -> [1, 16, 16, 16]
    Node* image = b.input("image", {1, 3, 32, 32});
    const WarmUpGraph::BnParams bn0 = b.bn_params(16, "bn0"), bn1 = b.bn_params(16, "bn1"),
                                bn2 = b.bn_params(48, "bn2");
    Node* stem = b.conv(image, b.input("stem_w", {16, 3, 7, 7}), 2, 3);
    stem = b.call("relu_.default", {n(b.batch_norm(stem, bn0))});
    Node* x = b.call("max_pool2d.default", {n(stem), ints({3, 3}), ints({1, 1}), ints({1, 1})});
    // A residual block on Winograd convs (16 channels, 16x16: 64 tiles).
    Node* y = b.conv(x, b.input("w1", {16, 16, 3, 3}), 1, 1);
    y = b.call("relu.default", {n(b.batch_norm(y, bn1))});
    y = b.conv(y, b.input("w2", {16, 16, 3, 3}), 1, 1);
    x = b.call("relu_.default", {n(b.call("add_.Tensor", {n(y), n(x)}))});
    // An inverted residual: pointwise expand, depthwise 3x3 and 5x5, pointwise project.
    Node* e = b.conv(x, b.input("expand_w", {48, 16, 1, 1}), 1, 0);
    e = b.call("hardtanh_.default",
               {n(b.batch_norm(e, bn2)), Argument::from_float(0.0), Argument::from_float(6.0)});
    Node* d = b.conv(e, b.input("dw3_w", {48, 1, 3, 3}), 1, 1, 48);
    d = b.call("hardswish_.default", {n(d)});
    d = b.conv(d, b.input("dw5_w", {48, 1, 5, 5}), 1, 2, 48);
    d = b.call("silu_.default", {n(d)});
    Node* gate = b.call("mean.dim", {n(d), ints({-1, -2}), Argument::from_bool(true)});
    d = b.call("mul.Tensor", {n(d), n(b.call("hardsigmoid.default", {n(gate)}))});
    d = b.call("mul.Tensor", {n(d), n(b.call("sigmoid.default", {n(gate)}))});
    Node* p = b.conv(d, b.input("project_w", {16, 48, 1, 1}), 1, 0);
    x = b.call("add.Tensor", {n(p), n(x)});
    // ShuffleNet's channel split and concatenation.
    Node* halves = b.call("chunk.default", {n(x), Argument::from_int(2), Argument::from_int(1)});
    auto half = [&](int64_t k) {
        return b.g.call_function("operator.getitem", {n(halves), Argument::from_int(k)});
    };
    x = b.call("cat.default", {Argument::list({n(half(1)), n(half(0))}), Argument::from_int(1)});
    // Downsampling: im2col at stride 2 and a depthwise conv at stride 2.
    Node* s = b.conv(x, b.input("down_w", {32, 16, 3, 3}), 2, 1);
    s = b.conv(s, b.input("dw_s2_w", {32, 1, 3, 3}), 2, 1, 32);
    // A GEMM whose last panel has at most 4 columns (6x6 = 36 outputs): the half-width tile.
    s = b.conv(s, b.input("edge_w", {32, 32, 3, 3}), 1, 2);
    // The head: pool, flatten, linear.
    Node* pooled = b.call("adaptive_avg_pool2d.default", {n(s), ints({1, 1})});
    Node* flat = b.call("flatten.using_ints", {n(pooled), Argument::from_int(1)});
    Node* logits = b.call("linear.default",
                          {n(flat), n(b.input("fc_w", {100, 32})), n(b.input("fc_b", {100}))});
    // A transformer block's ops on [1, 32, 32] tokens: layer norm, attention, GELU.
    Node* tokens = b.input("tokens", {1, 32, 32});
    Node* norm = b.call("layer_norm.default",
                        {n(tokens), ints({32}), n(b.input("ln_w", {32})), n(b.input("ln_b", {32})),
                         Argument::from_float(1e-5), Argument::from_bool(true)});
    Node* qkv = b.call("linear.default",
                       {n(norm), n(b.input("qkv_w", {96, 32})), n(b.input("qkv_b", {96}))});
    Node* heads = b.call("view.default", {n(qkv), ints({1, 32, 3, 4, 8})});
    heads = b.call("permute.default", {n(heads), ints({2, 0, 3, 1, 4})});
    auto pick = [&](int64_t k) {
        return b.call("select.int", {n(heads), Argument::from_int(0), Argument::from_int(k)});
    };
    Node* att =
        b.call("scaled_dot_product_attention.default", {n(pick(0)), n(pick(1)), n(pick(2))});
    Node* softmax = b.call("softmax.int", {n(att), Argument::from_int(-1)});
    Node* act = b.call("gelu.default", {n(softmax)}); // [1, 4, 32, 8]
    // The shape ops and batched matmul of nn.MultiheadAttention and the encoder layer.
    Node* t = b.call(
        "contiguous.default",
        {n(b.call("transpose.int", {n(act), Argument::from_int(1), Argument::from_int(2)}))});
    Node* r = b.call("reshape.default", {n(t), ints({1, 32, 32})});
    r = b.call("squeeze.dim", {n(b.call("unsqueeze.default", {n(r), Argument::from_int(0)})),
                               Argument::from_int(0)});
    Node* u = b.call("unflatten.int", {n(r), Argument::from_int(-1), ints({4, 8})});
    Node* m3 = b.call("reshape.default", {n(u), ints({32, 4, 8})});
    Node* mt = b.call("transpose.int", {n(m3), Argument::from_int(1), Argument::from_int(2)});
    Node* scores = b.call("bmm.default", {n(m3), n(mt)});
    scores = b.call("dropout.default",
                    {n(scores), Argument::from_float(0.1), Argument::from_bool(false)});
    scores = b.call("dropout_.default",
                    {n(scores), Argument::from_float(0.1), Argument::from_bool(false)});
    b.g.output(Argument::tuple({n(logits), n(scores)}));
}

} // namespace

std::vector<std::string> warm_up_ops() {
    WarmUpGraph b;
    build(b);
    std::vector<std::string> ops;
    for (const Node* node : b.g.nodes())
        if (node->op() == Op::CallFunction) ops.push_back(node->target());
    return ops;
}

Status warm_up_kernels(int runs) {
    WarmUpGraph b;
    build(b);
    ModuleState state;
    RunOptions opt;
    opt.kernels.fast_conv = true;
    opt.keep_values = false;
    for (int k = 0; k < runs; ++k) {
        auto r = run_graph(b.g, b.inputs, state, opt);
        if (!r.ok()) return r.error();
    }
    return Status();
}

} // namespace pt2lab
