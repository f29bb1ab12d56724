// Lifting a module's attributes back into placeholders (see lift.h).
#include "passes/lift.h"

#include <algorithm>
#include <map>
#include <set>

#include "exec/interpreter.h"
#include "graph/op_schema.h"

namespace pt2lab {

namespace {

// What an attribute becomes: its kind, persistence and placeholder name.
struct Lifted {
    std::string target;
    InputKind kind = InputKind::Parameter;
    bool persistent = true;
    std::string name;
    size_t order = 0; // the base signature's position, or after them in graph order
    std::vector<Node*> reads;
};

// fx's sanitizing of a name: runs of other characters become '_'.
std::string sanitize(const std::string& s) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (ok || c == '_')
            out += c;
        else if (out.empty() || out.back() != '_')
            out += '_';
    }
    return out;
}

bool starts_with(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

Error node_error(const Node& n, const std::string& msg, const std::string& hint) {
    return make_error("%" + n.name(), msg, hint);
}

// Nodes an ExportedProgram cannot hold, with why and what to do instead.
Status check_node(const Node& n, const GraphModule& gm) {
    switch (n.op()) {
    case Op::Placeholder:
    case Op::Output: return {};
    case Op::GetAttr:
        if (gm.attrs.count(n.target())) return {};
        return node_error(n, "get_attr of " + n.target() + ", which is not a tensor attribute",
                          "an ExportedProgram lifts only parameters, buffers and constants");
    case Op::CallModule: {
        auto sub = gm.submodules.find(n.target());
        if (sub != gm.submodules.end() && sub->second.observer)
            return node_error(
                n,
                "calls observer " + n.target() + " (" + sub->second.type +
                    "): a prepared model has no ExportedProgram",
                "torch.export cannot export it either (a HistogramObserver's forward branches on "
                "its data: \"Could not guard on data-dependent expression\"); calibrate and "
                "convert first, or undo prepare");
        return node_error(n, "calls module " + n.target() + ": an ExportedProgram calls no modules",
                          "remove the call_module node (or undo the edit) before saving");
    }
    case Op::CallMethod:
        return node_error(n, "calls method " + n.target() + ": an ExportedProgram has no methods",
                          "remove the call_method node (or undo the edit) before saving");
    case Op::CallFunction:
        if (n.target() == "operator.getitem") return {};
        if (n.schema() && !n.schema()->ns.empty()) return {};
        return node_error(n,
                          "calls " + n.target() +
                              ", a Python function: an ExportedProgram records ATen operators",
                          "torch.export would trace it into ATen ops; insert the torch.ops.aten "
                          "overload instead (or undo the edit) before saving");
    }
    return {};
}

MetaVal meta_of(const Value& v) {
    MetaVal m;
    if (v.is_tensor()) {
        m.kind = MetaVal::Kind::Tensor;
        m.tensor.dtype = v.tensor->dtype;
        m.tensor.sizes = v.tensor->sizes;
    } else if (v.kind == Value::Kind::Tuple) {
        m.kind = MetaVal::Kind::Tuple;
        for (const Value& x : v.items) m.items.push_back(meta_of(x));
    } else if (v.kind == Value::Kind::Int) {
        m.kind = MetaVal::Kind::Int;
        m.value = v.i;
    }
    return m;
}

// Nodes an edit made carry no metadata (meta['val']); export's trace gives every
// value one, so the program runs once on its example inputs (seeded ones when it
// has none) and each such node takes the shape and dtype of what it computed.
Status fill_missing_meta(ExportedProgram& ep) {
    std::vector<Node*> missing;
    for (Node* n : ep.graph->nodes())
        if (n->op() == Op::CallFunction && n->meta.val.kind == MetaVal::Kind::None && n->schema() &&
            !n->schema()->returns.empty() && n->target() != "operator.getitem")
            missing.push_back(n);
    if (missing.empty()) return {};
    std::vector<Tensor> inputs = example_inputs(ep);
    if (inputs.empty()) {
        auto seeded = seeded_inputs(ep, 0);
        if (!seeded.ok()) return seeded.error();
        inputs = seeded.take();
    }
    ModuleState state = ModuleState::from_program(ep);
    auto run = run_program(ep, state, inputs);
    if (!run.ok()) {
        Error e = run.error();
        e.hint = "the shapes of the nodes the edits made come from one run of the program";
        return e;
    }
    for (Node* n : missing) {
        auto it = run.value().values.find(n->name());
        if (it == run.value().values.end())
            return node_error(*n, "no metadata (meta['val']), and the run kept no value for it",
                              "the program is too big to run whole here");
        n->meta.val = meta_of(it->second);
    }
    return {};
}

} // namespace

