// Settings of a MinMaxObserver (torch.ao.quantization): dtype, scheme and
// range. The runtime state (recorded min/max) lives in exec/observer.h.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "graph/dtype.h"
#include "util/status.h"

namespace pt2lab {

enum class QScheme { PerTensorAffine, PerTensorSymmetric };

struct ObserverConfig {
    ScalarType dtype = ScalarType::Byte; // Byte = quint8, Char = qint8
    QScheme qscheme = QScheme::PerTensorAffine;
    bool custom_range = false; // quant_min/quant_max given by the user
    int64_t quant_min = 0, quant_max = 255;
    float eps = std::numeric_limits<float>::epsilon(); // torch.finfo(torch.float32).eps

    // Validates a custom range like torch (must include 0, min < max, fits the dtype).
    static Result<ObserverConfig> make(ScalarType dtype, QScheme qscheme, bool custom_range = false,
                                       int64_t quant_min = 0, int64_t quant_max = 0);
    // Activations as the lessons quantize them: per-tensor affine quint8, 0..255.
    static ObserverConfig activation();
    // Weights: per-tensor symmetric qint8, -127..127 (XNNPACK's weight range).
    static ObserverConfig weight();
    // "MinMaxObserver(dtype=torch.quint8, qscheme=torch.per_tensor_affine, quant_min=0,
    // quant_max=255)"
    std::string describe() const;
    // The torch dtype q/dq nodes carry: uint8 for quint8, int8 for qint8.
    ScalarType storage_dtype() const { return dtype; }
};

} // namespace pt2lab
