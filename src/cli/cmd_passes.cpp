// pt2lab decompose: run_decompositions at a level, print the code, the graph
// signature, op counts and the parity against the original program.
#include <cstdio>
#include <map>
#include <memory>

#include "cli.h"
#include "exec/parity.h"
#include "passes/decompose.h"
#include "passes/pt2e.h"

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
    auto opened = open_workspace(a, /*programs_only=*/true);
    if (!opened.ok()) return input_error(opened.error());
    Workspace& ws = *opened.value();
    const ExportedProgram& ep = ws.original();
    // The parity below compares one run of each program from the saved state: the
    // original's run comes first (it is its own baseline), then it is undone.
    const bool parity = !ep.example_inputs.empty();
    Action run = Action::of(Action::Kind::Run);
    run.view = GraphView::Program;
    run.inputs.kind = InputSource::Kind::Sample;
    Result<ActionOutcome> r1 = ActionOutcome();
    std::map<std::string, std::shared_ptr<Tensor>> s1; // the original's state after its run
    if (parity) {
        r1 = apply_action(ws, run, a);
        if (r1.ok()) {
            s1 = ws.state().tensors;
            if (r1.value().changed) {
                if (Status s = ws.undo(); !s.ok()) return input_error(s.error());
            }
        }
    }
    Action dec = Action::of(Action::Kind::Decompose);
    dec.level = level;
    dec.keep = a.keep;
    auto report = apply_action(ws, dec, a);
    if (!report.ok()) return input_error(report.error());
    const ExportedProgram& low = ws.program();
    std::printf("# %s -> %s (run_decompositions(%s))\n", ep.source_file.c_str(),
                ir_level_name(level), level == IrLevel::Inference ? "{}" : "");
    std::printf("%s", report.value().summary.c_str());
    print_counts("# before:", *ep.graph);
    print_counts("# after: ", *low.graph);
    if (a.module) {
        std::printf("%s\n", ws.module().code().c_str());
    } else {
        std::printf("%s\n", python_code(*low.graph).c_str());
        std::string sig = signature_str(low.signature);
        std::printf("# graph signature:%s", sig.c_str());
    }
    if (parity) {
        if (!r1.ok()) return input_error(r1.error());
        auto r2 = apply_action(ws, run, a);
        if (!r2.ok()) return input_error(r2.error());
        std::printf("# parity, %s vs the exported program (same input and weights):\n%s",
                    ir_level_name(level), r2.value().run->parity.str().c_str());
        const ModuleState& s2 = ws.state();
        int buffers = 0, equal = 0;
        for (const auto& [fqn, t] : s1) {
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

Result<InputSource> calibration_inputs(const CliArgs& a, const ExportedProgram& ep,
                                       std::string* source) {
    InputSource in;
    if (!a.inputs.empty()) {
        auto read = read_input_files(a.inputs);
        if (!read.ok()) return read.error();
        in.kind = InputSource::Kind::Given;
        in.tensors = read.take();
        in.label = *source = "--input";
    } else if (!ep.example_inputs.empty()) {
        in.kind = InputSource::Kind::Sample;
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
    return in;
}

Status calibrate_observers(Workspace& ws, const CliArgs& a, const InputSource& inputs,
                           const std::string& source) {
    if (ws.state().observers.empty()) {
        // prepare_pt2e annotated nothing (nn.LSTM, nn.GRU): torch's calibration would record
        // nothing, and convert_pt2e leaves the module as it is
        std::printf("# nothing to calibrate: prepare_pt2e placed no observer\n");
        return {};
    }
    Action cal = Action::of(Action::Kind::Calibrate);
    cal.inputs = inputs;
    cal.repeat = a.calibrate + 1; // the real input, then SeededRng(1..N).normal()
    if (auto c = apply_action(ws, cal, a); !c.ok()) return c.error();
    std::printf("# calibrated on %d batches (%s + %d from SeededRng(1..%d).normal())\n",
                a.calibrate + 1, source.c_str(), a.calibrate, a.calibrate);
    return {};
}

namespace {

void print_quant_error(const ParityReport& p) {
    for (const auto& o : p.outputs)
        std::printf("  %-12s max|diff| %.4g  max rel %.4g  SQNR %.2f dB%s\n", o.name.c_str(),
                    o.max_abs, o.max_rel, o.sqnr_db, o.bit_identical ? "  (bit-identical)" : "");
}

} // namespace

int cmd_prepare_convert(const CliArgs& a) {
    const bool convert = a.command == "convert";
    auto opened = open_workspace(a, /*programs_only=*/true);
    if (!opened.ok()) return input_error(opened.error());
    Workspace& ws = *opened.value();
    const ExportedProgram& ep = ws.original();
    auto prep = apply_action(ws, Action::of(Action::Kind::Prepare), a);
    if (!prep.ok()) return input_error(prep.error());
    std::printf("# prepare_pt2e on ep.module() of %s\n%s", ep.source_file.c_str(),
                prep.value().summary.c_str());
    std::string source;
    auto inputs = calibration_inputs(a, ep, &source);
    if (!inputs.ok()) {
        if (convert) return input_error(inputs.error());
        std::printf("%s\n", ws.module().code().c_str());
        std::printf("# no sample inputs in the file: no parity\n");
        return 0;
    }
    // Runs compare with ep.module() as loaded on the same input (RunReport::parity).
    Action run = Action::of(Action::Kind::Run);
    run.inputs = inputs.value();
    if (!convert) {
        std::printf("%s\n", ws.module().code().c_str());
        auto r = apply_action(ws, run, a);
        if (!r.ok()) return input_error(r.error());
        std::printf("# parity, prepared vs ep.module() (folding changes the arithmetic; observers "
                    "pass values through):\n%s",
                    r.value().run->parity.str().c_str());
        for (const auto& [name, obs] : ws.state().observers) {
            auto q = obs->calculate_qparams();
            if (q.ok())
                std::printf("  %%%s: min %.6g max %.6g -> scale %.6g zero_point %lld\n",
                            name.c_str(), obs->min_val(), obs->max_val(), q.value().scale,
                            static_cast<long long>(q.value().zero_point));
        }
        return 0;
    }
    if (ws.state().observers.empty()) {
        Error e = make_error("",
                             "nothing was quantized: prepare_pt2e found no conv or linear "
                             "pattern to annotate, so there are no observers to convert",
                             "quantize a program that has a conv2d or linear");
        e.file = a.file;
        return input_error(e);
    }
    if (Status c = calibrate_observers(ws, a, inputs.value(), source); !c.ok())
        return input_error(c.error());
    Action conv = Action::of(Action::Kind::Convert);
    conv.fold_quantize = a.fold;
    auto converted = apply_action(ws, conv, a);
    if (!converted.ok()) return input_error(converted.error());
    std::printf("# convert_pt2e(fold_quantize=%s)\n%s", a.fold ? "True" : "False",
                converted.value().summary.c_str());
    std::printf("%s\n", ws.module().code().c_str());
    auto r = apply_action(ws, run, a);
    if (!r.ok()) return input_error(r.error());
    std::printf("# quantization error, converted vs float ep.module() on %s:\n", source.c_str());
    print_quant_error(r.value().run->parity);
    if (const auto& layers = r.value().run->layers) {
        std::printf("# per layer, converted vs float on the same inputs (graph order):\n");
        for (const LayerParity& l : layers->rows) {
            std::string vs = l.layer.reference == l.layer.node
                                 ? ""
                                 : "  (vs %" + l.layer.reference + ", the batch norm folded in)";
            std::printf("  %-24s %-28s SQNR %7.2f dB  max rel %.4g%s\n", l.layer.node.c_str(),
                        l.layer.op.c_str(), l.parity.sqnr_db, l.parity.max_rel, vs.c_str());
        }
        std::printf("%s", layers->summary().c_str());
    }
    return 0;
}

} // namespace pt2lab
