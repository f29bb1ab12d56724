// The observers torch.ao.quantization's PT2E flow uses, computed the way torch
// computes them (float32 tensor arithmetic, the same eps handling):
//  - MinMaxObserver: running min/max (fact sheet 5.5);
//  - HistogramObserver: a 2048-bin running histogram (torch.histc, rebinned when
//    the range grows) and an L2-error search for the range before the qparams
//    (what XNNPACKQuantizer uses for activations).
// Both pass their input through unchanged.
#pragma once

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel_job.h"
#include "exec/tensor.h"
#include "program/observer_spec.h"

namespace pt2lab {

struct QParams {
    float scale = 1.0f;
    int64_t zero_point = 0;
    bool observed = false; // false: never ran; torch warns and returns (1.0, 0)
};

class Observer {
public:
    explicit Observer(ObserverConfig cfg) : cfg_(cfg) {}
    virtual ~Observer() = default;
    // Records x (float32); empty tensors are ignored.
    virtual Status observe(const Tensor& x) = 0;
    // observe(x) as a job (kernel_job.h) that a run can pause inside; x and the
    // observer must outlive it. Running it to the end leaves the observer as
    // observe(x) does; dropping it half-way leaves calls() counted and the rest
    // as it was. By default observe(x) runs in the call and the job is empty.
    // unit_work: the work of one unit (KernelOptions::unit_work).
    virtual Result<std::unique_ptr<KernelJob>> observe_job(const Tensor& x,
                                                           uint64_t unit_work = kUnitWork);
    virtual Result<QParams> calculate_qparams() const = 0;
    // The work calculate_qparams() needs, in pieces until `deadline` (at least one);
    // true once it is done, and calculate_qparams() then only reads it. Nothing by
    // default; HistogramObserver's search can take 100 ms on one observer.
    virtual bool prepare_qparams(std::chrono::steady_clock::time_point deadline) const {
        (void)deadline;
        return true;
    }
    virtual std::shared_ptr<Observer> clone() const = 0;
    virtual void reset();
    const ObserverConfig& config() const { return cfg_; }
    float min_val() const { return min_; }
    float max_val() const { return max_; }
    int64_t calls() const { return calls_; }

protected:
    // UniformQuantizationObserverBase._calculate_qparams(min_val, max_val).
    Result<QParams> qparams_for(float min_val, float max_val) const;
    ObserverConfig cfg_;
    float min_ = std::numeric_limits<float>::infinity();
    float max_ = -std::numeric_limits<float>::infinity();
    int64_t calls_ = 0;
};

// A fresh observer of the kind the config names.
std::shared_ptr<Observer> make_observer(const ObserverConfig& cfg);

class MinMaxObserver : public Observer {
public:
    explicit MinMaxObserver(ObserverConfig cfg = {}) : Observer(cfg) {}
    Status observe(const Tensor& x) override;
    Result<QParams> calculate_qparams() const override;
    std::shared_ptr<Observer> clone() const override {
        return std::make_shared<MinMaxObserver>(*this);
    }
};

class HistogramObserver : public Observer {
public:
    explicit HistogramObserver(ObserverConfig cfg);
    Status observe(const Tensor& x) override;
    // Units: runs of elements copied and their min / max taken, then runs of
    // elements binned into the update histogram, then the merge with the old one.
    Result<std::unique_ptr<KernelJob>> observe_job(const Tensor& x,
                                                   uint64_t unit_work = kUnitWork) override;
    // _non_linear_param_search, then the qparams of the range it picks.
    Result<QParams> calculate_qparams() const override;
    // The search, a few of its steps at a time.
    bool prepare_qparams(std::chrono::steady_clock::time_point deadline) const override;
    std::shared_ptr<Observer> clone() const override {
        return std::make_shared<HistogramObserver>(*this);
    }
    void reset() override;
    // torch's histogram buffer: zeros(bins) until the first observation (kept
    // empty until then here: a prepared 10k-node module makes thousands of these).
    std::vector<float> histogram() const {
        return hist_.empty() ? std::vector<float>(static_cast<size_t>(cfg_.bins), 0.0f) : hist_;
    }
    // The range the search picks (what calculate_qparams quantizes). The search
    // costs milliseconds per observer, so it is kept until the next observe().
    std::pair<float, float> search_range() const;

private:
    // _non_linear_param_search's loop, where it stands (prepare_qparams in pieces).
    struct Search {
        std::vector<float> csum;
        double total = 0.0;
        double alpha = 0.0, beta = 1.0;
        int64_t start_bin = 0, end_bin = 0;
        double norm_min = std::numeric_limits<double>::infinity();
    };
    std::vector<float> hist_;
    mutable std::optional<std::pair<float, float>> range_; // search_range(), since the last observe
    mutable std::optional<Search> search_;                 // the search under way, if any
    double quantization_error(int64_t start_bin, int64_t end_bin) const;
};

// torch.histc(x, bins, min, max) for float32 x (values outside [min, max] are left out).
std::vector<float> histc(const float* x, int64_t n, int64_t bins, float min, float max);
// Adds x's counts to h [bins] as histc(x, bins, min, max) counts them: histc over
// a tensor is histc_add over its runs, in order, into one zeroed h.
void histc_add(const float* x, int64_t n, int64_t bins, float min, float max, float* h);
// torch.div(a, b, rounding_mode="floor") on float32 (c10::div_floor_floating): the
// reference follows c10's steps (fmod, then rounding); div_floor gives the same
// bits, quicker where a / b is no integer (HistogramObserver's search calls it
// millions of times per observer).
float div_floor(float a, float b);
float div_floor_reference(float a, float b);
// torch.linspace(start, end, steps) for float32.
std::vector<float> linspace(float start, float end, int64_t steps);

} // namespace pt2lab