Result<ExportedProgram> lift(const GraphModule& gm, const ExportedProgram& base) {
    const Graph& from = gm.forward_graph();
    for (Node* n : from.nodes()) {
        if (n->op() == Op::CallModule) {
            auto sub = gm.submodules.find(n->target());
            if (sub != gm.submodules.end() && sub->second.type == "GuardsFn") continue;
        }
        if (Status s = check_node(*n, gm); !s.ok()) return s.error();
    }
    std::unique_ptr<Graph> g = from.clone();

    // The guard module's call goes: export records guards, not a module (check_node
    // let no other call_module through).
    for (Node* n : g->nodes())
        if (n->op() == Op::CallModule)
            if (Status s = g->erase_node(n); !s.ok()) return s.error();

    // Attributes read, in graph order, with what they become.
    std::map<std::string, size_t> base_pos;
    for (size_t k = 0; k < base.signature.inputs.size(); ++k)
        if (!base.signature.inputs[k].target.empty())
            base_pos.emplace(base.signature.inputs[k].target, k);
    std::vector<Lifted> lifted;
    std::map<std::string, size_t> index;
    for (Node* n : g->nodes()) {
        if (n->op() != Op::GetAttr) continue;
        auto [it, fresh] = index.emplace(n->target(), lifted.size());
        if (!fresh) {
            lifted[it->second].reads.push_back(n);
            continue;
        }
        Lifted l;
        l.target = n->target();
        l.reads.push_back(n);
        auto known = base_pos.find(l.target);
        if (known != base_pos.end()) {
            const InputSpec& is = base.signature.inputs[known->second];
            l.kind = is.kind;
            l.persistent = is.persistent.value_or(true);
            l.name = is.arg;
            l.order = known->second;
        } else {
            const std::string leaf = l.target.substr(l.target.find_last_of('.') + 1);
            const bool buffer =
                starts_with(leaf, "_frozen_param") || starts_with(leaf, "_tensor_constant");
            l.kind = buffer ? InputKind::Buffer : InputKind::Parameter;
            l.name = (buffer ? "b_" : "p_") + sanitize(l.target);
            l.order = base.signature.inputs.size() + lifted.size();
        }
        lifted.push_back(std::move(l));
    }
    auto rank = [](InputKind k) {
        return k == InputKind::Parameter ? 0 : k == InputKind::Buffer ? 1 : 2;
    };
    std::stable_sort(lifted.begin(), lifted.end(), [&](const Lifted& a, const Lifted& b) {
        return std::make_pair(rank(a.kind), a.order) < std::make_pair(rank(b.kind), b.order);
    });

    ExportedProgram ep;
    static_cast<ExportedProgramFields&>(ep) = base; // provenance, call graph, inputs ...
    ep.signature = GraphSignature();
    ep.state_dict.clear();
    ep.constants.clear();
    ep.reference_outputs.clear(); // they were torch's outputs of the program as loaded
    ep.buffers_after.clear();
    ep.verifiers = {"TRAINING"};

    // Placeholders for the attributes, before everything else, made in one
    // inserting_before block (creation order kept); then their get_attrs go.
    std::set<std::string> taken;
    for (Node* n : g->nodes()) taken.insert(n->name());
    std::vector<Node*> user_inputs = g->placeholders();
    std::vector<Node*> made;
    {
        auto at = g->inserting_before(g->nodes().front());
        for (Lifted& l : lifted) {
            std::string name = l.name;
            for (int k = 1; taken.count(name); ++k) name = l.name + "_" + std::to_string(k);
            taken.insert(name);
            Node* ph = g->placeholder(name);
            g->force_name(ph, name);
            made.push_back(ph);
        }
    }
    for (size_t k = 0; k < lifted.size(); ++k) {
        const Lifted& l = lifted[k];
        Node* ph = made[k];
        ph->meta = l.reads.front()->meta;
        const TensorData& t = *gm.attrs.at(l.target);
        TensorMeta& m = ph->meta.val.tensor;
        ph->meta.val.kind = MetaVal::Kind::Tensor;
        m.dtype = t.dtype;
        m.sizes = t.sizes;
        m.strides.clear();
        m.storage_offset = 0;
        m.symbolic_sizes.clear();
        for (Node* r : l.reads) {
            r->replace_all_uses_with(ph);
            if (Status s = g->erase_node(r); !s.ok()) return s.error();
        }
        InputSpec is;
        is.kind = l.kind;
        is.arg = ph->name();
        is.target = l.target;
        if (l.kind == InputKind::Buffer) is.persistent = l.persistent;
        ep.signature.inputs.push_back(is);
        const bool in_state_dict =
            l.kind == InputKind::Parameter || (l.kind == InputKind::Buffer && l.persistent);
        (in_state_dict ? ep.state_dict : ep.constants)[l.target] = gm.attrs.at(l.target);
    }
    // Every placeholder first, as export (and torch's deserializer) has them: in the
    // module, get_attrs and nodes made from them (convert's weight dequantize) may
    // come before the user inputs.
    Node* body = nullptr;
    for (Node* n : g->nodes())
        if (n->op() != Op::Placeholder && !body) body = n;
    for (Node* n : user_inputs) g->move_before(n, body);
    for (Node* n : user_inputs) {
        InputSpec is;
        is.kind = InputKind::UserInput;
        is.arg = n->name();
        ep.signature.inputs.push_back(is);
    }
    Node* out = g->output_node();
    if (!out || out->args().size() != 1)
        return make_error("output", "the module has no output node to return");
    const Argument& r = out->args()[0];
    const std::vector<Argument> values = r.is_sequence() ? r.items : std::vector<Argument>{r};
    for (const Argument& v : values) {
        OutputSpec os;
        os.kind = OutputKind::UserOutput;
        os.arg = v.is_node() && v.node ? v.node->name() : "";
        ep.signature.outputs.push_back(os);
    }
    // Submodule call signatures name values of the old graph; keep only those still there.
    for (ModuleCallEntry& e : ep.module_call_graph) {
        if (e.fqn.empty() || !e.has_signature) continue;
        bool all_there = true;
        for (const auto* side : {&e.inputs, &e.outputs})
            for (const std::string& nm : *side) all_there &= nm.empty() || g->find(nm);
        if (!all_there) {
            ModuleCallEntry bare;
            bare.fqn = e.fqn;
            e = std::move(bare);
        }
    }
    if (Status s = g->lint(); !s.ok()) return s.error();
    ep.graph = std::move(g);
    if (Status s = fill_missing_meta(ep); !s.ok()) return s.error();
    return ep;
}

} // namespace pt2lab
