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

    const std::vector<ZipEntry>& entries() const { return entries_; }
    const ZipEntry* find(const std::string& name) const; // O(1)
    // The entry's uncompressed bytes, CRC-checked.
    Result<std::vector<uint8_t>> read(const ZipEntry& e) const;
    Result<std::vector<uint8_t>> read(const std::string& name) const;
    // The entry's uncompressed bytes, CRC-checked, without a copy: a stored record is a
    // view into the archive's buffer (at any alignment), a deflated one its own buffer.
    Result<Bytes> view(const ZipEntry& e) const;
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
};

uint32_t crc32(const uint8_t* data, size_t n);

// Raw DEFLATE (RFC 1951) decoder. `expected_size` bounds the output; more
// than deflate's best ratio (1032:1) of `n` is refused before decoding.
Result<std::vector<uint8_t>> inflate_raw(const uint8_t* data, size_t n, uint64_t expected_size);

} // namespace pt2lab
