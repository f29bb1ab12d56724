// pt2lab save: apply the actions given (decompose, then prepare or convert),
// then write the current program as a .pt2 (Workspace::save_pt2).
#include <cstdio>

#include "cli.h"
#include "io/pt2_writer.h"

namespace pt2lab {

namespace {

Status write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    Error e = make_error("", "cannot write the file", "check the folder exists and is writable");
    e.file = path;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return e;
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok &= std::fclose(f) == 0;
    if (!ok) return e;
    return {};
}

// An action's summary, on lines of its own.
void print_summary(const std::string& head, const std::string& summary) {
    std::printf("# %s\n%s%s", head.c_str(), summary.c_str(),
                summary.empty() || summary.back() == '\n' ? "" : "\n");
}

} // namespace

int cmd_save(const CliArgs& a) {
    const std::string& out = a.save_to;
    if (out.size() < 5 || out.compare(out.size() - 4, 4, ".pt2") != 0)
        return usage_error("save writes a .pt2 file (torch.export.load expects the name to end "
                           "in .pt2), got '" +
                           out + "'");
    if (a.save_prepare && a.save_convert)
        return usage_error("give --prepare or --convert, not both");
    if (!a.keep.empty() && a.save_level.empty()) return usage_error("--keep needs --decompose");
    if ((!a.inputs.empty() || a.calibrate != 8 || !a.fold) && !a.save_convert)
        return usage_error("--input, --calibrate and --no-fold go with --convert");
    IrLevel level = IrLevel::Training;
    if (a.save_level == "inference")
        level = IrLevel::Inference;
    else if (a.save_level == "core")
        level = IrLevel::CoreAten;
    else if (!a.save_level.empty())
        return usage_error("--decompose needs inference or core");

    auto opened = open_workspace(a, /*programs_only=*/true);
    if (!opened.ok()) return input_error(opened.error());
    Workspace& ws = *opened.value();
    std::string what = "the exported program";
    if (!a.save_level.empty()) {
        Action dec = Action::of(Action::Kind::Decompose);
        dec.level = level;
        dec.keep = a.keep;
        auto r = apply_action(ws, dec, a);
        if (!r.ok()) return input_error(r.error());
        print_summary(level == IrLevel::Inference ? "run_decompositions({})"
                                                  : "run_decompositions()",
                      r.value().summary);
        what = std::string("the ") + ir_level_name(level) + " program";
    }
    if (a.save_prepare || a.save_convert) {
        auto prep = apply_action(ws, Action::of(Action::Kind::Prepare), a);
        if (!prep.ok()) return input_error(prep.error());
        print_summary("prepare_pt2e on ep.module()", prep.value().summary);
        what = "the prepared module";
    }
    if (a.save_convert) {
        std::string source;
        auto inputs = calibration_inputs(a, ws.original(), &source);
        if (!inputs.ok()) return input_error(inputs.error());
        if (Status cal = calibrate_observers(ws, a, inputs.value(), source); !cal.ok())
            return input_error(cal.error());
        Action conv = Action::of(Action::Kind::Convert);
        conv.fold_quantize = a.fold;
        auto c = apply_action(ws, conv, a);
        if (!c.ok()) return input_error(c.error());
        print_summary(std::string("convert_pt2e(fold_quantize=") + (a.fold ? "True" : "False") +
                          ")",
                      c.value().summary);
        what = "the converted module, lifted as torch.export.export records it";
    }
    auto program = ws.program_to_save();
    if (!program.ok()) return input_error(program.error());
    auto bytes = ws.save_pt2(archive_root_for(out));
    if (!bytes.ok()) return input_error(bytes.error());
    if (Status s = write_file(out, bytes.value()); !s.ok()) return input_error(s.error());
    const ExportedProgram& ep = program.value();
    int params = 0, buffers = 0, consts = 0;
    for (const InputSpec& is : ep.signature.inputs) {
        params += is.kind == InputKind::Parameter;
        buffers += is.kind == InputKind::Buffer;
        consts += is.kind == InputKind::ConstantTensor;
    }
    std::string verifiers;
    for (const std::string& v : ep.verifiers) verifiers += (verifiers.empty() ? "" : ", ") + v;
    std::printf("# wrote %s (%zu bytes): %s, %zu nodes, %d parameters, %d buffers, %d "
                "constants, %zu sample inputs; dialect %s\n",
                out.c_str(), bytes.value().size(), what.c_str(), ep.graph->size(), params, buffers,
                consts, ep.example_inputs.size(),
                verifiers.empty() ? "(none recorded)" : verifiers.c_str());
    return 0;
}

} // namespace pt2lab
