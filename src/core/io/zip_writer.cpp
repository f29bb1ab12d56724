// Zip writing: local headers with the CRC and sizes up front (the data is
// known when a record is added), alignment padding, the central directory.
#include "io/zip_writer.h"

#include "io/zip.h"

namespace pt2lab {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint16_t kVersion = 20;      // 2.0: stored records, folders
constexpr uint16_t kUtf8Names = 0x800; // general-purpose bit 11
constexpr uint16_t kPadId = 0x4246;    // "FB", the extra field PyTorch's writer pads with

void put16(std::vector<uint8_t>& b, uint32_t v) {
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}

Error zip_limit_error(const std::string& what) {
    return make_error("zip", what,
                      "pt2lab writes plain (not zip64) archives; export a model this large with "
                      "torch.export.save");
}

} // namespace

ZipWriter::ZipWriter(std::string root) : root_(std::move(root)) {
    PT2LAB_CHECK(!root_.empty() && root_.find('/') == std::string::npos);
}

bool ZipWriter::has(std::string_view name) const {
    return seen_.count(root_ + "/" + std::string(name)) != 0;
}

Status ZipWriter::add(std::string_view rel, const uint8_t* data, size_t n) {
    std::string name = root_ + "/" + std::string(rel);
    if (seen_.count(name)) return make_error(name, "two records with one name");
    if (name.size() > 0xffff) return make_error(name, "record name too long for a zip");
    if (entries_.size() >= 0xffff) return zip_limit_error("more than 65535 records");
    // local header (30) + name + padding header (4) + padding, then the data
    const uint64_t header_end = out_.size() + 30 + name.size() + 4;
    const uint64_t pad = (kAlignment - header_end % kAlignment) % kAlignment;
    const uint64_t end = header_end + pad + n;
    if (end > limit_ || n > 0xffffffffu)
        return zip_limit_error("the archive would pass " + std::to_string(limit_) + " bytes");
    Entry e;
    e.name = name;
    e.crc = crc32(data, n);
    e.size = static_cast<uint32_t>(n);
    e.offset = static_cast<uint32_t>(out_.size());
    out_.reserve(static_cast<size_t>(end));
    put32(out_, kLocalSig);
    put16(out_, kVersion);
    put16(out_, kUtf8Names);
    put16(out_, 0); // stored
    put16(out_, 0); // time
    put16(out_, 0); // date
    put32(out_, e.crc);
    put32(out_, e.size); // compressed
    put32(out_, e.size);
    put16(out_, static_cast<uint32_t>(name.size()));
    put16(out_, static_cast<uint32_t>(4 + pad));
    out_.insert(out_.end(), name.begin(), name.end());
    put16(out_, kPadId);
    put16(out_, static_cast<uint32_t>(pad));
    out_.insert(out_.end(), static_cast<size_t>(pad), uint8_t('Z'));
    PT2LAB_CHECK(out_.size() % kAlignment == 0);
    if (n) out_.insert(out_.end(), data, data + n);
    seen_.insert(name);
    names_.push_back(name);
    crcs_.push_back(e.crc);
    entries_.push_back(std::move(e));
    return {};
}

Result<std::vector<uint8_t>> ZipWriter::finish() {
    const uint64_t cd_offset = out_.size();
    uint64_t cd_size = 0;
    for (const Entry& e : entries_) cd_size += 46 + e.name.size();
    if (cd_offset + cd_size + 22 > limit_)
        return zip_limit_error("the archive would pass " + std::to_string(limit_) + " bytes");
    for (const Entry& e : entries_) {
        put32(out_, kCentralSig);
        put16(out_, kVersion); // made by
        put16(out_, kVersion); // needed
        put16(out_, kUtf8Names);
        put16(out_, 0); // stored
        put16(out_, 0); // time
        put16(out_, 0); // date
        put32(out_, e.crc);
        put32(out_, e.size);
        put32(out_, e.size);
        put16(out_, static_cast<uint32_t>(e.name.size()));
        put16(out_, 0); // extra
        put16(out_, 0); // comment
        put16(out_, 0); // disk
        put16(out_, 0); // internal attributes
        put32(out_, 0); // external attributes
        put32(out_, e.offset);
        out_.insert(out_.end(), e.name.begin(), e.name.end());
    }
    put32(out_, kEocdSig);
    put16(out_, 0); // this disk
    put16(out_, 0); // the directory's disk
    put16(out_, static_cast<uint32_t>(entries_.size()));
    put16(out_, static_cast<uint32_t>(entries_.size()));
    put32(out_, static_cast<uint32_t>(cd_size));
    put32(out_, static_cast<uint32_t>(cd_offset));
    put16(out_, 0); // comment
    std::vector<uint8_t> out = std::move(out_);
    *this = ZipWriter(root_);
    return out;
}

} // namespace pt2lab
