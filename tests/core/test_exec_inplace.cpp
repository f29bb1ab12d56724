// In-place kernels and dropout as PyTorch runs them: an in-place op writes its
// `self` (every reader of that value afterwards sees the new values, as aliases
// of one tensor do in eager PyTorch) and returns it; dropout is the identity in
// eval and refused in training (pt2lab does not reproduce torch's random masks).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "exec/interpreter.h"

using namespace pt2lab;

namespace {

Tensor ramp(std::vector<int64_t> sizes, float start, float step) {
    Tensor t = Tensor::empty(ScalarType::Float, std::move(sizes));
    for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = start + step * float(k);
    return t;
}

} // namespace

TEST_CASE("in-place activations write self: later readers of self see the new values", "[exec]") {
    // y = hardtanh_(x * 1, 0, 6); z = add(m, y) where m is the value hardtanh_ wrote:
    // eager PyTorch gives z = 2 * clamp(x, 0, 6), and hardtanh_'s output is m itself.
    for (const char* op : {"torch.ops.aten.hardtanh_.default", "torch.ops.aten.silu_.default",
                           "torch.ops.aten.hardswish_.default", "torch.ops.aten.relu_.default"}) {
        Graph g;
        Node* x = g.placeholder("x");
        Node* m = g.call_function("torch.ops.aten.mul.Tensor",
                                  {Argument::from_node(x), Argument::from_int(1)});
        std::vector<Argument> args = {Argument::from_node(m)};
        if (std::string(op).find("hardtanh_") != std::string::npos) {
            args.push_back(Argument::from_int(0));
            args.push_back(Argument::from_int(6));
        }
        Node* y = g.call_function(op, args);
        Node* z = g.call_function("torch.ops.aten.add.Tensor",
                                  {Argument::from_node(m), Argument::from_node(y)});
        g.output(Argument::tuple({Argument::from_node(z), Argument::from_node(x)}));
        ModuleState state;
        Tensor in = ramp({2, 8}, -4.0f, 0.75f);
        auto r = run_graph(g, {Value::of(in)}, state);
        INFO(op << ": " << (r.ok() ? "" : r.error().str()));
        REQUIRE(r.ok());
        const RunResult& res = r.value();
        // the in-place op returns self: the same tensor object as %mul's value
        CHECK(res.values.at(y->name()).tensor == res.values.at(m->name()).tensor);
        const Tensor& out = *res.outputs[0].tensor;
        const Tensor& written = *res.values.at(y->name()).tensor;
        for (int64_t k = 0; k < out.numel(); ++k) CHECK(out.f32()[k] == 2.0f * written.f32()[k]);
        // the graph input itself is untouched (mul made a new tensor)
        for (int64_t k = 0; k < in.numel(); ++k)
            CHECK(res.outputs[1].tensor->f32()[k] == in.f32()[k]);
        if (std::string(op).find("hardtanh_") != std::string::npos)
            for (int64_t k = 0; k < in.numel(); ++k)
                CHECK(written.f32()[k] == std::min(6.0f, std::max(0.0f, in.f32()[k])));
    }
}

TEST_CASE("dropout: the identity in eval, refused in training with a reason", "[exec]") {
    for (bool train : {false, true})
        for (const char* op :
             {"torch.ops.aten.dropout.default", "torch.ops.aten.dropout_.default"}) {
            Graph g;
            Node* x = g.placeholder("x");
            Node* d = g.call_function(op, {Argument::from_node(x), Argument::from_float(0.5),
                                           Argument::from_bool(train)});
            g.output(Argument::from_node(d));
            ModuleState state;
            Tensor in = ramp({3, 4}, -1.0f, 0.25f);
            auto r = run_graph(g, {Value::of(in)}, state);
            INFO(op << " train=" << train);
            if (!train) {
                REQUIRE(r.ok());
                const Tensor& out = *r.value().outputs[0].tensor;
                REQUIRE(out.sizes == in.sizes);
                for (int64_t k = 0; k < in.numel(); ++k) CHECK(out.f32()[k] == in.f32()[k]);
                continue;
            }
            REQUIRE_FALSE(r.ok());
            const std::string msg = r.error().str();
            INFO(msg);
            CHECK(msg.find("while executing %" + d->name()) != std::string::npos);
            CHECK(msg.find("training mode") != std::string::npos);
            CHECK(msg.find("model.eval()") != std::string::npos);
        }
}

