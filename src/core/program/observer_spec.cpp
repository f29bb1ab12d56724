// ObserverConfig: validation, the settings torch.ao uses (MinMaxObserver() and
// XNNPACKQuantizer's symmetric config) and their description.
#include "program/observer_spec.h"

#include <cstdio>
#include <string>

namespace pt2lab {

Result<ObserverConfig> ObserverConfig::make(ScalarType dtype, QScheme qscheme, bool custom_range,
                                            int64_t quant_min, int64_t quant_max) {
    ObserverConfig c;
    c.dtype = dtype;
    c.qscheme = qscheme;
    if (dtype != ScalarType::Byte && dtype != ScalarType::Char)
        return make_error("", "MinMaxObserver: dtype must be quint8 or qint8");
    c.quant_min = dtype == ScalarType::Byte ? 0 : -128;
    c.quant_max = dtype == ScalarType::Byte ? 255 : 127;
    if (custom_range) {
        if (!(quant_min <= 0 && 0 <= quant_max))
            return make_error("",
                              "MinMaxObserver: Used-specified quantization range must include 0.");
        if (!(quant_min < quant_max))
            return make_error(
                "", "MinMaxObserver: qmin must be strictly less than qmax for user-specified "
                    "quantization range.");
        if (quant_min < c.quant_min || quant_max > c.quant_max)
            return make_error("", "MinMaxObserver: the range [" + std::to_string(quant_min) + ", " +
                                      std::to_string(quant_max) + "] does not fit the dtype");
        c.custom_range = true;
        c.quant_min = quant_min;
        c.quant_max = quant_max;
    }
    return c;
}

ObserverConfig ObserverConfig::minmax_default() {
    return make(ScalarType::Byte, QScheme::PerTensorAffine).take();
}

ObserverConfig ObserverConfig::activation() {
    ObserverConfig c = make(ScalarType::Char, QScheme::PerTensorAffine, true, -128, 127).take();
    c.kind = ObserverKind::Histogram;
    c.plain_dtype = true;
    c.eps = 0.000244140625f; // 2**-12
    return c;
}

ObserverConfig ObserverConfig::weight() {
    ObserverConfig c = make(ScalarType::Char, QScheme::PerTensorSymmetric, true, -127, 127).take();
    c.plain_dtype = true;
    c.eps = 0.000244140625f; // 2**-12
    return c;
}

const char* ObserverConfig::kind_name() const {
    return kind == ObserverKind::Histogram ? "HistogramObserver" : "MinMaxObserver";
}

std::string ObserverConfig::describe() const {
    const char* dt = dtype == ScalarType::Byte ? (plain_dtype ? "uint8" : "quint8")
                                               : (plain_dtype ? "int8" : "qint8");
    char eps_text[32];
    std::snprintf(eps_text, sizeof eps_text, "%.9g", static_cast<double>(eps));
    return std::string(kind_name()) + "(dtype=torch." + dt + ", qscheme=torch." +
           (qscheme == QScheme::PerTensorAffine ? "per_tensor_affine" : "per_tensor_symmetric") +
           ", quant_min=" + std::to_string(quant_min) + ", quant_max=" + std::to_string(quant_max) +
           ", eps=" + eps_text + ")";
}

} // namespace pt2lab
