// The lesson's text view: the current step as real HTML beside the canvas
// (web/text_view.js draws it), so screen readers, find and copy see it; its
// buttons and radio group come back here as commands the app performs.
#include <emscripten.h>

#include "platform/platform.h"

EM_JS(void, js_set_text_view, (const char* json),
      { window.pt2lab.textView.set(UTF8ToString(json)); });
EM_JS(void, js_toggle_text_view, (), { window.pt2lab.textView.toggle(); });

namespace {
std::vector<pt2lab::app::platform::TextViewCommand>& commands() {
    static std::vector<pt2lab::app::platform::TextViewCommand> c;
    return c;
}
} // namespace

// Called by web/text_view.js: kind 0 the step's button, 1 go to step `number`,
// 2 answer option `number`, 3 open the next lesson (on a lesson's last step).
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_text_view_command(int kind, int number) {
    using K = pt2lab::app::platform::TextViewCommand::Kind;
    if (kind < 0 || kind > 3) return;
    K k = kind == 0 ? K::Perform : kind == 1 ? K::Go : kind == 2 ? K::Answer : K::NextLesson;
    commands().push_back({k, number});
}

namespace pt2lab::app::platform {

void set_text_view(const std::string& json) {
    js_set_text_view(json.c_str());
}

void toggle_text_view() {
    js_toggle_text_view();
}

std::vector<TextViewCommand> take_text_view_commands() {
    std::vector<TextViewCommand> out;
    out.swap(commands());
    return out;
}

} // namespace pt2lab::app::platform
