// The longest uninterruptible step of a Workspace action, natively: opens a
// file as the page does (Workspace::open_file), begins an action and calls
// advance(8 ms) until it is done, timing begin(), every advance() and finish()
// (the commit), as the page's frame loop does (docs/BENCHMARKS.md, "The page
// never freezes"). Figures only.
//   build/native/bench/pt2lab_slice_bench FILE.pt2 [--reference] [--calibrate N]
//       [--action run|calibrate|prepare|convert|run-after-convert|decompose|decompose-core]
//       [--slice MS] [--repeat N] [--over MS]
// --calibrate N alone means --action calibrate with N batches; convert
// prepares and calibrates (on N batches, default 2) first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <time.h>

#include "workspace/workspace.h"

using namespace pt2lab;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// This thread's CPU time: a slice's own work, without the time other processes
// took the core from it (a loaded 2-core machine stretches wall times 2-5x).
double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

struct Slices {
    double longest = 0, total = 0, begin = 0, finish = 0;
    double longest_cpu = 0;  // the longest slice in CPU time
    double longest_free = 0; // the longest piece of freeing what the commit let go of
    int count = 0;
    std::string where;     // the progress before the longest slice: what it worked on
    std::string where_cpu; // the same for the longest in CPU time
};

// One action, begun and advanced in slices of `slice_ms` until done.
// --over MS: each slice over MS of CPU time is printed, with the progress before and after it.
double g_over_ms = 0;

bool run_sliced(Workspace& ws, const Action& a, double slice_ms, Slices& out) {
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = ws.begin(a); !s.ok()) {
        std::fprintf(stderr, "begin: %s\n", s.error().str().c_str());
        return false;
    }
    out.begin = ms_since(t0);
    bool done = false;
    while (!done) {
        const ActionProgress pr = ws.progress();
        t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_ms();
        done = ws.advance(slice_ms / 1000.0);
        const double ms = ms_since(t0), cpu = cpu_ms() - c0;
        const std::string where =
            pr.what + ", unit " + std::to_string(pr.done) + " of " + std::to_string(pr.total);
        if (g_over_ms > 0 && cpu > g_over_ms)
            std::printf("    slice of %.1f ms CPU (%.1f ms wall): from %s to %s\n", cpu, ms,
                        where.c_str(), ws.progress().what.c_str());
        if (ms > out.longest) out.where = where;
        if (cpu > out.longest_cpu) out.where_cpu = where;
        out.longest = std::max(out.longest, ms);
        out.longest_cpu = std::max(out.longest_cpu, cpu);
        out.total += ms;
        ++out.count;
    }
    t0 = std::chrono::steady_clock::now();
    auto r = ws.finish();
    out.finish = ms_since(t0);
    if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.error().str().c_str());
        return false;
    }
    // What the commit let go of (a redo branch), freed in pieces as the page does.
    while (ws.has_dropped()) {
        t0 = std::chrono::steady_clock::now();
        ws.shed_dropped(t0 + std::chrono::microseconds(int64_t(slice_ms * 1000)));
        out.longest_free = std::max(out.longest_free, ms_since(t0));
    }
    return true;
}

bool apply(Workspace& ws, const Action& a) {
    auto r = ws.apply(a);
    if (!r.ok())
        std::fprintf(stderr, "%s: %s\n", action_kind_name(a.kind), r.error().str().c_str());
    return r.ok();
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s FILE.pt2 [--reference] [--calibrate N] [--action "
                     "run|calibrate|prepare|convert|run-after-convert|decompose|decompose-core] "
                     "[--slice MS] "
                     "[--repeat N] [--over MS]\n",
                     argv[0]);
        return 2;
    }
    const std::string path = argv[1];
    bool fast = true;
    int calibrate = 0, repeat = 3;
    double slice_ms = 8.0;
    std::string action;
    for (int k = 2; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--reference") {
            fast = false;
        } else if (arg == "--calibrate" && k + 1 < argc) {
            calibrate = std::atoi(argv[++k]);
        } else if (arg == "--action" && k + 1 < argc) {
            action = argv[++k];
        } else if (arg == "--slice" && k + 1 < argc) {
            slice_ms = std::atof(argv[++k]);
        } else if (arg == "--over" && k + 1 < argc) {
            g_over_ms = std::atof(argv[++k]);
        } else if (arg == "--repeat" && k + 1 < argc) {
            repeat = std::max(1, std::atoi(argv[++k]));
        } else {
            std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    if (action.empty()) action = calibrate > 0 ? "calibrate" : "run";
    auto opened = Workspace::open_file(path);
    if (!opened.ok()) {
        std::fprintf(stderr, "%s\n", opened.error().str().c_str());
        return 1;
    }
    Workspace& ws = *opened.value();
    ws.set_shed_dropped_later(true); // as the page does: freed in pieces after the commit
    Action a = Action::of(Action::Kind::Run);
    a.fast_kernels = fast;
    const bool after_convert = action == "run-after-convert";
    if (action == "calibrate" || action == "convert" || after_convert) {
        if (!apply(ws, Action::of(Action::Kind::Prepare))) return 1;
        Action c = Action::of(Action::Kind::Calibrate);
        c.repeat = calibrate > 0 ? calibrate : 2;
        c.fast_kernels = fast;
        if (action == "calibrate")
            a = c;
        else if (!apply(ws, c))
            return 1;
        if (action == "convert") a = Action::of(Action::Kind::Convert);
        // The page's "+ run after" a convert: the run compares the graph with its last
        // recompile (stale code) in pieces.
        if (after_convert && !apply(ws, Action::of(Action::Kind::Convert))) return 1;
    } else if (action == "prepare") {
        a = Action::of(Action::Kind::Prepare);
    } else if (action == "decompose" || action == "decompose-core") {
        a = Action::of(Action::Kind::Decompose);
        a.level = action == "decompose" ? IrLevel::Inference : IrLevel::CoreAten;
    } else if (action != "run") {
        std::fprintf(stderr, "unknown action %s\n", action.c_str());
        return 2;
    }
    // The first action also runs the baseline; later ones are what a user's
    // next click costs. Each is undone so the next starts from the same state.
    std::printf("%s, %s kernels, %s, slices of %.1f ms asked for\n", path.c_str(),
                fast ? "fast" : "reference",
                action == "calibrate"
                    ? ("calibrate " + std::to_string(a.repeat) + " batches").c_str()
                    : action.c_str(),
                slice_ms);
    for (int r = 0; r < repeat; ++r) {
        Slices s;
        if (!run_sliced(ws, a, slice_ms, s)) return 1;
        std::printf("  action %d: begin %.1f ms, longest slice %.1f ms (from %s), in CPU time "
                    "%.1f ms (from %s), %d slices, %.0f ms in all, finish %.1f ms, longest "
                    "piece of freeing %.1f ms\n",
                    r + 1, s.begin, s.longest, s.where.c_str(), s.longest_cpu, s.where_cpu.c_str(),
                    s.count, s.total, s.finish, s.longest_free);
        if (!ws.can_undo()) continue; // a run changes no state: nothing to undo
        if (Status u = ws.undo(); !u.ok()) {
            std::fprintf(stderr, "undo: %s\n", u.error().str().c_str());
            return 1;
        }
    }
    return 0;
}
