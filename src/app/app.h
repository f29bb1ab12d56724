// App: the page's state around the core's Workspace (the only model; every
// change is a Workspace action): view, selection, tabs, camera, log, caches.
// Panels read it and post requests that end_frame() applies. No ImGui here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph_scene.h"
#include "workspace/workspace.h"

namespace pt2lab::app {

enum class Tab { Code, Run, Observers, Program, Log };
const char* tab_name(Tab t); // "Code", "Run & parity", ...

// Which text the code view shows.
enum class CodeForm { Code, Readable, Printed }; // gm.code, print_readable, str(ep) / str(graph)

struct LogLine {
    enum class Kind { Info, Action, Warning, Error } kind = Kind::Info;
    std::string text;
    double time = 0;
};

// The graph view's camera: the world point at the canvas centre and the zoom
// (device pixels per layout unit, before the UI scale).
struct Camera {
    float cx = 0, cy = 0;
    float zoom = 1;
    bool fitted = false; // fit once the canvas size is known
    // No pan or zoom since the last fit: fit again when the graph or the canvas changes.
    bool follow_fit = true;
    float fit_w = 0, fit_h = 0; // the canvas size of the last fit
    uint64_t epoch = 0;         // App::graph_epoch() the camera last saw
};

// Where the graph canvas was last drawn, in device pixels (the state hook
// turns node positions into CSS pixels with it).
struct CanvasRect {
    float x = 0, y = 0, w = 0, h = 0;
    float scale = 1; // device pixels per CSS pixel
};

// A layout point on screen (device pixels) and back.
LayoutPoint world_to_screen(const Camera& c, const CanvasRect& r, LayoutPoint p);
LayoutPoint screen_to_world(const Camera& c, const CanvasRect& r, LayoutPoint p);

struct UiState {
    GraphView view = GraphView::Program;
    uint32_t selected = 0;      // node id in `view`'s graph; 0 = none
    uint32_t hovered = 0;       // node id under the mouse (graph, code, links), written this frame
    uint32_t hovered_shown = 0; // what the last frame found (drawn as hovered this frame)
    Tab tab = Tab::Code;
    bool tab_requested = false; // select `tab` in the tab bar on the next frame
    CodeForm code_form = CodeForm::Code;
    std::string search;
    int search_hit = -1; // index into the search's matches of the last jump
    InputSource run_inputs;
    int run_repeat = 1;
    bool auto_run = true; // run after each change when running does not change the state
    bool show_diff = true;
    std::string error; // the last error, shown in a banner until dismissed
    std::vector<LogLine> log;
    Camera camera[2]; // per GraphView
    CanvasRect canvas;
    float left_frac = 0.22f, right_frac = 0.25f, bottom_frac = 0.36f;
    // Module grouping per GraphView: every module expanded, or just `expanded`
    // (a big graph opens with none, i.e. collapsed to its top-level modules).
    bool expand_all[2] = {true, true};
    ExpandedSet expanded[2];
    uint32_t reveal = 0; // a node to bring into view on the next frame (search, breadcrumb)
    bool show_help = false;
    bool scroll_code_to_selection = false;
    std::string copied_what; // the last Copy: what it was ("gm.code")
    size_t copied_bytes = 0;
    // Where named widgets (view switch, buttons, tabs) were drawn this frame, in CSS
    // pixels {x, y, w, h}: the browser tests click them through the state hook.
    std::map<std::string, std::array<float, 4>> widgets;
    uint64_t frames = 0;
    // Start-up milestones (platform::now_seconds): main() entered, fonts
    // rasterized, first file opened, first frame on screen.
    double t_main = 0, t_fonts = 0, t_opened = 0, t_first_frame = 0;
};

// What the page's URL asks for (docs/EMBEDDING.md), read once at start.
struct PageOptions {
    bool bench = false;        // ?bench=1: frame times and open timings for tools/big_bench.js
    bool auto_collapse = true; // ?collapse=0: never open collapsed to the top-level modules
    // ?hide=left,inspector,dock,top: panels a course page embedding one step leaves out.
    bool hide_left = false, hide_inspector = false, hide_dock = false, hide_top = false;
    std::string step; // ?step=m00-4/3: the lesson step to open (read by the lesson panel)
};
PageOptions parse_page_options(const std::function<std::string(const std::string&)>& option);

// Frame and open timings the benchmark mode reports (window.pt2lab.bench()).
struct BenchLog {
    std::vector<float> build_ms; // NewFrame -> Render (ImGui and the App), per frame
    std::vector<float> loop_ms;  // the whole main-loop call, including opening files
    double t_arrived = 0, t_opened = 0, t_drawn = 0; // seconds: bytes taken, opened, drawn
    bool awaiting_draw = false;
};

class App {
public:
    App();
    ~App();

