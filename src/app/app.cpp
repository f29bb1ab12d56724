// App: opening files, applying requests through the Workspace, the scene
// cache and the log (see app.h). Drawing is in ui/.
#include "app.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "platform/platform.h"

namespace pt2lab::app {

const char* tab_name(Tab t) {
    switch (t) {
    case Tab::Code: return "Code";
    case Tab::Run: return "Run & parity";
    case Tab::Observers: return "Observers";
    case Tab::Program: return "Signature & weights";
    case Tab::Log: return "Log";
    }
    return "";
}

Str tab_label(Tab t) {
    switch (t) {
    case Tab::Code: return Str::tab_code;
    case Tab::Run: return Str::tab_run;
    case Tab::Observers: return Str::tab_observers;
    case Tab::Program: return Str::tab_program;
    case Tab::Log: return Str::tab_log;
    }
    return Str::tab_code;
}

LayoutPoint world_to_screen(const Camera& c, const CanvasRect& r, LayoutPoint p) {
    float k = c.zoom * r.scale;
    return {r.x + r.w * 0.5f + (p.x - c.cx) * k, r.y + r.h * 0.5f + (p.y - c.cy) * k};
}

LayoutPoint screen_to_world(const Camera& c, const CanvasRect& r, LayoutPoint p) {
    float k = c.zoom * r.scale;
    return {c.cx + (p.x - r.x - r.w * 0.5f) / k, c.cy + (p.y - r.y - r.h * 0.5f) / k};
}

namespace {

// assets/graphs/index.json: ["conv_bn_relu_eval.pt2", ...] (written by scripts/build_web.sh).
std::vector<std::string> read_lesson_index() {
    std::vector<uint8_t> bytes = platform::preloaded("assets/graphs/index.json");
    std::vector<std::string> out;
    nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (!j.is_array()) return out;
    for (const auto& v : j)
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
}

std::string base_name(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

PageOptions parse_page_options(const std::function<std::string(const std::string&)>& option) {
    PageOptions o;
    o.bench = option("bench") == "1";
    o.auto_collapse = option("collapse") != "0";
    std::string hide = option("hide");
    size_t at = 0;
    while (at <= hide.size()) {
        size_t comma = hide.find(',', at);
        if (comma == std::string::npos) comma = hide.size();
        std::string panel = hide.substr(at, comma - at);
        if (panel == "left" || panel == "file" || panel == "lesson") o.hide_left = true;
        if (panel == "inspector" || panel == "right") o.hide_inspector = true;
        if (panel == "dock" || panel == "bottom") o.hide_dock = true;
        if (panel == "top") o.hide_top = true;
        at = comma + 1;
    }
    o.step = option("step");
    return o;
}

void App::record_frame(double build_ms, double loop_ms) {
    const double now = platform::now_seconds();
    // Drawn: every box of the new file's scene (its layout may come a frame after the open).
    if (bench_.awaiting_draw && (!ws_ || scene_current(view_.graph))) {
        bench_.t_drawn = now;
        bench_.awaiting_draw = false;
    }
    const double start = now - loop_ms / 1000;
    const float loop = static_cast<float>(loop_ms);
    const float gap = bench_.t_loop > 0 ? static_cast<float>((start - bench_.t_loop) * 1000) : 0;
    bench_.t_loop = start;
    // The jobs this call worked on (it began, advanced or ended them), and the one
    // that ended on the call before.
    for (auto it = bench_.jobs.rbegin(); it != bench_.jobs.rend(); ++it) {
        JobRecord& j = *it;
        if (!j.ended || j.t_end >= start) {
            if (j.frames++ > 0) j.max_gap_ms = std::max(j.max_gap_ms, gap);
            if (loop > j.max_loop_ms) {
                j.max_loop_ms = loop;
                j.max_loop_build_ms = static_cast<float>(build_ms);
                j.max_loop_end_ms = static_cast<float>(end_ms_);
                j.max_loop_what = end_what_;
            }
        } else if (j.next_loop_ms < 0) {
            j.next_loop_ms = loop;
            j.next_gap_ms = gap;
            j.t_shown = now;
        } else {
            break; // older jobs are done with
        }
    }
    if (!options_.bench) return;
    const size_t keep = 2000;
    if (bench_.build_ms.size() >= keep) {
        bench_.build_ms.erase(bench_.build_ms.begin(), bench_.build_ms.begin() + keep / 2);
        bench_.loop_ms.erase(bench_.loop_ms.begin(), bench_.loop_ms.begin() + keep / 2);
        bench_.gap_ms.erase(bench_.gap_ms.begin(), bench_.gap_ms.begin() + keep / 2);
    }
    bench_.build_ms.push_back(static_cast<float>(build_ms));
    bench_.loop_ms.push_back(loop);
    bench_.gap_ms.push_back(gap);
}

void App::job_began(const Action& a, double compute) {
    job_began(action_kind_name(a.kind), a.label, a.fast_kernels, compute);
}

void App::job_began(const char* kind, std::string label, bool fast_kernels, double compute) {
    while (bench_.jobs.size() >= BenchLog::kKeepJobs) bench_.jobs.pop_front();
    JobRecord j;
    j.kind = kind;
    j.label = std::move(label);
    j.fast_kernels = fast_kernels;
    j.t_start = platform::now_seconds() - compute;
    j.compute = compute;
    bench_.jobs.push_back(std::move(j));
}

void App::count_compute(double since) {
    if (!bench_.jobs.empty() && !bench_.jobs.back().ended)
        bench_.jobs.back().compute += platform::now_seconds() - since;
}

void App::job_ended(bool ok, bool cancelled) {
    if (bench_.jobs.empty() || bench_.jobs.back().ended) return;
    JobRecord& j = bench_.jobs.back();
    j.ended = true;
    j.ok = ok;
    j.cancelled = cancelled;
    j.t_end = platform::now_seconds();
    ++bench_.jobs_done;
}

namespace {

const char kFontPage[] = "pt2lab:font/"; // fetch name prefix of a font page

std::string text_of(const std::vector<uint8_t>& bytes) {
    return std::string(bytes.begin(), bytes.end());
}

} // namespace

App::App() : lesson_files_(read_lesson_index()) {
    glyphs_.reset(text_of(platform::preloaded("fonts/chars.txt")),
                  text_of(platform::preloaded("fonts/more/index.txt")));
    options_ = parse_page_options(platform::url_option);
    metrics_.text_width = [](const std::string& s, bool mono) {
        return static_cast<float>(s.size()) * (mono ? 8.f : 7.f);
    };
    load_settings();
    load_lessons();
    platform::set_between_frames([this] { return work_between_frames(); });
}

const Workspace* App::workspace() const {
    return lesson_ ? &lesson_->step_workspace() : ws_.get();
}

void App::load_settings() {
    saved_settings_ = platform::load_setting("layout");
    nlohmann::json j = nlohmann::json::parse(saved_settings_, nullptr, false);
    if (!j.is_object()) return;
    Settings& st = settings_;
    auto frac = [&](const char* key, float& out, float lo, float hi) {
        auto it = j.find(key);
        if (it != j.end() && it->is_number()) out = std::clamp(it->get<float>(), lo, hi);
    };
    frac("left", st.left_frac, 0.12f, 0.45f);
    frac("right", st.right_frac, 0.12f, 0.45f);
    frac("bottom", st.bottom_frac, 0.12f, 0.7f);
    auto tab = j.find("tab");
    if (tab != j.end() && tab->is_number_integer()) {
        int t = tab->get<int>();
        if (t >= 0 && t <= static_cast<int>(Tab::Log)) show_tab(static_cast<Tab>(t));
    }
    auto form = j.find("code_form");
    if (form != j.end() && form->is_number_integer()) {
        int f = form->get<int>();
        if (f >= 0 && f <= static_cast<int>(CodeForm::Script))
            st.code_form = static_cast<CodeForm>(f);
    }
    auto flag = [&](const char* key, bool& out) {
        auto it = j.find(key);
        if (it != j.end() && it->is_boolean()) out = it->get<bool>();
    };
    flag("auto_run", st.auto_run);
    flag("fast_kernels", st.fast_kernels);
    flag("weights_inside", st.weights_inside);
}

void App::save_settings() {
    const Settings& st = settings_;
    nlohmann::json j = {{"left", st.left_frac},
                        {"right", st.right_frac},
                        {"bottom", st.bottom_frac},
                        {"tab", static_cast<int>(st.tab)},
                        {"code_form", static_cast<int>(st.code_form)},
                        {"auto_run", st.auto_run},
                        {"fast_kernels", st.fast_kernels},
                        {"weights_inside", st.weights_inside}};
    std::string text = j.dump();
    if (text == saved_settings_) return;
    saved_settings_ = text;
    platform::save_setting("layout", text);
}

App::~App() {
    platform::set_between_frames(nullptr);
}

void App::set_scene_metrics(SceneMetrics m) {
    metrics_ = std::move(m);
    for (SceneCache& c : scenes_) c.valid = false;
}

const Scene& App::scene(GraphView v) const {
    return scene_for(v, true);
}

bool App::scene_current(GraphView v) const {
    const SceneCache& c = scenes_[v == GraphView::Program ? 0 : 1];
    return c.valid && c.shown == shown_serial_ && c.epoch == graph_epoch_;
}

uint64_t App::scene_epoch(GraphView v) const {
    scene(v);
    return scenes_[v == GraphView::Program ? 0 : 1].epoch;
}

void App::begin_frame() {
    frame_t0_ = platform::now_seconds();
    frame_began_ = true;
    derived_in_frame_ = false;
    derive_waited_ = false;
}

bool App::may_derive() const {
    if (!derived_in_frame_ || platform::now_seconds() - frame_t0_ < derive_allowance_) return true;
    derive_waited_ = true;
    return false;
}

const Scene& App::scene_for(GraphView v, bool wait) const {
    const Workspace* ws = workspace();
    SceneCache& c = scenes_[v == GraphView::Program ? 0 : 1];
    const std::optional<ActionOutcome>& out = last_change_;
    bool diff = view_.show_diff && out && out->view == v && !out->diff.empty();
    if (c.valid && c.shown == shown_serial_ && c.epoch == graph_epoch_ && c.diff == diff &&
        c.modules_rev == modules_rev_)
        return c.scene;
    // A new version: its tree, then its scene, each a piece of a frame. Meanwhile
    // the last version's scene shows, or none (a view or file not drawn before:
    // the graph view says it is laying the graph out).
    if (c.shown != shown_serial_ && !c.scene.nodes.empty()) c.scene = Scene{}; // another file's
    if (c.tree_shown != shown_serial_ || c.tree_epoch != graph_epoch_) {
        if (wait && !may_derive()) return c.scene;
        c.tree = build_module_tree(ws->graph(v), v == GraphView::Program && ws->has_program()
                                                     ? &ws->program().signature
                                                     : nullptr);
        c.tree_shown = shown_serial_;
        c.tree_epoch = graph_epoch_;
        derived();
    }
    if (wait && !may_derive()) return c.scene;
    size_t vi = v == GraphView::Program ? 0 : 1;
    ExpandedSet all;
    if (view_.expand_all[vi]) all = c.tree.all_paths();
    if (c.shown != shown_serial_)
        c.before = Scene{};
    else if (c.epoch != graph_epoch_ && c.valid)
        c.before = std::move(c.scene);
    SceneContext ctx;
    if (v == GraphView::Program && ws->has_program()) ctx.signature = &ws->program().signature;
    if (v == GraphView::Module) ctx.submodules = &ws->module().submodules;
    ctx.modules = &c.tree;
    ctx.expanded = view_.expand_all[vi] ? &all : &view_.expanded[vi];
    ctx.weights_inside = view_.weights_inside;
    double t0 = platform::now_seconds();
    c.scene = build_scene(ws->graph(v), ctx, metrics_, diff ? &out->diff : nullptr,
                          diff ? &c.before : nullptr);
    scene_ms_ = (platform::now_seconds() - t0) * 1000;
    ++scene_builds_;
    for (const Workspace::UnsupportedOp& u : ws->unsupported_ops(v))
        for (uint32_t id : u.nodes)
            if (int i = c.scene.find_id(id); i >= 0)
                c.scene.nodes[static_cast<size_t>(i)].runnable = false;
    c.shown = shown_serial_;
    c.epoch = graph_epoch_;
    c.diff = diff;
    c.modules_rev = modules_rev_;
    c.valid = true;
    derived();
    return c.scene;
}

void App::update_search() const {
    const Scene& sc = scene(view_.graph);
    if (search_.builds == scene_builds_ && search_.query == view_.search &&
        search_.view == view_.graph)
        return;
    search_.builds = scene_builds_;
    search_.query = view_.search;
    search_.view = view_.graph;
    search_.ids.clear();
    search_.marks.assign(sc.nodes.size(), 0);
    if (view_.search.empty()) return;
    const Workspace* ws = workspace();
    const GraphSignature* sig =
        view_.graph == GraphView::Program && ws->has_program() ? &ws->program().signature : nullptr;
    SceneNode probe;
    InputSpecIndex specs = index_inputs(sig);
    for (const Node* n : ws->graph(view_.graph).nodes()) {
        probe.name = n->name();
        probe.target = n->target();
        probe.kind = node_kind_label(*n, sig, specs);
        if (!scene_node_matches(probe, view_.search)) continue;
        search_.ids.push_back(n->id());
        if (int i = sc.find_shown(n->id()); i >= 0) search_.marks[static_cast<size_t>(i)] = 1;
    }
    for (size_t i = 0; i < sc.nodes.size(); ++i) // ghosts match by their own labels
        if (!sc.nodes[i].id && sc.nodes[i].group < 0 &&
            scene_node_matches(sc.nodes[i], view_.search))
            search_.marks[i] = 1;
}

const std::vector<uint32_t>& App::search_ids() const {
    update_search();
    return search_.ids;
}

const std::vector<uint8_t>& App::search_marks() const {
    update_search();
    return search_.marks;
}

const ModuleTree& App::modules(GraphView v) const {
    scene(v); // the tree of the shown scene (the last version's while the new one waits)
    return scenes_[v == GraphView::Program ? 0 : 1].tree;
}

void App::toggle_module(const std::string& path) {
    module_requests_.push_back({ModuleRequest::Kind::Toggle, path, 0});
}

void App::expand_all_modules(bool expand) {
    module_requests_.push_back(
        {expand ? ModuleRequest::Kind::All : ModuleRequest::Kind::None, "", 0});
}

void App::expand_to(uint32_t id) {
    module_requests_.push_back({ModuleRequest::Kind::Reveal, "", id});
}

void App::apply_module(const ModuleRequest& r) {
    const Workspace* ws = workspace();
    if (!ws) return;
    size_t vi = view_.graph == GraphView::Program ? 0 : 1;
    scene_for(view_.graph, false); // a request acts on the current version's tree
    const ModuleTree& tree = modules(view_.graph);
    ExpandedSet& ex = view_.expanded[vi];
    if (view_.expand_all[vi] && r.kind != ModuleRequest::Kind::All) {
        ex = tree.all_paths();
        view_.expand_all[vi] = false;
    }
    switch (r.kind) {
    case ModuleRequest::Kind::Toggle: {
        int g = tree.find(r.path);
        if (g <= 0) return;
        if (ex.erase(r.path) == 0) {
            ex.insert(r.path);
        } else { // collapsing a module collapses what it holds too
            std::vector<int> todo{g};
            while (!todo.empty()) {
                int at = todo.back();
                todo.pop_back();
                ex.erase(tree.groups[static_cast<size_t>(at)].path);
                for (int c : tree.groups[static_cast<size_t>(at)].children) todo.push_back(c);
            }
        }
        break;
    }
    case ModuleRequest::Kind::All:
        view_.expand_all[vi] = true;
        ex.clear();
        view_.camera[vi].fitted = false; // a new layout: show all of it
        break;
    case ModuleRequest::Kind::None:
        ex.clear();
        view_.camera[vi].fitted = false;
        break;
    case ModuleRequest::Kind::Reveal: {
        std::vector<Node*> nodes = ws->graph(view_.graph).nodes();
        for (size_t i = 0; i < nodes.size() && i < tree.node_group.size(); ++i) {
            if (nodes[i]->id() != r.id) continue;
            for (int g : tree.chain(tree.node_group[i]))
                ex.insert(tree.groups[static_cast<size_t>(g)].path);
        }
        select(r.id);
        view_.reveal = r.id;
        break;
    }
    }
    ++modules_rev_;
}

const Node* App::selected_node() const {
    const Workspace* ws = workspace();
    if (!ws || view_.selected == 0) return nullptr;
    return ws->node(view_.graph, view_.selected);
}

ShownKey App::shown_key() const {
    const Workspace* ws = workspace();
    return {graph_epoch_, ws ? ws->version() : 0, view_.graph};
}

void App::set_fast_kernels(bool on) {
    view_.fast_kernels = on;
    bool lesson_graph = false;
    for (const std::string& f : lesson_files_) lesson_graph |= f == file_name_;
    if (!lesson_graph) settings_.fast_kernels = on;
}

void App::set_weights_inside(bool on) {
    if (view_.weights_inside == on) return;
    view_.weights_inside = on;
    ++modules_rev_; // the scene is built again (the camera fits the new layout)
    bool lesson_graph = false;
    for (const std::string& f : lesson_files_) lesson_graph |= f == file_name_;
    if (!lesson_graph) settings_.weights_inside = on;
}

bool App::run_changes_state() const {
    const Workspace* ws = workspace();
    return ws && ws->run_changes_state();
}

bool App::busy() const {
    return ws_ && ws_->busy();
}

const Action* App::job_action() const {
    return ws_ ? ws_->pending_action() : nullptr;
}

ActionProgress App::job_progress() const {
    return busy() ? ws_->progress() : ActionProgress{};
}

void App::cancel_job() {
    if (busy() || opening_file()) cancel_requested_ = true;
}

namespace {
std::string megabytes(uint64_t bytes) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return s;
}
} // namespace

std::string App::opening() const {
    if (arriving_ && ws_) return file_name_ + " (" + megabytes(ws_->file_size()) + ")";
    if (opening_)
        return base_name(opening_->file()) + " (" + megabytes(opening_->file_size()) + ")";
    if (!reads_.empty())
        return base_name(reads_.back().name) + " (" + megabytes(reads_.back().total) + ")";
    return "";
}

OpenProgress App::open_progress() const {
    if (opening_) return opening_->progress();
    OpenProgress p;
    if (arriving_) {
        // The file is shown; the browser reads its weights in, then they are checked.
        const Arriving& a = *arriving_;
        char done[32];
        std::snprintf(done, sizeof done, "%.1f", static_cast<double>(a.done) / 1e6);
        p.what = std::string(a.read ? "checking the weights: " : "reading the weights: ") + done +
                 " of " + megabytes(a.total);
        p.done = a.total ? std::min<uint64_t>(a.done * 1000 / a.total, 1000) : 0;
        p.total = 1000;
        p.seconds = platform::now_seconds() - t_read_;
        return p;
    }
    if (reads_.empty()) return p;
    // The browser reads the file in: the first part of its open.
    const platform::FileRead& r = reads_.back();
    char done[32];
    std::snprintf(done, sizeof done, "%.1f", static_cast<double>(r.done) / 1e6);
    p.what = std::string("reading the file: ") + done + " of " + megabytes(r.total);
    p.done = r.total ? r.done * 1000 / r.total : 0;
    p.total = 1000;
    p.seconds = platform::now_seconds() - t_read_;
    return p;
}

void App::post(Action a) {
    if (a.kind == Action::Kind::Run || a.kind == Action::Kind::Calibrate)
        a.fast_kernels = view_.fast_kernels;
    requests_.push_back({Request::Kind::Apply, std::move(a), {}, 0});
}

void App::post_undo() {
    requests_.push_back({Request::Kind::Undo, {}, {}, 0});
}

void App::post_redo() {
    requests_.push_back({Request::Kind::Redo, {}, {}, 0});
}

void App::select(uint32_t id) {
    view_.selected = id;
    view_.scroll_code_to_selection = id != 0;
}

void App::set_view(GraphView v) {
    const Workspace* ws = workspace();
    if (v == GraphView::Program && (!ws || !ws->has_program())) return;
    if (v == view_.graph) return;
    // Keep the selection when the other graph has a node of the same name
    // (conv2d is in both; p_conv_weight becomes the get_attr conv_weight only by meaning).
    const Node* sel = selected_node();
    view_.graph = v;
    view_.selected = 0;
    if (sel)
        if (const Node* same = ws->find(v, sel->name())) view_.selected = same->id();
}

void App::open_asset(const std::string& file) {
    log(LogLine::Kind::Info, "fetching assets/graphs/" + file);
    platform::fetch_file("assets/graphs/" + file, file);
}

void App::open_picker() {
    platform::open_file_picker();
}

void App::copy(const std::string& text, const std::string& what) {
    platform::set_clipboard(text);
    ui_.copied_what = what;
    ui_.copied_bytes = text.size();
    log(LogLine::Kind::Info, "copied " + what + " (" + std::to_string(text.size()) + " bytes)");
}

void App::fetch_glyph_pages() {
    for (FontFile f : glyphs_.take_fetches()) {
        const std::string stem = font_file_stem(f);
        platform::fetch_file("fonts/more/" + stem + ".otf", kFontPage + stem);
    }
}

std::vector<std::pair<FontFile, std::vector<uint8_t>>> App::take_font_pages() {
    std::vector<std::pair<FontFile, std::vector<uint8_t>>> out;
    out.swap(font_pages_);
    return out;
}

void App::note_graph_text(const Workspace& ws) {
    for (GraphView v : {GraphView::Program, GraphView::Module}) {
        if (v == GraphView::Program && !ws.has_program()) continue;
        for (const Node* n : ws.graph(v).nodes()) {
            glyphs_.note(n->name());
            glyphs_.note(n->target());
            glyphs_.note(n->meta.stack_trace);
            for (const ModuleStackEntry& e : n->meta.nn_module_stack) {
                glyphs_.note(e.path);
                glyphs_.note(e.type);
            }
        }
    }
}

void App::log(LogLine::Kind kind, std::string text) {
    glyphs_.note(text);
    ui_.log.push_back({kind, std::move(text), platform::now_seconds()});
    const size_t keep = 500;
    if (ui_.log.size() > keep) ui_.log.erase(ui_.log.begin(), ui_.log.end() - keep);
}

void App::show_tab(Tab t) {
    settings_.tab = t;
    ui_.tab_requested = true;
}

bool App::take_files() {
    const size_t reading = reads_.size();
    const uint64_t arrived_before = arriving_ ? arriving_->done : 0;
    reads_.clear();
    for (platform::FileRead& r : platform::file_reads()) {
        if (r.late && arriving_ && r.buffer == arriving_->buffer) {
            if (!arriving_->read) arriving_->done = r.done, arriving_->total = r.total;
            continue;
        }
        const bool reopen = std::any_of(reopen_.begin(), reopen_.end(), [&](const FileToOpen& f) {
            return f.shared->data() == r.buffer;
        });
        if (r.late && !reopen) continue; // the late read of a file given up (being cancelled)
        reads_.push_back(std::move(r));
    }
    if (reading == 0 && !reads_.empty()) t_read_ = platform::now_seconds();
    std::vector<platform::OpenedFile> files = platform::take_opened();
    take_dropped_lessons(files);
    bool lesson_files = false;
    for (platform::OpenedFile& f : files) {
        if (f.name.rfind(kFontPage, 0) == 0) {
            const std::string stem = f.name.substr(sizeof kFontPage - 1);
            const std::optional<FontFile> file = parse_font_file_stem(stem);
            if (!file) continue; // not a name fetch_glyph_pages gives
            if (!f.error.empty() || f.bytes.empty()) {
                glyphs_.file_failed(*file);
                log(LogLine::Kind::Warning, "font page " + stem + ": " +
                                                (f.error.empty() ? "empty" : f.error) +
                                                "; its characters show as ?");
                continue;
            }
            glyphs_.file_arrived(*file);
            font_pages_.emplace_back(*file, std::move(f.bytes));
            continue;
        }
        glyphs_.note(f.name);
        if (take_lesson_file(f.name, f.bytes, f.error)) {
            lesson_files = true;
            continue;
        }
        if (!f.error.empty()) {
            view_.error = f.name + ": " + f.error;
            log(LogLine::Kind::Error, view_.error);
            continue;
        }
        bench_.t_arrived = platform::now_seconds();
        // work() opens it
        to_open_.push_back({f.name, std::move(f.bytes), std::move(f.shared), std::move(f.late)});
    }
    // After the files: a late read can end in the same frame its file arrived.
    bool late_done = false;
    for (const platform::LateReadDone& d : platform::take_late_reads_done()) {
        late_read_done(d);
        late_done = true;
    }
    if (lesson_files) start_pending_lesson();
    std::string hash = platform::take_hash_change();
    if (!hash.empty()) follow_hash(hash);
    return !files.empty() || !hash.empty() || reading != reads_.size() || late_done ||
           (arriving_ && arriving_->done != arrived_before);
}

void App::late_read_done(const platform::LateReadDone& d) {
    // The read can end before the open it feeds: while the file waits its turn...
    for (auto f = to_open_.begin(); f != to_open_.end(); ++f) {
        if (!f->shared || f->late.empty() || f->shared->data() != d.buffer) continue;
        if (d.error.empty()) {
            f->late.clear(); // whole now: it opens as any other file
            return;
        }
        const std::string name = f->name;
        to_open_.erase(f);
        if (d.error != "cancelled") {
            view_.error = base_name(name) + ": " + d.error;
            log(LogLine::Kind::Error, view_.error);
        }
        return;
    }
    // ...or while it is being opened: then the file it becomes takes it.
    if (opening_late_ && opening_late_->data() == d.buffer) {
        opening_late_done_ = d;
        return;
    }
    for (size_t k = 0; k < reopen_.size(); ++k) {
        if (reopen_[k].shared->data() != d.buffer) continue;
        FileToOpen f = std::move(reopen_[k]);
        reopen_.erase(reopen_.begin() + static_cast<std::ptrdiff_t>(k));
        if (d.error.empty()) {
            f.late.clear(); // whole now: it opens as any other file
            to_open_.push_back(std::move(f));
        } else if (d.error != "cancelled") {
            view_.error = base_name(f.name) + ": " + d.error;
            log(LogLine::Kind::Error, view_.error);
        }
        return;
    }
    if (!arriving_ || arriving_->buffer != d.buffer) return; // a file given up
    if (!d.error.empty()) {
        if (d.error != "cancelled") give_back(d.error, true);
        return;
    }
    arriving_->read = true; // every byte is in: work() checks them
    arriving_->done = 0;
}

bool App::check_arriving(double seconds) {
    if (!arriving_ || !arriving_->read || !ws_) return false;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(std::max(seconds, 1e-6)));
    uint64_t done = 0, total = 0;
    const double t0 = platform::now_seconds();
    Result<bool> r = ws_->check_arrived(deadline, &done, &total);
    count_compute(t0);
    if (!r.ok()) {
        give_back(r.error().str(), true);
        return true;
    }
    arriving_->done = done;
    arriving_->total = total;
    if (!r.value()) return true;
    // Whole: the file shown before goes, and what waited for the weights runs.
    if (arriving_->held) retired_.push_back(std::move(arriving_->held));
    arriving_.reset();
    bench_.t_whole = platform::now_seconds();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f s", bench_.t_whole - t_read_);
    log(LogLine::Kind::Info, file_name_ + ": every weight is in and checked (" + megabytes(total) +
                                 ", " + secs + " after the read began)");
    return true;
}

void App::give_back(const std::string& why, bool error) {
    if (!arriving_) return;
    Arriving a = std::move(*arriving_);
    arriving_.reset();
    if (!a.read) platform::cancel_late_read(a.buffer);
    const std::string gone = file_name_;
    drop_file_requests(); // they were for the file that goes
    if (ws_) retired_.push_back(std::move(ws_));
    ws_ = std::move(a.held);
    file_name_ = a.held_name;
    view_ = std::move(a.held_view);
    ++shown_serial_;
    ++modules_rev_;
    for (SceneCache& c : scenes_) c = SceneCache{};
    diff_since_ = -1;
    last_change_.reset();
    ++graph_epoch_;
    std::string back = ws_ ? file_name_ + " is shown again" : "no file is open";
    if (error) {
        view_.error = gone + ": " + why;
        log(LogLine::Kind::Error, "could not read " + view_.error + "; " + back);
    } else {
        log(LogLine::Kind::Info, "opening " + gone + " " + why + "; " + back);
    }
}

void App::begin_open() {
    FileToOpen f = std::move(to_open_.front());
    to_open_.pop_front();
    bench_.t_open_call = platform::now_seconds();
    job_began("open", base_name(f.name), false, 0);
    opening_late_.reset();
    opening_late_done_.reset();
    if (f.shared) {
        OpenOptions opt;
        opt.late = std::move(f.late);
        if (!opt.late.empty()) opening_late_ = f.shared;
        opening_ = std::make_unique<Opening>(std::move(f.shared), f.name, std::move(opt));
    } else {
        opening_ = std::make_unique<Opening>(std::move(f.bytes), f.name);
    }
}

void App::finish_open() {
    std::unique_ptr<Opening> o = std::move(opening_);
    const double t0 = platform::now_seconds();
    auto ws = o->finish();
    count_compute(t0);
    std::shared_ptr<const std::vector<uint8_t>> late = std::move(opening_late_);
    std::optional<platform::LateReadDone> late_done = std::move(opening_late_done_);
    opening_late_done_.reset();
    if (!ws.ok() && late) {
        // Opened before its weights, it needs more of them than the open may view (a
        // copy of one): it opens once read whole, and an error then is the file's.
        job_ended(false, true);
        reopen_.push_back({o->file(), {}, late, {}});
        log(LogLine::Kind::Info,
            base_name(o->file()) + " opens once it is read whole (" + ws.error().message + ")");
        if (late_done) late_read_done(*late_done);
        return;
    }
    job_ended(ws.ok(), false);
    if (!ws.ok()) {
        view_.error = ws.error().str();
        log(LogLine::Kind::Error, "could not open " + view_.error);
        return;
    }
    adopt(ws.take(), o->file(), o->file_size(), late ? late->data() : nullptr);
    bench_.t_opened = platform::now_seconds();
    bench_.awaiting_draw = true;
    if (late_done) late_read_done(*late_done);
}

void App::drop_opening(const std::string& why) {
    if (!opening_) return;
    std::string text = "opening " + base_name(opening_->file()) + " " + why;
    opening_.reset();
    opening_late_.reset();
    opening_late_done_.reset();
    job_ended(false, true);
    if (!to_open_.empty()) {
        text += ", and " + std::to_string(to_open_.size()) + " file(s) waiting to open";
        to_open_.clear();
    }
    log(LogLine::Kind::Info, text + "; " + (ws_ ? file_name_ + " stays open" : "no file is open"));
}

bool App::open(std::vector<uint8_t> bytes, const std::string& name) {
    size_t size = bytes.size();
    auto ws = Workspace::open(std::move(bytes), name);
    if (!ws.ok()) {
        view_.error = ws.error().str();
        log(LogLine::Kind::Error, "could not open " + view_.error);
        return false;
    }
    adopt(ws.take(), name, size);
    return true;
}

void App::adopt(std::unique_ptr<Workspace> ws, const std::string& name, uint64_t size,
                const void* late) {
    // A file still arriving goes, and so does the one held behind it.
    if (arriving_) {
        if (!arriving_->read) platform::cancel_late_read(arriving_->buffer);
        if (arriving_->held) retired_.push_back(std::move(arriving_->held));
        arriving_.reset();
    }
    // The first file is the page's backdrop: a deep link's lesson still opens over it.
    bool first = ws_ == nullptr;
    if (busy()) {
        log(LogLine::Kind::Info, std::string(action_kind_name(ws_->pending_action()->kind)) +
                                     " cancelled: " + base_name(name) + " was opened");
        ws_->cancel();
        job_ended(false, true);
    }
    cancel_requested_ = false;
    drop_file_requests(); // they were for the file that goes
    if (!first && (lesson_ || !pending_id_.empty())) {
        lesson_.reset();
        pending_id_.clear();
        platform::set_text_view("");
    }
    // The file replaced goes over the next frames (Workspace::shed): a 20k-node
    // history freed at once held a frame for 190 ms; or, while the new file's weights
    // arrive, it is held to go back to.
    if (late) {
        arriving_.emplace();
        arriving_->buffer = late;
        arriving_->held = std::move(ws_);
        arriving_->held_name = file_name_;
        arriving_->held_view = std::move(view_);
    }
    if (ws_) retired_.push_back(std::move(ws_));
    ws_ = std::move(ws);
    ws_->set_shed_dropped_later(true); // shed_retired frees it between frames
    file_name_ = base_name(name);
    note_graph_text(*ws_);
    // Everything shown of a file starts afresh; settings and the log stay.
    view_ = FileView{};
    view_.graph = ws_->has_program() ? GraphView::Program : GraphView::Module;
    ui_.tab_requested = true;
    ++shown_serial_;
    reset_modules();
    for (SceneCache& c : scenes_) c = SceneCache{};
    diff_since_ = -1;
    last_change_.reset();
    ++graph_epoch_;
    log(LogLine::Kind::Info, "opened " + file_name_ + " (" + std::to_string(size) + " bytes, " +
                                 std::to_string(ws_->graph(view_.graph).size()) + " nodes)");
    bool lesson = false;
    for (const std::string& f : lesson_files_) lesson |= f == file_name_;
    view_.fast_kernels = !lesson && settings_.fast_kernels;
    view_.weights_inside = !lesson && settings_.weights_inside;
    // A deep link the page was opened with stays until its lesson is there.
    std::string id;
    int step = 0;
    bool deep_link = first && LessonRunner::parse_deep_link(start_link(), id, step);
    if (pending_id_.empty() && !lesson_ && !deep_link)
        platform::set_url_hash(lesson ? "file=" + file_name_ : "");
}

void App::reset_modules() {
    const Workspace* ws = workspace();
    for (size_t vi = 0; vi < 2; ++vi) {
        GraphView v = vi == 0 ? GraphView::Program : GraphView::Module;
        view_.expanded[vi].clear();
        view_.expand_all[vi] = !ws || (v == GraphView::Program && !ws->has_program()) ||
                               !options_.auto_collapse || ws->graph(v).size() <= kCollapseAbove;
    }
    module_requests_.clear();
    ++modules_rev_;
}

size_t App::drop_file_requests() {
    size_t before = requests_.size();
    requests_.erase(
        std::remove_if(requests_.begin(), requests_.end(),
                       [](const Request& r) { return r.kind < Request::Kind::LessonOpen; }),
        requests_.end());
    return before - requests_.size();
}

std::string App::doing() const {
    if (opening_) return "open: " + opening_->progress().what;
    return busy() ? ws_->progress().what : std::string();
}

bool App::end_frame() {
    const double t_end0 = platform::now_seconds();
    end_what_ = doing();
    bool did = end_frame_work();
    end_ms_ = (platform::now_seconds() - t_end0) * 1000;
    return did;
}

bool App::end_frame_work() {
    bool did = false;
    if (cancel_requested_) {
        cancel_requested_ = false;
        if (!reads_.empty() && !opening_) {
            platform::cancel_file_reads();
            OpenProgress p = open_progress();
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.1f s", p.seconds);
            log(LogLine::Kind::Info, "opening " + base_name(reads_.back().name) +
                                         " cancelled after " + secs + " (" + p.what + "); " +
                                         (ws_ ? file_name_ + " stays open" : "no file is open"));
            reads_.clear();
            did = true;
        } else if (opening_) {
            OpenProgress p = opening_->progress();
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.1f s", p.seconds);
            drop_opening(std::string("cancelled after ") + secs + " (" + p.what + ")");
            if (!reads_.empty()) platform::cancel_file_reads(); // the files behind it go too
            reads_.clear();
            did = true;
        } else if (arriving_ && !busy()) {
            OpenProgress p = open_progress();
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.1f s", p.seconds);
            give_back(std::string("cancelled after ") + secs + " (" + p.what + ")", false);
            did = true;
        } else if (busy()) {
            ActionProgress p = ws_->progress();
            std::string kind = action_kind_name(ws_->pending_action()->kind);
            ws_->cancel();
            job_ended(false, true);
            size_t dropped = drop_file_requests();
            char secs[32];
            std::snprintf(secs, sizeof secs, "%.1f s", p.seconds);
            log(LogLine::Kind::Info,
                kind + " cancelled after " + secs + " (" + p.what + "); nothing changed" +
                    (dropped ? ", " + std::to_string(dropped) + " waiting request(s) dropped"
                             : ""));
            did = true;
        }
    }
    // The job's slice is what the frame has left of kFrameTarget after drawing (a
    // frame that drew a big graph's new scene moves the job less), at least a fifth.
    double slice = slice_seconds_;
    if (frame_began_)
        slice = std::clamp(kFrameTarget - (platform::now_seconds() - frame_t0_),
                           slice_seconds_ * 0.2, slice_seconds_);
    did |= work(slice);
    // Workspaces of files replaced: freed in what is left of the frame's target.
    shed_retired(frame_began_ ? kFrameTarget - (platform::now_seconds() - frame_t0_) : 0.0);
    frame_began_ = false;
    std::vector<ModuleRequest> mods;
    mods.swap(module_requests_);
    for (const ModuleRequest& r : mods) apply_module(r);
    save_settings();
    return did || !mods.empty() || busy() || freeing();
}

void App::shed_retired(double seconds) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(std::max(seconds, 0.001)));
    if (ws_ && !ws_->shed_dropped(deadline)) return;
    while (!retired_.empty()) {
        if (!retired_.front()->shed(deadline)) break;
        retired_.erase(retired_.begin());
    }
}

