// Structure-aware mutators (see mutators.h).
#include "mutators.h"

#include <algorithm>
#include <cstring>

#include "io/zip.h"
#include "util/json_read.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace pt2lab_fuzz {

using pt2lab::json;

uint64_t Rng::next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void mutate_bytes(std::vector<uint8_t>& bytes, size_t max_size) {
    size_t cap = std::max(max_size, bytes.size());
    bytes.resize(cap);
    size_t n = LLVMFuzzerMutate(bytes.data(), std::min(bytes.size(), cap), cap);
    bytes.resize(n);
}

// ---- zip --------------------------------------------------------------------

bool parse_zip(const uint8_t* data, size_t size, ZipGenome& out) {
    auto z = pt2lab::ZipArchive::open(std::vector<uint8_t>(data, data + size), "fuzz");
    if (!z.ok()) return false;
    out = ZipGenome();
    out.zip64 = z.value().zip64();
    for (const auto& e : z.value().entries()) {
        ZipRecord r;
        r.name = e.name;
        r.flags = e.flags;
        r.method = e.method;
        // Decompressing megabytes per mutation would make the fuzzer crawl.
        auto plain = e.size <= (1u << 20)
                         ? z.value().read(e)
                         : pt2lab::Result<std::vector<uint8_t>>(pt2lab::make_error("", ""));
        if (plain.ok()) {
            r.data = plain.take();
        } else {
            r.raw = true;
            r.raw_crc = e.crc32;
            r.raw_size = e.size;
            r.data.assign(data + e.data_offset, data + e.data_offset + e.compressed_size);
        }
        out.records.push_back(std::move(r));
    }
    return true;
}

namespace {

void put16(std::vector<uint8_t>& b, uint32_t v) {
    b.push_back(v & 0xff);
    b.push_back((v >> 8) & 0xff);
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}
void put64(std::vector<uint8_t>& b, uint64_t v) {
    put32(b, static_cast<uint32_t>(v));
    put32(b, static_cast<uint32_t>(v >> 32));
}

// A valid raw DEFLATE stream made of stored blocks.
std::vector<uint8_t> deflate_stored(const std::vector<uint8_t>& in) {
    std::vector<uint8_t> out;
    size_t p = 0;
    do {
        size_t n = std::min<size_t>(65535, in.size() - p);
        bool last = p + n == in.size();
        out.push_back(last ? 1 : 0);
        put16(out, static_cast<uint32_t>(n));
        put16(out, static_cast<uint32_t>(~n & 0xffff));
        out.insert(out.end(), in.begin() + static_cast<long>(p),
                   in.begin() + static_cast<long>(p + n));
        p += n;
    } while (p < in.size());
    return out;
}

} // namespace

