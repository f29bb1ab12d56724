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
#include "exec/warm_up.h"

using namespace pt2lab;

namespace {

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
__attribute__((noinline)) Tensor run_im2col(const Tensor& x, const Tensor& w, const Tensor& b,
                                            const ConvParams& p) {
    return conv2d_im2col(x, w, &b, p).take();
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
    int64_t stride, pad, groups;
    int naive_reps, fast_reps; // naive_reps 0: the reference runs once, for the check, untimed
};

} // namespace

int main(int argc, char** argv) {
    // --warm-up: run the kernel warm-up graph first (exec/warm_up.h), as the page
    // does after its first frame; "fast 1st ms" then shows what it changes.
    if (argc > 1 && std::string(argv[1]) == "--warm-up") {
        auto t0 = std::chrono::steady_clock::now();
        if (!warm_up_kernels().ok()) return 1;
        std::printf("kernel warm-up: %.1f ms\n",
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
    }
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
    // fast: what conv2d_fast picks (path: winograd, im2col or depthwise); im2col ms:
    // the im2col + GEMM path on the same call, timed alternately with it, when
    // the fast path picked Winograd. GF/s counts the direct conv's multiply-adds.
    std::printf("%-34s %8s %10s %10s %12s %10s %10s %10s %10s %12s\n", "case", "MFLOP", "naive ms",
                "naive GF/s", "fast 1st ms", "fast ms", "fast GF/s", "path", "im2col ms",
                "max|diff|");
    // The lesson conv, then the distinct conv shapes of torchvision ResNet-18 and
    // MobileNet v2 at 224 x 224 (the whole-model benchmark's models, tools/onnx_models.py).
    const Case cases[] = {
        {"lesson conv 2x3x16x16 -> 8, 3x3", {2, 3, 16, 16}, {8, 3, 3, 3}, 1, 1, 1, 50, 200},
        {"resnet conv 1x64x56x56 -> 64, 3x3", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1, 2, 20},
        {"r18 conv1 3@224 -> 64, 7x7 s2", {1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3, 1, 0, 10},
        {"r18 128@28 -> 128, 3x3", {1, 128, 28, 28}, {128, 128, 3, 3}, 1, 1, 1, 0, 10},
        {"r18 256@14 -> 256, 3x3", {1, 256, 14, 14}, {256, 256, 3, 3}, 1, 1, 1, 0, 10},
        {"r18 512@7 -> 512, 3x3", {1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, 1, 0, 10},
        {"r18 256@14 -> 512, 3x3 s2", {1, 256, 14, 14}, {512, 256, 3, 3}, 2, 1, 1, 0, 10},
        {"mv2 3@224 -> 32, 3x3 s2", {1, 3, 224, 224}, {32, 3, 3, 3}, 2, 1, 1, 0, 10},
        {"mv2 dw 384@14, 3x3", {1, 384, 14, 14}, {384, 1, 3, 3}, 1, 1, 384, 0, 20},
        {"mv2 dw 96@112, 3x3 s2", {1, 96, 112, 112}, {96, 1, 3, 3}, 2, 1, 96, 0, 20},
        {"mv2 dw 960@7, 3x3", {1, 960, 7, 7}, {960, 1, 3, 3}, 1, 1, 960, 0, 20},
        {"mv2 dw 144@56, 3x3", {1, 144, 56, 56}, {144, 1, 3, 3}, 1, 1, 144, 0, 20},
        {"mv2 pw 96@14 -> 576", {1, 96, 14, 14}, {576, 96, 1, 1}, 1, 0, 1, 0, 20},
        {"mv2 pw 160@7 -> 960", {1, 160, 7, 7}, {960, 160, 1, 1}, 1, 0, 1, 0, 20},
        {"mv2 pw 24@56 -> 144", {1, 24, 56, 56}, {144, 24, 1, 1}, 1, 0, 1, 0, 20},
        {"mv2 pw 16@112 -> 96", {1, 16, 112, 112}, {96, 16, 1, 1}, 1, 0, 1, 0, 20},
        {"mv2 pw 576@14 -> 96", {1, 576, 14, 14}, {96, 576, 1, 1}, 1, 0, 1, 0, 20},
    };
    for (const Case& c : cases) {
        Tensor x = Tensor::seeded_normal(c.x, 1), w = Tensor::seeded_normal(c.w, 2),
               b = Tensor::seeded_normal({c.w[0]}, 3);
        ConvParams p;
        p.stride[0] = p.stride[1] = c.stride;
        p.padding[0] = p.padding[1] = c.pad;
        p.groups = c.groups;
        auto shape = conv2d_output_shape(x, w, &b, p);
        if (!shape.ok()) return 1;
        const auto& y = shape.value();
        double flop =
            2.0 * double(y[0] * y[1] * y[2] * y[3]) * double(w.sizes[1] * w.sizes[2] * w.sizes[3]);
        Tensor ref, fast;
        double naive = 0.0;
        if (c.naive_reps)
            naive = time_calls([&] { ref = run_reference(x, w, b, p); }, 1, c.naive_reps).best;
        else
            ref = run_reference(x, w, b, p);
        const bool winograd = conv2d_winograd_suits(x, w, p);
        const char* path = winograd                            ? "winograd"
                           : c.groups == c.x[1] && c.w[1] == 1 ? "depthwise"
                                                               : "im2col";
        Timing fast_t, im2col_t;
        for (int r = 0; r < 3 + c.fast_reps; ++r) { // alternately, so both see the same load
            Timing one = time_calls([&] { fast = run_fast(x, w, b, p); }, 0, 1);
            if (r == 0) fast_t.first = one.first;
            if (r >= 3) fast_t.best = std::min(fast_t.best, one.best);
            if (!winograd) continue;
            one = time_calls([&] { run_im2col(x, w, b, p); }, 0, 1);
            if (r >= 3) im2col_t.best = std::min(im2col_t.best, one.best);
        }
        double fastms = fast_t.best;
        double diff = 0.0;
        for (int64_t k = 0; k < ref.numel(); ++k)
            diff = std::max(diff, double(std::fabs(ref.f32()[k] - fast.f32()[k])));
        char im2col_ms[32] = "-";
        if (winograd) std::snprintf(im2col_ms, sizeof im2col_ms, "%.3f", im2col_t.best);
        std::printf("%-34s %8.1f %10.3f %10.2f %12.3f %10.3f %10.2f %10s %10s %12.2e\n", c.name,
                    flop / 1e6, naive, naive > 0 ? flop / naive / 1e6 : 0.0, fast_t.first, fastms,
                    flop / fastms / 1e6, path, im2col_ms, diff);
        if (diff > 1e-3) {
            std::printf("fast and reference paths disagree\n");
            return 1;
        }
    }
    return 0;
}
