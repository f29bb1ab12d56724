// The URL hash (so a reload reopens the same lesson step or graph; hashchange
// events), the URL's options and localStorage (panel sizes, tabs, lesson
// progress), through web/bridge.js.
#include <emscripten.h>

#include <cstdlib>

#include "platform/platform.h"

EM_JS(void, js_set_hash, (const char* hash, int new_entry),
      { window.pt2lab.setHash(UTF8ToString(hash), !!new_entry); });
// One string from the page, copied onto the WASM heap (the caller frees it):
// 0 the hash as opened, 1 the hash change since the last call, 2 a setting, 3 a URL option.
EM_JS(char*, js_string, (int what, const char* arg), {
    var a = arg ? UTF8ToString(arg) : "";
    var s = what == 0   ? location.hash.substring(1)
            : what == 1 ? window.pt2lab.takeHashChange()
            : what == 2 ? window.pt2lab.loadSetting(a)
                        : window.pt2lab.option(a);
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(void, js_save_setting, (const char* key, const char* value),
      { window.pt2lab.saveSetting(UTF8ToString(key), UTF8ToString(value)); });

namespace pt2lab::app::platform {

namespace {
std::string page_string(int what, const std::string& arg = "") {
    char* p = js_string(what, arg.c_str());
    std::string s = p;
    std::free(p);
    return s;
}
} // namespace

void set_url_hash(const std::string& hash, bool new_entry) {
    js_set_hash(hash.c_str(), new_entry ? 1 : 0);
}

std::string url_hash() {
    return page_string(0);
}

std::string take_hash_change() {
    return page_string(1);
}

std::string load_setting(const std::string& key) {
    return page_string(2, key);
}

std::string url_option(const std::string& name) {
    return page_string(3, name);
}

void save_setting(const std::string& key, const std::string& value) {
    js_save_setting(key.c_str(), value.c_str());
}

} // namespace pt2lab::app::platform
