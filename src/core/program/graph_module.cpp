// GraphModule: clone, module-aware lint, dead-code elimination, submodule names.
#include "program/graph_module.h"

namespace pt2lab {

void GraphModule::recompile() {
    recompile_with(graph->clone());
}

void GraphModule::recompile_with(std::unique_ptr<Graph> copy_of_graph) {
    auto c = std::make_shared<Compiled>();
    c->graph = std::shared_ptr<const Graph>(std::move(copy_of_graph));
    c->codegen = codegen;
    compiled_ = std::move(c);
}

void GraphModule::Compiled::write() const {
    if (written) return;
    CodeLines lines = python_code_lines(*graph, codegen);
    src = std::move(lines.src);
    line_nodes.clear();
    line_nodes.reserve(lines.line_nodes.size());
    for (const std::string& name : lines.line_nodes) {
        const Node* n = name.empty() ? nullptr : graph->find(name);
        line_nodes.push_back(n ? n->id() : 0);
    }
    written = true;
}

const std::string& GraphModule::code() const {
    static const std::string never_compiled;
    if (!compiled_) return never_compiled;
    compiled_->write();
    return compiled_->src;
}

const std::vector<uint32_t>& GraphModule::code_line_nodes() const {
    static const std::vector<uint32_t> never_compiled;
    if (!compiled_) return never_compiled;
    compiled_->write();
    return compiled_->line_nodes;
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

Result<bool> GraphModule::eliminate_dead_code(bool lint_first) {
    if (lint_first)
        if (Status s = lint(); !s.ok()) return s.error();
    return graph->eliminate_dead_code(
        [this](const Node& n) {
            auto it = submodules.find(n.target());
            return it != submodules.end() && it->second.impure;
        },
        false);
}

std::string GraphModule::new_submodule_name(const std::string& prefix, int* next) const {
    for (int i = next ? *next : 0;; ++i) {
        std::string name = prefix + std::to_string(i);
        if (submodules.count(name) || attrs.count(name)) continue;
        if (next) *next = i + 1;
        return name;
    }
}

} // namespace pt2lab
