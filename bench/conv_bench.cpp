// conv2d throughput: the reference direct loop vs the fast path (im2col +
// register-tiled GEMM), one thread. Prints GFLOP/s; it asserts nothing about
// speed (figures go to docs/BENCHMARKS.md), only that both paths agree.
//   native: build/bench/pt2lab_bench        wasm: node build/wasm/bench/pt2lab_bench.js
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "exec/kernels.h"
#include "util/rng.h"

using namespace pt2lab;

namespace {

Tensor random_tensor(std::vector<int64_t> sizes, uint64_t seed) {
    Tensor t = Tensor::empty(ScalarType::Float, std::move(sizes));
    SeededRng rng(seed);
    for (int64_t k = 0; k < t.numel(); ++k) t.f32()[k] = rng.normal();
    return t;
}

// The timed calls sit in their own out-of-line functions, called repeatedly:
// in WebAssembly, V8 starts every function in its baseline compiler (Liftoff)
// and swaps in optimized code between calls, so code inlined into main (which
// runs once) would be measured unoptimized. `first` is the very first call
// (what a page's first run sees), `best` the best call after `warmup` calls.
struct Timing {
    double first = 0.0, best = 1e30;
};
__attribute__((noinline)) Tensor run_reference(const Tensor& x, const Tensor& w, const Tensor& b,
                                               const ConvParams& p) {
    return conv2d_reference(x, w, &b, p).take();
}
__attribute__((noinline)) Tensor run_fast(const Tensor& x, const Tensor& w, const Tensor& b,
                                          const ConvParams& p) {
    return conv2d_fast(x, w, &b, p).take();
}
template <class F> Timing time_calls(F&& f, int warmup, int reps) {
    Timing t;
    for (int r = 0; r < warmup + reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        if (r == 0) t.first = ms;
        if (r >= warmup) t.best = std::min(t.best, ms);
    }
    return t;
}

struct Case {
    const char* name;
    std::vector<int64_t> x, w;
    int64_t pad;
    int naive_reps, fast_reps;
};

} // namespace

int main() {
#if defined(__wasm__)
    const char* where = "WebAssembly (node)";
#else
    const char* where = "native";
#endif
#if defined(__wasm_simd128__)
    const char* simd = "SIMD128";
#elif defined(__AVX2__) && defined(__FMA__)
    const char* simd = "AVX2+FMA";
#elif defined(__SSE2__)
    const char* simd = "SSE2";
#else
    const char* simd = "scalar";
#endif
    std::printf("conv2d, one thread, %s, vector ISA %s\n", where, simd);
    std::printf("%-34s %8s %10s %10s %12s %10s %10s %12s\n", "case", "MFLOP", "naive ms",
                "naive GF/s", "fast 1st ms", "fast ms", "fast GF/s", "max|diff|");
    const Case cases[] = {
        {"lesson conv 2x3x16x16 -> 8, 3x3", {2, 3, 16, 16}, {8, 3, 3, 3}, 1, 50, 200},
        {"resnet conv 1x64x56x56 -> 64, 3x3", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 2, 20},
    };
    for (const Case& c : cases) {
        Tensor x = random_tensor(c.x, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
        ConvParams p;
        p.padding[0] = p.padding[1] = c.pad;
        auto shape = conv2d_output_shape(x, w, &b, p);
        if (!shape.ok()) return 1;
        const auto& y = shape.value();
        double flop =
            2.0 * double(y[0] * y[1] * y[2] * y[3]) * double(w.sizes[1] * w.sizes[2] * w.sizes[3]);
        Tensor ref, fast;
        double naive = time_calls([&] { ref = run_reference(x, w, b, p); }, 1, c.naive_reps).best;
        Timing fast_t = time_calls([&] { fast = run_fast(x, w, b, p); }, 3, c.fast_reps);
        double fastms = fast_t.best;
        double diff = 0.0;
        for (int64_t k = 0; k < ref.numel(); ++k)
            diff = std::max(diff, double(std::fabs(ref.f32()[k] - fast.f32()[k])));
        std::printf("%-34s %8.1f %10.3f %10.2f %12.3f %10.3f %10.2f %12.2e\n", c.name, flop / 1e6,
                    naive, flop / naive / 1e6, fast_t.first, fastms, flop / fastms / 1e6, diff);
        if (diff > 1e-3) {
            std::printf("fast and reference paths disagree\n");
            return 1;
        }
    }
    return 0;
}
