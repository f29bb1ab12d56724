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

// Adds one forward's node times to the sums of the forwards before it (each forward
// of a plan runs its nodes in the same order), and empties them.
void add_times(std::vector<NodeTime>& sums, std::vector<NodeTime>& times) {
    bool same = sums.size() == times.size();
    for (size_t i = 0; same && i < times.size(); ++i) same = sums[i].node == times[i].node;
    if (sums.empty())
        sums.swap(times);
    else if (same)
        for (size_t i = 0; i < times.size(); ++i) sums[i].ms += times[i].ms;
    else // another order (not expected): kept as rows of their own, summed by profile_of
        sums.insert(sums.end(), times.begin(), times.end());
    times.clear();
}

// Whether g quantizes (quantize / dequantize pairs): its run is judged by its SQNR.
bool quantizes(const Graph& g) {
    for (const Node* n : g.nodes())
        if (n->is(OpId::quantize_per_tensor) || n->is(OpId::dequantize_per_tensor) ||
            n->is(OpId::quantize_per_channel) || n->is(OpId::dequantize_per_channel))
            return true;
    return false;
}

} // namespace

const Action* Workspace::pending_action() const {
    return pending_ ? &pending_->action : nullptr;
}

Status Workspace::begin(const Action& a) {
    if (!file_whole()) {
        Error e = make_error(action_kind_name(a.kind), "the file's weights are still being read in",
                             "wait until the file is read whole");
        e.file = file_;
        return e;
    }
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
        plan(*p);
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
        // Once, not per batch (7,810 observers looked up took 4 ms a batch).
        s.exec.add_missing_observers(*s.gm);
        p->opt.observers_ready = true;
        std::set<const Observer*> seen;
        for (const auto& [name, obs] : s.exec.observers)
            if (seen.insert(obs.get()).second) p->observers.push_back(obs.get());
        p->nodes_per_run = s.gm->forward_graph().size();
    } else {
        if (a.view == GraphView::Program && !s.ep)
            return fail(make_error("run", "a symbolic_trace graph has no ExportedProgram to run",
                                   "run its module"));
        p->runs_total = std::max(1, a.repeat);
        p->opt.node_times = &p->times; // the Run tab's profile: every forward's, averaged
        const bool program = a.view == GraphView::Program;
        p->nodes_per_run = program ? s.ep->graph->size() : s.gm->forward_graph().size();
        p->baseline_key =
            p->label + (a.fast_kernels ? " (fast kernels)" : "") + (program ? " [ep.graph]" : "");
        p->graph_as_loaded = program ? s.ep == original_ : s.gm == original_module_;
        p->before_fresh = s.exec_fresh;
        // A quantized graph is meant to differ from the float one: judged by its SQNR,
        // and layer by layer when the file as loaded is the float model.
        p->approximate = quantizes(program ? *s.ep->graph : s.gm->forward_graph());
        p->layers_wanted =
            p->approximate &&
            !quantizes(program ? *original_->graph : original_module_->forward_graph());
        // Every node's value is kept for the inspector while the graph's values are small;
        // a bigger model's Run keeps none and runs fused (Limits::keep_values_bytes;
        // RunReport::values_kept says which). A quantized Run's layers are compared as its
        // last forward makes them (LayerStream), so they need no kept values; its convs run
        // unfused, as each conv's own value is a layer.
        p->values_bytes = values_bytes(program ? *s.ep->graph : s.gm->forward_graph());
        p->opt.keep_values = p->values_bytes <= options_.limits.keep_values_bytes;
        if (p->layers_wanted) p->opt.fuse_convs = false;
        // Given tensors are new every time: their baseline is not kept.
        if (a.inputs.kind == InputSource::Kind::Given) p->baseline_key.clear();
        auto cached = p->baseline_key.empty() ? baselines_.end() : baselines_.find(p->baseline_key);
        // A cached baseline holds outputs only; the layers need the float run's values.
        if (cached != baselines_.end() && !p->layers_wanted) {
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
    if (!p.sliced) {
        if (!p.next) return pr; // undo / redo
        // Stages are units; the stage now counts as far as its own count goes.
        constexpr uint64_t kUnit = 1000;
        const Stages& st = p.stages;
        pr.what = st.what();
        pr.total = st.count() * kUnit;
        pr.done = st.stage() * kUnit;
        if (!st.done() && st.work_total > 0)
            pr.done += std::min(st.work_done, st.work_total) * kUnit / st.work_total;
        return pr;
    }
    const uint64_t baseline = p.baseline_needed ? p.nodes_baseline : 0;
    // The layers: the quantized graph's nodes walked once, then each layer compared.
    const uint64_t layers = p.layers_wanted ? p.nodes_per_run + p.layer_pairs.size() : 0;
    const uint64_t layers_done =
        p.layers_paired ? p.nodes_per_run + (p.stream ? p.stream->compared() : p.layers_done)
                        : (p.pairing ? p.pairing->done() : 0);
    pr.total = static_cast<uint64_t>(p.runs_total) * p.nodes_per_run + baseline +
               p.observers.size() + layers;
    pr.done = p.units_done + (p.exec ? p.exec->nodes_done() : 0) + p.qparams_done + layers_done;
    pr.done = std::min(pr.done, pr.total);
    const bool calibrate = p.action.kind == Action::Kind::Calibrate;
    if (p.layers_wanted && !p.layers_paired)
        pr.what = "find the quantized layers in the float graph";
    else if (p.layers_wanted && p.baseline_needed && !p.baseline_done)
        pr.what = "run the file as loaded, for the per-layer table";
    else if (p.runs_done < p.runs_total)
        pr.what = std::string(calibrate ? "calibrate: batch " : "run ") +
                  std::to_string(p.runs_done + 1) + " of " + std::to_string(p.runs_total);
    else if (calibrate)
        pr.what = "calibrate: scale and zero_point of observer " +
                  std::to_string(std::min(p.qparams_done + 1, p.observers.size())) + " of " +
                  std::to_string(p.observers.size());
    else if (p.baseline_needed && !p.baseline_done)
        pr.what = "run the file as loaded, for parity";
    else if (p.action.view == GraphView::Module && !p.stale)
        pr.what = "compare the graph with its last recompile()";
    else
        pr.what = "sum up the run: where the time went, parity";
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
    const Clock::time_point deadline =
        seconds > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds))
                    : Clock::time_point::max();
    if (!p.sliced) {
        auto r = p.stages.step(deadline);
        if (!r.ok()) {
            p.result = Result<ActionOutcome>(r.error());
            return true;
        }
        if (!r.value()) return false;
        p.result = std::move(p.outcome);
        return true;
    }
    State& s = *p.next;
    const Action& a = p.action;
    const bool calibrate = a.kind == Action::Kind::Calibrate;
    auto fail = [&](const Error& e) {
        p.exec.reset();
        p.result = Result<ActionOutcome>(e);
        return true;
    };
    // The plan of graph g into `plan`, in pieces until the deadline: true once it is whole.
    auto plan_run = [&](std::shared_ptr<const RunPlan>& plan, const Graph& g, bool fuse,
                        Clock::time_point until) {
        if (plan && plan->fits(g, fuse)) return true;
        if (!p.planning) p.planning = std::make_unique<RunPlanning>(g, fuse);
        while (!p.planning->step(piece_size().nodes))
            if (Clock::now() >= until) return false;
        plan = p.planning->take();
        p.planning.reset();
        return true;
    };
    // A quantized Run's layers, paired first: they say what the float run keeps, and
    // whether the last one's values (layer_baseline_) will do.
    if (p.layers_wanted && !p.layers_paired) {
        const bool program = a.view == GraphView::Program;
        if (!p.pairing)
            p.pairing = std::make_unique<LayerPairing>(
                program ? *s.ep->graph : s.gm->forward_graph(),
                program ? *original_->graph : original_module_->forward_graph());
        while (!p.pairing->step(piece_size().nodes))
            if (Clock::now() >= deadline) return false;
        p.layer_pairs = p.pairing->take();
        p.layer_refs = p.pairing->references();
        p.pairing.reset();
        p.layers_paired = true;
        if (layer_baseline_ && layer_baseline_->key == p.baseline_key &&
            std::includes(layer_baseline_->refs->begin(), layer_baseline_->refs->end(),
                          p.layer_refs->begin(), p.layer_refs->end())) {
            p.baseline = layer_baseline_->result; // the tensors shared, not copied
            p.baseline_done = true;
            p.baseline_reused = true;
            p.units_done += p.nodes_baseline;
        }
        if (Clock::now() >= deadline) return false;
    }
    while (true) {
        // A quantized Run's float run comes first: its last forward compares with it.
        const bool float_first = p.layers_wanted && p.baseline_needed && !p.baseline_done;
        const bool live = !float_first && p.runs_done < p.runs_total;
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
                const bool program = !calibrate && a.view == GraphView::Program;
                if (!plan_run(p.plan, program ? *s.ep->graph : s.gm->forward_graph(),
                              run_fuses(p.opt), deadline))
                    return false;
                p.opt.plan = p.plan;
                RunOptions lo = p.opt;
                if (p.layers_wanted && p.runs_done + 1 == p.runs_total) {
                    p.stream = std::make_unique<LayerStream>(p.layer_pairs, p.baseline);
                    lo.on_value = [stream = p.stream.get()](const Node& n, const Value& v) {
                        stream->on_value(n, v);
                    };
                }
                const std::vector<Tensor>& in = p.batches[calibrate ? p.runs_done : 0];
                e = program ? Execution::of_program(*s.ep, s.exec, in, lo)
                            : Execution::of_module(*s.gm, s.exec, in, lo);
            } else {
                const bool program = a.view == GraphView::Program;
                RunOptions bo = p.opt;
                bo.node_times = nullptr; // the profile is the live forward's
                // The float run keeps the layers' values, nothing else (no conv fusion then).
                bo.keep_values = p.layers_wanted;
                bo.keep_only = p.layer_refs;
                bo.keep_before_writes = p.layers_wanted;
                bo.observers_ready = false;
                if (!plan_run(p.baseline_plan,
                              program ? *original_->graph : original_module_->forward_graph(),
                              run_fuses(bo), deadline))
                    return false;
                bo.plan = p.baseline_plan;
                if (program) {
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
            if (p.stream) { // the layers' comparisons are the table's time, not the forward's
                p.layers = p.stream->take();
                p.layers_ms = p.stream->ms();
                p.layers_done = p.layer_pairs.size();
                p.last_ms -= p.layers_ms;
                p.stream.reset();
            }
            p.live_ms += p.last_ms;
            add_times(p.time_sums, p.times); // a Run of 100 forwards keeps one row a node
            if (p.runs_done == 0 && !p.baseline_needed && !p.baseline_done) {
                p.baseline.outputs = p.last.outputs; // the file as loaded: its own baseline
                p.baseline.output_names = p.last.output_names;
                p.baseline_done = true;
            }
            ++p.runs_done;
        } else {
            p.baseline = r.take();
            p.baseline_done = true;
            p.baseline_ms = p.exec_ms;
        }
        if (Clock::now() >= deadline) return false;
    }

    // Each observer's scale and zero_point (a HistogramObserver's search takes
    // milliseconds to over 100 ms, so it runs in pieces too): cached in the observer
    // until it next observes, so the summary below and convert_pt2e reuse them.
    while (calibrate && p.qparams_done < p.observers.size()) {
        if (!p.observers[p.qparams_done]->prepare_qparams(deadline)) return false;
        (void)p.observers[p.qparams_done]->calculate_qparams();
        ++p.qparams_done;
        if (p.qparams_done < p.observers.size() && Clock::now() >= deadline) return false;
    }
    ActionOutcome out;
    out.view = GraphView::Module;
    if (calibrate) {
        if (!observer_lines(s.exec, p.observer_text, deadline)) return false;
        out.summary =
            "calibrated on " + std::to_string(p.batches.size()) + " batch(es): " + p.label +
            (a.repeat > 1 ? " + SeededRng(1.." + std::to_string(a.repeat - 1) + ").normal()" : "") +
            (a.fast_kernels ? " (fast kernels)" : "") + "\n" + std::move(p.observer_text.text);
        out.changed = true;
        s.exec_fresh = false;
        p.result = std::move(out);
        return true;
    }
    // Did forward() run an older recompile? The code view's own writer answers in
    // pieces (a converted 24k-node graph differs from its last recompile node for node,
    // and only the two codes, written, can say), and keeps the code for the Code tab.
    // A run leaves the graphs alone: its module is the committed one.
    if (a.view == GraphView::Module && !p.stale) {
        PT2LAB_CHECK(s.gm == state_->gm);
        if (!write_code(GraphView::Module, deadline)) return false;
        p.stale = code(GraphView::Module).stale;
        if (Clock::now() >= deadline) return false;
    }
    // The profile: a row a node, sorted (a converted 10k-node graph has 17,812), in pieces.
    if (!p.profile) {
        if (!p.profiling)
            p.profiling = std::make_unique<RunProfiling>(p.time_sums, p.live_ms, p.runs_done);
        if (!p.profiling->step(deadline)) return false;
        // Made mutable (held as const): the state that drops it frees its rows in pieces.
        p.profile = std::make_shared<RunProfile>(p.profiling->take());
        p.profiling.reset();
        if (Clock::now() >= deadline) return false;
    }
    RunReport rep;
    rep.view = a.view;
    rep.inputs_label = p.label;
    rep.inputs = p.batches[0];
    rep.fast_kernels = a.fast_kernels;
    rep.repeat = p.runs_total;
    rep.ms = p.last_ms;
    rep.stale = p.stale.value_or(false);
    rep.values_kept = p.opt.keep_values;
    rep.values_bytes = p.values_bytes;
    rep.profile = p.profile;
    // Outputs only: the float run's kept values are the layers', compared above.
    rep.parity = compare_outputs(p.last, p.baseline);
    rep.parity.approximate = p.approximate;
    if (p.layers_wanted) {
        p.layers.worst = worst_layer(p.layers.rows);
        rep.layers = std::make_shared<LayerTable>(std::move(p.layers));
        rep.layers_float_reused = p.baseline_reused;
        rep.float_run_ms = p.baseline_ms;
        rep.layers_ms = p.layers_ms;
    }
    // torch's eager outputs are for one forward of the saved state.
    if (original_ && !original_->reference_outputs.empty() && p.label == kSampleInputsLabel) {
        const bool saved_state =
            original_->buffers_after.empty() || (p.before_fresh && p.runs_total == 1);
        if (saved_state) {
            rep.reference = compare_with_reference(p.last, original_->reference_outputs);
            // torch's eager outputs are the float model's: a quantized run is judged by SQNR.
            rep.reference->approximate = p.approximate;
        } else
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
                  rep.parity.str() + (rep.layers ? rep.layers->summary() : "");
    // A run changed the state when it wrote a different value (an eval-mode
    // batch_norm reads its running stats and writes nothing) or fed an observer.
    out.changed = !same_values(p.before, s.exec);
    if (out.changed) s.exec_fresh = false;
    s.last_run = rep;
    out.run = std::move(rep);
    p.result = std::move(out);
    return true;
}

