// The failure path of PT2LAB_CHECK: say where, then stop.
#include "util/check.h"

#include <cstdio>
#include <cstdlib>

namespace pt2lab {

void check_failed(const char* file, int line, const char* condition) {
    std::fprintf(stderr, "pt2lab: internal error at %s:%d: check failed: %s\n", file, line,
                 condition);
    std::fflush(stderr);
    std::abort();
}

} // namespace pt2lab
