// libFuzzer harness: the page's whole "drop a file" path (tests/support/
// drop_file.h: Workspace::open, every view, then the page's actions: run both
// graphs with both kernel sets, decompose to both levels, prepare / calibrate /
// convert and run, undo back) on .pt2 archives and JSON files mutated
// by structure (one record's JSON values, a .npy header, a zip field) and
// rewritten valid. Budgets are lowered so that each input stays cheap; a
// refused action does not stop the ones after it. Refusing is a success; a
// crash, a sanitizer report, an error that does not name the file or an undo
// that does not restore the views is a finding.
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
    pt2lab::Status s = pt2lab_test::drop_file(std::vector<uint8_t>(data, data + size), "fuzz.pt2",
                                              limits, &trace, /*keep_going=*/true);
    // An error always names the file, as the page shows it: the first, and every
    // refusal of an action after it.
    if (!s.ok() && s.error().file.rfind("fuzz.pt2", 0) != 0) __builtin_trap();
    for (const auto& [stage, e] : trace.refused)
        if (e.file.rfind("fuzz.pt2", 0) != 0) __builtin_trap();
    // Undo gives back exactly the views of the file as opened.
    if (!trace.broken.empty()) __builtin_trap();
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    std::vector<uint8_t> out = pt2lab_fuzz::mutate_file(data, size, max_size, seed);
    std::copy(out.begin(), out.end(), data);
    return out.size();
}
