// App: the page's state around the core's Workspace (the only model; every
// change is a Workspace action), by lifetime: the page's own (log, widgets), the
// open file's view (selection, camera, search, caches) and the saved settings.
// Panels read it and post requests that end_frame() runs as sliced jobs. No ImGui here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "glyph_wants.h"
#include "graph_scene.h"
#include "lesson/catalog.h"
#include "lesson/markdown.h"
#include "lesson/runner.h"
#include "page_strings.h"
#include "platform/platform.h"
#include "tensor_summary.h"
#include "workspace/workspace.h"

namespace pt2lab::app {

enum class Tab { Code, Run, Observers, Program, Log };
// The tab's stable name ("Code", "Run & parity", ...: the state hook, the tests'
// widget names) and its label on screen in the page's language (page_strings.inc).
const char* tab_name(Tab t);
Str tab_label(Tab t);

// Which text the code view shows.
// gm.code, print_readable, str(ep) / str(graph), Copy as Python
enum class CodeForm { Code, Readable, Printed, Script };

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
    float fit_w = 0, fit_h = 0;   // the canvas size of the last fit
    float fit_lw = 0, fit_lh = 0; // the layout's size then (modules collapsed, weights inside)
    uint64_t epoch = 0;           // App::graph_epoch() the camera last saw
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

// What a learner did in one lesson (kept in localStorage): steps whose button
// ran or that were read to the end, and the option chosen per check.
struct LessonProgress {
    std::vector<int> done;      // 1-based step numbers, sorted
    std::map<int, int> answers; // step -> option index chosen last
    std::map<int, int> first;   // step -> option index chosen first (a prediction counts)
    bool is_done(int step) const;
};
// A step -> option map as the progress stores it ({"1": 0, ...}), and back (entries
// that are not integers are left out).
nlohmann::json step_map_json(const std::map<int, int>& m);
std::map<int, int> step_map(const nlohmann::json& progress, const char* key);

// What the page remembers between visits (localStorage "layout"): panel sizes,
// the dock tab, the code form, run-after-each-change and the kernel choice.
struct Settings {
    float left_frac = 0.22f, right_frac = 0.25f, bottom_frac = 0.36f;
    Tab tab = Tab::Code;
    CodeForm code_form = CodeForm::Code;
    bool auto_run = true; // run after each change when running does not change the state
    // One's own files run with the fast conv kernel (Action::fast_kernels); the lesson
    // graphs always open with the reference loops (their runs are compared with torch's
    // to the bit), see FileView::fast_kernels.
    bool fast_kernels = true;
    // One's own files draw parameters, buffers and constants inside the node that
    // reads them (the lesson graphs, which teach placeholders, keep them as boxes):
    // FileView::weights_inside.
    bool weights_inside = true;
};

// Derived data panels keep between frames because it costs a pass over a big
// graph (10k nodes): part of the per-file view, so every open starts without it,
// and keyed by what is shown (App::shown_key), never by a Workspace pointer.
struct ShownKey {
    uint64_t epoch = ~uint64_t(0);   // App::graph_epoch()
    uint64_t version = ~uint64_t(0); // Workspace::version()
    GraphView view = GraphView::Program;
    bool operator==(const ShownKey& o) const {
        return epoch == o.epoch && version == o.version && view == o.view;
    }
    bool operator!=(const ShownKey& o) const { return !(*this == o); }
};
struct PanelCaches {
    struct Code {             // code_panel: print(gm.graph) and the shown text split into lines
        ShownKey writing_key; // how far Workspace::write_code was, for a frame that waits
        size_t writing_done = 0, writing_total = 0;
        ShownKey printed_key;
        std::string printed;
        ShownKey script_key; // Workspace::python_script, once per version
        std::string script;
        ShownKey lines_key;
        CodeForm lines_form = CodeForm::Code;
        const char* lines_text = nullptr; // what `lines` point into (the Workspace's
        size_t lines_size = 0;            // cached text or `printed`)
        std::vector<std::string_view> lines;
    } code;
    struct Facts { // file_panel: op counts, lint, unsupported ops, inputs
        ShownKey key;
        int pieces = 0; // of kFactPieces done (Facts next: the version being counted)
        std::map<Op, int> kinds;
        std::vector<std::pair<std::string, int>> calls;
        std::vector<Workspace::UnsupportedOp> unsupported;
        std::string lint, inputs;
    } facts, facts_next;
    struct LintNote { // graph_view: a lesson step's lint verdict, once per shown version
        ShownKey key;
        std::string message;
    } lint_note;
    struct Toolbar { // graph_toolbar: call count, the selection's module
        ShownKey calls_key;
        int calls = 0;
        ShownKey crumb_key;
        uint32_t crumb_selected = 0;
        int crumb_group = 0;
    } toolbar;
    struct Summaries { // program_panel: tensor summaries, holding the tensor so its
                       // address cannot be reused by another while it is cached
        ShownKey live_key;
        std::map<const void*, std::pair<std::shared_ptr<const void>, TensorSummary>> stored, live;
    } summaries;
};

// What the page shows of the open file (or lesson step): reset on every open.
struct FileView {
    GraphView graph = GraphView::Program; // the graph shown
    uint32_t selected = 0;                // node id in `graph`; 0 = none
    std::string search;
    int search_hit = -1; // index into the search's matches of the last jump
    InputSource run_inputs;
    int run_repeat = 1;
    // This file's runs and calibrations use the fast conv kernel: Settings::fast_kernels
    // for one's own files, off for the lesson graphs.
    bool fast_kernels = false;
    bool weights_inside = false; // SceneContext::weights_inside: Settings' for one's own files
    int calibrate_batches = 9;   // the Observers tab's batches and fold_quantize
    bool fold_quantize = true;
    bool show_diff = true;
    std::string error; // the last error, shown in a banner until dismissed
    Camera camera[2];  // per GraphView
    // Module grouping per GraphView: every module expanded, or just `expanded`
    // (a big graph opens with none, i.e. collapsed to its top-level modules).
    bool expand_all[2] = {true, true};
    ExpandedSet expanded[2];
    uint32_t reveal = 0; // a node to bring into view on the next frame (search, breadcrumb)
    bool scroll_code_to_selection = false;
    // Lesson mode: the current step's highlights (node ids in the shown graph)
    // and the option chosen for its check (-1: none yet).
    std::vector<uint32_t> highlight;
    int answer = -1;
    Camera compare_camera[4]; // the step's `compare` graphs, left to right
    // A lesson step's second dock tab (its `show` points at two), drawn beside the
    // tab bar's until closed or the next step.
    std::optional<Tab> side_tab;
    PanelCaches caches;
};

// The page's own state for as long as it is open, whatever file is shown: the
// log, what this frame drew and where, start-up timings.
struct UiState {
    uint32_t hovered = 0;        // node id under the mouse (graph, code, links), written this frame
    uint32_t hovered_shown = 0;  // what the last frame found (drawn as hovered this frame)
    bool tab_requested = false;  // select Settings::tab in the tab bar on the next frame
    std::optional<Tab> side_tab; // the tab this frame drew beside the tab bar's, if any
    std::vector<LogLine> log;
    CanvasRect canvas;
    bool map_drag = false; // the graph canvas's press began on the minimap: it steers the camera
    // A panel drew part of what it shows (a big graph's code, written in pieces) and
    // needs more frames to finish it: the main loop keeps drawing. Reset every frame.
    bool wants_frames = false;
    std::string lesson_scrolled; // the lesson step whose text was last scrolled to the top
    // Keyboard focus (ui/keyboard.cpp): the window whose controls Tab walks (the
    // left panel), its first and last tab stops on this frame and the last one, a
    // pending "focus its first (+1) / last (-1) control", the focused control's name.
    uint32_t tab_scope = 0, tab_first = 0, tab_last = 0, tab_first_shown = 0, tab_last_shown = 0;
    int focus_request = 0;
    bool nav_is_stop = false; // ImGui's focused item was one of the scope's tab stops
    std::string focused;
    bool show_help = false;
    // Phones and narrow windows show one panel at a time (ui/frame.cpp, "compact"):
    // which one, chosen with the row of buttons under the top bar; -1 until chosen
    // (the lesson in a lesson, else the graph).
    enum class Pane { Side, Graph, Inspector, Dock };
    int compact_pane = -1;
    bool compact = false;           // this frame's layout is the compact one
    bool compact_in_lesson = false; // the frame that chose compact_pane was in a lesson
    unsigned touch_window = 0;      // ImGuiID of the window a press began in (touch_scroll)
    std::string copied_what;        // the last Copy: what it was ("gm.code")
    size_t copied_bytes = 0;
    // Where named widgets (view switch, buttons, tabs) were drawn this frame, in CSS
    // pixels {x, y, w, h}: the browser tests click them through the state hook.
    std::map<std::string, std::array<float, 4>> widgets;
    // Those of them a scrolling region cuts: `widgets` has the part on screen (empty
    // when none is), this the whole item (where it would be if scrolled to).
    std::map<std::string, std::array<float, 4>> widgets_cut;
    uint64_t frames = 0;
    // Start-up milestones (platform::now_seconds): main() entered, fonts
    // rasterized, first file opened, first frame on screen.
    double t_main = 0, t_fonts = 0, t_opened = 0, t_first_frame = 0;
    // The kernel warm-up's total time (exec/warm_up.h), run in idle frames after
    // the first one; -1 until it is done (and in ?bench=1, which times frames).
    double warm_up_ms = -1;
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

// One job the page ran (an action from begin to finish or cancel), as the page saw
// it: window.pt2lab.bench()'s "jobs", for tools/action_bench.js.
struct JobRecord {
    const char* kind = ""; // action_kind_name
    std::string label;     // Action::label ("run after the change"), often ""
    bool fast_kernels = false;
    bool ended = false, ok = false, cancelled = false;
    double t_start = 0, t_end = 0; // seconds (performance.now): begin(), finish() or cancel
    double compute = 0;            // seconds inside Workspace::begin / advance / finish
    // Main-loop calls from the one that began the job to the one that ended it: how
    // many, the longest (loop_ms) and the longest gap between two calls' starts after
    // the first (requestAnimationFrame's); then the first call after it, which draws
    // the result (the new graph's scene), and when that call ended (t_shown, seconds).
    int frames = 0;
    float max_loop_ms = 0, max_gap_ms = 0;
    float next_loop_ms = -1, next_gap_ms = -1;
    double t_shown = 0;
    float max_task_ms = 0; // the longest task between frames that worked on it
    int tasks = 0;         // how many
    // Where the longest main-loop call went: building the frame (ImGui and the
    // panels), end_frame (the job's slice, requests) and what the job was doing
    // when that slice began; the longest task's job likewise.
    float max_loop_build_ms = 0, max_loop_end_ms = 0;
    std::string max_loop_what, max_task_what;
};

// Frame and open timings the benchmark mode reports (window.pt2lab.bench()).
struct BenchLog {
    std::vector<float> build_ms; // NewFrame -> Render (ImGui and the App), per frame
    std::vector<float> loop_ms;  // the whole main-loop call, including opening files
    std::vector<float> gap_ms;   // from the previous main-loop call's start to this one's
    double t_arrived = 0, t_opened = 0, t_drawn = 0; // seconds: bytes taken, opened, drawn
    double t_whole = 0;     // seconds: a file opened before its weights was read and checked whole
    double t_open_call = 0; // seconds: App::open called (t_opened - this: the open itself)
    bool awaiting_draw = false;
    double t_loop = 0;     // the last main-loop call's start (seconds)
    float max_task_ms = 0; // the longest task between frames so far
    // The last kKeepJobs jobs, oldest first; jobs_done counts every one that ended.
    static constexpr size_t kKeepJobs = 32;
    std::deque<JobRecord> jobs;
    uint64_t jobs_done = 0;
};

class App {
public:
    App();
    ~App();

