// Output comparison with torch.allclose's rule and summary figures.
#include "exec/parity.h"

#include "exec/simd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pt2lab {

namespace {

// What compare_tensors adds up over the elements, each value widened to double.
struct Sums {
    double signal = 0.0, noise = 0.0, range = 0.0, max_abs = 0.0;
    int64_t nan = 0, inf = 0, nonfinite_new = 0;
    bool allclose = true;

    void add(double x, double y, const Tolerance& tol) {
        if (std::isfinite(x) && std::isfinite(y)) {
            const double d = std::fabs(x - y);
            max_abs = std::max(max_abs, d);
            allclose &= !(d > tol.atol + tol.rtol * std::fabs(y));
            range = std::max(range, std::fabs(y));
            signal += y * y;
            noise += d * d;
            return;
        }
        nan += std::isnan(x);
        inf += std::isinf(x);
        nonfinite_new += !std::isfinite(x) && std::isfinite(y);
        if (std::isnan(x) || std::isnan(y)) {
            if (!(std::isnan(x) && std::isnan(y))) allclose = false;
            return;
        }
        // An Inf on either side: no difference where both have it, else an infinite one.
        const double d = x == y ? 0.0 : std::numeric_limits<double>::infinity();
        max_abs = std::max(max_abs, d);
        if (d > tol.atol + tol.rtol * std::fabs(y)) allclose = false;
        // An Inf both runs have is no noise; the signal is the finite values'.
        if (std::isfinite(y)) {
            range = std::max(range, std::fabs(y));
            signal += y * y;
        }
        noise += d * d;
    }

    void into(TensorParity& p) const {
        p.nan += nan;
        p.inf += inf;
        p.nonfinite_new += nonfinite_new;
        p.allclose = p.allclose && allclose;
        p.max_abs = std::max(p.max_abs, max_abs);
        p.max_rel = p.max_abs == 0.0 ? 0.0
                    : range > 0.0    ? p.max_abs / range
                                     : std::numeric_limits<double>::infinity();
        p.sqnr_db = noise == 0.0 ? std::numeric_limits<double>::infinity()
                                 : 10.0 * std::log10(signal / noise);
    }
};

typedef double f64x2 __attribute__((vector_size(16)));
typedef int64_t i64x2 __attribute__((vector_size(16)));

// Sums of two float32 tensors of n values: four at a time where all eight are finite
// (nearly always), in double two lanes at a time; the rest one at a time. The per-layer
// table of a converted MobileNet v2 compares ten million values a Run, which took 63 ms
// one double at a time in WebAssembly. The sums are taken in lanes, so their last bits
// differ from an element-order sum; every figure is the same to 1e-12.
Sums sums_f32(const float* a, const float* b, int64_t n, const Tolerance& tol) {
    Sums s;
    const f64x2 zero = {0.0, 0.0}, atol = {tol.atol, tol.atol}, rtol = {tol.rtol, tol.rtol};
    f64x2 signal = zero, noise = zero, range = zero, max_abs = zero;
    i64x2 bad = {0, 0};
    auto lanes = [&](f64x2 x, f64x2 y) {
        f64x2 d = x - y;
        d = d < zero ? -d : d;
        const f64x2 ay = y < zero ? -y : y;
        max_abs = d > max_abs ? d : max_abs;
        bad |= d > atol + rtol * ay;
        range = ay > range ? ay : range;
        signal += y * y;
        noise += d * d;
    };
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        const f32x4 x = load4(a + k), y = load4(b + k);
        const f32x4 fx = x - x, fy = y - y; // 0 where finite, NaN for NaN and infinities
        const auto fin = (fx == fx) & (fy == fy);
        if (fin[0] & fin[1] & fin[2] & fin[3]) {
            lanes(__builtin_convertvector(__builtin_shufflevector(x, x, 0, 1), f64x2),
                  __builtin_convertvector(__builtin_shufflevector(y, y, 0, 1), f64x2));
            lanes(__builtin_convertvector(__builtin_shufflevector(x, x, 2, 3), f64x2),
                  __builtin_convertvector(__builtin_shufflevector(y, y, 2, 3), f64x2));
        } else {
            for (int64_t j = k; j < k + 4; ++j) s.add(a[j], b[j], tol);
        }
    }
    for (; k < n; ++k) s.add(a[k], b[k], tol);
    s.signal += signal[0] + signal[1];
    s.noise += noise[0] + noise[1];
    s.range = std::max({s.range, range[0], range[1]});
    s.max_abs = std::max({s.max_abs, max_abs[0], max_abs[1]});
    s.allclose = s.allclose && !(bad[0] | bad[1]);
    return s;
}

} // namespace

TensorParity compare_tensors(const std::string& name, const Tensor& a, const Tensor& b,
                             const Tolerance& tol) {
    TensorParity p;
    p.name = name;
    p.type_a = a.type_str();
    p.type_b = b.type_str();
    if (a.sizes != b.sizes || a.dtype != b.dtype) {
        p.comparable = p.allclose = p.bit_identical = false;
        p.max_abs = p.max_rel = std::numeric_limits<double>::infinity();
        p.sqnr_db = -std::numeric_limits<double>::infinity();
        return p;
    }
    p.bit_identical = a.storage == b.storage;
    // Float32 (every layer of a quantized run) read straight from storage: Tensor::get's
    // dtype switch per element was most of a converted MobileNet v2's per-layer table.
    Sums sums;
    if (a.dtype == ScalarType::Float) {
        sums = sums_f32(a.f32(), b.f32(), a.numel(), tol);
    } else {
        for (int64_t k = 0; k < a.numel(); ++k) sums.add(a.get(k), b.get(k), tol);
    }
    sums.into(p);
    return p;
}

