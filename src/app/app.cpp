// App: opening files, applying requests through the Workspace, the scene
// cache and the log (see app.h). Drawing is in ui/.
#include "app.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "graph/written_attrs.h"
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
    if (bench_.awaiting_draw) {
        bench_.t_drawn = platform::now_seconds();
        bench_.awaiting_draw = false;
    }
    if (!options_.bench) return;
    const size_t keep = 2000;
    if (bench_.build_ms.size() >= keep) {
        bench_.build_ms.erase(bench_.build_ms.begin(), bench_.build_ms.begin() + keep / 2);
        bench_.loop_ms.erase(bench_.loop_ms.begin(), bench_.loop_ms.begin() + keep / 2);
    }
    bench_.build_ms.push_back(static_cast<float>(build_ms));
    bench_.loop_ms.push_back(static_cast<float>(loop_ms));
}

App::App() : lesson_files_(read_lesson_index()) {
    options_ = parse_page_options(platform::url_option);
    metrics_.text_width = [](const std::string& s, bool mono) {
        return static_cast<float>(s.size()) * (mono ? 8.f : 7.f);
    };
    load_settings();
    load_lessons();
}

const Workspace* App::workspace() const {
    return lesson_ ? &lesson_->step_workspace() : ws_.get();
}

void App::load_settings() {
    saved_settings_ = platform::load_setting("layout");
    nlohmann::json j = nlohmann::json::parse(saved_settings_, nullptr, false);
    if (!j.is_object()) return;
    auto frac = [&](const char* key, float& out, float lo, float hi) {
        auto it = j.find(key);
        if (it != j.end() && it->is_number()) out = std::clamp(it->get<float>(), lo, hi);
    };
    frac("left", ui_.left_frac, 0.12f, 0.45f);
    frac("right", ui_.right_frac, 0.12f, 0.45f);
    frac("bottom", ui_.bottom_frac, 0.12f, 0.7f);
    auto tab = j.find("tab");
    if (tab != j.end() && tab->is_number_integer()) {
        int t = tab->get<int>();
        if (t >= 0 && t <= static_cast<int>(Tab::Log)) show_tab(static_cast<Tab>(t));
    }
    auto form = j.find("code_form");
    if (form != j.end() && form->is_number_integer()) {
        int f = form->get<int>();
        if (f >= 0 && f <= static_cast<int>(CodeForm::Printed))
            ui_.code_form = static_cast<CodeForm>(f);
    }
    auto run = j.find("auto_run");
    if (run != j.end() && run->is_boolean()) ui_.auto_run = run->get<bool>();
}

void App::save_settings() {
    nlohmann::json j = {{"left", ui_.left_frac},
                        {"right", ui_.right_frac},
                        {"bottom", ui_.bottom_frac},
                        {"tab", static_cast<int>(ui_.tab)},
                        {"code_form", static_cast<int>(ui_.code_form)},
                        {"auto_run", ui_.auto_run}};
    std::string text = j.dump();
    if (text == saved_settings_) return;
    saved_settings_ = text;
    platform::save_setting("layout", text);
}

App::~App() = default;

void App::set_scene_metrics(SceneMetrics m) {
    metrics_ = std::move(m);
    for (SceneCache& c : scenes_) c.valid = false;
}