    // --- reading ------------------------------------------------------------
    // The workspace the panels show: the current lesson step's graph, else the open file.
    const Workspace* workspace() const;
    const PageOptions& options() const { return options_; }
    // Benchmark mode: the main loop reports every frame; the first frame drawn after
    // a file opened ends that open's timing.
    void record_frame(double build_ms, double loop_ms);
    std::string bench_json() const;
    // The page's state by lifetime: for as long as the page is open (log, widgets
    // drawn), per open file (selection, camera, search, caches: reset on every
    // open), and the settings kept between visits.
    UiState& ui() { return ui_; }
    const UiState& ui() const { return ui_; }
    FileView& view() { return view_; }
    const FileView& view() const { return view_; }
    Settings& settings() { return settings_; }
    const Settings& settings() const { return settings_; }
    // What the panels' caches are keyed by: the graph epoch, the shown workspace's
    // version and the graph shown.
    ShownKey shown_key() const;
    // Characters met outside the page's font subset, and their font pages
    // (glyph_wants.h): the main loop asks for pages and rebuilds the atlas.
    GlyphWants& glyphs() { return glyphs_; }
    const GlyphWants& glyphs() const { return glyphs_; }
    // Asks the browser for the font pages newly noted characters need.
    void fetch_glyph_pages();
    // Font page files that arrived since the last call: (file, the font's bytes).
    std::vector<std::pair<FontFile, std::vector<uint8_t>>> take_font_pages();
    // The Run tab's "fast kernels": this file's choice, and for one's own files the setting.
    void set_fast_kernels(bool on);
    // Weights drawn inside their readers, or as boxes of their own (the W key).
    void set_weights_inside(bool on);
    // The lesson graphs shipped with the page (assets/graphs/index.json).
    const std::vector<std::string>& lesson_files() const { return lesson_files_; }
    // Which file is open ("conv_relu.pt2"), "" before the first.
    const std::string& file_name() const { return file_name_; }
    // The scene of a view (rebuilt when the workspace changes). Requires a workspace.
    // A new version's scene waits for a frame with allowance left (may_derive): until
    // then this is the last version's, and scene_current(v) is false.
    const Scene& scene(GraphView v) const;
    bool scene_current(GraphView v) const;
    // The graph epoch the shown scene was built for (the camera refits on a new one).
    uint64_t scene_epoch(GraphView v) const;

