// Parity: run two graphs on the same inputs and say how far apart their
// outputs are (max |diff|, max relative diff, torch.allclose verdict,
// bit-identical or not), output by output and node by node where names match.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/interpreter.h"

namespace pt2lab {

// Default: torch.testing.assert_close's float32 tolerances (rtol 1.3e-6,
// atol 1e-5); close means |a - b| <= atol + rtol * |b| everywhere.
struct Tolerance {
    double rtol = 1.3e-6;
    double atol = 1e-5;
};

struct TensorParity {
    std::string name;
    std::string type_a, type_b;
    bool comparable = true; // same shape and dtype
    double max_abs = 0.0;   // max |a - b|
    double max_rel = 0.0;   // max |a - b| / max(|b|, tiny)
    bool allclose = true;   // |a - b| <= atol + rtol * |b| everywhere (NaN == NaN)
    bool bit_identical = true;
    double sqnr_db = 0.0; // 10 log10(sum b^2 / sum (a-b)^2); inf when identical
    // Values of `a` (the run's) that are NaN / +-Inf, named on their own: a NaN is
    // left out of the numbers above, an Inf counts there only where `b` differs, and
    // an output that is NaN in both runs is still NaN.
    int64_t nan = 0, inf = 0;
    int64_t nonfinite_new = 0; // of those, where `b`'s value is finite: `a`'s run made them
};

// SQNR in plain words: "close" (>= 30 dB), "a visible error" (>= 15 dB), "a
// large error" (>= 5 dB), else "the output is lost".
const char* sqnr_reading(double db);

TensorParity compare_tensors(const std::string& name, const Tensor& a, const Tensor& b,
                             const Tolerance& tol = {});

struct ParityReport {
    std::vector<TensorParity> outputs;
    std::vector<TensorParity>
        nodes; // per node, where both runs have a tensor value under the same name
    // A quantized run (quantize / dequantize pairs in the graph) is meant to differ:
    // its verdict is the SQNR against the float outputs, not allclose.
    bool approximate = false;
    bool allclose() const;
    bool bit_identical() const;
    double max_abs() const;
    double max_rel() const;
    double min_sqnr_db() const; // the worst output's
    int64_t nonfinite() const;  // NaN and Inf values over all outputs (TensorParity::nan, inf)
    // One line: "bit-identical", "allclose", "NOT allclose", "SQNR 39.2 dB: close",
    // "3 NaN values in the outputs", "nothing to compare".
    std::string verdict() const;
    // A readable table: one line per output, then the verdict.
    std::string str() const;
};

// Compares outputs pairwise (by position) and node values by name.
ParityReport compare_runs(const RunResult& a, const RunResult& b, const Tolerance& tol = {});
// Compares outputs only (a few tensors, whatever node values the runs kept).
ParityReport compare_outputs(const RunResult& a, const RunResult& b, const Tolerance& tol = {});
// Compares a run's outputs with reference tensors (e.g. PyTorch's eager outputs).
ParityReport compare_with_reference(const RunResult& run, const std::vector<NamedTensor>& reference,
                                    const Tolerance& tol = {});

} // namespace pt2lab
