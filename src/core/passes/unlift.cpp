// ep.module(): lifted placeholders -> get_attr, mutations -> copy_, pytree codegen, _guards_fn.
#include "passes/unlift.h"

#include <optional>

#include "graph/namespace.h"
#include "util/check.h"
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

struct Unlifting::Impl {
    enum class Stage { Copy, Rename, Lift, Rest, Lint, Snapshot, Done };
    const ExportedProgram& ep;
    UnliftOptions opt;
    Stage stage = Stage::Copy;
    std::optional<GraphCloning> copying;
    std::optional<ModuleLinting> linting;
    GraphModule gm;
    std::optional<Result<GraphModule>> result;
    std::vector<Node*> nodes; // Rename, Lift: the nodes (placeholders) being walked
    size_t k = 0;
    Namespace ns;
    std::vector<std::pair<Node*, std::string>> renames;
    std::map<std::string, Node*> unlifted; // FQN -> get_attr
    std::map<std::string, Node*> user_inputs;

    Impl(const ExportedProgram& e, UnliftOptions o)
        : ep(e), opt(o), copying(std::in_place, *e.graph) {}

    void end(Result<GraphModule> r) {
        linting.reset();
        copying.reset();
        nodes.clear();
        result = std::move(r);
        stage = Stage::Done;
    }
    bool fail(Error e) {
        end(std::move(e));
        return false;
    }

    // One piece of the work (a few hundred nodes at most); false when it is over.
    bool work() {
        constexpr size_t kNodes = 256;
        switch (stage) {
        case Stage::Copy: {
            if (!copying->step(kNodes)) return true;
            gm.graph = copying->take();
            copying.reset();
            Graph& g = *gm.graph;
            // torch 2.14: a program past the training IR (verifier dialect ATEN, e.g. after
            // run_decompositions) goes through _remove_effect_tokens, whose dead-code
            // elimination drops unused outputs (the getitems torch.export.load recreates)
            // before unlifting.
            if (!ep.verifiers.empty() && ep.verifiers[0] != "TRAINING") {
                auto dce = g.eliminate_dead_code();
                if (!dce.ok()) return fail(dce.error());
            }
            nodes = g.nodes();
            k = 0;
            stage = Stage::Rename;
            return true;
        }
        case Stage::Rename: {
            // torch copies ep.graph (copy.deepcopy) before unlifting, and a copied graph
            // names its nodes through a fresh namespace in graph order: a node named after
            // a builtin or keyword (a placeholder `input`) becomes `input_1`, later clashes
            // move up.
            for (size_t n = 0; n < kNodes && k < nodes.size(); ++n, ++k) {
                std::string fresh = ns.create_name(nodes[k]->name());
                if (fresh != nodes[k]->name()) renames.emplace_back(nodes[k], fresh);
            }
            if (k < nodes.size()) return true;
            Graph& g = *gm.graph;
            for (size_t r = 0; r < renames.size(); ++r) // free the old names first
                g.force_name(renames[r].first, "\x01pt2lab_rename_" + std::to_string(r));
            for (auto& [n, name] : renames) g.force_name(n, name);
            renames.clear();
            nodes = g.placeholders();
            k = 0;
            if (nodes.size() != ep.signature.inputs.size())
                return fail(unlift_error(ep, "graph signature",
                                         "the signature has " +
                                             std::to_string(ep.signature.inputs.size()) +
                                             " inputs but the graph has " +
                                             std::to_string(nodes.size()) + " placeholders"));
            stage = Stage::Lift;
            return true;
        }
        case Stage::Lift: {
            // 1. lifted inputs -> get_attr
            Graph& g = *gm.graph;
            for (size_t n = 0; n < kNodes / 4 && k < nodes.size(); ++n, ++k) {
                Node* ph = nodes[k];
                const InputSpec& is = ep.signature.inputs[k];
                bool lifted = is.kind == InputKind::Parameter || is.kind == InputKind::Buffer ||
                              is.kind == InputKind::ConstantTensor ||
                              is.kind == InputKind::CustomObj;
                if (!lifted) {
                    user_inputs[ph->target()] =
                        ph; // the input's own name (the node may be renamed)
                    continue;
                }
                Node* attr;
                {
                    auto at = g.inserting_after(ph);
                    attr = g.get_attr(is.target);
                }
                ph->replace_all_uses_with(attr);
                NodeMeta meta = ph->meta;
                if (Status s = g.erase_node(ph); !s.ok()) return fail(s.error());
                attr->meta = meta;
                unlifted[is.target] = attr;
                if (auto t = ep.find_tensor(is.target)) gm.attrs[is.target] = t;
            }
            if (k < nodes.size()) return true;
            nodes.clear();
            stage = Stage::Rest;
            return true;
        }
        case Stage::Rest: {
            if (Status s = rest(); !s.ok()) return fail(s.error());
            linting.emplace(gm);
            stage = Stage::Lint;
            return true;
        }
        case Stage::Lint: {
            if (!linting->step(4 * kNodes)) return true;
            Status s = linting->status();
            linting.reset();
            if (!s.ok()) return fail(s.error());
            copying.emplace(*gm.graph);
            stage = Stage::Snapshot;
            return true;
        }
        case Stage::Snapshot: {
            // GraphModule.recompile(): forward() runs this copy from now on.
            if (!copying->step(kNodes)) return true;
            std::unique_ptr<Graph> copy = copying->take();
            copying.reset();
            gm.recompile_with(std::move(copy));
            end(std::move(gm));
            return false;
        }
        case Stage::Done: return false;
        }
        return false;
    }

