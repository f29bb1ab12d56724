// Shared pieces of the pt2lab command-line tool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/tensor.h"
#include "util/limits.h"
#include "util/status.h"
#include "workspace/workspace.h"

namespace pt2lab {

struct CliArgs {
    std::string command, file;
    bool module = false, guards = true, fast = false, profile = false;
    std::vector<std::string> inputs; // --input x.npy (repeatable)
    bool has_seed = false;
    uint64_t seed = 0;
    std::string out;               // --out out.npy | out.json
    int repeat = 1;                // --repeat N
    std::string level;             // decompose --level inference|core
    std::vector<std::string> keep; // decompose --keep aten.conv2d.default (drop that rule)
    int calibrate = 8;             // convert --calibrate N (seeded batches after the example input)
    bool fold = true;              // convert --no-fold: fold_quantize=False
    std::string save_to;           // save: the .pt2 to write
    std::string save_level;        // save --decompose inference|core
    bool save_prepare = false, save_convert = false; // save --prepare | --convert
    Limits limits; // --limit NAME=VALUE (repeatable): memory and work budgets
};

std::string usage_text(); // the usage, with the options from cli_options.h
int usage_error(const std::string& msg);
int input_error(const Error& e);
// FILE opened as the page opens a dropped file (Workspace::open: one sniff, one
// loader, one budget rule), with --limit and --no-guards. `programs_only`: the
// command needs an ExportedProgram, so a symbolic_trace graph is refused.
Result<std::unique_ptr<Workspace>> open_workspace(const CliArgs& a, bool programs_only = false);
// Workspace::apply, with an error that names FILE as it was given.
Result<ActionOutcome> apply_action(Workspace& ws, const Action& action, const CliArgs& a);
// The tensors of --input x.npy files, in order (cmd_run.cpp).
Result<std::vector<Tensor>> read_input_files(const std::vector<std::string>& paths);
int cmd_run(const CliArgs& args);
int cmd_decompose(const CliArgs& args);
int cmd_prepare_convert(const CliArgs& args);
int cmd_save(const CliArgs& args);
// pt2lab lesson check PATH [--no-index]: the arguments after "lesson" (cmd_lesson.cpp).
int cmd_lesson(const std::vector<std::string>& args);
// The real input the module is calibrated and compared on: --input files, else the
// file's sample inputs; without either, an error that says what to give (cmd_passes.cpp).
Result<InputSource> calibration_inputs(const CliArgs& a, const ExportedProgram& ep,
                                       std::string* source);
// Calibrate on those inputs, then on --calibrate seeded batches, and print how
// (cmd_passes.cpp; prepare / convert and save --convert).
Status calibrate_observers(Workspace& ws, const CliArgs& a, const InputSource& inputs,
                           const std::string& source);

} // namespace pt2lab
