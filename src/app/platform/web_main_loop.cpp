// The web main loop, hidden here: the browser calls the frame function once
// per display refresh (requestAnimationFrame); main() never returns.
#include <emscripten.h>

#include "platform/platform.h"

namespace pt2lab::app::platform {
namespace {
std::function<void()>& frame_fn() {
    static std::function<void()> fn;
    return fn;
}
void tick() {
    frame_fn()();
}
} // namespace

void run_main_loop(std::function<void()> frame) {
    frame_fn() = std::move(frame);
    emscripten_set_main_loop(tick, 0, true);
}

} // namespace pt2lab::app::platform
