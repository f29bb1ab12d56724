// Hostile input, below the corpus: checked arithmetic, the budgets and their
// messages, the JSON guards, name rules, and the executor's degenerate-shape
// rules (the cases where torch returns an empty or NaN result rather than
// raising, which the bad-file corpus cannot show).
#include <algorithm>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "exec/interpreter.h"
#include "graph/namespace.h"
#include "io/fx_json.h"
#include "io/program_loader.h"
#include "io/zip.h"
#include "test_support.h"
#include "util/checked.h"
#include "util/json_read.h"
#include "util/limits.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

// Runs one op on `inputs` (placeholders) and literal trailing arguments.
Result<RunResult> run_op(const std::string& target, std::vector<Value> inputs,
                         std::vector<Argument> literals, const RunOptions& opt = {}) {
    Graph g;
    std::vector<Argument> args;
    for (size_t k = 0; k < inputs.size(); ++k)
        args.push_back(Argument::from_node(g.placeholder("in" + std::to_string(k))));
    for (auto& a : literals) args.push_back(std::move(a));
    Node* n = g.call_function(target, std::move(args), {}, "op");
    g.output(Argument::tuple({Argument::from_node(n)}));
    ModuleState state;
    return run_graph(g, inputs, state, opt);
}

Argument ints(std::vector<int64_t> v) {
    std::vector<Argument> items;
    for (int64_t x : v) items.push_back(Argument::from_int(x));
    return Argument::list(std::move(items));
}

Value tensor(std::vector<int64_t> sizes, float fill = 1.0f) {
    Tensor t = Tensor::zeros(ScalarType::Float, std::move(sizes));
    for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = fill;
    return Value::of(std::move(t));
}

} // namespace

TEST_CASE("checked arithmetic: the result or nothing, never a wrapped value", "[util]") {
    CHECK(checked_mul(int64_t(1) << 31, int64_t(1) << 31) == (int64_t(1) << 62));
    CHECK_FALSE(checked_mul(int64_t(1) << 32, int64_t(1) << 32));
    CHECK_FALSE(checked_mul(int64_t(1) << 62, 4));
    CHECK_FALSE(checked_add(INT64_MAX, 1));
    CHECK(checked_numel({2, 3, 4}) == 24);
    CHECK(checked_numel({}) == 1);
    CHECK(checked_numel({0, 5}) == 0);
    // A zero dimension does not excuse the others: flatten's partial products must fit too.
    CHECK_FALSE(checked_numel({0, int64_t(1) << 62, int64_t(1) << 62}));
    CHECK_FALSE(checked_numel({-1, 4}));
    CHECK_FALSE(checked_nbytes({int64_t(1) << 62}, 4));
    CHECK(saturate_cast<int64_t>(1e300) == INT64_MAX);
    CHECK(saturate_cast<int64_t>(-1e300) == INT64_MIN);
    CHECK(saturate_cast<int64_t>(std::nan("")) == 0);
    CHECK(saturate_cast<uint8_t>(255.9) == 255);
    CHECK(saturate_cast<uint8_t>(256.0) == 255);
    CHECK(saturate_cast<int8_t>(-129.0) == -128);
    CHECK(saturate_cast<int32_t>(2147483648.0) == INT32_MAX);
    CHECK(saturate_cast<int32_t>(-7.9) == -7);
}

