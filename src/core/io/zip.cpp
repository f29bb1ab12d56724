// Zip central-directory reader (with zip64) and entry extraction.
#include "io/zip.h"

#include <cstring>

namespace pt2lab {

namespace {

constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kLocalSig = 0x04034b50;

// Little-endian reads with bounds checks.
class Reader {
public:
    Reader(const std::vector<uint8_t>& b) : b_(b) {}
    bool has(uint64_t off, uint64_t n) const { return off <= b_.size() && n <= b_.size() - off; }
    uint16_t u16(uint64_t off) const { return static_cast<uint16_t>(b_[off] | (b_[off + 1] << 8)); }
    uint32_t u32(uint64_t off) const {
        return static_cast<uint32_t>(b_[off]) | (static_cast<uint32_t>(b_[off + 1]) << 8) |
               (static_cast<uint32_t>(b_[off + 2]) << 16) |
               (static_cast<uint32_t>(b_[off + 3]) << 24);
    }
    uint64_t u64(uint64_t off) const {
        return u32(off) | (static_cast<uint64_t>(u32(off + 4)) << 32);
    }

private:
    const std::vector<uint8_t>& b_;
};

Error zip_error(const std::string& file, const std::string& where, const std::string& msg,
                const std::string& hint =
                    "the file is damaged or not a zip archive; export it again with "
                    "torch.export.save") {
    Error e = make_error(where, msg, hint);
    e.file = file;
    return e;
}

} // namespace

uint32_t crc32(const uint8_t* data, size_t n) {
    static uint32_t table[256];
    static bool ready = false;
    if (!ready) {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = true;
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

Result<ZipArchive> ZipArchive::open(std::vector<uint8_t> bytes, std::string file) {
    ZipArchive z;
    z.bytes_ = std::move(bytes);
    z.file_ = std::move(file);
    const auto& b = z.bytes_;
    Reader r(b);
    if (b.size() < 22) {
        if (b.size() >= 4 && r.u32(0) == kLocalSig)
            return zip_error(z.file_, "end of central directory",
                             "the zip archive is truncated (" + std::to_string(b.size()) +
                                 " bytes)",
                             "the download or copy was cut short; get the whole file again");
        return zip_error(z.file_, "header",
                         "not a zip archive (" + std::to_string(b.size()) + " bytes)");
    }
    // The end-of-central-directory record sits in the last 22 + 65535 bytes.
    uint64_t eocd = UINT64_MAX;
    uint64_t lowest = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
    for (uint64_t off = b.size() - 22 + 1; off-- > lowest;) {
        if (r.u32(off) == kEocdSig && off + 22 + r.u16(off + 20) == b.size()) {
            eocd = off;
            break;
        }
    }
    if (eocd == UINT64_MAX) {
        if (r.u32(0) == kLocalSig)
            return zip_error(z.file_, "end of central directory",
                             "the zip archive is truncated: its central directory is missing",
                             "the download or copy was cut short; get the whole file again");
        char magic[16];
        std::snprintf(magic, sizeof magic, "%02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
        return zip_error(z.file_, "header",
                         std::string("not a zip archive (first bytes ") + magic +
                             ", expected 50 4b 03 04)",
                         "open a .pt2 written by torch.export.save, or an ExportedProgram .json");
    }
    uint64_t count = r.u16(eocd + 10);
    uint64_t cd_size = r.u32(eocd + 12);
    uint64_t cd_off = r.u32(eocd + 16);
    // zip64: the locator sits right before the EOCD record.
    if (eocd >= 20 && r.u32(eocd - 20) == kZip64LocatorSig) {
        uint64_t rec = r.u64(eocd - 20 + 8);
        if (!r.has(rec, 56) || r.u32(rec) != kZip64EocdSig)
            return zip_error(z.file_, "zip64 end of central directory",
                             "the zip64 record is missing or damaged");
        count = r.u64(rec + 32);
        cd_size = r.u64(rec + 40);
        cd_off = r.u64(rec + 48);
        z.zip64_ = true;
    }
    if (!r.has(cd_off, cd_size))
        return zip_error(z.file_, "central directory",
                         "the central directory points past the end of the file (offset " +
                             std::to_string(cd_off) + ", size " + std::to_string(cd_size) + ")",
                         "the file is truncated or damaged; get the whole file again");
    uint64_t p = cd_off;
    for (uint64_t k = 0; k < count; ++k) {
        std::string where = "central directory entry " + std::to_string(k);
        if (!r.has(p, 46) || r.u32(p) != kCentralSig)
            return zip_error(z.file_, where, "bad central directory record");
        ZipEntry e;
        e.flags = r.u16(p + 8);
        e.method = r.u16(p + 10);
        e.crc32 = r.u32(p + 16);
        e.compressed_size = r.u32(p + 20);
        e.size = r.u32(p + 24);
        uint16_t name_len = r.u16(p + 28), extra_len = r.u16(p + 30), comment_len = r.u16(p + 32);
        e.local_header_offset = r.u32(p + 42);
        if (!r.has(p + 46, uint64_t(name_len) + extra_len + comment_len))
            return zip_error(z.file_, where,
                             "central directory record runs past the end of the file");
        e.name.assign(reinterpret_cast<const char*>(&b[p + 46]), name_len);
        // zip64 extended information: only the fields saturated in the record are present.
        uint64_t x = p + 46 + name_len, xend = x + extra_len;
        while (x + 4 <= xend) {
            uint16_t id = r.u16(x), len = r.u16(x + 2);
            if (x + 4 + len > xend) break;
            if (id == 0x0001) {
                uint64_t f = x + 4, fend = f + len;
                if (e.size == 0xffffffffu && f + 8 <= fend) e.size = r.u64(f), f += 8;
                if (e.compressed_size == 0xffffffffu && f + 8 <= fend)
                    e.compressed_size = r.u64(f), f += 8;
                if (e.local_header_offset == 0xffffffffu && f + 8 <= fend)
                    e.local_header_offset = r.u64(f);
            }
            x += 4 + len;
        }
        z.entries_.push_back(std::move(e));
        p += 46 + uint64_t(name_len) + extra_len + comment_len;
    }
    return z;
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
    for (const auto& e : entries_)
        if (e.name == name) return &e;
    return nullptr;
}

Result<std::vector<uint8_t>> ZipArchive::read(const std::string& name) const {
    const ZipEntry* e = find(name);
    if (!e) return zip_error(file_, name, "no such record in the archive", "");
    return read(*e);
}

Result<std::vector<uint8_t>> ZipArchive::read(const ZipEntry& e) const {
    Reader r(bytes_);
    uint64_t h = e.local_header_offset;
    if (!r.has(h, 30) || r.u32(h) != kLocalSig)
        return zip_error(file_, e.name, "the record's local header is missing or damaged");
    uint64_t data = h + 30 + r.u16(h + 26) + r.u16(h + 28);
    if (!r.has(data, e.compressed_size))
        return zip_error(file_, e.name,
                         "the record's data runs past the end of the file (needs " +
                             std::to_string(e.compressed_size) + " bytes at offset " +
                             std::to_string(data) + ")",
                         "the file is truncated; get the whole file again");
    std::vector<uint8_t> out;
    if (e.method == 0) {
        if (e.compressed_size != e.size)
            return zip_error(file_, e.name,
                             "stored record with different compressed and plain sizes");
        out.assign(bytes_.begin() + static_cast<long>(data),
                   bytes_.begin() + static_cast<long>(data + e.size));
    } else if (e.method == 8) {
        auto inf = inflate_raw(&bytes_[data], e.compressed_size, e.size);
        if (!inf.ok()) {
            Error err = inf.error();
            err.file = file_;
            err.where = e.name;
            return err;
        }
        out = inf.take();
    } else {
        return zip_error(
            file_, e.name, "compression method " + std::to_string(e.method) + " is not supported",
            "re-create the archive with stored or deflated entries (torch.export.save does)");
    }
    uint32_t c = crc32(out.data(), out.size());
    if (c != e.crc32) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "CRC mismatch (stored %08x, computed %08x)", e.crc32, c);
        return zip_error(file_, e.name, buf, "the file is damaged; get it again");
    }
    return out;
}

} // namespace pt2lab
