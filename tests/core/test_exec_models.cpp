// The executor on every lesson asset: both forms (ExportedProgram and
// ep.module()) match PyTorch's eager reference stored in the asset, and each other.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include "exec/parity.h"
#include "io/program_loader.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {} // namespace

TEST_CASE("every lesson asset runs and matches PyTorch eager within 1e-5", "[exec]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        ExportedProgram ep = load_asset(rel);
        for (bool fast : {false, true}) {
            RunOptions opt;
            opt.kernels.fast_conv = fast;
            ModuleState state = ModuleState::from_program(ep);
            auto r = run_program(ep, state, example_inputs(ep), opt);
            INFO(rel << (fast ? " (fast conv)" : "") << (r.ok() ? "" : r.error().str()));
            REQUIRE(r.ok());
            ParityReport p =
                compare_with_reference(r.value(), ep.reference_outputs, Tolerance{0.0, 1e-5});
            INFO(p.str());
            CHECK(p.allclose());
            CHECK(p.max_abs() <= 1e-5);
        }
    }
}

TEST_CASE("ExportedProgram form and ep.module() form give the same numbers", "[exec]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        ExportedProgram ep = load_asset(rel);
        auto gm = unlift(ep);
        REQUIRE(gm.ok());
        ModuleState s1 = ModuleState::from_program(ep), s2 = ModuleState::from_program(ep);
        auto a = run_program(ep, s1, example_inputs(ep));
        auto b = run_module(gm.value(), s2, example_inputs(ep));
        INFO(rel << (b.ok() ? "" : b.error().str()));
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        ParityReport p = compare_runs(a.value(), b.value());
        CHECK(p.bit_identical());
        CHECK(p.nodes.size() >= 3); // conv2d, relu ... compared by name
        for (const auto& n : p.nodes) CHECK(n.bit_identical);
    }
}

TEST_CASE("train mode: batch statistics, running stats update, num_batches_tracked counts",
          "[exec]") {
    ExportedProgram ep = load_asset("assets/graphs/conv_bn_relu_train.pt2");
    ModuleState state = ModuleState::from_program(ep);
    const int64_t before = state.tensors.at("bn.num_batches_tracked")->data<int64_t>()[0];
    auto r = run_program(ep, state, example_inputs(ep));
    REQUIRE(r.ok());
    // buffers after one forward equal PyTorch's
    REQUIRE(ep.buffers_after.size() == 3);
    for (const auto& b : ep.buffers_after) {
        INFO(b.name);
        TensorParity p = compare_tensors(b.name, *state.tensors.at(b.name),
                                         Tensor::from_data(b.tensor), {0.0, 1e-5});
        CHECK(p.allclose);
    }
    CHECK(state.tensors.at("bn.num_batches_tracked")->data<int64_t>()[0] == before + 1);
    REQUIRE(run_program(ep, state, example_inputs(ep)).ok());
    CHECK(state.tensors.at("bn.num_batches_tracked")->data<int64_t>()[0] == before + 2);
    // the module form updates its own state the same way
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    ModuleState ms = ModuleState::from_program(ep);
    REQUIRE(run_module(gm.value(), ms, example_inputs(ep)).ok());
    CHECK(ms.tensors.at("bn.num_batches_tracked")->data<int64_t>()[0] == before + 1);
}

