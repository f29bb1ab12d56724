#include "exec/phase_plane.h"

#include <algorithm>

#include "exec/simd.h"

namespace pt2lab {

__attribute__((noinline)) void fill_phase_plane(const float* x, int64_t H, int64_t W, int64_t ph,
                                                int64_t pw, const PhasePlane& g, float* dst) {
    const int64_t S = g.S, r0 = std::min(ph, g.rows), r1 = std::min(ph + H, g.rows);
    // The j of run q with 0 <= S*j + q - pw < W: [lo(q), hi(q)), clipped to the run.
    auto lo = [&](int64_t q) {
        const int64_t first = pw - q; // S*j >= first
        return std::min(first <= 0 ? 0 : (first + S - 1) / S, g.WQ);
    };
    auto hi = [&](int64_t q) {
        const int64_t end = W + pw - q; // S*j < end
        return std::max(lo(q), std::min(end <= 0 ? 0 : (end + S - 1) / S, g.WQ));
    };
    for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + (r - ph) * W; // xr[S*j + q - pw] = x[r - ph, S*j + q - pw]
        float* d = dst + r * g.row_floats();
        if (S == 1) {
            const int64_t j1 = hi(0);
            int64_t j = lo(0);
            for (; j + 4 <= j1; j += 4) store4(d + j, load4(xr + (j - pw)));
            for (; j < j1; ++j) d[j] = xr[j - pw];
            continue;
        }
        // Stride 2: both runs of 4 j at once from 8 consecutive floats (even, odd).
        int64_t v0 = 0, v1 = 0; // [v0, v1): the j already copied to both runs
        if (S == 2) {
            const int64_t end = std::min(hi(0), hi(1));
            v0 = std::max(lo(0), lo(1));
            for (v1 = v0; v1 + 4 <= end; v1 += 4) {
                const f32x4 a = load4(xr + (2 * v1 - pw)), b = load4(xr + (2 * v1 - pw + 4));
                store4(d + v1, __builtin_shufflevector(a, b, 0, 2, 4, 6));
                store4(d + g.WQ + v1, __builtin_shufflevector(a, b, 1, 3, 5, 7));
            }
        }
        for (int64_t q = 0; q < S; ++q) { // the rest one float at a time
            float* dq = d + q * g.WQ;
            const int64_t j0 = lo(q), j1 = hi(q);
            for (int64_t j = j0; j < std::min(j1, v0); ++j) dq[j] = xr[S * j + q - pw];
            for (int64_t j = std::max(j0, v1); j < j1; ++j) dq[j] = xr[S * j + q - pw];
        }
    }
}

} // namespace pt2lab
