// The Workspace's actions: each runs on a copy of the state (Workspace::apply
// commits it on success), so a failure anywhere leaves the workspace as it was.
#include <algorithm>
#include <cstdio>

#include "passes/unlift.h"
#include "workspace/workspace_state.h"

namespace pt2lab {

std::unique_ptr<Workspace::State> Workspace::State::copy() const {
    auto c = std::make_unique<State>();
    if (ep) c->ep = ep->clone();
    c->gm = gm.clone();
    c->exec = exec.share();
    c->exec_source = exec_source;
    c->module_actions = module_actions;
    c->last_run = last_run;
    return c;
}

void sync_exec_state(Workspace::State& s) {
    const GraphModule& gm = s.gm;
    if (s.ep) s.exec.file_size = s.ep->file_size; // sizes the run budgets (util/limits.h)
    for (const auto& [fqn, data] : gm.attrs) {
        auto src = s.exec_source.find(fqn);
        if (src != s.exec_source.end() && src->second == data.get() && s.exec.tensors.count(fqn))
            continue;
        s.exec.tensors[fqn] = std::make_shared<Tensor>(Tensor::from_data(*data));
        s.exec_source[fqn] = data.get();
    }
    for (auto it = s.exec.tensors.begin(); it != s.exec.tensors.end();) {
        if (gm.attrs.count(it->first)) {
            ++it;
            continue;
        }
        s.exec_source.erase(it->first);
        it = s.exec.tensors.erase(it);
    }
    for (auto it = s.exec.observers.begin(); it != s.exec.observers.end();) {
        auto sub = gm.submodules.find(it->first);
        if (sub != gm.submodules.end() && sub->second.observer)
            ++it;
        else
            it = s.exec.observers.erase(it);
    }
    s.exec.add_missing_observers(gm);
}

std::set<std::string> mutated_attrs(const Graph& g) {
    std::set<std::string> out;
    auto note = [&](const Argument& a) {
        if (a.is_node() && a.node->op() == Op::GetAttr) out.insert(a.node->target());
    };
    for (const Node* n : g.nodes()) {
        const OpInfo* op = n->op_info();
        if (n->op() != Op::CallFunction || !op) continue;
        for (size_t k = 0; k < n->args().size(); ++k)
            if (op->writes(k)) note(n->args()[k]);
        for (const auto& [key, arg] : n->kwargs()) {
            int k = op->schema.arg_index(key);
            if (k >= 0 && op->writes(static_cast<size_t>(k))) note(arg);
        }
    }
    return out;
}

void make_writable(Workspace::State& s) {
    for (const std::string& fqn : mutated_attrs(s.gm.forward_graph())) {
        auto it = s.exec.tensors.find(fqn);
        if (it != s.exec.tensors.end()) it->second = std::make_shared<Tensor>(*it->second);
    }
}

IrLevel ir_level_of(const Graph& g) {
    const DecompTable inference = DecompTable::for_level(IrLevel::Inference);
    const DecompTable core = DecompTable::for_level(IrLevel::CoreAten);
    bool above_core = false;
    for (const Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction) continue;
        if (inference.find(*n)) return IrLevel::Training;
        if (core.find(*n)) above_core = true;
    }
    return above_core ? IrLevel::Inference : IrLevel::CoreAten;
}

