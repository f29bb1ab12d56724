// The page's language: the browser's preference, and the words of the page's own
// HTML (index.html's controls, the text view) handed to web/bridge.js.
#include <emscripten.h>

#include <cstdlib>

#include "platform/platform.h"

EM_JS(char*, js_browser_language, (), {
    var s = (navigator.languages && navigator.languages[0]) || navigator.language || "";
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(void, js_set_page_language, (const char* lang, const char* words),
      { window.pt2lab.setLanguage(UTF8ToString(lang), JSON.parse(UTF8ToString(words))); });

namespace pt2lab::app::platform {

std::string browser_language() {
    char* p = js_browser_language();
    std::string s = p;
    std::free(p);
    return s;
}

void set_page_language(const std::string& lang, const std::string& words_json) {
    js_set_page_language(lang.c_str(), words_json.c_str());
}

} // namespace pt2lab::app::platform
