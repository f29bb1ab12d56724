// Small helpers shared by the core tests.
#pragma once

#include <string>
#include <vector>

#include "exec/interpreter.h"
#include "io/program_loader.h"
#include "workspace/workspace.h"

namespace pt2lab_test {

inline std::string source_path(const std::string& rel) {
    return std::string(PT2LAB_SOURCE_DIR) + "/" + rel;
}

inline std::string read_text(const std::string& path) {
    auto b = pt2lab::read_file_bytes(path);
    if (!b.ok()) return {};
    return std::string(b.value().begin(), b.value().end());
}

// Files in a source folder with the given suffix, sorted.
std::vector<std::string> list_dir(const std::string& rel_dir, const std::string& suffix);

// Replaces every "0x<hex>" with "0xADDR" (object addresses differ run to run).
std::string mask_addresses(const std::string& s);

// A lesson asset by name ("conv_relu") or path ("assets/graphs/conv_relu.pt2");
// fails the current test when it does not load.
pt2lab::ExportedProgram load_asset(const std::string& name_or_path);
// A .npy file under the source tree as a tensor; fails the current test when it
// does not read.
pt2lab::Tensor load_npy(const std::string& rel);
using pt2lab::example_inputs; // exec/interpreter.h

// A lesson asset ("conv_relu") opened as a Workspace; fails the test when it does not open.
std::unique_ptr<pt2lab::Workspace> open_workspace(const std::string& name);
// An action written as JSON; fails the test when it does not parse.
pt2lab::Action action(const std::string& json);

// Everything a user can see of a workspace (every printed view, node ids,
// state bytes, observers, history, last run), as one string.
std::string fingerprint(const pt2lab::Workspace& ws);

// First differing line, for readable failures.
std::string first_difference(const std::string& expected, const std::string& actual);

} // namespace pt2lab_test
