// GraphModule: clone, module-aware lint, dead-code elimination, submodule names.
#include "program/graph_module.h"

namespace pt2lab {

void GraphModule::recompile() {
    compiled_ = std::shared_ptr<const Graph>(graph->clone());
    CodeLines lines = python_code_lines(*graph, codegen);
    code_ = std::move(lines.src);
    code_line_nodes_.clear();
    for (const std::string& name : lines.line_nodes) {
        const Node* n = name.empty() ? nullptr : graph->find(name);
        code_line_nodes_.push_back(n ? n->id() : 0);
    }
}

Status GraphModule::lint() const {
    if (Status s = graph->lint(); !s.ok()) return s;
    for (Node* n : graph->nodes()) {
        if (n->op() != Op::GetAttr && n->op() != Op::CallModule) continue;
        const std::string& t = n->target();
        bool found = n->op() == Op::GetAttr ? attrs.count(t) != 0 : submodules.count(t) != 0;
        // A submodule's own parameters (conv.weight of a traced nn.Conv2d) are not listed one by
        // one.
        if (!found && n->op() == Op::GetAttr) {
            size_t dot = t.rfind('.');
            found = dot != std::string::npos && submodules.count(t.substr(0, dot)) != 0;
        }
        if (found) continue;
        // torch walks the dotted path and names the first atom that is missing.
        std::string seen = "", atom = t;
        size_t dot = t.rfind('.');
        if (dot != std::string::npos) {
            seen = t.substr(0, dot);
            atom = t.substr(dot + 1);
        }
        return make_error("%" + n->name(),
                          "Node " + n->name() + " target " + t +
                              " references nonexistent attribute " + atom + " of " +
                              (seen.empty() ? "root" : seen),
                          n->op() == Op::CallModule ? "add the submodule before calling it" : "");
    }
    return {};
}

Result<bool> GraphModule::eliminate_dead_code() {
    if (Status s = lint(); !s.ok()) return s.error();
    return graph->eliminate_dead_code([this](const Node& n) {
        auto it = submodules.find(n.target());
        return it != submodules.end() && it->second.impure;
    });
}

std::string GraphModule::new_submodule_name(const std::string& prefix) const {
    for (int i = 0;; ++i) {
        std::string name = prefix + std::to_string(i);
        if (!submodules.count(name) && !attrs.count(name)) return name;
    }
}

} // namespace pt2lab