bool App::work_between_frames() {
    // A cancel waits for the frame that asked for it (end_frame applies it first).
    if (cancel_requested_) return false;
    const double t0 = platform::now_seconds();
    // A file that arrived since the last frame opens now, not at the next display frame
    // (its arrival woke this task: platform/web_files.cpp). What else arrived with it (an
    // error, a lesson, a font page) is drawn by the next frame.
    if (take_files() && !opening_file()) changed_between_frames_ = true;
    if (t_drawn_ > 0) {
        const double hold = t0 - t_drawn_;
        frame_hold_ = frame_hold_ > 0 ? 0.7 * frame_hold_ + 0.3 * hold : hold;
        t_drawn_ = 0;
    }
    const double budget = std::min(kTaskSeconds, slice_seconds_); // tests make both tiny
    std::string what = doing();
    bool did = work(budget);
    const double left = budget - (platform::now_seconds() - t0);
    // What is left of the task frees what finished actions and replaced files let go of;
    // a task that had nothing else to do frees some however little is left (at least a
    // millisecond's worth: shed_retired), or it would stay armed for nothing.
    if (freeing() && (left > 0 || !did)) shed_retired(left);
    changed_between_frames_ |= did;
    const float ms = static_cast<float>((platform::now_seconds() - t0) * 1000);
    bench_.max_task_ms = std::max(bench_.max_task_ms, ms);
    if (!bench_.jobs.empty() && (!bench_.jobs.back().ended || did)) {
        JobRecord& j = bench_.jobs.back();
        if (ms > j.max_task_ms) {
            j.max_task_ms = ms;
            j.max_task_what = std::move(what);
        }
        ++j.tasks;
    }
    return work_left();
}