TEST_CASE("limits: automatic budgets follow the file's size; --limit sets them", "[util]") {
    Limits l;
    const uint64_t MiB = Limits::kMiB;
    CHECK(l.file_budget(0) == 64 * MiB);
    CHECK(l.file_budget(MiB) == 80 * MiB);
    CHECK(l.file_budget(uint64_t(1) << 40) == 512 * MiB); // capped
    CHECK(l.run_budget(MiB) == 80 * MiB);
    CHECK(l.work_budget(MiB) == 1000000000ull + 256 * MiB);
    // A converted file pt2lab saved holds int8 weights, a quarter of the float file's
    // bytes: its runs get at least what the float file's got at 64 a byte (a saved,
    // converted ResNet-18 at 224x224, 12 MiB for 1.84e9 multiply-adds, was refused).
    for (uint64_t float_bytes : {uint64_t{8} * MiB, uint64_t{45} * MiB, uint64_t{200} * MiB})
        CHECK(l.work_budget(float_bytes / 4) >=
              std::min<uint64_t>(1000000000ull + 64 * float_bytes, 20000000000ull));
    CHECK(l.work_budget(uint64_t(1) << 40) == 20000000000ull);
    REQUIRE(l.set("file-mb=1000").ok());
    CHECK(l.file_budget(0) == 1000 * MiB); // explicit: no longer relative
    REQUIRE(l.set("tensor-mb=2").ok());
    CHECK(l.tensor_bytes == 2 * MiB);
    REQUIRE(l.set("run-gmacs=3").ok());
    CHECK(l.work_budget(0) == 3000000000ull);
    CHECK_FALSE(l.set("tensor-mb=0").ok());
    CHECK_FALSE(l.set("tensor-mb=-5").ok());
    CHECK_FALSE(l.set("tensor-mb").ok());
    CHECK(l.set("banana=1").error().message.find("unknown limit 'banana'") != std::string::npos);
}

TEST_CASE("budgets: each refusal says which limit, what asked, and how to raise it", "[util]") {
    Limits l;
    Budget b(l, Budget::Scope::File, 1 << 20);
    Status big = b.tensor({65536, 65536}, 4, "stand-in values for w");
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().where == "stand-in values for w");
    CHECK(big.error().message ==
          "[65536, 65536] x 4 bytes needs 16.0 GiB, more than the 256.0 MiB pt2lab accepts for one "
          "tensor");
    CHECK(big.error().hint.find("--limit tensor-mb=N") != std::string::npos);
    Status wraps = b.tensor({int64_t(1) << 32, int64_t(1) << 32}, 4, "w");
    CHECK(wraps.error().message.find("more elements than fit in 64 bits") != std::string::npos);
    // The file budget is cumulative: 80 MiB for a 1 MiB file.
    for (int k = 0; k < 4; ++k) REQUIRE(b.bytes(20 * Limits::kMiB, "record").ok());
    Status over = b.bytes(1, "record r");
    REQUIRE_FALSE(over.ok());
    CHECK(over.error().message ==
          "loading this file would need 80.0 MiB in all (1 byte more for this), more than its "
          "80.0 MiB (the budget for a 1.0 MiB file: 64 MiB + 16 x its size, at most 512 MiB)");
    CHECK(over.error().hint.find("--limit file-mb=N") != std::string::npos);
    Budget run(l, Budget::Scope::Run, 0);
    REQUIRE(run.work(999999999, "conv").ok());
    Status work = run.work(2, "conv");
    CHECK(work.error().message.find("multiply-adds in all") != std::string::npos);
    CHECK(work.error().hint.find("--limit run-gmacs=N") != std::string::npos);
}

