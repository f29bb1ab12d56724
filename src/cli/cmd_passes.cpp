// pt2lab decompose: run_decompositions at a level, print the code, the graph
// signature, op counts and the parity against the original program.
#include <cstdio>

#include "cli.h"
#include "exec/parity.h"
#include "io/program_loader.h"
#include "passes/decompose.h"
#include "passes/pt2e.h"
#include "passes/unlift.h"

namespace pt2lab {

namespace {

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
    ExportedProgram low = ep.clone();
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

namespace pt2lab {

namespace {

// The example input plus `n` batches from pt2lab's generator (SeededRng(k).normal(), k = 1..n).
std::vector<std::vector<Tensor>> calibration_batches(const ExportedProgram& ep, int n) {
    std::vector<std::vector<Tensor>> batches;
    if (!ep.example_inputs.empty()) batches.push_back(example_inputs(ep));
    for (int k = 1; k <= n; ++k) batches.push_back(seeded_inputs(ep, static_cast<uint64_t>(k)));
    return batches;
}

void print_quant_error(const ParityReport& p) {
    for (const auto& o : p.outputs)
        std::printf("  %-12s max|diff| %.4g  max rel %.4g  SQNR %.2f dB%s\n", o.name.c_str(),
                    o.max_abs, o.max_rel, o.sqnr_db, o.bit_identical ? "  (bit-identical)" : "");
}

} // namespace

int cmd_prepare_convert(const CliArgs& a) {
    const bool convert = a.command == "convert";
    auto loaded = load_program_file(a.file);
    if (!loaded.ok()) return input_error(loaded.error());
    const ExportedProgram& ep = loaded.value();
    UnliftOptions uo;
    uo.guards_fn = a.guards;
    auto original = unlift(ep, uo);
    if (!original.ok()) return input_error(original.error());
    GraphModule gm = original.value().clone();
    auto prep = prepare_pt2e(gm);
    if (!prep.ok()) {
        Error e = prep.error();
        e.file = a.file;
        return input_error(e);
    }
    std::printf("# prepare_pt2e on ep.module() of %s\n%s", ep.source_file.c_str(),
                prep.value().str().c_str());
    if (ep.example_inputs.empty()) {
        std::printf("%s\n", gm.code().c_str());
        std::printf("# no example inputs in the file: not calibrated, no parity\n");
        return 0;
    }
    ModuleState ref_state = ModuleState::from_module(original.value());
    ModuleState state = ModuleState::from_module(gm);
    std::vector<Tensor> example = example_inputs(ep);
    auto base = run_module(original.value(), ref_state, example);
    if (!base.ok()) return input_error(base.error());
    if (!convert) {
        std::printf("%s\n", gm.code().c_str());
        auto r = run_module(gm, state, example);
        if (!r.ok()) return input_error(r.error());
        ParityReport p = compare_runs(r.value(), base.value());
        std::printf("# parity, prepared vs ep.module() (folding changes the arithmetic; observers "
                    "pass values through):\n%s",
                    p.str().c_str());
        for (const auto& [name, obs] : state.observers) {
            auto q = obs->calculate_qparams();
            if (q.ok())
                std::printf("  %%%s: min %.6g max %.6g -> scale %.6g zero_point %lld\n",
                            name.c_str(), obs->min_val(), obs->max_val(), q.value().scale,
                            static_cast<long long>(q.value().zero_point));
        }
        return 0;
    }
    auto batches = calibration_batches(ep, a.calibrate);
    if (Status s = calibrate(gm, state, batches); !s.ok()) return input_error(s.error());
    std::printf(
        "# calibrated on %zu batches (the example input + %d from SeededRng(1..%d).normal())\n",
        batches.size(), a.calibrate, a.calibrate);
    auto conv = convert_pt2e(gm, state, a.fold);
    if (!conv.ok()) return input_error(conv.error());
    std::printf("# convert_pt2e(fold_quantize=%s)\n%s", a.fold ? "True" : "False",
                conv.value().str().c_str());
    std::printf("%s\n", gm.code().c_str());
    ModuleState qstate = ModuleState::from_module(gm);
    auto r = run_module(gm, qstate, example);
    if (!r.ok()) return input_error(r.error());
    std::printf("# quantization error, converted vs float ep.module() on the example input:\n");
    print_quant_error(compare_runs(r.value(), base.value()));
    return 0;
}

} // namespace pt2lab
