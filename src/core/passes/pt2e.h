// PT2E quantization passes on an ep.module() GraphModule, as
// prepare_pt2e / convert_pt2e do them (fact sheet section 5):
//  - fold_conv_bn: BatchNorm folded into the preceding conv's weight and bias
//    (a new `conv.weight_bias` parameter when the conv had none);
//  - insert_observer: an observer call_module after a node, users rewired
//    without the self-loop (the correct way);
//  - prepare_pt2e: what prepare_pt2e(m, XNNPACKQuantizer().set_global(
//    get_symmetric_quantization_config())) does in torch.ao (torch 2.6): fold_conv_bn,
//    XNNPACK's annotators (linear/conv [+ relu], adaptive_avg_pool2d, add/mul [+ relu], cat),
//    shared specs for ops that keep their input's quantization, one observer instance
//    per sharing group (HistogramObserver int8 -128..127 for activations,
//    MinMaxObserver int8 -127..127 symmetric for weights; eps 2**-12);
//  - calibrate: run the module over inputs so the observers record min/max;
//  - convert_pt2e: each observer -> quantize_per_tensor -> dequantize_per_tensor
//    with its scale/zero_point as literals, a dequantize with several annotated
//    readers duplicated per reader (DuplicateDQPass); with fold_quantize, each
//    weight's quantize is folded into an int8 `_frozen_param<N>` attribute.
#pragma once

#include <string>
#include <vector>

#include "exec/interpreter.h"
#include "program/graph_module.h"
#include "util/stages.h"

namespace pt2lab {

struct FoldReport {
    std::vector<std::string> folded;         // "batch_norm into conv2d"
    std::vector<std::string> skipped;        // why a batch norm was not folded
    std::vector<std::string> new_parameters; // "conv.weight_bias"
};
Result<FoldReport> fold_conv_bn(GraphModule& gm);
// One step of it: `bn` folded into the conv it reads, when it is such a pair (the
// dead batch norm stays for a later eliminate_dead_code; no recompile).
// `elements`, when given, grows by the weight elements written.
Status fold_bn_node(GraphModule& gm, Node* bn, FoldReport& report, int64_t* elements = nullptr);

// Inserts `activation_post_process_<N>` after `node` and points node's other
// users at it. Returns the observer node.
Result<Node*> insert_observer(GraphModule& gm, Node* node, const ObserverConfig& cfg);

struct ObserverPlacement {
    std::string observer; // "activation_post_process_0"
    std::string observes; // the node whose output it sees ("x", "conv_weight", "relu")
    std::string
        role; // "input activation of conv2d", "weight of conv2d", "output of conv2d -> relu"
    ObserverConfig config;
};

struct PrepareReport {
    FoldReport fold;
    std::vector<std::string> patterns; // "conv2d -> relu", "linear"
    std::vector<ObserverPlacement> observers;
    std::string str() const;
    // The report a line at a time (the page writes a 10k-node graph's in pieces):
    // lines [from, to) of str(), of line_count().
    size_t line_count() const;
    std::string lines(size_t from, size_t to) const;
};
Result<PrepareReport> prepare_pt2e(GraphModule& gm);

// node.meta["quantization_annotation"] as prepare_pt2e leaves it: repr() of torch.ao's
// QuantizationAnnotation, on every node the quantizer annotated (a weight or bias gets
// the empty one torch.ao's _mark_nodes_as_annotated gives it). The Node panel shows it.
inline constexpr const char* kAnnotationKey = "quantization_annotation";
// torch.ao's _is_valid_annotation: the node's annotation names an input or an output.
bool has_valid_annotation(const Node& n);

// prepare_pt2e in pieces (util/stages.h): step() works until `deadline` and says
// whether it is over; then take() gives the report. `gm` is changed as it goes
// (work on a copy), must outlive this and must not change meanwhile.
class Preparing {
public:
    using Clock = Stages::Clock;
    explicit Preparing(GraphModule& gm);
    ~Preparing();
    Preparing(const Preparing&) = delete;
    Preparing& operator=(const Preparing&) = delete;
    Result<bool> step(Clock::time_point deadline);
    std::string what() const; // "prepare_pt2e: place observers: node 300 of 10000"
    PrepareReport take();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Runs gm over each input set (one tensor per forward() argument) so its observers record.
Status calibrate(const GraphModule& gm, ModuleState& state,
                 const std::vector<std::vector<Tensor>>& batches);

// A stage that runs gm.lint().
void add_lint(Stages& stages, GraphModule& gm);
// A last stage that recompiles `gm` with its graph copied in pieces (the copy in
// `snapshot`, which the caller keeps beside `stages`).
void add_recompile(Stages& stages, GraphModule& gm, std::unique_ptr<GraphCloning>& snapshot);

struct ConvertedObserver {
    std::string observer;
    float scale = 1.0f;
    int64_t zero_point = 0;
    int64_t quant_min = 0, quant_max = 255;
    ScalarType dtype = ScalarType::Byte;
    std::string quantize, dequantize; // node names; quantize is "" when folded
    std::string frozen_param;         // "_frozen_param0" when the weight's quantize was folded
};
struct ConvertReport {
    std::vector<ConvertedObserver> converted;
    std::string str() const;
    // str()'s lines for converted[from, to) (the page writes a big report in pieces:
    // a float's repr is microseconds, thousands of them tens of milliseconds).
    std::string lines(size_t from, size_t to) const;
};
Result<ConvertReport> convert_pt2e(GraphModule& gm, const ModuleState& state,
                                   bool fold_quantize = true);

// convert_pt2e in pieces, as Preparing (the observers' qparams come from `state`,
// which must not change meanwhile).
class Converting {
public:
    using Clock = Stages::Clock;
    Converting(GraphModule& gm, const ModuleState& state, bool fold_quantize);
    ~Converting();
    Converting(const Converting&) = delete;
    Converting& operator=(const Converting&) = delete;
    Result<bool> step(Clock::time_point deadline);
    std::string what() const;
    ConvertReport take();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace pt2lab
