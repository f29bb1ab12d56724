// The graph view's scene (see graph_scene.h): labels, sizes, edges, diff
// marks and ghosts, then the layered layout.
#include "graph_scene.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

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

int Scene::find_shown(uint32_t id) const {
    int i = find_id(id);
    if (i >= 0) return i;
    auto it = hidden_in.find(id);
    return it == hidden_in.end() ? -1 : it->second;
}

int Scene::find_name(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? -1 : it->second;
}

InputSpecIndex index_inputs(const GraphSignature* sig) {
    InputSpecIndex index;
    if (sig)
        for (const InputSpec& s : sig->inputs)
            index.emplace(s.arg, &s); // the first wins, as input_for
    return index;
}

std::string node_kind_label(const Node& n, const GraphSignature* sig) {
    return node_kind_label(n, sig, index_inputs(n.op() == Op::Placeholder ? sig : nullptr));
}

std::string node_kind_label(const Node& n, const GraphSignature* sig, const InputSpecIndex& index) {
    switch (n.op()) {
    case Op::Placeholder: {
        auto found = sig ? index.find(n.name()) : index.end();
        const InputSpec* spec = found == index.end() ? nullptr : found->second;
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
    if (n.group >= 0) { // a collapsed module: the box is a little taller than a node's
        float w = std::max({m.text_width(n.name, false), m.text_width(n.kind, false),
                            m.text_width(n.detail, true)});
        return {std::max(m.min_width, w + 2 * m.pad_x + 4), 3 * m.line_height + 3 * m.pad_y};
    }
    float w = m.text_width(n.name, false);
    // The diff badge ("added") sits at the right end of the name line.
    if (n.mark != DiffMark::None) w += m.text_width(diff_mark_name(n.mark), false) * 0.8f + 14;
    w = std::max(w, m.text_width(n.kind, false));
    int lines = 2;
    if (!n.detail.empty()) {
        w = std::max(w, m.text_width(n.detail, true));
        ++lines;
    }
    for (const std::string& line : n.weights) {
        w = std::max(w, m.text_width(line, true));
        ++lines;
    }
    // +4: glyphs drawn far from their raster size round outwards a little.
    return {std::max(m.min_width, w + 2 * m.pad_x + 4), lines * m.line_height + 2 * m.pad_y};
}

// Frames of the expanded modules around the boxes they hold.
void add_frames(Scene& sc, const ModuleTree& tree, const std::vector<Node*>& nodes,
                const std::vector<int>& shown_as) {
    std::unordered_map<int, size_t> frame_of;
    auto extend = [&](int g, size_t box) {
        const ModuleGroup& m = tree.groups[static_cast<size_t>(g)];
        if (!m.collapsible) return;
        auto [it, fresh] = frame_of.try_emplace(g, sc.frames.size());
        if (fresh) {
            SceneFrame f;
            f.group = g;
            f.path = m.path;
            f.type = m.type;
            f.depth = m.depth;
            f.lo = {1e30f, 1e30f};
            f.hi = {-1e30f, -1e30f};
            sc.frames.push_back(std::move(f));
        }
        SceneFrame& f = sc.frames[it->second];
        LayoutPoint c = sc.layout.center[box], s = sc.nodes[box].size;
        f.lo = {std::min(f.lo.x, c.x - s.x * 0.5f), std::min(f.lo.y, c.y - s.y * 0.5f)};
        f.hi = {std::max(f.hi.x, c.x + s.x * 0.5f), std::max(f.hi.y, c.y + s.y * 0.5f)};
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
        int box = sc.find_shown(nodes[i]->id());
        if (box < 0) continue;
        // A hidden node's expanded ancestors are its box's: start above its group.
        int g = shown_as[i] >= 0 ? tree.groups[static_cast<size_t>(shown_as[i])].parent
                                 : tree.node_group[i];
        for (; g > 0; g = tree.groups[static_cast<size_t>(g)].parent)
            extend(g, static_cast<size_t>(box));
    }
    std::stable_sort(sc.frames.begin(), sc.frames.end(),
                     [](const SceneFrame& a, const SceneFrame& b) { return a.depth < b.depth; });
}

} // namespace

Scene build_scene(const Graph& g, const SceneContext& ctx, const SceneMetrics& m,
                  const GraphDiff* diff, const Scene* prev, const LayoutOptions& opt) {
    Scene sc;
    std::vector<Node*> nodes = g.nodes();
    // Names the diff lists (views of its strings: a convert's lists 20k names).
    using Names = std::unordered_set<std::string_view>;
    auto names_of = [](const std::vector<std::string>& v) {
        Names out(v.begin(), v.end());
        return out;
    };
    Names added, rewired, changed;
    if (diff) {
        added = names_of(diff->added);
        rewired = names_of(diff->rewired);
        changed = names_of(diff->changed);
    }
    // Ghosts: removed nodes of the previous scene, each placed after the last
    // live node that preceded it there (or first).
    std::vector<std::vector<int>> ghosts_after(nodes.size() + 1); // slot 0: before everything
    std::vector<int> ghost_src;                                   // prev scene indices
    if (diff && prev && !diff->removed.empty()) {
        const Names removed = names_of(diff->removed);
        std::unordered_map<std::string_view, size_t> live_pos(nodes.size());
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
    InputSpecIndex spec_index = index_inputs(ctx.signature);
    // Module grouping: which collapsed group hides each node, and where its box
    // goes in the order (at its last call, so its inputs come before it).
    const ModuleTree* tree = ctx.modules && ctx.expanded ? ctx.modules : nullptr;
    std::vector<int> shown_as(nodes.size(), -1);
    std::unordered_map<int, size_t> box_at; // group -> graph position of its box
    std::unordered_map<int, int> box_index; // group -> scene index
    if (tree && tree->node_group.size() == nodes.size()) {
        for (size_t i = 0; i < nodes.size(); ++i) {
            int g = tree->shown_as(i, *ctx.expanded);
            shown_as[i] = g;
            if (g < 0) continue;
            auto it = box_at.find(g);
            if (it == box_at.end())
                box_at[g] = i;
            else if (!tree->absorbed[i] || tree->absorbed[it->second])
                it->second = i;
        }
    }
    // Weights drawn inside their reader: read by exactly one node that has a box
    // of its own, and not named by the diff (a changed weight keeps its box).
    // reader -> its weights, each with the attribute path it shows ("conv.weight")
    std::unordered_map<const Node*, std::vector<std::pair<const Node*, std::string>>> inside;
    std::unordered_set<const Node*> folded;
    if (ctx.weights_inside) {
        const NodePositions pos(g, nodes);
        for (size_t i = 0; i < nodes.size(); ++i) {
            const Node& n = *nodes[i];
            if (n.op() != Op::GetAttr && n.op() != Op::Placeholder) continue;
            if (shown_as[i] >= 0 || n.users().size() > 1) continue;
            const std::string* path = &n.target();
            if (n.op() == Op::Placeholder) {
                auto it = spec_index.find(n.name());
                bool weight =
                    it != spec_index.end() && (it->second->kind == InputKind::Parameter ||
                                               it->second->kind == InputKind::Buffer ||
                                               it->second->kind == InputKind::ConstantTensor);
                if (!weight) continue;
                path = &it->second->target;
            }
            if (added.count(n.name()) || rewired.count(n.name()) || changed.count(n.name()))
                continue;
            if (n.users().empty()) { // read by nothing (an eval-mode num_batches_tracked)
                sc.unused_weights.push_back(n.id());
                folded.insert(&n);
                continue;
            }
            const Node* reader = n.users().front();
            const size_t at = pos.of(reader);
            if (at == NodePositions::npos || shown_as[at] >= 0 || reader->op() == Op::Output)
                continue;
            inside[reader].emplace_back(&n, *path);
            folded.insert(&n);
        }
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = *nodes[i];
        if (folded.count(&n)) continue;
        if (int g = shown_as[i]; g >= 0) {
            if (box_at[g] == i) {
                const ModuleGroup& mg = tree->groups[static_cast<size_t>(g)];
                SceneNode gn;
                gn.name = mg.path;
                gn.op = Op::CallModule;
                gn.kind = mg.type.empty() ? "module" : mg.type;
                gn.detail = std::to_string(mg.nodes) + " nodes";
                gn.target = mg.path;
                gn.group = g;
                gn.members = mg.nodes;
                gn.size = measure(gn, m);
                box_index[g] = static_cast<int>(sc.nodes.size());
                sc.nodes.push_back(std::move(gn));
            }
            add_ghosts(i + 1);
            continue;
        }
        SceneNode sn;
        sn.id = n.id();
        sn.name = n.name();
        sn.op = n.op();
        sn.kind = node_kind_label(n, ctx.signature, spec_index);
        if (n.op() == Op::CallModule && ctx.submodules) {
            auto it = ctx.submodules->find(n.target());
            if (it != ctx.submodules->end() && !it->second.type.empty()) {
                // The class without its Python module ("torch.nn.modules.conv.Conv2d" ->
                // "Conv2d", as the Node panel's module path names classes). The target is the
                // submodule's path ("body.0"), the name that path with "_" for "." ("body_0"):
                // where they differ the box shows both, "body.0 · Conv2d".
                const std::string& type = it->second.type;
                std::string cls = type.substr(type.find_last_of('.') + 1);
                sn.kind = n.target() == n.name() ? cls : n.target() + " · " + cls;
            }
        }
        sn.detail = node_value_type(n);
        sn.target = n.target();
        sn.mark = added.count(n.name())     ? DiffMark::Added
                  : rewired.count(n.name()) ? DiffMark::Rewired
                  : changed.count(n.name()) ? DiffMark::Changed
                                            : DiffMark::None;
        if (auto it = inside.find(&n); it != inside.end()) {
            for (const auto& [w, path] : it->second) {
                std::string type = node_value_type(*w);
                sn.weights.push_back(path.substr(path.find_last_of('.') + 1) +
                                     (type.empty() ? "" : ": " + type));
                sn.weight_ids.push_back(w->id());
            }
        }
        sn.size = measure(sn, m);
        sc.by_id[sn.id] = static_cast<int>(sc.nodes.size());
        sc.by_name[sn.name] = static_cast<int>(sc.nodes.size());
        sc.nodes.push_back(std::move(sn));
        add_ghosts(i + 1);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        if (shown_as[i] >= 0) sc.hidden_in[nodes[i]->id()] = box_index[shown_as[i]];
    for (const Node* w : folded)
        if (!w->users().empty()) sc.hidden_in[w->id()] = sc.find_id(w->users().front()->id());
    sc.weights_inside = static_cast<int>(folded.size() - sc.unused_weights.size());
    // Edges of live nodes (one per pair of boxes: a module's inner edges go
    // away), then a ghost's old edges to whatever is still here.
    std::unordered_set<uint64_t> seen; // (src, dst) pairs
    if (tree) seen.reserve(nodes.size() * 2);
    for (const Node* n : nodes) {
        int dst = sc.find_shown(n->id());
        for (const Node* in : n->input_nodes()) {
            int src = sc.find_shown(in->id());
            if (src < 0 || (src == dst && sc.nodes[static_cast<size_t>(src)].group >= 0)) continue;
            if (folded.count(in)) continue; // drawn inside its reader
            const uint64_t pair = uint64_t(uint32_t(src)) << 32 | uint32_t(dst);
            if (tree && !seen.insert(pair).second) continue;
            sc.edges.push_back({src, dst});
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
    auto t0 = std::chrono::steady_clock::now();
    sc.layout = layout_layered(in, opt);
    sc.layout_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (const LayoutEdge& e : sc.layout.edges) {
        std::array<float, 4> b{1e30f, 1e30f, -1e30f, -1e30f};
        for (const LayoutPoint& p : e.points) {
            b[0] = std::min(b[0], p.x), b[1] = std::min(b[1], p.y);
            b[2] = std::max(b[2], p.x), b[3] = std::max(b[3], p.y);
        }
        sc.edge_bounds.push_back(b);
    }
    if (tree) add_frames(sc, *tree, nodes, shown_as);
    return sc;
}

bool scene_node_matches(const SceneNode& n, const std::string& query) {
    if (query.empty()) return false;
    auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    std::string q = lower(query);
    if (lower(n.name).find(q) != std::string::npos ||
        lower(n.target).find(q) != std::string::npos || lower(n.kind).find(q) != std::string::npos)
        return true;
    for (const std::string& w : n.weights)
        if (lower(w).find(q) != std::string::npos) return true;
    return false;
}

} // namespace pt2lab::app
