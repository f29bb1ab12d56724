// Downloads from the page: the bytes become a Blob that an <a download> link
// saves (web/bridge.js); nothing is uploaded.
#include <emscripten.h>

#include "platform/platform.h"

EM_JS(void, js_download, (const char* name, const uint8_t* data, int n),
      { window.pt2lab.download(UTF8ToString(name), HEAPU8.slice(data, data + n)); });

namespace pt2lab::app::platform {

void download_file(const std::string& name, const std::vector<uint8_t>& bytes) {
    js_download(name.c_str(), bytes.data(), static_cast<int>(bytes.size()));
}

} // namespace pt2lab::app::platform
