// libFuzzer harness: the page's whole "drop a file" path (tests/support/
// drop_file.h: sniff, load, every view, ep.module(), lint, run both forms,
// decompose and run, prepare / calibrate / convert and run) on .pt2 archives
// and JSON files mutated by structure (one record's JSON values, a .npy
// header, a zip field) and rewritten valid. Budgets are lowered so that each
// input stays cheap; refusing is a success, only a crash or a sanitizer
// report is a finding.
#include <cstdint>
#include <vector>

#include "drop_file.h"
#include "mutators.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Small budgets: a refusal is the same code path at any size, and each input stays fast.
    pt2lab::Limits limits;
    limits.tensor_bytes = 4 << 20;
    limits.file_bytes = 16 << 20;
    limits.run_bytes = 16 << 20;
    limits.run_work = 2000000;
    pt2lab_test::DropTrace trace;
    pt2lab::Status s =
        pt2lab_test::drop_file(std::vector<uint8_t>(data, data + size), "fuzz.pt2", limits, &trace);
    // An error always names the file, as the page shows it.
    if (!s.ok() && s.error().file.rfind("fuzz.pt2", 0) != 0) __builtin_trap();
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    std::vector<uint8_t> out = pt2lab_fuzz::mutate_file(data, size, max_size, seed);
    std::copy(out.begin(), out.end(), data);
    return out.size();
}