const Scene& App::scene(GraphView v) const {
    const Workspace* ws = workspace();
    SceneCache& c = scenes_[v == GraphView::Program ? 0 : 1];
    const std::optional<ActionOutcome>& out = last_change_;
    bool diff = ui_.show_diff && out && out->view == v && !out->diff.empty();
    if (c.valid && c.ws == ws && c.epoch == graph_epoch_ && c.diff == diff &&
        c.modules_rev == modules_rev_)
        return c.scene;
    if (!c.valid || c.ws != ws || c.epoch != graph_epoch_)
        c.tree = build_module_tree(ws->graph(v), v == GraphView::Program && ws->has_program()
                                                     ? &ws->program().signature
                                                     : nullptr);
    size_t vi = v == GraphView::Program ? 0 : 1;
    ExpandedSet all;
    if (ui_.expand_all[vi]) all = c.tree.all_paths();
    if (c.ws != ws)
        c.before = Scene{};
    else if (c.epoch != graph_epoch_ && c.valid)
        c.before = std::move(c.scene);
    SceneContext ctx;
    if (v == GraphView::Program && ws->has_program()) ctx.signature = &ws->program().signature;
    if (v == GraphView::Module) ctx.submodules = &ws->module().submodules;
    ctx.modules = &c.tree;
    ctx.expanded = ui_.expand_all[vi] ? &all : &ui_.expanded[vi];
    double t0 = platform::now_seconds();
    c.scene = build_scene(ws->graph(v), ctx, metrics_, diff ? &out->diff : nullptr,
                          diff ? &c.before : nullptr);
    scene_ms_ = (platform::now_seconds() - t0) * 1000;
    ++scene_builds_;
    for (const Workspace::UnsupportedOp& u : ws->unsupported_ops(v))
        for (uint32_t id : u.nodes)
            if (int i = c.scene.find_id(id); i >= 0)
                c.scene.nodes[static_cast<size_t>(i)].runnable = false;
    c.ws = ws;
    c.epoch = graph_epoch_;
    c.diff = diff;
    c.modules_rev = modules_rev_;
    c.valid = true;
    return c.scene;
}

void App::update_search() const {
    const Scene& sc = scene(ui_.view);
    if (search_.builds == scene_builds_ && search_.query == ui_.search && search_.view == ui_.view)
        return;
    search_.builds = scene_builds_;
    search_.query = ui_.search;
    search_.view = ui_.view;
    search_.ids.clear();
    search_.marks.assign(sc.nodes.size(), 0);
    if (ui_.search.empty()) return;
    const Workspace* ws = workspace();
    const GraphSignature* sig =
        ui_.view == GraphView::Program && ws->has_program() ? &ws->program().signature : nullptr;
    SceneNode probe;
    InputSpecIndex specs = index_inputs(sig);
    for (const Node* n : ws->graph(ui_.view).nodes()) {
        probe.name = n->name();
        probe.target = n->target();
        probe.kind = node_kind_label(*n, sig, specs);
        if (!scene_node_matches(probe, ui_.search)) continue;
        search_.ids.push_back(n->id());
        if (int i = sc.find_shown(n->id()); i >= 0) search_.marks[static_cast<size_t>(i)] = 1;
    }
    for (size_t i = 0; i < sc.nodes.size(); ++i) // ghosts match by their own labels
        if (!sc.nodes[i].id && sc.nodes[i].group < 0 && scene_node_matches(sc.nodes[i], ui_.search))
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
    scene(v);
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
    size_t vi = ui_.view == GraphView::Program ? 0 : 1;
    const ModuleTree& tree = modules(ui_.view);
    ExpandedSet& ex = ui_.expanded[vi];
    if (ui_.expand_all[vi] && r.kind != ModuleRequest::Kind::All) {
        ex = tree.all_paths();
        ui_.expand_all[vi] = false;
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
        ui_.expand_all[vi] = true;
        ex.clear();
        ui_.camera[vi].fitted = false; // a new layout: show all of it
        break;
    case ModuleRequest::Kind::None:
        ex.clear();
        ui_.camera[vi].fitted = false;
        break;
    case ModuleRequest::Kind::Reveal: {
        std::vector<Node*> nodes = ws->graph(ui_.view).nodes();
        for (size_t i = 0; i < nodes.size() && i < tree.node_group.size(); ++i) {
            if (nodes[i]->id() != r.id) continue;
            for (int g : tree.chain(tree.node_group[i]))
                ex.insert(tree.groups[static_cast<size_t>(g)].path);
        }
        select(r.id);
        ui_.reveal = r.id;
        break;
    }
    }
    ++modules_rev_;
}

const Node* App::selected_node() const {
    const Workspace* ws = workspace();
    if (!ws || ui_.selected == 0) return nullptr;
    return ws->node(ui_.view, ui_.selected);
}

bool App::run_changes_state() const {
    const Workspace* ws = workspace();
    if (!ws) return false;
    // What Workspace counts as a state-changing run: observers, or ops that may write buffers.
    return !ws->state().observers.empty() || !attrs_written_in_place(*ws->module().graph).empty();
}

void App::post(Action a) {
    if (a.kind == Action::Kind::Run) a.fast_kernels = ui_.fast_kernels;
    requests_.push_back({Request::Kind::Apply, std::move(a), {}, 0});
}

