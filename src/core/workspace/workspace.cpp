// Workspace: opening, reading (cached per version), undo/redo. Actions run on
// a copy of the state (workspace_actions.cpp) that replaces it on success.
#include "workspace/workspace.h"

#include <chrono>
#include <cstdio>

#include "exec/kernels.h"
#include "graph/written_attrs.h"
#include "io/fx_json.h"
#include "io/program_loader.h"
#include "passes/unlift.h"
#include "util/shed.h"
#include "workspace/workspace_state.h"

namespace pt2lab {

const char* graph_view_name(GraphView v) {
    return v == GraphView::Program ? "ExportedProgram" : "ep.module()";
}

const char* action_kind_name(Action::Kind k) {
    switch (k) {
#define PT2LAB_ACTION_KIND(Enum, name, history)                                                    \
    case Action::Kind::Enum:                                                                       \
        return name;
#include "workspace/action_rows.inc"
#undef PT2LAB_ACTION_KIND
    }
    return "action";
}

namespace {

// Whether a change by this kind of action makes an undo step (action_rows.inc).
bool makes_history(Action::Kind k) {
    enum History { Entry, Never };
    switch (k) {
#define PT2LAB_ACTION_KIND(Enum, name, history)                                                    \
    case Action::Kind::Enum:                                                                       \
        return history == Entry;
#include "workspace/action_rows.inc"
#undef PT2LAB_ACTION_KIND
    }
    return false;
}

} // namespace

struct Workspace::Cache {
    std::optional<CodeView> code[2];
    // code() in pieces (write_code): the view's code, then for a module whose graph
    // differs from its last recompile's node for node, the graph's own code.
    struct Writing {
        std::optional<CodeWriting> code, current;
        std::optional<StaleGlancing> glancing;     // GraphModule::stale_at_a_glance
        std::optional<std::optional<bool>> glance; // its answer
        std::optional<bool> stale;                 // the module's answer, before its copies
    } writing[2];
    std::optional<std::string> readable[2];
    std::optional<std::string> program_str;
    std::optional<IrLevel> level;
    std::optional<bool> calibrated;
    std::optional<std::vector<UnsupportedOp>> unsupported[2];
};

Workspace::Workspace() : cache_(std::make_unique<Cache>()) {
}
Workspace::~Workspace() = default;

namespace {
using Deadline = std::chrono::steady_clock::time_point;
// Drops a module or a program, its graphs in pieces when nothing else holds it; true
// once it is gone.
bool shed_module(std::shared_ptr<const GraphModule>& gm, Deadline deadline) {
    if (gm && gm.use_count() == 1 && !const_cast<GraphModule&>(*gm).shed(deadline)) return false;
    gm.reset();
    return true;
}
bool shed_program(std::shared_ptr<const ExportedProgram>& ep, Deadline deadline) {
    if (ep && ep.use_count() == 1 && ep->graph.get() &&
        !const_cast<Graph&>(*ep->graph).shed(deadline))
        return false;
    ep.reset();
    return true;
}
// A state's last Run report: its profile and layer table (a row a node or layer, a
// converted 10k-node graph's took 23 ms to free natively).
bool shed_run(std::optional<RunReport>& r, Deadline deadline) {
    if (!r) return true;
    if (r->profile.use_count() == 1 &&
        !pop_until(const_cast<RunProfile&>(*r->profile).nodes, deadline))
        return false;
    if (r->layers.use_count() == 1 &&
        !pop_until(const_cast<LayerTable&>(*r->layers).rows, deadline))
        return false;
    r.reset();
    return true;
}
} // namespace

bool Workspace::shed_state(std::shared_ptr<State>& st,
                           std::chrono::steady_clock::time_point deadline) {
    if (st && st.use_count() == 1 &&
        (!shed_module(st->gm, deadline) || !shed_program(st->ep, deadline) ||
         !erase_until(st->exec.observers, deadline) || !erase_until(st->exec.tensors, deadline) ||
         !erase_until(st->exec_source, deadline) || !shed_run(st->last_run, deadline)))
        return false;
    st.reset();
    return true;
}

bool Workspace::shed(std::chrono::steady_clock::time_point deadline) {
    using Clock = std::chrono::steady_clock;
    pending_.reset();
    cache_ = std::make_unique<Cache>();
    baselines_.clear();
    layer_baseline_.reset();
    last_outcome_.reset();
    if (!shed_dropped(deadline)) return false;
    for (std::vector<Step>* list : {&redo_, &undo_})
        while (!list->empty()) {
            if (!shed_state(list->back().state, deadline)) return false;
            list->pop_back();
            if (Clock::now() >= deadline) return false;
        }
    return shed_state(state_, deadline) && shed_module(original_module_, deadline) &&
           shed_program(original_, deadline);
}

bool Workspace::shed_dropped(std::chrono::steady_clock::time_point deadline) {
    while (!retired_.empty()) {
        retired_.pop_back();
        if (std::chrono::steady_clock::now() >= deadline) return !has_dropped();
    }
    while (!dropped_.empty()) {
        if (!shed_state(dropped_.back(), deadline)) return false;
        dropped_.pop_back();
        if (std::chrono::steady_clock::now() >= deadline) return dropped_.empty();
    }
    return true;
}

struct Opening::Impl {
    using Clock = std::chrono::steady_clock;
    enum class Stage { Start, Load, Module, Done };
    std::string file;
    uint64_t size = 0;
    OpenOptions opt;
    std::vector<uint8_t> bytes;                         // until the load takes them
    std::shared_ptr<const std::vector<uint8_t>> shared; // or these
    std::vector<ArrivingRecord> arriving;               // the load's late records
    Stage stage = Stage::Start;
    std::unique_ptr<ProgramLoad> load;
    std::optional<ExportedProgram> ep;    // loaded; ep.module() is next
    std::unique_ptr<Unlifting> unlifting; // ep.module(), in pieces
    std::optional<Result<std::unique_ptr<Workspace>>> result;
    Clock::time_point t0 = Clock::now();