// The fast kernels' sigmoid and silu (float32, four lanes, e^x by a polynomial) against
// the reference kernels (double, libm's exp): within a few float32 ulp wherever the
// result is a normal float, the same NaN and infinities, and silu_ writes self.
TEST_CASE("fast sigmoid and silu: within 4 ulp of the reference kernels, same NaN and inf",
          "[exec]") {
    std::vector<float> xs = {0.0f,   -0.0f,  1e-30f,  -1e-30f,  1e-8f,     0.5f,  -0.5f,  1.0f,
                             -1.0f,  15.9f,  -15.9f,  87.0f,    -87.0f,    88.5f, -88.5f, 90.0f,
                             -90.0f, 200.0f, -200.0f, INFINITY, -INFINITY, NAN};
    for (int k = 0; k <= 20000; ++k) xs.push_back(-100.0f + 0.01f * float(k)); // -100 .. 100
    xs.push_back(3.0f); // 20023 values: a tail of 3 after the four-lane loop
    const int64_t n = static_cast<int64_t>(xs.size());
    auto run = [&](const char* op, bool fast) {
        Graph g;
        Node* x = g.placeholder("x");
        Node* m = g.call_function("torch.ops.aten.mul.Tensor",
                                  {Argument::from_node(x), Argument::from_int(1)});
        Node* y = g.call_function(op, {Argument::from_node(m)});
        g.output(Argument::tuple({Argument::from_node(y), Argument::from_node(m)}));
        ModuleState state;
        Tensor in = Tensor::empty(ScalarType::Float, {n});
        std::copy(xs.begin(), xs.end(), in.f32());
        RunOptions opt;
        opt.kernels.fast_conv = fast;
        auto r = run_graph(g, {Value::of(in)}, state, opt);
        INFO(op << ": " << (r.ok() ? "" : r.error().str()));
        REQUIRE(r.ok());
        return r.take();
    };
    for (const char* op : {"torch.ops.aten.sigmoid.default", "torch.ops.aten.silu.default",
                           "torch.ops.aten.silu_.default"}) {
        RunResult ref = run(op, false), fast = run(op, true);
        const float* a = ref.outputs[0].tensor->f32();
        const float* b = fast.outputs[0].tensor->f32();
        int64_t exact = 0;
        for (int64_t k = 0; k < n; ++k) {
            INFO(op << " at x = " << xs[size_t(k)] << ": reference " << a[k] << ", fast " << b[k]);
            if (std::isnan(a[k]) || std::isinf(a[k])) {
                CHECK(std::isnan(b[k]) == std::isnan(a[k]));
                if (std::isinf(a[k])) CHECK(b[k] == a[k]);
                continue;
            }
            exact += a[k] == b[k];
            if (std::fabs(a[k]) < 1e-36f) { // past the normal range of e^-x: both ~0
                CHECK(std::fabs(b[k]) < 1e-36f);
                continue;
            }
            CHECK(std::fabs(b[k] - a[k]) <= 4 * std::ldexp(std::fabs(a[k]), -23));
        }
        CHECK(exact > n / 2); // most values are the correctly rounded result itself
        if (std::string(op).find("silu_") != std::string::npos) // self is written: m
            CHECK(fast.outputs[1].tensor == fast.outputs[0].tensor);
    }
}

