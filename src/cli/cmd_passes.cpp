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
    auto loaded = load_program_file(a.file, a.limits);
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

// The real inputs (--input files, else the file's sample inputs) plus `n` batches from
// pt2lab's generator (SeededRng(k).normal(), k = 1..n). Without real inputs: an error.
Result<std::vector<std::vector<Tensor>>>
calibration_batches(const CliArgs& a, const ExportedProgram& ep, int n, std::string* source) {
    std::vector<std::vector<Tensor>> batches;
    if (!a.inputs.empty()) {
        auto in = read_input_files(a.inputs);
        if (!in.ok()) return in.error();
        batches.push_back(in.take());
        *source = "--input";
    } else if (!ep.example_inputs.empty()) {
        batches.push_back(example_inputs(ep));
        *source = "the file's sample input";
    } else {
        Error e = make_error("data/sample_inputs/model.pt",
                             "no calibration data: the file carries no sample inputs pt2lab can "
                             "read, so convert_pt2e would have no observed ranges",
                             "give calibration inputs with --input x.npy (one .npy per forward() "
                             "input)");
        e.file = a.file;
        return e;
    }
    for (int k = 1; k <= n; ++k) {
        auto b = seeded_inputs(ep, static_cast<uint64_t>(k), a.limits);
        if (!b.ok()) return b.error();
        batches.push_back(b.take());
    }
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
    auto loaded = load_program_file(a.file, a.limits);
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
    std::string source;
    auto batches = calibration_batches(a, ep, convert ? a.calibrate : 0, &source);
    if (!batches.ok()) {
        if (convert) return input_error(batches.error());
        std::printf("%s\n", gm.code().c_str());
        std::printf("# no sample inputs in the file: no parity\n");
        return 0;
    }
    ModuleState ref_state = ModuleState::from_module(original.value());
    ModuleState state = ModuleState::from_module(gm);
    ref_state.file_size = state.file_size = ep.file_size; // the run budgets follow the file
    std::vector<Tensor> example = batches.value().front();
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
    if (Status s = calibrate(gm, state, batches.value()); !s.ok()) return input_error(s.error());
    std::printf("# calibrated on %zu batches (%s + %d from SeededRng(1..%d).normal())\n",
                batches.value().size(), source.c_str(), a.calibrate, a.calibrate);
    auto conv = convert_pt2e(gm, state, a.fold);
    if (!conv.ok()) return input_error(conv.error());
    if (conv.value().converted.empty()) {
        Error e = make_error("",
                             "nothing was quantized: prepare_pt2e found no conv or linear "
                             "pattern to annotate, so there are no observers to convert",
                             "quantize a program that has a conv2d or linear");
        e.file = a.file;
        return input_error(e);
    }
    std::printf("# convert_pt2e(fold_quantize=%s)\n%s", a.fold ? "True" : "False",
                conv.value().str().c_str());
    std::printf("%s\n", gm.code().c_str());
    ModuleState qstate = ModuleState::from_module(gm);
    qstate.file_size = ep.file_size;
    auto r = run_module(gm, qstate, example);
    if (!r.ok()) return input_error(r.error());
    std::printf("# quantization error, converted vs float ep.module() on %s:\n", source.c_str());
    print_quant_error(compare_runs(r.value(), base.value()));
    return 0;
}

} // namespace pt2lab