namespace {

std::string observer_lines(const ModuleState& state) {
    std::string out;
    for (const auto& [name, obs] : state.observers) {
        char line[256];
        auto q = obs->calculate_qparams();
        if (obs->calls() == 0 || !q.ok())
            std::snprintf(line, sizeof line, "  %%%s: no data yet\n", name.c_str());
        else
            std::snprintf(line, sizeof line,
                          "  %%%s: min %.6g max %.6g -> scale %.6g zero_point %lld\n", name.c_str(),
                          obs->min_val(), obs->max_val(), q.value().scale,
                          static_cast<long long>(q.value().zero_point));
        out += line;
    }
    return out;
}

// Observers the module calls that have recorded nothing (convert would pick (1.0, 0)).
std::vector<std::string> unobserved(const Workspace::State& s) {
    std::vector<std::string> out;
    for (const Node* n : s.gm.graph->nodes()) {
        if (n->op() != Op::CallModule) continue;
        auto obs = s.exec.observers.find(n->target());
        if (obs != s.exec.observers.end() && obs->second->calls() == 0) out.push_back(n->name());
    }
    return out;
}

// Whether two states hold the same values (shared tensors are equal without a look).
bool same_values(const ModuleState& a, const ModuleState& b) {
    if (a.tensors.size() != b.tensors.size() || a.observers.size() != b.observers.size())
        return false;
    for (const auto& [fqn, t] : a.tensors) {
        auto it = b.tensors.find(fqn);
        if (it == b.tensors.end()) return false;
        if (it->second != t && (it->second->sizes != t->sizes || it->second->storage != t->storage))
            return false;
    }
    for (const auto& [name, o] : a.observers) {
        auto it = b.observers.find(name);
        if (it == b.observers.end() || it->second->calls() != o->calls() ||
            it->second->min_val() != o->min_val() || it->second->max_val() != o->max_val())
            return false;
    }
    return true;
}

std::string edit_summary(const ActionResult& r) {
    std::string out;
    auto list = [&](const char* what, const std::vector<std::string>& names) {
        if (names.empty()) return;
        out += what;
        for (const auto& n : names) out += " %" + n;
        out += "\n";
    };
    list("created", r.created);
    list("rewired users:", r.changed);
    if (r.dce_changed) out += *r.dce_changed ? "dead code removed\n" : "no dead code\n";
    if (!r.modified && r.error.empty() && out.empty()) out = "nothing changed\n";
    return out;
}

// The file's own inputs: torch's eager outputs on them (extra/pt2lab) are a run's reference.
const char* const kSampleInputsLabel = "sample inputs (data/sample_inputs/model.pt)";

} // namespace

Result<std::vector<Tensor>> Workspace::inputs_for(const InputSource& src,
                                                  std::string& label) const {
    const ExportedProgram* ep = original_.get();
    InputSource::Kind kind = src.kind;
    if (kind == InputSource::Kind::Auto)
        kind = ep && !ep->example_inputs.empty() ? InputSource::Kind::Sample
                                                 : InputSource::Kind::Seeded;
    switch (kind) {
    case InputSource::Kind::Sample:
        if (!ep || ep->example_inputs.empty())
            return make_error("inputs",
                              ep ? "this file carries no sample inputs pt2lab can read "
                                   "(data/sample_inputs/model.pt)"
                                 : "a symbolic_trace graph carries no sample inputs",
                              "run it on seeded inputs instead");
        label = kSampleInputsLabel;
        return example_inputs(*ep);
    case InputSource::Kind::Seeded:
    case InputSource::Kind::Auto: break;
    }
    label = "SeededRng(" + std::to_string(src.seed) + ").normal()";
    return ep ? seeded_inputs(*ep, src.seed)
              : seeded_inputs(*original_module_->graph, nullptr, src.seed);
}

Result<RunResult> Workspace::baseline_for(const std::vector<Tensor>& inputs,
                                          const std::string& label, bool fast_kernels) const {
    const std::string key = label + (fast_kernels ? " (fast kernels)" : "");
    auto it = baselines_.find(key);
    if (it != baselines_.end()) return it->second;
    ModuleState fresh = ModuleState::from_module(*original_module_);
    RunOptions opt;
    opt.keep_values = false;
    opt.kernels.fast_conv = fast_kernels;
    auto r = run_module(*original_module_, fresh, inputs, opt);
    if (!r.ok()) return r.error();
    baselines_[key] = r.value();
    return r;
}

