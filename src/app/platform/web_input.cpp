// Mouse wheel and trackpad pinch, taken on the canvas: ImGui's GLFW backend
// listens on the document, where Chromium makes wheel listeners passive. And
// typed characters, one code point each (an emoji too).
#include <GLFW/glfw3.h>
#include <emscripten.h>
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

// GLFW hands over a keypress's charCode. A character past the Basic Multilingual
// Plane (an emoji, U+1F431) comes whole from web/bridge.js (Chromium's charCode
// is its first UTF-16 half) or, where a browser's charCode is the whole code
// point, from here; a browser that gives its two UTF-16 halves one by one gets
// them joined here (ImGui keeps the first half until the second comes), not
// stored as two surrogates that no font draws and no UTF-8 encodes.
void on_char(GLFWwindow*, unsigned int c) {
    ImGuiIO& io = ImGui::GetIO();
    if (c < 0x10000)
        io.AddInputCharacterUTF16(static_cast<ImWchar16>(c));
    else
        io.AddInputCharacter(c);
}

} // namespace

void install_wheel_input() {
    emscripten_set_wheel_callback(EMSCRIPTEN_EVENT_TARGET_DOCUMENT, nullptr, false, nullptr);
    emscripten_set_wheel_callback("#canvas", nullptr, false, on_wheel);
}

// A whole code point typed, from web/bridge.js: a character past U+FFFF whose
// keypress Chromium gives GLFW as its first UTF-16 half only.
extern "C" EMSCRIPTEN_KEEPALIVE void pt2lab_text_input(unsigned int c) {
    if (ImGui::GetCurrentContext() && c <= IM_UNICODE_CODEPOINT_MAX)
        ImGui::GetIO().AddInputCharacter(c);
}

void install_text_input() {
    glfwSetCharCallback(glfwGetCurrentContext(), on_char);
}

} // namespace pt2lab::app::platform
