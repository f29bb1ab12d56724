// ep.module(): lifted placeholders -> get_attr, mutations -> copy_, pytree codegen, _guards_fn.
#include "passes/unlift.h"

#include "util/json_read.h"

namespace pt2lab {

namespace {

struct InSpecShape {
    bool args_kwargs = false; // in_spec is (args tuple, kwargs dict)
    size_t num_args = 0;
    std::vector<std::string> kwarg_names;
};

// Reads torch's treespec_dumps JSON: [protocol, {"type", "context", "children_spec"}].
InSpecShape read_in_spec(const std::string& text) {
    InSpecShape shape;
    if (text.empty()) return shape;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_array() || j.size() != 2 || !j[1].is_object()) return shape;
    const json& root = j[1];
    auto type_of = [](const json& n) -> std::string {
        auto t = n.find("type");
        return t != n.end() && t->is_string() ? t->get<std::string>() : "";
    };
    auto children = [](const json& n) -> const json* {
        auto c = n.find("children_spec");
        return c != n.end() && c->is_array() ? &*c : nullptr;
    };
    const json* kids = children(root);
    if (type_of(root) != "builtins.tuple" || !kids || kids->size() != 2) return shape;
    const json& a = (*kids)[0];
    const json& k = (*kids)[1];
    if (!a.is_object() || !k.is_object() || type_of(a) != "builtins.tuple" ||
        type_of(k) != "builtins.dict")
        return shape;
    shape.args_kwargs = true;
    shape.num_args = children(a) ? children(a)->size() : 0;
    auto ctx = k.find("context");
    if (ctx != k.end() && ctx->is_string()) {
        json keys = json::parse(ctx->get<std::string>(), nullptr, false);
        if (keys.is_array())
            for (const auto& key : keys)
                if (key.is_string()) shape.kwarg_names.push_back(key.get<std::string>());
    }
    return shape;
}

Error unlift_error(const ExportedProgram& ep, const std::string& where, const std::string& msg) {
    Error e = make_error(where, msg, "the program's graph signature does not match its graph");
    e.file = ep.source_file;
    return e;
}

} // namespace

