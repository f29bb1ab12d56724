// MinMaxObserver and HistogramObserver as torch.ao computes them: every
// expression follows torch's tensor ops in float32 (a Python float meeting a
// float32 tensor is rounded to float32 first), in torch's order.
#include "exec/observer.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels.h"
#include "util/checked.h"

namespace pt2lab {

std::shared_ptr<Observer> make_observer(const ObserverConfig& cfg) {
    if (cfg.kind == ObserverKind::Histogram) return std::make_shared<HistogramObserver>(cfg);
    return std::make_shared<MinMaxObserver>(cfg);
}

// ---- shared ------------------------------------------------------------------------

Result<std::unique_ptr<KernelJob>> Observer::observe_job(const Tensor& x, uint64_t) {
    if (Status s = observe(x); !s.ok()) return s.error();
    return std::make_unique<KernelJob>();
}

void Observer::reset() {
    min_ = std::numeric_limits<float>::infinity();
    max_ = -std::numeric_limits<float>::infinity();
    calls_ = 0;
}

Result<QParams> Observer::qparams_for(float min_val, float max_val) const {
    QParams q;
    if (std::isinf(min_val) && std::isinf(max_val) && min_val > 0 && max_val < 0)
        return q; // never ran: (1.0, 0)
    if (min_val > max_val)
        return kernel_error(std::string(cfg_.kind_name()) + ": min " + std::to_string(min_val) +
                            " should be less than max " + std::to_string(max_val));
    q.observed = true;
    const float min_neg = std::fmin(min_val, 0.0f), max_pos = std::fmax(max_val, 0.0f);
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

namespace {
Status check_float(const ObserverConfig& cfg, const Tensor& x) {
    if (x.dtype != ScalarType::Float)
        return kernel_error(std::string(cfg.kind_name()) + ": expected a float32 input, got " +
                            x.type_str());
    return {};
}
} // namespace

// ---- MinMaxObserver ----------------------------------------------------------------

Status MinMaxObserver::observe(const Tensor& x) {
    ++calls_;
    if (x.numel() == 0) return {};
    if (Status s = check_float(cfg_, x); !s.ok()) return s;
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
    return qparams_for(min_, max_);
}

// ---- torch.linspace / torch.histc ----------------------------------------------------

std::vector<float> linspace(float start, float end, int64_t steps) {
    std::vector<float> out(static_cast<size_t>(steps));
    if (steps == 1) {
        out[0] = start;
        return out;
    }
    const float step = (end - start) / static_cast<float>(steps - 1);
    const int64_t halfway = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
        out[static_cast<size_t>(i)] = i < halfway ? start + step * static_cast<float>(i)
                                                  : end - step * static_cast<float>(steps - i - 1);
    return out;
}

void histc_add(const float* x, int64_t n, int64_t bins, float lo, float hi, float* h) {
    if (lo == hi) { // torch widens an empty range by one on each side
        lo = lo - 1.0f;
        hi = hi + 1.0f;
    }
    const float width = hi - lo;
    for (int64_t k = 0; k < n; ++k) {
        const float v = x[k];
        if (!(v >= lo && v <= hi)) continue; // NaN and values outside the range
        // torch's float expression; a range near FLT_MAX overflows it to inf or NaN,
        // which cannot become an index, so such values take the quotient in double.
        float at = (v - lo) * static_cast<float>(bins) / width;
        if (!std::isfinite(at))
            at = static_cast<float>((static_cast<double>(v) - lo) * static_cast<double>(bins) /
                                    (static_cast<double>(hi) - lo));
        int64_t pos = std::min(std::max<int64_t>(static_cast<int64_t>(at), 0), bins - 1);
        h[pos] += 1.0f;
    }
}

std::vector<float> histc(const float* x, int64_t n, int64_t bins, float lo, float hi) {
    std::vector<float> h(static_cast<size_t>(bins), 0.0f);
    histc_add(x, n, bins, lo, hi, h.data());
    return h;
}

// ---- HistogramObserver -----------------------------------------------------------------

HistogramObserver::HistogramObserver(ObserverConfig cfg) : Observer(cfg) {
}

void HistogramObserver::reset() {
    Observer::reset();
    range_.reset();
    search_.reset();
    hist_.clear(); // zeros(bins), made by the next observation
}

namespace {
constexpr int64_t kUpsampleRate = 16;

// _upscale_histogram: spread each old bin over upsample_rate sub-bins, move each
// sub-bin's mid point into the new range and add it to the bin it lands in.
std::vector<float> upscale(const std::vector<float>& hist, float orig_min, float orig_max,
                           float update_min, float update_max) {
    const int64_t bins = static_cast<int64_t>(hist.size());
    const int64_t fine = bins * kUpsampleRate;
    const float bin_size = (orig_max - orig_min) / static_cast<float>(fine);
    std::vector<float> mids = linspace(orig_min, orig_max, fine + 1);
    std::vector<float> bounds = linspace(update_min, update_max, bins + 1);
    std::vector<float> out(static_cast<size_t>(bins), 0.0f);
    const float half = 0.5f * bin_size;
    for (int64_t i = 0; i < fine; ++i) {
        const float mid = mids[static_cast<size_t>(i)] + half;
        // bucketize(right=True) - 1, clamped to the bins
        int64_t b = static_cast<int64_t>(std::upper_bound(bounds.begin(), bounds.end(), mid) -
                                         bounds.begin()) -
                    1;
        b = std::min(std::max<int64_t>(b, 0), bins - 1);
        const float w =
            hist[static_cast<size_t>(i / kUpsampleRate)] / static_cast<float>(kUpsampleRate);
        out[static_cast<size_t>(b)] += w; // bincount(weights): float, in index order
    }
    return out;
}

// _get_norm: density * (end^3 - begin^3) / 3
float l2_norm(float begin, float end, float density) {
    return density * ((end * end * end - begin * begin * begin) / 3.0f);
}
} // namespace

float div_floor(float a, float b) {
    // Where a / b (rounded) is no integer and well inside float's integers, no
    // integer lies between it and the exact quotient, and the steps below (fmod,
    // which is slow, then rounding) give floor of the exact quotient: so floor(a / b).
    if (b > 0.0f) {
        const float q = a / b, f = std::floor(q);
        if (q != f && std::fabs(q) < 4194304.0f) return f; // 2^22
    }
    return div_floor_reference(a, b);
}

float div_floor_reference(float a, float b) {
    if (b == 0.0f) return a / b;
    float mod = std::fmod(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && (b < 0.0f) != (mod < 0.0f)) div -= 1.0f;
    if (div == 0.0f) return std::copysign(0.0f, a / b);
    float floordiv = std::floor(div);
    if (div - floordiv > 0.5f) floordiv += 1.0f;
    return floordiv;
}

Status HistogramObserver::observe(const Tensor& x) {
    auto job = observe_job(x);
    if (!job.ok()) return job.error();
    job.value()->run_all();
    return {};
}

Result<std::unique_ptr<KernelJob>> HistogramObserver::observe_job(const Tensor& x_in,
                                                                  uint64_t unit_work) {
    range_.reset();
    search_.reset();
    ++calls_;
    auto job = std::make_unique<KernelJob>();
    if (x_in.numel() == 0) return job;
    if (Status s = check_float(cfg_, x_in); !s.ok()) return s.error();
    // What the units pass on: x (its infinities dropped), its range, the update.
    struct Pass {
        std::vector<float> x;
        float lo = 0.0f, hi = 0.0f;         // x's min and max
        float bin_lo = 0.0f, bin_hi = 0.0f; // the range the update is binned over
        bool empty = false;                 // only infinities: nothing to record
        std::vector<float> update;
    };
    auto pass = std::make_shared<Pass>();
    job->keep.push_back(pass);
    Pass* ps = pass.get();
    const int64_t numel = x_in.numel();
    const float* src = x_in.f32();
    ps->x.resize(static_cast<size_t>(numel));
    ps->update.assign(static_cast<size_t>(cfg_.bins), 0.0f);
    const int64_t per =
        items_per_unit(unit_work, 8, numel); // a few operations per element and pass
    then_items(*job, numel, per, [ps, src](int64_t begin, int64_t end) {
        std::copy(src + begin, src + end, ps->x.begin() + begin);
        if (begin == 0) ps->lo = ps->hi = src[0];
        for (int64_t k = begin; k < end; ++k) { // fmin / fmax in element order
            ps->lo = std::fmin(ps->lo, src[k]);
            ps->hi = std::fmax(ps->hi, src[k]);
        }
    });
    job->then(1, [this, ps](int64_t) {
        if (std::isinf(ps->lo) || std::isinf(ps->hi)) { // torch warns and drops the infinities
            std::vector<float>& x = ps->x;
            x.erase(std::remove_if(x.begin(), x.end(), [](float v) { return std::isinf(v); }),
                    x.end());
            if (x.empty()) {
                ps->empty = true;
                return;
            }
            ps->lo = ps->hi = x[0];
            for (float v : x) {
                ps->lo = std::fmin(ps->lo, v);
                ps->hi = std::fmax(ps->hi, v);
            }
        }
        const bool uninitialized = std::isinf(min_) || std::isinf(max_);
        ps->bin_lo = uninitialized ? ps->lo : std::fmin(min_, ps->lo);
        ps->bin_hi = uninitialized ? ps->hi : std::fmax(max_, ps->hi);
    });
    then_items(*job, numel, per, [this, ps](int64_t begin, int64_t end) {
        const int64_t n = static_cast<int64_t>(ps->x.size()); // fewer without the infinities
        if (ps->empty || begin >= n) return;
        histc_add(ps->x.data() + begin, std::min(end, n) - begin, cfg_.bins, ps->bin_lo, ps->bin_hi,
                  ps->update.data());
    });
    job->then(1, [this, ps](int64_t) { // the update merged into the running histogram
        if (ps->empty) return;
        std::vector<float>& update = ps->update;
        if (std::isinf(min_) || std::isinf(max_)) { // reset_histogram
            min_ = ps->lo;
            max_ = ps->hi;
            hist_ = std::move(update);
            return;
        }
        if (hist_.empty()) hist_.assign(static_cast<size_t>(cfg_.bins), 0.0f);
        const float new_min = ps->bin_lo, new_max = ps->bin_hi;
        if (new_min == min_ && new_max == max_) {
            for (size_t k = 0; k < hist_.size(); ++k) hist_[k] += update[k];
            return;
        }
        std::vector<float> moved;
        if (min_ == max_) { // torch 2.14: the old histogram's mass sits at the single old value
            float mass = 0.0f;
            for (float v : hist_) mass += v;
            const float at = min_;
            moved = histc(&at, 1, cfg_.bins, new_min, new_max);
            for (float& v : moved) v *= mass;
        } else {
            moved = upscale(hist_, min_, max_, new_min, new_max);
        }
        for (size_t k = 0; k < hist_.size(); ++k) hist_[k] = update[k] + moved[k];
        min_ = new_min;
        max_ = new_max;
    });
    return job;
}

// _compute_quantization_error(next_start_bin, next_end_bin)
double HistogramObserver::quantization_error(int64_t start_bin, int64_t end_bin) const {
    const int64_t bins = cfg_.bins;
    const int64_t dst_nbins = int64_t{1} << (8 * scalar_type_size(cfg_.dtype));
    const double bin_width =
        (static_cast<double>(max_) - static_cast<double>(min_)) / static_cast<double>(bins);
    const double dst_bin_width =
        bin_width * static_cast<double>(end_bin - start_bin + 1) / static_cast<double>(dst_nbins);
    if (dst_bin_width == 0.0) return 0.0;
    const float bw = static_cast<float>(bin_width), dbw = static_cast<float>(dst_bin_width);
    const float half = static_cast<float>(dst_bin_width / 2);
    const float neg_half = static_cast<float>(-dst_bin_width / 2);
    const float top = static_cast<float>(dst_nbins - 1);
    const float mid_norm = (half * half * half - neg_half * neg_half * neg_half) / 3.0f;
    // An empty bin adds exactly +0 to the sum when every cube below is finite
    // (0 * finite), so it can be skipped without changing a bit; most bins of an
    // activation's histogram are empty, and this search runs hundreds of times.
    const float reach = (static_cast<float>(bins) + 2.0f) * std::max(bw, dbw);
    const bool skip_empty = std::isfinite(reach * reach * reach) && std::isfinite(mid_norm);
    double sum = 0.0;
    for (int64_t i = 0; i < bins; ++i) {
        if (skip_empty && hist_[static_cast<size_t>(i)] == 0.0f) continue;
        const float begin = static_cast<float>(i - start_bin) * bw;
        const float end = begin + bw;
        const float dst_begin = std::min(std::max(div_floor(begin, dbw), 0.0f), top);
        const float dst_begin_center = (dst_begin + 0.5f) * dbw;
        const float dst_end = std::min(std::max(div_floor(end, dbw), 0.0f), top);
        const float density = hist_[static_cast<size_t>(i)] / bw;
        float norm = 0.0f;
        norm = norm + l2_norm(begin - dst_begin_center, half, density);
        norm = norm + (dst_end - dst_begin - 1.0f) * (density * mid_norm);
        const float dst_end_center = dst_end * dbw + half;
        norm = norm + l2_norm(neg_half, end - dst_end_center, density);
        sum += static_cast<double>(norm);
    }
    return static_cast<double>(static_cast<float>(sum)); // norm.sum().item()
}

std::pair<float, float> HistogramObserver::search_range() const {
    while (!prepare_qparams(std::chrono::steady_clock::time_point::max())) {
    }
    return *range_;
}

bool HistogramObserver::prepare_qparams(std::chrono::steady_clock::time_point deadline) const {
    if (range_) return true;
    const int64_t bins = cfg_.bins;
    if (!search_) {
        Search s;
        double total_d = 0.0;
        s.csum.resize(hist_.size());
        for (size_t k = 0; k < hist_.size(); ++k) {
            total_d += static_cast<double>(hist_[k]);
            s.csum[k] = static_cast<float>(total_d);
        }
        s.total = static_cast<double>(static_cast<float>(total_d));
        s.end_bin = bins - 1;
        search_ = std::move(s);
    }
    Search& s = *search_;
    const std::vector<float>& csum = s.csum;
    const double stepsize = 1e-5;
    while (s.alpha < s.beta) {
        const double next_alpha = s.alpha + stepsize, next_beta = s.beta - stepsize;
        int64_t l = s.start_bin, r = s.end_bin;
        // cSum[l] < next_alpha * total: the Python float meets a float32 tensor
        while (l < s.end_bin &&
               csum[static_cast<size_t>(l)] < static_cast<float>(next_alpha * s.total))
            ++l;
        while (r > s.start_bin &&
               csum[static_cast<size_t>(r)] > static_cast<float>(next_beta * s.total))
            --r;
        int64_t next_start = s.start_bin, next_end = s.end_bin;
        if ((l - s.start_bin) > (s.end_bin - r)) {
            next_start = l;
            s.alpha = next_alpha;
        } else {
            next_end = r;
            s.beta = next_beta;
        }
        if (next_start == s.start_bin && next_end == s.end_bin) continue;
        const double norm = quantization_error(next_start, next_end);
        if (norm > s.norm_min) break;
        s.norm_min = norm;
        s.start_bin = next_start;
        s.end_bin = next_end;
        // Each quantization error walks every bin (microseconds): the clock after each.
        if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    const float bin_width = (max_ - min_) / static_cast<float>(bins);
    range_ = std::make_pair(min_ + bin_width * static_cast<float>(s.start_bin),
                            min_ + bin_width * static_cast<float>(s.end_bin + 1));
    search_.reset();
    return true;
}

Result<QParams> HistogramObserver::calculate_qparams() const {
    if (std::isinf(min_) && std::isinf(max_) && min_ > 0 && max_ < 0) return QParams{};
    auto [lo, hi] = search_range();
    return qparams_for(lo, hi);
}

} // namespace pt2lab
