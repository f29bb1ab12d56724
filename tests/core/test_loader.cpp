// Loading torch.export output: every lesson asset, other valid layouts, and
// the bad-input corpus (tests/corpus, written by tools/make_corpus.py), whose
// expected.json says what each error message must name.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "graph/printer.h"
#include "io/fx_json.h"
#include "io/npy.h"
#include "io/program_loader.h"
#include "io/zip.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {
nlohmann::json corpus_expectations() {
    auto j =
        nlohmann::json::parse(read_text(source_path("tests/corpus/expected.json")), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
}

} // namespace

TEST_CASE("every lesson asset loads with weights, provenance and references", "[loader]") {
    auto files = list_dir("assets/graphs", ".pt2");
    REQUIRE(files.size() == 7);
    for (const auto& rel : files) {
        auto r = load_program_file(source_path(rel));
        INFO(rel << ": " << (r.ok() ? "" : r.error().str()));
        REQUIRE(r.ok());
        const ExportedProgram& ep = r.value();
        CHECK(ep.warnings.empty());
        CHECK(ep.has_weights);
        CHECK(ep.schema_major == 8);
        CHECK(ep.provenance.present);
        CHECK_FALSE(ep.provenance.made_by.empty());
        CHECK(ep.example_inputs.size() == 1);
        CHECK(ep.reference_outputs.size() == 1);
        CHECK(ep.graph->lint().ok());
        // Every parameter/buffer has a tensor of the placeholder's shape.
        for (const auto& is : ep.signature.inputs) {
            if (is.kind != InputKind::Parameter && is.kind != InputKind::Buffer) continue;
            auto t = ep.find_tensor(is.target);
            REQUIRE(t);
            CHECK(t->sizes == ep.graph->find(is.arg)->meta.val.tensor.sizes);
            CHECK_FALSE(t->stand_in);
        }
    }
}

TEST_CASE("conv_bn_relu_eval: the exported graph as torch prints it", "[loader]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval");
    std::string g = graph_str(*ep.graph);
    // [C] fact sheet 1.2 (DOCS-EXEC form, names of this model)
    CHECK(g.find("    %conv2d : [num_users=1] = "
                 "call_function[target=torch.ops.aten.conv2d.default](args = (%x, "
                 "%p_conv_weight, None, [1, 1], [1, 1]), kwargs = {})\n") != std::string::npos);
    // [C] fact sheet 1.1 (issue #141116): eval keeps an unused num_batches_tracked placeholder
    CHECK(g.find("%b_bn_num_batches_tracked : [num_users=0] = "
                 "placeholder[target=b_bn_num_batches_tracked]") != std::string::npos);
    // [I] fact sheet 1.2 (cudnn_enabled False on torch >= 2.7)
    CHECK(
        g.find("batch_norm.default](args = (%conv2d, %p_bn_weight, %p_bn_bias, %b_bn_running_mean, "
               "%b_bn_running_var, False, 0.1, 1e-05, False), kwargs = {})") != std::string::npos);
    CHECK(g.substr(g.size() - 18) == "    return (relu,)");
    // the seed's node view: conv2d's meta['val'] shape [2, 8, 16, 16], users [batch_norm]
    Node* conv = ep.graph->find("conv2d");
    REQUIRE(conv);
    CHECK(conv->meta.val.tensor.sizes == std::vector<int64_t>{2, 8, 16, 16});
    CHECK(conv->meta.val.tensor.type_str() == "f32[2, 8, 16, 16]");
    REQUIRE(conv->users().size() == 1);
    CHECK(conv->users()[0]->name() == "batch_norm");
    CHECK(target_str(*conv) == "aten.conv2d.default");
    REQUIRE(conv->meta.nn_module_stack.size() == 2);
    CHECK(conv->meta.nn_module_stack[1].path == "conv");
    CHECK(conv->meta.nn_module_stack[1].type == "torch.nn.modules.conv.Conv2d");
}

TEST_CASE("graph signature prints like torch (lines of the fact sheet)", "[loader]") {
    ExportedProgram ep = load_asset("conv_bn_relu_eval");
    // [C] line format (GS-NEW __str__), [I] concrete lines: fact sheet 1.3
    CHECK(signature_str(ep.signature) ==
          "\n# inputs\n"
          "p_conv_weight: PARAMETER target='conv.weight'\n"
          "p_bn_weight: PARAMETER target='bn.weight'\n"
          "p_bn_bias: PARAMETER target='bn.bias'\n"
          "b_bn_running_mean: BUFFER target='bn.running_mean' persistent=True\n"
          "b_bn_running_var: BUFFER target='bn.running_var' persistent=True\n"
          "b_bn_num_batches_tracked: BUFFER target='bn.num_batches_tracked' persistent=True\n"
          "x: USER_INPUT\n"
          "\n# outputs\n"
          "relu: USER_OUTPUT\n");
}