void App::post_undo() {
    requests_.push_back({Request::Kind::Undo, {}, {}, 0});
}

void App::post_redo() {
    requests_.push_back({Request::Kind::Redo, {}, {}, 0});
}

void App::select(uint32_t id) {
    ui_.selected = id;
    ui_.scroll_code_to_selection = id != 0;
}

void App::set_view(GraphView v) {
    const Workspace* ws = workspace();
    if (v == GraphView::Program && (!ws || !ws->has_program())) return;
    if (v == ui_.view) return;
    // Keep the selection when the other graph has a node of the same name
    // (conv2d is in both; p_conv_weight becomes the get_attr conv_weight only by meaning).
    const Node* sel = selected_node();
    ui_.view = v;
    ui_.selected = 0;
    if (sel)
        if (const Node* same = ws->find(v, sel->name())) ui_.selected = same->id();
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

void App::log(LogLine::Kind kind, std::string text) {
    ui_.log.push_back({kind, std::move(text), platform::now_seconds()});
    const size_t keep = 500;
    if (ui_.log.size() > keep) ui_.log.erase(ui_.log.begin(), ui_.log.end() - keep);
}

void App::show_tab(Tab t) {
    ui_.tab = t;
    ui_.tab_requested = true;
}

bool App::take_files() {
    auto open_arrived = [&](std::vector<uint8_t> bytes, const std::string& name) {
        if (open(std::move(bytes), name)) {
            bench_.t_opened = platform::now_seconds();
            bench_.awaiting_draw = true;
        }
    };
    // Announced on the last frame: open them now.
    std::vector<WaitingFile> announced;
    announced.swap(waiting_);
    opening_.clear();
    for (WaitingFile& f : announced) open_arrived(std::move(f.bytes), f.name);

    std::vector<platform::OpenedFile> files = platform::take_opened();
    bool lesson_files = false;
    for (platform::OpenedFile& f : files) {
        if (take_lesson_file(f.name, f.bytes, f.error)) {
            lesson_files = true;
            continue;
        }
        if (!f.error.empty()) {
            ui_.error = f.name + ": " + f.error;
            log(LogLine::Kind::Error, ui_.error);
            continue;
        }
        bench_.t_arrived = platform::now_seconds();
        if (f.bytes.size() >= kAnnounceBytes) {
            char size[32];
            std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(f.bytes.size()) / 1e6);
            opening_ = base_name(f.name) + " (" + size + ")";
            waiting_.push_back({f.name, std::move(f.bytes)});
            continue;
        }
        open_arrived(std::move(f.bytes), f.name);
    }
    if (lesson_files) start_pending_lesson();
    std::string hash = platform::take_hash_change();
    if (!hash.empty()) follow_hash(hash);
    return !announced.empty() || !files.empty() || !hash.empty();
}

bool App::open(std::vector<uint8_t> bytes, const std::string& name) {
    size_t size = bytes.size();
    auto ws = Workspace::open(std::move(bytes), name);
    if (!ws.ok()) {
        ui_.error = ws.error().str();
        log(LogLine::Kind::Error, "could not open " + ui_.error);
        return false;
    }
    // The first file is the page's backdrop: a deep link's lesson still opens over it.
    bool first = ws_ == nullptr;
    if (!first && (lesson_ || !pending_id_.empty())) {
        lesson_.reset();
        pending_id_.clear();
        ui_.highlight.clear();
        platform::set_text_view("");
    }
    ws_ = ws.take();
    file_name_ = base_name(name);
    UiState fresh;
    fresh.log = std::move(ui_.log);
    fresh.left_frac = ui_.left_frac;
    fresh.right_frac = ui_.right_frac;
    fresh.bottom_frac = ui_.bottom_frac;
    fresh.tab = ui_.tab;
    fresh.tab_requested = true;
    fresh.code_form = ui_.code_form;
    fresh.auto_run = ui_.auto_run;
    fresh.frames = ui_.frames;
    fresh.t_main = ui_.t_main;
    fresh.t_fonts = ui_.t_fonts;
    fresh.t_opened = ui_.t_opened;
    fresh.t_first_frame = ui_.t_first_frame;
    fresh.view = ws_->has_program() ? GraphView::Program : GraphView::Module;
    ui_ = std::move(fresh);
    reset_modules();
    for (SceneCache& c : scenes_) c = SceneCache{};
    diff_since_ = -1;
    last_change_.reset();
    ++graph_epoch_;
    log(LogLine::Kind::Info, "opened " + file_name_ + " (" + std::to_string(size) + " bytes, " +
                                 std::to_string(ws_->graph(ui_.view).size()) + " nodes)");
    bool lesson = false;
    for (const std::string& f : lesson_files_) lesson |= f == file_name_;
    ui_.fast_kernels = !lesson;
    // A deep link the page was opened with stays until its lesson is there.
    std::string id;
    int step = 0;
    bool deep_link = first && LessonRunner::parse_deep_link(start_link(), id, step);
    if (pending_id_.empty() && !lesson_ && !deep_link)
        platform::set_url_hash(lesson ? "file=" + file_name_ : "");
    return true;
}