std::vector<uint8_t> write_zip(const ZipGenome& g) {
    std::vector<uint8_t> out, central;
    std::vector<uint64_t> offsets;
    for (const ZipRecord& r : g.records) {
        std::vector<uint8_t> body = r.method == 8 && !r.raw ? deflate_stored(r.data) : r.data;
        uint32_t crc = (r.raw ? r.raw_crc : pt2lab::crc32(r.data.data(), r.data.size())) ^
                       (r.wrong_crc ? 1u : 0u);
        uint64_t size = (r.raw ? r.raw_size : r.data.size()) + static_cast<uint64_t>(r.size_delta);
        uint64_t csize = body.size() + static_cast<uint64_t>(r.csize_delta);
        uint64_t offset = out.size();
        if (r.point_at_previous && !offsets.empty()) offset = offsets.back();
        offsets.push_back(out.size());
        std::vector<uint8_t> extra;
        if (g.zip64) {
            put16(extra, 1);
            put16(extra, 24);
            put64(extra, size);
            put64(extra, csize);
            put64(extra, offset);
        }
        const uint32_t s32 = g.zip64 ? 0xffffffffu : static_cast<uint32_t>(size);
        const uint32_t c32 = g.zip64 ? 0xffffffffu : static_cast<uint32_t>(csize);
        // local header
        put32(out, 0x04034b50);
        put16(out, g.zip64 ? 45 : 20);
        put16(out, r.flags);
        put16(out, r.method);
        put32(out, 0);
        put32(out, crc);
        put32(out, c32);
        put32(out, s32);
        put16(out, static_cast<uint32_t>(r.name.size()));
        put16(out, static_cast<uint32_t>(extra.size()));
        out.insert(out.end(), r.name.begin(), r.name.end());
        out.insert(out.end(), extra.begin(), extra.end());
        out.insert(out.end(), body.begin(), body.end());
        // central record
        put32(central, 0x02014b50);
        put16(central, g.zip64 ? 45 : 20);
        put16(central, g.zip64 ? 45 : 20);
        put16(central, r.flags);
        put16(central, r.method);
        put32(central, 0);
        put32(central, crc);
        put32(central, c32);
        put32(central, s32);
        put16(central, static_cast<uint32_t>(r.name.size()));
        put16(central, static_cast<uint32_t>(extra.size()));
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put32(central, 0);
        put32(central, g.zip64 ? 0xffffffffu : static_cast<uint32_t>(offset));
        central.insert(central.end(), r.name.begin(), r.name.end());
        central.insert(central.end(), extra.begin(), extra.end());
    }
    const uint64_t cd_off = out.size(), cd_size = central.size(), count = g.records.size();
    out.insert(out.end(), central.begin(), central.end());
    if (g.zip64) {
        const uint64_t rec = out.size();
        put32(out, 0x06064b50);
        put64(out, 44);
        put16(out, 45);
        put16(out, 45);
        put32(out, 0);
        put32(out, 0);
        put64(out, count);
        put64(out, count);
        put64(out, cd_size);
        put64(out, cd_off);
        put32(out, 0x07064b50);
        put32(out, 0);
        put64(out, rec);
        put32(out, 1);
    }
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    put16(out, g.zip64 ? 0xffff : static_cast<uint32_t>(count));
    put16(out, g.zip64 ? 0xffff : static_cast<uint32_t>(count));
    put32(out, g.zip64 ? 0xffffffffu : static_cast<uint32_t>(cd_size));
    put32(out, g.zip64 ? 0xffffffffu : static_cast<uint32_t>(cd_off));
    put16(out, 0);
    return out;
}

void mutate_zip_structure(ZipGenome& g, Rng& rng) {
    if (g.records.empty()) {
        g.records.push_back(ZipRecord{"model/models/model.json", {'{', '}'}});
        return;
    }
    ZipRecord& r = g.records[rng.below(g.records.size())];
    static const int64_t kDeltas[] = {-1, 1, -8, 64, 1 << 20, 0x7fffffff, -0x7fffffff};
    switch (rng.below(12)) {
    case 0: { // a duplicate name
        ZipRecord copy = r;
        g.records.push_back(std::move(copy));
        break;
    }
    case 1:
        g.records.erase(g.records.begin() + static_cast<long>(rng.below(g.records.size())));
        break;
    case 2: std::swap(r, g.records[rng.below(g.records.size())]); break;
    case 3:
        r.method = rng.one_in(3) ? static_cast<uint16_t>(rng.below(20)) : (r.method == 8 ? 0 : 8);
        break;
    case 4: r.flags ^= static_cast<uint16_t>(1u << rng.below(16)); break;
    case 5: r.wrong_crc = !r.wrong_crc; break;
    case 6: r.size_delta = kDeltas[rng.below(7)]; break;
    case 7: r.csize_delta = kDeltas[rng.below(7)]; break;
    case 8: r.point_at_previous = true; break;
    case 9: g.zip64 = !g.zip64; break;
    case 10: { // rename: into another record's folder, or a byte changed
        if (rng.one_in(2) && !r.name.empty())
            r.name[rng.below(r.name.size())] ^= static_cast<char>(1 + rng.below(127));
        else
            r.name = g.records[rng.below(g.records.size())].name + (rng.one_in(2) ? "" : "x");
        break;
    }
    default: { // a new empty or copied record under the first record's root folder
        ZipRecord n = r;
        size_t slash = r.name.find('/');
        n.name = (slash == std::string::npos ? "" : r.name.substr(0, slash + 1)) + "extra/n" +
                 std::to_string(rng.below(1000));
        g.records.push_back(std::move(n));
    }
    }
}

// ---- JSON -------------------------------------------------------------------

