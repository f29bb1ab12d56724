// unlift: ep.module(), the GraphModule view of an ExportedProgram, built the
// way torch/export/_unlift.py does (torch >= 2.9):
//  1. each lifted parameter/buffer/constant placeholder becomes a get_attr of
//     its FQN, created right after it (so get_attrs sit where the placeholders
//     were, before the user inputs), users rewired, placeholder erased;
//  2. BUFFER_MUTATION / USER_INPUT_MUTATION / PARAMETER_MUTATION outputs become
//     aten.copy_(target, value) nodes before the output, which then returns only
//     the user outputs;
//  3. codegen becomes _PyTreeCodeGen with forward()'s argument names;
//  4. a `_guards_fn` call_module on the user inputs goes after the last placeholder.
#pragma once

#include <chrono>
#include <memory>

#include "program/exported_program.h"

namespace pt2lab {

struct UnliftOptions {
    bool guards_fn = true; // ep.module(check_guards=True) on torch >= 2.9
};

Result<GraphModule> unlift(const ExportedProgram& ep, const UnliftOptions& opt = {});

// unlift in pieces (the page opens a 10k-node program over frames): step() works
// until `deadline` (at least one piece of a few hundred nodes) and says whether it
// is over; then finish() gives what unlift would. `ep` must outlive it.
class Unlifting {
public:
    using Clock = std::chrono::steady_clock;
    explicit Unlifting(const ExportedProgram& ep, const UnliftOptions& opt = {});
    ~Unlifting();
    Unlifting(const Unlifting&) = delete;
    Unlifting& operator=(const Unlifting&) = delete;
    bool step(Clock::time_point deadline);
    const char* stage() const; // "copying the graph", "unlifting parameters", "lint", "recompiling"
    Result<GraphModule> finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace pt2lab