void App::reset_modules() {
    const Workspace* ws = workspace();
    for (size_t vi = 0; vi < 2; ++vi) {
        GraphView v = vi == 0 ? GraphView::Program : GraphView::Module;
        ui_.expanded[vi].clear();
        ui_.expand_all[vi] = !ws || (v == GraphView::Program && !ws->has_program()) ||
                             !options_.auto_collapse || ws->graph(v).size() <= kCollapseAbove;
    }
    module_requests_.clear();
    ++modules_rev_;
}

bool App::end_frame() {
    std::vector<Request> todo;
    todo.swap(requests_);
    for (const Request& r : todo) apply(r);
    std::vector<ModuleRequest> mods;
    mods.swap(module_requests_);
    for (const ModuleRequest& r : mods) apply_module(r);
    save_settings();
    return !todo.empty() || !mods.empty();
}

void App::apply(const Request& r) {
    if (r.kind >= Request::Kind::LessonOpen) {
        apply_lesson(r);
        return;
    }
    if (lesson_) {
        // The lesson's graphs change only through its steps, so they stay the engine's.
        ui_.error = "In a lesson the step's button changes the graph. To edit it yourself, leave "
                    "the lesson (\"Leave lesson\" in the lesson panel).";
        log(LogLine::Kind::Warning, ui_.error);
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
    const Action& a = r.action;
    auto out = ws_->apply(a);
    if (!out.ok()) {
        ui_.error = out.error().str();
        log(LogLine::Kind::Error, std::string(action_kind_name(a.kind)) + " failed: " + ui_.error);
        return;
    }
    const ActionOutcome& o = out.value();
    std::string summary = o.summary;
    while (!summary.empty() && summary.back() == '\n') summary.pop_back();
    log(LogLine::Kind::Action, std::string(action_kind_name(a.kind)) + ": " + summary);
    if (!o.torch_error.empty()) {
        // What torch raises for this (train() on ep.module(), erasing a used node): shown
        // in the banner like an error, since the action did not do what was asked.
        std::string type = o.torch_exception.empty() ? "an error" : o.torch_exception;
        ui_.error = "torch raises " + type + ": " + o.torch_error;
        log(LogLine::Kind::Warning, ui_.error);
    }
    if (o.run) return; // a run changes no graph
    after_change(o, true);
}

void App::after_change(const ActionOutcome& out, bool user_action) {
    if (!out.changed) return;
    if (!out.diff.empty()) { // the graph moved (calibration and recompiles do not)
        ++graph_epoch_;
        last_change_ = out;
        ui_.show_diff = true;
        diff_since_ = platform::now_seconds();
    }
    if (out.view != ui_.view && (out.view == GraphView::Module || ws_->has_program())) {
        set_view(out.view);
        log(LogLine::Kind::Info,
            std::string("showing ") + graph_view_name(out.view) + ", where the change happened");
    }
    if (ui_.selected && !ws_->node(ui_.view, ui_.selected)) ui_.selected = 0;
    if (ui_.auto_run && !run_changes_state()) {
        Action run;
        run.kind = Action::Kind::Run;
        run.inputs = ui_.run_inputs;
        run.repeat = 1;
        run.label = user_action ? "run after the change" : "run after " + out.summary;
        post(run);
    }
}

bool App::animating() const {
    return diff_since_ >= 0 && platform::now_seconds() - diff_since_ < 2.0;
}

} // namespace pt2lab::app
