// Graph editing with torch.fx's semantics: insert points, naming, users
// bookkeeping, erase, lint.
#include "graph/graph.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "graph/op_table.h"
#include "util/check.h"

namespace pt2lab {

namespace {
const char* const kOpNames[] = {"placeholder", "get_attr",    "call_function",
                                "call_module", "call_method", "output"};
} // namespace

std::string_view op_name(Op op) {
    return kOpNames[static_cast<int>(op)];
}

std::optional<Op> op_from_name(std::string_view s) {
    for (int k = 0; k < 6; ++k)
        if (s == kOpNames[k]) return static_cast<Op>(k);
    return std::nullopt;
}

int64_t TensorMeta::numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
}

std::string TensorMeta::type_str() const {
    std::string out(scalar_type_abbr(dtype));
    out += "[";
    for (size_t k = 0; k < sizes.size(); ++k) {
        if (k) out += ", ";
        if (k < symbolic_sizes.size() && !symbolic_sizes[k].empty())
            out += symbolic_sizes[k];
        else
            out += std::to_string(sizes[k]);
    }
    return out + "]";
}

// ---- Node -------------------------------------------------------------------

const OpSchema* Node::schema() const {
    return op_info_ ? &op_info_->schema : nullptr;
}

bool Node::is(OpId id) const {
    return op_info_ && op_info_->id == id;
}

std::vector<Node*> Node::input_nodes() const {
    std::vector<Node*> out;
    auto add = [&](Node* n) {
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    };
    for (const Argument& a : args_) for_each_node(a, add);
    for (const auto& kv : kwargs_) for_each_node(kv.second, add);
    return out;
}

void Node::unlink_inputs() {
    for (Node* in : input_nodes()) {
        auto& u = in->users_;
        u.erase(std::remove(u.begin(), u.end(), this), u.end());
    }
}

void Node::link_inputs() {
    for (Node* in : input_nodes()) {
        auto& u = in->users_;
        if (std::find(u.begin(), u.end(), this) == u.end()) u.push_back(this);
    }
}

void Node::set_args(std::vector<Argument> args) {
    set_args_kwargs(std::move(args), kwargs_);
}

void Node::set_kwargs(Kwargs kwargs) {
    set_args_kwargs(args_, std::move(kwargs));
}

void Node::set_args_kwargs(std::vector<Argument> args, Kwargs kwargs) {
    unlink_inputs();
    args_ = std::move(args);
    kwargs_ = std::move(kwargs);
    link_inputs();
}

void Node::replace_input_with(Node* old, Node* replacement) {
    auto swap = [&](Node* n) { return n == old ? replacement : n; };
    std::vector<Argument> args = args_;
    Kwargs kwargs = kwargs_;
    for (Argument& a : args) map_nodes(a, swap);
    for (auto& kv : kwargs) map_nodes(kv.second, swap);
    set_args_kwargs(std::move(args), std::move(kwargs));
}

std::vector<Node*> Node::replace_all_uses_with(Node* replacement) {
    return replace_all_uses_with(replacement, [](Node*) { return true; });
}

Node* Node::prev() const {
    if (self_ == graph_->nodes_.begin()) return nullptr;
    return std::prev(self_)->get();
}

Node* Node::next() const {
    auto it = std::next(self_);
    return it == graph_->nodes_.end() ? nullptr : it->get();
}

// ---- Graph ------------------------------------------------------------------

std::string target_to_name_candidate(Op op, std::string_view target) {
    std::string_view t = target;
    if (op == Op::CallFunction) {
        // An OpOverload's __name__ is "<op>.<overload>"; other callables' is the last atom.
        if (t.substr(0, 10) == "torch.ops.") {
            t.remove_prefix(10);
            size_t dot = t.find('.');
            if (dot != std::string_view::npos) t.remove_prefix(dot + 1); // drop namespace
        } else {
            size_t dot = t.rfind('.');
            if (dot != std::string_view::npos) t.remove_prefix(dot + 1);
        }
    } else if (t.size() > 4 && t.substr(0, 2) == "__" && t.substr(t.size() - 2) == "__") {
        t = t.substr(2, t.size() - 4); // magic method names lose their dunders
    }
    return snake_case(t);
}

std::vector<Node*> Graph::nodes() const {
    std::vector<Node*> out;
    out.reserve(nodes_.size());
    for (const auto& n : nodes_) out.push_back(n.get());
    return out;
}

Node* Graph::find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::find_id(uint32_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
}

