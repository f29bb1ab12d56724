// Whole-model forward on pt2lab's executor: load a .pt2, run ep.graph on the
// file's own sample input, first run and steady state, per-op breakdown. The
// same code is a native CLI and, under emscripten, the browser module that
// tools/model_bench.js times beside ONNX Runtime Web. Figures only: it checks
// that the output matches a reference, never how fast it is.
//   native: build/native/bench/pt2lab_model_bench FILE.pt2 [--runs N] [--expect output.bin]
//           [--reference] [--profile]
//   wasm:   build/wasm/bench/pt2lab_model_bench.js (+ .wasm), the C functions below
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#if defined(__EMSCRIPTEN__)
#include <malloc.h>
#endif
#include <memory>
#include <string>
#include <vector>

#include "exec/interpreter.h"
#include "exec/warm_up.h"
#include "io/program_loader.h"

using namespace pt2lab;

namespace {

// One loaded model. load_program takes the file's bytes (moved, not copied):
// the program's weights are views into them, and the state shares those.
struct Bench {
    std::vector<uint8_t> file;
    std::unique_ptr<ExportedProgram> ep;
    ModuleState state;
    std::vector<Tensor> inputs;
    RunOptions opt;
    std::vector<float> output;
    std::string error;
    std::string profile_json;
};
Bench g_bench;

double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int load(bool fast) {
    Bench& b = g_bench;
    b.ep.reset();
    b.state = ModuleState();
    b.inputs.clear();
    auto loaded = load_program(std::move(b.file), "model.pt2");
    b.file = std::vector<uint8_t>();
    if (!loaded.ok()) {
        b.error = loaded.error().str();
        return 1;
    }
    b.ep = std::make_unique<ExportedProgram>(loaded.take());
    b.state = ModuleState::from_program(*b.ep);
    b.inputs = example_inputs(*b.ep);
    if (b.inputs.empty()) {
        b.error = "model.pt2: the file carries no sample input pt2lab can read";
        return 1;
    }
    b.opt = RunOptions();
    b.opt.keep_values = false; // as the page's baseline run: only the outputs are kept
    b.opt.kernels.fast_conv = fast;
    return 0;
}

// One forward; returns its time in ms (negative on error, see bench_error).
// Out of line and called once per run: V8 tiers up the kernels it calls.
__attribute__((noinline)) double run_once(std::vector<NodeTime>* times) {
    Bench& b = g_bench;
    if (!b.ep) {
        b.error = "no model loaded";
        return -1.0;
    }
    b.opt.node_times = times;
    double t0 = now_ms();
    auto r = run_program(*b.ep, b.state, b.inputs, b.opt);
    double ms = now_ms() - t0;
    b.opt.node_times = nullptr;
    if (!r.ok()) {
        b.error = r.error().str();
        return -1.0;
    }
    b.output.clear();
    if (!r.value().outputs.empty() && r.value().outputs[0].is_tensor()) {
        const Tensor& t = *r.value().outputs[0].tensor;
        if (t.dtype == ScalarType::Float) b.output.assign(t.f32(), t.f32() + t.numel());
    }
    return ms;
}

// JSON string body: quotes and backslashes escaped (targets and shapes have no control bytes).
std::string json_escape(const std::string& t) {
    std::string out;
    for (char c : t) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// A call's key for the per-shape breakdown: the op and its arguments with tensors
// as their types, "aten.conv2d.default(f32[1, 64, 56, 56], f32[64, 64, 3, 3], ...)".
std::string call_key(const Node& n) {
    std::string key = n.target().substr(n.target().rfind("torch.ops.", 0) == 0 ? 10 : 0) + "(";
    const NodeNamer type_of = [](const Node* in) {
        return in->meta.val.is_tensor() ? in->meta.val.tensor.type_str() : in->name();
    };
    for (size_t k = 0; k < n.args().size(); ++k)
        key += (k ? ", " : "") + arg_repr(n.args()[k], type_of);
    return key + ")";
}

// Totals of one run: per op and per (op, argument shapes), each
// [{"op": key, "calls": n, "ms": total}], slowest first.
// The run bench_run_profiled made (its per-node times), for profile_json.
std::vector<NodeTime> g_times;

std::string profile_json(const std::vector<NodeTime>& times) {
    std::map<std::string, std::pair<int, double>> per_op, per_call;
    for (const NodeTime& t : times) {
        for (auto* m : {&per_op, &per_call}) {
            // A batch norm or activation fused into its conv: its time is in the conv's.
            const std::string fused = t.fused ? " (in its conv)" : "";
            auto& e = (*m)[(m == &per_op ? t.node->target() : call_key(*t.node)) + fused];
            e.first += 1;
            e.second += t.ms;
        }
    }
    auto rows_json = [](const std::map<std::string, std::pair<int, double>>& m) {
        std::vector<std::pair<std::string, std::pair<int, double>>> rows(m.begin(), m.end());
        std::sort(rows.begin(), rows.end(),
                  [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
        std::string s = "[";
        char buf[64];
        for (size_t k = 0; k < rows.size(); ++k) {
            std::snprintf(buf, sizeof buf, "\"calls\": %d, \"ms\": %.4f}", rows[k].second.first,
                          rows[k].second.second);
            s += std::string(k ? ", " : "") + "{\"op\": \"" + json_escape(rows[k].first) + "\", " +
                 buf;
        }
        return s + "]";
    };
    return "{\"ops\": " + rows_json(per_op) + ", \"calls\": " + rows_json(per_call) + "}";
}

} // namespace

// The browser module's C interface (tools/model_bench.js): write the .pt2's
// bytes into bench_file_buffer(n), bench_load(fast), then time bench_run().
extern "C" {
uint8_t* bench_file_buffer(size_t n) {
    g_bench.file.assign(n, 0);
    return g_bench.file.data();
}
int bench_load(int fast) {
    return load(fast != 0);
}
double bench_run() {
    return run_once(nullptr);
}
// A run that also records each node's time (a clock read per node), for
// bench_profile: its time in ms, as bench_run's. The report is built later, so
// a timed first run does not include making it.
double bench_run_profiled() {
    g_times.clear();
    return run_once(&g_times);
}
const float* bench_output() {
    return g_bench.output.data();
}
int bench_output_numel() {
    return static_cast<int>(g_bench.output.size());
}
// The kernel warm-up (exec/warm_up.h): `runs` runs (0: kWarmUpRuns, as many as
// the page makes in its idle frames, here in one go); its time in ms, or -1
// with bench_error() set.
double bench_warm_up(int runs) {
    auto t0 = std::chrono::steady_clock::now();
    Status s = warm_up_kernels(runs > 0 ? runs : kWarmUpRuns);
    if (!s.ok()) {
        g_bench.error = s.error().str();
        return -1.0;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
const char* bench_error() {
    return g_bench.error.c_str();
}
// The per-op and per-call totals of the last bench_run_profiled, as JSON.
const char* bench_profile() {
    g_bench.profile_json = profile_json(g_times);
    return g_bench.profile_json.c_str();
}
#if defined(__EMSCRIPTEN__)
// The allocator's figures: 0 = its largest footprint so far (bytes taken from
// the wasm memory, the peak), 1 = bytes in use now.
double bench_heap(int which) {
    struct mallinfo mi = mallinfo();
    return which == 0 ? double(mi.usmblks) : double(mi.uordblks);
}
#endif
// Bytes of the program's parameters, buffers and constants.
double bench_weight_bytes() {
    double n = 0;
    if (g_bench.ep)
        for (const auto* m : {&g_bench.ep->state_dict, &g_bench.ep->constants})
            for (const auto& kv : *m) n += double(kv.second->bytes.size());
    return n;
}
}

#if !defined(__EMSCRIPTEN__)
namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int usage() {
    std::fprintf(stderr, "usage: pt2lab_model_bench FILE.pt2 [--runs N] [--expect output.bin] "
                         "[--reference] [--profile]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::string file, expect;
    int runs = 10;
    bool fast = true, profile = false;
    for (int k = 1; k < argc; ++k) {
        std::string a = argv[k];
        if (a == "--runs" && k + 1 < argc)
            runs = std::max(1, std::atoi(argv[++k]));
        else if (a == "--expect" && k + 1 < argc)
            expect = argv[++k];
        else if (a == "--reference")
            fast = false;
        else if (a == "--profile")
            profile = true;
        else if (!a.empty() && a[0] != '-' && file.empty())
            file = a;
        else
            return usage();
    }
    if (file.empty()) return usage();
    auto bytes = read_file_bytes(file);
    if (!bytes.ok()) {
        std::fprintf(stderr, "%s\n", bytes.error().str().c_str());
        return 1;
    }
    double t0 = now_ms();
    g_bench.file = bytes.take();
    if (load(fast) != 0) {
        std::fprintf(stderr, "%s\n", g_bench.error.c_str());
        return 1;
    }
    double load_ms = now_ms() - t0;
    double first = run_once(nullptr);
    std::vector<double> steady;
    for (int r = 0; r < runs && first >= 0; ++r) steady.push_back(run_once(nullptr));
    if (first < 0 || std::any_of(steady.begin(), steady.end(), [](double x) { return x < 0; })) {
        std::fprintf(stderr, "%s\n", g_bench.error.c_str());
        return 1;
    }
    std::printf("{\"file\": \"%s\", \"kernels\": \"%s\", \"load_ms\": %.3f, \"first_ms\": %.3f, "
                "\"median_ms\": %.3f, \"min_ms\": %.3f, \"runs\": %d, \"weight_bytes\": %.0f",
                file.c_str(), fast ? "fast" : "reference", load_ms, first, median(steady),
                *std::min_element(steady.begin(), steady.end()), runs, bench_weight_bytes());
    int status = 0;
    if (!expect.empty()) {
        auto want = read_file_bytes(expect);
        if (!want.ok() || want.value().size() != g_bench.output.size() * sizeof(float)) {
            std::fprintf(stderr, "%s: cannot read %zu floats\n", expect.c_str(),
                         g_bench.output.size());
            return 1;
        }
        std::vector<float> ref(g_bench.output.size());
        std::memcpy(ref.data(), want.value().data(), want.value().size());
        double diff = 0, scale = 0;
        for (size_t k = 0; k < ref.size(); ++k) {
            diff = std::max(diff, std::fabs(double(ref[k]) - g_bench.output[k]));
            scale = std::max(scale, std::fabs(double(ref[k])));
        }
        // Relative to the output's magnitude (MobileNet v2's untrained logits are ~1e-9).
        double rel = scale > 0 ? diff / scale : diff;
        std::printf(", \"max_abs_diff\": %.3g, \"max_rel_diff\": %.3g", diff, rel);
        if (!(rel <= 1e-4)) status = 3;
    }
    if (profile && bench_run_profiled() >= 0)
        std::printf(", \"profile\": %s", profile_json(g_times).c_str());
    std::printf("}\n");
    return status;
}
#endif
