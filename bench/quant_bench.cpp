// A quantized Run against the float Run, natively, through the Workspace as the
// page drives it (docs/BENCHMARKS.md, "Quantized runs in the page"): opens a file,
// times Runs of the float model, then prepare_pt2e, calibrate, convert_pt2e and
// times Runs of the converted model, each in 8 ms slices. Prints the ratio, where a
// converted Run's time went, and a digest of its outputs and layer table, so two
// builds can be checked for the same bits. Figures only.
//   build/native/bench/pt2lab_quant_bench FILE.pt2 [--runs N] [--calibrate N] [--profile]
// --profile prints the last converted forward's ops (the Run tab's "Where the time went").
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "workspace/workspace.h"

using namespace pt2lab;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// FNV-1a over bytes: a digest of outputs and table rows, to compare builds.
struct Digest {
    uint64_t h = 1469598103934665603ull;
    void add(const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t k = 0; k < n; ++k) h = (h ^ b[k]) * 1099511628211ull;
    }
    void add(double d) { add(&d, sizeof d); }
    void add(int64_t i) { add(&i, sizeof i); }
    void add(const std::string& s) { add(s.data(), s.size()); }
};

// One action, in slices of 8 ms as the page's frames run it; its wall time in ms.
double run_sliced(Workspace& ws, const Action& a, bool& ok) {
    const auto t0 = std::chrono::steady_clock::now();
    ok = false;
    if (Status s = ws.begin(a); !s.ok()) {
        std::fprintf(stderr, "begin: %s\n", s.error().str().c_str());
        return 0;
    }
    while (!ws.advance(0.008)) {
    }
    auto r = ws.finish();
    if (!r.ok()) {
        std::fprintf(stderr, "%s: %s\n", action_kind_name(a.kind), r.error().str().c_str());
        return 0;
    }
    ok = true;
    return ms_since(t0);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE.pt2 [--runs N] [--calibrate N] [--profile]\n",
                     argv[0]);
        return 2;
    }
    int runs = 5, calibrate = 9;
    bool profile = false;
    for (int k = 2; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--runs" && k + 1 < argc)
            runs = std::max(1, std::atoi(argv[++k]));
        else if (arg == "--profile")
            profile = true;
        else if (arg == "--calibrate" && k + 1 < argc)
            calibrate = std::max(1, std::atoi(argv[++k]));
        else {
            std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    auto opened = Workspace::open_file(argv[1]);
    if (!opened.ok()) {
        std::fprintf(stderr, "%s\n", opened.error().str().c_str());
        return 1;
    }
    Workspace& ws = *opened.value();
    Action run = Action::of(Action::Kind::Run);
    run.fast_kernels = true;
    bool ok = false;
    std::vector<double> fl;
    for (int r = 0; r <= runs; ++r) {
        const double ms = run_sliced(ws, run, ok);
        if (!ok) return 1;
        if (r > 0) fl.push_back(ms); // the first also runs the baseline
    }
    for (Action a : {Action::of(Action::Kind::Prepare), Action::of(Action::Kind::Calibrate),
                     Action::of(Action::Kind::Convert)}) {
        if (a.kind == Action::Kind::Calibrate) {
            a.repeat = calibrate;
            a.fast_kernels = true;
        }
        auto r = ws.apply(a);
        if (!r.ok()) {
            std::fprintf(stderr, "%s: %s\n", action_kind_name(a.kind), r.error().str().c_str());
            return 1;
        }
    }
    std::vector<double> q;
    double first = 0;
    for (int r = 0; r <= runs; ++r) {
        const double ms = run_sliced(ws, run, ok);
        if (!ok) return 1;
        const RunReport& rep = *ws.last_run();
        std::printf("  converted Run %d: %.1f ms (forward %.1f, float run %.1f%s, layers %.1f)\n",
                    r + 1, ms, rep.ms, rep.float_run_ms, rep.layers_float_reused ? " reused" : "",
                    rep.layers_ms);
        if (r == 0)
            first = ms;
        else
            q.push_back(ms);
    }
    const RunReport& rep = *ws.last_run();
    Digest out, table;
    for (const Value& v : rep.result.outputs)
        if (v.is_tensor()) out.add(v.tensor->storage.data(), v.tensor->storage.size());
    size_t rows = 0;
    if (rep.layers) {
        rows = rep.layers->rows.size();
        for (const LayerParity& l : rep.layers->rows) {
            const TensorParity& p = l.parity;
            table.add(l.layer.node);
            table.add(l.layer.reference);
            for (double d : {p.max_abs, p.max_rel, p.sqnr_db}) table.add(d);
            for (int64_t i : {p.nan, p.inf, p.nonfinite_new,
                              int64_t(p.allclose) * 2 + int64_t(p.bit_identical)})
                table.add(i);
        }
        table.add(int64_t(rep.layers->not_kept));
        table.add(int64_t(rep.layers->worst));
    }
    if (profile && rep.profile) std::printf("%s", rep.profile->str(12, 0).c_str());
    const double f = median(fl), c = median(q);
    std::printf("%s: float Run %.1f ms, converted Run %.1f ms (first %.1f): %.2fx\n", argv[1], f, c,
                first, c / f);
    std::printf("digest: outputs %016llx, layers %zu rows %016llx\n",
                static_cast<unsigned long long>(out.h), rows,
                static_cast<unsigned long long>(table.h));
    return 0;
}
