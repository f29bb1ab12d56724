// Namespace: torch.fx's _Namespace rules for node names.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "util/shed.h"

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

    // Frees the names until `deadline`: true once none is left (Graph::shed).
    bool shed(std::chrono::steady_clock::time_point deadline) {
        return erase_until(used_, deadline) && erase_until(base_count_, deadline);
    }
    // A copy made a piece at a time (GraphCloning: a 17k-name namespace copied at once
    // took ~11 ms natively): step() copies up to `count` more entries into `to`, which
    // starts empty, and says whether the copy is whole. `from` must not change meanwhile.
    class Copying {
    public:
        explicit Copying(const Namespace& from)
            : from_(from), used_at_(from.used_.begin()), base_at_(from.base_count_.begin()) {}
        bool step(size_t count, Namespace& to) {
            for (; count > 0 && used_at_ != from_.used_.end(); --count, ++used_at_)
                to.used_.insert(to.used_.end(), *used_at_);
            for (; count > 0 && base_at_ != from_.base_count_.end(); --count, ++base_at_)
                to.base_count_.insert(to.base_count_.end(), *base_at_);
            return used_at_ == from_.used_.end() && base_at_ == from_.base_count_.end();
        }

    private:
        const Namespace& from_;
        std::set<std::string>::const_iterator used_at_;
        std::map<std::string, long long>::const_iterator base_at_;
    };

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
