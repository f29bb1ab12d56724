// The page's "drop a file" path, step by step, for the tests, the budget check
// and the fuzz harnesses: sniff, load (or read a symbolic_trace graph), print
// every view, ep.module(), lint, run both graph forms, run_decompositions to
// Core ATen and run that, prepare / calibrate / convert and run that. It stops
// at the first error, as the page does (the previous graph stays).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/limits.h"
#include "util/status.h"

namespace pt2lab_test {

struct DropTrace {
    std::string stage; // the last stage started ("load", "print", "unlift", "run", ...)
    std::vector<std::pair<std::string, double>> seconds; // every stage started, and its time
    std::chrono::steady_clock::time_point stage_start;
    size_t printed_bytes = 0; // text the views produced (so printing cannot be optimised away)
    bool ran = false;         // a run of the program finished
};

// The first error as the page would show it (Error::file set to `name`, or
// "name:record"), or success. `trace` (optional) says how far it got. With
// `keep_going` (the fuzz harness), once the program has loaded a refused run,
// decomposition or quantization does not stop the stages after it.
pt2lab::Status drop_file(const std::vector<uint8_t>& bytes, const std::string& name,
                         const pt2lab::Limits& limits = pt2lab::Limits(),
                         DropTrace* trace = nullptr, bool keep_going = false);

} // namespace pt2lab_test
