// Op schemas: real ATen schema strings parsed into argument names, types and
// defaults. The strings live in the op table (graph/op_rows.inc), which the
// loader, printers, lint, the executor and decompositions all read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/argument.h"
#include "util/status.h"

namespace pt2lab {

struct SchemaType {
    std::string base; // "Tensor", "int", "SymInt", "float", "bool", "Scalar", "ScalarType", ...
    bool optional = false;          // T?
    bool is_list = false;           // T[] / T[N]
    int list_size = 0;              // N of T[N]; 0 when unsized
    std::string alias;              // "a!" in Tensor(a!); "" when none
    bool optional_elements = false; // Tensor?[]

    bool mutable_alias() const { return !alias.empty() && alias.back() == '!'; }
    std::string str() const; // back to schema text: "SymInt[2]", "Tensor(a!)", "int[1]?"
};

struct SchemaArg {
    std::string name;
    SchemaType type;
    bool kwarg_only = false;
    bool has_default = false;
    Argument default_value; // expanded: SymInt[2] stride=1 -> [1, 1]
    std::string default_text;
};

struct OpSchema {
    std::string ns;       // "aten", "quantized_decomposed"; "" for Python operators
    std::string name;     // "conv2d"
    std::string overload; // "default" when the schema has none
    std::vector<SchemaArg> arguments;
    std::vector<SchemaArg> returns;
    std::string text; // the schema string as registered

    // "torch.ops.aten.conv2d.default" (what graphs use as the target)
    std::string target() const;
    // "aten.conv2d.default" (str() of the OpOverload, as print_tabular shows it)
    std::string overload_str() const;
    // True when any argument is written in place (Tensor(a!)), like add_ and copy_.
    bool is_mutable() const;
    // Index of the argument named `name`, or -1.
    int arg_index(std::string_view name) const;
};

// Parses "ns::name.overload(args) -> returns". Errors name the column.
Result<OpSchema> parse_op_schema(std::string_view text);

// The schema of a call_function target ("torch.ops.aten.conv2d.default",
// "operator.getitem") from the op table (graph/op_table.h); null when unknown.
const OpSchema* find_op_schema(std::string_view target);

// What torch's dispatcher hands a tracer: trailing positional arguments equal
// to their default are dropped, keyword-only arguments equal to their default
// are dropped. (export records aten calls this way: conv2d keeps a None bias
// when stride/padding follow it, and drops it when nothing follows.)
void drop_trailing_defaults(const OpSchema& schema, std::vector<Argument>& args, Kwargs& kwargs);

} // namespace pt2lab
