// Settings of an observer (torch.ao.quantization's MinMaxObserver or
// HistogramObserver): kind, dtype, scheme, range and eps. The runtime state
// (recorded min/max, histogram) lives in exec/observer.h.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "graph/dtype.h"
#include "util/status.h"

namespace pt2lab {

enum class QScheme { PerTensorAffine, PerTensorSymmetric };
enum class ObserverKind { MinMax, Histogram };

struct ObserverConfig {
    ObserverKind kind = ObserverKind::MinMax;
    ScalarType dtype = ScalarType::Byte; // Byte = quint8 / uint8, Char = qint8 / int8
    // torch.quint8/qint8 (a QConfig) or torch.uint8/int8 (a PT2E QuantizationSpec): the same
    // arithmetic, only the name differs.
    bool plain_dtype = false;
    QScheme qscheme = QScheme::PerTensorAffine;
    bool custom_range = false; // quant_min/quant_max given by the user
    int64_t quant_min = 0, quant_max = 255;
    float eps = std::numeric_limits<float>::epsilon(); // torch.finfo(torch.float32).eps
    int64_t bins = 2048;                               // HistogramObserver

    // Validates a custom range like torch (must include 0, min < max, fits the dtype).
    static Result<ObserverConfig> make(ScalarType dtype, QScheme qscheme, bool custom_range = false,
                                       int64_t quant_min = 0, int64_t quant_max = 0);
    // torch.ao.quantization.MinMaxObserver(): quint8 per-tensor affine 0..255, float32 eps
    // (what a lesson inserts by hand, as torch.fx scenarios register it).
    static ObserverConfig minmax_default();
    // XNNPACKQuantizer's get_symmetric_quantization_config() (torch.ao, torch 2.6):
    // activations HistogramObserver, torch.int8 per-tensor affine -128..127, eps 2**-12;
    static ObserverConfig activation();
    // weights MinMaxObserver, torch.int8 per-tensor symmetric -127..127, eps 2**-12.
    static ObserverConfig weight();
    // "HistogramObserver(dtype=torch.int8, qscheme=torch.per_tensor_affine, quant_min=-128,
    // quant_max=127, eps=0.000244140625)"
    std::string describe() const;
    const char* kind_name() const; // "MinMaxObserver", "HistogramObserver"
    // The torch dtype q/dq nodes carry: uint8 for quint8, int8 for qint8.
    ScalarType storage_dtype() const { return dtype; }
};

} // namespace pt2lab