namespace {

void collect(json& j, std::vector<json*>& all, std::vector<std::string>& strings) {
    std::vector<json*> stack{&j};
    while (!stack.empty()) {
        json* v = stack.back();
        stack.pop_back();
        all.push_back(v);
        if (v->is_string()) strings.push_back(v->get<std::string>());
        if (v->is_object()) {
            for (auto it = v->begin(); it != v->end(); ++it) {
                strings.push_back(it.key());
                stack.push_back(&*it);
            }
        } else if (v->is_array()) {
            for (auto& x : *v) stack.push_back(&x);
        }
    }
}

json interesting_number(Rng& rng, const json& old) {
    static const int64_t kInts[] = {0,
                                    -1,
                                    1,
                                    2,
                                    3,
                                    7,
                                    8,
                                    255,
                                    256,
                                    65535,
                                    65536,
                                    100000,
                                    int64_t(1) << 31,
                                    (int64_t(1) << 32) + 8,
                                    int64_t(1) << 40,
                                    int64_t(1) << 61,
                                    int64_t(1) << 62,
                                    INT64_MAX,
                                    INT64_MIN,
                                    -(int64_t(1) << 31),
                                    1000000000000};
    switch (rng.below(4)) {
    case 0: return json(kInts[rng.below(sizeof kInts / sizeof kInts[0])]);
    case 1:
        if (old.is_number_integer()) {
            int64_t v = old.get<int64_t>();
            if (rng.one_in(2)) return json(v == INT64_MAX ? v - 1 : v + 1);
            return json(v == INT64_MIN ? v + 1 : v - 1);
        }
        return json(0);
    case 2: {
        static const double kFloats[] = {0.0, -0.0, 1e-300, 1e300, -1e308, 0.5, 1e-5};
        return json(kFloats[rng.below(7)]);
    }
    default: {
        static const char* kSpecial[] = {"Infinity", "-Infinity", "NaN"};
        return json(kSpecial[rng.below(3)]);
    }
    }
}

json interesting_string(Rng& rng, const std::vector<std::string>& strings) {
    static const char* kStrings[] = {"",
                                     "x",
                                     "relu\nimport os",
                                     "class",
                                     "as_none",
                                     "as_tensor",
                                     "as_int",
                                     "as_ints",
                                     "as_sym_int",
                                     "as_expr",
                                     "torch.ops.aten.relu.default",
                                     "torch.ops.aten.view.default",
                                     "torch.ops.aten.sym_size.int",
                                     "torch.ops.aten.max_pool2d.default",
                                     "torch.ops.aten.adaptive_avg_pool2d.default",
                                     "torch.ops.aten.batch_norm.default",
                                     "torch.ops.aten.mean.dim",
                                     "torch.ops.aten.permute.default",
                                     "operator.getitem",
                                     "pt2lab.fx_graph",
                                     "conv.weight",
                                     "cpu:0",
                                     "0"};
    if (!strings.empty() && rng.one_in(2)) return json(strings[rng.below(strings.size())]);
    return json(kStrings[rng.below(sizeof kStrings / sizeof kStrings[0])]);
}

} // namespace

bool mutate_json(std::string& text, Rng& rng, size_t max_size) {
    auto parsed = pt2lab::parse_json_text(text, "fuzz");
    if (!parsed.ok()) return false;
    json root = parsed.take();
    std::vector<json*> all;
    std::vector<std::string> strings;
    collect(root, all, strings);
    const int rounds = 1 + static_cast<int>(rng.below(3));
    for (int round = 0; round < rounds; ++round) {
        json& v = *all[rng.below(all.size())];
        const json& donor = *all[rng.below(all.size())];
        switch (rng.below(10)) {
        case 0: v = interesting_number(rng, v); break;
        case 1: v = interesting_string(rng, strings); break;
        case 2: v = json(donor); break; // splice another value here
        case 3:
            if (v.is_object() && !v.empty()) { // drop a member
                auto it = v.begin();
                std::advance(it, static_cast<long>(rng.below(v.size())));
                std::string k = it.key(); // erase(key) must not see a reference into itself
                v.erase(k);
            } else if (v.is_array() && !v.empty()) {
                v.erase(v.begin() + static_cast<long>(rng.below(v.size())));
            } else {
                v = nullptr;
            }
            break;
        case 4:
            if (v.is_array() && !v.empty()) { // duplicate an element
                json copy = v[rng.below(v.size())];
                v.push_back(std::move(copy));
            } else if (v.is_object()) { // a member under another document key
                std::string k = strings.empty() ? "k" : strings[rng.below(strings.size())];
                if (v.find(k) == v.end()) v[k] = json(donor);
            }
            break;
        case 5: { // nest: [v] or {"as_x": v}, sometimes hundreds deep
            int depth = rng.one_in(8) ? 200 + static_cast<int>(rng.below(120)) : 1;
            json w = v;
            for (int k = 0; k < depth; ++k)
                w = rng.one_in(2) ? json::array({w}) : json{{"as_int", w}};
            v = std::move(w);
            break;
        }
        case 6: {
            static const json kShapes[] = {json(nullptr), json(true), json::object(),
                                           json::array()};
            v = kShapes[rng.below(4)];
            break;
        }
        case 7:
            if (v.is_array() && v.size() > 1)
                std::swap(v[0], v[v.size() - 1]);
            else
                v = interesting_number(rng, v);
            break;
        case 8: // a size list grown or emptied
            if (v.is_array()) {
                if (rng.one_in(2))
                    v.clear();
                else
                    v.push_back(json{{"as_int", interesting_number(rng, json(0))}});
            } else {
                v = interesting_string(rng, strings);
            }
            break;
        default:
            if (v.is_string()) {
                std::string s = v.get<std::string>();
                if (!s.empty()) s[rng.below(s.size())] = "\n\"';:.,_ 0aZ"[rng.below(12)];
                v = s;
            } else {
                v = interesting_number(rng, v);
            }
        }
        // Pointers into changed containers are stale: collect again.
        all.clear();
        strings.clear();
        collect(root, all, strings);
    }
    std::string out = root.dump(-1, ' ', false, json::error_handler_t::replace);
    if (out.size() > max_size) return false;
    text = std::move(out);
    return true;
}

