// One table of dtype facts; every lookup reads it.
#include "graph/dtype.h"

#include <iterator>

namespace pt2lab {

namespace {
struct DtypeInfo {
    ScalarType type;
    const char* name; // torch.<name>
    const char* abbr; // print_readable
    size_t size;
    const char* npy; // numpy descr, "" if none
};

const DtypeInfo kDtypes[] = {
    {ScalarType::Byte, "uint8", "u8", 1, "|u1"},
    {ScalarType::Char, "int8", "i8", 1, "|i1"},
    {ScalarType::Short, "int16", "i16", 2, "<i2"},
    {ScalarType::Int, "int32", "i32", 4, "<i4"},
    {ScalarType::Long, "int64", "i64", 8, "<i8"},
    {ScalarType::Half, "float16", "f16", 2, "<f2"},
    {ScalarType::Float, "float32", "f32", 4, "<f4"},
    {ScalarType::Double, "float64", "f64", 8, "<f8"},
    {ScalarType::ComplexHalf, "complex32", "c32", 4, ""},
    {ScalarType::ComplexFloat, "complex64", "c64", 8, "<c8"},
    {ScalarType::ComplexDouble, "complex128", "c128", 16, "<c16"},
    {ScalarType::Bool, "bool", "b8", 1, "|b1"},
    {ScalarType::BFloat16, "bfloat16", "bf16", 2, ""},
    {ScalarType::UInt16, "uint16", "u16", 2, "<u2"},
    {ScalarType::Float8E4M3FN, "float8_e4m3fn", "f8e4m3fn", 1, ""},
    {ScalarType::Float8E5M2, "float8_e5m2", "f8e5m2", 1, ""},
    {ScalarType::Float8E4M3FNUZ, "float8_e4m3fnuz", "f8e4m3fnuz", 1, ""},
    {ScalarType::Float8E5M2FNUZ, "float8_e5m2fnuz", "f8e5m2fnuz", 1, ""},
};

const DtypeInfo* find(ScalarType t) {
    for (const auto& d : kDtypes)
        if (d.type == t) return &d;
    return nullptr;
}
} // namespace

std::optional<ScalarType> scalar_type_from_code(int64_t code) {
    for (const auto& d : kDtypes)
        if (static_cast<int64_t>(d.type) == code) return d.type;
    return std::nullopt;
}

std::string_view scalar_type_name(ScalarType t) {
    const DtypeInfo* d = find(t);
    return d ? d->name : "unknown";
}

std::optional<ScalarType> scalar_type_from_name(std::string_view name) {
    if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
    for (const auto& d : kDtypes)
        if (name == d.name) return d.type;
    if (name == "float") return ScalarType::Float;
    if (name == "long") return ScalarType::Long;
    if (name == "int") return ScalarType::Int;
    if (name == "half") return ScalarType::Half;
    if (name == "double") return ScalarType::Double;
    return std::nullopt;
}

std::string_view scalar_type_abbr(ScalarType t) {
    const DtypeInfo* d = find(t);
    return d ? d->abbr : "?";
}

size_t scalar_type_size(ScalarType t) {
    const DtypeInfo* d = find(t);
    return d ? d->size : 0;
}

std::string_view scalar_type_npy_descr(ScalarType t) {
    const DtypeInfo* d = find(t);
    return d ? d->npy : "";
}

std::optional<ScalarType> scalar_type_from_npy_descr(std::string_view descr) {
    for (const auto& d : kDtypes)
        if (*d.npy && descr == d.npy) return d.type;
    // single-byte types may be written with '<' or '='
    if (descr == "<u1" || descr == "=u1") return ScalarType::Byte;
    if (descr == "<i1" || descr == "=i1") return ScalarType::Char;
    if (descr == "<b1" || descr == "=b1") return ScalarType::Bool;
    return std::nullopt;
}

} // namespace pt2lab
