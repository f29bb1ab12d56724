// Copy as Python (python_script.h): each action as the torch calls that do it.
#include "workspace/python_script.h"

#include "graph/printer.h"
#include "util/pyrepr.h"
#include "workspace/workspace_state.h"

namespace pt2lab {
namespace {

// A node of the script's gm, looked up by the name pt2lab and torch.fx share.
std::string node_ref(const std::string& name) {
    return "node(" + py_str_repr(name) + ")";
}

// An argument as a Python expression over the script's names: nodes through node().
std::string py_arg(const Argument& a) {
    switch (a.kind) {
    case ArgKind::NodeRef: return node_ref(a.node ? a.node->name() : a.s);
    case ArgKind::Device: return "torch.device(" + py_str_repr(a.s) + ")";
    case ArgKind::List:
    case ArgKind::Tuple: {
        std::string out = a.kind == ArgKind::List ? "[" : "(";
        for (size_t k = 0; k < a.items.size(); ++k) out += (k ? ", " : "") + py_arg(a.items[k]);
        if (a.kind == ArgKind::Tuple && a.items.size() == 1) out += ",";
        return out + (a.kind == ArgKind::List ? "]" : ")");
    }
    case ArgKind::Dict: {
        std::string out = "{";
        for (size_t k = 0; k < a.items.size(); ++k)
            out += (k ? ", " : "") + py_str_repr(a.keys[k]) + ": " + py_arg(a.items[k]);
        return out + "}";
    }
    default: return arg_repr(a);
    }
}

std::string py_args(const std::vector<Argument>& args) {
    return py_arg(Argument::tuple(args));
}

std::string py_kwargs(const Kwargs& kw) {
    std::string out = "{";
    for (size_t k = 0; k < kw.size(); ++k)
        out += (k ? ", " : "") + py_str_repr(kw[k].first) + ": " + py_arg(kw[k].second);
    return out + "}";
}

// "torch.ops.aten.conv2d.default" for an op written with or without the prefix.
std::string op_expr(const std::string& op) {
    return op.rfind("torch.ops.", 0) == 0 ? op : "torch.ops." + op;
}

// The inputs a run or a calibration's first batch used, as an expression.
std::string inputs_expr(const InputSource& src, bool file_has_samples) {
    InputSource::Kind kind = src.kind;
    if (kind == InputSource::Kind::Auto)
        kind = file_has_samples ? InputSource::Kind::Sample : InputSource::Kind::Seeded;
    switch (kind) {
    case InputSource::Kind::Sample: return "sample_args";
    case InputSource::Kind::Given: return "given_inputs";
    default: return "seeded_inputs(loaded, " + std::to_string(src.seed) + ")";
    }
}

std::string edit_lines(const EditAction& e, const ActionOutcome& out) {
    std::string s;
    switch (e.kind) {
    case EditAction::Kind::Insert: {
        for (const NodeSpec& spec : e.nodes)
            if (spec.op == Op::CallModule && !spec.module_type.empty())
                s += "if not hasattr(gm, " + py_str_repr(spec.target) +
                     "):\n    gm.add_submodule(" + py_str_repr(spec.target) + ", " +
                     spec.module_type + "())\n";
        s += std::string("with gm.graph.inserting_") + (e.after ? "after" : "before") + "(" +
             (e.anchor ? node_ref(*e.anchor) : "None") + "):\n";
        for (size_t k = 0; k < e.nodes.size(); ++k) {
            const NodeSpec& spec = e.nodes[k];
            std::string target =
                spec.op == Op::CallFunction ? spec.target : py_str_repr(spec.target);
            std::string name = k < out.edit.created.size() ? out.edit.created[k] : spec.name;
            s += "    gm.graph.create_node(" + py_str_repr(std::string(op_name(spec.op))) + ", " +
                 target + ", " + py_args(spec.args) + ", " + py_kwargs(spec.kwargs) +
                 (name.empty() ? "" : ", name=" + py_str_repr(name)) + ")\n";
        }
        return s;
    }
    case EditAction::Kind::ReplaceAllUsesWith: {
        s = node_ref(e.node) + ".replace_all_uses_with(" + node_ref(e.with);
        if (e.skip_users) {
            std::string names;
            for (const std::string& u : *e.skip_users) names += py_str_repr(u) + ", ";
            s += ", delete_user_cb=lambda user: user.name not in {" +
                 names.substr(0, names.size() - 2) + "}";
        }
        return s + ")\n";
    }
    case EditAction::Kind::ReplaceInputWith:
        return node_ref(e.node) + ".replace_input_with(" + node_ref(e.old_input) + ", " +
               node_ref(e.new_input) + ")\n";
    case EditAction::Kind::EraseNode: return "gm.graph.erase_node(" + node_ref(e.node) + ")\n";
    case EditAction::Kind::SetArgs: return node_ref(e.node) + ".args = " + py_args(e.args) + "\n";
    case EditAction::Kind::EliminateDeadCode: return "gm.graph.eliminate_dead_code()\n";
    case EditAction::Kind::Lint: return "gm.graph.lint()\n";
    case EditAction::Kind::Recompile: return "gm.recompile()\n";
    case EditAction::Kind::Undo:
    case EditAction::Kind::Redo: break; // the workspace's: they change which steps are current
    }
    return {};
}

std::string decompose_lines(const Action& a, const Workspace::State& before) {
    std::string s;
    if (a.kind == Action::Kind::DecomposeNode) {
        const Node* n = before.ep ? before.ep->graph->find(a.node) : nullptr;
        std::string op = n ? pretty_target(*n) : "the op of %" + a.node;
        s = "# torch decomposes ops, not single nodes: run_decompositions lowers every " + op +
            "\n# node (pt2lab lowered %" + a.node +
            " alone) and, as it always does, the whole program to the inference IR.\n";
        if (a.level == IrLevel::CoreAten)
            s += "ep = ep.run_decompositions({" + op + ": torch.export.default_decompositions()[" +
                 op + "]})\n";
        else
            s += "ep = ep.run_decompositions({})\n";
    } else if (a.level != IrLevel::CoreAten) {
        s = "ep = ep.run_decompositions({})\n";
    } else if (a.keep.empty()) {
        s = "ep = ep.run_decompositions()  # torch.export.default_decompositions(): Core ATen\n";
    } else {
        s = "table = torch.export.default_decompositions()\n";
        for (const std::string& op : a.keep) s += "table.pop(" + op_expr(op) + ", None)  # kept\n";
        s += "ep = ep.run_decompositions(table)\n";
    }
    return s + "gm = ep.module()  # made again from the new program, as pt2lab does\n";
}

} // namespace

PythonStep python_step(const Action& a, const ActionOutcome& out, const Workspace::State& before,
                       bool file_has_samples, int index, const std::string& label) {
    PythonStep step;
    step.kind = a.kind;
    std::string& s = step.code;
    s = "# " + std::to_string(index) + ". " + label + "\n";
    switch (a.kind) {
    case Action::Kind::Edit: s += edit_lines(a.edit, out); break;
    case Action::Kind::Decompose:
    case Action::Kind::DecomposeNode: s += decompose_lines(a, before); break;
    case Action::Kind::FoldConvBn: s += "_fuse_conv_bn_(gm)\n"; break;
    case Action::Kind::InsertObserver: {
        std::string obs;
        for (const std::string& n : out.diff.added)
            if (n.rfind("activation_post_process_", 0) == 0) obs = n;
        // passes/pt2e.h's insert_observer: a MinMaxObserver of the default config.
        s += "gm.add_submodule(" + py_str_repr(obs) + ", torch.ao.quantization.observer." +
             ObserverConfig::minmax_default().describe() + ")\n";
        s += "with gm.graph.inserting_after(" + node_ref(a.node) +
             "):\n    observer = " + "gm.graph.call_module(" + py_str_repr(obs) + ", (" +
             node_ref(a.node) + ",))\n";
        // As passes/prepare.cpp's insert_observer: no recompile (gm.code stays stale).
        s += node_ref(a.node) +
             ".replace_all_uses_with(observer, delete_user_cb=lambda user: user is not observer)\n";
        break;
    }
    case Action::Kind::Prepare:
        s += "quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())\n"
             "gm = prepare_pt2e(gm, quantizer)\n";
        break;
    case Action::Kind::Calibrate:
        s += "for batch in [" + inputs_expr(a.inputs, file_has_samples) + "] + [seeded_inputs(" +
             "loaded, seed) for seed in range(1, " + std::to_string(std::max(a.repeat, 1)) +
             ")]:\n    gm(*batch)  # the observers record\n";
        break;
    case Action::Kind::Convert:
        s += std::string("gm = convert_pt2e(gm, fold_quantize=") +
             (a.fold_quantize ? "True" : "False") + ")\n";
        break;
    case Action::Kind::Run: {
        // Only a run that changed the state is a step: train-mode BatchNorm moving its
        // running statistics, observers recording.
        std::string in = inputs_expr(a.inputs, file_has_samples);
        std::string call = a.view == GraphView::Program ? "ep.module()" : "gm";
        for (int k = 0; k < std::max(a.repeat, 1); ++k)
            s += call + "(*" + in +
                 ")  # the run changes the state: observers record, buffers move\n";
        break;
    }
    case Action::Kind::SetTraining: s += std::string("gm.") + (a.train ? "train" : "eval") + "()\n";
    }
    return step;
}

std::string python_script(const std::string& path, bool program,
                          const std::vector<PythonStep>& steps) {
    const std::string file = path.substr(path.find_last_of('/') + 1); // beside the script
    bool samples = false, seeded = false, given = false, ao = false, fold = false;
    for (const PythonStep& st : steps) {
        samples |= st.code.find("sample_args") != std::string::npos;
        seeded |= st.code.find("seeded_inputs(") != std::string::npos;
        given |= st.code.find("given_inputs") != std::string::npos;
        ao |= st.kind == Action::Kind::Prepare || st.kind == Action::Kind::Convert;
        fold |= st.kind == Action::Kind::FoldConvBn;
    }
    std::string s;
    s += "# What pt2lab did to " + file +
         ", written with torch's own API: run it beside the\n"
         "# file (python3 script.py) and gm is the graph the page shows"
         " (print(gm.graph), gm.code).\n"
         "# Written for torch 2.14.1; prepare_pt2e and convert_pt2e are torch.ao's (torch 2.6;\n"
         "# later releases moved them to the torchao package).\n";
    s += "import operator  # noqa: F401  (call_function targets such as operator.getitem)\n\n"
         "import torch\n";
    if (ao)
        s += "from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e\n"
             "from torch.ao.quantization.quantizer.xnnpack_quantizer import (\n"
             "    XNNPACKQuantizer,\n    get_symmetric_quantization_config,\n)\n";
    if (fold) s += "from torch.ao.quantization.pt2e.utils import _fuse_conv_bn_\n";
    s += "\n";
    if (program) {
        s += "ep = torch.export.load(" + py_str_repr(file) +
             ")\n"
             "loaded = ep  # the program as loaded: its inputs' shapes, its sample inputs\n"
             "gm = ep.module()\n";
    } else {
        s += "# " + file +
             " is pt2lab's JSON of a torch.fx.symbolic_trace graph, which torch\n"
             "# cannot read: trace the same model here; the steps below then apply to it.\n"
             "model = None  # your nn.Module\n"
             "gm = torch.fx.symbolic_trace(model)\n"
             "loaded = None\n";
    }
    if (samples) s += "sample_args, sample_kwargs = loaded.example_inputs\n";
    if (given)
        s += "given_inputs = ()  # pt2lab ran on inputs given as .npy files: load them here\n";
    s += "\n\ndef node(name):\n"
         "    \"\"\"The node of gm.graph called `name` (pt2lab and torch.fx name nodes "
         "alike).\"\"\"\n"
         "    return next(n for n in gm.graph.nodes if n.name == name)\n";
    if (seeded)
        s += "\n\ndef seeded_inputs(program, seed):\n"
             "    \"\"\"pt2lab's seeded inputs: SeededRng(seed).normal() for every element of "
             "every\n"
             "    user input of `program`, in order. SeededRng is SplitMix64; normal() is the\n"
             "    float32 sum of 12 uniforms (the top 24 bits of a draw, over 2**24) minus "
             "6.\"\"\"\n"
             "    import struct\n\n"
             "    mask = (1 << 64) - 1\n"
             "    state = seed\n\n"
             "    def f32(x):\n"
             "        return struct.unpack(\"f\", struct.pack(\"f\", x))[0]\n\n"
             "    def normal():\n"
             "        nonlocal state\n"
             "        s = 0.0\n"
             "        for _ in range(12):\n"
             "            state = (state + 0x9E3779B97F4A7C15) & mask\n"
             "            z = state\n"
             "            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask\n"
             "            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask\n"
             "            z ^= z >> 31\n"
             "            s = f32(s + (z >> 40) / 16777216.0)\n"
             "        return f32(s - 6.0)\n\n"
             "    users = set(program.graph_signature.user_inputs)\n"
             "    out = []\n"
             "    for n in program.graph.nodes:\n"
             "        if n.op == \"placeholder\" and n.name in users:\n"
             "            val = n.meta[\"val\"]\n"
             "            values = [normal() for _ in range(val.numel())]\n"
             "            t = torch.tensor(values, dtype=torch.float32).reshape(val.shape)\n"
             "            out.append(t.to(val.dtype))\n"
             "    return tuple(out)\n";
    s += "\n\n";
    if (steps.empty()) s += "# Nothing was changed: gm is the file's ep.module().\n";
    for (const PythonStep& st : steps) s += st.code + "\n";
    s += "print(gm.graph)\n";
    return s;
}

} // namespace pt2lab
