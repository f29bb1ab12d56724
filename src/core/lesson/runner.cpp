// LessonRunner: opens a lesson's graphs as Workspaces, replays its steps'
// actions, resolves highlights to node ids and checks answers.
#include "lesson/runner.h"

#include <algorithm>

#include "exec/parity.h"
#include "io/program_loader.h"
#include "util/check.h"
#include "util/json_read.h"
#include "workspace/action_json.h"

namespace pt2lab {

LessonRunner::FileReader LessonRunner::files_under(const std::string& root) {
    return [root](const std::string& path) { return read_file_bytes(root + "/" + path); };
}

Result<std::unique_ptr<LessonRunner>> LessonRunner::open(const Lesson& lesson, FileReader read) {
    std::unique_ptr<LessonRunner> r(new LessonRunner());
    r->lesson_ = lesson;
    r->read_ = std::move(read);
    if (r->lesson_.steps.empty()) return make_error(lesson.file, "the lesson has no steps");
    if (Status s = r->open_all(); !s.ok()) return s.error();
    return r;
}

Status LessonRunner::open_all() {
    ws_.clear();
    for (const LessonGraph& g : lesson_.graphs) {
        auto it = bytes_.find(g.path);
        if (it == bytes_.end()) {
            auto b = read_(g.path);
            if (!b.ok()) return b.error();
            it = bytes_.emplace(g.path, b.take()).first;
        }
        auto w = Workspace::open(it->second, g.path);
        if (!w.ok()) return w.error();
        ws_[g.key] = w.take();
    }
    step_ = 1;
    performed_ = false;
    report_.reset();
    return {};
}

const Workspace* LessonRunner::workspace(const std::string& key) const {
    auto it = ws_.find(key);
    return it == ws_.end() ? nullptr : it->second.get();
}

const Workspace& LessonRunner::step_workspace() const {
    const Workspace* w = workspace(current().graph);
    // parse_lesson checked that every step names a graph of the lesson block, and
    // open_all() opened each.
    PT2LAB_CHECK(w != nullptr);
    return *w;
}

GraphView LessonRunner::step_view() const {
    return current().view == "program" && step_workspace().has_program() ? GraphView::Program
                                                                         : GraphView::Module;
}

namespace {

std::vector<uint32_t> ids_of(const Graph& g, const std::vector<std::string>& names) {
    std::vector<uint32_t> out;
    for (const auto& n : names)
        if (const Node* node = g.find(n)) out.push_back(node->id());
    return out;
}

Error step_error(const StepAction& a, const Error& cause) {
    Error e = cause;
    e.message = "step action at " + a.where + " failed: " + cause.message;
    return e;
}

} // namespace

Result<LessonStepReport> LessonRunner::run_step(const LessonStep& st) {
    LessonStepReport rep;
    rep.step = st.index;
    auto shown_it = ws_.find(st.graph);
    if (shown_it == ws_.end())
        return make_error(lesson_.file, "step " + std::to_string(st.index) + " shows graph \"" +
                                            st.graph + "\", which the lesson did not open");
    Workspace& shown = *shown_it->second;
    GraphView view =
        st.view == "program" && shown.has_program() ? GraphView::Program : GraphView::Module;
    std::unique_ptr<Graph> before = shown.graph(view).clone();
    for (const StepAction& a : st.actions) {
        auto w_it = ws_.find(a.graph);
        if (w_it == ws_.end())
            return step_error(a, make_error(a.where, "no open graph \"" + a.graph + "\""));
        Workspace& w = *w_it->second;
        LessonActionReport ar;
        ar.graph = a.graph;
        ar.kind = a.kind;
        auto action = parse_action(a.json, a.where);
        if (!action.ok()) return step_error(a, action.error());
        auto out = w.apply(action.value());
        if (!out.ok()) return step_error(a, out.error());
        const ActionOutcome& o = out.value();
        ar.summary = o.summary;
        ar.changed = o.changed;
        ar.run = o.run;
        ar.torch_error_type = o.torch_exception;
        ar.torch_error = o.torch_error;
        rep.changed = rep.changed || ar.changed;
        rep.actions.push_back(std::move(ar));
    }
    const Graph& after = shown.graph(view);
    rep.diff = diff_graphs(*before, after);
    rep.added_ids = ids_of(after, rep.diff.added);
    rep.rewired_ids = ids_of(after, rep.diff.rewired);
    rep.changed_ids = ids_of(after, rep.diff.changed);
    rep.removed_ids = ids_of(*before, rep.diff.removed);
    return rep;
}

Result<LessonStepReport> LessonRunner::perform() {
    const LessonStep& st = current();
    if (st.actions.empty())
        return make_error(lesson_.file, "step " + std::to_string(step_) + " has no actions");
    if (performed_)
        return make_error(lesson_.file, "step " + std::to_string(step_) + " was already performed",
                          "go back to it (or reset the lesson) to run it again");
    auto r = run_step(st);
    if (!r.ok()) {
        // A half-run step leaves some workspaces changed: rebuild the state before it.
        int k = step_;
        Error e = r.error();
        if (Status s = open_all(); !s.ok()) return s.error();
        if (Status s = go_to(k); !s.ok()) return s.error();
        return e;
    }
    performed_ = true;
    report_ = r.value();
    return r;
}

Status LessonRunner::go_to(int k, bool perform_it) {
    if (k < 1 || k > step_count())
        return make_error(lesson_.file, "no step " + std::to_string(k),
                          "steps count from 1 to " + std::to_string(step_count()));
    // Forward from here, or a fresh replay from the start.
    bool forward = k > step_ || (k == step_ && (perform_it || !performed_));
    if (!forward) {
        if (Status s = open_all(); !s.ok()) return s;
    }
    auto fail = [&](const Error& e) -> Status {
        Status s = open_all(); // back to a known state: step 1
        (void)s;
        return e;
    };
    while (step_ < k || (step_ == k && perform_it && !performed_)) {
        const LessonStep& st = current();
        if (!performed_ && !st.actions.empty()) {
            auto r = run_step(st);
            if (!r.ok()) return fail(r.error());
            report_ = r.take();
        }
        performed_ = true;
        if (step_ == k) break;
        ++step_;
        performed_ = false;
        report_.reset();
    }
    return {};
}

Status LessonRunner::switch_language(const Lesson& translated) {
    std::string diff = compare_translations(lesson_, translated);
    if (!diff.empty())
        return make_error(translated.file, "not a translation of " + lesson_.file + ": " + diff);
    lesson_ = translated;
    return {};
}

std::vector<uint32_t> LessonRunner::highlight_ids() const {
    return ids_of(step_workspace().graph(step_view()), current().highlight);
}

uint32_t LessonRunner::selected_id() const {
    if (current().select.empty()) return 0;
    const Node* n = step_workspace().find(step_view(), current().select);
    return n ? n->id() : 0;
}

std::vector<std::string> LessonRunner::op_sequence(const std::string& key) const {
    std::vector<std::string> out;
    const Workspace* w = workspace(key);
    if (!w) return out;
    for (const Node* n : w->graph(GraphView::Module).nodes())
        if (n->op() == Op::CallFunction) out.push_back(n->target());
    return out;
}

LessonCheckResult LessonRunner::check_answer(int option) const {
    const Check& c = current().check;
    LessonCheckResult r;
    if (option < 0 || option >= static_cast<int>(c.options.size())) return r;
    r.correct = option == c.answer;
    r.feedback = c.options[static_cast<size_t>(option)].feedback;
    return r;
}

std::string LessonRunner::deep_link() const {
    return "#" + lesson_.id + "/" + std::to_string(step_);
}

bool LessonRunner::parse_deep_link(const std::string& hash, std::string& id, int& step) {
    std::string h = hash.rfind('#', 0) == 0 ? hash.substr(1) : hash;
    size_t slash = h.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 >= h.size()) return false;
    int k = 0;
    for (size_t i = slash + 1; i < h.size(); ++i) {
        if (h[i] < '0' || h[i] > '9' || k > 100000) return false;
        k = k * 10 + (h[i] - '0');
    }
    if (k < 1) return false;
    id = h.substr(0, slash);
    step = k;
    return true;
}

std::optional<StepRunsCompared> compare_step_runs(const LessonStepReport& report) {
    std::vector<const RunReport*> runs;
    for (const LessonActionReport& a : report.actions)
        if (a.run) runs.push_back(&*a.run);
    if (runs.size() < 2) return std::nullopt;
    StepRunsCompared c;
    c.runs = runs.size();
    for (size_t i = 1; i < runs.size(); ++i) {
        ParityReport p = compare_runs(runs[i]->result, runs[0]->result);
        c.bit_identical = c.bit_identical && p.bit_identical();
        c.max_abs = std::max(c.max_abs, p.max_abs());
    }
    return c;
}

} // namespace pt2lab
