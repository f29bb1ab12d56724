// ZipArchive: reads the zip files torch.export writes (stored entries, zip64,
// sizes only in the central directory, 64-byte aligned data) and plain zips
// as Python's zipfile or the `zip` tool write them (local-header sizes,
// unaligned, deflated). Bytes are copied out; nothing assumes alignment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

class ZipArchive {
public:
    // Parses the central directory of `bytes` (kept by value). `file` names the
    // archive in error messages.
    static Result<ZipArchive> open(std::vector<uint8_t> bytes, std::string file);

    const std::vector<ZipEntry>& entries() const { return entries_; }
    const ZipEntry* find(const std::string& name) const;
    // The entry's uncompressed bytes, CRC-checked.
    Result<std::vector<uint8_t>> read(const ZipEntry& e) const;
    Result<std::vector<uint8_t>> read(const std::string& name) const;
    const std::string& file() const { return file_; }
    bool zip64() const { return zip64_; }

private:
    std::vector<uint8_t> bytes_;
    std::vector<ZipEntry> entries_;
    std::string file_;
    bool zip64_ = false;
};

uint32_t crc32(const uint8_t* data, size_t n);

// Raw DEFLATE (RFC 1951) decoder. `expected_size` bounds the output.
Result<std::vector<uint8_t>> inflate_raw(const uint8_t* data, size_t n, uint64_t expected_size);

} // namespace pt2lab
