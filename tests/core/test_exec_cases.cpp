// Every kernel against real PyTorch (torch 2.14.1 eager; tests/golden/exec,
// written by tools/exec_reference.py): small graphs per case (setup calls, then
// the case's call), observers, and multi-step model runs. Floats within 1e-5 max
// abs; integers, quantized values and qparams exactly; refused calls refused.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "exec/kernels.h"
#include "exec/parity.h"
#include "graph/op_table.h"
#include "io/npy.h"
#include "io/program_loader.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using nlohmann::json;

namespace {
const std::string kDir = "tests/golden/exec/";

json cases() {
    json j = json::parse(read_text(source_path(kDir + "cases.json")), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
}

Tensor npy(const std::string& rel) {
    return load_npy(kDir + rel);
}

// FORMATS.md section 2 argument encoding, plus {"tensor": key} -> the placeholder for key
// and {"node": name} -> the setup call of that name.
Argument decode(const json& j, const std::map<std::string, Node*>& tensors) {
    if (j.is_null()) return Argument::none();
    if (j.is_boolean()) return Argument::from_bool(j.get<bool>());
    if (j.is_number_integer()) return Argument::from_int(j.get<int64_t>());
    if (j.is_number_float()) return Argument::from_float(j.get<double>());
    if (j.is_string()) return Argument::from_string(j.get<std::string>());
    if (j.is_array()) {
        std::vector<Argument> items;
        for (const auto& x : j) items.push_back(decode(x, tensors));
        return Argument::list(std::move(items));
    }
    if (j.contains("tensor"))
        return Argument::from_node(tensors.at(j["tensor"].get<std::string>()));
    if (j.contains("node")) return Argument::from_node(tensors.at(j["node"].get<std::string>()));
    if (j.contains("tuple")) {
        std::vector<Argument> items;
        for (const auto& x : j["tuple"]) items.push_back(decode(x, tensors));
        return Argument::tuple(std::move(items));
    }
    if (j.contains("dtype"))
        return Argument::from_dtype(*scalar_type_from_name(j["dtype"].get<std::string>()));
    if (j.contains("device")) return Argument::device(j["device"].get<std::string>());
    if (j.contains("repr")) { // torch.strided, the one layout a factory case passes
        const std::string r = j["repr"].get<std::string>();
        return r == "torch.strided" ? Argument::layout(7) : Argument::repr(r);
    }
    if (j.contains("float")) {
        std::string s = j["float"].get<std::string>();
        return Argument::from_float(s == "nan" ? std::nan("") : s == "-inf" ? -INFINITY : INFINITY);
    }
    FAIL("unknown argument encoding " << j.dump());
    return Argument::none();
}

void check_close(const std::string& what, const Tensor& actual, const Tensor& expected) {
    INFO(what << ": actual " << actual.type_str() << ", expected " << expected.type_str());
    REQUIRE(actual.sizes == expected.sizes);
    REQUIRE(actual.dtype == expected.dtype);
    bool is_float = expected.dtype == ScalarType::Float || expected.dtype == ScalarType::Double;
    TensorParity p = compare_tensors(what, actual, expected, Tolerance{0.0, is_float ? 1e-5 : 0.0});
    INFO("max |diff| " << p.max_abs);
    if (is_float)
        CHECK(p.max_abs <= 1e-5);
    else
        CHECK(p.bit_identical);
}

struct CaseRun {
    Result<RunResult> result = RunResult{};
    std::vector<Value> inputs;
    std::map<std::string, size_t> input_index;
};

CaseRun run_case(const json& c, bool fast) {
    Graph g;
    std::map<std::string, Node*> tensors;
    CaseRun run;
    for (auto it = c["tensors"].begin(); it != c["tensors"].end(); ++it) {
        tensors[it.key()] = g.placeholder(it.key());
        run.input_index[it.key()] = run.inputs.size();
        run.inputs.push_back(Value::of(npy(it.value().get<std::string>())));
    }
    auto call = [&](const json& call, const std::string& name) {
        std::vector<Argument> args;
        for (const auto& a : call["args"]) args.push_back(decode(a, tensors));
        Kwargs kwargs;
        for (auto it = call["kwargs"].begin(); it != call["kwargs"].end(); ++it)
            kwargs.emplace_back(it.key(), decode(it.value(), tensors));
        Node* n = g.call_function(call["target"].get<std::string>(), args, kwargs, name);
        REQUIRE(n->schema());
        return n;
    };
    if (c.contains("setup"))
        for (const auto& s : c["setup"])
            tensors[s["name"].get<std::string>()] = call(s, s["name"].get<std::string>());
    g.output(Argument::from_node(call(c, "op")));
    ModuleState state;
    RunOptions opt;
    opt.kernels.fast_conv = fast;
    run.result = run_graph(g, run.inputs, state, opt);
    return run;
}
} // namespace

// One returned value against its golden: an .npy path or {"value": encoded scalar/None}.
void check_result(const std::string& what, const Value& out, const json& expected) {
    if (expected.is_string()) {
        REQUIRE(out.is_tensor());
        check_close(what, *out.tensor, npy(expected.get<std::string>()));
        return;
    }
    const json& v = expected["value"];
    INFO(what << ": expected " << v.dump() << ", got " << out.describe());
    if (v.is_null())
        CHECK(out.kind == Value::Kind::None);
    else if (v.is_number_integer())
        CHECK((out.kind == Value::Kind::Int && out.i == v.get<int64_t>()));
    else
        FAIL("unexpected golden value " << v.dump());
}

TEST_CASE("kernels match PyTorch on the reference case table", "[exec]") {
    json all = cases();
    REQUIRE(all["cases"].size() >= 50);
    std::set<std::string> targets;
    int refused = 0;
    for (const auto& c : all["cases"]) {
        std::string name = c["name"].get<std::string>();
        INFO("case " << name << " (" << c["how"].get<std::string>() << ")");
        targets.insert(c["target"].get<std::string>());
        CaseRun run = run_case(c, false);
        if (c.contains("error")) { // torch refused the call: pt2lab must refuse it too
            REQUIRE_FALSE(run.result.ok());
            std::string torch_msg = c["error"].get<std::string>();
            torch_msg = torch_msg.substr(torch_msg.find(": ") + 2);
            INFO("pt2lab: " << run.result.error().str() << "\ntorch:  " << torch_msg);
            CHECK(run.result.error().str().find(torch_msg) != std::string::npos);
            ++refused;
            continue;
        }
        INFO((run.result.ok() ? std::string() : run.result.error().str()));
        REQUIRE(run.result.ok());
        const Value& out = run.result.value().outputs.at(0);
        const auto& expected = c["outputs"];
        if (expected.size() == 1) {
            check_result(name, out, expected[0]);
        } else {
            REQUIRE(out.kind == Value::Kind::Tuple);
            REQUIRE(out.items.size() == expected.size());
            for (size_t k = 0; k < expected.size(); ++k)
                check_result(name + " output " + std::to_string(k), out.items[k], expected[k]);
        }
        for (auto it = c["mutated"].begin(); it != c["mutated"].end(); ++it) {
            size_t arg = std::stoul(it.key());
            std::string key = c["args"][arg]["tensor"].get<std::string>();
            check_close(name + " mutated " + key, *run.inputs[run.input_index[key]].tensor,
                        npy(it.value().get<std::string>()));
        }
    }
    CHECK(refused >= 2);
    // every row of the op table with a kernel has a real-torch case, and torch's schema
    // string for it equals the row's (tests/golden/exec/cases.json "schemas")
    for (const OpInfo& op : op_table()) {
        if (!find_kernel(op)) continue;
        std::string t = op.schema.target();
        INFO(t);
        CHECK(targets.count(t));
        if (t.rfind("torch.ops.", 0) != 0) continue;
        REQUIRE(all["schemas"].contains(t));
        auto theirs = parse_op_schema(all["schemas"][t].get<std::string>());
        REQUIRE(theirs.ok());
        const OpSchema& ours = op.schema;
        REQUIRE(theirs.value().arguments.size() == ours.arguments.size());
        for (size_t k = 0; k < ours.arguments.size(); ++k) {
            const SchemaArg &a = ours.arguments[k], &b = theirs.value().arguments[k];
            INFO("argument " << a.name);
            CHECK(a.name == b.name);
            CHECK(a.type.str() == b.type.str());
            CHECK(a.kwarg_only == b.kwarg_only);
            CHECK(a.has_default == b.has_default);
            if (a.has_default) CHECK(arg_repr(a.default_value) == arg_repr(b.default_value));
        }
        CHECK(ours.returns.size() == theirs.value().returns.size());
    }
    // every lesson op is covered
    for (const char* t :
         {"torch.ops.aten.conv2d.default", "torch.ops.aten.convolution.default",
          "torch.ops.aten.batch_norm.default",
          "torch.ops.aten._native_batch_norm_legit_no_training.default",
          "torch.ops.aten._native_batch_norm_legit_functional.default",
          "torch.ops.aten.relu.default", "torch.ops.aten.mean.dim", "torch.ops.aten.linear.default",
          "torch.ops.aten.permute.default", "torch.ops.aten.t.default",
          "torch.ops.aten.addmm.default", "torch.ops.aten.add.Tensor", "torch.ops.aten.add_.Tensor",
          "torch.ops.aten.copy_.default", "torch.ops.aten.max_pool2d.default",
          "torch.ops.aten.adaptive_avg_pool2d.default", "torch.ops.aten.flatten.using_ints",
          "torch.ops.quantized_decomposed.quantize_per_tensor.default",
          "torch.ops.quantized_decomposed.dequantize_per_tensor.default"})
        CHECK(targets.count(t));
}

TEST_CASE("the fast conv2d agrees with the reference loop", "[exec]") {
    int compared = 0;
    json all = cases();
    for (const auto& c : all["cases"]) {
        std::string t = c["target"].get<std::string>();
        if (t != "torch.ops.aten.conv2d.default" && t != "torch.ops.aten.convolution.default")
            continue;
        INFO(c["name"].get<std::string>());
        CaseRun ref = run_case(c, false), fast = run_case(c, true);
        REQUIRE(ref.result.ok());
        REQUIRE(fast.result.ok());
        TensorParity p =
            compare_tensors("conv", *fast.result.value().outputs[0].tensor,
                            *ref.result.value().outputs[0].tensor, Tolerance{1e-5, 1e-5});
        INFO("max |diff| " << p.max_abs);
        CHECK(p.allclose);
        ++compared;
    }
    CHECK(compared >= 15);
}

TEST_CASE("MinMaxObserver and HistogramObserver equal torch.ao's exactly", "[exec]") {
    json all = cases();
    REQUIRE(all["observers"].size() >= 20);
    int histograms = 0;
    for (const auto& o : all["observers"]) {
        INFO(o["name"].get<std::string>());
        std::string dtype = o["dtype"].get<std::string>();
        ScalarType dt = dtype == "quint8" || dtype == "uint8" ? ScalarType::Byte : ScalarType::Char;
        QScheme qs = o["qscheme"] == "per_tensor_affine" ? QScheme::PerTensorAffine
                                                         : QScheme::PerTensorSymmetric;
        bool custom = !o["quant_min"].is_null();
        auto cfg = ObserverConfig::make(dt, qs, custom, custom ? o["quant_min"].get<int64_t>() : 0,
                                        custom ? o["quant_max"].get<int64_t>() : 0);
        REQUIRE(cfg.ok());
        cfg.value().plain_dtype = dtype == "int8" || dtype == "uint8";
        cfg.value().eps = static_cast<float>(o["eps"].get<double>());
        if (o["kind"] == "HistogramObserver") cfg.value().kind = ObserverKind::Histogram;
        std::shared_ptr<Observer> obs = make_observer(cfg.value());
        CHECK(std::string(cfg.value().kind_name()) == o["kind"].get<std::string>());
        for (const auto& f : o["inputs"]) REQUIRE(obs->observe(npy(f.get<std::string>())).ok());
        auto q = obs->calculate_qparams();
        REQUIRE(q.ok());
        CHECK(obs->min_val() == static_cast<float>(o["min_val"].get<double>()));
        CHECK(obs->max_val() == static_cast<float>(o["max_val"].get<double>()));
        if (o.contains("histogram")) {
            Tensor h = npy(o["histogram"].get<std::string>());
            const auto& mine = dynamic_cast<const HistogramObserver&>(*obs).histogram();
            REQUIRE(static_cast<int64_t>(mine.size()) == h.numel());
            for (int64_t k = 0; k < h.numel(); ++k)
                if (mine[size_t(k)] != h.f32()[k]) FAIL_CHECK("histogram bin " << k);
            ++histograms;
        }
        CHECK(q.value().scale == static_cast<float>(o["scale"].get<double>()));
        CHECK(q.value().zero_point == o["zero_point"].get<int64_t>());
    }
    CHECK(histograms >= 6);
}

TEST_CASE("an observer that never ran returns torch's defaults (1.0, 0)", "[exec]") {
    MinMaxObserver obs;
    auto q = obs.calculate_qparams();
    REQUIRE(q.ok());
    CHECK_FALSE(q.value().observed);
    CHECK(q.value().scale == 1.0f);
    CHECK(q.value().zero_point == 0);
    CHECK_FALSE(ObserverConfig::make(ScalarType::Byte, QScheme::PerTensorAffine, true, 5, 255)
                    .ok()); // must include 0
}

TEST_CASE("a histogram over a range near FLT_MAX bins every value (found by the drop fuzzer)",
          "[exec]") {
    // (v - min) * bins overflows float32 here; each value must still land in its bin.
    const float x[] = {-3e38f, 0.0f, 3e38f, 3e38f};
    std::vector<float> h = histc(x, 4, 2048, -3e38f, 3e38f);
    REQUIRE(h.size() == 2048);
    CHECK(h[0] == 1.0f);
    CHECK(h[1024] == 1.0f);
    CHECK(h[2047] == 2.0f);
    float mass = 0.0f;
    for (float v : h) mass += v;
    CHECK(mass == 4.0f);

    ObserverConfig cfg;
    cfg.kind = ObserverKind::Histogram;
    HistogramObserver obs(cfg);
    Tensor t = Tensor::zeros(ScalarType::Float, {4});
    std::copy(x, x + 4, t.f32());
    REQUIRE(obs.observe(t).ok());
    REQUIRE(obs.observe(t).ok());
    auto q = obs.calculate_qparams();
    REQUIRE(q.ok());
    CHECK(q.value().observed);
}

TEST_CASE("div_floor is c10's div_floor_floating bit for bit, and the search runs in pieces",
          "[exec]") {
    auto same = [](float a, float b) {
        const float fast = div_floor(a, b), ref = div_floor_reference(a, b);
        if (std::isnan(fast) || std::isnan(ref)) return std::isnan(fast) && std::isnan(ref);
        return std::memcmp(&fast, &ref, sizeof fast) == 0;
    };
    uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    auto uniform = [&] { return static_cast<float>(next() >> 8) / 16777216.0f; };
    size_t checked = 0, differ = 0;
    for (int k = 0; k < 2000000; ++k) {
        // b over many scales, a up to a few thousand b (the search's range) and beyond.
        const float b = std::ldexp(0.5f + uniform(), static_cast<int>(next() % 60) - 40);
        const float q = (uniform() - 0.3f) * static_cast<float>(1u << (next() % 26));
        float a = q * b;
        if (k % 4 == 1) a = std::round(q) * b; // on an integer quotient
        if (k % 4 == 2) a = std::nextafter(std::round(q) * b, 1e38f);
        if (k % 4 == 3) a = std::nextafter(std::round(q) * b, -1e38f);
        differ += same(a, b) ? 0 : 1;
        ++checked;
    }
    const float inf = std::numeric_limits<float>::infinity();
    for (float a : {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, std::nanf(""), 3e38f, 1e-45f})
        for (float b : {1.0f, 1e-45f, 3e38f, inf, -2.0f, 0.0f, -0.0f, std::nanf("")}) {
            differ += same(a, b) ? 0 : 1;
            ++checked;
        }
    CHECK(checked > 2000000);
    CHECK(differ == 0);

    // HistogramObserver's search in the smallest pieces picks the same range.
    ObserverConfig cfg;
    cfg.kind = ObserverKind::Histogram;
    HistogramObserver whole(cfg), cut(cfg);
    Tensor t = Tensor::zeros(ScalarType::Float, {65536});
    for (int64_t i = 0; i < t.numel(); ++i) // a smooth long tail, as after a ReLU
        t.f32()[i] = -std::log(1.0f - uniform() * 0.999f);
    REQUIRE(whole.observe(t).ok());
    REQUIRE(cut.observe(t).ok());
    int pieces = 0;
    while (!cut.prepare_qparams(std::chrono::steady_clock::time_point::min())) ++pieces;
    INFO(pieces << " pieces");
    CHECK(pieces >= 2);
    CHECK(cut.search_range() == whole.search_range());
    REQUIRE(cut.calculate_qparams().ok());
    CHECK(cut.calculate_qparams().value().scale == whole.calculate_qparams().value().scale);
    CHECK(cut.calculate_qparams().value().zero_point ==
          whole.calculate_qparams().value().zero_point);
}

TEST_CASE("multi-step model runs follow PyTorch (train: running stats and counter)", "[exec]") {
    json all = cases();
    REQUIRE(all["model_runs"].size() >= 2);
    for (const auto& m : all["model_runs"]) {
        INFO(m["name"].get<std::string>());
        auto ep = load_program_file(source_path(m["asset"].get<std::string>()));
        REQUIRE(ep.ok());
        for (bool module_form : {false, true}) {
            ModuleState state = ModuleState::from_program(ep.value());
            auto gm = unlift(ep.value());
            REQUIRE(gm.ok());
            int step = 0;
            for (const auto& s : m["steps"]) {
                INFO("step " << step++ << (module_form ? " (ep.module())" : " (ep.graph)"));
                std::vector<Tensor> in = {npy(s["input"].get<std::string>())};
                auto r = module_form ? run_module(gm.value(), state, in)
                                     : run_program(ep.value(), state, in);
                REQUIRE(r.ok());
                check_close("output", *r.value().outputs[0].tensor,
                            npy(s["output"].get<std::string>()));
                for (auto it = s["buffers"].begin(); it != s["buffers"].end(); ++it)
                    check_close(it.key(), *state.tensors.at(it.key()),
                                npy(it.value().get<std::string>()));
            }
        }
    }
}