    // --- a frame's allowance for derived views ---------------------------------
    // What the panels derive from a new version (its module tree, its scene, the
    // file's facts, a slice of its code) takes a piece per frame: the first piece
    // of a frame always runs, a later one waits for the next frame once the frame
    // has spent kDeriveAllowance. A 20k-node version then appears over a few
    // frames instead of one that pays for all of it. draw_frame begins the clock.
    static constexpr double kDeriveAllowance = 0.008;
    void set_derive_allowance(double seconds) { derive_allowance_ = seconds; }
    // What a frame aims at, drawing and the job's slice together (end_frame).
    static constexpr double kFrameTarget = 0.020;
    void begin_frame();
    // Whether a piece may run now; false also asks for another frame.
    bool may_derive() const;
    // A piece ran (the frame's allowance is now in use).
    void derived() const { derived_in_frame_ = true; }
    // A piece waited this frame: the page draws another.
    bool derive_waiting() const { return derive_waited_; }
    void set_scene_metrics(SceneMetrics m);
    // The node selected in the current view, or null.
    const Node* selected_node() const;
    // The last change that moved the graph (its diff drives the overlay), and
    // a counter of graph changes: runs and calibration change neither, so the
    // overlay and the layout survive them.
    const std::optional<ActionOutcome>& last_change() const { return last_change_; }
    uint64_t graph_epoch() const { return graph_epoch_; }
    // Running the module would change its state (train-mode buffers, observers),
    // so the page does not run it on its own after a change (Workspace::run_changes_state).
    bool run_changes_state() const;