// hardswish four lanes at a time is ATen's float formula, bit for bit: x * clamp(x + 3,
// 0, 6) / 6 in float32, NaN passing through, on both kernel sets and in place.
TEST_CASE("hardswish four lanes at a time equals ATen's float formula bit for bit", "[exec]") {
    std::vector<float> xs = {0.0f,   -0.0f,    -3.0f,     3.0f, -2.9999998f, 2.9999998f,
                             1e-30f, INFINITY, -INFINITY, NAN,  1e30f,       -1e30f};
    for (int k = 0; k <= 2000; ++k) xs.push_back(-5.0f + 0.005f * float(k));
    const int64_t n = static_cast<int64_t>(xs.size()); // 2013: a tail after the lanes
    for (const char* op : {"torch.ops.aten.hardswish.default", "torch.ops.aten.hardswish_.default"})
        for (bool fast : {false, true}) {
            Graph g;
            Node* x = g.placeholder("x");
            Node* m = g.call_function("torch.ops.aten.mul.Tensor",
                                      {Argument::from_node(x), Argument::from_int(1)});
            Node* y = g.call_function(op, {Argument::from_node(m)});
            g.output(Argument::tuple({Argument::from_node(y)}));
            ModuleState state;
            Tensor in = Tensor::empty(ScalarType::Float, {n});
            std::copy(xs.begin(), xs.end(), in.f32());
            RunOptions opt;
            opt.kernels.fast_conv = fast;
            auto r = run_graph(g, {Value::of(in)}, state, opt);
            INFO(op << (fast ? " fast" : "") << ": " << (r.ok() ? "" : r.error().str()));
            REQUIRE(r.ok());
            const float* got = r.value().outputs[0].tensor->f32();
            int64_t wrong = 0;
            for (int64_t k = 0; k < n; ++k) {
                const float v = xs[size_t(k)];
                float c = v + 3.0f;
                c = std::isnan(c) ? c : (c < 0.0f ? 0.0f : (c > 6.0f ? 6.0f : c));
                const float want = v * c / 6.0f;
                uint32_t a = 0, b = 0;
                std::memcpy(&a, &got[k], 4);
                std::memcpy(&b, &want, 4);
                wrong += std::isnan(want) ? !std::isnan(got[k]) : a != b;
            }
            CHECK(wrong == 0);
        }
}

TEST_CASE("an in-place write into a slice writes the sliced tensor", "[exec]") {
    // Swin v2's qkv bias: b = clone(p); zero_(b[16:32:2] along dim 1); y = b + 0. In eager
    // PyTorch the slice is a view, so b's elements at columns 16, 18, ..., 30 become 0.
    Graph g;
    Node* p = g.placeholder("p");
    Node* b = g.call_function("torch.ops.aten.clone.default", {Argument::from_node(p)});
    Node* s =
        g.call_function("torch.ops.aten.slice.Tensor",
                        {Argument::from_node(b), Argument::from_int(1), Argument::from_int(16),
                         Argument::from_int(32), Argument::from_int(2)});
    g.call_function("torch.ops.aten.zero_.default", {Argument::from_node(s)});
    Node* y = g.call_function("torch.ops.aten.add.Tensor",
                              {Argument::from_node(b), Argument::from_int(0)});
    g.output(Argument::tuple({Argument::from_node(y), Argument::from_node(p)}));
    ModuleState state;
    Tensor in = ramp({2, 48}, 1.0f, 1.0f);
    auto r = run_graph(g, {Value::of(in)}, state);
    INFO((r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    const Tensor& out = *r.value().outputs[0].tensor;
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 48; ++j) {
            const bool zeroed = j >= 16 && j < 32 && j % 2 == 0;
            CHECK(out.f32()[i * 48 + j] == (zeroed ? 0.0f : in.f32()[i * 48 + j]));
        }
    // the input the clone copied is untouched
    for (int64_t k = 0; k < in.numel(); ++k)
        CHECK(r.value().outputs[1].tensor->f32()[k] == in.f32()[k]);
}
