// pt2lab decompose: run_decompositions at a level, print the code, the graph
// signature, op counts and the parity against the original program.
#include <cstdio>

#include "cli.h"
#include "exec/parity.h"
#include "io/program_loader.h"
#include "passes/decompose.h"
#include "passes/unlift.h"

namespace pt2lab {

namespace {

std::vector<Tensor> example_inputs(const ExportedProgram& ep) {
    std::vector<Tensor> in;
    for (const auto& t : ep.example_inputs) in.push_back(Tensor::from_data(t.tensor));
    return in;
}

void print_counts(const char* label, const Graph& g) {
    int total = 0;
    for (const auto& [t, c] : op_counts(g)) total += c;
    std::printf("%s %d call_function nodes:", label, total);
    for (const auto& [t, c] : op_counts(g)) {
        std::string s = t.rfind("torch.ops.", 0) == 0 ? t.substr(10) : t;
        std::printf(" %s x%d,", s.c_str(), c);
    }
    std::printf("\n");
}

} // namespace

int cmd_decompose(const CliArgs& a) {
    IrLevel level;
    if (a.level == "inference")
        level = IrLevel::Inference;
    else if (a.level == "core")
        level = IrLevel::CoreAten;
    else
        return usage_error("decompose needs --level inference or --level core");
    auto loaded = load_program_file(a.file);
    if (!loaded.ok()) return input_error(loaded.error());
    const ExportedProgram& ep = loaded.value();
    ExportedProgram low = copy_program(ep);
    DecompTable table = DecompTable::for_level(level);
    for (const auto& keep : a.keep)
        table = table.without(keep.rfind("torch.ops.", 0) == 0 ? keep : "torch.ops." + keep);
    auto report = run_decompositions(low, table);
    if (!report.ok()) {
        Error e = report.error();
        e.file = a.file;
        return input_error(e);
    }
    std::printf("# %s -> %s (run_decompositions(%s))\n", ep.source_file.c_str(),
                ir_level_name(level), level == IrLevel::Inference ? "{}" : "");
    std::printf("%s", report.value().str().c_str());
    print_counts("# before:", *ep.graph);
    print_counts("# after: ", *low.graph);
    if (a.module) {
        UnliftOptions uo;
        uo.guards_fn = a.guards;
        auto gm = unlift(low, uo);
        if (!gm.ok()) return input_error(gm.error());
        std::printf("%s\n", gm.value().code().c_str());
    } else {
        std::printf("%s\n", python_code(*low.graph).c_str());
        std::string sig = signature_str(low.signature);
        std::printf("# graph signature:%s", sig.c_str());
    }
    if (!ep.example_inputs.empty()) {
        RunOptions opt;
        ModuleState s1 = ModuleState::from_program(ep), s2 = ModuleState::from_program(low);
        auto r1 = run_program(ep, s1, example_inputs(ep), opt);
        auto r2 = run_program(low, s2, example_inputs(ep), opt);
        if (!r1.ok()) return input_error(r1.error());
        if (!r2.ok()) return input_error(r2.error());
        ParityReport p = compare_runs(r2.value(), r1.value());
        std::printf("# parity, %s vs the exported program (same input and weights):\n%s",
                    ir_level_name(level), p.str().c_str());
        int buffers = 0, equal = 0;
        for (const auto& [fqn, t] : s1.tensors) {
            auto it = s2.tensors.find(fqn);
            if (it == s2.tensors.end()) continue;
            ++buffers;
            equal += compare_tensors(fqn, *it->second, *t).allclose;
        }
        std::printf("# state after one run: %d of %d parameters/buffers agree\n", equal, buffers);
    }
    return 0;
}

} // namespace pt2lab