    void end(Result<std::unique_ptr<Workspace>> r) {
        unlifting.reset();
        load.reset();
        ep.reset();
        bytes = std::vector<uint8_t>();
        shared.reset();
        result = std::move(r);
        stage = Stage::Done;
    }
    // One piece of work; false when the open is over.
    bool work(Clock::time_point deadline) {
        switch (stage) {
        case Stage::Start: {
            if (!shared) shared = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
            const std::vector<uint8_t>& b = *shared;
            std::string head(b.begin(), b.begin() + std::min<size_t>(b.size(), 4096));
            if (!opt.programs_only && opt.late.empty() && looks_like_fx_graph_json(head)) {
                // pt2lab's own symbolic_trace graphs (the lessons' fx views): small, read whole.
                auto fx = read_fx_graph_json(std::string(b.begin(), b.end()), file, opt.limits);
                if (!fx.ok()) {
                    end(fx.error());
                    return false;
                }
                end(Workspace::from_module(module_from_fx(fx.take()), file, size, opt));
                return false;
            }
            load = std::make_unique<ProgramLoad>(std::move(shared), file, opt.limits, opt.late);
            stage = Stage::Load;
            return true;
        }
        case Stage::Load: {
            if (!load->step(deadline)) return true;
            auto r = load->finish();
            arriving = load->take_arriving();
            load.reset();
            if (!r.ok()) {
                end(r.error());
                return false;
            }
            ep.emplace(r.take());
            stage = Stage::Module;
            return true;
        }
        case Stage::Module: {
            if (!unlifting) {
                UnliftOptions uo;
                uo.guards_fn = opt.guards_fn;
                unlifting = std::make_unique<Unlifting>(*ep, uo);
            }
            if (!unlifting->step(deadline)) return true;
            auto gm = unlifting->finish();
            unlifting.reset();
            if (!gm.ok()) {
                Error e = gm.error();
                if (e.file.empty()) e.file = file;
                end(e);
                return false;
            }
            end(Workspace::from_unlifted(std::move(*ep), gm.take(), opt, std::move(arriving)));
            return false;
        }
        case Stage::Done: return false;
        }
        return false;
    }
};

Opening::Opening(std::vector<uint8_t> bytes, std::string file, OpenOptions opt)
    : impl_(std::make_unique<Impl>()) {
    impl_->file = std::move(file);
    impl_->size = bytes.size();
    impl_->bytes = std::move(bytes);
    impl_->opt = std::move(opt);
}
Opening::Opening(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string file,
                 OpenOptions opt)
    : impl_(std::make_unique<Impl>()) {
    PT2LAB_CHECK(bytes != nullptr);
    impl_->file = std::move(file);
    impl_->size = bytes->size();
    impl_->shared = std::move(bytes);
    impl_->opt = std::move(opt);
}
Opening::~Opening() = default;

const std::string& Opening::file() const {
    return impl_->file;
}
uint64_t Opening::file_size() const {
    return impl_->size;
}

bool Opening::step(double seconds) {
    using Clock = Impl::Clock;
    const Clock::time_point deadline =
        seconds > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds))
                    : Clock::time_point::max();
    while (impl_->work(deadline))
        if (Clock::now() >= deadline) return false;
    return true;
}

