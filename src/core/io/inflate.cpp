// A small raw-DEFLATE decoder (RFC 1951) for zips written with compression.
// Canonical Huffman codes are decoded one bit at a time: simple, and fast
// enough for model files, which torch writes uncompressed anyway.
#include "io/zip.h"

#include <algorithm>

#include "util/checked.h"

namespace pt2lab {

namespace {

struct Huffman {
    uint16_t count[16] = {};   // codes per length
    uint16_t symbol[320] = {}; // symbols in canonical order
};

class Inflater {
public:
    Inflater(const uint8_t* d, size_t n, uint64_t limit) : d_(d), n_(n), limit_(limit) {}

    Status run() {
        int last = 0;
        do {
            last = bits(1);
            int type = bits(2);
            if (bad_) return truncated();
            Status s;
            if (type == 0)
                s = stored();
            else if (type == 1)
                s = fixed();
            else if (type == 2)
                s = dynamic();
            else
                return corrupt("invalid block type 3");
            if (!s.ok()) return s;
        } while (!last);
        return {};
    }
    std::vector<uint8_t> out;

private:
    int bits(int need) {
        int v = 0;
        for (int k = 0; k < need; ++k) {
            if (pos_ >= n_) {
                bad_ = true;
                return 0;
            }
            v |= ((d_[pos_] >> bit_) & 1) << k;
            if (++bit_ == 8) bit_ = 0, ++pos_;
        }
        return v;
    }
    Error corrupt(const std::string& what) const {
        return make_error("deflate stream", "compressed data is corrupt: " + what,
                          "the file is damaged; get it again");
    }
    Error truncated() const {
        return make_error("deflate stream", "compressed data ends early",
                          "the file is truncated; get it again");
    }
    Status put(uint8_t b) {
        if (out.size() >= limit_)
            return corrupt("more data than the archive says the record holds");
        out.push_back(b);
        return {};
    }

    Status stored() {
        if (bit_) bit_ = 0, ++pos_; // stored data starts on a byte boundary
        if (pos_ + 4 > n_) return truncated();
        unsigned len = d_[pos_] | (d_[pos_ + 1] << 8);
        unsigned nlen = d_[pos_ + 2] | (d_[pos_ + 3] << 8);
        pos_ += 4;
        if (len != (~nlen & 0xffffu)) return corrupt("stored block length check failed");
        if (pos_ + len > n_) return truncated();
        for (unsigned k = 0; k < len; ++k) {
            Status s = put(d_[pos_ + k]);
            if (!s.ok()) return s;
        }
        pos_ += len;
        return {};
    }

    // Canonical code from code lengths; false when the lengths over-subscribe.
    static bool build(Huffman& h, const uint8_t* lengths, int n) {
        for (auto& c : h.count) c = 0;
        for (int s = 0; s < n; ++s) h.count[lengths[s]]++;
        h.count[0] = 0;
        int left = 1;
        for (int len = 1; len < 16; ++len) {
            left <<= 1;
            left -= h.count[len];
            if (left < 0) return false;
        }
        uint16_t offs[16] = {};
        for (int len = 1; len < 15; ++len)
            offs[len + 1] = static_cast<uint16_t>(offs[len] + h.count[len]);
        for (int s = 0; s < n; ++s)
            if (lengths[s]) h.symbol[offs[lengths[s]]++] = static_cast<uint16_t>(s);
        return true;
    }

    int decode(const Huffman& h) {
        int code = 0, first = 0, index = 0;
        for (int len = 1; len < 16; ++len) {
            code |= bits(1);
            if (bad_) return -1;
            int count = h.count[len];
            if (code - count < first) return h.symbol[index + (code - first)];
            index += count;
            first += count;
            first <<= 1;
            code <<= 1;
        }
        return -2;
    }

