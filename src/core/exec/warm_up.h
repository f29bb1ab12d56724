// A warm-up for the executor's kernels: one run of a small graph that calls the
// ops common vision and transformer exports use, on the fast kernels.
//
// Why: a browser's WebAssembly engine (V8) compiles a function on its first
// call with a baseline compiler and swaps in optimized code only once the
// function has run for a while, between calls. Without a warm-up, a model's
// first run pays for that in every kernel it reaches; after one, the kernels
// the model shares with the warm-up graph start on optimized code (the page
// runs it once after its first frame, the model benchmark counts it in "load").
// Natively it only costs its run time (a few milliseconds).
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace pt2lab {

// How many runs of the warm-up graph the page makes (one per idle frame) and
// the model benchmark makes at load: enough, as measured in Chromium, that V8
// has optimized the common kernels before a model's first run (docs/BENCHMARKS.md).
constexpr int kWarmUpRuns = 40;

// The warm-up graph's call_function targets, in graph order (for tests and docs).
std::vector<std::string> warm_up_ops();

// Builds the graph and runs it `runs` times (fast kernels, values dropped after
// last use). An error names the node, as any run's does: the ops must all run.
Status warm_up_kernels(int runs = 1);

} // namespace pt2lab