OpenProgress Opening::progress() const {
    const Impl& m = *impl_;
    OpenProgress p;
    p.seconds = std::chrono::duration<double>(Impl::Clock::now() - m.t0).count();
    p.total = 1000;
    // Rough shares of the whole open (docs/BENCHMARKS.md, "Opening a file"): the
    // JSON text, its nodes, the weights (CRC-checked views), then ep.module().
    constexpr double kParse = 0.4, kNodes = 0.3, kWeights = 0.2;
    auto mb = [](size_t b) {
        char s[32];
        std::snprintf(s, sizeof s, "%.1f", static_cast<double>(b) / 1e6);
        return std::string(s);
    };
    switch (m.stage) {
    case Impl::Stage::Start: p.what = "opening " + m.file; break;
    case Impl::Stage::Load: {
        LoadProgress lp = m.load->progress();
        const ReadProgress& r = lp.read;
        double f = 0;
        if (!r.parsed) {
            p.what = "reading the graph's JSON: " + mb(r.bytes_done) + " of " + mb(r.bytes_total) +
                     " MB";
            f = kParse * (r.bytes_total ? static_cast<double>(r.bytes_done) / r.bytes_total : 0);
        } else if (!lp.weights) {
            p.what = "reading the graph: node " + std::to_string(r.nodes_done) + " of " +
                     std::to_string(r.nodes_total);
            f = kParse +
                kNodes * (r.nodes_total ? static_cast<double>(r.nodes_done) / r.nodes_total : 0);
        } else {
            p.what = lp.stand_ins ? "making stand-in weights" : "reading the weights";
            if (lp.stand_ins && lp.tensors_done < lp.tensors_total)
                p.what += ": input " + std::to_string(lp.tensors_done) + " of " +
                          std::to_string(lp.tensors_total);
            else if (lp.tensors_done < lp.tensors_total)
                p.what += ": tensor " + std::to_string(lp.tensors_done) + " of " +
                          std::to_string(lp.tensors_total);
            f = kParse + kNodes +
                kWeights * (lp.tensors_total
                                ? static_cast<double>(lp.tensors_done) / lp.tensors_total
                                : 0);
        }
        p.done = static_cast<uint64_t>(f * 1000);
        break;
    }
    case Impl::Stage::Module:
        p.what = std::string("building ep.module(): ") +
                 (m.unlifting ? m.unlifting->stage() : "copying the graph");
        p.done = static_cast<uint64_t>((kParse + kNodes + kWeights) * 1000);
        break;
    case Impl::Stage::Done:
        p.what = "opened";
        p.done = 1000;
        break;
    }
    return p;
}

Result<std::unique_ptr<Workspace>> Opening::finish() {
    PT2LAB_CHECK(impl_->result.has_value());
    Result<std::unique_ptr<Workspace>> r = std::move(*impl_->result);
    impl_->result.reset();
    return r;
}

Result<std::unique_ptr<Workspace>>
Workspace::open(std::vector<uint8_t> bytes, const std::string& file, const OpenOptions& opt) {
    Opening o(std::move(bytes), file, opt);
    o.step(0);
    return o.finish();
}

Result<std::unique_ptr<Workspace>> Workspace::open_file(const std::string& path,
                                                        const OpenOptions& opt) {
    auto bytes = read_file_bytes(path);
    if (!bytes.ok()) return bytes.error();
    const size_t slash = path.find_last_of('/');
    return open(bytes.take(), slash == std::string::npos ? path : path.substr(slash + 1), opt);
}

Result<std::unique_ptr<Workspace>> Workspace::from_program(ExportedProgram ep,
                                                           const OpenOptions& opt) {
    UnliftOptions uo;
    uo.guards_fn = opt.guards_fn;
    auto gm = unlift(ep, uo);
    if (!gm.ok()) return gm.error();
    return from_unlifted(std::move(ep), gm.take(), opt);
}

