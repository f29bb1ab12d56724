// Conv fusion (exec/conv_fusion.h): which groups the plan takes, and that a run
// with the fused convs writes the same bits as the conv, batch norm and
// activation kernels run one by one (the epilogue shares their arithmetic).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "exec/conv_fusion.h"
#include "exec/interpreter.h"

using namespace pt2lab;

namespace {

Argument ref(Node* n) {
    return Argument::from_node(n);
}
Argument ints(std::vector<int64_t> v) {
    return Argument::int_list(v);
}

// Every group shape the plan knows, and three it must leave alone, on a 12x12 image:
//   A  conv 8->16 3x3 (im2col) -> batch_norm -> hardtanh_(0, 6)
//   B  conv 16->16 3x3 (Winograd) -> batch_norm -> relu
//   C  depthwise 3x3 stride 2 -> _native_batch_norm_legit_no_training -> getitem 0 -> relu_
//   D  grouped 1x1 with a bias -> batch_norm (read twice after: no activation)
//   E  1x1 -> hardtanh(-1, 1) (no batch norm)
//   F  1x1 read by a batch norm and the output (not fused)
//   G  1x1 -> batch_norm(training=True) -> relu (planned; runs unfused, updating its stats)
struct Net {
    Graph g;
    std::vector<Value> inputs;
    uint64_t seed = 7;
    Node *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *e = nullptr, *f = nullptr,
         *gconv = nullptr;

    Node* input(const std::string& name, std::vector<int64_t> sizes, float scale = 1.0f,
                float shift = 0.0f) {
        Tensor t = Tensor::seeded_normal(std::move(sizes), seed++);
        for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = t.f32()[k] * scale + shift;
        inputs.push_back(Value::of(std::move(t)));
        return g.placeholder(name);
    }
    Node* aten(const std::string& op, std::vector<Argument> args) {
        return g.call_function("torch.ops.aten." + op, std::move(args));
    }
    Node* conv(Node* x, Node* w, Node* bias, int64_t stride, int64_t pad, int64_t groups) {
        return aten("conv2d.default",
                    {ref(x), ref(w), bias ? ref(bias) : Argument::none(), ints({stride, stride}),
                     ints({pad, pad}), ints({1, 1}), Argument::from_int(groups)});
    }
    // weight, bias, running_mean, running_var of c channels (the variance positive)
    std::vector<Node*> bn_params(const std::string& name, int64_t c) {
        return {input(name + "_w", {c}), input(name + "_b", {c}), input(name + "_rm", {c}),
                input(name + "_rv", {c}, 0.3f, 1.0f)};
    }
    Node* batch_norm(Node* x, const std::vector<Node*>& p, bool training) {
        return aten("batch_norm.default", {ref(x), ref(p[0]), ref(p[1]), ref(p[2]), ref(p[3]),
                                           Argument::from_bool(training), Argument::from_float(0.1),
                                           Argument::from_float(1e-5), Argument::from_bool(false)});
    }

