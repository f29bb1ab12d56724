// The URL hash (so a reload reopens the same lesson step or graph; hashchange
// events), the URL's options and localStorage (panel sizes, tabs, lesson
// progress), through web/bridge.js.
#include <emscripten.h>

#include <cstdlib>

#include "platform/platform.h"

EM_JS(void, js_set_hash, (const char* hash), { window.pt2lab.setHash(UTF8ToString(hash)); });
EM_JS(char*, js_hash, (int take), {
    var s = take ? window.pt2lab.takeHashChange() : location.hash.substring(1);
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(char*, js_load_setting, (const char* key), {
    var s = window.pt2lab.loadSetting(UTF8ToString(key));
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(char*, js_url_option, (const char* name), {
    var v = window.pt2lab.option(UTF8ToString(name));
    var n = lengthBytesUTF8(v) + 1;
    var p = _malloc(n);
    stringToUTF8(v, p, n);
    return p;
});
EM_JS(void, js_save_setting, (const char* key, const char* value),
      { window.pt2lab.saveSetting(UTF8ToString(key), UTF8ToString(value)); });

namespace pt2lab::app::platform {

void set_url_hash(const std::string& hash) {
    js_set_hash(hash.c_str());
}

namespace {
std::string hash(int take) {
    char* p = js_hash(take);
    std::string s = p;
    std::free(p);
    return s;
}
} // namespace

std::string url_hash() {
    return hash(0);
}

std::string take_hash_change() {
    return hash(1);
}

std::string load_setting(const std::string& key) {
    char* p = js_load_setting(key.c_str());
    std::string s = p;
    std::free(p);
    return s;
}

std::string url_option(const std::string& name) {
    char* p = js_url_option(name.c_str());
    std::string s = p;
    std::free(p);
    return s;
}

void save_setting(const std::string& key, const std::string& value) {
    js_save_setting(key.c_str(), value.c_str());
}

} // namespace pt2lab::app::platform