bool ParityReport::allclose() const {
    for (const auto& o : outputs)
        if (!o.allclose) return false;
    return !outputs.empty();
}

bool ParityReport::bit_identical() const {
    for (const auto& o : outputs)
        if (!o.bit_identical) return false;
    return !outputs.empty();
}

double ParityReport::max_abs() const {
    double m = 0.0;
    for (const auto& o : outputs) m = std::max(m, o.max_abs);
    return m;
}

double ParityReport::max_rel() const {
    double m = 0.0;
    for (const auto& o : outputs) m = std::max(m, o.max_rel);
    return m;
}

double ParityReport::min_sqnr_db() const {
    double m = std::numeric_limits<double>::infinity();
    for (const auto& o : outputs) m = std::min(m, o.sqnr_db);
    return m;
}

int64_t ParityReport::nonfinite() const {
    int64_t n = 0;
    for (const auto& o : outputs) n += o.nan + o.inf;
    return n;
}

const char* sqnr_reading(double db) {
    return db >= 30   ? "close"
           : db >= 15 ? "a visible error"
           : db >= 5  ? "a large error"
                      : "the output is lost";
}

std::string ParityReport::verdict() const {
    if (outputs.empty()) return "nothing to compare";
    int64_t nan = 0, inf = 0;
    for (const auto& o : outputs) nan += o.nan, inf += o.inf;
    if (nan + inf > 0) {
        std::string s;
        if (nan) s = std::to_string(nan) + " NaN value" + (nan > 1 ? "s" : "");
        if (inf)
            s += (s.empty() ? "" : " and ") + std::to_string(inf) + " Inf value" +
                 (inf > 1 ? "s" : "");
        return s + " in the outputs";
    }
    if (bit_identical()) return "bit-identical";
    if (approximate) {
        double db = min_sqnr_db();
        if (std::isinf(db)) return "allclose"; // equal values (a -0 for a +0)
        char buf[64];
        std::snprintf(buf, sizeof buf, "SQNR %.1f dB: ", db);
        return buf + std::string(sqnr_reading(db));
    }
    return allclose() ? "allclose" : "NOT allclose";
}

std::string ParityReport::str() const {
    std::string s;
    char buf[256];
    for (const auto& o : outputs) {
        if (!o.comparable) {
            std::snprintf(buf, sizeof buf, "  %-12s %s vs %s: shapes or dtypes differ\n",
                          o.name.c_str(), o.type_a.c_str(), o.type_b.c_str());
        } else {
            if (approximate)
                std::snprintf(buf, sizeof buf,
                              "  %-12s %-18s max|diff| %.3g  max rel %.3g  SQNR %.2f dB\n",
                              o.name.c_str(), o.type_a.c_str(), o.max_abs, o.max_rel, o.sqnr_db);
            else
                std::snprintf(
                    buf, sizeof buf,
                    "  %-12s %-18s max|diff| %.3g  max rel %.3g  allclose %s  bit-identical %s\n",
                    o.name.c_str(), o.type_a.c_str(), o.max_abs, o.max_rel,
                    o.allclose ? "yes" : "NO", o.bit_identical ? "yes" : "no");
            if (o.nan + o.inf > 0) {
                s += buf;
                std::snprintf(buf, sizeof buf, "  %-12s %lld NaN, %lld Inf values\n", "",
                              static_cast<long long>(o.nan), static_cast<long long>(o.inf));
            }
        }
        s += buf;
    }
    s += "  verdict: " + verdict() + "\n";
    return s;
}

namespace {
void add_outputs(ParityReport& r, const std::vector<Value>& a, const std::vector<Value>& b,
                 const std::vector<std::string>& names, const Tolerance& tol) {
    for (size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
        std::string name =
            k < names.size() && !names[k].empty() ? names[k] : "output " + std::to_string(k);
        if (k >= a.size() || k >= b.size() || !a[k].is_tensor() || !b[k].is_tensor()) {
            TensorParity p;
            p.name = name;
            p.comparable = p.allclose = p.bit_identical = false;
            p.type_a = k < a.size() ? a[k].describe() : "missing";
            p.type_b = k < b.size() ? b[k].describe() : "missing";
            r.outputs.push_back(p);
            continue;
        }
        r.outputs.push_back(compare_tensors(name, *a[k].tensor, *b[k].tensor, tol));
    }
}
} // namespace

ParityReport compare_runs(const RunResult& a, const RunResult& b, const Tolerance& tol) {
    ParityReport r;
    add_outputs(r, a.outputs, b.outputs, a.output_names, tol);
    for (const auto& [name, va] : a.values) {
        auto it = b.values.find(name);
        if (it == b.values.end() || !va.is_tensor() || !it->second.is_tensor()) continue;
        r.nodes.push_back(compare_tensors(name, *va.tensor, *it->second.tensor, tol));
    }
    return r;
}

ParityReport compare_outputs(const RunResult& a, const RunResult& b, const Tolerance& tol) {
    ParityReport r;
    add_outputs(r, a.outputs, b.outputs, a.output_names, tol);
    return r;
}

ParityReport compare_with_reference(const RunResult& run, const std::vector<NamedTensor>& reference,
                                    const Tolerance& tol) {
    ParityReport r;
    std::vector<Value> ref;
    for (const auto& t : reference) ref.push_back(Value::of(Tensor::from_data(t.tensor)));
    add_outputs(r, run.outputs, ref, run.output_names, tol);
    return r;
}

} // namespace pt2lab
