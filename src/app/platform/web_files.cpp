// Files in the browser: what the loader fetched before main(), the file
// picker, drag and drop, and fetches of the site's own assets. Bytes arrive
// from JS (web/bridge.js) through pt2lab_file_arrived and are never uploaded.
#include <emscripten.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "platform/platform.h"

namespace {
std::vector<pt2lab::app::platform::OpenedFile>& arrived() {
    static std::vector<pt2lab::app::platform::OpenedFile> files;
    return files;
}
// Buffers pt2lab_file_buffer gave JS to fill, until pt2lab_file_arrived takes them.
std::vector<std::vector<uint8_t>>& buffers() {
    static std::vector<std::vector<uint8_t>> b;
    return b;
}
} // namespace

// Called by web/bridge.js: a buffer for a file of `size` bytes, which JS fills and
// pt2lab_file_arrived takes without a copy (a copy would hold a 47 MB file twice,
// and the wasm memory never shrinks).
extern "C" EMSCRIPTEN_KEEPALIVE uint8_t* pt2lab_file_buffer(int size) {
    buffers().emplace_back(static_cast<size_t>(size > 0 ? size : 0));
    return buffers().back().data();
}

// Called by web/bridge.js: `data` (or null) is taken over. It is a buffer from
// pt2lab_file_buffer, or (a bridge.js older than this file) one from malloc, copied.
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_file_arrived(const char* name, uint8_t* data, int size,
                                                         const char* error) {
    pt2lab::app::platform::OpenedFile f;
    f.name = name ? name : "";
    auto& b = buffers();
    auto it = std::find_if(b.begin(), b.end(), [&](const auto& v) { return v.data() == data; });
    if (data && it != b.end()) {
        it->resize(static_cast<size_t>(size > 0 ? size : 0));
        f.bytes = std::move(*it);
        b.erase(it);
    } else {
        if (data && size > 0) f.bytes.assign(data, data + size);
        std::free(data);
    }
    f.error = error ? error : "";
    arrived().push_back(std::move(f));
}

// Called by web/bridge.js: a buffer from pt2lab_file_buffer whose read was cancelled.
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_file_release(uint8_t* data) {
    auto& b = buffers();
    b.erase(std::remove_if(b.begin(), b.end(), [&](const auto& v) { return v.data() == data; }),
            b.end());
}

EM_JS(char*, js_file_reads, (), {
    var s = window.pt2lab && window.pt2lab.reads.length ? window.pt2lab.readsJson() : "";
    if (!s) return 0;
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(void, js_cancel_file_reads, (), { window.pt2lab.cancelReads(); });

EM_JS(int, js_preloaded_size, (const char* name), {
    var f = window.pt2lab && window.pt2lab.preloaded[UTF8ToString(name)];
    return f ? f.length : -1;
});
EM_JS(void, js_preloaded_copy, (const char* name, uint8_t* dst),
      { HEAPU8.set(window.pt2lab.preloaded[UTF8ToString(name)], dst); });
EM_JS(char*, js_start_file, (), {
    var s = (window.pt2lab && window.pt2lab.startFile) || "";
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});
EM_JS(void, js_open_picker, (), { window.pt2lab.openPicker(); });
EM_JS(void, js_fetch_file, (const char* url, const char* name),
      { window.pt2lab.fetchFile(UTF8ToString(url), UTF8ToString(name)); });

namespace pt2lab::app::platform {

std::vector<uint8_t> preloaded(const std::string& name) {
    int n = js_preloaded_size(name.c_str());
    if (n <= 0) return {};
    std::vector<uint8_t> bytes(static_cast<size_t>(n));
    js_preloaded_copy(name.c_str(), bytes.data());
    return bytes;
}

std::string start_file() {
    char* p = js_start_file();
    std::string s = p;
    std::free(p);
    return s;
}

void open_file_picker() {
    js_open_picker();
}

void fetch_file(const std::string& url, const std::string& name) {
    js_fetch_file(url.c_str(), name.c_str());
}

std::vector<FileRead> file_reads() {
    char* p = js_file_reads();
    if (!p) return {};
    std::vector<FileRead> out;
    nlohmann::json j = nlohmann::json::parse(p, nullptr, false);
    std::free(p);
    if (j.is_array())
        for (const auto& r : j)
            if (r.is_object())
                out.push_back({r.value("name", std::string()), r.value("done", uint64_t{0}),
                               r.value("total", uint64_t{0})});
    return out;
}

void cancel_file_reads() {
    js_cancel_file_reads();
}

std::vector<OpenedFile> take_opened() {
    std::vector<OpenedFile> out;
    out.swap(arrived());
    return out;
}

} // namespace pt2lab::app::platform
