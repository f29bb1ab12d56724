// The module tree (see module_tree.h): groups from nn_module_stack paths,
// weights placed with their users, and which group hides a node.
#include "module_tree.h"

#include <algorithm>

namespace pt2lab::app {
namespace {

// "torch.nn.modules.conv.Conv2d" -> "Conv2d"
std::string short_type(const std::string& t) {
    size_t dot = t.find_last_of('.');
    return dot == std::string::npos ? t : t.substr(dot + 1);
}

bool is_weight(const Node& n, const std::unordered_map<std::string, const InputSpec*>& specs) {
    if (n.op() == Op::GetAttr) return true;
    if (n.op() != Op::Placeholder) return false;
    auto it = specs.find(n.name());
    const InputSpec* spec = it == specs.end() ? nullptr : it->second;
    return spec && (spec->kind == InputKind::Parameter || spec->kind == InputKind::Buffer ||
                    spec->kind == InputKind::ConstantTensor);
}

// What prepare_pt2e and convert_pt2e insert (observers, quantize / dequantize):
// torch gives these nodes no nn_module_stack.
bool inserted_by_quantization(const Node& n) {
    if (!n.meta.nn_module_stack.empty()) return false;
    if (n.op() == Op::CallModule) return n.target().rfind("activation_post_process_", 0) == 0;
    if (n.op() == Op::CallFunction)
        return n.target().find("quantized_decomposed.") != std::string::npos;
    return false;
}

} // namespace

int ModuleTree::find(const std::string& path) const {
    auto it = by_path.find(path);
    return it == by_path.end() ? -1 : it->second;
}

std::vector<int> ModuleTree::chain(int g) const {
    std::vector<int> out;
    for (int at = g; at > 0; at = groups[static_cast<size_t>(at)].parent) out.push_back(at);
    std::reverse(out.begin(), out.end());
    return out;
}

int ModuleTree::shown_as(size_t i, const ExpandedSet& expanded) const {
    int g = node_group[i];
    if (g <= 0) return -1;
    // Outermost first: walk up, remembering the last collapsed one met.
    int hidden = -1;
    for (int at = g; at > 0; at = groups[static_cast<size_t>(at)].parent) {
        const ModuleGroup& m = groups[static_cast<size_t>(at)];
        if (m.collapsible && !expanded.count(m.path)) hidden = at;
    }
    return hidden;
}

ExpandedSet ModuleTree::all_paths() const {
    ExpandedSet out;
    for (const ModuleGroup& m : groups)
        if (m.collapsible) out.insert(m.path);
    return out;
}

ModuleTree build_module_tree(const Graph& g, const GraphSignature* sig) {
    ModuleTree t;
    t.groups.push_back(ModuleGroup{});
    t.by_path[""] = 0;
    std::vector<Node*> nodes = g.nodes();
    t.node_group.assign(nodes.size(), 0);
    t.absorbed.assign(nodes.size(), 0);
    std::unordered_map<std::string, const InputSpec*> specs;
    if (sig)
        for (const InputSpec& s : sig->inputs) specs.emplace(s.arg, &s);
    const NodePositions index(g, nodes);
    constexpr size_t kNone = NodePositions::npos;
    auto position = [&](const Node* n) { return index.of(n); };

    auto group_of = [&](const std::string& path, const std::string& type, int parent) {
        auto it = t.by_path.find(path);
        if (it != t.by_path.end()) return it->second;
        int id = static_cast<int>(t.groups.size());
        ModuleGroup m;
        m.path = path;
        m.type = short_type(type);
        m.parent = parent;
        m.depth = t.groups[static_cast<size_t>(parent)].depth + 1;
        t.groups.push_back(std::move(m));
        t.groups[static_cast<size_t>(parent)].children.push_back(id);
        t.by_path[path] = id;
        return id;
    };
    // Observers and quantize / dequantize nodes join the group of the value they
    // read (a conv's output observer goes with the conv), or, reading a weight, are
    // placed by their users as the weight is: a prepared or converted model then
    // collapses as the model does. Not calls of their module either way.
    std::vector<uint8_t> with_input(nodes.size(), 0);
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = *nodes[i];
        if (is_weight(n, specs)) {
            t.absorbed[i] = 1;
            continue;
        }
        if (inserted_by_quantization(n)) {
            t.absorbed[i] = 1;
            const std::vector<Node*> ins = n.input_nodes();
            size_t in = ins.empty() ? kNone : position(ins.front());
            if (in != kNone && (!t.absorbed[in] || with_input[in])) {
                t.node_group[i] = t.node_group[in];
                with_input[i] = 1;
            }
            continue;
        }
        // Most nodes share their innermost module with a node before them: one lookup.
        const auto& stack = n.meta.nn_module_stack;
        int at = 0;
        auto known = stack.empty() || stack.back().path.empty() ? t.by_path.end()
                                                                : t.by_path.find(stack.back().path);
        if (known != t.by_path.end()) {
            at = known->second;
        } else {
            for (const ModuleStackEntry& e : stack) {
                if (e.path.empty()) continue; // the root module
                at = group_of(e.path, e.type, at);
            }
        }
        t.node_group[i] = at;
    }
    // A weight joins the innermost group that holds all its users.
    auto common = [&](int a, int b) {
        while (a != b) {
            const ModuleGroup& ga = t.groups[static_cast<size_t>(a)];
            const ModuleGroup& gb = t.groups[static_cast<size_t>(b)];
            if (ga.depth >= gb.depth)
                a = ga.parent;
            else
                b = gb.parent;
        }
        return a;
    };
    // Users first (backwards): a weight's user can be a dequantize placed by its own users.
    for (size_t i = nodes.size(); i-- > 0;) {
        if (!t.absorbed[i] || with_input[i]) continue;
        int at = -1;
        for (const Node* u : nodes[i]->users()) {
            size_t ui = position(u);
            if (ui == kNone) continue;
            int ug = t.node_group[ui];
            at = at < 0 ? ug : common(at, ug);
        }
        if (at < 0) t.absorbed[i] = 0; // an unused weight stays where it is (the root)
        t.node_group[i] = std::max(at, 0);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int at = t.node_group[i]; at >= 0; at = t.groups[static_cast<size_t>(at)].parent) {
            ModuleGroup& m = t.groups[static_cast<size_t>(at)];
            ++m.nodes;
            if (!t.absorbed[i]) ++m.calls;
        }
    for (size_t k = 1; k < t.groups.size(); ++k) t.groups[k].collapsible = t.groups[k].calls > 1;
    return t;
}

} // namespace pt2lab::app