    // --- the action in flight ------------------------------------------------
    // Every action the page posts runs as a sliced Workspace job: end_frame()
    // begins it and advances it by slice_seconds() per frame, so frames keep
    // coming; finish() commits it. Until then the panels show the state as before.
    bool busy() const;
    // What it is doing: the action's kind and Workspace::progress(); null when idle.
    const Action* job_action() const;
    ActionProgress job_progress() const;
    // Drops the action in flight (applied by end_frame): the workspace stays
    // exactly as before it, and the requests waiting behind it go too. While a
    // file opens, drops the opening (and the files waiting behind it) instead.
    void cancel_job();
    // Requests waiting (behind the action in flight).
    size_t waiting() const { return requests_.size(); }
    // Nothing in flight and nothing waiting.
    bool idle() const {
        return !busy() && !opening_ && !arriving_ && reads_.empty() && to_open_.empty() &&
               requests_.empty() && reopen_.empty() && !cancel_requested_;
    }
    // Work per frame: about 10 ms, so a frame stays well under 50 ms (a slice
    // overruns by at most one node). Tests set it smaller to catch a job mid-way.
    static constexpr double kSliceSeconds = 0.010;
    // Work between frames (platform::set_between_frames): the job also moves in the
    // browser's own tasks of about kTaskSeconds each, so it uses the time the page
    // would otherwise wait for the next frame (headless SwiftShader leaves 60-130 ms
    // between frames) while input and drawing still run between two tasks. Returns
    // whether there is more to do. The main loop draws a frame after work done here
    // (take_changed_between_frames).
    static constexpr double kTaskSeconds = 0.008;
    // While an action runs and nothing else moves, the page draws a frame this often
    // (main.cpp); the time between goes to the action...
    static constexpr double kJobFrameSeconds = 0.1;
    // ... or less often where a frame drawn costs more: about five times what the last
    // frames held the main thread (the delay of the task posted at their end), so that
    // drawing progress takes at most a fifth of a long action's time (a GPU's frame
    // costs a few ms: 0.1 s; headless SwiftShader's 40-60 ms: 0.2-0.3 s), up to this.
    static constexpr double kJobFrameSecondsMax = 0.3;
    double job_frame_seconds() const {
        return std::clamp(5 * frame_hold_, kJobFrameSeconds, kJobFrameSecondsMax);
    }
    // The main loop drew a frame at `t` and work waits between frames: the next task's
    // delay is what the frame held the main thread.
    void note_frame_drawn(double t) { t_drawn_ = t; }
    // ... and the first of them, for a job begun by a frame that was not drawn for it
    // (main.cpp): most Runs of a real model end before it, and a frame drawn holds a
    // headless main thread ~40 ms; an action over 200 ms still shows its progress.
    static constexpr double kJobFirstFrameSeconds = 0.2;
    bool work_between_frames();
    bool take_changed_between_frames() { return std::exchange(changed_between_frames_, false); }
    // A job, a file opening, a request waiting, or a replaced file still being freed.
    // Not a file the browser reads in: that is the browser's work, and tasks of ours
    // spinning meanwhile would only compete with its reads for the main thread.
    bool work_left() const {
        return busy() || opening_ || !to_open_.empty() || !requests_.empty() || cancel_requested_ ||
               freeing() || (arriving_ && arriving_->read);
    }
    double slice_seconds() const { return slice_seconds_; }
    void set_slice_seconds(double s) { slice_seconds_ = s; }

