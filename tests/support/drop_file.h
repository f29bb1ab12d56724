// The page's "drop a file" path, step by step, for the tests, the budget check
// and the fuzz harnesses: Workspace::open (the one door every surface opens a
// file through), every text view the page shows, then the page's buttons as
// Workspace actions: Run on both graphs with both kernel sets, Decompose to
// Inference IR and to Core ATen (each run, then undone), Prepare, Calibrate,
// Convert and Run, and Undo back to the file as opened. It stops at the first
// error, as the page shows it (the workspace stays as it was). A symbolic_trace
// graph (a module only) opens and prints; its runs are refused, as pt2lab runs
// ATen graphs: those refusals are recorded in DropTrace::refused, not returned.
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
    // The last stage started: "load" (Workspace::open), "print", "inputs" (a run
    // refused before its first node: its inputs), "run", "run fast", "run module",
    // "decompose inference", "prepare", "calibrate", "convert", "undo", "done", ...
    std::string stage;
    std::vector<std::pair<std::string, double>> seconds; // every stage started, and its time
    std::chrono::steady_clock::time_point stage_start;
    size_t printed_bytes = 0; // text the views produced (so printing cannot be optimised away)
    bool ran = false;         // the first run of the file as opened finished
    int actions = 0;          // actions the workspace applied (refusals not counted)
    // Every action the workspace refused: the stage and the error the page shows.
    std::vector<std::pair<std::string, pt2lab::Error>> refused;
    // What the Workspace got wrong, if anything (a bug, never a refusal of the
    // file): undoing actions did not give back the views as they were before
    // them (after each decomposition, and back to the file as opened). "" when
    // all held.
    std::string broken;
};

// The first error as the page would show it (Error::file set to `name`, or
// "name:record"), or success. `trace` (optional) says how far it got. With
// `keep_going` (the fuzz harness), once the file has opened a refused action
// does not stop the actions after it (each is an independent button).
pt2lab::Status drop_file(const std::vector<uint8_t>& bytes, const std::string& name,
                         const pt2lab::Limits& limits = pt2lab::Limits(),
                         DropTrace* trace = nullptr, bool keep_going = false);

} // namespace pt2lab_test
