// Freeing big containers a piece at a time (the page frees a replaced 24k-node graph,
// its names and its 7,810 observers over frames: freed at once they held the main
// thread for 40-60 ms natively).
#pragma once

#include <chrono>
#include <vector>

namespace pt2lab {

// Erases `c`'s entries from its front until `deadline` (looked at every 64 entries):
// true once `c` is empty. For maps, sets and unordered maps.
template <class Container>
bool erase_until(Container& c, std::chrono::steady_clock::time_point deadline) {
    while (!c.empty()) {
        for (int k = 0; k < 64 && !c.empty(); ++k) c.erase(c.begin());
        if (!c.empty() && std::chrono::steady_clock::now() >= deadline) return false;
    }
    return true;
}

// The same for a vector, from its back (rows of a table: a run's profile and layers).
template <class T, class A>
bool pop_until(std::vector<T, A>& v, std::chrono::steady_clock::time_point deadline) {
    while (!v.empty()) {
        for (int k = 0; k < 256 && !v.empty(); ++k) v.pop_back();
        if (!v.empty() && std::chrono::steady_clock::now() >= deadline) return false;
    }
    v.shrink_to_fit();
    return true;
}

} // namespace pt2lab