TEST_CASE("errors name the node and never crash", "[exec]") {
    ExportedProgram ep = load_asset("assets/graphs/conv_relu.pt2");
    ModuleState state = ModuleState::from_program(ep);
    // wrong input shape: torch's own message
    Tensor bad = Tensor::zeros(ScalarType::Float, {3, 3, 16, 16});
    auto r = run_program(ep, state, {bad});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "Expected input at *args[0].shape[0] to be equal to 2, but got 3");
    // module form: the guard fails, naming _guards_fn
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    auto g = run_module(gm.value(), state, {bad});
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().message == "while executing %_guards_fn: Guard failed: x.size()[0] == 2");
    // a missing weight names the get_attr node
    ModuleState empty;
    auto m = run_module(gm.value(), empty, example_inputs(ep));
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().message.find(
              "while executing %conv_weight: the module has no attribute 'conv.weight'") == 0);
    // channel mismatch inside a kernel
    Graph graph;
    Node* x = graph.placeholder("x");
    Node* w = graph.placeholder("w");
    Node* c = graph.call_function("torch.ops.aten.conv2d.default",
                                  {Argument::from_node(x), Argument::from_node(w)}, {}, "conv2d");
    graph.output(Argument::tuple({Argument::from_node(c)}));
    auto k = run_graph(graph,
                       {Value::of(Tensor::zeros(ScalarType::Float, {1, 4, 5, 5})),
                        Value::of(Tensor::zeros(ScalarType::Float, {8, 3, 3, 3}))},
                       state);
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().message.find(
              "while executing %conv2d: conv2d: input f32[1, 4, 5, 5] has 4 channels but weight "
              "f32[8, 3, 3, 3] with groups=1 expects 3") == 0);
}

TEST_CASE("an op without a schema entry is refused at run time, with a message", "[exec]") {
    auto ep = load_program_file(source_path("tests/corpus/good/unknown_op.pt2"));
    REQUIRE(ep.ok());
    ModuleState state = ModuleState::from_program(ep.value());
    auto r = run_program(ep.value(), state, example_inputs(ep.value()));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "while executing %relu: op torch.ops.mylib.fancy_relu.default is not in pt2lab's op "
          "schema table");
}

TEST_CASE("negative control: a wrong eps makes the parity check fail", "[exec]") {
    ExportedProgram ep = load_asset("assets/graphs/conv_bn_relu_eval.pt2");
    ModuleState state = ModuleState::from_program(ep);
    auto good = run_program(ep, state, example_inputs(ep));
    REQUIRE(good.ok());
    CHECK(compare_with_reference(good.value(), ep.reference_outputs).allclose());
    // The same program with batch_norm's eps changed from 1e-05 to 1e-03.
    Node* bn = ep.graph->find("batch_norm");
    REQUIRE(bn);
    std::vector<Argument> args = bn->args();
    REQUIRE(args[7].kind == ArgKind::Float);
    CHECK(args[7].f == 1e-05);
    args[7] = Argument::from_float(1e-03);
    bn->set_args(args);
    auto bad = run_program(ep, state, example_inputs(ep));
    REQUIRE(bad.ok());
    ParityReport p = compare_with_reference(bad.value(), ep.reference_outputs);
    INFO(p.str());
    CHECK_FALSE(p.allclose());
    CHECK(p.max_abs() > 1e-4);
    CHECK(p.str().find("verdict: NOT allclose") != std::string::npos);
    // and the two runs differ node by node from batch_norm on, not before
    ParityReport runs = compare_runs(good.value(), bad.value());
    for (const auto& n : runs.nodes) {
        INFO(n.name);
        CHECK(n.bit_identical == (n.name != "batch_norm" && n.name != "relu"));
    }
}

TEST_CASE("reference kernels: a digest of every lesson output, to compare native with WebAssembly",
          "[exec]") {
    // scripts/test.sh compares the digest files written by the native and the wasm
    // runs of this test: the reference kernels must agree bit for bit.
    uint64_t h = 1469598103934665603ull;
    int tensors = 0;
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        ExportedProgram ep = load_asset(rel);
        ModuleState state = ModuleState::from_program(ep);
        auto r = run_program(ep, state, example_inputs(ep));
        REQUIRE(r.ok());
        for (const auto& [name, v] : r.value().values) {
            if (!v.is_tensor()) continue;
            for (uint8_t byte : v.tensor->storage) h = (h ^ byte) * 1099511628211ull;
            ++tensors;
        }
    }
    CHECK(tensors > 50);
    FILE* f = std::fopen(PT2LAB_DIGEST_PATH, "w");
    REQUIRE(f);
    std::fprintf(f, "%016llx %d\n", static_cast<unsigned long long>(h), tensors);
    std::fclose(f);
}