// Every action but a run, as stages of bounded pieces (util/stages.h): the
// graph copies, the passes, the diff and the executor state's update, so that no
// piece takes long on a 10k-node graph. Actions light enough for one piece
// (an edit of one node, train/eval) are one stage of run_action.
void Workspace::plan(Pending& p) const {
    using TP = Stages::Clock::time_point;
    State& s = *p.next;
    const Action& a = p.action;
    Stages& st = p.stages;
    p.outcome.view = GraphView::Module;
    p.before_module = s.gm;
    // The state's own module, its graph copied a piece at a time.
    auto copy_module = [&] {
        st.add("copy the module", [&p, &s](TP) -> Result<bool> {
            if (!p.cloning) p.cloning = std::make_unique<GraphCloning>(*s.gm->graph);
            if (!p.cloning->step(piece_size().nodes)) return false;
            s.set_gm(s.gm->clone_with(p.cloning->take()));
            p.cloning.reset();
            return true;
        });
    };
    // What a module change changed (the page highlights it), then the executor
    // state brought in line (tensors for new attributes, fresh observers).
    auto compare_and_sync = [&] {
        st.add("compare with the graph before", [&p, &s](TP) -> Result<bool> {
            if (p.over || !p.outcome.changed) return true;
            if (!p.diffing)
                p.diffing = std::make_unique<GraphDiffing>(*p.before_module->graph, *s.gm->graph);
            const bool whole = p.diffing->step(4 * piece_size().nodes);
            p.stages.work_done = p.diffing->done();
            p.stages.work_total = p.diffing->total();
            if (!whole) return false;
            p.outcome.diff = p.diffing->take();
            p.diffing.reset();
            return true;
        });
        st.add("update the module's state", [this, &p, &s](TP) -> Result<bool> {
            if (!p.over && p.outcome.changed) sync_exec_state(s, file_size_);
            return true;
        });
    };
    auto changed_module = [&p, &s](bool changed) {
        p.outcome.changed = changed;
        if (changed) ++s.module_actions;
    };

    switch (a.kind) {
    case Action::Kind::Prepare:
        copy_module();
        st.add(
            "prepare_pt2e",
            [&p, &s, changed_module](TP deadline) -> Result<bool> {
                if (!p.preparing) p.preparing = std::make_unique<Preparing>(s.own_gm());
                auto r = p.preparing->step(deadline);
                if (!r.ok()) return r.error();
                if (!r.value()) return false;
                p.prepare_report = p.preparing->take();
                p.preparing.reset();
                changed_module(!p.prepare_report.observers.empty() ||
                               !p.prepare_report.fold.folded.empty());
                return true;
            },
            [&p] { return p.preparing ? p.preparing->what() : std::string("prepare_pt2e"); });
        st.add("write the report", [&p](TP) -> Result<bool> {
            // 7,810 observers' lines at 10k nodes: 15 ms natively in one piece.
            const size_t n = p.prepare_report.line_count();
            const size_t to = std::min(n, p.report_at + piece_size().nodes);
            p.outcome.summary += p.prepare_report.lines(p.report_at, to);
            p.report_at = to;
            p.stages.work_unit = "line";
            p.stages.work_done = to;
            p.stages.work_total = n;
            return to >= n;
        });
        compare_and_sync();
        return;
    case Action::Kind::Convert:
        st.add("check the observers", [&s](TP) -> Result<bool> {
            auto missing = unobserved(s);
            if (missing.empty()) return true;
            return make_error("%" + missing.front(),
                              "observer %" + missing.front() +
                                  " has recorded no data, so convert would quantize with "
                                  "scale 1.0 and zero_point 0",
                              "calibrate first (run the prepared module on representative "
                              "inputs)");
        });
        copy_module();
        st.add(
            "convert_pt2e",
            [&p, &s, changed_module](TP deadline) -> Result<bool> {
                if (!p.converting)
                    p.converting =
                        std::make_unique<Converting>(s.own_gm(), s.exec, p.action.fold_quantize);
                auto r = p.converting->step(deadline);
                if (!r.ok()) return r.error();
                if (!r.value()) return false;
                p.convert_report = p.converting->take();
                p.converting.reset();
                changed_module(!p.convert_report.converted.empty());
                return true;
            },
            [&p] { return p.converting ? p.converting->what() : std::string("convert_pt2e"); });
        st.add("write the report", [&p](TP) -> Result<bool> {
            const size_t n = p.convert_report.converted.size();
            const size_t to = std::min(n, p.report_at + piece_size().nodes);
            p.outcome.summary += p.convert_report.lines(p.report_at, to);
            p.report_at = to;
            p.stages.work_unit = "observer";
            p.stages.work_done = to;
            p.stages.work_total = n;
            return to >= n;
        });
        compare_and_sync();
        return;
    case Action::Kind::Decompose: plan_decompose(p); return;
    case Action::Kind::Edit:
    case Action::Kind::FoldConvBn:
    case Action::Kind::InsertObserver: copy_module(); break;
    default: break;
    }
    st.add(action_kind_name(a.kind), [this, &p, &s](TP) -> Result<bool> {
        auto r = run_action(s, p.action, *p.before_module);
        if (!r.ok()) return r.error();
        p.outcome = r.take();
        return true;
    });
}

