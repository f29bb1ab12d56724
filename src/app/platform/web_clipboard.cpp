// The system clipboard from the page: GLFW's clipboard does nothing in the
// browser, so Copy goes through navigator.clipboard (web/bridge.js).
#include <emscripten.h>

#include "platform/platform.h"

EM_JS(void, js_set_clipboard, (const char* text), { window.pt2lab.copy(UTF8ToString(text)); });

namespace pt2lab::app::platform {

void set_clipboard(const std::string& text) {
    js_set_clipboard(text.c_str());
}

} // namespace pt2lab::app::platform
