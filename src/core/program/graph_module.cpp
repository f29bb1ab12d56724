// GraphModule: clone, module-aware lint, dead-code elimination, submodule names.
#include "program/graph_module.h"

#include <algorithm>
#include <cstring>

#include "util/check.h"
#include "util/shed.h"

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

bool GraphModule::shed(std::chrono::steady_clock::time_point deadline) {
    if (graph && !graph->shed(deadline)) return false;
    // The last recompile's graph, when this module is its only holder (copies of
    // the module share it).
    if (compiled_ && compiled_.use_count() == 1 && compiled_->graph.use_count() == 1 &&
        !const_cast<Graph&>(*compiled_->graph).shed(deadline))
        return false;
    return erase_until(submodules, deadline) && erase_until(attrs, deadline);
}

void GraphModule::Compiled::write() const {
    if (!written) adopt(python_code_lines(*graph, codegen));
}

void GraphModule::Compiled::adopt(CodeLines lines) const {
    src = std::move(lines.src);
    line_nodes = std::move(lines.line_ids);
    written = true;
}

CodeWriting GraphModule::code_writing() const {
    PT2LAB_CHECK(compiled_); // code_writing() of a module never compiled
    return CodeWriting(*compiled_->graph, compiled_->codegen);
}

void GraphModule::adopt_code(CodeLines lines) const {
    PT2LAB_CHECK(compiled_);
    if (!compiled_->written) compiled_->adopt(std::move(lines));
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

namespace {

// Whether `a` and `b` are the same argument to the code writer, exactly: kinds
// and values bit for bit (1 and 1.0 print differently), node references by name.
bool same_arg(const Argument& a, const Argument& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case ArgKind::None: return true;
    case ArgKind::Bool: return a.b == b.b;
    case ArgKind::Int:
    case ArgKind::Layout:
    case ArgKind::MemoryFormat: return a.i == b.i;
    case ArgKind::Float: return std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
    case ArgKind::NodeRef:
        return a.node && b.node ? a.node->name() == b.node->name() : a.node == b.node;
    case ArgKind::Dtype: return a.dtype == b.dtype;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Dict:
        if (a.items.size() != b.items.size() || a.keys != b.keys) return false;
        for (size_t k = 0; k < a.items.size(); ++k)
            if (!same_arg(a.items[k], b.items[k])) return false;
        return true;
    case ArgKind::String:
    case ArgKind::Device:
    case ArgKind::Repr: return a.s == b.s;
    }
    return false;
}

// Everything python_code reads of a node (its meta only when verbose, which code() is not).
bool same_node(const Node& a, const Node& b) {
    if (a.op() != b.op() || a.name() != b.name() || a.target() != b.target() ||
        a.args().size() != b.args().size() || a.kwargs().size() != b.kwargs().size() ||
        a.users().empty() != b.users().empty())
        return false;
    for (size_t k = 0; k < a.args().size(); ++k)
        if (!same_arg(a.args()[k], b.args()[k])) return false;
    for (size_t k = 0; k < a.kwargs().size(); ++k)
        if (a.kwargs()[k].first != b.kwargs()[k].first ||
            !same_arg(a.kwargs()[k].second, b.kwargs()[k].second))
            return false;
    return true;
}

bool same_codegen(const CodegenOptions& a, const CodegenOptions& b) {
    return a.pytree == b.pytree && a.pytree_args == b.pytree_args &&
           a.pytree_kwargs == b.pytree_kwargs && a.verbose == b.verbose;
}

} // namespace

StaleGlancing::StaleGlancing(const GraphModule& gm) {
    if (!gm.compiled_) { // no code at all, and a graph's code is never empty
        known_ = true;
        result_ = true;
        return;
    }
    const Graph& was = *gm.compiled_->graph;
    if (!same_codegen(gm.compiled_->codegen, gm.codegen) || was.size() != gm.graph->size()) {
        known_ = true;
        return;
    }
    was_ = was.nodes();
    now_ = gm.graph->nodes();
}

bool StaleGlancing::step(Clock::time_point deadline) {
    constexpr size_t kPiece = 512;
    while (!known_) {
        const size_t end = std::min(at_ + kPiece, was_.size());
        for (; at_ < end; ++at_)
            if (!same_node(*was_[at_], *now_[at_])) {
                known_ = true; // differ node for node: only the code can say
                return true;
            }
        if (at_ == was_.size()) {
            known_ = true;
            result_ = false;
            return true;
        }
        if (Clock::now() >= deadline) return false;
    }
    return true;
}

std::optional<bool> GraphModule::stale_at_a_glance() const {
    StaleGlancing g(*this);
    g.step(StaleGlancing::Clock::time_point::max());
    return g.result();
}

bool GraphModule::stale() const {
    // Different graphs can still write the same code (a node renamed to what the
    // code's namespace would call it anyway): then the code itself says.
    if (std::optional<bool> s = stale_at_a_glance()) return *s;
    return code() != python_code(*graph, codegen);
}

Status GraphModule::lint() const {
    ModuleLinting l(*this);
    while (!l.step(static_cast<size_t>(-1))) {
    } // the graph's part, then the targets' part
    return l.status();
}

namespace {

// A get_attr / call_module target that the module has, or torch's message.
Status check_target(const GraphModule& gm, const Node* n) {
    if (n->op() != Op::GetAttr && n->op() != Op::CallModule) return {};
    const std::string& t = n->target();
    bool found = n->op() == Op::GetAttr ? gm.attrs.count(t) != 0 : gm.submodules.count(t) != 0;
    // A submodule's own parameters (conv.weight of a traced nn.Conv2d) are not listed one by
    // one.
    if (!found && n->op() == Op::GetAttr) {
        size_t dot = t.rfind('.');
        found = dot != std::string::npos && gm.submodules.count(t.substr(0, dot)) != 0;
    }
    if (found) return {};
    // torch walks the dotted path and names the first atom that is missing.
    std::string seen = "", atom = t;
    size_t dot = t.rfind('.');
    if (dot != std::string::npos) {
        seen = t.substr(0, dot);
        atom = t.substr(dot + 1);
    }
    return make_error("%" + n->name(),
                      "Node " + n->name() + " target " + t + " references nonexistent attribute " +
                          atom + " of " + (seen.empty() ? "root" : seen),
                      n->op() == Op::CallModule ? "add the submodule before calling it" : "");
}

} // namespace

ModuleLinting::ModuleLinting(const GraphModule& gm) : gm_(gm), graph_(*gm.graph) {
}

bool ModuleLinting::step(size_t nodes) {
    if (!graph_over_) {
        graph_over_ = graph_.step(nodes);
        if (!graph_over_) return false;
        status_ = graph_.status();
        if (!status_.ok()) return true;
        nodes_ = gm_.graph->nodes();
        return false;
    }
    for (size_t k = 0; k < nodes && status_.ok() && at_ < nodes_.size(); ++k)
        status_ = check_target(gm_, nodes_[at_++]);
    return !status_.ok() || at_ == nodes_.size();
}

size_t ModuleLinting::done() const {
    return graph_over_ ? at_ : graph_.done();
}

Result<bool> GraphModule::eliminate_dead_code(bool lint_first) {
    if (lint_first)
        if (Status s = lint(); !s.ok()) return s.error();
    return graph->eliminate_dead_code(impure_modules(), false);
}

std::function<bool(const Node&)> GraphModule::impure_modules() const {
    return [this](const Node& n) {
        auto it = submodules.find(n.target());
        return it != submodules.end() && it->second.impure;
    };
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
