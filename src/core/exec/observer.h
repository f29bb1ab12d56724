// MinMaxObserver, as torch.ao.quantization's: passes its input through,
// records the running min/max, and computes (scale, zero_point) for
// per-tensor affine or symmetric quantization with the same float32
// arithmetic and eps handling (fact sheet 5.5).
#pragma once

#include <limits>
#include <string>

#include "exec/tensor.h"
#include "program/observer_spec.h"

namespace pt2lab {

struct QParams {
    float scale = 1.0f;
    int64_t zero_point = 0;
    bool observed = false; // false: never ran; torch warns and returns (1.0, 0)
};

class MinMaxObserver {
public:
    explicit MinMaxObserver(ObserverConfig cfg = {}) : cfg_(cfg) {}
    // Records min/max of x (float32); empty tensors are ignored.
    Status observe(const Tensor& x);
    Result<QParams> calculate_qparams() const;
    const ObserverConfig& config() const { return cfg_; }
    float min_val() const { return min_; }
    float max_val() const { return max_; }
    int64_t calls() const { return calls_; }
    void reset();

private:
    ObserverConfig cfg_;
    float min_ = std::numeric_limits<float>::infinity();
    float max_ = -std::numeric_limits<float>::infinity();
    int64_t calls_ = 0;
};

} // namespace pt2lab