Result<bool> Workspace::check_arrived(std::chrono::steady_clock::time_point deadline,
                                      uint64_t* done, uint64_t* total) {
    // A piece is at most 4 MB of CRC (a few ms), so a 500 MB record keeps frames coming.
    constexpr uint64_t kPiece = uint64_t(4) << 20;
    bool first = true;
    while (arriving_k_ < arriving_.size() &&
           (first || std::chrono::steady_clock::now() < deadline)) {
        first = false;
        const ArrivingRecord& r = arriving_[arriving_k_];
        const uint64_t n = std::min<uint64_t>(kPiece, r.data.size() - arriving_at_);
        arriving_crc_ = crc32_update(arriving_crc_, r.data.data() + arriving_at_, n);
        arriving_at_ += n;
        if (arriving_at_ < r.data.size()) continue;
        if (arriving_crc_ != r.crc32) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "CRC mismatch (stored %08x, computed %08x)", r.crc32,
                          arriving_crc_);
            Error e = make_error(r.name, buf, "the file is damaged; get it again");
            e.file = file_;
            return e;
        }
        ++arriving_k_;
        arriving_at_ = 0;
        arriving_crc_ = 0;
    }
    if (done || total) {
        uint64_t d = 0, t = 0;
        for (size_t k = 0; k < arriving_.size(); ++k) {
            t += arriving_[k].data.size();
            d += k < arriving_k_ ? arriving_[k].data.size() : k == arriving_k_ ? arriving_at_ : 0;
        }
        if (done) *done = d;
        if (total) *total = t;
    }
    return arriving_k_ >= arriving_.size();
}

std::unique_ptr<Workspace> Workspace::from_unlifted(ExportedProgram ep, GraphModule gm,
                                                    const OpenOptions& opt,
                                                    std::vector<ArrivingRecord> arriving) {
    std::unique_ptr<Workspace> ws(new Workspace());
    ws->arriving_ = std::move(arriving);
    ws->file_ = ep.source_file;
    ws->file_size_ = ep.file_size;
    ws->options_ = opt;
    ws->state_ = std::make_shared<State>();
    ws->state_->set_ep(std::move(ep));
    ws->state_->set_gm(std::move(gm));
    sync_exec_state(*ws->state_, ws->file_size_);
    ws->original_ = ws->state_->ep;
    ws->original_module_ = ws->state_->gm;
    return ws;
}

std::unique_ptr<Workspace> Workspace::from_module(GraphModule gm, const std::string& file,
                                                  uint64_t file_size, const OpenOptions& opt) {
    std::unique_ptr<Workspace> ws(new Workspace());
    ws->file_ = file;
    ws->file_size_ = file_size;
    ws->options_ = opt;
    ws->state_ = std::make_shared<State>();
    ws->state_->set_gm(std::move(gm));
    sync_exec_state(*ws->state_, file_size);
    ws->original_module_ = ws->state_->gm;
    return ws;
}

bool Workspace::has_program() const {
    return state_->ep != nullptr;
}

const ExportedProgram& Workspace::program() const {
    PT2LAB_CHECK(state_->ep != nullptr);
    return *state_->ep;
}

const ExportedProgram& Workspace::original() const {
    PT2LAB_CHECK(original_ != nullptr);
    return *original_;
}

const GraphModule& Workspace::module() const {
    return *state_->gm;
}

const Graph& Workspace::graph(GraphView v) const {
    return v == GraphView::Program ? *program().graph : *state_->gm->graph;
}

IrLevel Workspace::level() const {
    if (cache_->level) return *cache_->level;
    // What was done to the program: torch.export writes the TRAINING verifier and
    // run_decompositions the ATEN one (which of its two levels, the Decompose that
    // made it knows); only a program that records neither is judged by its ops.
    IrLevel l = IrLevel::Training;
    if (state_->decomposed_to) {
        l = *state_->decomposed_to;
    } else if (has_program()) {
        const std::vector<std::string>& v = program().verifiers;
        if (v.empty())
            l = ir_level_of(*program().graph);
        else if (v.front() != "TRAINING")
            l = ir_level_of(*program().graph, true);
    }
    cache_->level = l;
    return l;
}

bool Workspace::observers_calibrated() const {
    if (!cache_->calibrated) {
        bool any = false;
        for (const auto& [name, obs] : state().observers)
            if ((any = obs->calls() > 0)) break;
        cache_->calibrated = any;
    }
    return *cache_->calibrated;
}

const Node* Workspace::node(GraphView v, uint32_t id) const {
    if (v == GraphView::Program && !has_program()) return nullptr;
    return graph(v).find_id(id);
}

const Node* Workspace::find(GraphView v, const std::string& name) const {
    if (v == GraphView::Program && !has_program()) return nullptr;
    return graph(v).find(name);
}

