// The lesson's text view: the current step as real HTML text beside the
// canvas (web/text_view.js draws it), so screen readers, find and copy see it.
#include <emscripten.h>

#include "platform/platform.h"

EM_JS(void, js_set_text_view, (const char* json),
      { window.pt2lab.textView.set(UTF8ToString(json)); });
EM_JS(void, js_toggle_text_view, (), { window.pt2lab.textView.toggle(); });

namespace pt2lab::app::platform {

void set_text_view(const std::string& json) {
    js_set_text_view(json.c_str());
}

void toggle_text_view() {
    js_toggle_text_view();
}

} // namespace pt2lab::app::platform