Node* Graph::output_node() const {
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
        if ((*it)->op() == Op::Output) return it->get();
    return nullptr;
}

std::vector<Node*> Graph::placeholders() const {
    std::vector<Node*> out;
    for (const auto& n : nodes_)
        if (n->op() == Op::Placeholder) out.push_back(n.get());
    return out;
}

Graph::InsertPoint::InsertPoint(Graph* g, Node* anchor, bool after)
    : graph_(g), saved_(g->insert_) {
    // fx: inserting_after(None) is inserting_before(root), i.e. the end of the
    // graph (even after the output); inserting_before(None) is the start.
    g->insert_ = InsertState{anchor, after, anchor == nullptr && !after};
}

Graph::InsertPoint::InsertPoint(InsertPoint&& other) noexcept
    : graph_(other.graph_), saved_(other.saved_) {
    other.active_ = false;
}

Graph::InsertPoint::~InsertPoint() {
    if (active_) graph_->insert_ = saved_;
}

Graph::InsertPoint Graph::inserting_after(Node* n) {
    return InsertPoint(this, n, true);
}
Graph::InsertPoint Graph::inserting_before(Node* n) {
    return InsertPoint(this, n, false);
}

Node* Graph::create_node(Op op, std::string target, std::vector<Argument> args, Kwargs kwargs,
                         std::string_view name) {
    auto owned = std::unique_ptr<Node>(new Node());
    Node* n = owned.get();
    n->graph_ = this;
    n->id_ = next_id_++;
    n->op_ = op;
    n->target_ = std::move(target);
    std::string candidate =
        name.empty() ? target_to_name_candidate(op, n->target_) : std::string(name);
    n->name_ = names_.create_name(candidate);
    if (op == Op::CallFunction) n->op_info_ = find_op(n->target_);

    std::list<std::unique_ptr<Node>>::iterator pos;
    if (insert_.anchor) {
        pos = insert_.after ? std::next(insert_.anchor->self_) : insert_.anchor->self_;
    } else {
        pos = insert_.at_start ? nodes_.begin() : nodes_.end();
    }
    n->self_ = nodes_.insert(pos, std::move(owned));
    by_name_[n->name_] = n;
    by_id_[n->id_] = n;
    n->set_args_kwargs(std::move(args), std::move(kwargs));
    return n;
}

Node* Graph::placeholder(std::string name) {
    std::string candidate = name;
    return create_node(Op::Placeholder, std::move(name), {}, {}, candidate);
}

Node* Graph::get_attr(std::string qualified_name, std::string_view name) {
    return create_node(Op::GetAttr, std::move(qualified_name), {}, {}, name);
}

Node* Graph::call_function(std::string target, std::vector<Argument> args, Kwargs kwargs,
                           std::string_view name) {
    return create_node(Op::CallFunction, std::move(target), std::move(args), std::move(kwargs),
                       name);
}

Node* Graph::call_module(std::string qualified_name, std::vector<Argument> args, Kwargs kwargs,
                         std::string_view name) {
    return create_node(Op::CallModule, std::move(qualified_name), std::move(args),
                       std::move(kwargs), name);
}

Node* Graph::call_method(std::string method, std::vector<Argument> args, Kwargs kwargs,
                         std::string_view name) {
    return create_node(Op::CallMethod, std::move(method), std::move(args), std::move(kwargs), name);
}

Node* Graph::output(Argument result) {
    return create_node(Op::Output, "output", {std::move(result)}, {}, "output");
}

Status Graph::erase_node(Node* n) {
    PT2LAB_CHECK(n && n->graph_ == this);
    if (!n->users_.empty()) {
        std::string users = "{";
        for (size_t k = 0; k < n->users_.size(); ++k) {
            if (k) users += ", ";
            users += n->users_[k]->name() + ": None";
        }
        users += "}";
        return make_error("%" + n->name(),
                          "Tried to erase Node " + n->name() + " but it still had " +
                              std::to_string(n->users_.size()) + " users in the graph: " + users +
                              "!",
                          "rewire its users first (replace_all_uses_with), then erase it");
    }
    if (insert_.anchor == n) {
        // Keep the insert point valid: new nodes go where n was.
        insert_ = InsertState{n->next(), false, false};
    }
    n->unlink_inputs();
    by_name_.erase(n->name_);
    by_id_.erase(n->id_);
    nodes_.erase(n->self_);
    return {};
}

void Graph::move_before(Node* n, Node* before) {
    PT2LAB_CHECK(n->graph_ == this && (!before || before->graph_ == this));
    if (n == before) return;
    auto pos = before ? before->self_ : nodes_.end();
    nodes_.splice(pos, nodes_, n->self_);
}

