// The Workspace's actions: each runs on a copy of the state (Workspace::apply
// commits it on success), so a failure anywhere leaves the workspace as it was.
#include <algorithm>
#include <cstdio>

#include "graph/written_attrs.h"
#include "passes/unlift.h"
#include "workspace/workspace_state.h"

namespace pt2lab {

std::unique_ptr<Workspace::State> Workspace::State::copy() const {
    auto c = std::make_unique<State>();
    c->ep = ep;
    c->gm = gm;
    c->exec = exec; // tensors and observers shared: begin() copies what a run writes
    c->exec_source = exec_source;
    c->module_actions = module_actions;
    c->exec_fresh = exec_fresh;
    c->last_run = last_run;
    c->decomposed_to = decomposed_to;
    c->script = script;
    return c;
}

ExportedProgram& Workspace::State::own_ep() {
    PT2LAB_CHECK(ep != nullptr);
    if (!owns_ep_) set_ep(ep->clone());
    return const_cast<ExportedProgram&>(*ep); // made by set_ep, owned by this state only
}

GraphModule& Workspace::State::own_gm() {
    if (!owns_gm_) set_gm(gm->clone());
    return const_cast<GraphModule&>(*gm);
}

void Workspace::State::set_ep(ExportedProgram p) {
    ep = std::make_shared<ExportedProgram>(std::move(p));
    owns_ep_ = true;
}

void Workspace::State::set_gm(GraphModule m) {
    gm = std::make_shared<GraphModule>(std::move(m));
    owns_gm_ = true;
}

void sync_exec_state(Workspace::State& s, uint64_t file_size) {
    const GraphModule& gm = *s.gm;
    s.exec.file_size = file_size; // sizes the run budgets (util/limits.h)
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

void make_writable(Workspace::State& s) {
    for (const std::string& fqn : attrs_written_in_place(s.gm->forward_graph())) {
        auto it = s.exec.tensors.find(fqn);
        if (it != s.exec.tensors.end()) it->second = std::make_shared<Tensor>(*it->second);
    }
}

IrLevel ir_level_of(const Graph& g, bool aten_dialect) {
    const DecompTable inference = DecompTable::for_level(IrLevel::Inference);
    const DecompTable core = DecompTable::for_level(IrLevel::CoreAten);
    bool above_core = false;
    for (const Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction) continue;
        if (!aten_dialect && inference.find(*n)) return IrLevel::Training;
        if (core.find(*n)) above_core = true;
    }
    return above_core ? IrLevel::Inference : IrLevel::CoreAten;
}

bool observer_lines(const ModuleState& state, ObserverLines& at,
                    std::chrono::steady_clock::time_point deadline) {
    using Clock = std::chrono::steady_clock;
    if (!at.started) at.next = state.observers.begin(), at.started = true;
    for (size_t n = 1; at.next != state.observers.end(); ++at.next, ++n) {
        const auto& [name, obs] = *at.next;
        char line[256];
        auto q = obs->calculate_qparams();
        if (obs->calls() == 0 || !q.ok())
            std::snprintf(line, sizeof line, "  %%%s: no data yet\n", name.c_str());
        else
            std::snprintf(line, sizeof line,
                          "  %%%s: min %.6g max %.6g -> scale %.6g zero_point %lld\n", name.c_str(),
                          obs->min_val(), obs->max_val(), q.value().scale,
                          static_cast<long long>(q.value().zero_point));
        at.text += line;
        if (n % 256 == 0 && Clock::now() >= deadline) {
            ++at.next;
            return at.next == state.observers.end();
        }
    }
    return true;
}

std::string observer_lines(const ModuleState& state) {
    ObserverLines at;
    observer_lines(state, at, std::chrono::steady_clock::time_point::max());
    return std::move(at.text);
}

std::vector<std::string> unobserved(const Workspace::State& s) {
    std::vector<std::string> out;
    for (const Node* n : s.gm->graph->nodes()) {
        if (n->op() != Op::CallModule) continue;
        auto obs = s.exec.observers.find(n->target());
        if (obs != s.exec.observers.end() && obs->second->calls() == 0) out.push_back(n->name());
    }
    return out;
}

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

namespace {

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

} // namespace

const char* const kSampleInputsLabel = "sample inputs (data/sample_inputs/model.pt)";

Result<std::vector<Tensor>> Workspace::inputs_for(const InputSource& src,
                                                  std::string& label) const {
    const ExportedProgram* ep = original_.get();
    InputSource::Kind kind = src.kind;
    if (kind == InputSource::Kind::Auto)
        kind = ep && !ep->example_inputs.empty() ? InputSource::Kind::Sample
                                                 : InputSource::Kind::Seeded;
    switch (kind) {
    case InputSource::Kind::Given:
        label = src.label.empty() ? "the given inputs" : src.label;
        return src.tensors;
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
    return ep ? seeded_inputs(*ep, src.seed, options_.limits)
              : seeded_inputs(*original_module_->graph, nullptr, src.seed, options_.limits,
                              file_size_);
}

uint64_t values_bytes(const Graph& g) {
    uint64_t total = 0;
    for (const Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction) continue;
        auto add = [&](const TensorMeta& t) {
            total += static_cast<uint64_t>(std::max<int64_t>(t.numel(), 0)) *
                     static_cast<uint64_t>(scalar_type_size(t.dtype));
        };
        if (n->meta.val.is_tensor()) add(n->meta.val.tensor);
        for (const auto& item : n->meta.val.items)
            if (item.is_tensor()) add(item.tensor);
    }
    return total;
}

std::string rebuilt_note(int module_actions) {
    if (module_actions == 0) return {};
    return "ep.module() was rebuilt from the new program: the " + std::to_string(module_actions) +
           " module change(s) made before are not in it (undo brings them back)\n";
}

DecompTable decomp_table(const Action& a) {
    DecompTable table = DecompTable::for_level(a.level);
    for (const std::string& op : a.keep)
        table = table.without(op.rfind("torch.ops.", 0) == 0 ? op : "torch.ops." + op);
    return table;
}

Result<ActionOutcome> Workspace::run_action(State& s, const Action& a,
                                            const GraphModule& before_module) const {
    ActionOutcome out;
    out.view = GraphView::Module;
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
        UnliftOptions uo;
        uo.guards_fn = options_.guards_fn;
        auto rebuilt = unlift(low, uo);
        if (!rebuilt.ok()) return rebuilt.error();
        out.diff = diff_graphs(*s.ep->graph, *low.graph);
        summary += rebuilt_note(s.module_actions);
        s.set_ep(std::move(low));
        s.set_gm(rebuilt.take());
        s.module_actions = 0;
        return {};
    };