    Status codes(const Huffman& lit, const Huffman& dist) {
        static const uint16_t kLenBase[] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                            15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                            67, 83, 99, 115, 131, 163, 195, 227, 258};
        static const uint8_t kLenExtra[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                            2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
        static const uint16_t kDistBase[] = {
            1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
            193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
        static const uint8_t kDistExtra[] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
        for (;;) {
            int sym = decode(lit);
            if (sym == -1) return truncated();
            if (sym < 0) return corrupt("bad literal/length code");
            if (sym < 256) {
                Status s = put(static_cast<uint8_t>(sym));
                if (!s.ok()) return s;
            } else if (sym == 256) {
                return {};
            } else {
                sym -= 257;
                if (sym >= 29) return corrupt("bad length symbol");
                int len = kLenBase[sym] + bits(kLenExtra[sym]);
                int ds = decode(dist);
                if (ds == -1 || bad_) return truncated();
                if (ds < 0 || ds >= 30) return corrupt("bad distance symbol");
                size_t d = kDistBase[ds] + static_cast<size_t>(bits(kDistExtra[ds]));
                if (bad_) return truncated();
                if (d > out.size()) return corrupt("distance reaches before the start of the data");
                for (int k = 0; k < len; ++k) {
                    Status s = put(out[out.size() - d]);
                    if (!s.ok()) return s;
                }
            }
        }
    }

    Status fixed() {
        Huffman lit, dist;
        uint8_t lengths[320];
        int s = 0;
        for (; s < 144; ++s) lengths[s] = 8;
        for (; s < 256; ++s) lengths[s] = 9;
        for (; s < 280; ++s) lengths[s] = 7;
        for (; s < 288; ++s) lengths[s] = 8;
        build(lit, lengths, 288);
        for (s = 0; s < 30; ++s) lengths[s] = 5;
        build(dist, lengths, 30);
        return codes(lit, dist);
    }

    Status dynamic() {
        static const uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                           11, 4,  12, 3, 13, 2, 14, 1, 15};
        int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
        if (bad_) return truncated();
        if (nlen > 286 || ndist > 30) return corrupt("too many length or distance codes");
        uint8_t lengths[320] = {};
        for (int k = 0; k < ncode; ++k) lengths[kOrder[k]] = static_cast<uint8_t>(bits(3));
        Huffman lencode;
        if (!build(lencode, lengths, 19)) return corrupt("bad code-length code");
        int index = 0;
        while (index < nlen + ndist) {
            int sym = decode(lencode);
            if (sym == -1) return truncated();
            if (sym < 0) return corrupt("bad code-length symbol");
            if (sym < 16) {
                lengths[index++] = static_cast<uint8_t>(sym);
            } else {
                int len = 0, rep;
                if (sym == 16) {
                    if (index == 0) return corrupt("repeat with no previous length");
                    len = lengths[index - 1];
                    rep = 3 + bits(2);
                } else if (sym == 17) {
                    rep = 3 + bits(3);
                } else {
                    rep = 11 + bits(7);
                }
                if (index + rep > nlen + ndist) return corrupt("too many lengths");
                while (rep--) lengths[index++] = static_cast<uint8_t>(len);
            }
        }
        if (lengths[256] == 0) return corrupt("no end-of-block code");
        Huffman lit, dist;
        if (!build(lit, lengths, nlen)) return corrupt("bad literal/length code lengths");
        if (!build(dist, lengths + nlen, ndist)) return corrupt("bad distance code lengths");
        return codes(lit, dist);
    }

    const uint8_t* d_;
    size_t n_;
    uint64_t limit_;
    size_t pos_ = 0;
    int bit_ = 0;
    bool bad_ = false;
};

} // namespace

Result<std::vector<uint8_t>> inflate_raw(const uint8_t* data, size_t n, uint64_t expected_size) {
    // Deflate's densest code (a length-258 match in about two bits) expands
    // at most 1032:1; a record claiming more is refused before any allocation.
    auto most = checked_add_u64(checked_mul_u64(n, 1032).value_or(UINT64_MAX), 64);
    if (!most || expected_size > *most)
        return make_error("deflate stream",
                          "the archive says " + std::to_string(n) +
                              " compressed bytes inflate to " + std::to_string(expected_size) +
                              ", more than deflate can produce (1032:1)",
                          "the archive is damaged or made to exhaust memory; export it again");
    Inflater inf(data, n, expected_size);
    inf.out.reserve(static_cast<size_t>(expected_size));
    Status s = inf.run();
    if (!s.ok()) return s.error();
    if (inf.out.size() != expected_size)
        return make_error("deflate stream",
                          "decompressed to " + std::to_string(inf.out.size()) +
                              " bytes, the archive says " + std::to_string(expected_size),
                          "the file is damaged; get it again");
    return std::move(inf.out);
}

} // namespace pt2lab