bool Workspace::code_ready(GraphView v) const {
    return cache_->code[v == GraphView::Program ? 0 : 1].has_value();
}

bool Workspace::write_code(GraphView v, std::chrono::steady_clock::time_point deadline,
                           size_t* done, size_t* total) const {
    using Clock = std::chrono::steady_clock;
    const size_t vi = v == GraphView::Program ? 0 : 1;
    auto& slot = cache_->code[vi];
    Cache::Writing& w = cache_->writing[vi];
    auto report = [&](size_t d, size_t t) {
        if (done) *done = d;
        if (total) *total = t;
    };
    if (slot) {
        report(1, 1);
        return true;
    }
    const GraphModule& gm = *state_->gm;
    const Graph& g = graph(v);
    CodeView cv;
    if (v == GraphView::Program) {
        if (!w.code) w.code.emplace(g);
        if (!w.code->step(deadline)) {
            report(w.code->nodes_done(), w.code->nodes_total());
            return false;
        }
        CodeLines lines = w.code->take();
        cv.text = std::move(lines.src);
        cv.line_nodes = std::move(lines.line_ids);
    } else {
        // The last recompile's code (shared by the states that have the same
        // recompile), then, if the graph moved on, its own code to compare.
        // How far: nodes walked by both writers, and one for the copies below.
        if (!w.glance) {
            if (!w.glancing) w.glancing.emplace(gm);
            if (!w.glancing->step(deadline)) {
                report(0, 1);
                return false;
            }
            w.glance = w.glancing->result();
            w.glancing.reset();
        }
        const std::optional<bool> glance = *w.glance;
        const size_t first = 3 * gm.forward_graph().size(); // CodeWriting's units
        const size_t all = first + (glance ? 0 : 3 * g.size()) + 1;
        if (!gm.code_written()) {
            if (!w.code) w.code.emplace(gm.code_writing());
            if (!w.code->step(deadline)) {
                report(w.code->nodes_done(), all);
                return false;
            }
            gm.adopt_code(w.code->take());
            if (Clock::now() >= deadline) { // the graph's own code, or the copies, are next
                report(first, all);
                return false;
            }
        }
        const bool answered_before = w.stale.has_value();
        if (!w.stale && !glance) {
            if (!w.current) w.current.emplace(g, gm.codegen);
            if (!w.current->step(deadline)) {
                report(first + w.current->nodes_done(), all);
                return false;
            }
            w.stale = w.current->take().src != gm.code();
            w.current.reset();
        } else if (!w.stale) {
            w.stale = *glance;
        }
        // A converted 10k-node graph's code is megabytes: its copy (9-13 ms natively) and
        // the writers' teardown get a piece of their own.
        if (!answered_before && Clock::now() >= deadline) {
            report(all - 1, all);
            return false;
        }
        cv.stale = *w.stale;
        cv.text = gm.code();
        cv.line_nodes = gm.code_line_nodes();
    }
    w = Cache::Writing{};
    slot = std::move(cv);
    report(1, 1);
    return true;
}

const CodeView& Workspace::code(GraphView v) const {
    write_code(v, std::chrono::steady_clock::time_point::max());
    return *cache_->code[v == GraphView::Program ? 0 : 1];
}

const std::string& Workspace::readable(GraphView v) const {
    auto& slot = cache_->readable[v == GraphView::Program ? 0 : 1];
    if (!slot)
        slot = v == GraphView::Program ? print_readable(graph(v), CodegenOptions{})
                                       : print_readable(*state_->gm->graph, state_->gm->codegen);
    return *slot;
}

const std::string& Workspace::program_str() const {
    if (!cache_->program_str) cache_->program_str = exported_program_str(program());
    return *cache_->program_str;
}

const ModuleState& Workspace::state() const {
    return state_->exec;
}

const std::optional<RunReport>& Workspace::last_run() const {
    return state_->last_run;
}

const std::vector<Workspace::UnsupportedOp>& Workspace::unsupported_ops(GraphView v) const {
    auto& slot = cache_->unsupported[v == GraphView::Program ? 0 : 1];
    if (slot) return *slot;
    std::vector<UnsupportedOp>& out = slot.emplace();
    if (v == GraphView::Program && !has_program()) return out;
    for (const Node* n : graph(v).nodes()) {
        if (n->op() != Op::CallFunction) continue;
        if (find_kernel(*n)) continue;
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const UnsupportedOp& u) { return u.target == n->target(); });
        if (it == out.end()) it = out.insert(out.end(), UnsupportedOp{n->target(), {}});
        it->nodes.push_back(n->id());
    }
    return out;
}

