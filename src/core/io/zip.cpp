// Zip central-directory reader (with zip64) and entry extraction.
#include "io/zip.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "util/check.h"
#include "util/checked.h"

namespace pt2lab {

namespace {

constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kLocalSig = 0x04034b50;

// Little-endian reads with bounds checks, of a window of a file: `n` bytes that
// start at the file's offset `base` (the whole file, or its tail).
class Reader {
public:
    Reader(const uint8_t* p, size_t n, uint64_t base = 0) : p_(p), n_(n), base_(base) {}
    explicit Reader(const std::vector<uint8_t>& b) : Reader(b.data(), b.size()) {}
    uint64_t end() const { return base_ + n_; }
    bool has(uint64_t off, uint64_t n) const {
        return off >= base_ && off - base_ <= n_ && n <= n_ - (off - base_);
    }
    uint8_t u8(uint64_t off) const { return p_[off - base_]; }
    uint16_t u16(uint64_t off) const { return static_cast<uint16_t>(u8(off) | (u8(off + 1) << 8)); }
    uint32_t u32(uint64_t off) const {
        return static_cast<uint32_t>(u8(off)) | (static_cast<uint32_t>(u8(off + 1)) << 8) |
               (static_cast<uint32_t>(u8(off + 2)) << 16) |
               (static_cast<uint32_t>(u8(off + 3)) << 24);
    }
    uint64_t u64(uint64_t off) const {
        return u32(off) | (static_cast<uint64_t>(u32(off + 4)) << 32);
    }
    const char* chars(uint64_t off) const {
        return reinterpret_cast<const char*>(p_ + (off - base_));
    }

private:
    const uint8_t* p_;
    size_t n_;
    uint64_t base_;
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

// Slicing-by-8 (eight tables, eight bytes per step): about 4x the one-table loop,
// which matters because every stored weight record is checked when a file opens.
uint32_t crc32(const uint8_t* data, size_t n) {
    return crc32_update(0, data, n);
}

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t n) {
    static uint32_t table[8][256];
    static bool ready = false;
    if (!ready) {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; ++i)
            for (int t = 1; t < 8; ++t)
                table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
        ready = true;
    }
    uint32_t c = crc ^ 0xffffffffu;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint8_t* p = data + i;
        const uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                                 uint32_t(p[3]) << 24);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
            table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    }
    for (; i < n; ++i) c = table[0][(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

Result<ZipArchive> ZipArchive::open(std::vector<uint8_t> bytes, std::string file) {
    return open(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), std::move(file));
}

namespace {

// The end-of-central-directory record: in the last 22 + 65535 bytes of the file,
// its comment reaching the file's end exactly. `r`'s window ends at the file's end.
std::optional<uint64_t> find_eocd(const Reader& r) {
    const uint64_t file_end = r.end();
    if (file_end < 22) return std::nullopt;
    uint64_t lowest = file_end > 22 + 65535 ? file_end - 22 - 65535 : 0;
    for (uint64_t off = file_end - 22 + 1; off-- > lowest;) {
        if (!r.has(off, 22)) break;
        if (r.u32(off) == kEocdSig && off + 22 + r.u16(off + 20) == file_end) return off;
    }
    return std::nullopt;
}

struct Directory {
    uint64_t count = 0, size = 0, offset = 0;
    bool zip64 = false;
};

// The central directory the end record at `eocd` describes (zip64's, if present),
// checked to lie in r's window and to have room for its records.
Result<Directory> read_directory(const Reader& r, uint64_t eocd, const std::string& file) {
    Directory d;
    d.count = r.u16(eocd + 10);
    d.size = r.u32(eocd + 12);
    d.offset = r.u32(eocd + 16);
    // zip64: the locator sits right before the EOCD record.
    if (eocd >= 20 && r.has(eocd - 20, 20) && r.u32(eocd - 20) == kZip64LocatorSig) {
        uint64_t rec = r.u64(eocd - 20 + 8);
        if (!r.has(rec, 56) || r.u32(rec) != kZip64EocdSig)
            return zip_error(file, "zip64 end of central directory",
                             "the zip64 record is missing or damaged");
        d.count = r.u64(rec + 32);
        d.size = r.u64(rec + 40);
        d.offset = r.u64(rec + 48);
        d.zip64 = true;
    }
    if (!r.has(d.offset, d.size))
        return zip_error(file, "central directory",
                         "the central directory points past the end of the file (offset " +
                             std::to_string(d.offset) + ", size " + std::to_string(d.size) + ")",
                         "the file is truncated or damaged; get the whole file again");
    // Every central record takes at least 46 bytes.
    if (d.count > d.size / 46)
        return zip_error(file, "end of central directory",
                         "the archive claims " + std::to_string(d.count) +
                             " records, but its central directory of " + std::to_string(d.size) +
                             " bytes holds at most " + std::to_string(d.size / 46));
    return d;
}

// Central record `k` at `p` into `e` (name, method, CRC, sizes, local header offset,
// zip64's fields); the offset of the next record.
Result<uint64_t> read_central_record(const Reader& r, uint64_t p, uint64_t cd_end, uint64_t k,
                                     ZipEntry& e, const std::string& file) {
    if (p + 46 > cd_end || r.u32(p) != kCentralSig)
        return zip_error(file, "central directory entry " + std::to_string(k),
                         "bad central directory record");
    e.flags = r.u16(p + 8);
    e.method = r.u16(p + 10);
    e.crc32 = r.u32(p + 16);
    e.compressed_size = r.u32(p + 20);
    e.size = r.u32(p + 24);
    uint16_t name_len = r.u16(p + 28), extra_len = r.u16(p + 30), comment_len = r.u16(p + 32);
    e.local_header_offset = r.u32(p + 42);
    if (p + 46 + uint64_t(name_len) + extra_len + comment_len > cd_end)
        return zip_error(file, "central directory entry " + std::to_string(k),
                         "central directory record runs past the end of the directory");
    e.name.assign(r.chars(p + 46), name_len);
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
    return p + 46 + uint64_t(name_len) + extra_len + comment_len;
}

// Local headers torch writes carry at most 64 bytes of padding in their extra field.
constexpr uint64_t kLocalHeaderSlack = 1024;

// A tensor's bytes (".../data/weights/weight_3"), not a config JSON beside them.
bool is_payload_record(const std::string& name) {
    const size_t slash = name.find_last_of('/');
    if (slash == std::string::npos || name.find('.', slash) != std::string::npos) return false;
    return name.find("data/weights/") != std::string::npos ||
           name.find("data/constants/") != std::string::npos;
}

} // namespace

std::vector<ByteRange> zip_late_ranges(const uint8_t* tail, size_t tail_size, uint64_t file_size,
                                       uint64_t min_size) {
    if (tail_size > file_size) return {};
    Reader r(tail, tail_size, file_size - tail_size);
    auto eocd = find_eocd(r);
    if (!eocd) return {};
    auto dir = read_directory(r, *eocd, "");
    if (!dir.ok()) return {};
    const Directory& d = dir.value();
    std::vector<ByteRange> out;
    uint64_t p = d.offset;
    for (uint64_t k = 0; k < d.count; ++k) {
        ZipEntry e;
        auto next = read_central_record(r, p, d.offset + d.size, k, e, "");
        if (!next.ok()) return {};
        p = next.value();
        if (e.method != 0 || e.size != e.compressed_size || e.size < min_size ||
            e.size <= kLocalHeaderSlack || !is_payload_record(e.name))
            continue;
        const uint64_t head = e.local_header_offset + 30 + e.name.size();
        auto begin = checked_add_u64(head, kLocalHeaderSlack);
        auto end = checked_add_u64(head, e.size);
        if (!begin || !end || *end > d.offset) return {}; // open() will say what is wrong
        out.push_back({*begin, *end});
    }
    std::sort(out.begin(), out.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    for (size_t k = 1; k < out.size(); ++k)
        if (out[k].begin < out[k - 1].end) return {}; // overlapping records: open() refuses them
    return out;
}

Result<ZipArchive> ZipArchive::open(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                    std::string file) {
    return open(std::move(bytes), std::move(file), {});
}

Result<ZipArchive> ZipArchive::open(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                    std::string file, std::vector<ByteRange> late) {
    PT2LAB_CHECK(bytes != nullptr);
    ZipArchive z;
    z.bytes_ = std::move(bytes);
    z.file_ = std::move(file);
    z.late_ = std::move(late);
    std::sort(z.late_.begin(), z.late_.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    const auto& b = *z.bytes_;
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
    auto eocd = find_eocd(r);
    if (!eocd) {
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
    auto dir = read_directory(r, *eocd, z.file_);
    if (!dir.ok()) return dir.error();
    const uint64_t count = dir.value().count, cd_off = dir.value().offset;
    const uint64_t cd_end = cd_off + dir.value().size;
    z.zip64_ = dir.value().zip64;
    uint64_t p = cd_off;
    z.entries_.reserve(static_cast<size_t>(count));
    z.by_name_.reserve(static_cast<size_t>(count));
    for (uint64_t k = 0; k < count; ++k) {
        ZipEntry e;
        auto next = read_central_record(r, p, cd_end, k, e, z.file_);
        if (!next.ok()) return next.error();
        p = next.value();
        // The local header and the data must lie in the file, before the central directory.
        uint64_t h = e.local_header_offset;
        if (!r.has(h, 30) || r.u32(h) != kLocalSig)
            return zip_error(z.file_, e.name, "the record's local header is missing or damaged");
        e.data_offset = h + 30 + r.u16(h + 26) + r.u16(h + 28);
        auto data_end = checked_add_u64(e.data_offset, e.compressed_size);
        if (!data_end || *data_end > cd_off)
            return zip_error(z.file_, e.name,
                             "the record's data runs past the end of the file (needs " +
                                 std::to_string(e.compressed_size) + " bytes at offset " +
                                 std::to_string(e.data_offset) + ")",
                             "the file is truncated; get the whole file again");
        if (!z.by_name_.emplace(e.name, z.entries_.size()).second)
            return zip_error(z.file_, e.name, "two records have this name",
                             "a zip written by torch.export.save (or by Python's zipfile) never "
                             "repeats a name; the archive was altered");
        z.entries_.push_back(std::move(e));
    }
    // No two records may share bytes: a record ends before the next one's header.
    std::vector<const ZipEntry*> by_offset;
    by_offset.reserve(z.entries_.size());
    for (const auto& e : z.entries_) by_offset.push_back(&e);
    std::sort(by_offset.begin(), by_offset.end(), [](const ZipEntry* a, const ZipEntry* b) {
        return a->local_header_offset < b->local_header_offset;
    });
    for (size_t k = 1; k < by_offset.size(); ++k) {
        const ZipEntry& prev = *by_offset[k - 1];
        if (prev.data_offset + prev.compressed_size > by_offset[k]->local_header_offset)
            return zip_error(z.file_, by_offset[k]->name,
                             "the record overlaps record " + prev.name +
                                 " (its bytes are counted twice)",
                             "zip writers never overlap records; overlapping ones are how small "
                             "zips inflate into gigabytes. Export the model again");
    }
    return z;
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &entries_[it->second];
}

Result<std::vector<uint8_t>> ZipArchive::read(const std::string& name) const {
    const ZipEntry* e = find(name);
    if (!e) return zip_error(file_, name, "no such record in the archive", "");
    return read(*e);
}

Result<std::vector<uint8_t>> ZipArchive::read(const ZipEntry& e) const {
    auto v = view(e);
    if (!v.ok()) return v.error();
    return v.value().to_vector();
}

bool ZipArchive::late(const ZipEntry& e) const {
    const uint64_t b = e.data_offset, end = e.data_offset + e.compressed_size;
    // The first range ending after b, if it starts before end, touches [b, end).
    auto it = std::lower_bound(late_.begin(), late_.end(), b,
                               [](const ByteRange& r, uint64_t x) { return r.end <= x; });
    return it != late_.end() && it->begin < end && b < end;
}

Result<Bytes> ZipArchive::view_arriving(const ZipEntry& e) const {
    if (!late(e) || e.method != 0 || e.compressed_size != e.size) return view(e);
    if (!Reader(*bytes_).has(e.data_offset, e.size))
        return zip_error(file_, e.name, "the record's data runs past the end of the file");
    Bytes out =
        Bytes::of(bytes_).slice(static_cast<size_t>(e.data_offset), static_cast<size_t>(e.size));
    arriving_.push_back({e.name, out, e.crc32});
    return out;
}

std::vector<ArrivingRecord> ZipArchive::take_arriving() const {
    std::vector<ArrivingRecord> out;
    out.swap(arriving_);
    return out;
}

Result<Bytes> ZipArchive::view(const ZipEntry& e) const {
    if (late(e))
        return zip_error(file_, e.name, "the record's bytes have not all been read yet",
                         "open the file again once it is read whole");
    // open() checked that [data_offset, data_offset + compressed_size) lies in the file;
    // an entry from elsewhere is checked again.
    const uint64_t data = e.data_offset;
    if (!Reader(*bytes_).has(data, e.compressed_size))
        return zip_error(file_, e.name, "the record's data runs past the end of the file");
    Bytes out;
    if (e.method == 0) {
        if (e.compressed_size != e.size)
            return zip_error(file_, e.name,
                             "stored record with different compressed and plain sizes");
        out = Bytes::of(bytes_).slice(static_cast<size_t>(data), static_cast<size_t>(e.size));
    } else if (e.method == 8) {
        auto inf = inflate_raw(bytes_->data() + data, e.compressed_size, e.size);
        if (!inf.ok()) {
            Error err = inf.error();
            err.file = file_;
            err.where = e.name;
            return err;
        }
        out = Bytes(inf.take());
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
