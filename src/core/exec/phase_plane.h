// A padded copy of one [H, W] plane stored by column phase, which the fast
// depthwise conv (conv_fast.cpp, padding 0) and the fast max_pool2d
// (kernels_reduce.cpp, padding -inf) read: for a W stride S, each padded row is
// S runs of WQ floats, run q holding the padded columns q, q + S, q + 2S, ...
// Tap (i, j) of output (oh, ow) reads padded row oh*sh + i*dh, column ow*S + j*dw:
// run (j*dw) % S, element ow + (j*dw) / S, so every stride reads consecutive floats.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "exec/kernels.h"

namespace pt2lab {

struct PhasePlane {
    int64_t rows = 0, S = 1, WQ = 0; // padded rows, phases, floats per run
    int64_t row_floats() const { return S * WQ; }
};

// The plane a KH x KW window (strides sh, sw, dilations dh, dw) needs for an
// OH x OW output read `block` outputs at a time: a run holds the columns of
// ceil(OW / block) * block outputs, so the last block reads padding, never past the buffer.
inline PhasePlane phase_plane(int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t sh,
                              int64_t sw, int64_t dh, int64_t dw, int64_t block) {
    PhasePlane g;
    g.rows = (OH - 1) * sh + (KH - 1) * dh + 1;
    g.S = sw;
    g.WQ = (OW + block - 1) / block * block + (KW - 1) * dw / g.S;
    return g;
}

// Whether the plane is not much larger than the input and the work (taps x
// outputs, from work_of): true for every ordinary stride, padding and dilation;
// a huge stride or dilation over a small input takes the kernels' plain loops instead.
inline bool phase_plane_fits(const PhasePlane& g, int64_t H, int64_t W,
                             std::optional<uint64_t> work) {
    auto plane = work_of({g.rows, g.row_floats()}), in = work_of({H, W});
    return plane && in && work && *plane <= 2 * (*in + *work) + 4096;
}

// off[i*KW + j]: where tap (i, j) starts, relative to its output row's first float.
inline std::vector<int64_t> phase_plane_taps(int64_t KH, int64_t KW, int64_t dh, int64_t dw,
                                             const PhasePlane& g) {
    std::vector<int64_t> off(static_cast<size_t>(KH * KW));
    for (int64_t i = 0; i < KH; ++i)
        for (int64_t j = 0; j < KW; ++j)
            off[static_cast<size_t>(i * KW + j)] =
                i * dh * g.row_floats() + j * dw % g.S * g.WQ + j * dw / g.S;
    return off;
}

// Copies x into the plane's interior, by phase:
//   dst[r, q, j] = x[r - ph, S*j + q - pw]  where that lies inside x
// Every other element is padding, the same for every plane: the caller fills
// the buffer with it once, and those elements are never written. Out of line
// (phase_plane.cpp): called once per plane, so V8 optimizes it early.
// x: [H, W]  dst: [rows, S, WQ]
void fill_phase_plane(const float* x, int64_t H, int64_t W, int64_t ph, int64_t pw,
                      const PhasePlane& g, float* dst);

} // namespace pt2lab