    // 2.-4.: the output, the pytree codegen and _guards_fn.
    Status rest() {
        Graph& g = *gm.graph;
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
                                    " outputs but the graph returns " +
                                    std::to_string(flat.size()));
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
            if (Status s = g.erase_node(out); !s.ok()) return s;
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
            if (first_call)
                guards->meta.nn_module_stack = {first_call->meta.nn_module_stack.front()};
            gm.submodules["_guards_fn"] = Submodule{"GuardsFn", /*impure=*/true, std::nullopt, {}};
            std::string code = "def _(*args):\n";
            for (size_t k = 0; k < phs.size(); ++k) {
                const MetaVal& v = phs[k]->meta.val;
                if (!v.is_tensor()) continue;
                for (size_t d = 0; d < v.tensor.sizes.size(); ++d) {
                    if (d < v.tensor.symbolic_sizes.size() && !v.tensor.symbolic_sizes[d].empty())
                        continue;
                    std::string cond = "args[" + std::to_string(k) + "].size()[" +
                                       std::to_string(d) +
                                       "] == " + std::to_string(v.tensor.sizes[d]);
                    std::string msg = phs[k]->name() + ".size()[" + std::to_string(d) +
                                      "] == " + std::to_string(v.tensor.sizes[d]);
                    code += "    torch._assert(" + cond + ", \"Guard failed: " + msg + "\")\n";
                }
            }
            code += "    return";
            gm.guards_fn_code = code;
        }
        return {};
    }
};

Unlifting::Unlifting(const ExportedProgram& ep, const UnliftOptions& opt)
    : impl_(std::make_unique<Impl>(ep, opt)) {
}
Unlifting::~Unlifting() = default;

bool Unlifting::step(Clock::time_point deadline) {
    while (impl_->work())
        if (Clock::now() >= deadline) return false;
    return true;
}

const char* Unlifting::stage() const {
    switch (impl_->stage) {
    case Impl::Stage::Copy: return "copying the graph";
    case Impl::Stage::Rename:
    case Impl::Stage::Lift:
    case Impl::Stage::Rest: return "unlifting parameters";
    case Impl::Stage::Lint: return "lint";
    case Impl::Stage::Snapshot: return "recompiling";
    case Impl::Stage::Done: return "done";
    }
    return "";
}

Result<GraphModule> Unlifting::finish() {
    PT2LAB_CHECK(impl_->result.has_value());
    Result<GraphModule> r = std::move(*impl_->result);
    impl_->result.reset();
    return r;
}

Result<GraphModule> unlift(const ExportedProgram& ep, const UnliftOptions& opt) {
    Unlifting u(ep, opt);
    u.step(Unlifting::Clock::time_point::max());
    return u.finish();
}

} // namespace pt2lab
