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
// Buffers of files that arrived before their late ranges, which JS is still writing:
// kept alive here until JS says it stopped (pt2lab_file_late_done), whoever else lets go.
std::vector<std::shared_ptr<const std::vector<uint8_t>>>& filling() {
    static std::vector<std::shared_ptr<const std::vector<uint8_t>>> f;
    return f;
}
std::vector<pt2lab::app::platform::LateReadDone>& late_done() {
    static std::vector<pt2lab::app::platform::LateReadDone> d;
    return d;
}
// Weight records of at least this size are read after the rest of a file.
constexpr uint64_t kLateRecordBytes = 64 * 1024;
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
    // The open begins in the next task, not at the next display frame.
    pt2lab::app::platform::wake_between_frames();
}

// Called by web/bridge.js with the last `size - tail_start` bytes of a file read into
// a buffer from pt2lab_file_buffer: the ranges it may read after the rest, as JSON
// ([[begin, end], ...], malloc'd for JS to free), or null to read it whole.
extern "C" EMSCRIPTEN_KEEPALIVE char* pt2lab_file_late_plan(const uint8_t* data, int size,
                                                            int tail_start) {
    if (!data || size <= 0 || tail_start < 0 || tail_start >= size) return nullptr;
    auto late = pt2lab::zip_late_ranges(data + tail_start, static_cast<size_t>(size - tail_start),
                                        static_cast<uint64_t>(size), kLateRecordBytes);
    if (late.empty()) return nullptr;
    nlohmann::json j = nlohmann::json::array();
    for (const pt2lab::ByteRange& r : late) j.push_back({r.begin, r.end});
    std::string s = j.dump();
    char* p = static_cast<char*>(std::malloc(s.size() + 1));
    if (p) std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

// Called by web/bridge.js: a file whose bytes are in but for its late ranges (JSON from
// pt2lab_file_late_plan), which JS goes on writing into `data` until
// pt2lab_file_late_done.
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_file_arrived_early(const char* name, uint8_t* data,
                                                               int size, const char* late) {
    auto& b = buffers();
    auto it = std::find_if(b.begin(), b.end(), [&](const auto& v) { return v.data() == data; });
    if (!data || it == b.end() || size <= 0 || it->size() != static_cast<size_t>(size)) return;
    pt2lab::app::platform::OpenedFile f;
    f.name = name ? name : "";
    nlohmann::json j = nlohmann::json::parse(late ? late : "", nullptr, false);
    if (j.is_array())
        for (const auto& r : j)
            if (r.is_array() && r.size() == 2 && r[0].is_number_unsigned() &&
                r[1].is_number_unsigned())
                f.late.push_back({r[0].get<uint64_t>(), r[1].get<uint64_t>()});
    f.shared = std::make_shared<const std::vector<uint8_t>>(std::move(*it));
    b.erase(it);
    filling().push_back(f.shared);
    arrived().push_back(std::move(f));
    pt2lab::app::platform::wake_between_frames();
}

// Called by web/bridge.js: JS stopped writing the late ranges of the buffer at `data`:
// all are in (error ""), or the read failed or was cancelled (error says which).
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_file_late_done(const uint8_t* data, const char* error) {
    auto& f = filling();
    f.erase(std::remove_if(f.begin(), f.end(), [&](const auto& v) { return v->data() == data; }),
            f.end());
    late_done().push_back({data, error ? error : ""});
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
EM_JS(void, js_cancel_late_read, (const void* buffer), { window.pt2lab.cancelLateRead(buffer); });

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
                               r.value("total", uint64_t{0}), r.value("late", false),
                               reinterpret_cast<const void*>(
                                   static_cast<uintptr_t>(r.value("buffer", uint64_t{0})))});
    return out;
}

void cancel_file_reads() {
    js_cancel_file_reads();
}

void cancel_late_read(const void* buffer) {
    js_cancel_late_read(buffer);
}

std::vector<LateReadDone> take_late_reads_done() {
    std::vector<LateReadDone> out;
    out.swap(late_done());
    return out;
}

std::vector<OpenedFile> take_opened() {
    std::vector<OpenedFile> out;
    out.swap(arrived());
    return out;
}

} // namespace pt2lab::app::platform
