// The longest uninterruptible step of a Workspace action, natively: opens a
// file as the page does (Workspace::open_file), begins a Run (or a Calibrate)
// and calls advance(8 ms) until it is done, timing every call, as the page's
// frame loop does (docs/BENCHMARKS.md, "The page never freezes"). Figures only.
//   build/native/bench/pt2lab_slice_bench FILE.pt2 [--reference] [--calibrate N]
//                                          [--slice MS] [--repeat N]
#include <algorithm>
#include <chrono>
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

struct Slices {
    double longest = 0, total = 0;
    int count = 0;
    std::string where; // the progress before the longest slice: what it worked on
};

// One action, begun and advanced in slices of `slice_ms` until done.
bool run_sliced(Workspace& ws, const Action& a, double slice_ms, Slices& out) {
    if (Status s = ws.begin(a); !s.ok()) {
        std::fprintf(stderr, "begin: %s\n", s.error().str().c_str());
        return false;
    }
    bool done = false;
    while (!done) {
        const ActionProgress pr = ws.progress();
        const auto t0 = std::chrono::steady_clock::now();
        done = ws.advance(slice_ms / 1000.0);
        const double ms = ms_since(t0);
        if (ms > out.longest)
            out.where =
                pr.what + ", unit " + std::to_string(pr.done) + " of " + std::to_string(pr.total);
        out.longest = std::max(out.longest, ms);
        out.total += ms;
        ++out.count;
    }
    auto r = ws.finish();
    if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.error().str().c_str());
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s FILE.pt2 [--reference] [--calibrate N] [--slice MS] "
                     "[--repeat N]\n",
                     argv[0]);
        return 2;
    }
    const std::string path = argv[1];
    bool fast = true;
    int calibrate = 0, repeat = 3;
    double slice_ms = 8.0;
    for (int k = 2; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--reference") {
            fast = false;
        } else if (arg == "--calibrate" && k + 1 < argc) {
            calibrate = std::atoi(argv[++k]);
        } else if (arg == "--slice" && k + 1 < argc) {
            slice_ms = std::atof(argv[++k]);
        } else if (arg == "--repeat" && k + 1 < argc) {
            repeat = std::max(1, std::atoi(argv[++k]));
        } else {
            std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    auto ws = Workspace::open_file(path);
    if (!ws.ok()) {
        std::fprintf(stderr, "%s\n", ws.error().str().c_str());
        return 1;
    }
    Action a = Action::of(Action::Kind::Run);
    a.fast_kernels = fast;
    if (calibrate > 0) {
        Action prepare = Action::of(Action::Kind::Prepare);
        auto p = ws.value()->apply(prepare);
        if (!p.ok()) {
            std::fprintf(stderr, "prepare: %s\n", p.error().str().c_str());
            return 1;
        }
        a = Action::of(Action::Kind::Calibrate);
        a.repeat = calibrate;
        a.fast_kernels = fast;
    }
    // The first action also runs the baseline; later ones are what a user's
    // next click costs. Each is undone so the next starts from the same state.
    std::printf("%s, %s kernels, %s, slices of %.1f ms asked for\n", path.c_str(),
                fast ? "fast" : "reference",
                calibrate > 0 ? ("calibrate " + std::to_string(calibrate) + " batches").c_str()
                              : "run",
                slice_ms);
    for (int r = 0; r < repeat; ++r) {
        Slices s;
        if (!run_sliced(*ws.value(), a, slice_ms, s)) return 1;
        std::printf("  action %d: longest slice %.1f ms (from %s), %d slices, %.0f ms in all\n",
                    r + 1, s.longest, s.where.c_str(), s.count, s.total);
        if (!ws.value()->can_undo()) continue; // a run changes no state: nothing to undo
        if (Status u = ws.value()->undo(); !u.ok()) {
            std::fprintf(stderr, "undo: %s\n", u.error().str().c_str());
            return 1;
        }
    }
    return 0;
}
