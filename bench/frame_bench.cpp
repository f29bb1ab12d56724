// The page's frames natively: the App and its panels on the null platform (as
// tests/app/test_page_smoke.cpp drives them), a file opened as a picked file is,
// then keys pressed as a user presses them, each once the page is idle again.
// Prints per key the wall time, the frames drawn until idle, the longest frame and
// where its time went (drawing the panels, or end_frame: the requests and the job's
// slice) and at which frame; then the longest of the frames after the job (which
// draw its result, a big graph's code written over several of them) and their count. For finding
// the long frames that tools/action_bench.js reports in the browser with perf, natively.
//
//   pt2lab_frame_bench FILE [KEYS] [--size WxH] [--slice S] [--frames-over MS]
//
// KEYS is a string of the page's shortcut letters (default "RQKVR"): R run,
// Q prepare_pt2e, K calibrate, V convert_pt2e, D decompose (inference IR), d core
// ATen (Shift+D), z undo (Ctrl+Z), o open the file again, f the "fast kernels" box
// off (the Run tab's setting; the next R runs the reference kernels).
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app.h"
#include "platform/null_platform.h"
#include "platform/platform.h"
#include "ui/frame.h"
#include "ui/theme.h"

using namespace pt2lab;
using namespace pt2lab::app;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct FrameTime {
    double draw_ms = 0; // NewFrame, the panels, Render
    double end_ms = 0;  // take_files + end_frame (requests, the job's slice)
    double total() const { return draw_ms + end_ms; }
};

struct Page {
    std::unique_ptr<App> app;
    double show_over = -1; // --frames-over MS: print each frame longer than MS
    FrameTime frame() {
        FrameTime t;
        auto t0 = Clock::now();
        app->take_files();
        ImGui::NewFrame();
        ui::draw_frame(*app);
        ImGui::Render();
        t.draw_ms = ms_since(t0);
        // What the job was doing when its piece began (a long frame names it).
        const std::string doing = show_over >= 0 ? app->job_progress().what : std::string();
        auto t1 = Clock::now();
        app->end_frame();
        t.end_ms = ms_since(t1);
        if (show_over >= 0 && t.total() > show_over)
            std::printf("    frame %.1f ms = draw %.1f + end %.1f (%s)\n", t.total(), t.draw_ms,
                        t.end_ms, doing.c_str());
        return t;
    }
};

struct Span {
    int frames = 0;
    FrameTime longest;
    int longest_at = -1;
    FrameTime after; // the longest frame after the page went idle (drawing the result,
                     // and the panels finishing it in pieces: a big graph's code)
    int after_frames = 0;
    double wall_ms = 0;
    void add(const FrameTime& t) {
        if (t.total() > longest.total()) {
            longest = t;
            longest_at = frames;
        }
        ++frames;
    }
};

// Frames until the page is idle (the action and what it posted are done).
Span settle(Page& p, Span s, Clock::time_point t0) {
    for (int n = 0; n < 1000000 && !p.app->idle(); ++n) s.add(p.frame());
    do {
        FrameTime t = p.frame();
        if (t.total() > s.after.total()) s.after = t;
        ++s.after_frames;
    } while (p.app->ui().wants_frames && s.after_frames < 100000);
    s.wall_ms = ms_since(t0);
    return s;
}

Span press(Page& p, ImGuiKey k, ImGuiKey mod) {
    ImGuiIO& io = ImGui::GetIO();
    Span s;
    auto t0 = Clock::now();
    if (mod != ImGuiKey_None) io.AddKeyEvent(mod, true);
    io.AddKeyEvent(k, true);
    s.add(p.frame());
    io.AddKeyEvent(k, false);
    if (mod != ImGuiKey_None) io.AddKeyEvent(mod, false);
    s.add(p.frame());
    return settle(p, s, t0);
}

void print(const char* what, const Span& s) {
    std::printf("  %-22s %9.1f %7d %9.1f %8.1f %8.1f %6d %9.1f %7d\n", what, s.wall_ms, s.frames,
                s.longest.total(), s.longest.draw_ms, s.longest.end_ms, s.longest_at,
                s.after.total(), s.after_frames);
    std::fflush(stdout);
}