TEST_CASE("JSON: nesting past 256, duplicate keys and integers past int64 are refused", "[util]") {
    std::string ok = std::string(255, '[') + "1" + std::string(255, ']');
    CHECK(parse_json_text(ok, "f").ok());
    std::string deep = "{\"a\": " + std::string(300, '[') + std::string(300, ']') + "}";
    auto r = parse_json_text(deep, "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == "f.json");
    CHECK(r.error().message == "JSON nested deeper than 256 levels");
    CHECK(r.error().where.rfind("$.a[0][0]", 0) == 0);
    auto dup = parse_json_text("{\"x\": 1, \"y\": {\"z\": 2, \"z\": 3}}", "f");
    REQUIRE_FALSE(dup.ok());
    CHECK(dup.error().where == "$.y.z");
    CHECK(dup.error().message == "duplicate key \"z\" in one object");
    // past the linear check: 40 keys, then one repeated
    std::string wide = "{";
    for (int k = 0; k < 40; ++k) wide += "\"k" + std::to_string(k) + "\": 0, ";
    CHECK_FALSE(parse_json_text(wide + "\"k7\": 1}", "f").ok());
    CHECK(parse_json_text(wide + "\"k40\": 1}", "f").ok());
    auto big = parse_json_text("[9223372036854775807, 9223372036854775808]", "f");
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().where == "$[1]");
    CHECK(parse_json_text("[-9223372036854775808]", "f").ok());
    // key order is kept, members in order
    auto ordered = parse_json_text("{\"b\": 1, \"a\": {\"d\": [1, {\"e\": 2}], \"c\": 3}}", "f");
    REQUIRE(ordered.ok());
    CHECK(ordered.value().dump() == "{\"b\":1,\"a\":{\"d\":[1,{\"e\":2}],\"c\":3}}");
}

TEST_CASE("JSON previews cost their length, not the value's size", "[util]") {
    json big = json::array();
    for (int k = 0; k < 200000; ++k) big.push_back(k);
    std::string p = json_preview(big, 60);
    CHECK(p.size() == 63);
    CHECK(p.rfind("[0,1,2,3", 0) == 0);
    CHECK(json_preview(json("a\nb"), 60) == "\"a\\nb\"");
    CHECK(json_preview(json::object({{"k", 1}}), 60) == "{\"k\":1}");
}

TEST_CASE("names from files: what torch.fx could have made, or a reason", "[util]") {
    CHECK(node_name_problem("conv2d_1").empty());
    CHECK(node_name_problem("_unnamed").empty());
    CHECK(node_name_problem("relu\nimport os") ==
          "node name 'relu\\nimport os' is not a Python identifier (torch.fx would have named it "
          "'relu_import_os')");
    CHECK(node_name_problem("1x") ==
          "node name '1x' is not a Python identifier (torch.fx would have named it '_1x')");
    CHECK(node_name_problem("") != "");
    CHECK(node_name_problem("lambda").find("is a Python keyword") != std::string::npos);
    CHECK(qualified_name_problem("torch.ops.aten.relu.default").empty());
    CHECK(qualified_name_problem("operator.getitem").empty());
    CHECK_FALSE(qualified_name_problem("torch.ops..relu").empty());
    CHECK_FALSE(qualified_name_problem("f(x)").empty());
    CHECK(attribute_path_problem("body.0.weight").empty());
    CHECK_FALSE(attribute_path_problem("conv.weight\n").empty());
    CHECK_FALSE(attribute_path_problem("a..b").empty());
    CHECK(sanitize_name("a b\tc") == "a_b_c");
}

TEST_CASE("inflate refuses a claim past deflate's 1032:1 before allocating", "[zip]") {
    const uint8_t hi[] = {0xcb, 0xc8, 0x04, 0x00}; // "hi", fixed Huffman
    auto r = inflate_raw(hi, sizeof hi, uint64_t(1) << 40);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("more than deflate can produce (1032:1)") != std::string::npos);
    CHECK(inflate_raw(hi, sizeof hi, 2).ok());
}

TEST_CASE("loading: the file's budget, the symbolic_trace JSON's message", "[loader]") {
    auto bytes = read_file_bytes(source_path("assets/graphs/conv_relu.pt2"));
    REQUIRE(bytes.ok());
    Limits tiny;
    tiny.tensor_bytes = 100; // conv.weight is 864 bytes
    auto r = load_program(bytes.value(), "conv_relu.pt2", tiny);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().where == "tensor conv.weight");
    CHECK(r.error().message ==
          "[8, 3, 3, 3] x 4 bytes needs 864 bytes, more than the 100 bytes pt2lab accepts for one "
          "tensor");
    auto ok = load_program(bytes.take(), "conv_relu.pt2");
    REQUIRE(ok.ok());
    CHECK(ok.value().file_size > 10000);

    // run / decompose / prepare / convert load a program: a symbolic_trace JSON says what it is
    auto fx = read_file_bytes(source_path("assets/fx/conv_relu.json"));
    REQUIRE(fx.ok());
    auto e = load_program(fx.take(), "conv_relu.json");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().message.find("this is pt2lab's symbolic_trace graph JSON (torch.fx), not a "
                                 "serialized ExportedProgram: it can be shown") == 0);
    CHECK(e.error().hint == "open the torch.export .pt2 of the same model "
                            "(assets/graphs/conv_relu.pt2) for those");
}

