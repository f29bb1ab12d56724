// The action in flight: Workspace::begin / advance / cancel / finish. Runs and
// calibrations are sliced between nodes (exec/interpreter.h's Execution), so a
// caller can spread them over frames; every other action is one slice. All of
// it works on a copy of the state that finish() commits (Workspace::commit).
#include <algorithm>
#include <chrono>
#include <set>

#include "graph/op_schema.h"
#include "workspace/workspace_state.h"

namespace pt2lab {

using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

} // namespace

const Action* Workspace::pending_action() const {
    return pending_ ? &pending_->action : nullptr;
}

Status Workspace::begin(const Action& a) {
    if (pending_)
        return make_error(action_kind_name(a.kind),
                          std::string("another action (") +
                              action_kind_name(pending_->action.kind) + ") is still running",
                          "wait for it or cancel it");
    auto p = std::make_unique<Pending>();
    p->action = a;
    const bool history = a.kind == Action::Kind::Edit && (a.edit.kind == EditAction::Kind::Undo ||
                                                          a.edit.kind == EditAction::Kind::Redo);
    if (history) { // done in finish(): a swap of states, nothing to slice
        pending_ = std::move(p);
        return {};
    }
    p->next = state_->copy();
    if (a.kind != Action::Kind::Run && a.kind != Action::Kind::Calibrate) {
        pending_ = std::move(p);
        return {};
    }
    p->sliced = true;
    State& s = *p->next;
    // The copy shares the committed state's observers; the forwards feed them, so
    // this action gets its own (the committed ones are what `before` compares with).
    p->before = s.exec;
    s.exec.observers = ModuleState::copy_observers(s.exec.observers);
    auto fail = [&](const Error& e) {
        p->result = Result<ActionOutcome>(e);
        pending_ = std::move(p);
        return Status();
    };
    auto first = inputs_for(a.inputs, p->label);
    if (!first.ok()) return fail(first.error());
    p->batches.push_back(first.take());
    p->opt.limits = options_.limits;
    p->opt.kernels.fast_conv = a.fast_kernels;
    p->opt.check_guards = a.check_guards;
    if (a.kind == Action::Kind::Calibrate) {
        if (s.exec.observers.empty())
            return fail(make_error("calibrate", "the module has no observers to calibrate",
                                   "run prepare_pt2e (or insert an observer) first"));
        p->opt.keep_values = false;            // observers record; nothing reads the values after
        p->runs_total = std::max(1, a.repeat); // batches after the first are made when due
        std::set<const Observer*> seen;
        for (const auto& [name, obs] : s.exec.observers)
            if (seen.insert(obs.get()).second) p->observers.push_back(obs.get());
        p->nodes_per_run = s.gm->forward_graph().size();
    } else {
        if (a.view == GraphView::Program && !s.ep)
            return fail(make_error("run", "a symbolic_trace graph has no ExportedProgram to run",
                                   "run its module"));
        p->runs_total = std::max(1, a.repeat);
        const bool program = a.view == GraphView::Program;
        p->nodes_per_run = program ? s.ep->graph->size() : s.gm->forward_graph().size();
        p->baseline_key =
            p->label + (a.fast_kernels ? " (fast kernels)" : "") + (program ? " [ep.graph]" : "");
        p->graph_as_loaded = program ? s.ep == original_ : s.gm == original_module_;
        p->before_fresh = s.exec_fresh;
        // Given tensors are new every time: their baseline is not kept.
        if (a.inputs.kind == InputSource::Kind::Given) p->baseline_key.clear();
        auto cached = p->baseline_key.empty() ? baselines_.end() : baselines_.find(p->baseline_key);
        if (cached != baselines_.end()) {
            p->baseline = cached->second;
            p->baseline_done = true;
        } else {
            // The first forward of the file as loaded, from its initial state, is the
            // baseline itself: no second run of the same graph.
            p->baseline_needed = !(p->graph_as_loaded && s.exec_fresh);
            p->nodes_baseline =
                program ? original_->graph->size() : original_module_->forward_graph().size();
        }
    }
    make_writable(s);
    pending_ = std::move(p);
    return {};
}

