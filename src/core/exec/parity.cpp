// Output comparison with torch.allclose's rule and summary figures.
#include "exec/parity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pt2lab {

namespace {

// What compare_tensors finds over n elements of a (read by at(k)) against b (bt(k)), each
// value widened to double; the sums run in element order. The figures live in locals
// and two finite values (nearly all) take one branch: the per-layer table of a converted
// MobileNet v2 compares ten million values a Run.
template <class A, class B>
void accumulate(TensorParity& p, const Tolerance& tol, int64_t n, A&& at, B&& bt) {
    double signal = 0.0, noise = 0.0, range = 0.0, max_abs = p.max_abs;
    int64_t nan = 0, inf = 0, nonfinite_new = 0;
    bool allclose = p.allclose;
    for (int64_t k = 0; k < n; ++k) {
        const double x = at(k), y = bt(k);
        if (std::isfinite(x) && std::isfinite(y)) {
            const double d = std::fabs(x - y);
            max_abs = std::max(max_abs, d);
            allclose &= !(d > tol.atol + tol.rtol * std::fabs(y));
            range = std::max(range, std::fabs(y));
            signal += y * y;
            noise += d * d;
            continue;
        }
        nan += std::isnan(x);
        inf += std::isinf(x);
        nonfinite_new += !std::isfinite(x) && std::isfinite(y);
        if (std::isnan(x) || std::isnan(y)) {
            if (!(std::isnan(x) && std::isnan(y))) allclose = false;
            continue;
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
    p.nan += nan;
    p.inf += inf;
    p.nonfinite_new += nonfinite_new;
    p.allclose = allclose;
    p.max_abs = max_abs;
    p.max_rel = max_abs == 0.0 ? 0.0
                : range > 0.0  ? max_abs / range
                               : std::numeric_limits<double>::infinity();
    p.sqnr_db =
        noise == 0.0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(signal / noise);
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
    if (a.dtype == ScalarType::Float) {
        const float *fa = a.f32(), *fb = b.f32();
        accumulate(
            p, tol, a.numel(), [fa](int64_t k) { return fa[k]; },
            [fb](int64_t k) { return fb[k]; });
    } else
        accumulate(
            p, tol, a.numel(), [&](int64_t k) { return a.get(k); },
            [&](int64_t k) { return b.get(k); });
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
