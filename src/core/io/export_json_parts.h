// Pieces of the ExportedProgram JSON writer (io/export_json_writer.cpp): how a
// graph value is named and how an argument is written (export_json_args.cpp),
// the graph signature and the module call graph (export_json_signature.cpp).
// Internal to src/core/io.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/op_schema.h"
#include "io/py_json.h"
#include "program/exported_program.h"

namespace pt2lab {

// How values are named in the serialized graph: getitem nodes fold into their
// producer's outputs, and a second getitem of one output stands for the first
// (torch's duplicate_getitem_nodes); values written as SymInts are referred to
// by `as_sym_int`.
struct ValueNames {
    std::unordered_map<const Node*, std::string> alias;
    std::set<std::string> sym;
    const std::string& of(const Node* n) const {
        auto it = alias.find(n);
        return it == alias.end() ? n->name() : it->second;
    }
    bool is_sym(const Node* n) const { return sym.count(n->name()) != 0; }
};

Error node_error(const Node& n, const std::string& msg, const std::string& hint = {});
// {"type": "cpu", "index": null} for "cpu", {"type": "cuda", "index": 0} for "cuda:0".
void write_device(PyJson& j, const std::string& device);
// serialize_input: an argument by its value's Python type (an empty list by the
// schema's `type`, when given); `at` names the node in errors.
Status write_argument(PyJson& j, const Argument& a, const SchemaType* type, const Node& at,
                      const ValueNames& names);
// graph_module.signature; `output_args` are the output node's values, in order.
Status write_signature(PyJson& j, const ExportedProgram& ep, const ValueNames& names,
                       const std::vector<Argument>& output_args);
// graph_module.module_call_graph (a root entry made up when the program has none).
void write_module_call_graph(PyJson& j, const ExportedProgram& ep);

} // namespace pt2lab