TEST_CASE("seeded inputs are checked against the run's limits before allocating", "[exec]") {
    ExportedProgram ep = load_asset("conv_relu");
    Node* x = ep.graph->find("x");
    REQUIRE(x);
    x->meta.val.tensor.sizes[0] = int64_t(1) << 40;
    auto r = seeded_inputs(ep, 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().where == "input x");
    CHECK(r.error().message.find("pt2lab accepts for one tensor") != std::string::npos);
    x->meta.val.tensor.sizes[0] = 2;
    CHECK(seeded_inputs(ep, 0).ok());
}

TEST_CASE("kernels: torch's empty and NaN results where torch allows the shape", "[exec]") {
    // batch_norm of an empty batch: an empty result, running statistics untouched
    for (bool training : {false, true}) {
        Tensor rm = Tensor::zeros(ScalarType::Float, {3});
        auto rm_value = Value::of(rm);
        auto r = run_op("torch.ops.aten.batch_norm.default",
                        {tensor({0, 3, 4, 4}), Value::none(), Value::none(), rm_value, tensor({3})},
                        {Argument::from_bool(training), Argument::from_float(0.1),
                         Argument::from_float(1e-5), Argument::from_bool(false)});
        INFO(training << (r.ok() ? "" : r.error().str()));
        REQUIRE(r.ok());
        CHECK(r.value().outputs[0].tensor->sizes == std::vector<int64_t>{0, 3, 4, 4});
        CHECK(rm_value.tensor->f32()[0] == 0.0f);
    }
    // adaptive_avg_pool2d to [1, 1] over an empty plane is a mean: NaN, as in torch
    auto mean = run_op("torch.ops.aten.adaptive_avg_pool2d.default", {tensor({2, 3, 0, 16})},
                       {ints({1, 1})});
    REQUIRE(mean.ok());
    CHECK(mean.value().outputs[0].tensor->sizes == std::vector<int64_t>{2, 3, 1, 1});
    CHECK(std::isnan(mean.value().outputs[0].tensor->f32()[0]));
    auto under = run_op("torch.ops.aten._adaptive_avg_pool2d.default", {tensor({2, 3, 0, 16})},
                        {ints({1, 1})});
    REQUIRE_FALSE(under.ok());
    CHECK(under.error().message.find("non-zero size for non-batch dimensions") !=
          std::string::npos);
    auto zero_out = run_op("torch.ops.aten.adaptive_avg_pool2d.default", {tensor({2, 3, 4, 4})},
                           {ints({0, 0})});
    REQUIRE(zero_out.ok());
    CHECK(zero_out.value().outputs[0].tensor->sizes == std::vector<int64_t>{2, 3, 0, 0});
    // linear with no input features: the bias alone
    auto lin = run_op("torch.ops.aten.linear.default",
                      {tensor({2, 0}), tensor({5, 0}), tensor({5}, 0.5f)}, {});
    REQUIRE(lin.ok());
    CHECK(lin.value().outputs[0].tensor->sizes == std::vector<int64_t>{2, 5});
    CHECK(lin.value().outputs[0].tensor->f32()[9] == 0.5f);
    // mean over dim 0 of a 0-d tensor is allowed; dim 1 is not
    auto m0 = run_op("torch.ops.aten.mean.dim", {tensor({}, 2.0f)}, {ints({0})});
    REQUIRE(m0.ok());
    CHECK(m0.value().outputs[0].tensor->f32()[0] == 2.0f);
    CHECK_FALSE(run_op("torch.ops.aten.mean.dim", {tensor({}, 2.0f)}, {ints({1})}).ok());
    // conv of an empty batch: an empty result of the right shape
    auto conv =
        run_op("torch.ops.aten.conv2d.default", {tensor({0, 3, 8, 8}), tensor({4, 3, 3, 3})}, {});
    REQUIRE(conv.ok());
    CHECK(conv.value().outputs[0].tensor->sizes == std::vector<int64_t>{0, 4, 6, 6});
}