    // --- reading ------------------------------------------------------------
    const Workspace* workspace() const { return ws_.get(); }
    const PageOptions& options() const { return options_; }
    // Benchmark mode: the main loop reports every frame; the first frame drawn after
    // a file opened ends that open's timing.
    void record_frame(double build_ms, double loop_ms);
    std::string bench_json() const;
    UiState& ui() { return ui_; }
    const UiState& ui() const { return ui_; }
    // The lesson graphs shipped with the page (assets/graphs/index.json).
    const std::vector<std::string>& lesson_files() const { return lesson_files_; }
    // Which file is open ("conv_relu.pt2"), "" before the first.
    const std::string& file_name() const { return file_name_; }
    // The scene of a view (rebuilt when the workspace changes). Requires a workspace.
    const Scene& scene(GraphView v) const;
    void set_scene_metrics(SceneMetrics m);
    // The node selected in the current view, or null.
    const Node* selected_node() const;
    // The last change that moved the graph (its diff drives the overlay), and
    // a counter of graph changes: runs and calibration change neither, so the
    // overlay and the layout survive them.
    const std::optional<ActionOutcome>& last_change() const { return last_change_; }
    uint64_t graph_epoch() const { return graph_epoch_; }
    // Running the module would change its state (train-mode buffers, observers),
    // so the page does not run it on its own after a change.
    bool run_changes_state() const;

    // --- requests (applied by end_frame) --------------------------------------
    void post(Action a);
    void post_undo();
    void post_redo();
    void select(uint32_t id); // in the current view; 0 clears
    void set_view(GraphView v);
    void open_asset(const std::string& file); // a lesson graph, fetched from the site
    void open_picker();
    void copy(const std::string& text, const std::string& what);
    void log(LogLine::Kind kind, std::string text);
    void show_tab(Tab t);
    // Module grouping (applied by end_frame): expand or collapse one module,
    // every module, or the modules hiding node `id` (then select and reveal it).
    void toggle_module(const std::string& path);
    void expand_all_modules(bool expand);
    void expand_to(uint32_t id);
    // The module tree of a view's graph (rebuilt with the scene).
    const ModuleTree& modules(GraphView v) const;
    // Nodes of the current view's whole graph (collapsed modules included) that
    // match ui.search, in graph order; and per box of its scene, whether it is
    // or hides a match. Cached per query and scene.
    const std::vector<uint32_t>& search_ids() const;
    const std::vector<uint8_t>& search_marks() const;
    // Graphs with more nodes open collapsed to their top-level modules.
    static constexpr size_t kCollapseAbove = 400;

    // --- frame ----------------------------------------------------------------
    // Opens files that arrived (picked, dropped, fetched). True if any did.
    bool take_files();
    // Opens bytes as a file: on success the workspace is replaced; on error
    // the message is shown and everything stays as it was.
    bool open(std::vector<uint8_t> bytes, const std::string& name);
    // Applies the requests posted while drawing; true if there were any.
    bool end_frame();
    // The test hook's JSON (state_json.cpp).
    std::string state_json() const;
    // Whether something animates (the diff ghosts fade), so frames keep coming.
    bool animating() const;

private:
    struct Request {
        enum class Kind { Apply, Undo, Redo } kind = Kind::Apply;
        Action action;
    };
    struct ModuleRequest {
        enum class Kind { Toggle, All, None, Reveal } kind = Kind::Toggle;
        std::string path;
        uint32_t id = 0;
    };
    void apply_module(const ModuleRequest& r);
    struct SceneCache {
        const Workspace* ws = nullptr;
        uint64_t epoch = 0;
        uint64_t modules_rev = 0;
        ModuleTree tree;
        bool diff = false;
        bool valid = false;
        Scene scene;
        Scene before; // the scene of the previous version (ghosts come from it)
    };
    void apply(const Request& r);
    // Panel sizes, tab, code form and auto-run, kept in localStorage between visits.
    void load_settings();
    void save_settings();
    void after_change(const ActionOutcome& out, bool user_action);

    std::unique_ptr<Workspace> ws_;
    UiState ui_;
    PageOptions options_;
    BenchLog bench_;
    std::vector<std::string> lesson_files_;
    std::string file_name_;
    std::vector<Request> requests_;
    std::vector<ModuleRequest> module_requests_;
    uint64_t modules_rev_ = 0; // bumped when a module is expanded or collapsed
    mutable uint64_t scene_builds_ = 0;
    struct SearchCache {
        std::string query;
        uint64_t builds = ~uint64_t(0);
        GraphView view = GraphView::Program;
        std::vector<uint32_t> ids;
        std::vector<uint8_t> marks;
    };
    mutable SearchCache search_;
    void update_search() const;
    mutable SceneCache scenes_[2];
    mutable double scene_ms_ = 0; // how long the last scene (labels + layout) took
    SceneMetrics metrics_;
    double diff_since_ = -1; // when the current diff appeared (its ghosts fade)
    std::string saved_settings_;
    std::optional<ActionOutcome> last_change_;
    uint64_t graph_epoch_ = 0;
};

} // namespace pt2lab::app
