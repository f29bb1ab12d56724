// Keyboard focus between the canvas and the page's HTML, through web/bridge.js
// (which also keeps keys aimed at the HTML away from GLFW).
#include <emscripten.h>

#include "platform/platform.h"

EM_JS(int, js_canvas_focused, (), {
    var f = window.pt2lab && window.pt2lab.canvasFocused;
    return f && f() ? 1 : 0;
});
EM_JS(int, js_take_focus_entry, (), { return window.pt2lab.takeFocusEntry(); });
EM_JS(void, js_focus_page, (int dir), { window.pt2lab.focusOut(dir); });

namespace pt2lab::app::platform {

bool canvas_focused() {
    return js_canvas_focused() != 0;
}

int take_focus_entry() {
    return js_take_focus_entry();
}

void focus_page(int dir) {
    js_focus_page(dir);
}

} // namespace pt2lab::app::platform
