// Mouse wheel and trackpad pinch, taken on the canvas: ImGui's GLFW backend
// listens on the document, where Chromium makes wheel listeners passive.
#include <emscripten/html5.h>
#include <imgui.h>

#include "platform/platform.h"

namespace pt2lab::app::platform {
namespace {

EM_BOOL on_wheel(int, const EmscriptenWheelEvent* ev, void*) {
    // As the backend does: 100 pixels, 3 lines or 1/80 page make one wheel step.
    float step = ev->deltaMode == DOM_DELTA_PIXEL  ? 1.0f / 100.0f
                 : ev->deltaMode == DOM_DELTA_LINE ? 1.0f / 3.0f
                                                   : 80.0f;
    // A pinch arrives as a wheel with ctrlKey set: finer steps, same zoom direction.
    if (ev->mouse.ctrlKey) step *= 4.0f;
    ImGui::GetIO().AddMouseWheelEvent(static_cast<float>(-ev->deltaX) * step,
                                      static_cast<float>(-ev->deltaY) * step);
    return EM_TRUE; // preventDefault: neither scroll nor zoom the page
}

} // namespace

void install_wheel_input() {
    emscripten_set_wheel_callback(EMSCRIPTEN_EVENT_TARGET_DOCUMENT, nullptr, false, nullptr);
    emscripten_set_wheel_callback("#canvas", nullptr, false, on_wheel);
}

} // namespace pt2lab::app::platform