bool App::work(double budget) {
    const double t0 = platform::now_seconds();
    auto left = [&] { return budget - (platform::now_seconds() - t0); };
    bool did = false, advanced = false;
    while (true) {
        // A file that arrived opens first (the page's next state is that file's);
        // the action in flight on the file it replaces waits, since it goes with it.
        if (!opening_ && !to_open_.empty()) begin_open();
        if (opening_ || busy()) {
            // The job moves at least one piece per frame, however little budget is left;
            // step / advance(<= 0) would mean "to the end".
            double l = left();
            if (advanced && l <= 0) break;
            advanced = true;
            const bool open = opening_ != nullptr;
            const double t_slice = platform::now_seconds();
            const bool over =
                open ? opening_->step(std::max(l, 1e-6)) : ws_->advance(std::max(l, 1e-6));
            count_compute(t_slice);
            if (!over) break;
            if (open)
                finish_open();
            else
                finish_job();
            did = true;
            continue;
        }
        // The open file's weights arrived: they are checked before what waits for them.
        if (arriving_ && arriving_->read) {
            if (advanced && left() <= 0) break;
            advanced = true;
            did |= check_arriving(left());
            continue;
        }
        if (requests_.empty()) break;
        // What acts on the file waits for its weights (lesson requests do not).
        if (arriving_ && requests_.front().kind < Request::Kind::LessonOpen) break;
        // A request that begins a job starts with this frame's budget left, or on the next frame.
        if (did && left() <= 0) break;
        Request r = std::move(requests_.front());
        requests_.pop_front();
        apply(r);
        did = true;
    }
    return did;
}