    switch (a.kind) {
    case Action::Kind::Edit: {
        auto r = apply_edit(s.own_gm(), a.edit);
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
    case Action::Kind::DecomposeNode: {
        if (Status st = need_program(); !st.ok()) return st.error();
        out.view = GraphView::Program;
        const DecompTable table = decomp_table(a);
        ExportedProgram low = s.ep->clone();
        auto n = find_node(*low.graph, a.node);
        if (!n.ok()) return n.error();
        if (!table.find(*n.value()))
            return make_error("%" + a.node,
                              "%" + a.node + " (" + n.value()->target() + ") has no " +
                                  ir_level_name(a.level) + " decomposition",
                              "pick a node that decompose lists for this level");
        auto r = decompose_node(low, table, n.value());
        if (!r.ok()) return r.error();
        std::string summary = "%" + r.value().node + ": " + r.value().rule + "\n";
        out.changed = true;
        if (Status st = rebuild_module(std::move(low), summary); !st.ok()) return st.error();
        out.summary = summary;
        sync_exec_state(s, file_size_);
        return out;
    }
    case Action::Kind::FoldConvBn: {
        auto r = fold_conv_bn(s.own_gm());
        if (!r.ok()) return r.error();
        for (const auto& f : r.value().folded) out.summary += "folded " + f + "\n";
        for (const auto& f : r.value().skipped) out.summary += "skipped: " + f + "\n";
        if (r.value().folded.empty() && r.value().skipped.empty())
            out.summary = "no conv -> batch_norm pair to fold\n";
        module_changed(!r.value().folded.empty());
        break;
    }
    case Action::Kind::InsertObserver: {
        GraphModule& gm = s.own_gm();
        auto n = find_node(*gm.graph, a.node);
        if (!n.ok()) return n.error();
        auto obs = insert_observer(gm, n.value(), ObserverConfig::minmax_default());
        if (!obs.ok()) return obs.error();
        out.summary = "inserted %" + obs.value()->name() + " after %" + a.node + "\n";
        module_changed(true);
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
    case Action::Kind::Run:
    case Action::Kind::Calibrate:
    case Action::Kind::Decompose:
    case Action::Kind::Prepare:
    case Action::Kind::Convert: PT2LAB_CHECK(!"done in pieces (workspace_jobs.cpp)"); break;
    }
    if (out.changed) {
        out.diff = diff_graphs(*before_module.graph, *s.gm->graph);
        sync_exec_state(s, file_size_);
    }
    return out;
}

} // namespace pt2lab