int usage() {
    std::fprintf(stderr, "usage: pt2lab_frame_bench FILE [KEYS] [--size WxH] [--slice S] "
                         "[--frames-over MS]\n"
                         "  KEYS: R run, Q prepare, K calibrate, V convert, D decompose, d core "
                         "ATen, z undo, o open again, f fast kernels off (default RQKVR)\n");
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::string file, keys = "RQKVR";
    int w = 1440, h = 900;
    double slice = App::kSliceSeconds;
    double show_over = -1;
    std::vector<std::string> rest;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--size" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%dx%d", &w, &h) != 2) return usage();
        } else if (a == "--slice" && i + 1 < argc) {
            slice = std::atof(argv[++i]);
        } else if (a == "--frames-over" && i + 1 < argc) {
            show_over = std::atof(argv[++i]);
        } else if (a.rfind("--", 0) == 0) {
            return usage();
        } else {
            rest.push_back(a);
        }
    }
    if (rest.empty() || rest.size() > 2) return usage();
    file = rest[0];
    if (rest.size() == 2) keys = rest[1];
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", file.c_str());
        return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    const std::string name = file.substr(file.find_last_of('/') + 1);

    platform::null_platform_reset(PT2LAB_SOURCE_DIR);
    platform::null_platform_map("fonts/ui.otf",
                                "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc");
    platform::null_platform_map(
        "fonts/mono.ttf", "/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf");
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(float(w), float(h));
    io.DeltaTime = 1.0f / 60;
    ui::load_fonts_and_style(1.0f);
    unsigned char* pixels = nullptr;
    int tw = 0, th = 0;
    io.Fonts->GetTexDataAsAlpha8(&pixels, &tw, &th);
    Page p;
    p.show_over = show_over;
    p.app = std::make_unique<App>();
    p.app->set_scene_metrics(ui::scene_metrics());
    p.app->set_slice_seconds(slice);
    for (int i = 0; i < 3; ++i) p.frame();
    std::printf("%s (%zu bytes), %dx%d, slice %.1f ms\n", name.c_str(), bytes.size(), w, h,
                slice * 1000);
    std::printf("  %-22s %9s %7s %9s %8s %8s %6s %9s %7s\n", "key", "wall ms", "frames", "longest",
                "draw", "end", "at", "after", "frames");
    auto open = [&] {
        // As the page's Open file does: the file arrives, the next frames open it in
        // pieces (App::take_files, Workspace::open's Opening).
        Span s;
        auto t0 = Clock::now();
        platform::null_platform_pick(name, bytes);
        s.add(p.frame());
        s = settle(p, s, t0);
        if (!p.app->workspace() || p.app->file_name() != name) {
            std::fprintf(stderr, "%s: the page did not open it: %s\n", name.c_str(),
                         p.app->view().error.c_str());
            std::exit(1);
        }
        print(("open " + name).c_str(), s);
    };
    open();
    for (char c : keys) {
        ImGuiKey k = ImGuiKey_None, mod = ImGuiKey_None;
        const char* what = "";
        switch (c) {
        case 'R': k = ImGuiKey_R, what = "R run"; break;
        case 'Q': k = ImGuiKey_Q, what = "Q prepare_pt2e"; break;
        case 'K': k = ImGuiKey_K, what = "K calibrate"; break;
        case 'V': k = ImGuiKey_V, what = "V convert_pt2e"; break;
        case 'D': k = ImGuiKey_D, what = "D decompose"; break;
        case 'd': k = ImGuiKey_D, mod = ImGuiMod_Shift, what = "Shift+D core ATen"; break;
        case 'z': k = ImGuiKey_Z, mod = ImGuiMod_Ctrl, what = "Ctrl+Z undo"; break;
        case 'o': open(); continue;
        case 'f':
            p.app->view().fast_kernels = false;
            std::printf("  (fast kernels off)\n");
            continue;
        default: return usage();
        }
        print(what, press(p, k, mod));
        if (!p.app->view().error.empty())
            std::printf("    error: %s\n", p.app->view().error.c_str());
    }
    p.app.reset();
    ImGui::DestroyContext();
    return 0;
}