TEST_CASE("train export: add_ before batch_norm(training=True)", "[loader]") {
    ExportedProgram ep = load_asset("conv_bn_relu_train");
    // [C*] fact sheet 2 (DOCS-EXEC print_readable line, verbatim)
    std::string readable = print_readable(*ep.graph, {});
    CHECK(
        readable.find("add_: \"i64[]\" = torch.ops.aten.add_.Tensor(b_bn_num_batches_tracked, 1);  "
                      "b_bn_num_batches_tracked = add_ = None") != std::string::npos);
    auto nodes = ep.graph->nodes();
    std::vector<std::string> calls;
    for (Node* n : nodes)
        if (n->op() == Op::CallFunction) calls.push_back(n->name());
    CHECK(calls == std::vector<std::string>{"conv2d", "add_", "batch_norm", "relu"});
    CHECK(ep.graph->find("add_")->users().empty());
    CHECK(ep.graph->find("batch_norm")->args()[5].b == true);
    CHECK(ep.buffers_after.size() == 3);
}

TEST_CASE("the three writing styles export to the same op sequence", "[loader]") {
    std::vector<std::string> expected = {"conv2d", "relu", "mean", "linear"};
    for (const char* name : {"style_functional", "style_modules", "style_sequential"}) {
        ExportedProgram ep = load_asset(name);
        std::vector<std::string> calls;
        for (Node* n : ep.graph->nodes())
            if (n->op() == Op::CallFunction) calls.push_back(n->name());
        INFO(name);
        CHECK(calls == expected);
        // [I] fact sheet 3.5: mean.dim(relu, [2, 3]) with keepdim dropped
        CHECK(graph_str(*ep.graph).find("call_function[target=torch.ops.aten.mean.dim](args = "
                                        "(%relu, [2, 3]), kwargs = {})") != std::string::npos);
    }
    CHECK(load_asset("style_sequential").graph->find("p_body_0_weight") != nullptr);
    CHECK(load_asset("style_functional").graph->find("p_conv_weight") != nullptr);
}

TEST_CASE("weights are the stored bytes; inputs and references are readable", "[loader]") {
    ExportedProgram ep = load_asset("conv_relu");
    auto w = ep.find_tensor("conv.weight");
    REQUIRE(w);
    CHECK(w->sizes == std::vector<int64_t>{8, 3, 3, 3});
    CHECK(w->bytes.size() == 864);
    REQUIRE(ep.example_inputs.size() == 1);
    CHECK(ep.example_inputs[0].name == "x");
    CHECK(ep.example_inputs[0].tensor.sizes == std::vector<int64_t>{2, 3, 16, 16});
    // npy round trip
    auto again = read_npy(write_npy(ep.example_inputs[0].tensor), "x.npy");
    REQUIRE(again.ok());
    CHECK(again.value().bytes == ep.example_inputs[0].tensor.bytes);
    CHECK(again.value().sizes == ep.example_inputs[0].tensor.sizes);
}

TEST_CASE("the ResNet-style model loads: pooling, flatten, residual adds", "[loader]") {
    ExportedProgram ep = load_asset("resnet_style");
    std::string g = graph_str(*ep.graph);
    for (const char* op : {"aten.max_pool2d.default", "aten.adaptive_avg_pool2d.default",
                           "aten.flatten.using_ints", "aten.add.Tensor", "aten.linear.default"}) {
        INFO(op);
        CHECK(g.find(std::string("torch.ops.") + op) != std::string::npos);
    }
    int adds = 0;
    for (Node* n : ep.graph->nodes()) adds += n->target() == "torch.ops.aten.add.Tensor";
    CHECK(adds == 2);
}

TEST_CASE("bad-input corpus: a clear error naming the file, never a crash", "[loader]") {
    auto expect = corpus_expectations();
    auto files = list_dir("tests/corpus/bad", "");
    REQUIRE(files.size() >= 25);
    REQUIRE(expect["bad"].size() == files.size());
    for (const auto& rel : files) {
        std::string name = rel.substr(rel.find_last_of('/') + 1);
        INFO(rel);
        REQUIRE(expect["bad"].contains(name));
        auto bytes = read_file_bytes(source_path(rel));
        REQUIRE(bytes.ok());
        std::string text(bytes.value().begin(), bytes.value().end());
        std::string message;
        if (name.rfind("fx_", 0) == 0) {
            auto r = read_fx_graph_json(text, name);
            REQUIRE_FALSE(r.ok());
            message = r.error().str();
        } else {
            auto r = load_program(bytes.take(), name);
            REQUIRE_FALSE(r.ok());
            message = r.error().str();
            CHECK(r.error().file.rfind(name, 0) == 0); // the file, or "file:record"
        }
        INFO(message);
        CHECK(message.find(name) != std::string::npos);
        for (const auto& phrase : expect["bad"][name])
            CHECK(message.find(phrase.get<std::string>()) != std::string::npos);
    }
}

