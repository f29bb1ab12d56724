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
typedef int32_t i32x4 __attribute__((vector_size(16), aligned(4)));

// |v| by clearing the sign bit: one instruction. It differs from `v < 0 ? -v : v` only
// at -0 (+0 here), which no figure below can tell apart (0 * 0, 0 > t, max with +0).
inline f64x2 abs2(f64x2 v) {
    const i64x2 mask = {INT64_MAX, INT64_MAX};
    return (f64x2)((i64x2)v & mask);
}
inline f32x4 abs4(f32x4 v) {
    const i32x4 mask = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
    return (f32x4)((i32x4)v & mask);
}

// The lanes of sums_f32: two pairs of finite values at a time, in double. `kClose`:
// whether the allclose test still needs looking at (once one value fails it, it fails).
struct Lanes {
    f64x2 signal = {0.0, 0.0}, noise = {0.0, 0.0}, max_abs = {0.0, 0.0};
    f32x4 range = {0.0f, 0.0f, 0.0f, 0.0f}; // max |y|: exact in float, widened at the end
    i64x2 bad = {0, 0};
    f64x2 atol, rtol;

    template <bool kClose> void pair(f64x2 x, f64x2 y) {
        const f64x2 d = abs2(x - y);
        max_abs = d > max_abs ? d : max_abs;
        if (kClose) bad |= d > atol + rtol * abs2(y);
        signal += y * y;
        noise += d * d;
    }
    // Four values of each, all finite: values 0 and 2 go to lane 0, 1 and 3 to lane 1.
    template <bool kClose> void four(f32x4 x, f32x4 y) {
        range = abs4(y) > range ? abs4(y) : range;
        pair<kClose>(__builtin_convertvector(__builtin_shufflevector(x, x, 0, 1), f64x2),
                     __builtin_convertvector(__builtin_shufflevector(y, y, 0, 1), f64x2));
        pair<kClose>(__builtin_convertvector(__builtin_shufflevector(x, x, 2, 3), f64x2),
                     __builtin_convertvector(__builtin_shufflevector(y, y, 2, 3), f64x2));
    }
    bool failed() const { return (bad[0] | bad[1]) != 0; }
};

// Sums of two float32 tensors of n values: four at a time where all eight are finite
// (nearly always), in double two lanes at a time; the rest one at a time. The per-layer
// table of a converted MobileNet v2 compares ten million values a Run, which took 63 ms
// one double at a time in WebAssembly. The sums are taken in lanes, so their last bits
// differ from an element-order sum; every figure is the same to 1e-12. Which values go to
// which lane, and in what order, is fixed (the table must not change from one build to
// the next): a group of four goes to the lanes when its eight values are finite, else one
// value at a time to the scalar sums. Groups are checked for finite values a block at a
// time (a NaN or Inf anywhere in the block sends it through the group-by-group check),
// and once a value fails allclose the rest skip that test: the same figures, fewer
// instructions.
Sums sums_f32(const float* a, const float* b, int64_t n, const Tolerance& tol) {
    Sums s;
    Lanes l;
    l.atol = f64x2{tol.atol, tol.atol};
    l.rtol = f64x2{tol.rtol, tol.rtol};
    constexpr int64_t kBlock = 64; // values of each tensor checked finite at once
    int64_t k = 0;
    while (k + 4 <= n) {
        const int64_t end = k + std::min(kBlock, (n - k) / 4 * 4);
        f32x4 nonfinite = {0.0f, 0.0f, 0.0f, 0.0f}; // x - x: 0 when finite, NaN for NaN and Inf
        for (int64_t j = k; j < end; j += 4) {
            const f32x4 x = load4(a + j), y = load4(b + j);
            nonfinite += (x - x) + (y - y);
        }
        const auto fin = nonfinite == nonfinite;
        if (fin[0] & fin[1] & fin[2] & fin[3]) {
            if (l.failed())
                for (int64_t j = k; j < end; j += 4) l.four<false>(load4(a + j), load4(b + j));
            else
                for (int64_t j = k; j < end; j += 4) l.four<true>(load4(a + j), load4(b + j));
        } else {
            for (int64_t j = k; j < end; j += 4) {
                const f32x4 x = load4(a + j), y = load4(b + j);
                const f32x4 fx = x - x, fy = y - y;
                const auto f = (fx == fx) & (fy == fy);
                if (f[0] & f[1] & f[2] & f[3])
                    l.four<true>(x, y);
                else
                    for (int64_t i = j; i < j + 4; ++i) s.add(a[i], b[i], tol);
            }
        }
        k = end;
    }
    for (; k < n; ++k) s.add(a[k], b[k], tol);
    s.signal += l.signal[0] + l.signal[1];
    s.noise += l.noise[0] + l.noise[1];
    s.range = std::max(
        {s.range, double(l.range[0]), double(l.range[1]), double(l.range[2]), double(l.range[3])});
    s.max_abs = std::max({s.max_abs, l.max_abs[0], l.max_abs[1]});
    s.allclose = s.allclose && !l.failed();
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
