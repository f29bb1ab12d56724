// pt2lab run: execute a program on the CPU executor, summarise the outputs and
// compare them with PyTorch's eager reference stored in the asset.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "cli.h"
#include "exec/parity.h"
#include "io/npy.h"
#include "io/program_loader.h"
#include "passes/unlift.h"
#include "util/pyrepr.h"

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
    auto loaded = load_program_file(a.file, a.limits);
    if (!loaded.ok()) return input_error(loaded.error());
    const ExportedProgram& ep = loaded.value();
    auto specs = user_input_specs(*ep.graph, &ep.signature);

    std::vector<Tensor> inputs;
    std::string source;
    if (!a.inputs.empty()) {
        auto read = read_input_files(a.inputs);
        if (!read.ok()) return input_error(read.error());
        inputs = read.take();
        source = "from --input";
    } else if (a.has_seed) {
        auto seeded = seeded_inputs(ep, a.seed, a.limits);
        if (!seeded.ok()) {
            Error e = seeded.error();
            e.file = a.file;
            return input_error(e);
        }
        inputs = seeded.take();
        source = "pt2lab's SeededRng(" + std::to_string(a.seed) + ").normal()";
    } else {
        if (ep.example_inputs.empty()) {
            Error e = make_error("data/sample_inputs/model.pt",
                                 "the file carries no sample inputs pt2lab can read",
                                 "give --input x.npy (one per forward() input) or --seed N");
            e.file = a.file;
            return input_error(e);
        }
        inputs = example_inputs(ep);
        source = "the file's sample input (data/sample_inputs/model.pt)";
    }

    RunOptions opt;
    opt.limits = a.limits;
    opt.kernels.fast_conv = a.fast;
    opt.check_guards = a.guards;
    ModuleState state = ModuleState::from_program(ep);
    GraphModule gm;
    if (a.module) {
        UnliftOptions uo;
        uo.guards_fn = a.guards;
        auto m = unlift(ep, uo);
        if (!m.ok()) return input_error(m.error());
        gm = m.take();
    }
    std::printf("program:  %s, %s, %s kernels\n", ep.source_file.c_str(),
                a.module ? "ep.module()" : "ep.graph", a.fast ? "fast" : "reference");
    for (size_t k = 0; k < inputs.size(); ++k)
        std::printf("input:    %s %s (%s)\n", k < specs.size() ? specs[k].first.c_str() : "?",
                    inputs[k].type_str().c_str(), source.c_str());
    Result<RunResult> r = RunResult{};
    double ms = 0.0;
    for (int rep = 0; rep < a.repeat; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        r = a.module ? run_module(gm, state, inputs, opt) : run_program(ep, state, inputs, opt);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                 .count();
        if (!r.ok()) {
            Error e = r.error();
            e.file = a.file;
            return input_error(e);
        }
    }
    for (size_t k = 0; k < r.value().outputs.size(); ++k) {
        const Value& v = r.value().outputs[k];
        std::printf("output:   %s %s  %s\n", r.value().output_names[k].c_str(),
                    v.describe().c_str(), v.is_tensor() ? summary(*v.tensor).c_str() : "");
    }
    std::printf("time:     %.2f ms (last of %d run%s)\n", ms, a.repeat, a.repeat > 1 ? "s" : "");
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
    if (a.inputs.empty() && !a.has_seed && !ep.reference_outputs.empty()) {
        if (a.repeat > 1 && !ep.buffers_after.empty()) {
            std::printf("parity:   skipped (the reference is for one forward from the saved state; "
                        "--repeat %d)\n",
                        a.repeat);
        } else {
            ParityReport p = compare_with_reference(r.value(), ep.reference_outputs);
            std::printf(
                "parity vs PyTorch eager (extra/pt2lab; allclose: rtol 1.3e-06, atol 1e-05):\n%s",
                p.str().c_str());
        }
    }
    if (!a.out.empty()) {
        if (Status s = write_outputs(a.out, r.value()); !s.ok()) return input_error(s.error());
        std::printf("wrote:    %s\n", a.out.c_str());
    }
    return 0;
}

} // namespace pt2lab