TEST_CASE("other valid layouts load, with the warnings they deserve", "[loader]") {
    auto expect = corpus_expectations();
    auto files = list_dir("tests/corpus/good", "");
    REQUIRE(files.size() == expect["good"].size());
    ExportedProgram ref = load_asset("conv_relu");
    for (const auto& rel : files) {
        std::string name = rel.substr(rel.find_last_of('/') + 1);
        INFO(rel);
        auto r = load_program_file(source_path(rel));
        INFO((r.ok() ? std::string() : r.error().str()));
        REQUIRE(r.ok());
        std::string warnings;
        for (const auto& w : r.value().warnings) warnings += w + "\n";
        INFO(warnings);
        for (const auto& phrase : expect["good"][name])
            CHECK(warnings.find(phrase.get<std::string>()) != std::string::npos);
        if (expect["good"][name].empty()) {
            CHECK(r.value().warnings.empty());
            // the same program as the committed asset
            CHECK(graph_str(*r.value().graph) == graph_str(*ref.graph));
            CHECK(r.value().find_tensor("conv.weight")->bytes ==
                  ref.find_tensor("conv.weight")->bytes);
        }
    }
}

TEST_CASE("an op missing from the schema table loads and prints with its named arguments",
          "[loader]") {
    auto r = load_program_file(source_path("tests/corpus/good/unknown_op.pt2"));
    REQUIRE(r.ok());
    Node* n = r.value().graph->find("relu");
    REQUIRE(n);
    CHECK(n->schema() == nullptr);
    CHECK(format_node(*n) ==
          "%relu : [num_users=1] = call_function[target=torch.ops.mylib.fancy_relu.default](args = "
          "(%conv2d,), kwargs = {slope: 0.25})");
    CHECK(target_str(*n) == "mylib.fancy_relu.default");
}

TEST_CASE("stand-in weights are deterministic and shaped like the real ones", "[loader]") {
    auto a = load_program_file(source_path("tests/corpus/good/bare_model.json"));
    auto b = load_program_file(source_path("tests/corpus/good/bare_model.json"));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    auto w = a.value().find_tensor("conv.weight");
    REQUIRE(w);
    CHECK(w->stand_in);
    CHECK(w->sizes == std::vector<int64_t>{8, 3, 3, 3});
    CHECK(w->bytes == b.value().find_tensor("conv.weight")->bytes);
    float lo = 1e9f, hi = -1e9f;
    for (int64_t k = 0; k < w->numel(); ++k)
        lo = std::min(lo, w->f32()[k]), hi = std::max(hi, w->f32()[k]);
    CHECK(lo < 0.0f);
    CHECK(hi > 0.0f);
    CHECK(hi <= 1.0f / std::sqrt(27.0f));
}

TEST_CASE("a value named like a flag is just a name (relu_unused loads and prints)", "[loader]") {
    // The deserializer once marked "defines no value" with a `_unused` name
    // suffix, so a real value of that name was refused.
    auto bytes = read_file_bytes(source_path("assets/graphs/conv_relu.pt2"));
    REQUIRE(bytes.ok());
    auto zip = ZipArchive::open(bytes.take(), "conv_relu.pt2");
    REQUIRE(zip.ok());
    const ZipEntry* model = nullptr;
    for (const ZipEntry& e : zip.value().entries())
        if (e.name.find("/models/model.json") != std::string::npos) model = &e;
    REQUIRE(model);
    auto json = zip.value().read(*model);
    REQUIRE(json.ok());
    std::string text(json.value().begin(), json.value().end());
    size_t renamed = 0;
    for (size_t at = 0; (at = text.find("\"relu\"", at)) != std::string::npos; ++renamed) {
        text.replace(at, 6, "\"relu_unused\"");
        at += 13;
    }
    REQUIRE(renamed >= 2); // the node's output and the graph output
    auto ep = load_program(std::vector<uint8_t>(text.begin(), text.end()), "renamed.json");
    INFO((ep.ok() ? std::string() : ep.error().str()));
    REQUIRE(ep.ok());
    const Node* relu = ep.value().graph->find("relu_unused");
    REQUIRE(relu);
    CHECK(relu->target() == "torch.ops.aten.relu.default");
    CHECK(python_code(*ep.value().graph).find("return (relu_unused,)") != std::string::npos);
}
