// Graph: an ordered list of Nodes with torch.fx's semantics. It keeps its own
// invariants (users mirror args; erase refuses used nodes; names are unique
// fx-style identifiers) and offers fx's editing vocabulary.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/namespace.h"
#include "graph/node.h"
#include "util/status.h"

namespace pt2lab {

class GraphCloning;

class Graph {
public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    // Deep copy: same names, order, args, meta; node references remapped.
    std::unique_ptr<Graph> clone() const;

    // Nodes in order (a snapshot; safe to edit the graph while iterating it).
    std::vector<Node*> nodes() const;
    size_t size() const { return nodes_.size(); }
    Node* find(std::string_view name) const;
    // The node with this id (Node::id), or null when it is not (or no longer) here.
    Node* find_id(uint32_t id) const;
    Node* output_node() const; // the last output node, or null
    std::vector<Node*> placeholders() const;

    // Where new nodes go (see InsertPoint).
    struct InsertState {
        Node* anchor = nullptr; // null: the start or the end of the graph
        bool after = false;     // insert after anchor (else before)
        bool at_start = false;  // with a null anchor: start of graph (else end)
    };

    // Where create_node puts new nodes. fx semantics: inserting_after(n) pins n,
    // so several nodes created in one scope come out in reverse creation order;
    // inserting_before(m) keeps creation order. The default is the end of the graph.
    class InsertPoint {
    public:
        ~InsertPoint();
        InsertPoint(InsertPoint&& other) noexcept;
        InsertPoint(const InsertPoint&) = delete;
        InsertPoint& operator=(const InsertPoint&) = delete;

    private:
        friend class Graph;
        InsertPoint(Graph* g, Node* anchor, bool after);
        Graph* graph_;
        InsertState saved_;
        bool active_ = true;
    };
    [[nodiscard]] InsertPoint
    inserting_after(Node* n); // n == null: the end (after the output), as fx
    [[nodiscard]] InsertPoint inserting_before(Node* n); // n == null: the start, as fx

    // Creates a node at the insert point. `name` is a candidate: it is made
    // unique and legal the way torch.fx's _Namespace does (relu, relu_1; abs -> abs_1).
    Node* create_node(Op op, std::string target, std::vector<Argument> args = {},
                      Kwargs kwargs = {}, std::string_view name = {});
    Node* placeholder(std::string name);
    Node* get_attr(std::string qualified_name, std::string_view name = {});
    // Default name: fx's _target_to_str (for "torch.ops.aten.copy_.default": copy__default).
    Node* call_function(std::string target, std::vector<Argument> args, Kwargs kwargs = {},
                        std::string_view name = {});
    Node* call_module(std::string qualified_name, std::vector<Argument> args, Kwargs kwargs = {},
                      std::string_view name = {});
    Node* call_method(std::string method, std::vector<Argument> args, Kwargs kwargs = {},
                      std::string_view name = {});
    Node* output(Argument result);

    // Removes n. Refuses, with PyTorch's message, when n still has users.
    Status erase_node(Node* n);
    // Moves n to just before `before` (null: to the end).
    void move_before(Node* n, Node* before);
    // Renames n (made unique like any new name).
    void rename(Node* n, std::string_view candidate);
    // Gives n exactly `name` (no sanitizing, no builtin check), as torch's
    // deserializer does with serialized names. False when another node has it.
    bool force_name(Node* n, const std::string& name);

    // Checks fx's structural invariants; the messages are torch.fx's.
    Status lint() const;

    // torch.fx's eliminate_dead_code: lint, then walk the nodes in reverse and
    // erase every node without users that is not impure (is_impure below;
    // `impure_module` says whether a call_module target is). True if anything went.
    // `lint_first` false: the caller linted the graph just before (a pass in pieces).
    Result<bool> eliminate_dead_code(const std::function<bool(const Node&)>& impure_module = {},
                                     bool lint_first = true);

    // Frees the nodes from the last one back until `deadline` (a clock reading);
    // true once none are left. For an owner about to drop a big graph over several
    // frames of a page; the graph is empty and unusable after.
    bool shed(std::chrono::steady_clock::time_point deadline);