    // --- requests (applied by end_frame) --------------------------------------
    void post(Action a);
    void post_undo();
    void post_redo();
    void select(uint32_t id); // in the current view; 0 clears
    void set_view(GraphView v);
    void open_asset(const std::string& file); // a lesson graph, fetched from the site
    void open_picker();
    // Downloads the current program as a .pt2 torch.export.load reads
    // (Workspace::save_pt2, app_save.cpp); a refusal becomes the error banner.
    void save_file();
    // The name save_file() gives the download: the file's, with the last change's kind.
    std::string save_name() const;
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

    // --- lessons (app_lesson.cpp) ----------------------------------------------
    // The lessons the page ships (assets/lessons, fetched by the loader).
    const LessonCatalog& lessons() const { return catalog_; }
    // On a lesson's last step: the course's next lesson (in the page's language), else null.
    const Lesson* next_lesson() const;
    const std::string& lessons_error() const { return catalog_error_; }
    // What was wrong with the last deep link (#m00-9/1, #m00-4/0), "" when nothing.
    const std::string& link_notice() const { return link_notice_; }
    // A lesson file dropped on the page: shown as a lesson (it replaces the catalog's
    // lesson of its id and language until the page reloads) and checked as `pt2lab
    // lesson check` would, once its graphs are in (check_lesson_text).
    struct LessonPreview {
        std::string file, text, id;
        bool checked = false;
        bool ok = false;
        std::string notes; // the check's summary line, then its problems (file:line: ...)
    };
    // The dropped lesson being previewed, when the lesson shown is it.
    const LessonPreview* lesson_preview() const {
        return preview_ && lesson_ && lesson_->lesson().id == preview_->id ? &*preview_ : nullptr;
    }
    void dismiss_link_notice();
    // The step's graph in words (the text view): nodes by kind, ops, highlights, lint.
    nlohmann::json graph_description_json() const;
    // "zh-TW" | "en": the lesson's language, which is the page's (page_strings.h): the
    // learner's last choice, else the browser's (page_language).
    const std::string& lesson_lang() const { return lang_; }
    // The lesson being followed, or null (a file of one's own, or still loading).
    const LessonRunner* lesson() const { return lesson_.get(); }
    // A lesson waiting for its graphs to download ("" when none).
    const std::string& lesson_pending() const { return pending_id_; }
    const LessonProgress& progress(const std::string& id) const;
    // The lesson shown's checks answered right the first time, of those answered.
    std::pair<int, int> first_tries() const;
    // The current step's check answered before its button ran: a prediction, judged
    // (and the step done) once the button has run.
    bool check_is_prediction() const;
    // The step's `compare` graphs shown beside the step's own: (key, workspace, view).
    struct CompareGraph {
        std::string key;
        const Workspace* ws = nullptr;
        GraphView view = GraphView::Module;
    };
    std::vector<CompareGraph> compare_graphs() const;
    // The scene of any lesson graph (no diff overlay): the compare panes.
    const Scene& compare_scene(size_t index) const;
    // Requests (applied by end_frame, like every change).
    void open_lesson(const std::string& id, int step = 1); // 1-based step
    // A first visit (no lesson begun, the welcome never dismissed): the lesson list
    // says what the page is and offers the course's first lesson.
    bool first_visit() const;
    void dismiss_welcome();
    void lesson_go(int step);
    void lesson_perform(); // the step's button
    void lesson_answer(int option);
    void lesson_reset();
    void set_lesson_lang(const std::string& lang);
    void leave_lesson(); // back to the file the page had open before
    // The current step's prose as Markdown blocks (the intro too on step 1), parsed once per step.
    struct StepText {
        std::vector<MdBlock> intro, prose, after;
    };
    const StepText& step_text() const { return step_text_; }
    // The current step for the HTML text view (platform::set_text_view); "" without a lesson.
    std::string text_view_json() const;

