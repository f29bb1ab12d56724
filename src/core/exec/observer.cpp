// MinMaxObserver.forward / calculate_qparams in float32, as torch.ao computes them.
#include "exec/observer.h"

#include <cmath>

#include "exec/kernels.h"

namespace pt2lab {

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
        int64_t zp = cfg_.quant_min - static_cast<int64_t>(std::nearbyint(min_neg / q.scale));
        q.zero_point = std::min(std::max(zp, cfg_.quant_min), cfg_.quant_max);
    }
    return q;
}

} // namespace pt2lab
