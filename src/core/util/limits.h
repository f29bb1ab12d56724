// Limits and Budget: how much memory and work one file may make pt2lab spend.
// Every allocation whose size a file decides (records read from an archive,
// decompressed data, weights cut from storage, stand-in weights, .npy arrays,
// seeded inputs, every value a run computes, kernel scratch buffers) is
// charged to a Budget *before* it is made; the first charge past a limit is
// an Error saying which limit, what asked for it, and how to raise it.
// docs/FORMATS.md section 10 gives the numbers and the reasons for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace pt2lab {

struct Limits {
    static constexpr uint64_t kMiB = uint64_t(1) << 20;

    // One tensor (a weight, an input, any value a run computes).
    uint64_t tensor_bytes = 256 * kMiB;
    // Everything loading one file may allocate. 0: automatic, i.e.
    // 64 MiB + 16 x the file's size, at most 512 MiB.
    uint64_t file_bytes = 0;
    // Everything one run may allocate (its values and scratch). 0: automatic,
    // as for file_bytes, from the size of the file the program came from.
    uint64_t run_bytes = 0;
    // Multiply-adds (and element visits) one run may do. 0: automatic,
    // 1e9 + 256 x the file's size, at most 2e10 (256 per byte: an int8 weight of a
    // converted file that pt2lab saved is a quarter of the float one; about 2 s of reference
    // kernels natively for a 1 MB file).
    uint64_t run_work = 0;
    // A Run keeps every node's value (for the inspector) while all of them together
    // take at most this (the graph's shapes say how much: the lessons, the zoo at
    // 64x64); a bigger model's Run keeps none and runs as fast as it can (convs fused
    // with their batch norm and activation, each value freed after its last reader).
    uint64_t keep_values_bytes = 16 * kMiB;

    // The automatic rules' numbers.
    static constexpr uint64_t kBaseBytes = 64 * kMiB;
    static constexpr uint64_t kBytesPerFileByte = 16;
    static constexpr uint64_t kMaxAutoBytes = 512 * kMiB;
    static constexpr uint64_t kBaseWork = 1000000000ull;
    static constexpr uint64_t kWorkPerFileByte = 256;
    static constexpr uint64_t kMaxAutoWork = 20000000000ull;

    uint64_t file_budget(uint64_t file_size) const;
    uint64_t run_budget(uint64_t file_size) const;
    uint64_t work_budget(uint64_t file_size) const;

    // Sets one limit from the CLI's "--limit NAME=VALUE" (tensor-mb, file-mb,
    // run-mb in MiB; run-gmacs in 1e9 multiply-adds).
    Status set(const std::string& name_equals_value);
};

// "1.5 GiB", "80.0 MiB", "512 bytes"
std::string human_bytes(uint64_t n);

// A running total against one budget (one file's load, or one run).
class Budget {
public:
    enum class Scope { File, Run };
    // `file_size`: the size of the file the data comes from (0 when not from a file).
    Budget(const Limits& limits, Scope scope, uint64_t file_size);

    // A tensor of `sizes` x `itemsize` bytes for `what` ("weight conv.weight"):
    // checks the element count fits, the one-tensor limit, then charges the bytes.
    Status tensor(const std::vector<int64_t>& sizes, size_t itemsize, const std::string& what);
    // Plain bytes (a record, a buffer) for `what`.
    Status bytes(uint64_t n, const std::string& what);
    // Work (multiply-adds or element visits) for `what`; runs only.
    Status work(uint64_t n, const std::string& what);

    uint64_t bytes_used() const { return used_; }
    // A run's bytes now that values died: what its live values hold (the
    // interpreter calls it after each node, so a run is held to its peak memory,
    // not to the sum of everything it ever allocated; a kernel's scratch goes with
    // its node). Work stays a sum.
    void set_bytes_used(uint64_t n) { used_ = n; }
    uint64_t work_used() const { return work_used_; }
    uint64_t bytes_limit() const { return limit_; }
    const Limits& limits() const { return limits_; }

private:
    Error over(const std::string& what, const std::string& message) const;
    Limits limits_;
    Scope scope_;
    uint64_t file_size_;
    uint64_t limit_, work_limit_;
    uint64_t used_ = 0, work_used_ = 0;
};

} // namespace pt2lab
