// Canvas size and devicePixelRatio for the page: the backing store follows
// CSS size x devicePixelRatio, so text is sharp on HiDPI screens and after resizes.
#include <emscripten.h>
#include <emscripten/html5.h>

#include "platform/platform.h"

// Browser.setCanvasSize sets canvas.width / height and tells GLFW (its resize
// listener updates the window size ImGui reads). glfwSetWindowSize is not
// used: given the screen's size it asks for fullscreen instead of resizing.
EM_JS(void, js_set_canvas_size, (int w, int h), { Module["setCanvasSize"](w, h); });

namespace pt2lab::app::platform {

bool poll_display(Display& d) {
    double w = 0, h = 0;
    emscripten_get_element_css_size("#canvas", &w, &h);
    float dpr = static_cast<float>(emscripten_get_device_pixel_ratio());
    if (dpr <= 0) dpr = 1;
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    if (w == d.css_w && h == d.css_h && dpr == d.dpr) return false;
    d.css_w = w;
    d.css_h = h;
    d.dpr = dpr;
    d.fb_w = static_cast<int>(w * dpr + 0.5);
    d.fb_h = static_cast<int>(h * dpr + 0.5);
    // Mouse positions then come in the same device pixels (emscripten scales
    // them by canvas.width / CSS width).
    js_set_canvas_size(d.fb_w, d.fb_h);
    return true;
}

} // namespace pt2lab::app::platform
