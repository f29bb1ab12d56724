// ZipArchive: reads the zip files torch.export writes (stored entries, zip64,
// sizes only in the central directory, 64-byte aligned data) and plain zips
// as Python's zipfile or the `zip` tool write them (local-header sizes,
// unaligned, deflated). A stored record can be read as a view into the
// archive's buffer (no copy); nothing assumes alignment.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/bytes.h"
#include "util/status.h"

namespace pt2lab {

// Bytes [begin, end) of a file.
struct ByteRange {
    uint64_t begin = 0, end = 0;
};

// A stored record whose bytes an open viewed before they arrived (ZipArchive's
// `late` ranges): its CRC is checked once they are in (Workspace::check_arrived).
struct ArrivingRecord {
    std::string name;
    Bytes data;
    uint32_t crc32 = 0;
};

struct ZipEntry {
    std::string name;
    uint16_t method = 0; // 0 stored, 8 deflate
    uint16_t flags = 0;
    uint32_t crc32 = 0;
    uint64_t compressed_size = 0;
    uint64_t size = 0;
    uint64_t local_header_offset = 0;
    uint64_t data_offset = 0; // where the (compressed) bytes start, after the local header
};

class ZipArchive {
public:
    // Parses the central directory of `bytes` (kept by value) and every
    // record's local header. Refuses records that lie outside the file, run
    // into the central directory or overlap one another (the trick that makes
    // a small zip inflate into gigabytes), and two records with one name.
    // `file` names the archive in error messages.
    static Result<ZipArchive> open(std::vector<uint8_t> bytes, std::string file);
    // The same for a buffer the caller shares (views of records keep it alive).
    static Result<ZipArchive> open(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                   std::string file);
    // The same for a buffer whose `late` ranges (zip_late_ranges) are still being
    // filled in: records whose data touches one are read only by view_arriving().
    static Result<ZipArchive> open(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                   std::string file, std::vector<ByteRange> late);

    const std::vector<ZipEntry>& entries() const { return entries_; }
    const ZipEntry* find(const std::string& name) const; // O(1)
    // The entry's uncompressed bytes, CRC-checked.
    Result<std::vector<uint8_t>> read(const ZipEntry& e) const;
    Result<std::vector<uint8_t>> read(const std::string& name) const;
    // The entry's uncompressed bytes, CRC-checked, without a copy: a stored record is a
    // view into the archive's buffer (at any alignment), a deflated one its own buffer.
    // A record whose data has not all arrived is an error here.
    Result<Bytes> view(const ZipEntry& e) const;
    // Whether the record's data touches a late range.
    bool late(const ZipEntry& e) const;
    // view(), except that a late stored record is a view before its bytes are there,
    // its CRC unchecked: it is listed for take_arriving() to check when they are.
    Result<Bytes> view_arriving(const ZipEntry& e) const;
    std::vector<ArrivingRecord> take_arriving() const;
    // The archive's whole buffer.
    const std::shared_ptr<const std::vector<uint8_t>>& buffer() const { return bytes_; }
    const std::string& file() const { return file_; }
    bool zip64() const { return zip64_; }

private:
    std::shared_ptr<const std::vector<uint8_t>> bytes_; // never null after open()
    std::vector<ZipEntry> entries_;
    std::unordered_map<std::string, size_t> by_name_;
    std::string file_;
    bool zip64_ = false;
    std::vector<ByteRange> late_;                  // sorted, disjoint
    mutable std::vector<ArrivingRecord> arriving_; // view_arriving()'s late records
};

// The ranges of a big .pt2 a page can read after the rest and still open it: the
// data of its stored weight and constant records (".../data/weights/...",
// ".../data/constants/...") of at least `min_size` bytes, which an open only views.
// `tail` holds the file's last `tail_size` bytes (the file has `file_size`). Empty
// when the tail does not hold the whole central directory, or no record qualifies.
// A range starts past the largest local header torch writes and ends where the
// data would end with none, so the bytes outside the ranges always hold every
// local header whole, whatever its extra field.
std::vector<ByteRange> zip_late_ranges(const uint8_t* tail, size_t tail_size, uint64_t file_size,
                                       uint64_t min_size);

uint32_t crc32(const uint8_t* data, size_t n);
// The CRC of bytes that follow those whose CRC is `crc` (crc32_update(0, ...) == crc32).
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t n);

// Raw DEFLATE (RFC 1951) decoder. `expected_size` bounds the output; more
// than deflate's best ratio (1032:1) of `n` is refused before decoding.
Result<std::vector<uint8_t>> inflate_raw(const uint8_t* data, size_t n, uint64_t expected_size);

} // namespace pt2lab
