// The page's read-only test hook (window.pt2lab.state() parses what
// pt2lab_state_json returns), the loader's first-frame signal and the fatal
// error screen.
#include <emscripten.h>

#include "platform/platform.h"

namespace {
std::function<std::string()>& provider() {
    static std::function<std::string()> fn;
    return fn;
}
std::function<std::string()>& bench_provider() {
    static std::function<std::string()> fn;
    return fn;
}
} // namespace

// The returned text stays valid until the next call.
extern "C" EMSCRIPTEN_KEEPALIVE const char* pt2lab_state_json() {
    static std::string text;
    text = provider() ? provider()() : std::string("{}");
    return text.c_str();
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* pt2lab_bench_json() {
    static std::string text;
    text = bench_provider() ? bench_provider()() : std::string("{}");
    return text.c_str();
}

EM_JS(void, js_first_frame, (), { window.pt2lab.firstFrame(); });
EM_JS(void, js_fatal, (const char* msg), { window.pt2lab.fatal(UTF8ToString(msg)); });
EM_JS(double, js_now, (), { return performance.now() / 1000; });

namespace pt2lab::app::platform {

void set_state_provider(std::function<std::string()> p) {
    provider() = std::move(p);
}

void set_bench_provider(std::function<std::string()> p) {
    bench_provider() = std::move(p);
}

void first_frame_drawn() {
    js_first_frame();
}

void fatal(const std::string& message) {
    js_fatal(message.c_str());
}

double now_seconds() {
    return js_now();
}

} // namespace pt2lab::app::platform
