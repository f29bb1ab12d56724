// ZipWriter: writes zip archives the way torch.export.save lays them out for
// a reader: stored (uncompressed) records, all under one root folder, each
// record's data 64-byte aligned (padding in the local header's extra field, as
// PyTorch's writer pads). Not zip64: an archive that would pass the 4 GiB or
// 65535-record limits of a plain zip is refused. Deterministic: no timestamps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "util/status.h"

namespace pt2lab {

class ZipWriter {
public:
    // Records are written as "<root>/<name>" (torch's writer names the root after the file).
    explicit ZipWriter(std::string root);

    // Appends a record. Refused (and nothing written) when the name repeats or the
    // archive would pass the limits of a plain zip.
    Status add(std::string_view name, const uint8_t* data, size_t n);
    Status add(std::string_view name, const std::vector<uint8_t>& bytes) {
        return add(name, bytes.data(), bytes.size());
    }
    Status add(std::string_view name, std::string_view text) {
        return add(name, reinterpret_cast<const uint8_t*>(text.data()), text.size());
    }
    bool has(std::string_view name) const;
    // The names written so far (with the root), in order.
    const std::vector<std::string>& names() const { return names_; }
    // CRC-32 of every record so far, in order.
    const std::vector<uint32_t>& crcs() const { return crcs_; }

    // The archive: records, then the central directory. The writer is empty after.
    Result<std::vector<uint8_t>> finish();

    // Bytes an archive may take (a plain zip's 32-bit offsets and sizes); tests lower it.
    void set_limit(uint64_t bytes) { limit_ = bytes; }
    static constexpr uint64_t kZip32Limit = 0xffffffffu;
    static constexpr size_t kAlignment = 64;

private:
    struct Entry {
        std::string name;
        uint32_t crc = 0;
        uint32_t size = 0;
        uint32_t offset = 0; // of the local header
    };
    std::string root_;
    std::vector<uint8_t> out_;
    std::vector<Entry> entries_;
    std::vector<std::string> names_;
    std::vector<uint32_t> crcs_;
    std::unordered_set<std::string> seen_;
    uint64_t limit_ = kZip32Limit;
};

} // namespace pt2lab
