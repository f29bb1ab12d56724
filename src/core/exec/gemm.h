// The register-tiled float GEMM behind the fast convolutions (conv_fast.cpp,
// conv_winograd.cpp).
#pragma once

#include <cstdint>

#include "exec/conv_epilogue.h"
#include "exec/simd.h"

namespace pt2lab {

// B operands are packed into 8-column panels, [ceil(N / 8)][K][8]: panel j holds
// columns 8j .. 8j+7 of B, row by row, zero past column N.
constexpr int64_t kPanel = 8;
inline int64_t panels_of(int64_t n) {
    return (n + kPanel - 1) / kPanel;
}

// C[M, N] (row stride ldc) = A[M, K] (row-major, row stride K) @ B (+ bias[m]),
// B packed into panels. Sums run over k in order from 0 in float, then + bias,
// then row m's epilogue ep (output channel m: conv_epilogue.h) when given.
void gemm_packed(const float* A, const float* Bp, float* C, int64_t M, int64_t N, int64_t K,
                 int64_t ldc, const float* bias, const ConvEpilogue* ep = nullptr);

} // namespace pt2lab