    // --- frame ----------------------------------------------------------------
    // Takes the files that arrived (picked, dropped, fetched): each opens in
    // pieces, in turn, like a job (end_frame() steps its Opening by slice_seconds()
    // per frame); the page keeps showing and using the file it had until the new
    // one is open, and cancel_job() drops the opening. True if any arrived.
    bool take_files();
    // The file being opened: "resnet50.pt2 (103.6 MB)" while it opens, else "".
    std::string opening() const;
    // A file is opening: being read in by the browser (platform::file_reads) or opened.
    bool opening_file() const { return opening_ != nullptr || !reads_.empty() || arriving_; }
    // The open file's weights are still arriving (it opened before they were read in).
    bool arriving() const { return arriving_.has_value(); }
    OpenProgress open_progress() const; // of opening(); zeros when none
    // Files that arrived and wait for the one being opened.
    size_t files_waiting() const { return to_open_.size(); }
    // Opens bytes as a file at once (the page's first file, tests): on success the
    // workspace is replaced; on error the message is shown and everything stays as it was.
    bool open(std::vector<uint8_t> bytes, const std::string& name);
    // Applies the requests posted while drawing; true if there were any.
    bool end_frame();
    // The test hook's JSON (state_json.cpp).
    std::string state_json() const;
    // Whether something animates (the diff ghosts fade), so frames keep coming.
    bool animating() const;

private:
    bool end_frame_work();
    std::string doing() const; // what the open or the action in flight does now ("" if none)
    struct Request {
        enum class Kind {
            Apply,
            Undo,
            Redo,
            LessonOpen,
            LessonGo,
            LessonPerform,
            LessonAnswer,
            LessonReset,
            LessonLang,
            LessonLeave
        } kind = Kind::Apply;
        Action action;
        std::string text; // LessonOpen: the id; LessonLang: the language
        int number = 0;   // LessonOpen / LessonGo: the step; LessonAnswer: the option
    };
    struct ModuleRequest {
        enum class Kind { Toggle, All, None, Reveal } kind = Kind::Toggle;
        std::string path;
        uint32_t id = 0;
    };
    void apply_module(const ModuleRequest& r);
    // Every module expanded, or (a graph over kCollapseAbove nodes, unless the page
    // says otherwise) collapsed to the top level: for a workspace newly shown.
    void reset_modules();
    struct SceneCache {
        uint64_t shown = ~uint64_t(0); // shown_serial_ it was built for
        uint64_t epoch = 0;
        uint64_t modules_rev = 0;
        ModuleTree tree;
        uint64_t tree_shown = ~uint64_t(0), tree_epoch = 0; // what `tree` was built for
        bool diff = false;
        bool valid = false;
        Scene scene;
        Scene before; // the scene of the previous version (ghosts come from it)
    };
    void apply(const Request& r);
    // Advances the job and starts waiting requests until `budget` seconds have passed.
    bool work(double budget);
    void finish_job();
    // BenchLog::jobs: a job began, or the one in flight ended.
    void job_began(const Action& a, double compute);
    void job_began(const char* kind, std::string label, bool fast_kernels, double compute);
    void job_ended(bool ok, bool cancelled);
    // Adds the time since `since` to the job in flight's compute (BenchLog).
    void count_compute(double since);
    // Drops waiting requests that act on the open file (actions, undo, redo).
    size_t drop_file_requests();
    nlohmann::json lessons_json() const; // the test hook's "lessons" (state_json.cpp)
    // Settings, kept in localStorage between visits.
    void load_settings();
    void save_settings();
    void after_change(const ActionOutcome& out, bool user_action);
    // Lessons (app_lesson.cpp).
    void load_lessons();
    void apply_lesson(const Request& r);
    // A downloaded lesson graph ("lesson-asset:<path>"): kept for the runner; false for other
    // files.
    bool take_lesson_file(const std::string& name, std::vector<uint8_t>& bytes,
                          const std::string& error);
    void start_pending_lesson();
    // Takes the lesson files (*.md) of a batch of dropped files, with the graphs dropped
    // beside them that they name; what is left is opened as files.
    void take_dropped_lessons(std::vector<platform::OpenedFile>& files);
    void check_preview();
    // After the runner moved: view, selection, highlights, hash, text view. new_workspaces:
    // it replayed the steps from freshly opened files (not a step's own action).
    void enter_step(bool new_workspaces = true);
    void enter_step_text(); // the step's text (after a move or a language switch)
    void after_perform(const LessonStepReport& rep);
    void mark_done(LessonProgress& p, int step);
    void save_progress();
    // The lesson link the page opened with: the `step` URL option, else the hash.
    std::string start_link() const;
    void follow_hash(const std::string& hash);