// ---- .npy -------------------------------------------------------------------

void mutate_npy(std::vector<uint8_t>& b, Rng& rng) {
    static const char* kHeaders[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 16, 16), }",
        "{'descr': '', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': , }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
        "{'descr': '<f2', 'fortran_order': False, 'shape': (), }",
        "{'descr': '|b1', 'fortran_order': True, 'shape': (0,), }",
        "{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
        "{'descr': '<f4' 'shape': (2,)}",
        "{",
        ""};
    if (b.size() < 10 || rng.one_in(3)) {
        std::string h = kHeaders[rng.below(sizeof kHeaders / sizeof kHeaders[0])];
        std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
        uint16_t len = static_cast<uint16_t>(h.size());
        if (rng.one_in(4)) len = static_cast<uint16_t>(rng.next());
        out.push_back(len & 0xff);
        out.push_back(len >> 8);
        out.insert(out.end(), h.begin(), h.end());
        out.resize(out.size() + rng.below(2 * 3 * 16 * 16 * 4 + 1));
        b = std::move(out);
        return;
    }
    // Edit inside the header text (after the 10-byte preamble) or the version / length bytes.
    size_t header_end = std::min<size_t>(b.size(), 10 + (b[8] | (b[9] << 8)));
    if (rng.one_in(3)) {
        b[6 + rng.below(4)] = static_cast<uint8_t>(rng.next());
    } else if (header_end > 10) {
        b[10 + rng.below(header_end - 10)] = static_cast<uint8_t>("(),:' 0129-x{}"[rng.below(14)]);
    }
}

// ---- whole files ----------------------------------------------------------------

namespace {
bool ends_with(const std::string& s, const char* suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
} // namespace

std::vector<uint8_t> mutate_file(const uint8_t* data, size_t size, size_t max_size, uint64_t seed) {
    Rng rng(seed);
    std::vector<uint8_t> bytes(data, data + size);
    ZipGenome g;
    if (size >= 4 && data[0] == 'P' && data[1] == 'K' && !rng.one_in(16) &&
        parse_zip(data, size, g) && !g.records.empty()) {
        if (rng.one_in(4)) {
            mutate_zip_structure(g, rng);
        } else {
            ZipRecord& r = g.records[rng.below(g.records.size())];
            std::string text(r.data.begin(), r.data.end());
            if (ends_with(r.name, ".json") && mutate_json(text, rng, max_size)) {
                r.data.assign(text.begin(), text.end());
            } else if (ends_with(r.name, ".npy")) {
                mutate_npy(r.data, rng);
            } else {
                mutate_bytes(r.data, std::max<size_t>(r.data.size() + 64, 64));
            }
        }
        std::vector<uint8_t> out = write_zip(g);
        if (out.size() <= max_size) return out;
        return bytes;
    }
    std::string text(bytes.begin(), bytes.end());
    if (!rng.one_in(16) && mutate_json(text, rng, max_size)) return {text.begin(), text.end()};
    mutate_bytes(bytes, max_size);
    return bytes;
}

} // namespace pt2lab_fuzz
