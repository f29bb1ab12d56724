// Structure-aware mutations for pt2lab's fuzz harnesses. Random byte flips
// almost never get past a zip's CRCs or a JSON parser, so the harnesses mutate
// the structure instead and write it back valid:
//  - a zip is read into records (name, plain bytes, method, flags), one
//    record or one header field is changed, and the archive is rewritten with
//    correct CRCs (unless the mutation is a wrong CRC), stored or zip64;
//  - a JSON text is parsed and one *value* is changed (a boundary integer, a
//    name from elsewhere in the document, a spliced subtree, a deleted or
//    duplicated member, deep nesting), then dumped;
//  - a .npy record gets its header text edited.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pt2lab_fuzz {

// SplitMix64 over the seed libFuzzer passes to the custom mutator.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next();
    size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
    bool one_in(int n) { return below(static_cast<size_t>(n)) == 0; }

private:
    uint64_t s_;
};

struct ZipRecord {
    std::string name;
    std::vector<uint8_t> data; // plain bytes; the stored (compressed) bytes when `raw`
    // A record too large to decompress on every mutation (or whose data does
    // not check out) is kept as read: its bytes, method, CRC and plain size.
    bool raw = false;
    uint32_t raw_crc = 0;
    uint64_t raw_size = 0;
    uint16_t method = 0; // written: 0 stored, 8 deflate (stored blocks), other: as is
    uint16_t flags = 0;
    // Header damage a mutation may ask for (0: none).
    bool wrong_crc = false;
    int64_t size_delta = 0, csize_delta = 0;
    bool point_at_previous = false; // local header offset = the previous record's (overlap)
};

struct ZipGenome {
    std::vector<ZipRecord> records;
    bool zip64 = false;
};

// Reads a zip with pt2lab's own reader (records whose data does not check out
// keep their raw bytes). False when it is not a zip pt2lab can open.
bool parse_zip(const uint8_t* data, size_t size, ZipGenome& out);
std::vector<uint8_t> write_zip(const ZipGenome& g);

// One structural change to the archive (a record added, dropped, duplicated,
// renamed, reordered, its method / flags / sizes / CRC damaged, zip64 toggled).
void mutate_zip_structure(ZipGenome& g, Rng& rng);

// Parses `text` as JSON and changes one value; false when it is not JSON.
bool mutate_json(std::string& text, Rng& rng, size_t max_size);

// Edits a .npy header (descr, shape, fortran_order, lengths) or its data.
void mutate_npy(std::vector<uint8_t>& bytes, Rng& rng);

// libFuzzer's own byte mutator on a buffer, within max_size.
void mutate_bytes(std::vector<uint8_t>& bytes, size_t max_size);

// The "whole file" mutation the drop harness uses: a zip gets one record's
// content mutated by its kind (JSON, .npy, other) or one structural change; a
// JSON file gets a value mutation; anything else libFuzzer's byte mutator.
std::vector<uint8_t> mutate_file(const uint8_t* data, size_t size, size_t max_size, uint64_t seed);

} // namespace pt2lab_fuzz