void App::apply(const Request& r) {
    if (r.kind >= Request::Kind::LessonOpen) {
        apply_lesson(r);
        return;
    }
    if (lesson_) {
        // The lesson's graphs change only through its steps, so they stay the engine's.
        view_.error = text(Str::err_lesson_edit, lang_);
        log(LogLine::Kind::Warning, view_.error);
        return;
    }
    if (!ws_) return;
    if (r.kind != Request::Kind::Apply) {
        bool undo = r.kind == Request::Kind::Undo;
        Status s = undo ? ws_->undo() : ws_->redo();
        if (!s.ok()) {
            log(LogLine::Kind::Warning, s.error().message);
            return;
        }
        log(LogLine::Kind::Action, ws_->last_outcome()->summary);
        after_change(*ws_->last_outcome(), false);
        return;
    }
    // The action becomes the job in flight: work() advances it, finish_job() commits it.
    const double t_begin = platform::now_seconds();
    Status s = ws_->begin(r.action);
    if (s.ok()) job_began(r.action, platform::now_seconds() - t_begin);
    if (!s.ok()) {
        view_.error = s.error().str();
        log(LogLine::Kind::Error,
            std::string(action_kind_name(r.action.kind)) + " failed: " + view_.error);
    }
}

void App::finish_job() {
    const Action a = *ws_->pending_action();
    const double t_finish = platform::now_seconds();
    auto out = ws_->finish();
    count_compute(t_finish);
    job_ended(out.ok(), false);
    if (!out.ok()) {
        view_.error = out.error().str();
        log(LogLine::Kind::Error,
            std::string(action_kind_name(a.kind)) + " failed: " + view_.error);
        return;
    }
    const ActionOutcome& o = out.value();
    std::string summary = o.summary;
    while (!summary.empty() && summary.back() == '\n') summary.pop_back();
    log(LogLine::Kind::Action, std::string(action_kind_name(a.kind)) + ": " + summary);
    if (o.torch_error.empty()) {
        // An action that did what was asked ends the banner of the one that did not (the
        // log keeps it).
        view_.error.clear();
    } else {
        // What torch raises for this (train() on ep.module(), erasing a used node): shown
        // in the banner like an error, since the action did not do what was asked.
        std::string type =
            o.torch_exception.empty() ? text(Str::an_error, lang_) : o.torch_exception;
        view_.error = strf(text(Str::torch_raises, lang_), type.c_str(), o.torch_error.c_str());
        log(LogLine::Kind::Warning, view_.error);
    }
    if (o.run) return; // a run changes no graph
    after_change(o, true);
}

void App::after_change(const ActionOutcome& out, bool user_action) {
    if (!out.changed) return;
    if (!out.diff.empty()) { // the graph moved (calibration and recompiles do not)
        ++graph_epoch_;
        last_change_ = out;
        view_.show_diff = true;
        diff_since_ = platform::now_seconds();
    }
    if (out.view != view_.graph && (out.view == GraphView::Module || ws_->has_program())) {
        set_view(out.view);
        log(LogLine::Kind::Info,
            std::string("showing ") + graph_view_name(out.view) + ", where the change happened");
    }
    if (view_.selected && !ws_->node(view_.graph, view_.selected)) view_.selected = 0;
    if (settings_.auto_run && !run_changes_state()) {
        Action run;
        run.kind = Action::Kind::Run;
        run.inputs = view_.run_inputs;
        run.repeat = 1;
        run.label = user_action ? "run after the change" : "run after " + out.summary;
        post(run);
    }
}

bool App::animating() const {
    return diff_since_ >= 0 && platform::now_seconds() - diff_since_ < 2.0;
}

} // namespace pt2lab::app
