// Python's repr() for the scalar values graphs carry: floats, strings, ints.
// Used by every printer so both builds (g++ and emscripten) print identical text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pt2lab {

// repr(float): shortest round-trip digits; scientific form when the decimal
// exponent is < -4 or >= 16 ("1e-05", "1e+16"), else fixed with at least one
// decimal ("1.0", "0.1"); "inf", "-inf", "nan".
std::string py_float_repr(double v);

// repr(str): single quotes unless the text has ' and no ", with Python's escapes.
std::string py_str_repr(std::string_view s);

// True if s is a valid Python identifier (ASCII subset: [A-Za-z_][A-Za-z0-9_]*).
bool py_is_identifier(std::string_view s);

// True if s is a Python keyword (keyword.kwlist).
bool py_is_keyword(std::string_view s);

// True if s names an entry of Python's builtins module (builtins.__dict__).
bool py_is_builtin_name(std::string_view s);

} // namespace pt2lab
