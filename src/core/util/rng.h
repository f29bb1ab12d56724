// pt2lab's own seeded generator: the same numbers on every machine and in
// both builds (integer arithmetic only, then one float conversion).
//   state: SplitMix64; uniform(): top 24 bits / 2^24 in [0, 1);
//   normal(): sum of 12 uniforms minus 6 (Irwin-Hall; mean 0, variance 1),
//   float32 additions in a fixed order, so no libm call can differ by build.
#pragma once

#include <cstdint>

namespace pt2lab {

class SeededRng {
public:
    explicit SeededRng(uint64_t seed) : state_(seed) {}
    uint64_t next_u64() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // [0, 1), multiples of 2^-24
    float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
    float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
    float normal() {
        float s = 0.0f;
        for (int k = 0; k < 12; ++k) s += uniform();
        return s - 6.0f;
    }

private:
    uint64_t state_;
};

} // namespace pt2lab