TEST_CASE("kernels: torch's errors where torch raises, with checked arithmetic", "[exec]") {
    // max_pool2d output sizes round toward -inf, as ATen's div_rtn does
    auto small = run_op("torch.ops.aten.max_pool2d.default", {tensor({1, 1, 1, 1})},
                        {ints({3, 3}), ints({3, 3})});
    REQUIRE_FALSE(small.ok());
    CHECK(small.error().message.find("Output size is too small") != std::string::npos);
    // a kernel far larger than the input, padded: the loops stay on the input
    auto huge = run_op("torch.ops.aten.max_pool2d.default", {tensor({1, 1, 4, 4}, 3.0f)},
                       {ints({2000000001, 1}), ints({1, 1}), ints({1000000000, 0})});
    REQUIRE(huge.ok());
    CHECK(huge.value().outputs[0].tensor->f32()[0] == 3.0f);
    auto sym = run_op("torch.ops.aten.sym_size.int", {tensor({})}, {Argument::from_int(-1)});
    REQUIRE_FALSE(sym.ok());
    CHECK(sym.error().message ==
          "while executing %op: aten.sym_size.int: Dimension specified as -1 but tensor has no "
          "dimensions");
    auto ambiguous = run_op("torch.ops.aten.view.default", {tensor({0})}, {ints({0, -1})});
    REQUIRE_FALSE(ambiguous.ok());
    CHECK(ambiguous.error().message.find("can be any value and is ambiguous") != std::string::npos);
    auto pad = run_op("torch.ops.aten.conv2d.default", {tensor({1, 3, 8, 8}), tensor({4, 3, 3, 3})},
                      {Argument::none(), ints({1, 1}), ints({-1, -1})});
    REQUIRE_FALSE(pad.ok());
    CHECK(pad.error().message.find("negative padding is not supported") != std::string::npos);
    auto zero_k =
        run_op("torch.ops.aten.conv2d.default", {tensor({1, 3, 8, 8}), tensor({4, 3, 0, 3})}, {});
    CHECK(zero_k.error().message.find("kernel size should be greater than zero") !=
          std::string::npos);
}

TEST_CASE("integers: int64 arithmetic wraps as torch's does, writes saturate", "[exec]") {
    Tensor a = Tensor::zeros(ScalarType::Long, {2});
    a.data<int64_t>()[0] = INT64_MAX;
    a.data<int64_t>()[1] = 9007199254740993; // 2^53 + 1: exact only without a trip through double
    auto r = run_op("torch.ops.aten.add.Tensor", {Value::of(a)}, {Argument::from_int(1)});
    REQUIRE(r.ok());
    CHECK(r.value().outputs[0].tensor->data<int64_t>()[0] == INT64_MIN);
    CHECK(r.value().outputs[0].tensor->data<int64_t>()[1] == 9007199254740994);
    Tensor t = Tensor::zeros(ScalarType::Long, {3});
    t.set(0, 1e300);
    t.set(1, std::nan(""));
    t.set(2, -1e300);
    CHECK(t.data<int64_t>()[0] == INT64_MAX);
    CHECK(t.data<int64_t>()[1] == 0);
    CHECK(t.data<int64_t>()[2] == INT64_MIN);
}

