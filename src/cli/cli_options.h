// The pt2lab CLI's options: one row each, with the commands that take it. The
// parser and the tests (tests/core/test_cli.cpp) both read this table, so an
// option is never accepted by a command that ignores it.
#pragma once

#include <cstring>

namespace pt2lab {

struct CliOption {
    const char* name;     // "--input"
    const char* value;    // what follows it ("F", "N"); nullptr for a flag
    const char* commands; // the commands that take it, space-separated
    const char* help;
};

// clang-format off
inline constexpr CliOption kCliOptions[] = {
    {"--module", nullptr, "graph code tabular readable run decompose",
     "show ep.module() (unlifted: get_attr, copy_, _guards_fn) instead of ep.graph"},
    {"--no-guards", nullptr, "graph code tabular readable run decompose",
     "with --module: leave out _guards_fn, as ep.module(check_guards=False)"},
    {"--input", "F", "run convert save",
     "a .npy file per forward() input, in order (convert calibrates on them; default: the "
     "file's sample inputs)"},
    {"--seed", "N", "run", "inputs from pt2lab's seeded generator (SeededRng(N).normal())"},
    {"--out", "F", "run", "write the outputs to F (.npy; several outputs: F_0.npy ...) or .json"},
    {"--fast", nullptr, "run", "the fast conv2d (im2col + tiled GEMM) instead of the reference loop"},
    {"--repeat", "N", "run", "run N times on the same state (train mode: running stats keep moving)"},
    {"--profile", nullptr, "run",
     "where the last run's time went: per op and the slowest nodes (the page's Run tab shows the same)"},
    {"--level", "L", "decompose", "inference | core"},
    {"--keep", "OP", "decompose save", "keep an op by dropping its rule, e.g. --keep aten.conv2d.default"},
    {"--calibrate", "N", "convert save", "seeded calibration batches after the real inputs (default 8)"},
    {"--no-fold", nullptr, "convert save", "fold_quantize=False: keep the weight quantize nodes"},
    {"--decompose", "L", "save", "save after run_decompositions at level L (inference | core)"},
    {"--prepare", nullptr, "save",
     "save after prepare_pt2e (refused, as torch.export refuses a model with observers)"},
    {"--convert", nullptr, "save", "save after prepare_pt2e, calibration and convert_pt2e"},
    {"--limit", "NAME=N",
     "info graph code tabular signature readable run decompose prepare convert save",
     "raise a budget (docs/FORMATS.md section 10): tensor-mb (one tensor, default 256), file-mb "
     "(all a file loads), run-mb (all a run allocates), run-gmacs (a run's multiply-adds); "
     "file-mb and run-mb default to 64 + 16 x the file's size in MB (at most 512)"},
};
// clang-format on

inline const CliOption* find_cli_option(const char* name) {
    for (const CliOption& o : kCliOptions)
        if (std::strcmp(o.name, name) == 0) return &o;
    return nullptr;
}

// Whether `command` is one of the option's commands.
inline bool cli_option_applies(const CliOption& o, const char* command) {
    const size_t n = std::strlen(command);
    for (const char* p = o.commands; (p = std::strstr(p, command)) != nullptr; p += n) {
        const bool starts = p == o.commands || p[-1] == ' ';
        const bool ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

} // namespace pt2lab
