// MinMaxObserver.forward / calculate_qparams in float32, as torch.ao computes them.
#include "exec/observer.h"

#include <cmath>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

Result<ObserverConfig> ObserverConfig::make(ScalarType dtype, QScheme qscheme, bool custom_range,
                                            int64_t quant_min, int64_t quant_max) {
    ObserverConfig c;
    c.dtype = dtype;
    c.qscheme = qscheme;
    if (dtype != ScalarType::Byte && dtype != ScalarType::Char)
        return kernel_error("MinMaxObserver: dtype must be quint8 or qint8");
    c.quant_min = dtype == ScalarType::Byte ? 0 : -128;
    c.quant_max = dtype == ScalarType::Byte ? 255 : 127;
    if (custom_range) {
        if (!(quant_min <= 0 && 0 <= quant_max))
            return kernel_error(
                "MinMaxObserver: Used-specified quantization range must include 0.");
        if (!(quant_min < quant_max))
            return kernel_error(
                "MinMaxObserver: qmin must be strictly less than qmax for user-specified "
                "quantization range.");
        if (quant_min < c.quant_min || quant_max > c.quant_max)
            return kernel_error("MinMaxObserver: the range [" + std::to_string(quant_min) + ", " +
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

void MinMaxObserver::reset() {
    min_ = std::numeric_limits<float>::infinity();
    max_ = -std::numeric_limits<float>::infinity();
    calls_ = 0;
}

Status MinMaxObserver::observe(const Tensor& x) {
    ++calls_;
    if (x.numel() == 0) return {};
    if (x.dtype != ScalarType::Float)
        return kernel_error("MinMaxObserver: expected a float32 input, got " + x.type_str());
    float lo = x.f32()[0], hi = x.f32()[0];
    for (int64_t k = 1; k < x.numel(); ++k) {
        lo = std::fmin(lo, x.f32()[k]);
        hi = std::fmax(hi, x.f32()[k]);
    }
    min_ = std::fmin(min_, lo);
    max_ = std::fmax(max_, hi);
    return {};
}

Result<QParams> MinMaxObserver::calculate_qparams() const {
    QParams q;
    if (std::isinf(min_) && std::isinf(max_) && min_ > 0 && max_ < 0)
        return q; // never ran: (1.0, 0)
    if (min_ > max_)
        return kernel_error("MinMaxObserver: min " + std::to_string(min_) +
                            " should be less than max " + std::to_string(max_));
    q.observed = true;
    const float min_neg = std::fmin(min_, 0.0f), max_pos = std::fmax(max_, 0.0f);
    const float qmin = static_cast<float>(cfg_.quant_min),
                qmax = static_cast<float>(cfg_.quant_max);
    if (cfg_.qscheme == QScheme::PerTensorSymmetric) {
        const float amax = std::fmax(-min_neg, max_pos);
        float scale = amax / static_cast<float>((qmax - qmin) / 2.0);
        q.scale = std::fmax(scale, cfg_.eps);
        if (cfg_.dtype == ScalarType::Byte)
            q.zero_point = cfg_.custom_range ? (cfg_.quant_min + cfg_.quant_max) / 2 : 128;
        else
            q.zero_point = 0;
    } else {
        float scale = (max_pos - min_neg) / static_cast<float>(qmax - qmin);
        q.scale = std::fmax(scale, cfg_.eps);
        // Saturating (to int32, then clamped below): an infinite input makes the
        // quotient NaN or huge, which C++ cannot cast.
        int64_t zp = cfg_.quant_min - saturate_cast<int32_t>(std::nearbyint(min_neg / q.scale));
        q.zero_point = std::min(std::max(zp, cfg_.quant_min), cfg_.quant_max);
    }
    return q;
}

} // namespace pt2lab
