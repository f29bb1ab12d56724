// ObserverConfig: validation and the settings the lessons use.
#include "program/observer_spec.h"

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

ObserverConfig ObserverConfig::activation() {
    return make(ScalarType::Byte, QScheme::PerTensorAffine).take();
}

ObserverConfig ObserverConfig::weight() {
    return make(ScalarType::Char, QScheme::PerTensorSymmetric, true, -127, 127).take();
}

std::string ObserverConfig::describe() const {
    return std::string("MinMaxObserver(dtype=torch.") +
           (dtype == ScalarType::Byte ? "quint8" : "qint8") + ", qscheme=torch." +
           (qscheme == QScheme::PerTensorAffine ? "per_tensor_affine" : "per_tensor_symmetric") +
           ", quant_min=" + std::to_string(quant_min) + ", quant_max=" + std::to_string(quant_max) +
           ")";
}

} // namespace pt2lab
