// .npy header parsing: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
#include "io/npy.h"

#include <cctype>
#include <cstring>

#include "util/checked.h"

namespace pt2lab {

namespace {
Error npy_error(const std::string& file, const std::string& msg) {
    Error e =
        make_error("npy header", msg, "write the array with numpy.save (C order, little-endian)");
    e.file = file;
    return e;
}

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// read by a strict little parser: quoted keys, values that are a quoted
// string, True/False, or a tuple of non-negative integers. Any other text is
// an error (never an out-of-range read).
class HeaderParser {
public:
    explicit HeaderParser(const std::string& h) : h_(h) {}

    std::string descr, fortran;
    std::vector<int64_t> shape;
    bool has_descr = false, has_fortran = false, has_shape = false;
    std::string problem;

    bool parse() {
        skip();
        if (!eat('{')) return fail("the header is not a dict");
        for (;;) {
            skip();
            if (eat('}')) break;
            std::string key;
            if (!quoted(key)) return fail("expected a quoted key");
            skip();
            if (!eat(':')) return fail("expected ':' after '" + key + "'");
            skip();
            if (key == "descr") {
                if (!quoted(descr)) return fail("'descr' is not a quoted string");
                has_descr = true;
            } else if (key == "fortran_order") {
                if (word("True"))
                    fortran = "True";
                else if (word("False"))
                    fortran = "False";
                else
                    return fail("'fortran_order' is not True or False");
                has_fortran = true;
            } else if (key == "shape") {
                if (!tuple()) return false;
                has_shape = true;
            } else {
                return fail("unexpected key '" + key + "'");
            }
            skip();
            if (eat(',')) continue;
            skip();
            if (eat('}')) break;
            return fail("expected ',' or '}'");
        }
        skip();
        if (p_ != h_.size()) return fail("text after the dict");
        return true;
    }

private:
    bool fail(const std::string& why) {
        if (problem.empty()) problem = why;
        return false;
    }
    void skip() {
        while (p_ < h_.size() && (h_[p_] == ' ' || h_[p_] == '\n' || h_[p_] == '\t')) ++p_;
    }
    bool eat(char c) {
        if (p_ < h_.size() && h_[p_] == c) return ++p_, true;
        return false;
    }
    bool word(const char* w) {
        size_t n = std::strlen(w);
        if (h_.compare(p_, n, w) != 0) return false;
        p_ += n;
        return true;
    }
    bool quoted(std::string& out) {
        if (p_ >= h_.size() || (h_[p_] != '\'' && h_[p_] != '"')) return false;
        char q = h_[p_++];
        size_t close = h_.find(q, p_);
        if (close == std::string::npos) return false;
        out = h_.substr(p_, close - p_);
        p_ = close + 1;
        return true;
    }
    bool tuple() {
        if (!eat('(')) return fail("'shape' is not a tuple");
        for (;;) {
            skip();
            if (eat(')')) return true;
            if (p_ >= h_.size() || !std::isdigit(static_cast<unsigned char>(h_[p_])))
                return fail("'shape' holds something other than non-negative integers");
            int64_t v = 0;
            while (p_ < h_.size() && std::isdigit(static_cast<unsigned char>(h_[p_]))) {
                auto next = checked_add(checked_mul(v, 10).value_or(-1), h_[p_] - '0');
                if (!next || *next < 0) return fail("a dimension in 'shape' is too large");
                v = *next;
                ++p_;
            }
            shape.push_back(v);
            skip();
            if (eat(',')) continue;
            if (eat(')')) return true;
            return fail("'shape' is not a tuple of integers");
        }
    }

    const std::string& h_;
    size_t p_ = 0;
};
} // namespace

Result<TensorData> read_npy(const std::vector<uint8_t>& b, const std::string& file) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0)
        return npy_error(file, "not a .npy file (bad magic)");
    int major = b[6];
    uint64_t header_len, start; // 64-bit: size_t is 32 bits in WebAssembly
    if (major == 1) {
        header_len = b[8] | (b[9] << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) return npy_error(file, "truncated header");
        header_len = b[8] | (b[9] << 8) | (uint64_t(b[10]) << 16) | (uint64_t(b[11]) << 24);
        start = 12;
    } else {
        return npy_error(file, "unsupported .npy version " + std::to_string(major));
    }
    if (header_len > b.size() - start) return npy_error(file, "truncated header");
    std::string h(reinterpret_cast<const char*>(b.data() + start), static_cast<size_t>(header_len));
    HeaderParser hp(h);
    std::string shown = h.size() > 200 ? h.substr(0, 200) + "..." : h;
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
    if (!hp.parse()) return npy_error(file, "malformed header (" + hp.problem + "): " + shown);
    if (!hp.has_descr || !hp.has_fortran || !hp.has_shape)
        return npy_error(file, "header lacks descr, fortran_order or shape: " + shown);
    auto dt = scalar_type_from_npy_descr(hp.descr);
    if (!dt)
        return npy_error(file, "unsupported dtype '" + hp.descr +
                                   "' (pt2lab reads <f4 <f8 <i8 <i4 |u1 |i1 |b1)");
    if (hp.fortran != "False") return npy_error(file, "Fortran-order arrays are not supported");
    TensorData t;
    t.dtype = *dt;
    t.sizes = hp.shape;
    std::string shape = "(";
    for (size_t k = 0; k < t.sizes.size(); ++k)
        shape += (k ? ", " : "") + std::to_string(t.sizes[k]);
    shape += t.sizes.size() == 1 ? ",)" : ")";
    auto need = checked_nbytes(t.sizes, scalar_type_size(t.dtype));
    if (!need)
        return npy_error(file, "shape " + shape + " holds more elements than fit in 64 bits");
    const uint64_t data = start + header_len, have = b.size() - data;
    if (have != *need) {
        Error e = make_error("npy data",
                             "holds " + std::to_string(have) + " bytes, shape " + shape +
                                 " needs " + std::to_string(*need),
                             "the file is truncated or its header is wrong");
        e.file = file;
        return e;
    }
    t.bytes = Bytes(std::vector<uint8_t>(b.begin() + static_cast<long>(data), b.end()));
    return t;
}

std::vector<uint8_t> write_npy(const TensorData& t) {
    std::string shape = "(";
    for (size_t k = 0; k < t.sizes.size(); ++k)
        shape += std::to_string(t.sizes[k]) + (t.sizes.size() == 1      ? ","
                                               : k + 1 < t.sizes.size() ? ", "
                                                                        : "");
    shape += ")";
    std::string header = "{'descr': '" + std::string(scalar_type_npy_descr(t.dtype)) +
                         "', 'fortran_order': False, 'shape': " + shape + ", }";
    size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.push_back(static_cast<uint8_t>(header.size() & 0xff));
    out.push_back(static_cast<uint8_t>(header.size() >> 8));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), t.bytes.begin(), t.bytes.end());
    return out;
}

} // namespace pt2lab
