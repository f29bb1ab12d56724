// Headless smoke test of the page's UI (Dear ImGui without a renderer, the
// null platform): every panel, view and code form on every lesson graph, every
// transformation button's action with undo, clicks on nodes, a bad file.
// Natively and under ASan, so the panels' memory use is checked too.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "app.h"
#include "graph/printer.h"
#include "io/program_loader.h"
#include "platform/null_platform.h"
#include "platform/platform.h"
#include "ui/frame.h"
#include "ui/graph_toolbar.h"
#include "ui/markdown_view.h"
#include "ui/theme.h"
#include "ui/transforms.h"

using namespace pt2lab;
using namespace pt2lab::app;

namespace {

const std::string kSite = PT2LAB_SOURCE_DIR;

// assets/graphs/index.json as scripts/build_web.sh writes it: the .pt2 files, sorted.
std::string write_lesson_index() {
    std::vector<std::string> names;
    if (DIR* d = opendir((kSite + "/assets/graphs").c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 4 && n.compare(n.size() - 4, 4, ".pt2") == 0) names.push_back(n);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    std::string path = std::string(PT2LAB_TEST_TMP) + "/lesson_index.json";
    std::ofstream(path) << nlohmann::json(names).dump();
    return path;
}

// assets/lessons/index.json as scripts/build_web.sh writes it, and every lesson
// file mapped as the loader's preloaded texts.
void map_lessons() {
    std::vector<std::string> names;
    if (DIR* d = opendir((kSite + "/assets/lessons").c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 3 && n.compare(n.size() - 3, 3, ".md") == 0) names.push_back(n);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    std::string path = std::string(PT2LAB_TEST_TMP) + "/lessons_index.json";
    std::ofstream(path) << nlohmann::json(names).dump();
    platform::null_platform_map("assets/lessons/index.json", path);
    for (const std::string& n : names)
        platform::null_platform_map("assets/lessons/" + n, kSite + "/assets/lessons/" + n);
}

// One ImGui context with the page's fonts (the system's, unsubset: the test
// needs no build step) and one App, for the whole run.
struct Harness {
    Harness() {
        platform::null_platform_reset(kSite);
        platform::null_platform_map("fonts/ui.otf",
                                    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc");
        platform::null_platform_map(
            "fonts/mono.ttf", "/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf");
        platform::null_platform_map("assets/graphs/index.json", write_lesson_index());
        map_lessons();
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        io.DisplaySize = ImVec2(1280, 800);
        io.DeltaTime = 1.0f / 60;
        fonts_ok = ui::load_fonts_and_style(1.0f);
        unsigned char* pixels = nullptr;
        int w = 0, h = 0;
        io.Fonts->GetTexDataAsAlpha8(&pixels, &w, &h); // what a renderer would upload
        app = std::make_unique<App>();
        app->set_scene_metrics(ui::scene_metrics());
    }
    ~Harness() {
        app.reset();
        ImGui::DestroyContext();
    }
    // One frame as main.cpp draws it, without a renderer.
    void frame() {
        app->take_files();
        ImGui::NewFrame();
        ui::draw_frame(*app);
        ImGui::Render();
        REQUIRE(ImGui::GetDrawData()->Valid);
        app->end_frame();
        if (app->work_left()) platform::wake_between_frames(); // as main.cpp does
    }
    void frames(int n) {
        for (int i = 0; i < n; ++i) frame();
    }
    // Frames until `done` holds (an open runs in timed slices: a sanitizer build
    // needs more frames than a release one); returns the frames drawn.
    template <class Done> int frames_until(Done done, int limit = 100000) {
        int n = 0;
        while (!done() && n < limit) {
            frame();
            ++n;
        }
        REQUIRE(done());
        return n;
    }
    // Frames until the action in flight and every request behind it are done
    // (each frame advances the job by App::slice_seconds()); returns the frames drawn.
    int settle(int limit = 100000) {
        int n = 0;
        do {
            frame();
            ++n;
        } while (!app->idle() && n < limit);
        REQUIRE(app->idle());
        return n;
    }
    nlohmann::json state() const {
        nlohmann::json j = nlohmann::json::parse(platform::null_platform_state(), nullptr, false);
        REQUIRE(j.is_object());
        return j;
    }
    void click(float x, float y) {
        ImGuiIO& io = ImGui::GetIO();
        io.AddMousePosEvent(x, y);
        frame();
        io.AddMouseButtonEvent(0, true);
        frame();
        io.AddMouseButtonEvent(0, false);
        frames(2);
    }
    // Drags the mouse from (x0, y0) to (x1, y1) with the left button down.
    void drag(float x0, float y0, float x1, float y1) {
        ImGuiIO& io = ImGui::GetIO();
        io.AddMousePosEvent(x0, y0);
        frame();
        io.AddMouseButtonEvent(0, true);
        frame();
        for (int k = 1; k <= 8; ++k) {
            io.AddMousePosEvent(x0 + (x1 - x0) * float(k) / 8, y0 + (y1 - y0) * float(k) / 8);
            frame();
        }
        io.AddMouseButtonEvent(0, false);
        frames(2);
    }
    // The state's entry for the box named `name` (a node, or with `group` a module
    // box), first dragged into the canvas as a user would when the legible graph is
    // bigger than the canvas.
    nlohmann::json box_in_view(const std::string& name, bool group = false) {
        for (int tries = 0; tries < 12; ++tries) {
            nlohmann::json s = state();
            const nlohmann::json* box = nullptr;
            for (const auto& n : s["nodes"])
                if (n["name"] == name && n.contains("group") == group) box = &n;
            INFO(name);
            REQUIRE(box);
            const auto& c = s["canvas"];
            float x = (*box)["x"].get<float>(), y = (*box)["y"].get<float>();
            float cx = c["x"].get<float>(), cy = c["y"].get<float>();
            float cw = c["w"].get<float>(), ch = c["h"].get<float>();
            if (x > cx + 20 && x < cx + cw - 20 && y > cy + 20 && y < cy + ch - 20) return *box;
            // Drag the box towards the middle, at most half the canvas at a time.
            float dx = std::clamp(cx + cw / 2 - x, -cw / 2 + 10, cw / 2 - 10);
            float dy = std::clamp(cy + ch / 2 - y, -ch / 2 + 10, ch / 2 - 10);
            drag(cx + cw / 2 - dx / 2, cy + ch / 2 - dy / 2, cx + cw / 2 + dx / 2,
                 cy + ch / 2 + dy / 2);
        }
        FAIL("could not bring " << name << " into view");
        return {};
    }
    // Clicks a widget the panels exposed (UiState::widgets, CSS = device pixels here).
    void click_widget(const std::string& name) {
        frame();
        auto it = app->ui().widgets.find(name);
        INFO(name);
        REQUIRE(it != app->ui().widgets.end());
        const auto& r = it->second;
        REQUIRE(r[1] + r[3] <= ImGui::GetIO().DisplaySize.y);
        click(r[0] + r[2] / 2, r[1] + r[3] / 2);
    }
    // Wheels over the widget `over` (a panel's; where it is before the first turn)
    // until the widget `name` is drawn whole, as a user scrolls a tab below its fold.
    void scroll_to_widget(const std::string& name, const std::string& over) {
        ImGuiIO& io = ImGui::GetIO();
        frame();
        auto at = app->ui().widgets.find(over);
        INFO(over);
        REQUIRE(at != app->ui().widgets.end());
        const float x = at->second[0] + at->second[2] / 2, y = at->second[1] + at->second[3] / 2;
        for (int tries = 0; tries < 40; ++tries) {
            auto it = app->ui().widgets.find(name);
            if (it != app->ui().widgets.end() && it->second[3] > 0) return;
            io.AddMousePosEvent(x, y);
            frame();
            io.AddMouseWheelEvent(0, -1);
            frames(2);
        }
        FAIL("could not scroll to " << name);
    }
    void key(ImGuiKey k, bool settle_after = true) {
        ImGuiIO& io = ImGui::GetIO();
        io.AddKeyEvent(k, true);
        frame();
        io.AddKeyEvent(k, false);
        frames(2);
        if (settle_after) settle();
    }
    void open_asset(const std::string& name) {
        app->open_asset(name);
        frame(); // the fetch arrives; its open begins
        for (int n = 0; (app->opening_file() || app->files_waiting() > 0) && n < 10000; ++n)
            frame();
        frames(2);
        REQUIRE(app->file_name() == name);
    }
    bool fonts_ok = false;
    std::unique_ptr<App> app;
};

Harness& harness() {
    static Harness h;
    platform::set_state_provider([] { return harness().app->state_json(); });
    return h;
}

// Every tab, both views and every code form, and every node selected once.
void visit_everything(Harness& h) {
    const Workspace& ws = *h.app->workspace();
    for (GraphView v : {GraphView::Program, GraphView::Module}) {
        if (v == GraphView::Program && !ws.has_program()) continue;
        h.app->set_view(v);
        for (Tab t : {Tab::Code, Tab::Run, Tab::Observers, Tab::Program, Tab::Log}) {
            h.app->show_tab(t);
            h.frames(2);
        }
        for (CodeForm f : {CodeForm::Code, CodeForm::Readable, CodeForm::Printed}) {
            h.app->settings().code_form = f;
            h.app->show_tab(Tab::Code);
            h.frames(2);
        }
        for (const Node* n : ws.graph(v).nodes()) {
            h.app->select(n->id());
            h.frame();
            REQUIRE(h.app->selected_node() == n);
        }
    }
    h.app->ui().show_help = true;
    h.frames(2);
    h.app->ui().show_help = false;
}

} // namespace

TEST_CASE("every lesson graph in every panel", "[page]") {
    Harness& h = harness();
    REQUIRE(h.fonts_ok);
    REQUIRE(h.app->lesson_files().size() >= 5);
    for (const char* lang : {"en", "zh-TW"}) { // the panels' words in both languages
        h.app->set_lesson_lang(lang);
        for (const std::string& f : h.app->lesson_files()) {
            INFO(lang << " " << f);
            h.open_asset(f);
            REQUIRE(h.app->lesson_lang() == lang);
            visit_everything(h);
            nlohmann::json s = h.state();
            CHECK(s["file"] == f);
            CHECK(s["nodes"].size() == h.app->workspace()->graph(h.app->view().graph).size());
            CHECK(s["error"] == "");
        }
    }
    CHECK(platform::null_platform_fatal().empty());
}

// The page's words follow the lesson language (with no lesson open too): the HTML
// gets its words, the panels their labels; widget names (the state hook's, the
// tests') and ImGui ids stay, so the tab shown stays selected.
TEST_CASE("the page's language: labels change, widget names and ids stay", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("zh-TW");
    h.frames(2);
    REQUIRE_FALSE(h.app->lesson());
    CHECK(platform::null_platform_page_language() == "zh-TW");
    nlohmann::json words = nlohmann::json::parse(platform::null_platform_page_words());
    CHECK(words["web_toggle"] == "以文字閱讀課程");
    h.click_widget("tab:Observers");
    CHECK(h.app->settings().tab == Tab::Observers);
    std::set<std::string> zh_widgets;
    for (const auto& [name, rect] : h.app->ui().widgets) zh_widgets.insert(name);
    // The switch in the lesson list (the file panel): the page follows it.
    h.click_widget("lesson:lang:en");
    h.frames(2);
    CHECK(h.app->lesson_lang() == "en");
    CHECK(platform::load_setting("lesson_lang") == "en");
    CHECK(platform::null_platform_page_language() == "en");
    words = nlohmann::json::parse(platform::null_platform_page_words());
    CHECK(words["web_toggle"] == "Lesson as text");
    CHECK(words["web_step"] == "Step %d of %d");
    CHECK(h.app->settings().tab == Tab::Observers); // "###tab_observers": the same tab
    std::set<std::string> en_widgets;
    for (const auto& [name, rect] : h.app->ui().widgets) en_widgets.insert(name);
    CHECK(en_widgets == zh_widgets);
    for (const char* name :
         {"tab:Code", "tab:Run & parity", "tab:Observers", "tab:Signature & weights", "tab:Log",
          "open", "prepare", "run", "observers:prepare"})
        CHECK(en_widgets.count(name) == 1);
    // The state hook's tab stays English too.
    CHECK(h.state()["tab"] == "Observers");
    // And the other way, from another tab.
    h.app->set_lesson_lang("zh-TW");
    h.frames(2);
    h.click_widget("tab:Run & parity");
    CHECK(h.app->settings().tab == Tab::Run);
    h.app->set_lesson_lang("en");
    h.frames(2);
    CHECK(h.app->settings().tab == Tab::Run);
    h.app->set_lesson_lang("zh-TW");
    h.frames(2);
}

TEST_CASE("clicking a node on the canvas selects it", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_bn_relu_eval.pt2");
    h.frames(2);
    nlohmann::json s = h.state();
    nlohmann::json bn = h.box_in_view("batch_norm");
    h.click(bn["x"].get<float>(), bn["y"].get<float>());
    REQUIRE(h.app->selected_node());
    CHECK(h.app->selected_node()->name() == "batch_norm");
    // Copy goes to the (null) clipboard: the current view's code.
    h.app->copy(h.app->workspace()->code(h.app->view().graph).text, "code");
    CHECK(platform::null_platform_clipboard() == h.app->workspace()->code(GraphView::Program).text);
    CHECK(platform::null_platform_hash() == "file=conv_bn_relu_eval.pt2");
}

TEST_CASE("every transformation button, with undo back to the file as loaded", "[page]") {
    Harness& h = harness();
    for (const char* file : {"conv_bn_relu_eval.pt2", "conv_bn_relu_train.pt2", "conv_relu.pt2"}) {
        INFO(file);
        h.open_asset(file);
        const std::string code = h.app->workspace()->code(GraphView::Module).text;
        ui::post_decompose(*h.app, IrLevel::Inference);
        h.settle();
        visit_everything(h);
        // The inference IR keeps aten.conv2d, which XNNPACKQuantizer annotates (at Core
        // ATen it is aten.convolution, which it does not: lesson M00-3).
        ui::post_prepare(*h.app);
        h.settle();
        ui::post_calibrate(*h.app, ui::kCalibrationBatches);
        h.settle();
        INFO(h.state()["error"].get<std::string>());
        CHECK(h.app->workspace()->observers_calibrated());
        ui::post_convert(*h.app, true);
        h.settle();
        visit_everything(h);
        ui::post_dead_code_elimination(*h.app);
        ui::post_recompile(*h.app);
        ui::post_set_training(*h.app, true);
        h.settle();
        ui::post_decompose(*h.app, IrLevel::CoreAten);
        h.settle();
        visit_everything(h);
        // A node's own actions: insert an observer after the first user-facing op.
        for (const Node* n : h.app->workspace()->module().graph->nodes())
            if (n->op() == Op::CallFunction && !n->users().empty()) {
                Action a;
                a.kind = Action::Kind::InsertObserver;
                a.node = n->name();
                h.app->post(a);
                break;
            }
        h.settle();
        REQUIRE(h.app->workspace()->can_undo());
        while (h.app->workspace()->can_undo()) {
            h.app->post_undo();
            h.settle(); // the run after each undo too
        }
        CHECK(h.app->workspace()->code(GraphView::Module).text == code);
        CHECK(h.state()["undo"].empty());
    }
}

TEST_CASE("a bad file is refused and the open one stays", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    uint64_t version = h.app->workspace()->version();
    auto bad = read_file_bytes(kSite + "/tests/corpus/bad/truncated_half.pt2");
    REQUIRE(bad.ok());
    CHECK_FALSE(h.app->open(bad.take(), "truncated_half.pt2"));
    h.frames(2);
    CHECK(h.app->file_name() == "conv_relu.pt2");
    CHECK(h.app->workspace()->version() == version);
    CHECK(h.state()["error"].get<std::string>().rfind("truncated_half.pt2: ", 0) == 0);
}

TEST_CASE("Save .pt2 downloads the program as it is now; a prepared one is refused", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_bn_relu_eval.pt2");
    const size_t before = platform::null_platform_downloads().size();
    h.click_widget("save");
    h.frames(2);
    REQUIRE(platform::null_platform_downloads().size() == before + 1);
    {
        const auto& d = platform::null_platform_downloads().back();
        CHECK(d.name == "conv_bn_relu_eval.pt2");
        // the download is Workspace::save_pt2's file: it opens with the same program
        auto again = Workspace::open(d.bytes, d.name);
        REQUIRE(again.ok());
        CHECK(graph_str(*again.value()->program().graph) ==
              graph_str(*h.app->workspace()->program().graph));
    }
    ui::post_prepare(*h.app);
    h.settle();
    h.click_widget("save");
    h.frames(2);
    CHECK(platform::null_platform_downloads().size() == before + 1);
    CHECK(h.state()["error"].get<std::string>().find("a prepared model has no ExportedProgram") !=
          std::string::npos);
    ui::post_calibrate(*h.app, ui::kCalibrationBatches);
    h.settle();
    ui::post_convert(*h.app, true);
    h.settle();
    h.click_widget("save");
    h.frames(2);
    REQUIRE(platform::null_platform_downloads().size() == before + 2);
    CHECK(platform::null_platform_downloads().back().name == "conv_bn_relu_eval.converted.pt2");
    auto converted = Workspace::open(platform::null_platform_downloads().back().bytes, "c.pt2");
    REQUIRE(converted.ok());
    CHECK(converted.value()->program().graph->find("b__frozen_param0") != nullptr);
    while (h.app->workspace()->can_undo()) {
        h.app->post_undo();
        h.settle();
    }
}

// Every top-bar transformation has a key (the ? overlay lists them).
TEST_CASE("keys run the transformations: D, Shift+D, Q, K, V", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_bn_relu_eval.pt2");
    auto last = [&] { return h.app->workspace()->undo_history().back().label; };
    h.key(ImGuiKey_D);
    CHECK(h.app->workspace()->level() == IrLevel::Inference);
    ImGuiIO& io = ImGui::GetIO();
    io.AddKeyEvent(ImGuiMod_Shift, true);
    h.key(ImGuiKey_D);
    io.AddKeyEvent(ImGuiMod_Shift, false);
    h.frames(1);
    CHECK(h.app->workspace()->level() == IrLevel::CoreAten);
    // PT2E annotates the training IR (on Core ATen the quantizer finds no pattern).
    h.open_asset("conv_bn_relu_eval.pt2");
    h.key(ImGuiKey_Q);
    CHECK(last() == "prepare_pt2e");
    h.key(ImGuiKey_K);
    CHECK(last() == "calibrate on 9 batches");
    h.key(ImGuiKey_V);
    CHECK(last() == "convert_pt2e");
    CHECK(h.state()["error"] == "");
}

// Every action is a sliced job (App::end_frame advances it by slice_seconds() per
// frame): with a tiny slice a calibration spans frames, the state hook says how
// far it is, other actions wait or are off, and Cancel leaves everything as before.
TEST_CASE("a sliced calibration shows its progress; Cancel and Esc leave the state as before",
          "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    ui::post_prepare(*h.app);
    h.settle();
    REQUIRE(ui::has_observers(*h.app->workspace()));
    CHECK_FALSE(h.app->view().fast_kernels); // a lesson graph: the reference kernels
    const uint64_t version = h.app->workspace()->version();
    const nlohmann::json before = h.state();
    REQUIRE(before["busy"].is_null());
    const uint32_t picked = h.app->workspace()->graph(h.app->view().graph).nodes()[1]->id();
    h.app->select(picked);
    h.app->set_slice_seconds(1e-9); // one node per frame
    for (bool by_key : {false, true}) {
        INFO((by_key ? "Esc" : "the Cancel button"));
        ui::post_calibrate(*h.app, ui::kCalibrationBatches);
        h.frames(3);
        REQUIRE(h.app->busy());
        nlohmann::json s = h.state();
        REQUIRE(s["busy"].is_object());
        CHECK(s["busy"]["kind"] == "calibrate");
        CHECK(s["busy"]["what"].get<std::string>().rfind("calibrate: batch 1 of 9", 0) == 0);
        CHECK(s["busy"]["done"].get<uint64_t>() > 0);
        CHECK(s["busy"]["done"].get<uint64_t>() < s["busy"]["total"].get<uint64_t>());
        CHECK(s["busy"]["fast_kernels"] == false);
        CHECK(s["widgets"].contains("cancel"));
        CHECK(s["widgets"].contains("job"));
        // While it runs, the panels show the state as it was; Calibrate (key K) is off
        // and Ctrl+Z waits.
        CHECK(s["version"] == version);
        CHECK(s["observers"] == before["observers"]);
        h.key(ImGuiKey_K, false);
        CHECK(h.app->waiting() == 0);
        ImGuiIO& io = ImGui::GetIO();
        io.AddKeyEvent(ImGuiMod_Ctrl, true);
        h.key(ImGuiKey_Z, false);
        io.AddKeyEvent(ImGuiMod_Ctrl, false);
        CHECK(h.app->waiting() == 1);
        REQUIRE(h.app->busy());
        if (by_key)
            h.key(ImGuiKey_Escape, false);
        else
            h.click_widget("cancel");
        s = h.state();
        CHECK(s["busy"].is_null());
        CHECK_FALSE(s["widgets"].contains("cancel"));
        CHECK(h.app->waiting() == 0); // the undo behind it went too
        CHECK(s["version"] == version);
        CHECK(s["observers"] == before["observers"]);
        CHECK(s["undo"] == before["undo"]);
        CHECK(s["redo"] == before["redo"]);
        CHECK(s["error"] == "");
        CHECK(s["log"].back().get<std::string>().find("calibrate cancelled") == 0);
        CHECK(h.app->view().selected == picked); // Esc cancelled; it did not clear the selection
    }
    // To the end, one node per frame: the same as a calibration in one go.
    ui::post_calibrate(*h.app, ui::kCalibrationBatches);
    int frames = h.settle();
    CHECK(frames > 9);
    CHECK(h.app->workspace()->observers_calibrated());
    CHECK(h.app->workspace()->undo_history().back().label == "calibrate on 9 batches");
    const nlohmann::json done =
        h.state(); // a named copy: ranging over a temporary's member dangles
    for (const auto& o : done["observers"]) CHECK(o["calls"] == 9);
    h.app->set_slice_seconds(App::kSliceSeconds);
}

// Between two frames the browser runs the page's own short tasks
// (App::work_between_frames): a job moves there too, and the next frame draws what
// it did. A cancel waits for its frame.
TEST_CASE("a job moves between frames; the frame after draws its result", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    ui::post_prepare(*h.app);
    h.settle();
    const uint64_t version = h.app->workspace()->version();
    h.app->set_slice_seconds(1e-9); // one node per frame and per task
    ui::post_calibrate(*h.app, ui::kCalibrationBatches);
    h.frame();
    REQUIRE(h.app->busy());
    const uint64_t done0 = h.state()["busy"]["done"].get<uint64_t>();
    // A few tasks: the job moves a piece per task (a node, or a unit of a heavy one),
    // with no frame drawn.
    CHECK(platform::null_platform_between_frames(5) == 5);
    REQUIRE(h.app->busy());
    CHECK(h.state()["busy"]["done"].get<uint64_t>() > done0);
    // Cancel is asked for in a frame and applied at its end: no task moves the job first.
    h.app->cancel_job();
    CHECK(platform::null_platform_between_frames(5) == 1); // it ran, did nothing, asked for no more
    h.frame();
    CHECK_FALSE(h.app->busy());
    CHECK(h.app->workspace()->version() == version);
    // Again, to the end between frames: the tasks stop once nothing is left, the main
    // loop is told to draw, and the result is the same as a calibration in frames.
    ui::post_calibrate(*h.app, ui::kCalibrationBatches);
    h.frame();
    REQUIRE(h.app->busy());
    int tasks = platform::null_platform_between_frames(1000000);
    CHECK(tasks > 9);
    CHECK(tasks < 1000000);
    CHECK(h.app->idle());
    CHECK(h.app->take_changed_between_frames());
    CHECK_FALSE(h.app->take_changed_between_frames());
    h.frame();
    CHECK(h.app->workspace()->observers_calibrated());
    CHECK(h.app->workspace()->undo_history().back().label == "calibrate on 9 batches");
    const nlohmann::json done = h.state();
    for (const auto& o : done["observers"]) CHECK(o["calls"] == 9);
    int calibrate_tasks = 0;
    const nlohmann::json bench = nlohmann::json::parse(h.app->bench_json());
    for (const auto& j : bench["jobs"])
        if (j["kind"] == "calibrate" && j["ok"] == true) calibrate_tasks = j["tasks"].get<int>();
    CHECK(calibrate_tasks > 9);
    CHECK(platform::null_platform_between_frames(5) == 0); // nothing armed
    h.app->set_slice_seconds(App::kSliceSeconds);
}

// One's own file runs and calibrates with the fast kernels (a setting kept in
// localStorage); a lesson graph opens with the reference kernels.
TEST_CASE("the fast-kernels setting: runs and calibration of one's own file", "[page]") {
    Harness& h = harness();
    auto bytes = read_file_bytes(kSite + "/assets/graphs/conv_relu.pt2");
    REQUIRE(bytes.ok());
    REQUIRE(h.app->open(bytes.take(), "mine.pt2"));
    h.settle();
    CHECK(h.app->view().fast_kernels);
    ui::run_now(*h.app);
    h.settle();
    REQUIRE(h.app->workspace()->last_run());
    CHECK(h.app->workspace()->last_run()->fast_kernels);
    ui::post_prepare(*h.app);
    h.settle();
    ui::post_calibrate(*h.app, 2);
    h.settle();
    CHECK(h.app->workspace()->last_outcome()->summary.find("(fast kernels)") != std::string::npos);
    // Off for one's own file: remembered; a lesson graph stays on the reference loops.
    h.app->set_fast_kernels(false);
    h.frames(2);
    CHECK(nlohmann::json::parse(platform::load_setting("layout"))["fast_kernels"] == false);
    h.open_asset("conv_relu.pt2");
    CHECK_FALSE(h.app->view().fast_kernels);
    h.app->set_fast_kernels(true); // a lesson graph's choice is not the setting
    h.frames(2);
    CHECK(nlohmann::json::parse(platform::load_setting("layout"))["fast_kernels"] == false);
    bytes = read_file_bytes(kSite + "/assets/graphs/conv_relu.pt2");
    REQUIRE(h.app->open(bytes.take(), "mine.pt2"));
    CHECK_FALSE(h.app->view().fast_kernels);
    h.app->set_fast_kernels(true);
    h.frames(2);
    CHECK(nlohmann::json::parse(platform::load_setting("layout"))["fast_kernels"] == true);
}

// The Run tab's "Where the time went": the state hook's profile is the Workspace's
// (every op of the forward), and a row of the slowest nodes selects its node.
TEST_CASE("the Run tab says where the time went, op by op and node by node", "[page]") {
    Harness& h = harness();
    h.open_asset("resnet_style.pt2");
    h.click_widget("tab:Run & parity");
    ui::run_now(*h.app);
    h.settle();
    h.frames(2);
    REQUIRE(h.app->workspace()->last_run());
    const auto& profile = h.app->workspace()->last_run()->profile;
    REQUIRE(profile);
    nlohmann::json s = h.state();
    REQUIRE(s["run"].contains("profile"));
    const nlohmann::json& p = s["run"]["profile"];
    CHECK(p["nodes"] == profile->nodes.size());
    CHECK(p["ops"].size() == profile->ops.size());
    CHECK(p["ops"][0]["op"] == profile->ops.front().op);
    size_t conv = 0;
    for (const Node* n : h.app->workspace()->module().forward_graph().nodes())
        conv += n->target() == "torch.ops.aten.conv2d.default";
    bool conv_row = false;
    for (const auto& o : p["ops"]) {
        if (o["op"] != "aten.conv2d.default") continue;
        conv_row = true;
        CHECK(o["nodes"] == conv);
    }
    CHECK(conv_row);
    CHECK(p["slowest"][0]["node"] == profile->nodes.front().node);
    CHECK(h.app->ui().widgets.count("run tab:profile") == 1);
    // Open "Slowest nodes" and click the first: it is selected, as on the canvas.
    h.scroll_to_widget("run tab:slowest nodes", "run tab:run");
    h.click_widget("run tab:slowest nodes");
    h.scroll_to_widget("run tab:slowest node", "run tab:slowest nodes");
    h.click_widget("run tab:slowest node");
    REQUIRE(h.app->selected_node());
    CHECK(h.app->selected_node()->name() == profile->nodes.front().node);
    // In the other language the same section, in its words.
    h.app->set_lesson_lang("zh-TW");
    h.frames(2);
    CHECK(h.app->ui().widgets.count("run tab:profile") == 1);
    h.app->set_lesson_lang("en");
    h.frames(2);
}

// What the page shows of a file starts afresh on every open: selection, search,
// panel caches; the settings and the log stay.
TEST_CASE("the per-file view resets on every open; settings stay", "[page]") {
    Harness& h = harness();
    h.open_asset("resnet_style.pt2");
    h.app->show_tab(Tab::Program); // the tensor summaries
    h.frames(2);
    h.app->view().search = "relu";
    h.app->select(h.app->workspace()->graph(h.app->view().graph).nodes().back()->id());
    h.frames(2);
    CHECK_FALSE(h.app->view().caches.summaries.stored.empty());
    CHECK(h.app->view().caches.facts.key.epoch == h.app->graph_epoch());
    size_t log_lines = h.app->ui().log.size();
    h.open_asset("conv_relu.pt2");
    CHECK(h.app->view().selected == 0);
    CHECK(h.app->view().search.empty());
    CHECK(h.app->settings().tab == Tab::Program);
    CHECK(h.app->ui().log.size() > log_lines);
    h.frames(1);
    // Summaries of this file's tensors only.
    for (const auto& [key, entry] : h.app->view().caches.summaries.stored) {
        bool ours = false;
        for (const auto& [name, t] : h.app->workspace()->program().state_dict)
            ours |= t.get() == key;
        for (const auto& [name, t] : h.app->workspace()->program().constants)
            ours |= t.get() == key;
        CHECK(ours);
    }
    h.app->show_tab(Tab::Code);
    h.frames(2);
}

// The page asks the Workspace whether a run would change the state: an eval-mode
// batch_norm reads its running stats and writes nothing, so the page runs after a change.
TEST_CASE("run after each change follows Workspace::run_changes_state", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_bn_relu_eval.pt2");
    CHECK(h.app->run_changes_state() == h.app->workspace()->run_changes_state());
    CHECK_FALSE(h.app->run_changes_state());
    h.open_asset("conv_bn_relu_train.pt2");
    CHECK(h.app->run_changes_state());
}

// A file opens in pieces: the frames go on showing the file the page had, the
// job strip says what is being read and how far, and Cancel (Esc) drops the
// opening and keeps that file; opened again, it arrives whole.
TEST_CASE("a file opens over frames with progress, and Cancel keeps the file shown", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    const uint64_t version = h.app->workspace()->version();
    h.app->set_slice_seconds(1e-6);        // the smallest pieces: one step per frame
    h.app->open_asset("resnet_style.pt2"); // 180 kB
    h.frame();
    nlohmann::json s = h.state();
    REQUIRE(h.app->opening_file());
    CHECK(s["file"] == "conv_relu.pt2");
    CHECK(s["opening"] == "resnet_style.pt2 (0.2 MB)");
    CHECK(s["busy"]["kind"] == "open");
    h.frames(3);
    s = h.state();
    CHECK(s["widgets"].contains("job"));
    CHECK(s["widgets"].contains("cancel"));
    CHECK(s["busy"]["total"].get<uint64_t>() > 0);
    CHECK(s["busy"]["done"].get<uint64_t>() <= s["busy"]["total"].get<uint64_t>());
    CHECK_FALSE(s["busy"]["what"].get<std::string>().empty());
    ImGui::GetIO().AddKeyEvent(ImGuiKey_Escape, true);
    h.frame();
    ImGui::GetIO().AddKeyEvent(ImGuiKey_Escape, false);
    h.frame();
    s = h.state();
    CHECK_FALSE(h.app->opening_file());
    CHECK(s["opening"] == "");
    CHECK(s["busy"].is_null());
    CHECK(s["file"] == "conv_relu.pt2");
    CHECK(h.app->workspace()->version() == version);
    CHECK(s["log"].back().get<std::string>().find("opening resnet_style.pt2 cancelled after") == 0);
    CHECK(s["log"].back().get<std::string>().find("conv_relu.pt2 stays open") != std::string::npos);
    CHECK_FALSE(s["widgets"].contains("job"));

    // Again, to the end, still one small piece per frame: many frames, one open.
    h.app->open_asset("resnet_style.pt2");
    int frames = 0;
    h.frame();
    while (h.app->opening_file() && frames < 100000) h.frame(), ++frames;
    h.app->set_slice_seconds(App::kSliceSeconds);
    h.frames(2);
    CHECK(frames > 10);
    s = h.state();
    CHECK(s["file"] == "resnet_style.pt2");
    CHECK(s["busy"].is_null());
    CHECK(s["opening"] == "");
}

// A picked file the browser is still reading in (web/bridge.js reads it a piece per
// task): the job strip shows the bytes read, and Cancel stops the read.
TEST_CASE("a file being read in shows the bytes read; Cancel stops the read", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    const uint64_t version = h.app->workspace()->version();
    platform::null_platform_set_reads({{"dir/model.pt2", 12000000, 47600000}});
    h.frames(2);
    REQUIRE(h.app->opening_file());
    CHECK_FALSE(h.app->idle()); // frames keep coming while it reads
    nlohmann::json s = h.state();
    CHECK(s["opening"] == "model.pt2 (47.6 MB)");
    CHECK(s["busy"]["kind"] == "open");
    CHECK(s["busy"]["what"] == "reading the file: 12.0 of 47.6 MB");
    CHECK(s["busy"]["done"] == 252);
    CHECK(s["busy"]["total"] == 1000);
    CHECK(s["widgets"].contains("cancel"));
    CHECK(s["file"] == "conv_relu.pt2");
    const int cancelled = platform::null_platform_reads_cancelled();
    h.click_widget("cancel");
    CHECK(platform::null_platform_reads_cancelled() == cancelled + 1);
    s = h.state();
    CHECK_FALSE(h.app->opening_file());
    CHECK(s["busy"].is_null());
    CHECK(s["file"] == "conv_relu.pt2");
    CHECK(h.app->workspace()->version() == version);
    const std::string line = s["log"].back();
    CHECK(line.rfind("opening model.pt2 cancelled after ", 0) == 0);
    CHECK(line.find(" s (reading the file: 12.0 of 47.6 MB); conv_relu.pt2 stays open") !=
          std::string::npos);
    // A read that ends hands over the file like any pick: it opens.
    platform::null_platform_set_reads({{"resnet_style.pt2", 1, 2}});
    h.frame();
    REQUIRE(h.app->opening_file());
    platform::null_platform_set_reads({});
    auto bytes = read_file_bytes(kSite + "/assets/graphs/resnet_style.pt2");
    REQUIRE(bytes.ok());
    platform::null_platform_pick("resnet_style.pt2", bytes.take());
    h.frame();
    h.settle();
    CHECK(h.state()["file"] == "resnet_style.pt2");
}

// A big .pt2 arrives before its weights (web/bridge.js reads its late ranges after
// the rest): its graph is shown at once, what acts on it waits for the weights, and
// a failed check or Cancel brings back the file shown before, exactly as it was.
TEST_CASE("a .pt2 shown before its weights arrive; what waits runs once they are in", "[page]") {
    Harness& h = harness();
    auto whole = read_file_bytes(kSite + "/assets/graphs/resnet_style.pt2");
    REQUIRE(whole.ok());
    const std::vector<uint8_t>& file = whole.value();
    auto late = zip_late_ranges(file.data(), file.size(), file.size(), 0);
    REQUIRE(late.size() >= 2);
    // The buffer as the browser leaves it: everything but the late ranges.
    auto early = [&] {
        auto b = std::make_shared<std::vector<uint8_t>>(file);
        for (const ByteRange& r : late)
            std::fill(b->begin() + static_cast<std::ptrdiff_t>(r.begin),
                      b->begin() + static_cast<std::ptrdiff_t>(r.end), 0);
        return b;
    };

    // 1. It arrives, is shown, and a Run waits for the weights; then they come in.
    h.open_asset("conv_relu.pt2");
    auto buffer = early();
    platform::null_platform_pick_early("resnet_style.pt2", buffer, late);
    h.frames_until([&] { return h.app->arriving(); });
    nlohmann::json s = h.state();
    REQUIRE(s["file"] == "resnet_style.pt2");
    REQUIRE(h.app->arriving());
    CHECK(s["arriving"]["held"] == "conv_relu.pt2");
    CHECK(s["busy"]["kind"] == "open");
    CHECK(s["busy"]["what"].get<std::string>().rfind("reading the weights: 0.0 of ", 0) == 0);
    CHECK_FALSE(h.app->workspace()->file_whole());
    Action run = Action::of(Action::Kind::Run);
    h.app->post(run);
    h.frames(3);
    CHECK_FALSE(h.app->workspace()->last_run()); // it waits
    CHECK(h.app->waiting() == 1);
    std::copy(file.begin(), file.end(), buffer->begin());
    platform::null_platform_late_read_done(buffer->data(), "");
    h.settle();
    s = h.state();
    CHECK_FALSE(h.app->arriving());
    CHECK(s["arriving"].is_null());
    CHECK(s["file"] == "resnet_style.pt2");
    CHECK(h.app->workspace()->file_whole());
    REQUIRE(h.app->workspace()->last_run());
    CHECK(h.app->workspace()->last_run()->reference.has_value());
    CHECK(h.app->workspace()->last_run()->reference->allclose());
    bool told = false;
    for (const auto& line : s["log"])
        told |= line.get<std::string>().find("every weight is in and checked") != std::string::npos;
    CHECK(told);

    // 2. Cancel while they arrive: the file before is back, as it was.
    h.open_asset("conv_relu.pt2");
    const uint64_t version = h.app->workspace()->version();
    buffer = early();
    platform::null_platform_pick_early("resnet_style.pt2", buffer, late);
    h.frames_until([&] { return h.app->arriving(); });
    REQUIRE(h.app->arriving());
    h.click_widget("cancel");
    h.frames(2);
    s = h.state();
    CHECK_FALSE(h.app->arriving());
    CHECK(s["file"] == "conv_relu.pt2");
    CHECK(h.app->workspace()->version() == version);
    CHECK(s["log"].back().get<std::string>().find("; conv_relu.pt2 is shown again") !=
          std::string::npos);
    CHECK(platform::file_reads().empty()); // the late read was stopped

    // 3. Damaged weights: named, and the file before is back.
    buffer = early();
    platform::null_platform_pick_early("resnet_style.pt2", buffer, late);
    h.frames_until([&] { return h.app->arriving(); });
    REQUIRE(h.app->arriving());
    std::copy(file.begin(), file.end(), buffer->begin());
    (*buffer)[late.back().end - 1] ^= 0x5a;
    platform::null_platform_late_read_done(buffer->data(), "");
    h.settle();
    s = h.state();
    CHECK_FALSE(h.app->arriving());
    CHECK(s["file"] == "conv_relu.pt2");
    const std::string banner = s["error"];
    CHECK(banner.find("resnet_style.pt2") != std::string::npos);
    CHECK(banner.find("CRC mismatch") != std::string::npos);
    h.settle();

    // 4. The weights are all in before the open is done (one fast stream; CI saw
    // MobileNet v2 wait for ever): the file becomes whole all the same, whether the
    // read ends while the file waits its turn or while it is being opened.
    for (int frames_before : {0, 1}) {
        h.open_asset("conv_relu.pt2");
        buffer = early();
        const double slice = h.app->slice_seconds();
        h.app->set_slice_seconds(1e-9); // one piece a frame: the open takes frames
        platform::null_platform_pick_early("resnet_style.pt2", buffer, late);
        h.frames(frames_before);
        h.app->set_slice_seconds(slice);
        CHECK_FALSE(h.app->arriving()); // not shown yet
        // 0 frames: the file waits its turn; 1 frame: it is being opened
        const nlohmann::json busy = h.state()["busy"];
        CHECK((frames_before ? busy["kind"] == "open" : busy.is_null()));
        std::copy(file.begin(), file.end(), buffer->begin());
        platform::null_platform_late_read_done(buffer->data(), "");
        h.settle();
        s = h.state();
        CHECK_FALSE(h.app->arriving());
        CHECK(s["file"] == "resnet_style.pt2");
        CHECK(s["error"] == "");
        REQUIRE(h.app->workspace());
        CHECK(h.app->workspace()->file_whole());
    }
}

// Module grouping in the whole UI: a real export with modules opens expanded
// (small), collapse all / expand all, a click on a module box expands it, and
// a search for a hidden node expands its modules and selects it.
TEST_CASE("modules collapse and expand, search reveals a hidden node", "[page]") {
    Harness& h = harness();
    h.open_asset("resnet_style.pt2");
    CHECK(h.state()["modules"]["expand_all"] == true);
    h.app->expand_all_modules(false);
    h.frames(2);
    nlohmann::json s = h.state();
    CHECK(s["modules"]["expand_all"] == false);
    CHECK(s["modules"]["frames"].empty());
    nlohmann::json layer1 = h.box_in_view("layer1", /*group=*/true);
    h.click(layer1["x"].get<float>(), layer1["y"].get<float>());
    s = h.state();
    REQUIRE(s["modules"]["frames"].size() == 1);
    CHECK(s["modules"]["frames"][0]["path"] == "layer1");
    h.app->expand_all_modules(false);
    h.frames(2);
    h.app->view().search = "batch_norm_5";
    h.frames(1);
    CHECK(h.state()["search"]["matches"] == nlohmann::json::array({"batch_norm_5"}));
    h.app->expand_to(h.app->search_ids().at(0));
    h.frames(3);
    s = h.state();
    REQUIRE(s["selected"].is_object());
    CHECK(s["selected"]["name"] == "batch_norm_5");
    bool shown = false;
    for (const auto& n : s["nodes"]) shown |= n["name"] == "batch_norm_5" && n["id"] != 0;
    CHECK(shown);
    h.app->view().search.clear();
    h.app->expand_all_modules(true);
    h.frames(2);
}

// Not run by ctest: frame times of a big graph natively, for profiling
// (PT2LAB_BIG=build/bench/big_10000.json pt2lab_page_smoke "[.big]").
TEST_CASE("frames of a big graph", "[.big]") {
    const char* file = std::getenv("PT2LAB_BIG");
    if (!file) return;
    Harness& h = harness();
    auto bytes = read_file_bytes(file);
    REQUIRE(bytes.ok());
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(h.app->open(bytes.take(), file));
    auto t1 = std::chrono::steady_clock::now();
    h.frames(1);
    auto t2 = std::chrono::steady_clock::now();
    h.frames(50);
    auto t3 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    std::printf("open %.1f ms, first frame %.1f ms, frame %.2f ms\n", ms(t0, t1), ms(t1, t2),
                ms(t2, t3) / 50);
}

namespace {

std::vector<std::string> node_names(const Graph& g) {
    std::vector<std::string> out;
    for (const Node* n : g.nodes()) out.push_back(n->name());
    return out;
}

// The page's lesson graph is exactly the engine's: a LessonRunner of its own,
// at the same step with the same steps performed, shows the same nodes and code.
void check_same_as_engine(Harness& h, const LessonRunner& engine) {
    const LessonRunner* page = h.app->lesson();
    REQUIRE(page);
    REQUIRE(page->step() == engine.step());
    REQUIRE(page->performed() == engine.performed());
    for (const LessonGraph& g : engine.lesson().graphs) {
        INFO(g.key);
        const Workspace& a = *page->workspace(g.key);
        const Workspace& b = *engine.workspace(g.key);
        CHECK(node_names(a.graph(GraphView::Module)) == node_names(b.graph(GraphView::Module)));
        CHECK(a.code(GraphView::Module).text == b.code(GraphView::Module).text);
        if (a.has_program())
            CHECK(a.code(GraphView::Program).text == b.code(GraphView::Program).text);
        CHECK(a.lint_message(GraphView::Module) == b.lint_message(GraphView::Module));
    }
    // What the graph view shows: the step's graph in the step's view.
    nlohmann::json s = h.state();
    std::vector<std::string> shown;
    for (const auto& n : s["nodes"])
        if (n["id"].get<uint32_t>() != 0) shown.push_back(n["name"]);
    CHECK(shown == node_names(engine.step_workspace().graph(engine.step_view())));
    std::vector<std::string> hl;
    for (uint32_t id : engine.highlight_ids())
        hl.push_back(engine.step_workspace().node(engine.step_view(), id)->name());
    CHECK(s["lessons"]["current"]["highlight"] == nlohmann::json(hl));
    CHECK(s["lessons"]["current"]["step"] == engine.step());
    CHECK(platform::null_platform_hash() == engine.deep_link().substr(1));
}

// The dock tab that shows a step's `show` entry (kShowPanels), null for one shown
// outside the dock. A step's first entry with a tab is the tab the page selects.
const char* tab_showing(const std::string& s) {
    if (s == "code") return "Code";
    if (s == "run" || s == "parity") return "Run & parity";
    if (s == "observers") return "Observers";
    if (s == "signature" || s == "weights" || s == "state") return "Signature & weights";
    if (s == "history" || s == "torch_error") return "Log";
    return nullptr;
}

std::string tab_asked(const std::vector<std::string>& show) {
    for (const std::string& s : show)
        if (const char* t = tab_showing(s)) return t;
    return "";
}

bool has(const nlohmann::json& list, const std::string& what) {
    for (const auto& x : list)
        if (x == what) return true;
    return false;
}

// Where the live page shows a step's `show` entry `s` ("" nowhere on screen).
std::string where_shown(const std::string& s, const nlohmann::json& st) {
    const bool graph = has(st["panels"], "graph") && !st["nodes"].empty();
    const auto& cur = st["lessons"]["current"];
    auto reported = [&](auto pred) { // a line of the lesson panel's action results
        if (!cur.contains("report")) return false;
        for (const auto& a : cur["report"]["actions"])
            if (pred(a)) return true;
        return false;
    };
    if (s == "graph") return graph ? "graph" : "";
    if (s == "inspector") return has(st["panels"], "inspector") ? "Node panel" : "";
    if (s == "op_counts")
        return graph && st.contains("op_counts") && st["op_counts"]["drawn"] == true
                   ? "graph toolbar counts"
                   : "";
    if (s == "lint") return st["widgets"].contains("graph:lint") ? "lint note on the canvas" : "";
    if (s == "diff") {
        if (!st.contains("diff") || st["diff"]["view"] != st["view"]) return "";
        for (const auto& n : st["nodes"])
            if (n.contains("mark")) return "diff marks on the graph";
        return "";
    }
    const char* tab = tab_showing(s);
    REQUIRE(tab); // every kShowPanels entry is placed above
    if (st["tab"] == tab) return std::string(tab) + " tab";
    if (st["side_tab"] == tab) return std::string(tab) + " tab, beside the first";
    if ((s == "run" || s == "parity") &&
        reported([](const auto& a) { return a.contains("parity"); }))
        return "lesson panel's run line";
    if (s == "parity" && st.contains("run") && st["run"]["current"] == true)
        return "graph toolbar's parity badge";
    if (s == "torch_error" && reported([](const auto& a) { return a["torch_error_type"] != ""; }))
        return "lesson panel's torch line";
    return "";
}

struct TallDisplay { // every step's text, button and options on screen at once
    TallDisplay() { ImGui::GetIO().DisplaySize = ImVec2(1600, 3200); }
    ~TallDisplay() { ImGui::GetIO().DisplaySize = ImVec2(1280, 800); }
};

} // namespace

TEST_CASE("every step of every lesson in both languages through the lesson panel", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    REQUIRE(h.app->lessons_error() == "");
    const LessonCatalog& cat = h.app->lessons();
    REQUIRE(cat.entries.size() == 5);
    int steps_walked = 0;
    for (const char* lang : {"zh-TW", "en"}) {
        h.app->set_lesson_lang(lang);
        h.frames(2);
        REQUIRE(h.app->lesson_lang() == lang);
        for (const LessonCatalog::Entry& e : cat.entries) {
            INFO(lang << " " << e.id);
            const Lesson& lesson = *cat.find(e.id, lang);
            auto engine = LessonRunner::open(lesson, LessonRunner::files_under(kSite));
            REQUIRE(engine.ok());
            LessonRunner& en = *engine.value();
            // Open it from the lesson list (the file panel, or the panel's combo in a lesson).
            if (h.app->lesson()) {
                h.click_widget("lesson:select");
            }
            h.click_widget("lesson:open:" + e.id);
            h.frames(2);
            REQUIRE(h.app->lesson());
            REQUIRE(h.app->lesson()->lesson().id == e.id);
            // Reset: step 1 of freshly opened graphs, the progress of the other language's walk
            // gone.
            h.click_widget("lesson:reset");
            REQUIRE(h.app->lesson()->step() == 1);
            CHECK(h.app->progress(e.id).done.empty());
            REQUIRE(h.app->lesson()->lesson().lang == lang);
            for (int k = 1; k <= en.step_count(); ++k) {
                INFO("step " << k);
                const LessonStep& st = lesson.steps[static_cast<size_t>(k - 1)];
                check_same_as_engine(h, en);
                // The dock shows the tab the step's `show` asks for, entered and performed.
                const std::string tab = tab_asked(st.show);
                if (!tab.empty()) CHECK(h.state()["tab"] == tab);
                if (!st.actions.empty()) {
                    h.click_widget("lesson:perform");
                    REQUIRE(en.perform().ok());
                    check_same_as_engine(h, en);
                    if (!tab.empty()) CHECK(h.state()["tab"] == tab);
                    // What torch raises where the step means to show it is the step's
                    // result (lesson panel, log), not the page's red banner.
                    CHECK(h.state()["error"] == "");
                }
                // A wrong answer (when there is one) and then the right one, by click.
                const Check& c = st.check;
                REQUIRE(!c.options.empty());
                int wrong = c.answer == 0 ? 1 : 0;
                h.click_widget("lesson:option:" + std::to_string(wrong));
                CHECK(h.state()["lessons"]["current"]["correct"] == false);
                CHECK_FALSE(h.app->progress(e.id).is_done(k));
                h.click_widget("lesson:option:" + std::to_string(c.answer));
                CHECK(h.state()["lessons"]["current"]["correct"] == true);
                CHECK(h.app->progress(e.id).answers.at(k) == c.answer);
                CHECK(h.app->progress(e.id).is_done(k));
                nlohmann::json tv = nlohmann::json::parse(platform::null_platform_text_view());
                CHECK(tv["step"] == k);
                CHECK(tv["step_title"] == st.title);
                CHECK(tv["check"]["feedback"] == c.options[static_cast<size_t>(c.answer)].feedback);
                ++steps_walked;
                if (k == en.step_count()) break;
                // Next: by the button on odd steps, by the arrow key on even ones.
                if (k % 2)
                    h.click_widget("lesson:next");
                else
                    h.key(ImGuiKey_RightArrow);
                REQUIRE(en.next().ok());
            }
            // Back with the arrow key: the state is replayed from the files.
            h.key(ImGuiKey_LeftArrow);
            REQUIRE(en.previous().ok());
            check_same_as_engine(h, en);
            CHECK(nlohmann::json::parse(platform::load_setting("lesson_progress"))[e.id]["done"]
                      .size() == lesson.steps.size());
        }
    }
    CHECK(steps_walked == 82); // 41 steps per language
    CHECK(h.state()["error"] == "");
}

TEST_CASE("every step's show is on the page: the tab it asks for, the rest on screen", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    const LessonCatalog& cat = h.app->lessons();
    REQUIRE(cat.entries.size() == 5);
    // Every panel a step may show is placed (tab_showing or where_shown's own cases).
    for (const char* const* p = kShowPanels; *p; ++p) {
        std::string s = *p;
        INFO(s);
        CHECK((tab_showing(s) || s == "graph" || s == "inspector" || s == "op_counts" ||
               s == "lint" || s == "diff"));
    }
    std::set<std::string> nowhere; // "lesson step entry", both languages
    size_t entries = 0, listed = 0;
    for (const char* lang : {"zh-TW", "en"}) {
        h.app->set_lesson_lang(lang);
        h.frames(2);
        for (const LessonCatalog::Entry& e : cat.entries) {
            INFO(lang << " " << e.id);
            const Lesson& lesson = *cat.find(e.id, lang);
            for (const LessonStep& st : lesson.steps) listed += st.show.size();
            h.app->open_lesson(e.id);
            h.settle();
            h.frames(2);
            REQUIRE(h.app->lesson());
            h.click_widget("lesson:reset");
            for (int k = 1; k <= static_cast<int>(lesson.steps.size()); ++k) {
                INFO("step " << k);
                const LessonStep& st = lesson.steps[static_cast<size_t>(k - 1)];
                REQUIRE(h.app->lesson()->step() == k);
                // Entered: the tab the step asks for (the one shown before if none).
                std::string asked = tab_asked(st.show);
                if (!asked.empty()) CHECK(h.state()["tab"] == asked);
                if (!st.actions.empty()) {
                    h.click_widget("lesson:perform");
                    h.settle();
                    h.frames(2);
                    // Performed: the same tab, with what the button produced.
                    if (!asked.empty()) CHECK(h.state()["tab"] == asked);
                }
                nlohmann::json s = h.state();
                for (const std::string& what : st.show) {
                    ++entries;
                    if (where_shown(what, s).empty())
                        nowhere.insert(e.id + " " + std::to_string(k) + " " + what);
                }
                if (k < static_cast<int>(lesson.steps.size())) {
                    h.click_widget("lesson:next");
                    h.settle();
                }
            }
        }
    }
    CHECK(entries == listed); // every entry of every step looked for
    CHECK(entries > 2 * 90);
    // A step that asks for two tabs (M00-2 step 3: run and state; M00-4 step 6:
    // code and observers, step 8: parity and code) shows the second beside the first.
    CHECK(nowhere == std::set<std::string>{});
}

TEST_CASE("a step that points at two tabs draws the second beside the first", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("en");
    h.app->open_lesson("m00-2");
    h.settle();
    h.frames(2);
    REQUIRE(h.app->lesson());
    h.click_widget("lesson:reset");
    h.frames(2);
    CHECK(h.state()["side_tab"] == ""); // step 1 points at one tab
    while (h.app->lesson()->step() < 3) {
        h.click_widget("lesson:next");
        h.settle();
        h.frames(2);
    }
    nlohmann::json s = h.state();
    CHECK(s["tab"] == "Run & parity");
    CHECK(s["side_tab"] == "Signature & weights");
    // Side by side, each half of the dock, neither over the other.
    const auto& w = s["widgets"];
    REQUIRE(w.contains("tab:side"));
    REQUIRE(w.contains("panel:dock"));
    CHECK(w["tab:side"]["x"].get<float>() >
          w["tab:Run & parity"]["x"].get<float>() + w["tab:Run & parity"]["w"].get<float>());
    CHECK(w["tab:side"]["x"].get<float>() <
          w["panel:dock"]["x"].get<float>() + w["panel:dock"]["w"].get<float>());
    // Choosing the side tab in the tab bar shows it there, once.
    h.click_widget("tab:Signature & weights");
    h.frames(2);
    CHECK(h.state()["tab"] == "Signature & weights");
    CHECK(h.state()["side_tab"] == "");
    h.click_widget("tab:Run & parity");
    h.frames(2);
    CHECK(h.state()["side_tab"] == "Signature & weights");
    // Closed, it stays closed on this step; the next step decides again.
    h.click_widget("tab:side:close");
    h.frames(2);
    CHECK(h.state()["side_tab"] == "");
    CHECK(h.state()["tab"] == "Run & parity");
    h.click_widget("lesson:next");
    h.settle();
    h.frames(2);
    h.click_widget("lesson:prev");
    h.settle();
    h.frames(2);
    CHECK(h.state()["side_tab"] == "Signature & weights");
    // A dock too narrow for two (the lesson panel dragged wide): the tab bar's only.
    const float left = h.app->settings().left_frac;
    h.app->settings().left_frac = 0.45f;
    h.frames(3);
    CHECK(h.state()["widgets"]["panel:dock"]["w"].get<float>() < 720);
    CHECK(h.state()["side_tab"] == "");
    h.app->settings().left_frac = left;
    h.frames(2);
    CHECK(h.state()["side_tab"] == "Signature & weights");
}

TEST_CASE("M00's decompose step changes the op counts above the graph", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("en");
    h.app->open_lesson("m00");
    h.settle();
    h.frames(2);
    h.click_widget("lesson:reset");
    h.app->lesson_go(3);
    h.settle();
    h.frames(2);
    const LessonRunner& r = *h.app->lesson();
    REQUIRE(r.step() == 3);
    REQUIRE(r.current().actions.size() == 2);
    auto counted = [&](const nlohmann::json& s) {
        const Graph& g = r.step_workspace().graph(r.step_view());
        int calls = 0;
        for (const Node* n : g.nodes()) calls += n->op() == Op::CallFunction;
        REQUIRE(s.contains("op_counts"));
        CHECK(s["op_counts"]["drawn"] == true);
        CHECK(s["op_counts"]["nodes"] == g.size());
        CHECK(s["op_counts"]["calls"] == calls);
        CHECK(s["op_counts"]["text"] ==
              std::to_string(g.size()) + " nodes, " + std::to_string(calls) + " calls");
    };
    nlohmann::json before = h.state();
    CHECK(before["view"] == "ExportedProgram");
    CHECK(before["level"] == "Training IR");
    counted(before);
    h.click_widget("lesson:perform");
    h.settle();
    h.frames(2);
    nlohmann::json after = h.state();
    counted(after);
    // "the level now reads Core ATen and the counts of nodes and calls change":
    // batch_norm became _native_batch_norm_legit_no_training and a getitem.
    CHECK(after["level"] == "Core ATen");
    CHECK(after["op_counts"]["nodes"].get<int>() == before["op_counts"]["nodes"].get<int>() + 1);
    CHECK(after["op_counts"]["calls"].get<int>() == before["op_counts"]["calls"].get<int>() + 1);
    CHECK(after["op_counts"]["text"] != before["op_counts"]["text"]);
}

TEST_CASE("M00-1's symbolic_trace conv shows its target body.0 on screen", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("en");
    h.app->open_lesson("m00-1");
    h.settle();
    h.frames(2);
    h.click_widget("lesson:reset");
    const Lesson& lesson = h.app->lesson()->lesson();
    int found = 0;
    for (int k = 1; k <= static_cast<int>(lesson.steps.size()); ++k) {
        const LessonStep& st = lesson.steps[static_cast<size_t>(k - 1)];
        if (std::find(st.compare.begin(), st.compare.end(), "fx_sequential") == st.compare.end())
            continue;
        INFO("step " << k);
        h.app->lesson_go(k);
        h.settle();
        h.frames(2);
        nlohmann::json cur = h.state()["lessons"]["current"];
        REQUIRE(cur["step"] == k);
        INFO(cur["compare"].dump());
        for (const auto& c : cur["compare"]) {
            if (c["key"] != "fx_sequential") continue;
            REQUIRE(c.contains("kinds"));
            CHECK(c["kinds"]["body_0"] == "body.0 · Conv2d");
            ++found;
        }
    }
    CHECK(found >= 1);
}

TEST_CASE("lesson text: a word wider than its column breaks over lines, never past the edge",
          "[page]") {
    Harness& h = harness();
    h.frames(1);
    ImGui::NewFrame();
    const std::string text = "`ep.run_decompositions({})` and `torch.export.export(model, (x,))`";
    const float width = ImGui::CalcTextSize("ep.run_deco").x; // a narrow table column
    ui::InlineLayout l = ui::layout_inline(text, width);
    CHECK(l.lines >= 4);
    std::string joined;
    for (const ui::InlineLayout::Piece& p : l.pieces) {
        INFO(p.text);
        CHECK(p.x + p.w <= width + 1);
        joined += p.text;
    }
    // Nothing lost: every character is drawn (the spaces between words are kept too).
    std::string plain = "ep.run_decompositions({}) and torch.export.export(model, (x,))";
    std::string a, b;
    for (char c : joined)
        if (c != ' ') a += c;
    for (char c : plain)
        if (c != ' ') b += c;
    CHECK(a == b);
    // The cut falls after a '.' or '_' when one is far enough along.
    CHECK(l.pieces.front().text == "ep.run_");
    CHECK(l.pieces.front().line == 0);
    // Closing CJK punctuation at a line's end: it goes down with the character before
    // it, and no piece runs past the width.
    const std::string zh = "可以有迴圈、條件判斷";
    const float cut = ImGui::CalcTextSize("可以有迴圈").x + 1; // room for 迴圈 but not 、
    ui::InlineLayout z = ui::layout_inline(zh, cut);
    for (const ui::InlineLayout::Piece& p : z.pieces) {
        INFO(p.text);
        CHECK(p.x + p.w <= cut + 1);
    }
    REQUIRE(z.lines >= 2);
    std::string second;
    for (const ui::InlineLayout::Piece& p : z.pieces)
        if (p.line == 1) second += p.text;
    CHECK(second.rfind("圈、", 0) == 0);
    ImGui::EndFrame();
}

TEST_CASE("an action that works clears the banner of one torch refused", "[page]") {
    Harness& h = harness();
    h.open_asset("conv_bn_relu_eval.pt2");
    // train() on ep.module(): torch raises, the banner says so.
    REQUIRE(h.app->workspace());
    Action train;
    train.kind = Action::Kind::SetTraining;
    train.train = true;
    h.app->post(train);
    h.frames(3);
    CHECK(h.state()["error"].get<std::string>().find("NotImplementedError") != std::string::npos);
    // A run that works: the banner goes, the log keeps the message.
    h.key(ImGuiKey_R);
    h.frames(6);
    CHECK(h.state()["error"] == "");
    bool logged = false;
    for (const LogLine& l : h.app->ui().log)
        logged = logged || l.text.find("NotImplementedError") != std::string::npos;
    CHECK(logged);
}

TEST_CASE("the last step of a lesson leads on to the next lesson", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    const auto& entries = h.app->lessons().entries;
    REQUIRE(entries.size() >= 2);
    for (const char* lang : {"zh-TW", "en"}) {
        h.app->set_lesson_lang(lang);
        for (size_t i = 0; i < entries.size(); ++i) {
            INFO(lang << " " << entries[i].id);
            const Lesson& l = *h.app->lessons().find(entries[i].id, lang);
            const int last = static_cast<int>(l.steps.size());
            platform::null_platform_change_hash(entries[i].id + "/" + std::to_string(last));
            h.frames(3);
            h.settle();
            REQUIRE(h.app->lesson());
            REQUIRE(h.app->lesson()->lesson().id == entries[i].id);
            REQUIRE(h.app->lesson()->step() == last);
            h.frame();
            const auto& w = h.app->ui().widgets;
            const auto tv = nlohmann::json::parse(platform::null_platform_text_view());
            if (i + 1 == entries.size()) {
                // The course's last lesson: no lesson after it, Next stays (inert).
                CHECK(w.count("lesson:next-lesson") == 0);
                CHECK(w.count("lesson:next") == 1);
                CHECK_FALSE(tv.contains("next_lesson"));
                continue;
            }
            CHECK(w.count("lesson:next") == 0);
            // The text view offers the same next lesson.
            REQUIRE(tv.contains("next_lesson"));
            CHECK(tv["next_lesson"]["id"] == entries[i + 1].id);
            h.click_widget("lesson:next-lesson");
            h.frames(3);
            h.settle();
            REQUIRE(h.app->lesson());
            CHECK(h.app->lesson()->lesson().id == entries[i + 1].id);
            CHECK(h.app->lesson()->step() == 1);
            CHECK(h.app->lesson()->lesson().lang == lang);
        }
    }
}

// Predict, then press: a check answered before the step's button ran is a prediction,
// shown as such (no right or wrong yet) and judged once the button has run; only then is
// the step done. The first answer is what the last step's "first time" line counts.
TEST_CASE("a check answered before the button is a prediction, judged after it", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("en");
    const Lesson& l = *h.app->lessons().find("m00-2", "en");
    platform::null_platform_change_hash("m00-2/1");
    h.frames(3);
    h.settle();
    REQUIRE(h.app->lesson());
    h.click_widget("lesson:reset");
    h.settle();
    // Step 2 runs both graphs: predict wrong, then right, then press.
    h.click_widget("lesson:next");
    h.settle();
    REQUIRE(h.app->lesson()->step() == 2);
    const LessonStep& st = l.steps[1];
    REQUIRE_FALSE(st.actions.empty());
    REQUIRE_FALSE(h.app->lesson()->performed());
    const int wrong = st.check.answer == 0 ? 1 : 0;
    h.click_widget("lesson:option:" + std::to_string(wrong));
    nlohmann::json cur = h.state()["lessons"]["current"];
    CHECK(cur["predicted"] == true);
    nlohmann::json tv = nlohmann::json::parse(platform::null_platform_text_view());
    CHECK(tv["check"]["predicted"] == true);
    CHECK_FALSE(tv["check"].contains("feedback")); // not judged yet
    h.click_widget("lesson:option:" + std::to_string(st.check.answer));
    CHECK_FALSE(h.app->progress("m00-2").is_done(2)); // a prediction alone is not enough
    CHECK(h.app->progress("m00-2").first.at(2) == wrong);
    h.click_widget("lesson:perform");
    h.settle();
    REQUIRE(h.app->lesson()->performed());
    cur = h.state()["lessons"]["current"];
    CHECK(cur["predicted"] == false);
    CHECK(cur["correct"] == true);
    CHECK(h.app->progress("m00-2").is_done(2)); // pressed, and the prediction was right
    tv = nlohmann::json::parse(platform::null_platform_text_view());
    CHECK(tv["check"]["feedback"] ==
          st.check.options[static_cast<size_t>(st.check.answer)].feedback);
    // After the button, an answer is judged at once: step 3, right the first time.
    h.click_widget("lesson:next");
    h.settle();
    REQUIRE(h.app->lesson()->step() == 3);
    h.click_widget("lesson:perform");
    h.settle();
    h.click_widget("lesson:option:" + std::to_string(l.steps[2].check.answer));
    CHECK(h.app->progress("m00-2").is_done(3));
    // The first tries: step 2 wrong, step 3 right.
    CHECK(h.app->first_tries() == std::make_pair(1, 2));
    // The first answers are saved with the progress (localStorage).
    const auto saved = nlohmann::json::parse(platform::load_setting("lesson_progress"));
    CHECK(saved["m00-2"]["first"]["2"] == wrong);
    CHECK(saved["m00-2"]["first"]["3"] == l.steps[2].check.answer);
    // The last step says how the first tries went.
    platform::null_platform_change_hash("m00-2/" + std::to_string(l.steps.size()));
    h.frames(3);
    h.settle();
    h.frame();
    CHECK(h.app->ui().widgets.count("lesson:first-tries") == 1);
    h.click_widget("lesson:reset");
    h.settle();
    CHECK(h.app->progress("m00-2").first.empty());
}

TEST_CASE("deep links, language switch, reset and leaving a lesson", "[page]") {
    Harness& h = harness();
    TallDisplay tall;
    h.open_asset("conv_relu.pt2");
    h.app->set_lesson_lang("zh-TW");
    platform::null_platform_change_hash("m00-4/3");
    h.frames(3);
    REQUIRE(h.app->lesson());
    const Lesson& zh = *h.app->lessons().find("m00-4", "zh-TW");
    auto engine = LessonRunner::open(zh, LessonRunner::files_under(kSite));
    REQUIRE(engine.ok());
    REQUIRE(engine.value()->go_to(3).ok());
    check_same_as_engine(h, *engine.value());
    // Another step of another lesson by hashchange.
    platform::null_platform_change_hash("m00-2/4");
    h.frames(3);
    REQUIRE(h.app->lesson()->lesson().id == "m00-2");
    auto e2 = LessonRunner::open(*h.app->lessons().find("m00-2", "zh-TW"),
                                 LessonRunner::files_under(kSite));
    REQUIRE(e2.ok());
    REQUIRE(e2.value()->go_to(4).ok());
    check_same_as_engine(h, *e2.value());
    CHECK(h.state()["lessons"]["current"]["compare"].size() == 1);
    // The language switch keeps the step and the graphs.
    uint64_t version = h.app->workspace()->version();
    h.click_widget("lesson:lang:en");
    CHECK(h.app->lesson_lang() == "en");
    CHECK(h.app->lesson()->lesson().lang == "en");
    CHECK(h.app->lesson()->step() == 4);
    CHECK(h.app->workspace()->version() == version);
    CHECK(platform::load_setting("lesson_lang") == "en");
    CHECK(nlohmann::json::parse(platform::null_platform_text_view())["lang"] == "en");
    // Free edits are refused in a lesson: the graphs stay the engine's.
    ui::post_prepare(*h.app);
    h.frames(2);
    CHECK(h.app->workspace()->version() == version);
    CHECK(h.state()["error"].get<std::string>().find("lesson") != std::string::npos);
    // A hash that is no lesson is ignored; a step past the end lands on the last.
    platform::null_platform_change_hash("m99/1");
    h.frames(2);
    CHECK(h.app->lesson()->lesson().id == "m00-2");
    platform::null_platform_change_hash("m00-2/99");
    h.frames(2);
    CHECK(h.app->lesson()->step() == h.app->lesson()->step_count());
    h.click_widget("lesson:reset");
    CHECK(h.app->lesson()->step() == 1);
    CHECK(h.app->progress("m00-2").done.empty());
    h.click_widget("lesson:textview");
    CHECK(platform::null_platform_text_view_shown());
    h.click_widget("lesson:leave");
    CHECK_FALSE(h.app->lesson());
    CHECK(h.app->file_name() == "conv_relu.pt2");
    CHECK(platform::null_platform_hash() == "file=conv_relu.pt2");
    CHECK(platform::null_platform_text_view().empty());
    h.app->set_lesson_lang("zh-TW");
    h.frames(2);
}

// One's own file draws its weights inside the node that reads them; W shows them
// as boxes again, and the choice is kept for the next own file. A lesson graph,
// which teaches placeholders, always keeps them as boxes.
TEST_CASE("weights inside their readers for one's own files; W toggles", "[page]") {
    Harness& h = harness();
    auto bytes = read_file_bytes(kSite + "/assets/graphs/conv_bn_relu_eval.pt2");
    REQUIRE(bytes.ok());
    const std::vector<uint8_t> file = bytes.value();
    REQUIRE(h.app->open(std::vector<uint8_t>(file), "mine.pt2"));
    h.frames(3);
    nlohmann::json s = h.state();
    CHECK(s["weights_inside"] == true);
    size_t boxes = s["nodes"].size();
    const nlohmann::json* conv = nullptr;
    for (const auto& n : s["nodes"]) {
        CHECK(n["kind"] != "parameter");
        if (n["name"] == "conv2d") conv = &n;
    }
    REQUIRE(conv);
    REQUIRE((*conv)["weights"].size() == 1);
    CHECK((*conv)["weights"][0] == "weight: f32[8, 3, 3, 3]");
    // Selecting conv2d still shows its inputs (the weight among them) in the inspector.
    nlohmann::json c = h.box_in_view("conv2d");
    h.click(c["x"].get<float>(), c["y"].get<float>());
    REQUIRE(h.app->selected_node());
    CHECK(h.app->selected_node()->name() == "conv2d");
    h.key(ImGuiKey_W);
    s = h.state();
    CHECK(s["weights_inside"] == false);
    CHECK(s["nodes"].size() > boxes);
    bool param = false;
    for (const auto& n : s["nodes"]) param |= n["kind"] == "parameter";
    CHECK(param);
    // The next own file keeps the choice; a lesson graph keeps its boxes either way.
    REQUIRE(h.app->open(std::vector<uint8_t>(file), "mine2.pt2"));
    h.frames(3);
    CHECK(h.state()["weights_inside"] == false);
    h.key(ImGuiKey_W);
    CHECK(h.state()["weights_inside"] == true);
    h.open_asset("conv_bn_relu_eval.pt2");
    CHECK(h.state()["weights_inside"] == false);
}

// What the panels derive from a new version takes a piece of a frame each
// (App::may_derive): with no allowance every piece after a frame's first waits,
// so the module tree, the scene and the file's facts (two pieces) come in frames
// of their own, the last version's shown meanwhile, and the page asks for the
// frames. The file a new open replaces is freed over frames (Workspace::shed).
TEST_CASE("a new version's views arrive a piece per frame; a replaced file goes over frames",
          "[page]") {
    Harness& h = harness();
    h.open_asset("resnet_style.pt2");
    h.frames(3);
    h.app->set_derive_allowance(0);
    // No run after the change: a run in flight takes frames (many under the
    // sanitizers), in which the new version's pieces would already arrive.
    const bool auto_run = h.app->settings().auto_run;
    h.app->settings().auto_run = false;
    const GraphView v = h.app->view().graph;
    REQUIRE(h.app->scene_current(v));
    const size_t shown_before = h.app->scene(v).nodes.size();
    ImGuiIO& io = ImGui::GetIO();
    io.AddKeyEvent(ImGuiKey_D, true); // run_decompositions: a new version
    h.frame();
    io.AddKeyEvent(ImGuiKey_D, false);
    for (int n = 0; !h.app->idle() && n < 100000; ++n) h.frame();
    REQUIRE(h.app->idle());
    const ShownKey key = h.app->shown_key();
    // Frames until the scene and the facts are the new version's: each piece waits
    // for a frame of its own, and every frame in between asks for another.
    std::vector<std::string> order;
    bool tree_then_scene = false;
    for (int n = 0; n < 20; ++n) {
        const bool scene_was = h.app->scene_current(v);
        const bool facts_were = h.app->view().caches.facts.key == key;
        if (scene_was && facts_were) break;
        h.frame();
        if (!scene_was && h.app->scene_current(v)) order.push_back("scene");
        if (!facts_were && h.app->view().caches.facts.key == key) order.push_back("facts");
        if (!h.app->scene_current(v) || h.app->view().caches.facts.key != key)
            CHECK(h.app->ui().wants_frames);
        if (!h.app->scene_current(v)) {
            // Meanwhile the last version's scene shows.
            CHECK(h.app->scene(v).nodes.size() == shown_before);
            tree_then_scene = true;
        }
    }
    CHECK(tree_then_scene); // the tree took the first frame, the scene another
    CHECK(order == std::vector<std::string>{"scene", "facts"});
    CHECK(h.app->scene_current(v));
    CHECK(h.app->scene(v).nodes.size() != shown_before); // decomposed: batch norm -> more ops

    // Another file replaces this one (with history): it opens, then the old
    // workspace is freed over the frames after, and the page keeps drawing.
    h.app->set_derive_allowance(App::kDeriveAllowance);
    h.app->settings().auto_run = auto_run;
    h.open_asset("conv_relu.pt2");
    h.frames(20);
    CHECK(h.app->file_name() == "conv_relu.pt2");
    CHECK(h.app->idle());
    CHECK(h.state()["error"] == "");
}
