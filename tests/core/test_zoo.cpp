// The model zoo against torch 2.14.1 (tools/zoo_models.py): torchvision
// classifiers, transformer and recurrent layers exported by real torch. For each model:
// pt2lab prints the export as torch does (graph, code, print_readable,
// ep.module().code), its own run_decompositions at both levels print as
// torch's, every form runs on the archive's sample input within 1e-4 of torch's
// eager output (torch's own decomposed programs too), and prepare_pt2e /
// calibrate / convert_pt2e go through. The weights live in a cache outside git
// (build/zoo, or $PT2LAB_ZOO_DIR) that the generator writes; the cache's
// manifest must equal the committed tests/golden/zoo/manifest.json.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "exec/parity.h"
#include "graph/printer.h"
#include "io/npy.h"
#include "passes/decompose.h"
#include "passes/pt2e.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using nlohmann::json;

namespace {

const char* kRegenerate = "bash scripts/torch_env.sh run sid python3 tools/zoo_models.py";

std::string zoo_dir() {
    const char* env = std::getenv("PT2LAB_ZOO_DIR");
    return env && *env ? std::string(env) : source_path("build/zoo");
}

json read_json(const std::string& path) {
    std::string text = read_text(path);
    json j = json::parse(text, nullptr, false);
    return text.empty() ? json() : j;
}

// What pt2lab prints for a program, under tools/zoo_models.py's keys.
std::map<std::string, std::string> texts(const ExportedProgram& ep) {
    std::map<std::string, std::string> t;
    t["graph"] = graph_str(*ep.graph);
    t["code"] = python_code(*ep.graph);
    CodegenOptions verbose;
    verbose.verbose = true;
    t["readable"] = print_readable(*ep.graph, verbose);
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    t["module_code"] = python_code(*gm.value().graph, gm.value().codegen);
    return t;
}

// Every text torch printed equals pt2lab's; returns how many differ.
int compare_texts(const std::string& what, const ExportedProgram& ep, const json& torch_texts) {
    auto ours = texts(ep);
    int differ = 0;
    for (auto it = torch_texts.begin(); it != torch_texts.end(); ++it) {
        REQUIRE(ours.count(it.key()));
        const std::string expected = it.value().get<std::string>();
        INFO(what << " " << it.key() << "\n" << first_difference(expected, ours[it.key()]));
        CHECK(ours[it.key()] == expected);
        differ += ours[it.key()] != expected;
    }
    return differ;
}

Tensor npy_file(const std::string& path) {
    auto bytes = read_file_bytes(path);
    REQUIRE(bytes.ok());
    auto t = read_npy(bytes.value(), path);
    REQUIRE(t.ok());
    return Tensor::from_data(t.value());
}

// Runs the program on its own sample input; every output within `atol` of torch's eager one.
double run_and_compare(const std::string& what, const ExportedProgram& ep,
                       const std::vector<Tensor>& expected, bool fast_conv) {
    ModuleState state = ModuleState::from_program(ep);
    RunOptions opt;
    opt.kernels.fast_conv = fast_conv;
    opt.keep_values = false;
    auto r = run_program(ep, state, example_inputs(ep), opt);
    INFO(what << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    REQUIRE(r.value().outputs.size() == expected.size());
    double worst = 0.0;
    for (size_t k = 0; k < expected.size(); ++k) {
        REQUIRE(r.value().outputs[k].is_tensor());
        TensorParity p =
            compare_tensors(what, *r.value().outputs[k].tensor, expected[k], Tolerance{0.0, 1e-4});
        INFO(what << " output " << k << ": max |diff| " << p.max_abs);
        CHECK(p.max_abs <= 1e-4);
        worst = std::max(worst, p.max_abs);
    }
    // Reading never copies: every tensor the program does not write still shares its bytes.
    std::set<std::string> written;
    for (const OutputSpec& os : ep.signature.outputs)
        if (os.kind == OutputKind::BufferMutation || os.kind == OutputKind::ParameterMutation)
            written.insert(os.target);
    for (const auto& [fqn, t] : state.tensors) {
        INFO(what << ": " << fqn << " was copied by a run that only reads it");
        if (!written.count(fqn)) CHECK(t->storage.shared());
    }
    if (fast_conv) { // the fused convs (conv_fusion.h) write the bits of the unfused kernels
        ModuleState plain = ModuleState::from_program(ep);
        RunOptions unfused = opt;
        unfused.fuse_convs = false;
        auto u = run_program(ep, plain, example_inputs(ep), unfused);
        REQUIRE(u.ok());
        for (size_t k = 0; k < expected.size(); ++k) {
            const Tensor &f = *r.value().outputs[k].tensor, &g = *u.value().outputs[k].tensor;
            INFO(what << " output " << k << ": the fused run differs from the unfused one");
            REQUIRE(f.sizes == g.sizes);
            REQUIRE(f.storage.size() == g.storage.size());
            CHECK(std::memcmp(f.data<uint8_t>(), g.data<uint8_t>(), f.storage.size()) == 0);
        }
    }
    return worst;
}

// $PT2LAB_ZOO_ONLY (comma-separated model names) narrows a run to those models, for
// working on one; unset, every model runs.
bool selected(const std::string& name) {
    const char* only = std::getenv("PT2LAB_ZOO_ONLY");
    if (!only || !*only) return true;
    const std::string list = "," + std::string(only) + ",";
    return list.find("," + name + ",") != std::string::npos;
}

ExportedProgram load(const std::string& path) {
    auto r = load_program_file(path);
    INFO(path << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}

// Whether prepare_pt2e (XNNPACKQuantizer's recipe) places any observer in the file's module.
bool observed(const std::string& path) {
    ExportedProgram ep = load(path);
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    auto prep = prepare_pt2e(gm.value());
    REQUIRE(prep.ok());
    return !prep.value().observers.empty();
}

} // namespace

TEST_CASE("zoo: torchvision and transformer exports print, decompose and run as in torch",
          "[zoo]") {
    const std::string dir = zoo_dir();
    json committed = read_json(source_path("tests/golden/zoo/manifest.json"));
    REQUIRE(committed.is_object());
    json cache = read_json(dir + "/manifest.json");
    if (!cache.is_object()) {
        // The weights are not in git: without the cache (no torch root here) there is
        // nothing to compare; the assets suite makes it and requires it.
        INFO("no model zoo cache in " << dir << "; make it with: " << kRegenerate);
        if (std::getenv("PT2LAB_REQUIRE_TORCH")) FAIL("PT2LAB_REQUIRE_TORCH is set");
        WARN("zoo skipped: no cache in " << dir << " (" << kRegenerate << ")");
        return;
    }
    {
        json a = committed, b = cache;
        a.erase("cache");
        b.erase("cache");
        INFO("the cache in " << dir << " is not what the committed manifest describes; "
                             << kRegenerate);
        REQUIRE(a == b);
    }
    REQUIRE(committed["models"].size() >= 10);
    for (const json& m : committed["models"]) {
        const std::string name = m["name"].get<std::string>();
        if (!selected(name)) continue;
        const std::string folder = dir + "/" + name + "/";
        INFO("model " << name);
        json torch_texts = read_json(folder + "texts.json");
        REQUIRE(torch_texts.is_object());
        std::vector<Tensor> expected;
        for (size_t k = 0; k < m["outputs"].size(); ++k)
            expected.push_back(npy_file(folder + "output_" + std::to_string(k) + ".npy"));

        ExportedProgram ep = load(folder + "model.pt2");
        compare_texts(name + " export", ep, torch_texts["export"]);
        run_and_compare(name + " export (reference kernels)", ep, expected, false);
        run_and_compare(name + " export (fast conv)", ep, expected, true);

        for (const char* level : {"inference", "core_aten"}) {
            const IrLevel l =
                std::string(level) == "inference" ? IrLevel::Inference : IrLevel::CoreAten;
            ExportedProgram ours = load(folder + "model.pt2");
            auto report = run_decompositions(ours, DecompTable::for_level(l));
            INFO(level << ": " << (report.ok() ? report.value().str() : report.error().str()));
            REQUIRE(report.ok());
            CHECK(report.value().kept_without_rule.empty());
            REQUIRE(ours.graph->lint().ok());
            compare_texts(name + " pt2lab " + level, ours, torch_texts[level]);
            run_and_compare(name + " pt2lab " + level, ours, expected, true);
            // torch's own decomposed program, as saved: every Core ATen op runs
            ExportedProgram theirs = load(folder + m["files"][level].get<std::string>());
            run_and_compare(name + " torch " + level, theirs, expected, true);
        }

        // prepare_pt2e (XNNPACKQuantizer's recipe), calibrate on the sample input, convert
        auto gm = unlift(ep);
        REQUIRE(gm.ok());
        GraphModule q = gm.value().clone();
        auto prep = prepare_pt2e(q);
        INFO((prep.ok() ? prep.value().str() : prep.error().str()));
        REQUIRE(prep.ok());
        REQUIRE(q.lint().ok());
        ModuleState state = ModuleState::from_module(q);
        state.file_size = ep.file_size; // the run budget of the file the module came from
        std::vector<std::vector<Tensor>> batches = {example_inputs(ep)};
        REQUIRE(calibrate(q, state, batches).ok());
        auto conv = convert_pt2e(q, state, true);
        INFO((conv.ok() ? conv.value().str() : conv.error().str()));
        REQUIRE(conv.ok());
        REQUIRE(q.lint().ok());
        ModuleState qs = ModuleState::from_module(q);
        qs.file_size = ep.file_size;
        RunOptions opt;
        opt.kernels.fast_conv = true;
        opt.keep_values = false;
        auto qr = run_module(q, qs, example_inputs(ep), opt);
        INFO("converted: " << (qr.ok() ? "" : qr.error().str()));
        REQUIRE(qr.ok());
        REQUIRE(qr.value().outputs.size() == expected.size());
        // int8 fake quantization moves outputs, but not beyond the float output's range
        TensorParity p = compare_tensors(name + " converted", *qr.value().outputs[0].tensor,
                                         expected[0], Tolerance{0.0, 1e9});
        CHECK(std::isfinite(p.max_abs));
    }
}

TEST_CASE("zoo: the page's path runs every model on default settings and quantizes it", "[zoo]") {
    // What a user does with their own file: Workspace::open, Run with the fast
    // kernels (the page's default for a file of one's own), then Prepare,
    // Calibrate on nine batches (the page's count, on the fast kernels too),
    // Convert and Run again; each through the same Workspace the page holds,
    // the runs in slices as the page makes them.
    const std::string dir = zoo_dir();
    json committed = read_json(source_path("tests/golden/zoo/manifest.json"));
    if (!read_json(dir + "/manifest.json").is_object()) {
        if (std::getenv("PT2LAB_REQUIRE_TORCH")) FAIL("PT2LAB_REQUIRE_TORCH is set");
        WARN("zoo skipped: no cache in " << dir << " (" << kRegenerate << ")");
        return;
    }
    for (const json& m : committed["models"]) {
        const std::string name = m["name"].get<std::string>();
        if (!selected(name)) continue;
        const std::string folder = dir + "/" + name + "/";
        std::vector<Tensor> expected;
        for (size_t k = 0; k < m["outputs"].size(); ++k)
            expected.push_back(npy_file(folder + "output_" + std::to_string(k) + ".npy"));
        for (const char* file : {"model.pt2", "inference.pt2", "core_aten.pt2"}) {
            INFO(name << " " << file);
            auto ws = Workspace::open_file(folder + file);
            INFO((ws.ok() ? std::string() : ws.error().str()));
            REQUIRE(ws.ok());
            CHECK(ws.value()->unsupported_ops(GraphView::Module).empty());
            Action run = Action::of(Action::Kind::Run);
            run.fast_kernels = true;
            REQUIRE(ws.value()->begin(run).ok());
            while (!ws.value()->advance(0.002)) {
            }
            auto r = ws.value()->finish();
            INFO((r.ok() ? std::string() : r.error().str()));
            REQUIRE(r.ok());
            const RunResult& out = r.value().run->result;
            REQUIRE(out.outputs.size() == expected.size());
            for (size_t k = 0; k < expected.size(); ++k) {
                REQUIRE(out.outputs[k].is_tensor());
                TensorParity p = compare_tensors(name, *out.outputs[k].tensor, expected[k],
                                                 Tolerance{0.0, 1e-4});
                INFO("output " << k << ": max |diff| " << p.max_abs);
                CHECK(p.max_abs <= 1e-4);
            }
            if (std::string(file) != "model.pt2") continue;
            REQUIRE(ws.value()->apply(Action::of(Action::Kind::Prepare)).ok());
            Action cal = Action::of(Action::Kind::Calibrate);
            cal.repeat = 9;
            cal.fast_kernels = true;
            auto c = ws.value()->apply(cal);
            INFO((c.ok() ? std::string() : c.error().str()));
            if (!observed(folder + file)) {
                // XNNPACKQuantizer annotates none of its ops (nn.LSTM, nn.GRU): prepare placed
                // no observer, and Calibrate says so rather than run for nothing
                REQUIRE_FALSE(c.ok());
                CHECK(c.error().message == "the module has no observers to calibrate");
                continue;
            }
            REQUIRE(c.ok());
            auto q = ws.value()->apply(Action::of(Action::Kind::Convert));
            INFO((q.ok() ? std::string() : q.error().str()));
            REQUIRE(q.ok());
            auto qr = ws.value()->apply(run);
            INFO((qr.ok() ? std::string() : qr.error().str()));
            REQUIRE(qr.ok());
            REQUIRE(qr.value().run->result.outputs[0].is_tensor());
        }
    }
}