ActionProgress Workspace::progress() const {
    ActionProgress pr;
    if (!pending_) return pr;
    const Pending& p = *pending_;
    pr.seconds = seconds_since(p.t0);
    pr.what = action_kind_name(p.action.kind);
    if (!p.sliced) return pr;
    const uint64_t baseline = p.baseline_needed ? p.nodes_baseline : 0;
    pr.total =
        static_cast<uint64_t>(p.runs_total) * p.nodes_per_run + baseline + p.observers.size();
    pr.done = p.units_done + (p.exec ? p.exec->nodes_done() : 0) + p.qparams_done;
    pr.done = std::min(pr.done, pr.total);
    const bool calibrate = p.action.kind == Action::Kind::Calibrate;
    if (p.runs_done < p.runs_total)
        pr.what = std::string(calibrate ? "calibrate: batch " : "run ") +
                  std::to_string(p.runs_done + 1) + " of " + std::to_string(p.runs_total);
    else if (calibrate)
        pr.what = "calibrate: scale and zero_point of observer " +
                  std::to_string(std::min(p.qparams_done + 1, p.observers.size())) + " of " +
                  std::to_string(p.observers.size());
    else
        pr.what = "run the file as loaded, for parity";
    return pr;
}

void Workspace::cancel() {
    pending_.reset(); // the copy goes; the committed state was never touched
}