// run_decompositions on a copy of the program, then ep.module() built again from
// it, as torch's ep.module() would after it.
void Workspace::plan_decompose(Pending& p) const {
    using TP = Stages::Clock::time_point;
    State& s = *p.next;
    Stages& st = p.stages;
    p.outcome.view = GraphView::Program;
    st.add("copy the program", [&p, &s](TP) -> Result<bool> {
        if (!s.ep)
            return make_error("run_decompositions",
                              "this file is a symbolic_trace graph, not an ExportedProgram: it "
                              "has no program to decompose",
                              "open the torch.export (.pt2) version of the model");
        if (!p.cloning) p.cloning = std::make_unique<GraphCloning>(*s.ep->graph);
        if (!p.cloning->step(piece_size().nodes)) return false;
        p.low = std::make_unique<ExportedProgram>(s.ep->clone_with(p.cloning->take()));
        p.cloning.reset();
        return true;
    });
    st.add(
        "run_decompositions",
        [&p](TP deadline) -> Result<bool> {
            if (!p.decomposing)
                p.decomposing = std::make_unique<Decomposing>(*p.low, decomp_table(p.action));
            auto r = p.decomposing->step(deadline);
            if (!r.ok()) return r.error();
            if (!r.value()) return false;
            const DecompReport rep = p.decomposing->take();
            p.decomposing.reset();
            p.outcome.summary = rep.str();
            p.rules_applied = !rep.steps.empty();
            return true;
        },
        [&p] { return p.decomposing ? p.decomposing->what() : std::string("run_decompositions"); });
    // torch retraces: even with no rule applied, nodes are named afresh after
    // their ops (a custom op's %relu becomes %fancy_relu), a new program.
    st.add("compare with the program before", [&p, &s](TP) -> Result<bool> {
        if (!p.diffing) p.diffing = std::make_unique<GraphDiffing>(*s.ep->graph, *p.low->graph);
        const bool whole = p.diffing->step(4 * piece_size().nodes);
        p.stages.work_done = p.diffing->done();
        p.stages.work_total = p.diffing->total();
        if (!whole) return false;
        p.program_diff = p.diffing->take();
        p.diffing.reset();
        // A training-IR program comes back in torch's ATEN dialect even when no op
        // changed: a new program, whose ep.module() is built as torch builds it.
        const bool dialect = s.ep->verifiers != p.low->verifiers;
        p.outcome.changed = p.rules_applied || !p.program_diff.empty() || dialect;
        if (!p.outcome.changed) {
            if (p.outcome.summary.empty())
                p.outcome.summary = "nothing to decompose at this level\n";
            p.over = true;
        } else if (!p.rules_applied && p.program_diff.empty()) {
            p.outcome.summary +=
                "no op to decompose at this level; the program is now in the "
                "ATEN dialect (verifiers " +
                (p.low->verifiers.empty() ? std::string("none") : p.low->verifiers.front()) + ")\n";
        } else if (!p.rules_applied) {
            p.outcome.summary +=
                "no rule applied; the retrace named nodes afresh after their ops\n";
        }
        return true;
    });
    st.add(
        "ep.module()",
        [this, &p, &s](TP deadline) -> Result<bool> {
            if (p.over) return true;
            if (!p.unlifting) {
                UnliftOptions uo;
                uo.guards_fn = options_.guards_fn;
                p.unlifting = std::make_unique<Unlifting>(*p.low, uo);
            }
            if (!p.unlifting->step(deadline)) return false;
            auto rebuilt = p.unlifting->finish();
            p.unlifting.reset();
            if (!rebuilt.ok()) return rebuilt.error();
            p.outcome.diff = std::move(p.program_diff);
            p.outcome.summary += rebuilt_note(s.module_actions);
            s.set_ep(std::move(*p.low));
            p.low.reset();
            // The lowest level reached (core, then inference, stays core).
            s.decomposed_to = std::max(s.decomposed_to.value_or(IrLevel::Training), p.action.level);
            s.set_gm(rebuilt.take());
            s.module_actions = 0;
            return true;
        },
        [&p] { return std::string("ep.module(): ") + (p.unlifting ? p.unlifting->stage() : ""); });
    st.add("update the module's state", [this, &p, &s](TP) -> Result<bool> {
        if (!p.over) sync_exec_state(s, file_size_);
        return true;
    });
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
    if (p->result->ok() && p->sliced && a.kind == Action::Kind::Run && !p->baseline_key.empty()) {
        // A quantized Run's float run, with its layers' values: the next Run's, unless
        // it came from there.
        RunResult& cached = baselines_[p->baseline_key]; // outputs only: values are big
        cached = RunResult();
        cached.outputs = p->baseline.outputs;
        cached.output_names = p->baseline.output_names;
        if (p->layers_wanted && p->baseline_needed && !p->baseline_reused)
            layer_baseline_ = LayerBaseline{p->baseline_key, p->layer_refs, std::move(p->baseline)};
    }
    auto out = commit(std::move(p->next), a, std::move(*p->result));
    retired_.push_back(std::move(p));
    if (!shed_later_) retired_.clear();
    return out;
}

} // namespace pt2lab
