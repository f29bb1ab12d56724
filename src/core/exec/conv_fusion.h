// Which convolutions the interpreter may fuse with the nodes after them: a
// conv2d / convolution whose only user is the next node, an eval batch norm
// (batch_norm, or _native_batch_norm_legit_no_training and its getitem 0),
// and/or an activation after that (hardtanh, relu, in place or not) that is the
// only user of what it reads. The fused conv applies the batch norm and the
// activation to each output before storing it (conv_epilogue.h), which saves
// two passes over the activations and writes the same bits.
//
// Fusing hides the intermediate values, so the interpreter plans it only for
// runs that keep none (RunOptions::keep_values off, the fast conv on), and it
// checks the arguments when the conv runs: anything unexpected (a train-mode
// batch norm, a non-float or mis-sized tensor, bounds that are not numbers) runs
// the nodes one by one instead, with their own messages.
#pragma once

#include <map>

#include "graph/graph.h"

namespace pt2lab {

struct ConvFusion {
    const Node* conv = nullptr;
    const Node* bn = nullptr;   // batch_norm or _native_batch_norm_legit_no_training, or null
    const Node* item = nullptr; // getitem(bn, 0) after a _native_batch_norm_legit_no_training
    const Node* act = nullptr;  // hardtanh(_) / relu(_), or null
};

// The fusable groups of g by conv node; their nodes are consecutive in g's order.
std::map<const Node*, ConvFusion> plan_conv_fusions(const Graph& g);
// The same, one node of `order` (g's nodes) at a time: looks at order[i], adds its
// group to `plan` if it heads one, and says where to look next (past the group).
size_t plan_conv_fusion_at(const std::vector<Node*>& order, size_t i,
                           std::map<const Node*, ConvFusion>& plan);

} // namespace pt2lab