    // Notes the open file's own words (node names, targets, module paths, stack traces).
    void note_graph_text(const Workspace& ws);

    std::unique_ptr<Workspace> ws_;
    GlyphWants glyphs_;
    std::vector<std::pair<FontFile, std::vector<uint8_t>>> font_pages_;
    UiState ui_;
    FileView view_;
    Settings settings_;
    PageOptions options_;
    BenchLog bench_;
    std::vector<std::string> lesson_files_;
    struct FileToOpen {
        std::string name;
        std::vector<uint8_t> bytes;
        // Or a buffer the browser is still writing the late ranges of (OpenedFile::late).
        std::shared_ptr<const std::vector<uint8_t>> shared;
        std::vector<ByteRange> late;
    };
    std::deque<FileToOpen> to_open_;   // arrived; opened in turn
    std::unique_ptr<Opening> opening_; // the one being opened, in pieces
    std::shared_ptr<const std::vector<uint8_t>>
        opening_late_; // its buffer, when it has late ranges
    // Its late ranges' read, when it ended before the open did (a fast disk, a small
    // file): finish_open hands it on to the file it became.
    std::optional<platform::LateReadDone> opening_late_done_;
    void begin_open();
    void finish_open();
    // The open file arrived before its late ranges (a big .pt2's weights): the browser
    // reads them, then Workspace::check_arrived checks them a piece at a time. Until the
    // file is whole, requests on it wait, and the file shown before it is held, to go
    // back to when the read or the check fails or is cancelled.
    struct Arriving {
        const void* buffer = nullptr;
        bool read = false;               // all the late bytes are in: checking them
        uint64_t done = 0, total = 0;    // late bytes read (then checked)
        std::unique_ptr<Workspace> held; // the file shown before, and how it was shown
        std::string held_name;
        FileView held_view;
    };
    std::optional<Arriving> arriving_;
    // Files whose open before their late ranges failed: they open again once read whole.
    std::vector<FileToOpen> reopen_;
    void late_read_done(const platform::LateReadDone& d);
    bool check_arriving(double seconds);                // true when it did something
    void give_back(const std::string& why, bool error); // to the file held
    void drop_opening(const std::string& why);          // "cancelled after 1.2 s (...)"
    // A file opened (at once or in pieces) becomes the page's: everything shown of it starts
    // afresh.
    // `late`: the file's buffer, whose late ranges are still arriving (nullptr: none).
    void adopt(std::unique_ptr<Workspace> ws, const std::string& name, uint64_t size,
               const void* late = nullptr);
    std::string file_name_;
    std::deque<Request> requests_; // in order; they wait while a job is in flight
    bool cancel_requested_ = false;
    double slice_seconds_ = kSliceSeconds;
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
    // Workspaces of the files replaced, freed over frames by end_frame (Workspace::shed).
    std::vector<std::unique_ptr<Workspace>> retired_;
    // The scene of a view, built now if `wait` is false or the frame has allowance.
    const Scene& scene_for(GraphView v, bool wait) const;
    std::vector<platform::FileRead> reads_; // files the browser is reading (take_files)
    double t_read_ = 0;                     // when the browser began reading them
    bool changed_between_frames_ = false; // work_between_frames did something since the last frame
    double t_drawn_ = 0;    // note_frame_drawn's time, until the next task between frames
    double frame_hold_ = 0; // seconds a drawn frame held the main thread (moving average)
    // Replaced files' workspaces, or states the open file's last action let go of
    // (Workspace::shed_dropped), still being freed.
    bool freeing() const { return !retired_.empty() || (ws_ && ws_->has_dropped()); }
    void shed_retired(double seconds); // frees replaced files' workspaces for up to `seconds`
    double frame_t0_ = 0;              // begin_frame(): platform::now_seconds()
    double end_ms_ = 0;                // the last end_frame()'s time (ms)
    std::string end_what_;             // what the job was doing when it began
    bool frame_began_ = false;         // begin_frame() ran since the last end_frame()
    double derive_allowance_ = kDeriveAllowance;
    mutable bool derived_in_frame_ = false; // a derived piece ran in this frame
    mutable bool derive_waited_ = false;    // a derived piece waited for a later frame
    mutable double scene_ms_ = 0;           // how long the last scene (labels + layout) took
    SceneMetrics metrics_;
    double diff_since_ = -1; // when the current diff appeared (its ghosts fade)
    std::string saved_settings_;
    std::optional<ActionOutcome> last_change_;
    uint64_t graph_epoch_ = 0;
    // Bumped whenever workspace() may return another object (an open, a lesson
    // step replayed from fresh files, leaving a lesson): the scene cache's key.
    uint64_t shown_serial_ = 0;