void Graph::rename(Node* n, std::string_view candidate) {
    by_name_.erase(n->name_);
    names_.release(n->name_);
    n->name_ = names_.create_name(candidate);
    by_name_[n->name_] = n;
}

bool Graph::force_name(Node* n, const std::string& name) {
    if (n->name_ == name) return true;
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return false;
    by_name_.erase(n->name_);
    names_.release(n->name_);
    names_.reserve(name);
    n->name_ = name;
    by_name_[name] = n;
    return true;
}

Status Graph::lint() const {
    GraphLinting l(*this);
    l.step(static_cast<size_t>(-1));
    return l.status();
}

// Names are unique by construction (by_name_); ids are dense per graph, below next_id_.
GraphLinting::GraphLinting(const Graph& g) : g_(g), defined_(g.next_id_, 0), at_(g.nodes_.begin()) {
}

bool GraphLinting::step(size_t nodes) {
    for (size_t k = 0; k < nodes; ++k) {
        if (!status_.ok() || at_ == g_.nodes_.end()) return true;
        const Node* node = at_->get();
        if (node->graph_ != &g_) {
            status_ = make_error("%" + node->name(),
                                 "Node '" + node->name() + "' does not belong to this Graph!");
            return true;
        }
        std::optional<Error> err;
        auto check_arg = [&](Node* arg) {
            if (err) return;
            if (arg->graph_ != &g_) {
                err = make_error(
                    "%" + node->name(),
                    "Argument '" + arg->name() + "' of Node '" + node->name() +
                        "' does not belong to this Graph, but was used as an argument! If "
                        "you are copying nodes from another graph, make sure to use "
                        "``arg_transform`` on node_copy() to remap values");
            } else if (arg->id_ >= defined_.size() || !defined_[arg->id_]) {
                err =
                    make_error("%" + node->name(),
                               "Argument '" + arg->name() + "' of Node '" + node->name() +
                                   "' was used before it has been defined! Please check that Nodes "
                                   "in the graph are topologically ordered");
            }
        };
        for (const Argument& a : node->args()) for_each_node(a, check_arg);
        for (const auto& kv : node->kwargs()) for_each_node(kv.second, check_arg);
        if (err) {
            status_ = *err;
            return true;
        }
        if (node->id_ < defined_.size()) defined_[node->id_] = 1;
        ++at_;
        ++done_;
    }
    return !status_.ok() || at_ == g_.nodes_.end();
}

NodePositions::NodePositions(const Graph& g, const std::vector<Node*>& order) : g_(&g) {
    uint32_t max_id = 0;
    for (const Node* n : order) max_id = std::max(max_id, n->id());
    at_.assign(size_t{max_id} + 1, npos);
    for (size_t i = 0; i < order.size(); ++i) at_[order[i]->id()] = i;
}

