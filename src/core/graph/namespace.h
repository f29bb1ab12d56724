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

} // namespace pt2lab
