// Edit actions on a GraphModule (torch.fx's edit API as data).
#include "edit/edit_action.h"

#include <algorithm>

namespace pt2lab {

Status resolve_node_names(Argument& a, const Graph& g) {
    if (a.is_unresolved_node()) {
        Node* n = g.find(a.s);
        if (!n) return make_error("%" + a.s, "no node named '" + a.s + "' in the graph");
        a.node = n;
        a.s.clear();
        return {};
    }
    if (a.kind == ArgKind::List || a.kind == ArgKind::Tuple || a.kind == ArgKind::Dict)
        for (Argument& x : a.items)
            if (Status s = resolve_node_names(x, g); !s.ok()) return s;
    return {};
}

namespace {

Result<Node*> find_node(const Graph& g, const std::string& name) {
    Node* n = g.find(name);
    if (!n) return make_error("%" + name, "no node named '" + name + "' in the graph");
    return n;
}

Result<std::vector<Argument>> resolve_all(std::vector<Argument> args, const Graph& g) {
    for (Argument& a : args)
        if (Status s = resolve_node_names(a, g); !s.ok()) return s.error();
    return args;
}

} // namespace

bool edit_changes_graph(EditAction::Kind k) {
    switch (k) {
    case EditAction::Kind::Lint:
    case EditAction::Kind::Recompile:
    case EditAction::Kind::Undo:
    case EditAction::Kind::Redo: return false;
    default: return true;
    }
}

const char* edit_label(EditAction::Kind k) {
    switch (k) {
    case EditAction::Kind::Insert: return "insert";
    case EditAction::Kind::ReplaceAllUsesWith: return "replace_all_uses_with";
    case EditAction::Kind::ReplaceInputWith: return "replace_input_with";
    case EditAction::Kind::EraseNode: return "erase_node";
    case EditAction::Kind::EliminateDeadCode: return "eliminate_dead_code";
    case EditAction::Kind::Lint: return "lint";
    case EditAction::Kind::Recompile: return "recompile";
    case EditAction::Kind::SetArgs: return "set args";
    case EditAction::Kind::Undo: return "undo";
    case EditAction::Kind::Redo: return "redo";
    }
    return "edit";
}

Result<ActionResult> apply_edit(GraphModule& gm, const EditAction& a) {
    ActionResult r;
    Graph& g = *gm.graph;
    auto commit = [&](bool changed) { r.modified = changed; };

    switch (a.kind) {
    case EditAction::Kind::Insert: {
        Node* anchor = nullptr;
        if (a.anchor) {
            auto n = find_node(g, *a.anchor);
            if (!n.ok()) return n.error();
            anchor = n.value();
        }
        auto scope = a.after ? g.inserting_after(anchor) : g.inserting_before(anchor);
        for (const NodeSpec& spec : a.nodes) {
            auto args = resolve_all(spec.args, g);
            if (!args.ok()) return args.error();
            Kwargs kwargs = spec.kwargs;
            for (auto& kv : kwargs)
                if (Status s = resolve_node_names(kv.second, g); !s.ok()) return s.error();
            if (spec.op == Op::CallModule && !gm.submodules.count(spec.target)) {
                Submodule sub;
                sub.type = spec.module_type.empty() ? "Module" : spec.module_type;
                if (sub.type.find("MinMaxObserver") != std::string::npos)
                    sub.observer = ObserverConfig::activation();
                gm.submodules[spec.target] = sub;
            }
            Node* n =
                g.create_node(spec.op, spec.target, args.take(), std::move(kwargs), spec.name);
            r.created.push_back(n->name());
        }
        commit(true);
        return r;
    }
    case EditAction::Kind::ReplaceAllUsesWith: {
        auto n = find_node(g, a.node);
        auto w = find_node(g, a.with);
        if (!n.ok()) return n.error();
        if (!w.ok()) return w.error();
        std::vector<Node*> changed;
        if (a.skip_users) {
            const auto& skip = *a.skip_users;
            changed = n.value()->replace_all_uses_with(w.value(), [&](Node* u) {
                return std::find(skip.begin(), skip.end(), u->name()) == skip.end();
            });
        } else {
            changed = n.value()->replace_all_uses_with(w.value());
        }
        for (Node* c : changed) r.changed.push_back(c->name());
        commit(!changed.empty());
        return r;
    }
    case EditAction::Kind::ReplaceInputWith: {
        auto n = find_node(g, a.node);
        auto o = find_node(g, a.old_input);
        auto nw = find_node(g, a.new_input);
        if (!n.ok()) return n.error();
        if (!o.ok()) return o.error();
        if (!nw.ok()) return nw.error();
        n.value()->replace_input_with(o.value(), nw.value());
        commit(true);
        return r;
    }
    case EditAction::Kind::EraseNode: {
        auto n = find_node(g, a.node);
        if (!n.ok()) return n.error();
        std::string target = n.value()->op() == Op::CallModule ? n.value()->target() : "";
        Status s = g.erase_node(n.value());
        if (!s.ok()) {
            r.error = s.error().message;
            return r;
        }
        commit(true);
        return r;
    }
    case EditAction::Kind::EliminateDeadCode: {
        auto changed = gm.eliminate_dead_code();
        if (!changed.ok()) {
            r.error = changed.error().message;
            return r;
        }
        r.dce_changed = changed.value();
        commit(changed.value());
        return r;
    }
    case EditAction::Kind::Lint: {
        Status s = gm.lint();
        if (!s.ok()) r.error = s.error().message;
        return r;
    }
    case EditAction::Kind::Recompile: {
        std::string old = gm.code();
        gm.recompile();
        r.code = gm.code();
        commit(r.code != old);
        return r;
    }
    case EditAction::Kind::SetArgs: {
        auto n = find_node(g, a.node);
        if (!n.ok()) return n.error();
        auto args = resolve_all(a.args, g);
        if (!args.ok()) return args.error();
        n.value()->set_args(args.take());
        commit(true);
        return r;
    }
    case EditAction::Kind::Undo:
    case EditAction::Kind::Redo:
        return make_error("history", std::string(edit_label(a.kind)) +
                                         " is not an edit: ask the Workspace that holds the graph");
    }
    return r;
}

} // namespace pt2lab