bool Graph::shed(std::chrono::steady_clock::time_point deadline) {
    // Users before their inputs; the name and id maps point at freed nodes meanwhile,
    // and nothing reads them (the graph is on its way out).
    for (size_t n = 1; !nodes_.empty(); ++n) {
        nodes_.pop_back();
        if (n % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
    }
    return erase_until(by_name_, deadline) && erase_until(by_id_, deadline) &&
           names_.shed(deadline);
}

bool is_impure(const Node& n, const std::function<bool(const Node&)>& impure_module) {
    static const char* const kSideEffects[] = {
        "torch._assert",
        "torch._assert_async",
        "torch.ops.aten._assert_async.msg",
        "torch.ops.aten._assert_scalar.default",
        "torch.ops.aten.sym_constrain_range.default",
        "torch.ops.aten.sym_constrain_range_for_size.default",
        "torch.ops.profiler._record_function_enter",
        "torch.ops.profiler._record_function_enter_new",
        "torch.ops.profiler._record_function_exit",
        "torch.ops.inductor.accumulate_grad_.default",
        "operator.setitem",
        "torch._C._set_grad_enabled",
        "torch.amp._enter_autocast",
        "torch.amp._exit_autocast",
    };
    switch (n.op()) {
    case Op::Placeholder:
    case Op::Output: return true;
    case Op::CallFunction:
        if (n.op_info() && (n.op_info()->schema.is_mutable() || n.op_info()->side_effect()))
            return true;
        for (const char* t : kSideEffects)
            if (n.target() == t) return true;
        return false;
    case Op::CallModule: return impure_module && impure_module(n);
    default: return false;
    }
}

Result<bool> Graph::eliminate_dead_code(const std::function<bool(const Node&)>& impure_module,
                                        bool lint_first) {
    if (lint_first)
        if (Status s = lint(); !s.ok()) return s.error();
    DeadCodeEliminating d(*this, impure_module);
    while (!d.step(~size_t(0))) {
    }
    return d.changed();
}

DeadCodeEliminating::DeadCodeEliminating(Graph& g, std::function<bool(const Node&)> impure_module)
    : g_(g), impure_module_(std::move(impure_module)), order_(g.nodes()), left_(order_.size()) {
}

bool DeadCodeEliminating::step(size_t nodes) {
    // In reverse, so a node whose last reader goes is visited after it (one pass is enough).
    for (size_t k = 0; k < nodes && left_ > 0; ++k) {
        Node* n = order_[--left_];
        if (n->users().empty() && !is_impure(*n, impure_module_)) {
            Status s = g_.erase_node(n);
            PT2LAB_CHECK(s.ok());
            (void)s;
            changed_ = true;
        }
    }
    return left_ == 0;
}

std::unique_ptr<Graph> Graph::clone() const {
    GraphCloning c(*this);
    while (!c.step(~size_t(0))) {
    }
    return c.take();
}

GraphCloning::GraphCloning(const Graph& src)
    : src_(src), g_(std::make_unique<Graph>()), names_(src.names_), by_id_(src.next_id_, nullptr),
      at_(src.nodes_.begin()) {
    g_->next_id_ = src.next_id_;
    g_->by_name_.reserve(src.nodes_.size());
    g_->by_id_.reserve(src.nodes_.size());
}

// Every reference is to a node of the source graph (args are only set through
// its API); a foreign node here is a bug in pt2lab, not user data.
Node* GraphCloning::mapped(const Node* n) const {
    PT2LAB_CHECK(n && n->graph_ == &src_ && n->id_ < by_id_.size() && by_id_[n->id_]);
    return by_id_[n->id_];
}

bool GraphCloning::step(size_t nodes) {
    // Nodes first (names, meta, args still pointing at the source's nodes), then
    // their links: args remapped and users in the source's order.
    for (size_t done = 0; done < nodes; ++done) {
        if (phase_ == Phase::Nodes) {
            if (at_ == src_.nodes_.end()) {
                phase_ = Phase::Links;
                at_ = src_.nodes_.begin();
                dst_ = g_->nodes_.begin();
                continue;
            }
            const Node* src = at_->get();
            auto copy = std::unique_ptr<Node>(new Node());
            Node* n = copy.get();
            n->graph_ = g_.get();
            n->id_ = src->id_;
            n->op_ = src->op_;
            n->name_ = src->name_;
            n->target_ = src->target_;
            n->op_info_ = src->op_info_;
            n->meta = src->meta;
            n->args_ = src->args_;
            n->kwargs_ = src->kwargs_;
            n->self_ = g_->nodes_.insert(g_->nodes_.end(), std::move(copy));
            g_->by_name_[n->name_] = n;
            g_->by_id_[n->id_] = n;
            PT2LAB_CHECK(n->id_ < by_id_.size());
            by_id_[n->id_] = n;
            ++at_;
        } else if (phase_ == Phase::Links) {
            if (at_ == src_.nodes_.end()) {
                g_->insert_ = src_.insert_;
                if (src_.insert_.anchor) g_->insert_.anchor = mapped(src_.insert_.anchor);
                phase_ = Phase::Names;
                continue;
            }
            Node* n = dst_->get();
            auto swap = [&](Node* x) { return mapped(x); };
            for (Argument& a : n->args_) map_nodes(a, swap);
            for (auto& kv : n->kwargs_) map_nodes(kv.second, swap);
            n->users_.reserve((*at_)->users_.size());
            for (Node* u : (*at_)->users_) n->users_.push_back(mapped(u));
            ++at_;
            ++dst_;
        } else if (phase_ == Phase::Names) {
            // Two names per node's worth of work (they are short strings, a node is not).
            const size_t left = nodes - done;
            if (names_.step(left > SIZE_MAX / 2 ? SIZE_MAX : 2 * left, g_->names_))
                phase_ = Phase::Done;
            break;
        } else {
            return true;
        }
    }
    return phase_ == Phase::Done;
}

std::unique_ptr<Graph> GraphCloning::take() {
    PT2LAB_CHECK(phase_ == Phase::Done && g_);
    return std::move(g_);
}

} // namespace pt2lab