    Net() {
        Node* x = input("x", {1, 8, 12, 12}, 2.0f);
        // NaN and infinities go through the epilogue as through the kernels
        Tensor& xt = *inputs.back().tensor;
        xt.f32()[5] = std::numeric_limits<float>::quiet_NaN();
        xt.f32()[200] = std::numeric_limits<float>::infinity();
        xt.f32()[201] = -std::numeric_limits<float>::infinity();
        Node* wa = input("wa", {16, 8, 3, 3});
        Node* wb = input("wb", {16, 16, 3, 3}, 0.3f);
        Node* wc = input("wc", {16, 1, 3, 3});
        Node* wd = input("wd", {16, 8, 1, 1});
        Node* bd = input("bd", {16});
        Node* we = input("we", {16, 16, 1, 1}, 0.3f);
        Node* wf = input("wf", {8, 16, 1, 1});
        Node* wg = input("wg", {8, 8, 1, 1});
        auto pa = bn_params("bna", 16), pb = bn_params("bnb", 16), pc = bn_params("bnc", 16),
             pd = bn_params("bnd", 16), pf = bn_params("bnf", 8), pg = bn_params("bng", 8);

        a = conv(x, wa, nullptr, 1, 1, 1);
        Node* ya = aten("hardtanh_.default", {ref(batch_norm(a, pa, false)),
                                              Argument::from_float(0.0), Argument::from_int(6)});
        b = conv(ya, wb, nullptr, 1, 1, 1);
        Node* yb = aten("relu.default", {ref(batch_norm(b, pb, false))});
        c = conv(yb, wc, nullptr, 2, 1, 16);
        Node* bnc = aten("_native_batch_norm_legit_no_training.default",
                         {ref(c), ref(pc[0]), ref(pc[1]), ref(pc[2]), ref(pc[3]),
                          Argument::from_float(0.1), Argument::from_float(1e-5)});
        Node* item = g.call_function("operator.getitem", {ref(bnc), Argument::from_int(0)});
        Node* yc = aten("relu_.default", {ref(item)});
        d = conv(yc, wd, bd, 1, 0, 2);
        Node* yd = batch_norm(d, pd, false);
        Node* sum = aten("add.Tensor", {ref(yd), ref(yd)});
        e = conv(sum, we, nullptr, 1, 0, 1);
        Node* ye = aten("hardtanh.default",
                        {ref(e), Argument::from_float(-1.0), Argument::from_float(1.0)});
        f = conv(ye, wf, nullptr, 1, 0, 1);
        Node* yf = batch_norm(f, pf, false);
        gconv = conv(yf, wg, nullptr, 1, 0, 1);
        Node* yg = aten("relu.default", {ref(batch_norm(gconv, pg, true))});
        g.output(Argument::tuple(
            {ref(ya), ref(yb), ref(yc), ref(yd), ref(ye), ref(f), ref(yf), ref(yg)}));
    }
};

struct Run {
    std::vector<Value> outputs;
    std::vector<Value> inputs; // after the run (the train-mode batch norm updates its stats)
    int fused = 0;             // nodes computed inside their conv
};

Run run(const Net& net, bool keep_values, bool fuse) {
    Run out;
    for (const Value& v : net.inputs) // fresh copies: the run writes some of them
        out.inputs.push_back(Value::of(Tensor(*v.tensor)));
    for (Value& v : out.inputs) v.tensor->storage.data(); // own bytes
    ModuleState state;
    RunOptions opt;
    opt.kernels.fast_conv = true;
    opt.keep_values = keep_values;
    opt.fuse_convs = fuse;
    std::vector<NodeTime> times;
    opt.node_times = &times;
    auto r = run_graph(net.g, out.inputs, state, opt);
    INFO((r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    out.outputs = r.value().outputs;
    for (const NodeTime& t : times) out.fused += t.fused;
    return out;
}

// The same shapes and the same bytes (NaNs included).
void require_same_bits(const Value& x, const Value& y, const std::string& what) {
    INFO(what);
    REQUIRE(x.is_tensor());
    REQUIRE(y.is_tensor());
    const Tensor &a = *x.tensor, &b = *y.tensor;
    REQUIRE(a.sizes == b.sizes);
    REQUIRE(a.storage.size() == b.storage.size());
    CHECK(std::memcmp(a.data<uint8_t>(), b.data<uint8_t>(), a.storage.size()) == 0);
}

} // namespace

TEST_CASE("conv fusion: the plan takes conv + eval batch norm + activation groups",
          "[exec][fusion]") {
    Net net;
    auto plan = plan_conv_fusions(net.g);
    REQUIRE(plan.size() == 6); // A, B, C, D, E and G; F's conv has two users
    auto group = [&](const Node* conv) -> const ConvFusion& {
        INFO("%" << conv->name());
        REQUIRE(plan.count(conv));
        return plan.at(conv);
    };
    CHECK(group(net.a).bn->target() == "torch.ops.aten.batch_norm.default");
    CHECK(group(net.a).act->target() == "torch.ops.aten.hardtanh_.default");
    CHECK(group(net.b).act->target() == "torch.ops.aten.relu.default");
    CHECK(group(net.c).bn->target() ==
          "torch.ops.aten._native_batch_norm_legit_no_training.default");
    CHECK(group(net.c).item->target() == "operator.getitem");
    CHECK(group(net.c).act->target() == "torch.ops.aten.relu_.default");
    CHECK(group(net.d).bn != nullptr);
    CHECK(group(net.d).act == nullptr); // the batch norm's output has two readers
    CHECK(group(net.e).bn == nullptr);
    CHECK(group(net.e).act->target() == "torch.ops.aten.hardtanh.default");
    CHECK_FALSE(plan.count(net.f));
    CHECK(group(net.gconv).bn != nullptr); // train mode is seen only when it runs
}

TEST_CASE("conv fusion: fused runs write the bits of the kernels run one by one",
          "[exec][fusion]") {
    Net net;
    Run plain = run(net, false, false), fused = run(net, false, true), kept = run(net, true, true);
    CHECK(plain.fused == 0);
    CHECK(kept.fused == 0); // values kept for the inspector: nothing is fused
    // A: bn + act, B: bn + act, C: bn + getitem + act, D: bn, E: act; G ran unfused
    CHECK(fused.fused == 9);
    REQUIRE(fused.outputs.size() == plain.outputs.size());
    for (size_t k = 0; k < plain.outputs.size(); ++k) {
        require_same_bits(fused.outputs[k], plain.outputs[k], "output " + std::to_string(k));
        require_same_bits(kept.outputs[k], plain.outputs[k], "output " + std::to_string(k));
    }
    // The train-mode batch norm updated its running stats the same way.
    for (size_t k = 0; k < net.inputs.size(); ++k)
        require_same_bits(fused.inputs[k], plain.inputs[k], "input " + std::to_string(k));
    // The clamps did something: A's ReLU6 tops out at 6, E's hardtanh at 1.
    const Tensor& ya = *fused.outputs[0].tensor;
    float top = 0.0f;
    for (int64_t k = 0; k < ya.numel(); ++k)
        if (!std::isnan(ya.f32()[k])) top = std::max(top, ya.f32()[k]);
    CHECK(top == 6.0f);
}

TEST_CASE("conv fusion: a batch norm it cannot fuse still reports its own error",
          "[exec][fusion]") {
    Net net;
    // bnb's running_var gets the wrong size: the fused path steps aside and the
    // batch norm kernel names the mismatch, as without fusion.
    size_t index = 0;
    for (Node* n : net.g.nodes()) {
        if (n->op() != Op::Placeholder) break;
        if (n->name() == "bnb_rv") net.inputs[index] = Value::of(Tensor::seeded_normal({3}, 1));
        ++index;
    }
    ModuleState state;
    RunOptions opt;
    opt.kernels.fast_conv = true;
    opt.keep_values = false;
    auto r = run_graph(net.g, net.inputs, state, opt);
    REQUIRE_FALSE(r.ok());
    INFO(r.error().str());
    CHECK(r.error().message.find("while executing %batch_norm_default_1:") != std::string::npos);
    CHECK(r.error().message.find("does not match the input's 16 channels") != std::string::npos);
}
