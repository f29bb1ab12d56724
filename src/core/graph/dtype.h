// torch dtypes as the export schema numbers them, with their printed names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pt2lab {

// Values are torch/_export/serde/schema.yaml's ScalarType codes.
enum class ScalarType : int {
    Unknown = 0,
    Byte = 1,   // uint8
    Char = 2,   // int8
    Short = 3,  // int16
    Int = 4,    // int32
    Long = 5,   // int64
    Half = 6,   // float16
    Float = 7,  // float32
    Double = 8, // float64
    ComplexHalf = 9,
    ComplexFloat = 10,
    ComplexDouble = 11,
    Bool = 12,
    BFloat16 = 13,
    UInt16 = 28,
    Float8E4M3FN = 29,
    Float8E5M2 = 30,
    Float8E4M3FNUZ = 31,
    Float8E5M2FNUZ = 32,
};

std::optional<ScalarType> scalar_type_from_code(int64_t code);
// "float32", "int64", ... (torch.<name> prints the dtype)
std::string_view scalar_type_name(ScalarType t);
std::optional<ScalarType>
scalar_type_from_name(std::string_view name); // "float32" or "torch.float32"
// print_readable's abbreviation: f32, i64, u8, i8, b8, bf16, f16 ...
std::string_view scalar_type_abbr(ScalarType t);
// Bytes per element; 0 for Unknown.
size_t scalar_type_size(ScalarType t);
// NumPy descr ("<f4") or "" when NumPy has no equivalent.
std::string_view scalar_type_npy_descr(ScalarType t);
std::optional<ScalarType> scalar_type_from_npy_descr(std::string_view descr);

} // namespace pt2lab
