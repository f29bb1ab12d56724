// pt2lab's page: a WebGL2 window, Dear ImGui (GLFW + OpenGL3 backends), the
// App, one frame per refresh while something happens (input, a file, an
// animation, an action in flight); idle tabs cost nothing.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>

#include "app.h"
#include "exec/warm_up.h"
#include "platform/platform.h"
#include "ui/frame.h"
#include "ui/theme.h"
#include "workspace/workspace.h"

using namespace pt2lab::app;

namespace {

// A frame whose build took less (ms) is built again when the job it began ended in it.
constexpr double kRebuildMs = 8.0;

// Whether the input waiting for the next frame would change what it shows: anything
// but a key's release. The release of the key that began a job (R for Run) would
// otherwise draw a frame at once, and a headless frame holds the main thread ~40 ms.
bool input_shows() {
    for (const ImGuiInputEvent& e : ImGui::GetCurrentContext()->InputEventsQueue)
        if (e.Type != ImGuiInputEventType_Key || e.Key.Down) return true;
    return false;
}

} // namespace

int main() {
    double t_main = platform::now_seconds();
    if (!glfwInit()) {
        platform::fatal("GLFW could not start.");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    platform::Display display;
    GLFWwindow* window = glfwCreateWindow(1280, 800, "pt2lab", nullptr, nullptr);
    if (!window) {
        platform::fatal(
            "This page needs WebGL2, and the browser could not create a WebGL2 context.");
        return 1;
    }
    glfwMakeContextCurrent(window);
    platform::poll_display(display);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr; // the page keeps its layout in localStorage, not a file
    // Tab, the arrows, Space and Enter move and press the focused control
    // (ui/keyboard.cpp keeps Tab inside the left panel and hands it to the HTML).
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 300 es");
    platform::install_wheel_input();
    platform::install_text_input();
    if (!ui::load_fonts_and_style(display.dpr)) {
        platform::fatal("The fonts did not load (fonts/ui.otf, fonts/mono.ttf).");
        return 1;
    }

    double t_fonts = platform::now_seconds();
    static App app;
    app.set_scene_metrics(ui::scene_metrics());
    platform::set_state_provider([] { return app.state_json(); });
    platform::set_bench_provider([] { return app.bench_json(); });
    std::string start = platform::start_file();
    std::vector<uint8_t> first = platform::preloaded(start);
    // Idle after the first frame, the page warms V8 up (exec/warm_up.h): the kernels a
    // model's first run needs, then the loader, by opening the first file again
    // (a lesson graph, tens of kB) and dropping it. Measured under node on the page's
    // core: the first open of a 10k-node graph took 1140 ms cold and 409 ms after 30
    // opens of the 23-node resnet_style.pt2 (steady: 347-385 ms), as the loader's code
    // had been optimized by then (docs/BENCHMARKS.md, "The first open").
    struct {
        int kernels_left = pt2lab::kWarmUpRuns;
        int opens_left = 30;
        std::vector<uint8_t> file;
        std::string name;
        // The open under way, stepped like any open (a course may start on a big graph).
        std::shared_ptr<pt2lab::Opening> opening;
        double ms = 0;
    } warm;
    warm.file = first;
    warm.name = start;
    if (!first.empty()) app.open(std::move(first), start);
    app.ui().t_main = t_main;
    app.ui().t_fonts = t_fonts;
    app.ui().t_opened = platform::now_seconds();

    int frames_left = 3; // frames to draw before going idle
    bool canvas_focused = platform::canvas_focused();
    struct {
        double last_drawn = 0;    // when the last frame was drawn
        bool was_opening = false; // a file was being read or opened at the last call
    } pace;
    platform::run_main_loop([display, frames_left, warm, canvas_focused, pace]() mutable {
        double t_loop = platform::now_seconds();
        if (platform::poll_display(display)) {
            if (ui::fonts().scale != display.dpr) {
                ui::load_fonts_and_style(display.dpr);
                ImGui_ImplOpenGL3_DestroyFontsTexture();
                ImGui_ImplOpenGL3_CreateFontsTexture();
                app.set_scene_metrics(ui::scene_metrics());
            }
            frames_left = 3;
        }
        if (app.take_files()) frames_left = 3;
        // A file read or opening that began since the last frame (the file input's
        // change, a drop) is like a job a key began: its first progress frame comes
        // after kJobFirstFrameSeconds, and most opens are drawn done by then. A frame
        // drawn holds a headless main thread ~40 ms, which the browser's read of the
        // file and the open's tasks would wait for.
        if (const bool opening = app.opening_file(); opening != pace.was_opening) {
            pace.was_opening = opening;
            if (opening && app.ui().frames > 0)
                pace.last_drawn = t_loop + App::kJobFirstFrameSeconds - app.job_frame_seconds();
        }
        // Characters met outside the font subset: fetch their pages; once there, the
        // atlas is built again with those characters (ui/theme.h add_font_pages).
        app.fetch_glyph_pages();
        if (auto pages = app.take_font_pages(); !pages.empty() || app.glyphs().atlas_behind()) {
            ui::add_font_pages(std::move(pages));
            if (app.glyphs().atlas_behind()) {
                ui::set_extra_glyphs(app.glyphs().atlas_extra());
                ui::load_fonts_and_style(ui::fonts().scale);
                ImGui_ImplOpenGL3_DestroyFontsTexture();
                ImGui_ImplOpenGL3_CreateFontsTexture();
                app.set_scene_metrics(ui::scene_metrics());
                frames_left = 3;
            }
        }
        // The text view's buttons and radio group drive the same lesson.
        for (const platform::TextViewCommand& c : platform::take_text_view_commands()) {
            const pt2lab::LessonRunner* r = app.lesson();
            if (!r) continue;
            switch (c.kind) {
            case platform::TextViewCommand::Kind::Perform:
                if (!r->current().button.empty() && !r->performed()) app.lesson_perform();
                break;
            case platform::TextViewCommand::Kind::Go: app.lesson_go(c.number); break;
            case platform::TextViewCommand::Kind::Answer: app.lesson_answer(c.number); break;
            case platform::TextViewCommand::Kind::NextLesson:
                if (const pt2lab::Lesson* next = app.next_lesson()) app.open_lesson(next->id, 1);
                break;
            }
            frames_left = 3;
        }
        // Tab into the canvas from the HTML: its first (or last) control takes focus;
        // focus coming or going redraws the focus ring.
        if (int from = platform::take_focus_entry()) app.ui().focus_request = from;
        if (app.ui().focus_request != 0) frames_left = 3;
        if (bool f = platform::canvas_focused(); f != canvas_focused) {
            canvas_focused = f;
            frames_left = 3;
        }
        if (ImGui::GetCurrentContext()->InputEventsQueue.Size > 0 || app.animating() ||
            app.ui().wants_frames)
            frames_left = 3;
        // The benchmark mode (?bench=1) draws what the page draws, no more: forcing a
        // frame on every display refresh made it measure a page that is not the user's
        // (a headless SwiftShader frame holds the main thread ~35 ms after its
        // callback, so work posted between frames waited for it: a Run of MobileNet
        // v3-small took 136 ms from the key, ~40 of them computing).
        // An action in flight advances a slice per frame (App::end_frame), and the
        // requests waiting behind it start there: frames keep coming until all is done.
        if (!app.idle()) frames_left = 3;
        // A job that ended between frames (App::work_between_frames) is drawn now.
        const bool ended_between = app.take_changed_between_frames();
        if (ended_between) frames_left = 3;
        if (frames_left == 0 && app.ui().frames > 0 &&
            (warm.kernels_left > 0 || warm.opens_left > 0)) {
            // Idle after the first frame: the warm-up, one piece per idle callback so
            // the page stays responsive: a run of the kernels' small graph, until V8
            // has optimized the kernels a model's first run needs; then an open of the
            // first file, until it has optimized the loader.
            double t0 = platform::now_seconds();
            if (warm.kernels_left > 0) {
                pt2lab::Status s = pt2lab::warm_up_kernels(1);
                warm.kernels_left = s.ok() ? warm.kernels_left - 1 : 0;
                if (!s.ok())
                    std::fprintf(stderr, "pt2lab: kernel warm-up: %s\n", s.error().str().c_str());
            } else {
                if (!warm.opening)
                    warm.opening = std::make_shared<pt2lab::Opening>(warm.file, warm.name);
                if (warm.opening->step(App::kTaskSeconds)) {
                    const bool ok = warm.opening->finish().ok();
                    warm.opening.reset();
                    warm.opens_left = ok ? warm.opens_left - 1 : 0;
                }
            }
            warm.ms += (platform::now_seconds() - t0) * 1000;
            if (warm.kernels_left == 0 && (warm.opens_left == 0 || warm.file.empty())) {
                warm.opens_left = 0;
                warm.file = std::vector<uint8_t>();
                app.ui().warm_up_ms = warm.ms;
            }
        }
        if (frames_left == 0) return;
        // While an action runs and nothing else moves (no input, no animation), a
        // frame every job_frame_seconds() shows its progress; the time between goes to
        // the action (the browser's tasks between frames, App::work_between_frames)
        // rather than to drawing the same page again (a headless 1440x900 frame costs
        // tens of milliseconds of CPU). The page keeps answering: an input draws at once.
        // A file opening is such an action too (before, it drew every display frame:
        // at 10k nodes 20 frames of ~35 ms in headless SwiftShader, most of its 1.5 s).
        // What a job that ended between frames left (an opened file's graph) is drawn
        // at once, even while its weights still arrive or the next request runs.
        if ((app.busy() || app.opening_file()) && !input_shows() && !app.animating() &&
            !ended_between && t_loop - pace.last_drawn < app.job_frame_seconds()) {
            if (app.work_left()) platform::wake_between_frames();
            return;
        }
        --frames_left;
        pace.last_drawn = t_loop;

        double t_build = platform::now_seconds();
        auto build = [] {
            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            ImGuiIO& frame_io = ImGui::GetIO();
            if (frame_io.DeltaTime <= 0) frame_io.DeltaTime = 1e-4f; // built again at once
            ImGui::NewFrame();
            ui::draw_frame(app);
            ImGui::Render();
        };
        build();
        double build_ms = (platform::now_seconds() - t_build) * 1000;
        // What the frame asked for (a key, a button) begins before the frame is drawn.
        // A job that ends within the frame's budget (a lesson graph's run, an edit, a
        // view switch) is drawn by this frame, built again, not by the next one; a job
        // that goes on is not drawn now (its page would be the one before the key):
        // its result or its progress (after kJobFirstFrameSeconds) is. Drawing is what
        // costs: a headless SwiftShader frame holds the main thread ~40 ms after its
        // callback, so the work posted between frames waited behind every frame drawn.
        const bool was_busy = app.busy() || app.opening_file();
        const bool changed = app.end_frame();
        bool draw = true;
        // Built again only where a build is cheap (a big graph's frame takes 15-35 ms:
        // two of them and the job's last piece would make one frame over 50 ms).
        if (changed && !app.busy() && !app.opening_file() && build_ms < kRebuildMs) {
            double t_again = platform::now_seconds();
            build();
            build_ms += (platform::now_seconds() - t_again) * 1000;
        } else if (!was_busy && app.busy() && !app.animating() && app.ui().frames > 0) {
            draw = false;
            pace.last_drawn += App::kJobFirstFrameSeconds - app.job_frame_seconds();
        }
        if (draw) {
            glViewport(0, 0, display.fb_w, display.fb_h);
            glClearColor(0.08f, 0.09f, 0.11f, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        }
        // A request (an action, a view switch) changes what the next frames show.
        if (changed) frames_left = 3;
        // Work left: it goes on in the browser's tasks until the next frame.
        if (app.work_left()) {
            platform::wake_between_frames();
            if (draw) app.note_frame_drawn(platform::now_seconds());
        }
        app.record_frame(build_ms, (platform::now_seconds() - t_loop) * 1000);
        if (++app.ui().frames == 1) {
            app.ui().t_first_frame = platform::now_seconds();
            platform::first_frame_drawn();
        }
    });
    return 0;
}
