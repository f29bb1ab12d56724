// The page's read-only test hook (window.pt2lab.state()): file, view, nodes
// with their boxes on screen in CSS pixels, selection, code, runs, history.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app.h"
#include "exec/observer.h"
#include "page_strings.h"
#include "passes/pt2e.h"
#include "tensor_summary.h"
#include "ui/graph_toolbar.h"
#include "ui/theme.h"
#include "util/utf8.h"

namespace pt2lab::app {
namespace {

using nlohmann::json;

json parity_json(const ParityReport& p) {
    json outs = json::array();
    for (const TensorParity& t : p.outputs)
        outs.push_back({{"name", t.name},
                        {"max_abs", t.max_abs},
                        {"allclose", t.allclose},
                        {"bit_identical", t.bit_identical},
                        {"sqnr_db", t.sqnr_db}, // inf (identical) becomes null
                        {"nan", t.nan},
                        {"inf", t.inf}});
    return {{"max_abs", p.max_abs()},
            {"allclose", p.allclose()},
            {"bit_identical", p.bit_identical()},
            {"approximate", p.approximate},
            {"verdict", p.verdict()},
            {"outputs", outs}};
}

// FNV-1a (64 bits) of a tensor's bytes, as 16 hex digits: the browser tests
// compare whole outputs with the CLI's --out values through it.
std::string fnv1a64(const TensorStorage& bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    const uint8_t* d = bytes.data();
    for (size_t i = 0; i < bytes.size(); ++i) {
        h ^= d[i];
        h *= 0x100000001b3ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

json run_json(const RunReport& r, uint64_t version) {
    json outs = json::array();
    for (size_t i = 0; i < r.result.outputs.size(); ++i) {
        const Value& v = r.result.outputs[i];
        json o = {{"name", i < r.result.output_names.size() ? r.result.output_names[i] : ""}};
        if (v.is_tensor()) {
            TensorSummary s = summarize(*v.tensor, 8);
            o["type"] = s.type;
            o["min"] = s.min;
            o["max"] = s.max;
            o["mean"] = s.mean;
            o["first"] = s.first;
            o["fnv1a64"] = fnv1a64(v.tensor->storage);
        } else {
            o["type"] = v.describe();
        }
        outs.push_back(o);
    }
    json j = {
        {"version", r.version}, {"current", r.version == version}, {"inputs", r.inputs_label},
        {"outputs", outs},      {"parity", parity_json(r.parity)}, {"values_kept", r.values_kept}};
    if (r.reference) j["reference"] = parity_json(*r.reference);
    if (r.profile) { // where the time went: every op, the ten slowest nodes
        const RunProfile& p = *r.profile;
        json ops = json::array(), slowest = json::array();
        for (const RunProfile::Op& o : p.ops)
            ops.push_back({{"op", o.op}, {"nodes", o.nodes}, {"fused", o.fused}, {"ms", o.ms}});
        for (size_t i = 0; i < p.nodes.size() && i < 10; ++i)
            slowest.push_back(
                {{"node", p.nodes[i].node}, {"op", p.nodes[i].op}, {"ms", p.nodes[i].ms}});
        j["profile"] = {{"nodes_ms", p.nodes_ms}, {"run_ms", p.run_ms}, {"nodes", p.nodes.size()},
                        {"fused", p.fused},       {"ops", ops},         {"slowest", slowest}};
    }
    if (r.layers) { // a quantized run, layer by layer against the float model (graph order)
        json rows = json::array();
        for (const LayerParity& l : r.layers->rows)
            rows.push_back({{"node", l.layer.node},
                            {"reference", l.layer.reference},
                            {"op", l.layer.op},
                            {"sqnr_db", l.parity.sqnr_db}, // inf (identical) becomes null
                            {"max_rel", l.parity.max_rel},
                            {"nonfinite", l.parity.nonfinite_new}});
        j["layers"] = rows;
        j["layers_float_reused"] = r.layers_float_reused;
        j["float_run_ms"] = r.float_run_ms;
        j["layers_ms"] = r.layers_ms;
        j["layers_not_kept"] = r.layers->not_kept;
        j["worst_layer"] =
            r.layers->worst >= 0
                ? json(r.layers->rows[static_cast<size_t>(r.layers->worst)].layer.node)
                : json();
    }
    return j;
}

const char* code_form_name(CodeForm f) {
    switch (f) {
    case CodeForm::Code: return "code";
    case CodeForm::Readable: return "print_readable";
    case CodeForm::Printed: return "printed";
    case CodeForm::Script: return "script";
    }
    return "";
}

} // namespace

std::string App::bench_json() const {
    json j;
    j["frames"] = ui_.frames;
    j["file"] = file_name_;
    j["build_ms"] = bench_.build_ms;
    j["loop_ms"] = bench_.loop_ms;
    j["warm_up_ms"] = ui_.warm_up_ms;        // -1 until the idle warm-up is over (main.cpp)
    j["frame_hold_ms"] = frame_hold_ * 1000; // what a drawn frame holds the main thread
    j["job_frame_ms"] = job_frame_seconds() * 1000;
    j["t_arrived"] = bench_.t_arrived * 1000;
    j["t_opened"] = bench_.t_opened * 1000;
    j["t_open_call"] = bench_.t_open_call * 1000;
    j["t_drawn"] = bench_.t_drawn * 1000;
    j["t_whole"] = bench_.t_whole * 1000;
    j["gap_ms"] = bench_.gap_ms;
    // The job in flight and the last jobs (times in ms, performance.now): light, no graph.
    if (opening_file()) {
        OpenProgress p = open_progress();
        j["busy"] = {{"kind", "open"}, {"what", p.what}, {"done", p.done}, {"total", p.total}};
    } else if (const Action* a = job_action()) {
        ActionProgress p = job_progress();
        j["busy"] = {{"kind", action_kind_name(a->kind)},
                     {"what", p.what},
                     {"done", p.done},
                     {"total", p.total}};
    } else {
        j["busy"] = nullptr;
    }
    j["waiting"] = requests_.size() + to_open_.size();
    j["error"] = view_.error;
    j["jobs_done"] = bench_.jobs_done;
    json jobs = json::array();
    for (const JobRecord& r : bench_.jobs)
        jobs.push_back({{"kind", r.kind},
                        {"label", r.label},
                        {"fast_kernels", r.fast_kernels},
                        {"ended", r.ended},
                        {"ok", r.ok},
                        {"cancelled", r.cancelled},
                        {"t_start", r.t_start * 1000},
                        {"t_end", r.ended ? json(r.t_end * 1000) : json(nullptr)},
                        {"compute_ms", r.compute * 1000},
                        {"frames", r.frames},
                        {"max_loop_ms", r.max_loop_ms},
                        {"max_gap_ms", r.max_gap_ms},
                        {"next_loop_ms", r.next_loop_ms},
                        {"next_gap_ms", r.next_gap_ms},
                        {"max_task_ms", r.max_task_ms},
                        {"tasks", r.tasks},
                        {"max_loop_build_ms", r.max_loop_build_ms},
                        {"max_loop_end_ms", r.max_loop_end_ms},
                        {"max_loop_what", r.max_loop_what},
                        {"max_task_what", r.max_task_what},
                        {"t_shown", r.next_loop_ms >= 0 ? json(r.t_shown * 1000) : json(nullptr)}});
    j["jobs"] = jobs;
    const Workspace* ws = workspace();
    if (!ws) return j.dump(-1, ' ', false, json::error_handler_t::replace);
    // The scene as the last frame drew it: building it here would move a frame's
    // work into the benchmark's poll.
    const Scene& sc = scenes_[view_.graph == GraphView::Program ? 0 : 1].scene;
    j["nodes"] = ws->graph(view_.graph).size();
    j["shown"] = sc.nodes.size();
    j["edges"] = sc.edges.size();
    j["scene_ms"] = scene_ms_;
    j["layout_ms"] = sc.layout_ms;
    j["zoom"] = view_.camera[view_.graph == GraphView::Program ? 0 : 1].zoom;
    const CanvasRect& cr = ui_.canvas;
    float s = cr.scale > 0 ? cr.scale : 1;
    j["canvas"] = {{"x", cr.x / s}, {"y", cr.y / s}, {"w", cr.w / s}, {"h", cr.h / s}};
    j["expand_all"] = view_.expand_all[view_.graph == GraphView::Program ? 0 : 1];
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

nlohmann::json App::lessons_json() const {
    json j = {{"lang", lang_},
              {"error", catalog_error_},
              {"course", course_base_},
              {"pending", pending_id_},
              {"link_notice", link_notice_}};
    json list = json::array();
    for (const LessonCatalog::Entry& e : catalog_.entries) {
        const Lesson* l = catalog_.find(e.id, lang_);
        const LessonProgress& p = progress(e.id);
        list.push_back({{"id", e.id},
                        {"title", l ? l->title : ""},
                        {"steps", l ? l->steps.size() : 0},
                        {"done", p.done},
                        {"answers", step_map_json(p.answers)}});
    }
    j["list"] = list;
    if (preview_)
        j["preview"] = {{"file", preview_->file},       {"id", preview_->id},
                        {"checked", preview_->checked}, {"ok", preview_->ok},
                        {"notes", preview_->notes},     {"shown", lesson_preview() != nullptr}};
    if (!lesson_) return j;
    const LessonRunner& r = *lesson_;
    const LessonStep& st = r.current();
    const Workspace& ws = r.step_workspace();
    GraphView v = r.step_view();
    auto names = [](const Workspace& w, GraphView view, const std::vector<uint32_t>& ids) {
        json out = json::array();
        for (uint32_t id : ids)
            if (const Node* n = w.node(view, id)) out.push_back(n->name());
        return out;
    };
    json cur = {{"id", r.lesson().id},     {"title", r.lesson().title},
                {"file", r.lesson().file}, {"step", r.step()},
                {"steps", r.step_count()}, {"step_title", st.title},
                {"graph", st.graph},       {"view", graph_view_name(v)},
                {"button", st.button},     {"performed", r.performed()},
                {"quiz", st.is_quiz},      {"highlight", names(ws, v, view_.highlight)},
                {"answer", view_.answer}};
    if (!st.check.options.empty()) {
        cur["options"] = st.check.options.size();
        if (view_.answer >= 0) cur["correct"] = r.check_answer(view_.answer).correct;
        cur["predicted"] = view_.answer >= 0 && check_is_prediction();
    }
    json compare = json::array();
    for (const CompareGraph& g : compare_graphs()) {
        json nodes = json::array();
        for (const Node* n : g.ws->graph(g.view).nodes()) nodes.push_back(n->name());
        // Each box's second line as the pane draws it ("body.0 · Conv2d"), by name.
        json kinds = json::object();
        for (const SceneNode& n : compare_scene(compare.size()).nodes) kinds[n.name] = n.kind;
        compare.push_back({{"key", g.key},
                           {"view", graph_view_name(g.view)},
                           {"nodes", nodes},
                           {"kinds", kinds}});
    }
    cur["compare"] = compare;
    if (const auto& rep = r.report()) {
        json actions = json::array();
        for (const LessonActionReport& a : rep->actions) {
            json o = {{"graph", a.graph},
                      {"kind", a.kind},
                      {"changed", a.changed},
                      {"torch_error_type", a.torch_error_type}};
            if (a.run) {
                json par = json::array();
                for (const TensorParity& t : a.run->parity.outputs)
                    par.push_back({{"bit_identical", t.bit_identical}, {"max_abs", t.max_abs}});
                o["parity"] = par;
            }
            actions.push_back(o);
        }
        cur["report"] = {{"changed", rep->changed}, {"actions", actions}};
        if (auto c = compare_step_runs(*rep)) // the line under the step's results
            cur["report"]["runs_compared"] = {
                {"runs", c->runs}, {"bit_identical", c->bit_identical}, {"max_abs", c->max_abs}};
    }
    // Every lesson graph's lint verdict in the step's view ("" = ok).
    json lint = json::object();
    for (const LessonGraph& g : r.lesson().graphs)
        if (const Workspace* w = r.workspace(g.key))
            lint[g.key] = w->lint_message(
                st.view == "program" && w->has_program() ? GraphView::Program : GraphView::Module);
    cur["lint"] = lint;
    j["current"] = cur;
    return j;
}

std::string App::state_json() const {
    json j;
    j["ready"] = ws_ != nullptr;
    j["frames"] = ui_.frames;
    j["startup_ms"] = {{"main", ui_.t_main * 1000},
                       {"fonts", ui_.t_fonts * 1000},
                       {"opened", ui_.t_opened * 1000},
                       {"first_frame", ui_.t_first_frame * 1000},
                       {"warm_up", ui_.warm_up_ms}};
    j["error"] = view_.error;
    json log = json::array();
    size_t from = ui_.log.size() > 30 ? ui_.log.size() - 30 : 0;
    for (size_t i = from; i < ui_.log.size(); ++i) log.push_back(ui_.log[i].text);
    j["log"] = log;
    j["lesson_files"] = lesson_files_;
    {
        // Characters met beyond the font subset: which the UI font cannot draw now
        // (asked of the atlas itself), and the font pages asked for / arrived.
        std::string missing;
        const ImFont* font = ui::fonts().ui;
        for (char32_t c : glyphs_.noted())
            if (!font || c > IM_UNICODE_CODEPOINT_MAX ||
                !font->FindGlyphNoFallback(static_cast<ImWchar>(c)))
                append_utf8(missing, c);
        j["glyphs"] = {
            {"missing", missing}, {"pending", glyphs_.pending()}, {"pages", glyphs_.arrived()}};
    }
    j["scale"] = ui_.canvas.scale;
    j["copied"] = {{"what", ui_.copied_what}, {"bytes", ui_.copied_bytes}};
    j["tab"] = tab_name(settings_.tab);
    j["side_tab"] = ui_.side_tab ? tab_name(*ui_.side_tab) : "";
    j["focused"] = ui_.focused; // the control with keyboard focus (its ring shown), "" none
    json widgets = json::object();
    for (const auto& [name, r] : ui_.widgets)
        widgets[name] = {{"x", r[0]}, {"y", r[1]}, {"w", r[2]}, {"h", r[3]}};
    // Cut by a scrolling region: the whole item too.
    for (const auto& [name, r] : ui_.widgets_cut)
        widgets[name]["whole"] = {{"x", r[0]}, {"y", r[1]}, {"w", r[2]}, {"h", r[3]}};
    j["widgets"] = widgets;
    j["opening"] = opening();
    // A file opened before its weights arrived: how far they are read, then checked.
    if (arriving_)
        j["arriving"] = {{"read", arriving_->read},
                         {"done", arriving_->done},
                         {"total", arriving_->total},
                         {"held", arriving_->held ? arriving_->held_name : std::string()}};
    else
        j["arriving"] = nullptr;
    // The action in flight (App::busy), or the file being opened: what it does and
    // how far it is; the panels below still show the state as it was before it began.
    if (opening_file()) {
        OpenProgress p = open_progress();
        j["busy"] = {{"kind", "open"},   {"what", p.what},       {"done", p.done},
                     {"total", p.total}, {"seconds", p.seconds}, {"fast_kernels", false}};
    } else if (const Action* a = job_action()) {
        ActionProgress p = job_progress();
        j["busy"] = {{"kind", action_kind_name(a->kind)},
                     {"what", p.what},
                     {"done", p.done},
                     {"total", p.total},
                     {"seconds", p.seconds},
                     {"fast_kernels", a->fast_kernels}};
    } else {
        j["busy"] = nullptr;
    }
    j["waiting"] = requests_.size() + to_open_.size();
    // The shown graph's scene is its version's (false for the frame or two a new
    // version's tree and layout take: the nodes below are still the last version's).
    j["views_current"] = !workspace() || scene_current(view_.graph);
    j["fast_kernels"] = view_.fast_kernels;
    j["panels"] = json::array();
    if (!options_.hide_top) j["panels"].push_back("top bar");
    if (!options_.hide_left) j["panels"].push_back(lesson_ ? "lesson" : "file");
    j["panels"].push_back("graph");
    if (!options_.hide_inspector) j["panels"].push_back("inspector");
    if (!options_.hide_dock) j["panels"].push_back(tab_name(settings_.tab));
    j["options"] = {
        {"bench", options_.bench}, {"collapse", options_.auto_collapse}, {"step", options_.step}};
    if (ui_.show_help) j["panels"].push_back("keyboard shortcuts");
    if (!workspace()) {
        j["lessons"] = lessons_json();
        return j.dump(-1, ' ', false, json::error_handler_t::replace);
    }

    const Workspace& ws = *workspace();
    j["file"] = file_name_;
    j["version"] = ws.version();
    j["has_program"] = ws.has_program();
    j["view"] = graph_view_name(view_.graph);
    j["level"] = ws.has_program() ? ir_level_name(ws.level()) : "symbolic_trace";
    {
        // The counts the graph toolbar draws next to the level (ui/graph_toolbar.cpp):
        // the shown graph's nodes and call_function nodes, as the last frame drew them.
        const PanelCaches::Toolbar& t = view_.caches.toolbar;
        const bool drawn = t.calls_key == shown_key();
        const int calls = drawn ? t.calls : ui::call_function_count(ws.graph(view_.graph));
        const size_t count = ws.graph(view_.graph).size();
        j["op_counts"] = {{"nodes", count},
                          {"calls", calls},
                          {"drawn", drawn},
                          {"text", strf(text(Str::tool_counts, lang_), count, calls)}};
    }
    j["code_form"] = code_form_name(settings_.code_form);
    const CodeView& code = ws.code(view_.graph);
    j["code"] = {{"text", code.text}, {"stale", code.stale}};

    const Scene& sc = scene(view_.graph);
    const Camera& cam = view_.camera[view_.graph == GraphView::Program ? 0 : 1];
    const CanvasRect& cr = ui_.canvas;
    json nodes = json::array();
    for (size_t i = 0; i < sc.nodes.size(); ++i) {
        const SceneNode& n = sc.nodes[i];
        LayoutPoint c = world_to_screen(cam, cr, sc.layout.center[i]);
        float k = cam.zoom; // CSS pixels per layout unit
        float s = cr.scale > 0 ? cr.scale : 1;
        json node = {{"id", n.id},         {"name", n.name}, {"op", std::string(op_name(n.op))},
                     {"target", n.target}, {"kind", n.kind}, {"type", n.detail},
                     {"x", c.x / s},       {"y", c.y / s},   {"w", n.size.x * k},
                     {"h", n.size.y * k}};
        bool visible = c.x >= cr.x && c.x <= cr.x + cr.w && c.y >= cr.y && c.y <= cr.y + cr.h;
        node["visible"] = visible;
        if (n.mark != DiffMark::None) node["mark"] = diff_mark_name(n.mark);
        if (!n.runnable) node["runnable"] = false;
        if (n.group >= 0) node["group"] = n.members;
        if (!n.weights.empty()) {
            node["weights"] = n.weights;
            json inside = json::array(); // the weight nodes' names, in the same order
            for (uint32_t id : n.weight_ids)
                if (const Node* w = ws.node(view_.graph, id)) inside.push_back(w->name());
            node["inside"] = inside;
        }
        if (n.id && std::find(view_.highlight.begin(), view_.highlight.end(), n.id) !=
                        view_.highlight.end())
            node["highlight"] = true;
        nodes.push_back(node);
    }
    j["nodes"] = nodes;
    j["edges"] = sc.edges.size();
    j["weights_inside"] = view_.weights_inside;
    json unused = json::array(); // weights nothing reads, not drawn with weights inside
    for (uint32_t id : sc.unused_weights)
        if (const Node* w = ws.node(view_.graph, id)) unused.push_back(w->name());
    j["unused_weights"] = unused;
    j["scene_ms"] = scene_ms_; // labels, sizes and the layered layout of the last scene built
    j["canvas"] = {{"x", cr.x / cr.scale},
                   {"y", cr.y / cr.scale},
                   {"w", cr.w / cr.scale},
                   {"h", cr.h / cr.scale},
                   {"zoom", cam.zoom},
                   {"center", {cam.cx, cam.cy}},
                   {"layout", {sc.layout.width, sc.layout.height}}};
    auto node_ref = [&](uint32_t id) -> json {
        const Node* n = id ? ws.node(view_.graph, id) : nullptr;
        if (!n) return nullptr;
        return {{"id", n->id()}, {"name", n->name()}};
    };
    j["selected"] = node_ref(view_.selected);
    if (const Node* n = view_.selected ? ws.node(view_.graph, view_.selected) : nullptr) {
        auto it = n->meta.other.find(kAnnotationKey); // the Node panel shows it
        if (it != n->meta.other.end()) j["selected"]["annotation"] = it->second;
    }
    j["hovered"] = node_ref(ui_.hovered_shown);
    json matches = json::array();
    for (uint32_t id : search_ids())
        if (const Node* n = ws.node(view_.graph, id)) matches.push_back(n->name());
    j["search"] = {{"query", view_.search}, {"matches", matches}};
    json frames = json::array();
    for (const SceneFrame& f : sc.frames) {
        LayoutPoint lo = world_to_screen(cam, cr, f.lo), hi = world_to_screen(cam, cr, f.hi);
        float s = cr.scale > 0 ? cr.scale : 1;
        frames.push_back({{"path", f.path},
                          {"type", f.type},
                          {"x", lo.x / s},
                          {"y", lo.y / s},
                          {"w", (hi.x - lo.x) / s},
                          {"h", (hi.y - lo.y) / s}});
    }
    j["modules"] = {{"expand_all", view_.expand_all[view_.graph == GraphView::Program ? 0 : 1]},
                    {"frames", frames},
                    {"groups", modules(view_.graph).groups.size() - 1}};

    json undo = json::array(), redo = json::array();
    for (const HistoryEntry& h : ws.undo_history()) undo.push_back(h.label);
    for (const HistoryEntry& h : ws.redo_history()) redo.push_back(h.label);
    j["undo"] = undo;
    j["redo"] = redo;
    if (const auto& out = last_change_) {
        j["diff"] = {{"view", graph_view_name(out->view)}, {"added", out->diff.added},
                     {"removed", out->diff.removed},       {"rewired", out->diff.rewired},
                     {"changed", out->diff.changed},       {"summary", out->summary}};
    }
    if (const auto& run = ws.last_run()) j["run"] = run_json(*run, ws.version());
    json observers = json::array();
    for (const auto& [name, obs] : ws.state().observers) {
        json o = {{"name", name}, {"calls", obs->calls()}};
        if (obs->calls() > 0) {
            o["min"] = obs->min_val();
            o["max"] = obs->max_val();
            auto q = obs->calculate_qparams();
            if (q.ok()) {
                o["scale"] = q.value().scale;
                o["zero_point"] = q.value().zero_point;
            }
        }
        observers.push_back(o);
    }
    j["observers"] = observers;
    j["auto_run"] = settings_.auto_run;
    j["lint"] = ws.lint_message(view_.graph);
    j["lessons"] = lessons_json();
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace pt2lab::app