Result<ActionOutcome> Workspace::run_action(State& s, const Action& a) const {
    ActionOutcome out;
    out.view = GraphView::Module;
    GraphModule& gm = s.gm;
    auto module_changed = [&](bool changed) {
        out.changed = changed;
        if (changed) ++s.module_actions;
    };
    auto need_program = [&]() -> Status {
        if (s.ep) return {};
        return make_error(action_kind_name(a.kind),
                          "this file is a symbolic_trace graph, not an ExportedProgram: it has "
                          "no program to decompose",
                          "open the torch.export (.pt2) version of the model");
    };
    auto find_node = [](const Graph& g, const std::string& name) -> Result<Node*> {
        Node* n = g.find(name);
        if (!n) return make_error("%" + name, "no node named '" + name + "' in the graph");
        return n;
    };
    // Rebuilds ep.module() from a changed program, as ep.module() would after
    // run_decompositions; module-only changes made before are not carried over.
    auto rebuild_module = [&](ExportedProgram low, std::string& summary) -> Status {
        auto rebuilt = unlift(low);
        if (!rebuilt.ok()) return rebuilt.error();
        out.diff = diff_graphs(*s.ep->graph, *low.graph);
        if (s.module_actions > 0)
            summary += "ep.module() was rebuilt from the new program: the " +
                       std::to_string(s.module_actions) +
                       " module change(s) made before are not in it (undo brings them back)\n";
        s.ep = std::move(low);
        s.gm = rebuilt.take();
        s.module_actions = 0;
        return {};
    };
    GraphModule before_module;
    if (a.kind != Action::Kind::Decompose && a.kind != Action::Kind::DecomposeNode &&
        a.kind != Action::Kind::Run && a.kind != Action::Kind::Calibrate)
        before_module = gm.clone();

    switch (a.kind) {
    case Action::Kind::Edit: {
        auto r = apply_edit(gm, a.edit);
        if (!r.ok()) return r.error();
        out.torch_error = r.value().error;
        // Every refusal torch.fx makes for these (erase_node of a used node, lint,
        // the lint inside eliminate_dead_code) is a RuntimeError.
        if (!out.torch_error.empty()) out.torch_exception = "RuntimeError";
        out.summary = edit_summary(r.value());
        module_changed(r.value().modified);
        out.edit = r.take();
        break;
    }
    case Action::Kind::Decompose:
    case Action::Kind::DecomposeNode: {
        if (Status st = need_program(); !st.ok()) return st.error();
        out.view = GraphView::Program;
        DecompTable table = DecompTable::for_level(a.level);
        for (const std::string& op : a.keep)
            table = table.without(op.rfind("torch.ops.", 0) == 0 ? op : "torch.ops." + op);
        ExportedProgram low = s.ep->clone();
        std::string summary;
        if (a.kind == Action::Kind::Decompose) {
            auto r = run_decompositions(low, table);
            if (!r.ok()) return r.error();
            summary = r.value().str();
            out.changed = !r.value().steps.empty();
        } else {
            auto n = find_node(*low.graph, a.node);
            if (!n.ok()) return n.error();
            if (!table.find(*n.value()))
                return make_error("%" + a.node,
                                  "%" + a.node + " (" + n.value()->target() + ") has no " +
                                      ir_level_name(a.level) + " decomposition",
                                  "pick a node that decompose lists for this level");
            auto r = decompose_node(low, table, n.value());
            if (!r.ok()) return r.error();
            summary = "%" + r.value().node + ": " + r.value().rule + "\n";
            out.changed = true;
        }
        if (!out.changed) {
            out.summary = summary.empty() ? "nothing to decompose at this level\n" : summary;
            break;
        }
        if (Status st = rebuild_module(std::move(low), summary); !st.ok()) return st.error();
        out.summary = summary;
        sync_exec_state(s);
        return out;
    }
    case Action::Kind::FoldConvBn: {
        auto r = fold_conv_bn(gm);
        if (!r.ok()) return r.error();
        for (const auto& f : r.value().folded) out.summary += "folded " + f + "\n";
        for (const auto& f : r.value().skipped) out.summary += "skipped: " + f + "\n";
        if (r.value().folded.empty() && r.value().skipped.empty())
            out.summary = "no conv -> batch_norm pair to fold\n";
        module_changed(!r.value().folded.empty());
        break;
    }
    case Action::Kind::InsertObserver: {
        auto n = find_node(*gm.graph, a.node);
        if (!n.ok()) return n.error();
        auto obs = insert_observer(gm, n.value(), ObserverConfig::minmax_default());
        if (!obs.ok()) return obs.error();
        out.summary = "inserted %" + obs.value()->name() + " after %" + a.node + "\n";
        module_changed(true);
        break;
    }
    case Action::Kind::Prepare: {
        auto r = prepare_pt2e(gm);
        if (!r.ok()) return r.error();
        out.summary = r.value().str();
        module_changed(!r.value().observers.empty() || !r.value().fold.folded.empty());
        break;
    }
    case Action::Kind::Calibrate: {
        if (s.exec.observers.empty())
            return make_error("calibrate", "the module has no observers to calibrate",
                              "run prepare_pt2e (or insert an observer) first");
        std::string label;
        auto first = inputs_for(a.inputs, label);
        if (!first.ok()) return first.error();
        std::vector<std::vector<Tensor>> batches{first.take()};
        for (int k = 1; k < a.repeat; ++k) {
            auto b = s.ep ? seeded_inputs(*s.ep, static_cast<uint64_t>(k))
                          : seeded_inputs(*gm.graph, nullptr, static_cast<uint64_t>(k));
            if (!b.ok()) return b.error();
            batches.push_back(b.take());
        }
        make_writable(s);
        if (Status st = calibrate(gm, s.exec, batches); !st.ok()) return st.error();
        out.summary =
            "calibrated on " + std::to_string(batches.size()) + " batch(es): " + label +
            (a.repeat > 1 ? " + SeededRng(1.." + std::to_string(a.repeat - 1) + ").normal()" : "") +
            "\n" + observer_lines(s.exec);
        out.changed = true;
        return out;
    }
    case Action::Kind::Convert: {
        auto missing = unobserved(s);
        if (!missing.empty())
            return make_error("%" + missing.front(),
                              "observer %" + missing.front() +
                                  " has recorded no data, so convert would quantize with "
                                  "scale 1.0 and zero_point 0",
                              "calibrate first (run the prepared module on representative "
                              "inputs)");
        auto r = convert_pt2e(gm, s.exec, a.fold_quantize);
        if (!r.ok()) return r.error();
        out.summary = r.value().str();
        module_changed(!r.value().converted.empty());
        break;
    }
    case Action::Kind::SetTraining: {
        const char* mode = a.train ? "train" : "eval";
        if (s.ep) {
            // torch.export replaces ep.module()'s train()/eval() with functions that raise.
            out.torch_exception = "NotImplementedError";
            out.torch_error = std::string("Calling ") + mode + "() is not supported yet.";
            out.summary = std::string("ep.module().") + mode +
                          "() raised: the mode was fixed when the program was exported; export "
                          "again in the other mode\n";
        } else {
            out.summary = std::string("the symbolic_trace module switched to ") + mode +
                          " mode; its graph is unchanged (the mode is read when it runs)\n";
        }
        return out;
    }
    case Action::Kind::Run: {
        std::string label;
        auto inputs = inputs_for(a.inputs, label);
        if (!inputs.ok()) return inputs.error();
        const ModuleState before = s.exec.share(); // to tell whether the run wrote anything
        make_writable(s);
        RunOptions opt;
        opt.kernels.fast_conv = a.fast_kernels;
        Result<RunResult> r = RunResult{};
        for (int k = 0; k < std::max(1, a.repeat); ++k) {
            r = run_module(gm, s.exec, inputs.value(), opt);
            if (!r.ok()) return r.error();
        }
        auto base = baseline_for(inputs.value(), label, a.fast_kernels);
        if (!base.ok()) return base.error();
        RunReport rep;
        rep.inputs_label = label;
        rep.fast_kernels = a.fast_kernels;
        rep.stale = gm.stale();
        rep.parity = compare_runs(r.value(), base.value());
        if (a.inputs.kind != InputSource::Kind::Seeded && original_ &&
            !original_->reference_outputs.empty() && label == kSampleInputsLabel)
            rep.reference = compare_with_reference(r.value(), original_->reference_outputs);
        rep.result = r.take();
        out.summary = "ran on " + label + (a.repeat > 1 ? " x" + std::to_string(a.repeat) : "") +
                      (a.fast_kernels ? " (fast kernels)" : "") + "\n" +
                      (rep.stale ? "the graph changed since the last recompile(): as in torch, "
                                   "forward() ran the code of that recompile\n"
                                 : "") +
                      rep.parity.str();
        // A run changed the state when it wrote a different value (an eval-mode
        // batch_norm reads its running stats and writes nothing) or fed an observer.
        out.changed = !same_values(before, s.exec);
        s.last_run = rep;
        out.run = std::move(rep);
        return out;
    }
    }
    if (out.changed) {
        out.diff = diff_graphs(*before_module.graph, *gm.graph);
        sync_exec_state(s);
    }
    return out;
}

} // namespace pt2lab