    LessonCatalog catalog_;
    // ?course=folder/: the course's URL (lessons and graphs come from it; web/loader.js)
    // and the graphs it lacked, fetched from the page's folder instead.
    std::string course_base_;
    std::set<std::string> course_fallback_;
    std::string catalog_error_;
    std::string lang_;
    std::unique_ptr<LessonRunner> lesson_;
    std::map<std::string, std::vector<uint8_t>> lesson_bytes_; // lesson graph path -> bytes
    std::optional<LessonPreview> preview_;
    std::set<std::string> requested_; // lesson graphs being fetched
    std::string pending_id_;          // waiting for its graphs
    int pending_step_ = 1;
    // The URL hash being followed (a link, Back, Forward): the step it leads to
    // replaces the history entry instead of adding one. "" for the learner's moves.
    std::string followed_hash_;
    // What was wrong with the last link followed ("" when nothing), shown until
    // the learner moves on; link_notice_keep_: the step it opened keeps it.
    std::string link_notice_;
    bool link_notice_keep_ = false;
    std::map<std::string, LessonProgress> progress_;
    bool welcomed_ = false; // the welcome was dismissed, or a lesson was opened from it
    mutable std::vector<SceneCache> compare_scenes_;
    StepText step_text_;
};

} // namespace pt2lab::app