// The run's budget holds the values alive at once, not the sum of all it made:
// a chain of 12 relus on 1 MiB allocates 12 MiB but never holds more than 2 MiB
// of results (the one being made and the one it reads), so it runs in 3 MiB. Kept
// values (for the inspector) count while they are kept: by default a run keeps
// them while they fit in half its budget and drops the rest once read; told to
// keep 3 MiB, the same chain needs 4 MiB at once and is refused.
TEST_CASE("a run's budget is its peak of live values, not the sum of its allocations", "[exec]") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* prev = x;
    for (int k = 0; k < 12; ++k)
        prev = g.call_function("torch.ops.aten.relu.default", {Argument::from_node(prev)});
    g.output(Argument::tuple({Argument::from_node(prev)}));
    RunOptions opt;
    opt.limits.run_bytes = 3 << 20;
    opt.keep_values = false;
    ModuleState state;
    auto r = run_graph(g, {tensor({256, 1024})}, state, opt); // 1 MiB of float32
    INFO((r.ok() ? std::string() : r.error().str()));
    REQUIRE(r.ok());
    CHECK(r.value().outputs[0].tensor->numel() == 256 * 1024);
    opt.keep_values = true; // the page's runs: half of 3 MiB kept, x's value alone fits
    auto kept = run_graph(g, {tensor({256, 1024})}, state, opt);
    REQUIRE(kept.ok());
    CHECK(kept.value().values.count("x") == 1);
    CHECK(kept.value().values.count("relu_default") == 0);
    CHECK(kept.value().values_not_kept == 12);
    CHECK(kept.value().values_kept_bytes == 1 << 20);
    opt.keep_values_bytes = 3 << 20;
    auto all = run_graph(g, {tensor({256, 1024})}, state, opt);
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().message.find("%relu_default_3") != std::string::npos);
    CHECK(all.error().message.find("this run would need 4.0 MiB at once (1.0 MiB more for this)") !=
          std::string::npos);
}

TEST_CASE("a run's budget refuses a result before it is allocated, naming the node", "[exec]") {
    RunOptions opt;
    opt.limits.run_bytes = 1 << 20;
    auto r = run_op("torch.ops.aten.relu.default", {tensor({512, 1024})}, {}, opt);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "while executing %op: aten.relu.default: result [512, 1024]: "
                               "this run would need 2.0 MiB at once (2.0 MiB more for this), more "
                               "than its 1.0 MiB (set with --limit)");
    opt.limits.run_bytes = 0;
    opt.limits.run_work = 1000;
    auto w = run_op("torch.ops.aten.conv2d.default", {tensor({1, 3, 8, 8}), tensor({4, 3, 3, 3})},
                    {}, opt);
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().message.find("multiply-adds in all") != std::string::npos);
    // tensors of a dtype the kernels do not compute in are refused at the call
    Tensor half;
    half.dtype = ScalarType::Half;
    half.sizes = {2};
    half.storage.assign(4, 0);
    auto h = run_op("torch.ops.aten.relu.default", {Value::of(half)}, {});
    REQUIRE_FALSE(h.ok());
    CHECK(h.error().message.find("pt2lab's executor does not compute in float16") !=
          std::string::npos);
}

TEST_CASE("fx graph JSON: attribute shapes are checked before module_from_fx allocates",
          "[loader]") {
    std::string text = read_text(source_path("assets/fx/conv_relu.json"));
    auto j = parse_json_text(text, "f");
    REQUIRE(j.ok());
    j.value()["attributes"]["huge"] = json{{"dtype", "float32"}, {"shape", {65536, 65536}}};
    auto r = read_fx_graph_json(j.value().dump(), "fx.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().where == "$.attributes.huge");
    CHECK(r.error().message.find("attribute huge: [65536, 65536] x 4 bytes needs 16.0 GiB") == 0);
}