bool Workspace::advance(double seconds) {
    PT2LAB_CHECK(pending_ != nullptr);
    Pending& p = *pending_;
    if (p.result) return true;
    if (!p.next) return true; // undo / redo: finish() does it
    if (!p.sliced) {
        p.result = run_action(*p.next, p.action);
        return true;
    }
    const Clock::time_point deadline =
        seconds > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds))
                    : Clock::time_point::max();
    State& s = *p.next;
    const Action& a = p.action;
    const bool calibrate = a.kind == Action::Kind::Calibrate;
    auto fail = [&](const Error& e) {
        p.exec.reset();
        p.result = Result<ActionOutcome>(e);
        return true;
    };
    while (true) {
        const bool live = p.runs_done < p.runs_total;
        if (!live && (!p.baseline_needed || p.baseline_done)) break;
        if (!p.exec) { // start the next forward
            Result<std::unique_ptr<Execution>> e = std::unique_ptr<Execution>();
            if (live) {
                if (calibrate && p.batches.size() <= static_cast<size_t>(p.runs_done)) {
                    const auto k = static_cast<uint64_t>(p.runs_done); // SeededRng(k), k >= 1
                    auto b =
                        s.ep ? seeded_inputs(*s.ep, k, options_.limits)
                             : seeded_inputs(*s.gm->graph, nullptr, k, options_.limits, file_size_);
                    if (!b.ok()) return fail(b.error());
                    p.batches.push_back(b.take());
                }
                const std::vector<Tensor>& in = p.batches[calibrate ? p.runs_done : 0];
                e = !calibrate && a.view == GraphView::Program
                        ? Execution::of_program(*s.ep, s.exec, in, p.opt)
                        : Execution::of_module(*s.gm, s.exec, in, p.opt);
            } else {
                RunOptions bo = p.opt;
                bo.keep_values = false;
                if (a.view == GraphView::Program) {
                    p.baseline_state = ModuleState::from_program(*original_);
                    p.baseline_state.file_size = file_size_;
                    e = Execution::of_program(*original_, p.baseline_state, p.batches[0], bo);
                } else {
                    p.baseline_state = ModuleState::from_module(*original_module_);
                    p.baseline_state.file_size = file_size_;
                    e = Execution::of_module(*original_module_, p.baseline_state, p.batches[0], bo);
                }
            }
            if (!e.ok()) return fail(e.error());
            p.exec = e.take();
            p.exec_ms = 0;
        }
        const Clock::time_point t0 = Clock::now();
        Status st = p.exec->advance(deadline);
        p.exec_ms += seconds_since(t0) * 1000;
        if (!st.ok()) return fail(st.error());
        if (!p.exec->done()) return false; // the deadline passed
        auto r = p.exec->finish();
        p.units_done += p.exec->nodes_total();
        p.exec.reset();
        if (!r.ok()) return fail(r.error());
        if (live) {
            p.last = r.take();
            p.last_ms = p.exec_ms;
            if (p.runs_done == 0 && !p.baseline_needed && !p.baseline_done) {
                p.baseline.outputs = p.last.outputs; // the file as loaded: its own baseline
                p.baseline.output_names = p.last.output_names;
                p.baseline_done = true;
            }
            ++p.runs_done;
        } else {
            p.baseline = r.take();
            p.baseline_done = true;
        }
        if (Clock::now() >= deadline) return false;
    }

    // Each observer's scale and zero_point, one observer per step (a HistogramObserver's
    // search takes milliseconds to a second): cached in the observer until it next
    // observes, so the summary below and convert_pt2e reuse them.
    while (calibrate && p.qparams_done < p.observers.size()) {
        (void)p.observers[p.qparams_done]->calculate_qparams();
        ++p.qparams_done;
        if (p.qparams_done < p.observers.size() && Clock::now() >= deadline) return false;
    }
    ActionOutcome out;
    out.view = GraphView::Module;
    if (calibrate) {
        out.summary =
            "calibrated on " + std::to_string(p.batches.size()) + " batch(es): " + p.label +
            (a.repeat > 1 ? " + SeededRng(1.." + std::to_string(a.repeat - 1) + ").normal()" : "") +
            (a.fast_kernels ? " (fast kernels)" : "") + "\n" + observer_lines(s.exec);
        out.changed = true;
        s.exec_fresh = false;
        p.result = std::move(out);
        return true;
    }
    RunReport rep;
    rep.view = a.view;
    rep.inputs_label = p.label;
    rep.inputs = p.batches[0];
    rep.fast_kernels = a.fast_kernels;
    rep.repeat = p.runs_total;
    rep.ms = p.last_ms;
    rep.stale = a.view == GraphView::Module && s.gm->stale();
    rep.parity = compare_runs(p.last, p.baseline);
    // A quantized graph is meant to differ from the float one: judged by its SQNR.
    const Graph& ran = a.view == GraphView::Program ? *s.ep->graph : *s.gm->graph;
    for (const Node* n : ran.nodes())
        if (n->is(OpId::quantize_per_tensor) || n->is(OpId::dequantize_per_tensor)) {
            rep.parity.approximate = true;
            break;
        }
    // torch's eager outputs are for one forward of the saved state.
    if (original_ && !original_->reference_outputs.empty() && p.label == kSampleInputsLabel) {
        const bool saved_state =
            original_->buffers_after.empty() || (p.before_fresh && p.runs_total == 1);
        if (saved_state)
            rep.reference = compare_with_reference(p.last, original_->reference_outputs);
        else
            rep.reference_skipped = "the reference is for one forward from the saved state";
    }
    rep.result = std::move(p.last);
    const std::string where = a.view == GraphView::Program ? " (ep.graph)" : "";
    out.summary = "ran" + where + " on " + p.label +
                  (a.repeat > 1 ? " x" + std::to_string(a.repeat) : "") +
                  (a.fast_kernels ? " (fast kernels)" : "") + "\n" +
                  (rep.stale ? "the graph changed since the last recompile(): as in torch, "
                               "forward() ran the code of that recompile\n"
                             : "") +
                  rep.parity.str();
    // A run changed the state when it wrote a different value (an eval-mode
    // batch_norm reads its running stats and writes nothing) or fed an observer.
    out.changed = !same_values(p.before, s.exec);
    if (out.changed) s.exec_fresh = false;
    s.last_run = rep;
    out.run = std::move(rep);
    p.result = std::move(out);
    return true;
}

Result<ActionOutcome> Workspace::finish() {
    PT2LAB_CHECK(pending_ != nullptr);
    std::unique_ptr<Pending> p = std::move(pending_);
    const Action& a = p->action;
    if (!p->next) { // undo / redo
        Status s = a.edit.kind == EditAction::Kind::Undo ? undo() : redo();
        if (!s.ok()) return s.error();
        return *last_outcome_;
    }
    PT2LAB_CHECK(p->result.has_value()); // advance() said the work is done
    if (p->result->ok() && p->sliced && a.kind == Action::Kind::Run && !p->baseline_key.empty())
        baselines_[p->baseline_key] = p->baseline;
    return commit(std::move(p->next), a, std::move(*p->result));
}

} // namespace pt2lab