Result<GraphModule> unlift(const ExportedProgram& ep, const UnliftOptions& opt) {
    GraphModule gm;
    gm.graph = ep.graph->clone();
    Graph& g = *gm.graph;

    // 1. lifted inputs -> get_attr
    std::vector<Node*> placeholders = g.placeholders();
    if (placeholders.size() != ep.signature.inputs.size())
        return unlift_error(ep, "graph signature",
                            "the signature has " + std::to_string(ep.signature.inputs.size()) +
                                " inputs but the graph has " + std::to_string(placeholders.size()) +
                                " placeholders");
    std::map<std::string, Node*> unlifted; // FQN -> get_attr
    std::map<std::string, Node*> user_inputs;
    for (size_t k = 0; k < placeholders.size(); ++k) {
        Node* ph = placeholders[k];
        const InputSpec& is = ep.signature.inputs[k];
        bool lifted = is.kind == InputKind::Parameter || is.kind == InputKind::Buffer ||
                      is.kind == InputKind::ConstantTensor || is.kind == InputKind::CustomObj;
        if (!lifted) {
            user_inputs[ph->name()] = ph;
            continue;
        }
        Node* attr;
        {
            auto at = g.inserting_after(ph);
            attr = g.get_attr(is.target);
        }
        ph->replace_all_uses_with(attr);
        NodeMeta meta = ph->meta;
        if (Status s = g.erase_node(ph); !s.ok()) return s.error();
        attr->meta = meta;
        unlifted[is.target] = attr;
        if (auto t = ep.find_tensor(is.target)) gm.attrs[is.target] = t;
    }

    // 2. mutations -> copy_ before the output; output returns user outputs only
    Node* out = g.output_node();
    if (!out) return unlift_error(ep, "graph", "the graph has no output node");
    std::vector<Argument> flat;
    if (!out->args().empty()) {
        const Argument& a = out->args()[0];
        if (a.kind == ArgKind::Tuple || a.kind == ArgKind::List)
            flat = a.items;
        else
            flat = {a};
    }
    if (flat.size() != ep.signature.outputs.size())
        return unlift_error(ep, "graph signature",
                            "the signature has " + std::to_string(ep.signature.outputs.size()) +
                                " outputs but the graph returns " + std::to_string(flat.size()));
    std::vector<Argument> user_outputs;
    std::vector<std::pair<Node*, Node*>> copies; // returned value -> copy_ node
    for (size_t k = 0; k < flat.size(); ++k) {
        const OutputSpec& os = ep.signature.outputs[k];
        bool mutation = os.kind == OutputKind::BufferMutation ||
                        os.kind == OutputKind::UserInputMutation ||
                        os.kind == OutputKind::ParameterMutation;
        if (!mutation) {
            user_outputs.push_back(flat[k]);
            continue;
        }
        Node* target = nullptr;
        if (unlifted.count(os.target))
            target = unlifted[os.target];
        else if (user_inputs.count(os.target))
            target = user_inputs[os.target];
        if (!target)
            return unlift_error(ep, "output spec " + std::to_string(k),
                                "mutation of \"" + os.target +
                                    "\", which is not an input of the graph");
        Node* copy;
        {
            auto at = g.inserting_before(out);
            copy = g.call_function("torch.ops.aten.copy_.default",
                                   {Argument::from_node(target), flat[k]});
        }
        if (flat[k].is_node()) copies.emplace_back(flat[k].node, copy);
    }
    for (Argument& a : user_outputs) {
        if (!a.is_node()) continue;
        for (auto& [from, to] : copies)
            if (a.node == from) a.node = to;
    }
    {
        NodeMeta meta = out->meta;
        Node* new_out;
        {
            auto at = g.inserting_before(out);
            new_out = g.output(Argument::tuple(user_outputs));
        }
        out->replace_all_uses_with(new_out);
        if (Status s = g.erase_node(out); !s.ok()) return s.error();
        g.force_name(new_out, "output");
        new_out->meta = meta;
    }

    // 3. pytree codegen with forward()'s names
    std::vector<std::string> names = ep.forward_arg_names();
    const ModuleCallEntry* root = nullptr;
    for (const auto& e : ep.module_call_graph)
        if (e.fqn.empty() && e.has_signature) root = &e;
    InSpecShape shape = read_in_spec(root ? root->in_spec : "");
    gm.codegen.pytree = true;
    if (shape.args_kwargs && shape.num_args <= names.size()) {
        gm.codegen.pytree_args.assign(names.begin(),
                                      names.begin() + static_cast<long>(shape.num_args));
        gm.codegen.pytree_kwargs.assign(names.begin() + static_cast<long>(shape.num_args),
                                        names.end());
    } else {
        gm.codegen.pytree_args = names;
    }

    // 4. _guards_fn after the last placeholder, on every user input
    if (opt.guards_fn) {
        std::vector<Node*> phs = g.placeholders();
        std::vector<Argument> args;
        for (Node* p : phs) args.push_back(Argument::from_node(p));
        Node* last = phs.empty() ? nullptr : phs.back();
        Node* guards;
        {
            auto at = g.inserting_after(last);
            guards = g.call_module("_guards_fn", args);
        }
        Node* first_call = nullptr;
        for (Node* n : g.nodes())
            if (!n->meta.nn_module_stack.empty()) {
                first_call = n;
                break;
            }
        if (first_call) guards->meta.nn_module_stack = {first_call->meta.nn_module_stack.front()};
        gm.submodules["_guards_fn"] = Submodule{"GuardsFn", /*impure=*/true, std::nullopt};
        std::string code = "def _(*args):\n";
        for (size_t k = 0; k < phs.size(); ++k) {
            const MetaVal& v = phs[k]->meta.val;
            if (!v.is_tensor()) continue;
            for (size_t d = 0; d < v.tensor.sizes.size(); ++d) {
                if (d < v.tensor.symbolic_sizes.size() && !v.tensor.symbolic_sizes[d].empty())
                    continue;
                std::string cond = "args[" + std::to_string(k) + "].size()[" + std::to_string(d) +
                                   "] == " + std::to_string(v.tensor.sizes[d]);
                std::string msg = phs[k]->name() + ".size()[" + std::to_string(d) +
                                  "] == " + std::to_string(v.tensor.sizes[d]);
                code += "    torch._assert(" + cond + ", \"Guard failed: " + msg + "\")\n";
            }
        }
        code += "    return";
        gm.guards_fn_code = code;
    }

    if (Status s = gm.lint(); !s.ok()) return s.error();
    gm.recompile();
    return gm;
}

} // namespace pt2lab
