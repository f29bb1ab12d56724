// pt2lab run: execute a program on the CPU executor, summarise the outputs and
// compare them with PyTorch's eager reference stored in the asset.
#include <cmath>
#include <cstdio>

#include "cli.h"
#include "exec/parity.h"
#include "io/npy.h"
#include "io/program_loader.h"
#include "util/pyrepr.h"
#include "workspace/workspace.h"

namespace pt2lab {

namespace {

std::string summary(const Tensor& t) {
    if (t.numel() == 0) return "(empty)";
    double lo = t.get(0), hi = t.get(0), sum = 0.0;
    for (int64_t k = 0; k < t.numel(); ++k) {
        double v = t.get(k);
        lo = std::fmin(lo, v);
        hi = std::fmax(hi, v);
        sum += v;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "min %.6g  max %.6g  mean %.6g  first [", lo, hi,
                  sum / double(t.numel()));
    std::string s = buf;
    for (int64_t k = 0; k < std::min<int64_t>(4, t.numel()); ++k) {
        std::snprintf(buf, sizeof buf, "%s%.6g", k ? ", " : "", t.get(k));
        s += buf;
    }
    return s + (t.numel() > 4 ? ", ...]" : "]");
}

std::string json_number(double v, ScalarType dt) {
    if (dt == ScalarType::Float || dt == ScalarType::Double) {
        if (std::isnan(v) || std::isinf(v)) return "null";
        return py_float_repr(v);
    }
    return std::to_string(static_cast<long long>(v));
}

Status write_outputs(const std::string& path, const RunResult& r) {
    auto write = [&](const std::string& p, const std::vector<uint8_t>& bytes) -> Status {
        FILE* f = std::fopen(p.c_str(), "wb");
        if (!f) return make_error(p, "cannot write the file");
        bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
        ok &= std::fclose(f) == 0;
        if (!ok) return make_error(p, "write error");
        return {};
    };
    bool json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
    if (json) {
        std::string s = "{\"outputs\": [";
        for (size_t k = 0; k < r.outputs.size(); ++k) {
            if (!r.outputs[k].is_tensor()) continue;
            const Tensor& t = *r.outputs[k].tensor;
            s += std::string(k ? ", " : "") + "{\"name\": \"" + r.output_names[k] +
                 "\", \"dtype\": \"" + std::string(scalar_type_name(t.dtype)) + "\", \"shape\": [";
            for (size_t d = 0; d < t.sizes.size(); ++d)
                s += (d ? ", " : "") + std::to_string(t.sizes[d]);
            s += "], \"data\": [";
            for (int64_t i = 0; i < t.numel(); ++i)
                s += (i ? ", " : "") + json_number(t.get(i), t.dtype);
            s += "]}";
        }
        s += "]}\n";
        return write(path, std::vector<uint8_t>(s.begin(), s.end()));
    }
    for (size_t k = 0; k < r.outputs.size(); ++k) {
        if (!r.outputs[k].is_tensor()) continue;
        std::string p = path;
        if (r.outputs.size() > 1) { // out.npy -> out_0.npy, out_1.npy ...
            size_t dot = p.rfind(".npy");
            p = p.substr(0, dot) + "_" + std::to_string(k) + ".npy";
        }
        if (Status s = write(p, write_npy(r.outputs[k].tensor->to_data())); !s.ok()) return s;
    }
    return {};
}

} // namespace

Result<std::vector<Tensor>> read_input_files(const std::vector<std::string>& paths) {
    std::vector<Tensor> out;
    for (const auto& path : paths) {
        auto bytes = read_file_bytes(path);
        if (!bytes.ok()) return bytes.error();
        auto t = read_npy(bytes.value(), path);
        if (!t.ok()) return t.error();
        out.push_back(Tensor::from_data(t.value()));
    }
    return out;
}

int cmd_run(const CliArgs& a) {
    if (!a.inputs.empty() && a.has_seed)
        return usage_error("give --input files or --seed, not both");
    if (!a.out.empty() && a.out.size() < 5)
        return usage_error("--out needs a .npy or .json file name");
    if (!a.out.empty() && a.out.compare(a.out.size() - 4, 4, ".npy") != 0 &&
        a.out.compare(a.out.size() - 5, 5, ".json") != 0)
        return usage_error("--out needs a .npy or .json file name");
    if (a.repeat < 1) return usage_error("--repeat needs a positive count");
    auto opened = open_workspace(a, /*programs_only=*/true);
    if (!opened.ok()) return input_error(opened.error());
    Workspace& ws = *opened.value();
    const ExportedProgram& ep = ws.original();

    Action run = Action::of(Action::Kind::Run);
    std::string source;
    if (!a.inputs.empty()) {
        auto read = read_input_files(a.inputs);
        if (!read.ok()) return input_error(read.error());
        run.inputs.kind = InputSource::Kind::Given;
        run.inputs.tensors = read.take();
        run.inputs.label = source = "from --input";
    } else if (a.has_seed) {
        run.inputs.kind = InputSource::Kind::Seeded;
        run.inputs.seed = a.seed;
        source = "pt2lab's SeededRng(" + std::to_string(a.seed) + ").normal()";
    } else {
        if (ep.example_inputs.empty()) {
            Error e = make_error("data/sample_inputs/model.pt",
                                 "the file carries no sample inputs pt2lab can read",
                                 "give --input x.npy (one per forward() input) or --seed N");
            e.file = a.file;
            return input_error(e);
        }
        run.inputs.kind = InputSource::Kind::Sample;
        source = "the file's sample input (data/sample_inputs/model.pt)";
    }
    run.view = a.module ? GraphView::Module : GraphView::Program;
    run.repeat = a.repeat;
    run.fast_kernels = a.fast;
    run.check_guards = a.guards;
    std::printf("program:  %s, %s, %s kernels\n", ep.source_file.c_str(),
                a.module ? "ep.module()" : "ep.graph", a.fast ? "fast" : "reference");
    auto done = apply_action(ws, run, a);
    if (!done.ok()) return input_error(done.error());
    const RunReport& rep = *done.value().run;
    auto specs = user_input_specs(*ep.graph, &ep.signature);
    for (size_t k = 0; k < rep.inputs.size(); ++k)
        std::printf("input:    %s %s (%s)\n", k < specs.size() ? specs[k].first.c_str() : "?",
                    rep.inputs[k].type_str().c_str(), source.c_str());
    const RunResult& r = rep.result;
    for (size_t k = 0; k < r.outputs.size(); ++k) {
        const Value& v = r.outputs[k];
        std::printf("output:   %s %s  %s\n", r.output_names[k].c_str(), v.describe().c_str(),
                    v.is_tensor() ? summary(*v.tensor).c_str() : "");
    }
    std::printf("time:     %.2f ms (last of %d run%s)\n", rep.ms, rep.repeat,
                rep.repeat > 1 ? "s" : "");
    if (a.profile && rep.profile) std::printf("%s", rep.profile->str().c_str());
    const ModuleState& state = ws.state();
    auto nbt = state.tensors.end();
    for (auto it = state.tensors.begin(); it != state.tensors.end(); ++it)
        if (it->first.size() >= 19 &&
            it->first.compare(it->first.size() - 19, 19, "num_batches_tracked") == 0)
            nbt = it;
    if (nbt != state.tensors.end() && ep.find_tensor(nbt->first)) {
        int64_t before = Tensor::from_data(*ep.find_tensor(nbt->first)).data<int64_t>()[0];
        int64_t after = nbt->second->data<int64_t>()[0];
        if (before != after)
            std::printf("buffers:  %s %lld -> %lld (train mode updates the running statistics)\n",
                        nbt->first.c_str(), static_cast<long long>(before),
                        static_cast<long long>(after));
    }
    if (rep.reference) {
        std::printf(
            "parity vs PyTorch eager (extra/pt2lab; allclose: rtol 1.3e-06, atol 1e-05):\n%s",
            rep.reference->str().c_str());
    } else if (!rep.reference_skipped.empty()) {
        std::printf("parity:   skipped (%s; --repeat %d)\n", rep.reference_skipped.c_str(),
                    a.repeat);
    }
    if (!a.out.empty()) {
        if (Status s = write_outputs(a.out, r); !s.ok()) return input_error(s.error());
        std::printf("wrote:    %s\n", a.out.c_str());
    }
    return 0;
}

} // namespace pt2lab
