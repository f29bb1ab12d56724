// The 4-lane float vector the fast kernels share: GCC/Clang vector extensions,
// SSE natively and SIMD128 in the -msimd128 WebAssembly build. Unaligned loads
// and stores go through memcpy (one instruction either way).
#pragma once

#include <cstring>

namespace pt2lab {

typedef float f32x4 __attribute__((vector_size(16), aligned(4)));

inline f32x4 load4(const float* p) {
    f32x4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store4(float* p, f32x4 v) {
    std::memcpy(p, &v, sizeof v);
}

} // namespace pt2lab
