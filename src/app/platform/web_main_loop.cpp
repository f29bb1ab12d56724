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
std::function<bool()>& between_fn() {
    static std::function<bool()> fn;
    return fn;
}
} // namespace

// One task between frames; true when it wants another.
extern "C" EMSCRIPTEN_KEEPALIVE int pt2lab_between_frames() {
    return between_fn() && between_fn()() ? 1 : 0;
}

// A message posted to one's own MessageChannel is an ordinary task, queued behind the
// input and the frame that are due (setTimeout(0) would be clamped to 4 ms after a few).
EM_JS(void, js_wake_between_frames, (), {
    var b = Module.pt2labBetween;
    if (!b) {
        b = Module.pt2labBetween = {channel : new MessageChannel(), armed : false};
        b.channel.port1.onmessage = function() {
            b.armed = false;
            if (Module._pt2lab_between_frames()) {
                b.armed = true;
                b.channel.port2.postMessage(0);
            }
        };
    }
    if (!b.armed) {
        b.armed = true;
        b.channel.port2.postMessage(0);
    }
});

void run_main_loop(std::function<void()> frame) {
    frame_fn() = std::move(frame);
    emscripten_set_main_loop(tick, 0, true);
}

void set_between_frames(std::function<bool()> task) {
    between_fn() = std::move(task);
}

void wake_between_frames() {
    js_wake_between_frames();
}

} // namespace pt2lab::app::platform