std::string Workspace::lint_message(GraphView v) const {
    if (v == GraphView::Program && !has_program()) return {};
    Status s = v == GraphView::Program ? program().graph->lint() : state_->gm->lint();
    return s.ok() ? std::string() : s.error().message;
}

void Workspace::bump() {
    ++version_;
    cache_ = std::make_unique<Cache>();
}

std::string Workspace::python_script() const {
    return pt2lab::python_script(file_, original_ != nullptr, state_->script);
}

std::vector<HistoryEntry> Workspace::undo_history() const {
    std::vector<HistoryEntry> out;
    for (const Step& s : undo_) out.push_back(s.entry);
    return out;
}

std::vector<HistoryEntry> Workspace::redo_history() const {
    std::vector<HistoryEntry> out;
    for (auto it = redo_.rbegin(); it != redo_.rend(); ++it) out.push_back(it->entry);
    return out;
}

Status Workspace::switch_state(std::vector<Step>& from, std::vector<Step>& to, const char* what) {
    if (pending_)
        return make_error("history", std::string("cannot ") + what + " while " +
                                         action_kind_name(pending_action()->kind) + " is running");
    if (from.empty()) return make_error("history", std::string("nothing to ") + what);
    Step step = std::move(from.back());
    from.pop_back();
    ActionOutcome out;
    out.view = step.entry.view;
    out.changed = true;
    out.summary = std::string(what) + " " + step.entry.label;
    const State& now = *state_;
    const State& then = *step.state;
    bool program_view = out.view == GraphView::Program && now.ep && then.ep;
    out.diff = program_view ? diff_graphs(*now.ep->graph, *then.ep->graph)
                            : diff_graphs(*now.gm->graph, *then.gm->graph);
    to.push_back(Step{step.entry, std::move(state_)});
    state_ = std::move(step.state);
    last_outcome_ = std::move(out);
    bump();
    return {};
}

Status Workspace::undo() {
    return switch_state(undo_, redo_, "undo");
}

Status Workspace::redo() {
    return switch_state(redo_, undo_, "redo");
}

Result<ActionOutcome> Workspace::apply(const Action& a) {
    if (Status st = begin(a); !st.ok()) return st.error();
    while (!advance(0)) {
    }
    return finish();
}

Result<ActionOutcome> Workspace::commit(std::unique_ptr<State> next, const Action& a,
                                        Result<ActionOutcome> outcome) {
    if (!outcome.ok()) {
        Error e = outcome.error();
        if (e.file.empty()) e.file = file_;
        return e;
    }
    ActionOutcome& out = outcome.value();
    if (!out.changed && !out.run) {
        last_outcome_ = out; // nothing to keep: the state stays as it was
        return outcome;
    }
    bump();
    if (out.run) {
        out.run->version = version_;
        next->last_run->version = version_;
    }
    if (out.changed && makes_history(a.kind)) {
        HistoryEntry entry;
        entry.kind = a.kind;
        entry.view = out.view;
        entry.label = !a.label.empty()               ? a.label
                      : a.kind == Action::Kind::Edit ? edit_label(a.edit.kind)
                                                     : action_kind_name(a.kind);
        next->script.push_back(python_step(a, out, *state_,
                                           original_ && !original_->example_inputs.empty(),
                                           static_cast<int>(next->script.size()) + 1, entry.label));
        undo_.push_back(Step{entry, std::move(state_)});
        if (undo_.size() > kMaxHistory) {
            dropped_.push_back(std::move(undo_.front().state));
            undo_.erase(undo_.begin());
        }
        for (Step& r : redo_) dropped_.push_back(std::move(r.state));
        redo_.clear();
        if (!shed_later_) dropped_.clear();
    }
    state_ = std::move(next);
    last_outcome_ = out;
    return outcome;
}

bool Workspace::run_changes_state() const {
    // Observers record, or ops may write buffers (what a run's same_values check would find).
    const GraphModule& gm = *state_->gm;
    if (!state_->exec.observers.empty()) return true;
    for (const Node* n : gm.forward_graph().nodes()) {
        if (n->op() != Op::CallModule) continue;
        auto sub = gm.submodules.find(n->target());
        if (sub != gm.submodules.end() && sub->second.observer) return true;
    }
    return !attrs_written_in_place(gm.forward_graph()).empty();
}

} // namespace pt2lab
