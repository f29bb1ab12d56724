// libFuzzer harness: pt2lab's zip reader (central directory, zip64, local
// headers, overlap / duplicate checks, stored and deflated records, CRCs) on
// archives whose records and header fields are mutated and rewritten with
// correct CRCs (mutators.h), so mutations reach past the checksums.
#include <cstdint>
#include <vector>

#include "io/zip.h"
#include "mutators.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto z = pt2lab::ZipArchive::open(std::vector<uint8_t>(data, data + size), "fuzz.pt2");
    if (!z.ok()) return 0;
    for (const auto& e : z.value().entries()) {
        // Large records take the same path as small ones, only slower: keep executions fast.
        if (e.size > (uint64_t(8) << 20)) continue;
        auto r = z.value().read(e);
        if (r.ok() && r.value().size() != e.size) __builtin_trap(); // read() promised this size
        (void)z.value().find(e.name);
    }
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    pt2lab_fuzz::Rng rng(seed);
    pt2lab_fuzz::ZipGenome g;
    std::vector<uint8_t> out;
    if (!rng.one_in(16) && pt2lab_fuzz::parse_zip(data, size, g)) {
        if (!g.records.empty() && rng.one_in(2)) {
            auto& r = g.records[rng.below(g.records.size())];
            pt2lab_fuzz::mutate_bytes(r.data, r.data.size() + 64);
        } else {
            pt2lab_fuzz::mutate_zip_structure(g, rng);
        }
        out = pt2lab_fuzz::write_zip(g);
    }
    if (out.empty() || out.size() > max_size) {
        out.assign(data, data + size);
        pt2lab_fuzz::mutate_bytes(out, max_size);
    }
    std::copy(out.begin(), out.end(), data);
    return out.size();
}
