// The graph view's scene (see graph_scene.h): labels, sizes, edges, diff
// marks and ghosts, then the layered layout.
#include "graph_scene.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "graph/op_schema.h"

namespace pt2lab::app {

const char* diff_mark_name(DiffMark m) {
    switch (m) {
    case DiffMark::None: return "";
    case DiffMark::Added: return "added";
    case DiffMark::Rewired: return "rewired";
    case DiffMark::Changed: return "changed";
    case DiffMark::Removed: return "removed";
    }
    return "";
}

int Scene::find_id(uint32_t id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? -1 : it->second;
}

int Scene::find_name(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? -1 : it->second;
}

std::string node_kind_label(const Node& n, const GraphSignature* sig) {
    switch (n.op()) {
    case Op::Placeholder: {
        const InputSpec* spec = sig ? sig->input_for(n.name()) : nullptr;
        if (!spec) return "input";
        switch (spec->kind) {
        case InputKind::UserInput: return "input";
        case InputKind::Parameter: return "parameter";
        case InputKind::Buffer: return "buffer";
        case InputKind::ConstantTensor: return "constant";
        case InputKind::CustomObj: return "custom object";
        case InputKind::Token: return "token";
        }
        return "input";
    }
    case Op::GetAttr: return n.target();
    case Op::CallModule: return n.target();
    case Op::CallMethod: return "." + n.target() + "()";
    case Op::Output: return "output";
    case Op::CallFunction: break;
    }
    if (const OpSchema* s = n.schema()) {
        if (s->ns.empty()) return s->name; // operator.getitem -> getitem
        std::string label = s->ns + "." + s->name;
        if (s->overload != "default") label += "." + s->overload;
        return label;
    }
    // Not in the schema table: the target without torch.ops. and .default.
    std::string t = n.target();
    const std::string ops = "torch.ops.";
    if (t.rfind(ops, 0) == 0) t = t.substr(ops.size());
    const std::string def = ".default";
    if (t.size() > def.size() && t.compare(t.size() - def.size(), def.size(), def) == 0)
        t.resize(t.size() - def.size());
    if (t.rfind("operator.", 0) == 0) t = t.substr(9);
    return t;
}

namespace {
std::string meta_type(const MetaVal& v) {
    switch (v.kind) {
    case MetaVal::Kind::None: return "";
    case MetaVal::Kind::Tensor: return v.tensor.type_str();
    case MetaVal::Kind::SymInt: return "Sym(" + v.sym + ")";
    case MetaVal::Kind::Int: return "int " + std::to_string(v.value);
    case MetaVal::Kind::Tuple: {
        std::string s = "(";
        for (size_t i = 0; i < v.items.size(); ++i) {
            if (i) s += ", ";
            s += meta_type(v.items[i]);
        }
        return s + ")";
    }
    }
    return "";
}
} // namespace

std::string node_value_type(const Node& n) {
    std::string s = meta_type(n.meta.val);
    const size_t limit = 48; // long tuples: keep the box readable
    if (s.size() > limit) s = s.substr(0, limit - 3) + "...";
    return s;
}

namespace {

LayoutPoint measure(const SceneNode& n, const SceneMetrics& m) {
    float w = m.text_width(n.name, false);
    // The diff badge ("added") sits at the right end of the name line.
    if (n.mark != DiffMark::None) w += m.text_width(diff_mark_name(n.mark), false) * 0.8f + 14;
    w = std::max(w, m.text_width(n.kind, false));
    int lines = 2;
    if (!n.detail.empty()) {
        w = std::max(w, m.text_width(n.detail, true));
        ++lines;
    }
    // +4: glyphs drawn far from their raster size round outwards a little.
    return {std::max(m.min_width, w + 2 * m.pad_x + 4), lines * m.line_height + 2 * m.pad_y};
}

} // namespace

Scene build_scene(const Graph& g, const SceneContext& ctx, const SceneMetrics& m,
                  const GraphDiff* diff, const Scene* prev, const LayoutOptions& opt) {
    Scene sc;
    std::vector<Node*> nodes = g.nodes();
    std::set<std::string> added, rewired, changed;
    if (diff) {
        added.insert(diff->added.begin(), diff->added.end());
        rewired.insert(diff->rewired.begin(), diff->rewired.end());
        changed.insert(diff->changed.begin(), diff->changed.end());
    }
    // Ghosts: removed nodes of the previous scene, each placed after the last
    // live node that preceded it there (or first).
    std::vector<std::vector<int>> ghosts_after(nodes.size() + 1); // slot 0: before everything
    std::vector<int> ghost_src;                                   // prev scene indices
    if (diff && prev && !diff->removed.empty()) {
        std::set<std::string> removed(diff->removed.begin(), diff->removed.end());
        std::unordered_map<std::string, size_t> live_pos;
        for (size_t i = 0; i < nodes.size(); ++i) live_pos[nodes[i]->name()] = i + 1;
        size_t slot = 0;
        for (size_t k = 0; k < prev->nodes.size(); ++k) {
            const SceneNode& pn = prev->nodes[k];
            if (pn.mark == DiffMark::Removed) continue; // an older ghost
            auto it = live_pos.find(pn.name);
            if (it != live_pos.end() && !removed.count(pn.name)) {
                slot = it->second;
            } else if (removed.count(pn.name)) {
                ghosts_after[slot].push_back(static_cast<int>(k));
            }
        }
    }
    auto add_ghosts = [&](size_t slot) {
        for (int k : ghosts_after[slot]) {
            SceneNode gn = prev->nodes[static_cast<size_t>(k)];
            gn.id = 0;
            gn.mark = DiffMark::Removed;
            gn.size = measure(gn, m); // room for the "removed" badge
            sc.by_name[gn.name] = static_cast<int>(sc.nodes.size());
            ghost_src.push_back(k);
            sc.nodes.push_back(std::move(gn));
        }
    };
    add_ghosts(0);
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = *nodes[i];
        SceneNode sn;
        sn.id = n.id();
        sn.name = n.name();
        sn.op = n.op();
        sn.kind = node_kind_label(n, ctx.signature);
        if (n.op() == Op::CallModule && ctx.submodules) {
            auto it = ctx.submodules->find(n.target());
            if (it != ctx.submodules->end() && !it->second.type.empty()) sn.kind = it->second.type;
        }
        sn.detail = node_value_type(n);
        sn.target = n.target();
        sn.mark = added.count(n.name())     ? DiffMark::Added
                  : rewired.count(n.name()) ? DiffMark::Rewired
                  : changed.count(n.name()) ? DiffMark::Changed
                                            : DiffMark::None;
        sn.size = measure(sn, m);
        sc.by_id[sn.id] = static_cast<int>(sc.nodes.size());
        sc.by_name[sn.name] = static_cast<int>(sc.nodes.size());
        sc.nodes.push_back(std::move(sn));
        add_ghosts(i + 1);
    }
    // Edges of live nodes, then a ghost's old edges to whatever is still here.
    for (const Node* n : nodes) {
        int dst = sc.find_id(n->id());
        for (const Node* in : n->input_nodes()) {
            int src = sc.find_id(in->id());
            if (src >= 0) sc.edges.push_back({src, dst});
        }
    }
    for (size_t k = 0; k < ghost_src.size(); ++k) {
        int old = ghost_src[k];
        int ghost = sc.find_name(prev->nodes[static_cast<size_t>(old)].name);
        for (int in : prev->inputs[static_cast<size_t>(old)]) {
            int src = sc.find_name(prev->nodes[static_cast<size_t>(in)].name);
            if (src >= 0) sc.edges.push_back({src, ghost});
        }
        for (int out : prev->users[static_cast<size_t>(old)]) {
            // Its former users, live or ghost: the layout keeps it between them.
            int dst = sc.find_name(prev->nodes[static_cast<size_t>(out)].name);
            if (dst >= 0) sc.edges.push_back({ghost, dst});
        }
    }
    sc.inputs.assign(sc.nodes.size(), {});
    sc.users.assign(sc.nodes.size(), {});
    for (const auto& e : sc.edges) {
        sc.inputs[static_cast<size_t>(e.second)].push_back(e.first);
        sc.users[static_cast<size_t>(e.first)].push_back(e.second);
    }
    LayoutInput in;
    in.sizes.reserve(sc.nodes.size());
    for (const SceneNode& n : sc.nodes) in.sizes.push_back(n.size);
    in.edges = sc.edges;
    sc.layout = layout_layered(in, opt);
    return sc;
}

bool scene_node_matches(const SceneNode& n, const std::string& query) {
    if (query.empty()) return false;
    auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    std::string q = lower(query);
    return lower(n.name).find(q) != std::string::npos ||
           lower(n.target).find(q) != std::string::npos ||
           lower(n.kind).find(q) != std::string::npos;
}

} // namespace pt2lab::app
