// Per-layer parity of a quantized run: each layer of the quantized graph against
// the float graph's node it stands for, on the same inputs (SQNR, relative error),
// in graph order, and the layer that loses most. Not a general graph matcher: it
// pairs by the names convert_pt2e keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exec/interpreter.h"
#include "exec/parity.h"
#include "graph/graph.h"

namespace pt2lab {

// A layer: a call_function node of the quantized graph (not a quantize / dequantize
// of torch.ao's quantized_decomposed library) whose name and target the float graph
// has too. convert_pt2e keeps the names of the nodes between a dequantize and a
// quantize, so a layer's value is the float node's value with the quantization
// error of everything before it. One exception: prepare_pt2e folded a batch norm
// into the conv before it (the conv took over the batch norm's users and the batch
// norm is gone), so that conv stands for the batch norm's output: batch_norm's own
// value, or the getitem(.., 0) of _native_batch_norm_legit_no_training.
struct LayerPair {
    std::string node;      // in the quantized graph
    std::string reference; // in the float graph: the same name, or the folded batch norm's output
    std::string op;        // the quantized node's target without "torch.ops.": aten.conv2d.default
};

// The layers of `quantized` against `floating`, in the quantized graph's order, made
// in pieces (a converted 10k-node graph is walked across several slices). Both
// graphs must outlive it and not change while it works.
class LayerPairing {
public:
    LayerPairing(const Graph& quantized, const Graph& floating);
    // Looks at about `nodes` more nodes of the quantized graph; true once all are seen.
    bool step(size_t nodes);
    size_t done() const { return next_; }
    size_t total() const { return nodes_.size(); }
    std::vector<LayerPair> take() { return std::move(pairs_); }
    // The float nodes the layers stand for (LayerPair::reference): what the float run
    // needs to keep (RunOptions::keep_only).
    std::shared_ptr<const std::set<std::string>> references() const { return refs_; }

private:
    const Graph& quantized_;
    const Graph& floating_;
    std::vector<Node*> nodes_; // of the quantized graph, in order
    size_t next_ = 0;
    std::vector<LayerPair> pairs_;
    std::shared_ptr<std::set<std::string>> refs_ = std::make_shared<std::set<std::string>>();
};

// LayerPairing stepped to the end.
std::vector<LayerPair> pair_layers(const Graph& quantized, const Graph& floating);

struct LayerParity {
    LayerPair layer;
    TensorParity parity; // the quantized run's value (a) against the float run's (b)
};

struct LayerTable {
    std::vector<LayerParity> rows; // in the quantized graph's order
    // Layers left out because a run did not keep their value (RunResult::values_not_kept:
    // a run keeps node values while they fit in half its byte budget).
    size_t not_kept = 0;
    int worst = -1; // index into rows (worst_layer), -1 when none loses anything

    // Compares one layer's values in the two runs and appends its row; a layer whose
    // value is not a float tensor in both, of the same shape, is no row (an integer
    // index, a tuple); one that a run dropped counts in not_kept.
    void add(const LayerPair& layer, const RunResult& quantized, const RunResult& floating);
    // The same from the two values themselves: null where a run has none, `*_dropped`
    // whether that run dropped values (a missing one then counts in not_kept).
    void add_values(const LayerPair& layer, const Value* quantized, bool quantized_dropped,
                    const Value* floating, bool floating_dropped);
    // Two lines for a log: how many layers were compared (and left out), and the worst
    // ("most lost at %conv2d_5 (aten.conv2d.default): SQNR 12.3 dB").
    std::string summary() const;
};

// A LayerTable made while the quantized run runs (RunOptions::on_value): each layer's
// value is compared with the float run's as soon as its node has made it, while it is
// in cache and before an in-place op after it writes it, so the quantized run keeps no
// values and its dead values' memory is reused. The rows are those LayerTable::add
// makes from a run that kept every value as its node made it
// (RunOptions::keep_before_writes), bit for bit (test_layer_parity.cpp).
class LayerStream {
public:
    // `floating`: the float run that kept the layers' reference values, read in place
    // (not copied: its map holds a value per node); it must outlive the stream. The
    // layers are the quantized graph's, in its order.
    LayerStream(std::vector<LayerPair> layers, const RunResult& floating);
    // A node's value as the run made it: compared when the node is a layer.
    void on_value(const Node& n, const Value& v);
    size_t compared() const { return compared_; } // layers seen so far
    double ms() const { return ms_; }             // time spent comparing (steady clock)
    // The rows in the layers' order (worst left at -1), moved out (a converted 10k-node
    // graph has thousands, each with three names: copying them took 19 ms); a layer whose
    // node never ran is no row, as a value a run never had. Once: the stream is spent.
    LayerTable take();

private:
    enum class Seen : uint8_t { No, Row, NotKept, Nothing }; // what a layer's last value gave
    std::vector<LayerPair> layers_;
    const RunResult& floating_;
    std::map<std::string, size_t> index_; // quantized node name -> layer
    std::vector<LayerParity> rows_;       // per layer: its row, where seen_ is Row
    std::vector<Seen> seen_;
    size_t compared_ = 0;
    double ms_ = 0;
};

// The layer that loses most: the first row with NaN or Inf where the float run is
// finite (TensorParity::nonfinite_new; a -inf both runs have, as in an attention
// mask, is no loss), else the lowest SQNR (-inf, a float value of all zeros that the quantized
// run made nonzero, is lowest); on a tie the earliest in graph order, where the loss
// first shows (a view after a conv repeats the conv's SQNR). -1 when there is no row
// or every row is identical to the float run (SQNR inf: nothing was lost).
int worst_layer(const std::vector<LayerParity>& rows);

} // namespace pt2lab