    // The namespace used for node names (exposed for passes that need fx's naming).
    const Namespace& names() const { return names_; }

private:
    friend class Node;
    friend class GraphCloning;
    friend class GraphLinting;
    std::list<std::unique_ptr<Node>> nodes_;
    std::unordered_map<std::string, Node*> by_name_;
    std::unordered_map<uint32_t, Node*> by_id_;
    uint32_t next_id_ = 1;
    Namespace names_;
    InsertState insert_;
};

// Each node's position in an order of a graph's nodes (g.nodes()), by node id:
// ids are dense per graph, so a table, not a hash map of pointers (a pass over a
// 20k-node graph looks positions up for every edge). of() is npos for a node
// of another graph or not in the order.
class NodePositions {
public:
    static constexpr size_t npos = static_cast<size_t>(-1);
    NodePositions(const Graph& g, const std::vector<Node*>& order);
    size_t of(const Node* n) const {
        return n->graph() == g_ && n->id() < at_.size() ? at_[n->id()] : npos;
    }

private:
    const Graph* g_;
    std::vector<size_t> at_;
};

// Graph::clone in pieces, for a caller that must keep doing other things (the
// page opens a 10k-node graph over frames): step(n) copies about n more nodes
// and says whether the copy is whole; then take() gives it. The source must not
// change meanwhile. Graph::clone is one of these stepped to the end.
class GraphCloning {
public:
    explicit GraphCloning(const Graph& src);
    bool step(size_t nodes);
    std::unique_ptr<Graph> take(); // once step() said the copy is whole

private:
    enum class Phase { Nodes, Links, Names, Done };
    const Graph& src_;
    std::unique_ptr<Graph> g_;
    Namespace::Copying names_; // Names: the source's namespace, reserved names and all
    std::vector<Node*> by_id_; // the copy of the source's node with this id
    Phase phase_ = Phase::Nodes;
    std::list<std::unique_ptr<Node>>::const_iterator at_; // the next source node
    std::list<std::unique_ptr<Node>>::iterator dst_;      // its copy (Links)
    Node* mapped(const Node* n) const;
};

// Graph::eliminate_dead_code's walk in pieces (a 24k-node graph's took ~10 ms natively
// in one piece): step(n) visits about n more nodes, last to first, erasing each that has
// no users and is not impure, and says whether it is over; changed() says whether a node
// went. Nothing else may change the graph meanwhile. eliminate_dead_code is one of these
// stepped to the end (after its lint).
class DeadCodeEliminating {
public:
    DeadCodeEliminating(Graph& g, std::function<bool(const Node&)> impure_module = {});
    bool step(size_t nodes);
    bool changed() const { return changed_; }
    size_t done() const { return order_.size() - left_; }
    size_t total() const { return order_.size(); }

private:
    Graph& g_;
    std::function<bool(const Node&)> impure_module_;
    std::vector<Node*> order_; // the nodes when it began
    size_t left_;              // order_[0, left_) are still to visit
    bool changed_ = false;
};

// Graph::lint in pieces (a 24k-node graph's is tens of milliseconds in
// WebAssembly): step(n) checks about n more nodes and says whether it is over
// (every node checked, or the first problem found); status() is lint()'s answer.
// The graph must not change meanwhile. Graph::lint is one of these stepped to the end.
class GraphLinting {
public:
    explicit GraphLinting(const Graph& g);
    bool step(size_t nodes);
    const Status& status() const { return status_; }
    size_t done() const { return done_; }

private:
    const Graph& g_;
    std::vector<char> defined_; // by node id: defined by a node checked so far
    std::list<std::unique_ptr<Node>>::const_iterator at_;
    size_t done_ = 0;
    Status status_;
};

// Node.is_impure (torch >= 2.x): placeholders and outputs; call_function whose
// schema mutates an input (add_, copy_) or that is a known side effect
// (torch._assert, aten._assert_tensor_metadata ...); call_module when the
// module says so (`impure_module`). get_attr and call_method never are.
bool is_impure(const Node& n, const std::function<bool(const Node&)>& impure_module = {});

// torch.fx's Graph._target_to_str for a call_function target string:
// "torch.ops.aten.conv2d.default" -> "conv2d_default" after sanitizing is done
// by the namespace; this returns the candidate ("conv2d.default").
std::string target_to_name_candidate(Op op, std::string_view target);

} // namespace pt2lab
