// Namespace: torch.fx's _Namespace rules for node names.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace pt2lab {

class Namespace {
public:
    // Sanitizes `candidate` ([^0-9a-zA-Z_]+ -> "_", leading digit -> "_" prefix),
    // then adds _1, _2 ... until the name is unused, not a Python keyword and
    // not a Python builtin (so "abs" -> "abs_1", "input" -> "input_1").
    std::string create_name(std::string_view candidate);
    // Frees a name for reuse (fx keeps erased names reserved; so do we unless asked).
    void release(const std::string& name) { used_.erase(name); }
    bool used(const std::string& name) const { return used_.count(name) != 0; }
    // Marks an exact name as taken (names read from a file).
    void reserve(const std::string& name) { used_.insert(name); }

private:
    std::set<std::string> used_;
    std::map<std::string, long long> base_count_;
};

// fx's _snake_case: "BatchNorm2d" -> "batch_norm2d".
std::string snake_case(std::string_view s);

// create_name's first step: runs of characters outside [0-9a-zA-Z_] become
// one "_", a leading digit gets a "_" prefix, "" becomes "_unnamed".
std::string sanitize_name(std::string_view raw);

// Names and targets read from a file are data, printed into gm.code; these say
// why one could not have come from torch.fx (or "" when it could). A node name
// is what create_name produces: an ASCII identifier that is not a Python keyword.
std::string node_name_problem(std::string_view name);
// A qualified op name ("torch.ops.aten.relu.default", "operator.getitem"):
// dot-separated ASCII identifiers.
std::string qualified_name_problem(std::string_view target);
// A module or attribute path ("conv.weight", "body.0.weight"): dot-separated
// parts of [0-9a-zA-Z_] (digits alone are nn.Sequential's children).
std::string attribute_path_problem(std::string_view path);

} // namespace pt2lab
