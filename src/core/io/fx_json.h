// Reader for pt2lab's symbolic_trace graph JSON (docs/FORMATS.md section 2).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "program/graph_module.h"
#include "util/status.h"

namespace pt2lab {

struct FxGraph {
    std::string name;                                       // "style_modules"
    std::string module_class;                               // "StyleModules"
    std::string torch_version;                              // the torch that traced it
    std::map<std::string, std::string> modules;             // qualified name -> Python type
    std::vector<std::string> impure_modules;                // kept by dead-code elimination
    std::map<std::string, std::vector<int64_t>> attributes; // get_attr target -> shape
    std::unique_ptr<Graph> graph;
    // What torch printed (tests only; pt2lab always regenerates text from nodes).
    std::string expected_graph, expected_code, expected_tabular;
};

Result<FxGraph> read_fx_graph_json(const std::string& text, const std::string& file);
// The GraphModule a symbolic_trace graph belongs to: its submodules (by type)
// and attributes (zero tensors of the recorded shapes), plain codegen, compiled.
GraphModule module_from_fx(FxGraph fx);

struct JsonAt;
// One argument in pt2lab's JSON notation (docs/FORMATS.md section 2), with
// node references left unresolved (Argument::node_name) for the caller to bind.
Result<Argument> decode_fx_arg(const JsonAt& a);

// True when the JSON text is a pt2lab fx graph (cheap sniff of the "format" key).
bool looks_like_fx_graph_json(const std::string& text);

} // namespace pt2lab
