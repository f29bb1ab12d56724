// .npy header parsing: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
#include "io/npy.h"

#include <cstring>

namespace pt2lab {

namespace {
Error npy_error(const std::string& file, const std::string& msg) {
    Error e =
        make_error("npy header", msg, "write the array with numpy.save (C order, little-endian)");
    e.file = file;
    return e;
}

// The value text after 'key': in the header dict.
bool dict_value(const std::string& h, const std::string& key, std::string& out) {
    size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) return false;
    size_t colon = h.find(':', k);
    if (colon == std::string::npos) return false;
    size_t b = h.find_first_not_of(' ', colon + 1);
    if (b == std::string::npos) return false;
    size_t e;
    if (h[b] == '(') {
        e = h.find(')', b);
        if (e == std::string::npos) return false;
        ++e;
    } else if (h[b] == '\'') {
        e = h.find('\'', b + 1);
        if (e == std::string::npos) return false;
        ++e;
    } else {
        e = h.find_first_of(",}", b);
        if (e == std::string::npos) return false;
    }
    out = h.substr(b, e - b);
    return true;
}
} // namespace

Result<TensorData> read_npy(const std::vector<uint8_t>& b, const std::string& file) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0)
        return npy_error(file, "not a .npy file (bad magic)");
    int major = b[6];
    size_t header_len, start;
    if (major == 1) {
        header_len = b[8] | (b[9] << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) return npy_error(file, "truncated header");
        header_len = b[8] | (b[9] << 8) | (size_t(b[10]) << 16) | (size_t(b[11]) << 24);
        start = 12;
    } else {
        return npy_error(file, "unsupported .npy version " + std::to_string(major));
    }
    if (start + header_len > b.size()) return npy_error(file, "truncated header");
    std::string h(reinterpret_cast<const char*>(&b[start]), header_len);
    std::string descr, fortran, shape;
    if (!dict_value(h, "descr", descr) || !dict_value(h, "fortran_order", fortran) ||
        !dict_value(h, "shape", shape))
        return npy_error(file, "header lacks descr, fortran_order or shape: " + h);
    descr = descr.substr(1, descr.size() - 2);
    auto dt = scalar_type_from_npy_descr(descr);
    if (!dt)
        return npy_error(file, "unsupported dtype '" + descr +
                                   "' (pt2lab reads <f4 <f8 <i8 <i4 |u1 |i1 |b1)");
    if (fortran != "False") return npy_error(file, "Fortran-order arrays are not supported");
    TensorData t;
    t.dtype = *dt;
    // shape "(2, 3, 16, 16)" or "()" or "(5,)"
    std::string inner = shape.substr(1, shape.size() - 2);
    size_t p = 0;
    while (p < inner.size()) {
        size_t c = inner.find(',', p);
        std::string item = inner.substr(p, c == std::string::npos ? std::string::npos : c - p);
        size_t f = item.find_first_not_of(' ');
        if (f != std::string::npos) {
            char* end = nullptr;
            long long v = std::strtoll(item.c_str() + f, &end, 10);
            if (v < 0) return npy_error(file, "negative dimension in shape " + shape);
            t.sizes.push_back(v);
        }
        if (c == std::string::npos) break;
        p = c + 1;
    }
    size_t need = static_cast<size_t>(t.numel()) * scalar_type_size(t.dtype);
    size_t data = start + header_len;
    if (b.size() - data != need) {
        Error e = make_error("npy data",
                             "holds " + std::to_string(b.size() - data) + " bytes, shape " + shape +
                                 " needs " + std::to_string(need),
                             "the file is truncated or its header is wrong");
        e.file = file;
        return e;
    }
    t.bytes.assign(b.begin() + static_cast<long>(data), b.end());
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
