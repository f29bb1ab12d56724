// The pt2lab command-line tool: outputs, exit codes (0 ok, 1 bad input,
// 2 bad usage) and messages. Runs the native binary (PT2LAB_CLI), so it is
// registered only in native builds.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>

#include "cli_options.h"
#include "io/fx_json.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {
struct Run {
    int status;
    std::string out, err;
};

Run run_cli(const std::string& args) {
    const char* cli = std::getenv("PT2LAB_CLI");
    if (!cli) cli = PT2LAB_CLI_PATH;
    std::string err_file = "pt2lab_cli_stderr.txt";
    std::string cmd = std::string(cli) + " " + args + " 2>" + err_file;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    Run r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = read_text(err_file);
    std::remove(err_file.c_str());
    return r;
}

// A float32 .npy of zeros (format 1.0) with the given Python shape tuple.
void write_zeros_npy(const std::string& path, const std::string& shape, size_t numel) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    bytes += std::string(numel * 4, '\0');
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
}

std::string asset(const std::string& name) {
    return source_path("assets/graphs/" + name + ".pt2");
}
} // namespace

TEST_CASE("pt2lab code --module prints ep.module().code", "[cli]") {
    Run r = run_cli("code " + asset("conv_bn_relu_eval") + " --module");
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    // [I] fact sheet 1.4: the first and last lines of the predicted code
    CHECK(r.out.find("def forward(self, x):\n    x, = fx_pytree.tree_flatten_spec(([x], {}), "
                     "self._in_spec)\n") != std::string::npos);
    CHECK(r.out.find("    return pytree.tree_unflatten((relu,), self._out_spec)\n") !=
          std::string::npos);
}

TEST_CASE("every command works on every lesson asset", "[cli]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        for (const char* cmd : {"info", "graph", "code", "tabular", "signature", "readable"}) {
            Run r = run_cli(std::string(cmd) + " " + source_path(rel));
            INFO(rel << " " << cmd << ": " << r.err);
            CHECK(r.status == 0);
            CHECK_FALSE(r.out.empty());
        }
        for (const char* cmd : {"graph", "code", "tabular", "readable"}) {
            Run r = run_cli(std::string(cmd) + " " + source_path(rel) + " --module");
            INFO(rel << " " << cmd << " --module: " << r.err);
            CHECK(r.status == 0);
        }
    }
}

TEST_CASE("info says how the asset was made", "[cli]") {
    Run r = run_cli("info " + asset("conv_relu"));
    CHECK(r.status == 0);
    CHECK(r.out.find("made by:     torch.export of torch 2.14.1+debian (tools/make_assets.py)") !=
          std::string::npos);
    CHECK(r.out.find("input:       x f32[2, 3, 16, 16]") != std::string::npos);
    CHECK(r.out.find("weights:     2 tensors") != std::string::npos);
}

TEST_CASE("info on every asset: made by torch 2.14.1's torch.export, nothing unrunnable", "[cli]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        Run r = run_cli("info " + source_path(rel));
        INFO(rel << "\n" << r.out << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find("made by:     torch.export of torch 2.14.1+debian") != std::string::npos);
        CHECK(r.out.find("torch_version (in the file): 2.14.1+debian") != std::string::npos);
        CHECK(r.out.find("not runnable") == std::string::npos);
    }
}

TEST_CASE("info lists each op it cannot run once, with a count", "[cli]") {
    Run r = run_cli("info " + source_path("tests/corpus/good/unknown_op.pt2"));
    CHECK(r.status == 0);
    CHECK(r.out.find("not runnable: torch.ops.mylib.fancy_relu.default x1 (not in pt2lab's op "
                     "schema table") != std::string::npos);
}

TEST_CASE("run uses the file's own sample inputs; convert needs calibration data", "[cli]") {
    Run r = run_cli("run " + asset("conv_relu"));
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("the file's sample input (data/sample_inputs/model.pt)") != std::string::npos);
    std::string hostile = source_path("tests/corpus/good/hostile_sample_inputs.pt2");
    Run no_inputs = run_cli("run " + hostile);
    CHECK(no_inputs.status == 1);
    CHECK(no_inputs.err.find("give --input x.npy") != std::string::npos);
    Run convert = run_cli("convert " + hostile);
    CHECK(convert.status == 1);
    CHECK(convert.err.find("no calibration data") != std::string::npos);
    CHECK(convert.err.find("--input x.npy") != std::string::npos);
    CHECK(convert.out.find("convert_pt2e") == std::string::npos);
    // the same program calibrated on an input given with --input
    Run with_input = run_cli("convert " + hostile + " --input " +
                             source_path("tests/golden/exec/conv2d_lesson_3to8_pad1_bias/x.npy"));
    INFO(with_input.err);
    CHECK(with_input.status == 0);
    CHECK(with_input.out.find("# calibrated on 9 batches (--input + 8") != std::string::npos);
    CHECK(with_input.out.find("quantize_per_tensor") != std::string::npos);
    CHECK(run_cli("graph " + asset("conv_relu") + " --input x.npy").status == 2);
}

TEST_CASE("symbolic_trace graph JSON prints as torch printed it", "[cli]") {
    for (const char* name : {"style_functional", "style_modules", "style_sequential"}) {
        std::string path = source_path(std::string("assets/fx/") + name + ".json");
        auto fx = pt2lab::read_fx_graph_json(read_text(path), path);
        REQUIRE(fx.ok());
        Run g = run_cli("graph " + path);
        CHECK(g.status == 0);
        CHECK(g.out == fx.value().expected_graph + "\n");
        Run t = run_cli("tabular " + path);
        CHECK(mask_addresses(t.out) == mask_addresses(fx.value().expected_tabular));
        Run s = run_cli("signature " + path);
        CHECK(s.status == 1);
        CHECK(s.err.find("has no graph signature") != std::string::npos);
    }
}

TEST_CASE("bad usage exits 2 with the usage text", "[cli]") {
    for (const char* args : {"", "info", "frobnicate x.pt2", "info a.pt2 b.pt2",
                             "code x.pt2 --bogus", "code x.pt2 --no-guards"}) {
        Run r = run_cli(args);
        INFO(args);
        CHECK(r.status == 2);
        CHECK(r.err.find("usage: pt2lab") != std::string::npos);
        CHECK(r.out.empty());
    }
    Run r = run_cli("signature " + asset("conv_relu") + " --module");
    CHECK(r.status == 2);
    CHECK(run_cli("--help").status == 0);
}

TEST_CASE("bad input exits 1 with a message naming the file", "[cli]") {
    auto expect = nlohmann::json::parse(read_text(source_path("tests/corpus/expected.json")));
    for (const auto& rel : list_dir("tests/corpus/bad", "")) {
        std::string name = rel.substr(rel.find_last_of('/') + 1);
        // Files refused by the loader fail `info`; the others load and fail `run`.
        bool at_load = expect["bad"][name]["stage"] == "load";
        Run r = run_cli((at_load ? "info " : "run --seed 0 ") + source_path(rel));
        INFO(rel << ": " << r.err);
        CHECK(r.status == 1);
        CHECK(r.err.rfind("pt2lab: error: ", 0) == 0);
        CHECK(r.err.find(name) != std::string::npos);
        for (const auto& phrase : expect["bad"][name]["message"])
            CHECK(r.err.find(phrase.get<std::string>()) != std::string::npos);
        if (at_load) CHECK(r.out.empty());
    }
    Run missing = run_cli("graph /nonexistent/model.pt2");
    CHECK(missing.status == 1);
    CHECK(missing.err.find("cannot open the file") != std::string::npos);
}

TEST_CASE("pt2lab run: outputs, parity verdict, files", "[cli]") {
    Run r = run_cli("run " + asset("conv_bn_relu_eval"));
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("output:   relu f32[2, 8, 16, 16]") != std::string::npos);
    CHECK(r.out.find("parity vs PyTorch eager") != std::string::npos);
    CHECK(r.out.find("verdict: allclose") != std::string::npos);
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        for (const char* extra : {"", " --module", " --fast"}) {
            Run a = run_cli("run " + source_path(rel) + extra);
            INFO(rel << extra << ": " << a.err << a.out);
            CHECK(a.status == 0);
            CHECK((a.out.find("verdict: allclose") != std::string::npos ||
                   a.out.find("verdict: bit-identical") != std::string::npos));
        }
    }
    // train mode, repeated: the counter moves and parity is not claimed
    Run t = run_cli("run " + asset("conv_bn_relu_train") + " --repeat 3");
    CHECK(t.status == 0);
    CHECK(t.out.find("buffers:  bn.num_batches_tracked 3 -> 6") != std::string::npos);
    CHECK(t.out.find("parity:   skipped") != std::string::npos);
    // --profile: the Run tab's "Where the time went", from the same run
    CHECK(r.out.find("profile:") == std::string::npos);
    Run p = run_cli("run " + asset("conv_bn_relu_eval") + " --module --profile");
    INFO(p.err);
    CHECK(p.status == 0);
    CHECK(p.out.find("profile:  ") != std::string::npos);
    CHECK(p.out.find(" nodes (0 fused into the conv before them) of a ") != std::string::npos);
    CHECK(p.out.find("  aten.conv2d.default\n") != std::string::npos);
    CHECK(p.out.find("slowest nodes:") != std::string::npos);
    CHECK(p.out.find(" conv2d (aten.conv2d.default)") != std::string::npos);
}

TEST_CASE("pt2lab run --seed / --input / --out round trip", "[cli]") {
    Run s = run_cli("run " + asset("style_modules") + " --seed 3 --out pt2lab_cli_out.npy");
    CHECK(s.status == 0);
    CHECK(s.out.find("SeededRng(3)") != std::string::npos);
    CHECK(s.out.find("parity vs") == std::string::npos); // no reference for other inputs
    // the asset's own input through --input gives the stored reference again
    Run j = run_cli("run " + asset("style_modules") + " --out pt2lab_cli_out.json");
    CHECK(j.status == 0);
    std::string json = read_text("pt2lab_cli_out.json");
    CHECK(json.rfind("{\"outputs\": [{\"name\": \"linear\", \"dtype\": \"float32\", \"shape\": [2, "
                     "4], \"data\": [",
                     0) == 0);
    Run again = run_cli("run " + asset("style_modules") + " --input pt2lab_cli_out.npy");
    CHECK(again.status == 1); // a [2, 4] output is not a valid [2, 3, 16, 16] input
    CHECK(again.err.find("Expected input at *args[0].shape[0]") == std::string::npos);
    CHECK(again.err.find("Unexpected number of dimensions") != std::string::npos);
    std::remove("pt2lab_cli_out.npy");
    std::remove("pt2lab_cli_out.json");
}

TEST_CASE("every option is taken by exactly the commands its table row names", "[cli]") {
    const char* commands[] = {"info", "graph",     "code",    "tabular", "signature", "readable",
                              "run",  "decompose", "prepare", "convert", "save"};
    // A value each option accepts, so only the command decides.
    auto value = [](const CliOption& o) -> std::string {
        std::string n = o.name;
        if (!o.value) return "";
        if (n == "--input") return " pt2lab_cli_option_in.npy";
        if (n == "--out") return " pt2lab_cli_option.json";
        if (n == "--level") return " core";
        if (n == "--keep") return " aten.conv2d.default";
        if (n == "--limit") return " tensor-mb=512";
        if (n == "--decompose") return " inference";
        return " 1";
    };
    write_zeros_npy("pt2lab_cli_option_in.npy", "(2, 3, 16, 16)", 2 * 3 * 16 * 16);
    int accepted = 0, refused = 0;
    for (const CliOption& o : kCliOptions) {
        for (const char* cmd : commands) {
            std::string extra = std::string(" ") + o.name + value(o);
            if (std::string(o.name) == "--no-guards") extra += " --module";
            const std::string name = o.name;
            // Options that need another to be valid on their own command.
            if (std::string(cmd) == "decompose" && name != "--level") extra += " --level core";
            const bool save = std::string(cmd) == "save";
            if (save && name == "--keep") extra += " --decompose core";
            if (save && (name == "--input" || name == "--calibrate" || name == "--no-fold"))
                extra += " --convert";
            Run r = run_cli(std::string(cmd) + " " + asset("conv_relu") +
                            (save ? " pt2lab_cli_option.pt2" : "") + extra);
            INFO(cmd << extra << ": " << r.err);
            if (cli_option_applies(o, cmd) && save && name == "--prepare") {
                CHECK(r.status == 1); // saving a prepared model is refused, as torch refuses
                CHECK(r.err.find("a prepared model has no ExportedProgram") != std::string::npos);
                ++accepted;
            } else if (cli_option_applies(o, cmd)) {
                CHECK(r.status == 0);
                CHECK(r.err.find("is not an option of") == std::string::npos);
                ++accepted;
            } else {
                CHECK(r.status == 2);
                CHECK(r.err.find(std::string(o.name) + " is not an option of " + cmd) !=
                      std::string::npos);
                ++refused;
            }
        }
    }
    std::remove("pt2lab_cli_option.json");
    std::remove("pt2lab_cli_option_in.npy");
    std::remove("pt2lab_cli_option.pt2");
    CHECK(accepted >= 16);
    CHECK(refused >= 60);
    // --limit raises a budget: the 80 MiB of stand-ins this bare JSON asks for load with more
    const std::string many = source_path("tests/corpus/bad/stand_ins_past_file_budget.json");
    Run refused_load = run_cli("info " + many);
    CHECK(refused_load.status == 1);
    CHECK(refused_load.err.find("--limit file-mb=N") != std::string::npos);
    Run raised = run_cli("run " + many + " --seed 0 --limit file-mb=200");
    INFO(raised.err);
    CHECK(raised.status == 0);
    CHECK(raised.out.find("output:   x f32[4]") != std::string::npos);
    Run bad_limit = run_cli("info " + many + " --limit file-mb=lots");
    CHECK(bad_limit.status == 2);
    CHECK(bad_limit.err.find("file-mb needs a whole number") != std::string::npos);
    // run / decompose / prepare / convert on a symbolic_trace graph say what it is
    for (const char* cmd : {"run", "decompose --level core", "prepare", "convert"}) {
        Run fx = run_cli(std::string(cmd) + " " + source_path("assets/fx/conv_relu.json"));
        INFO(cmd << ": " << fx.err);
        CHECK(fx.status == 1);
        CHECK(fx.err.find("this is pt2lab's symbolic_trace graph JSON (torch.fx), not a serialized "
                          "ExportedProgram: it can be shown (info, graph, code, tabular, "
                          "readable) but not run, decomposed, prepared or converted") !=
              std::string::npos);
        CHECK(fx.err.find("assets/graphs/conv_relu.pt2") != std::string::npos);
    }
    // run --calibrate was once taken and ignored
    Run rc = run_cli("run " + asset("conv_relu") + " --calibrate 3");
    CHECK(rc.status == 2);
    CHECK(rc.err.find("--calibrate is not an option of run (it is for: convert save)") !=
          std::string::npos);
}

TEST_CASE("pt2lab run: usage and input errors", "[cli]") {
    CHECK(run_cli("run " + asset("conv_relu") + " --seed 1 --input x.npy").status == 2);
    CHECK(run_cli("run " + asset("conv_relu") + " --seed abc").status == 2);
    CHECK(run_cli("run " + asset("conv_relu") + " --out result.txt").status == 2);
    CHECK(run_cli("graph " + asset("conv_relu") + " --seed 1").status == 2);
    Run missing = run_cli("run " + asset("conv_relu") + " --input /nonexistent.npy");
    CHECK(missing.status == 1);
    Run unknown = run_cli("run " + source_path("tests/corpus/good/unknown_op.pt2"));
    CHECK(unknown.status == 1);
    CHECK(unknown.err.find("while executing %relu: op torch.ops.mylib.fancy_relu.default is not in "
                           "pt2lab's op schema "
                           "table") != std::string::npos);
}

TEST_CASE("pt2lab decompose / prepare / convert", "[cli]") {
    Run d = run_cli("decompose " + asset("conv_bn_relu_train") + " --level inference");
    INFO(d.err);
    CHECK(d.status == 0);
    CHECK(d.out.find("return (getitem_3, getitem_4, add, relu)") != std::string::npos);
    CHECK(d.out.find("getitem_3: BUFFER_MUTATION target='bn.running_mean'") != std::string::npos);
    CHECK(d.out.find("verdict: bit-identical") != std::string::npos);
    Run c = run_cli("decompose " + asset("style_modules") + " --level core");
    CHECK(c.status == 0);
    CHECK(c.out.find("addmm = torch.ops.aten.addmm.default(p_fc_bias, mean, permute)") !=
          std::string::npos);
    Run k = run_cli("decompose " + asset("conv_bn_relu_eval") +
                    " --level core --keep aten.conv2d.default");
    CHECK(k.out.find("kept (no rule): %conv2d") != std::string::npos);
    Run m = run_cli("decompose " + asset("conv_bn_relu_train") + " --level inference --module");
    CHECK(m.out.find("copy__default = torch.ops.aten.copy_.default(bn_running_mean, getitem_3)") !=
          std::string::npos);
    CHECK(run_cli("decompose " + asset("conv_relu")).status == 2);
    CHECK(run_cli("decompose " + asset("conv_relu") + " --level medium").status == 2);
    CHECK(run_cli("run " + asset("conv_relu") + " --level core").status == 2);

    Run p = run_cli("prepare " + asset("conv_bn_relu_eval"));
    CHECK(p.status == 0);
    CHECK(p.out.find("new parameter conv.weight_bias") != std::string::npos);
    CHECK(p.out.find("%activation_post_process_1 observes %conv_weight") != std::string::npos);
    Run q = run_cli("convert " + asset("conv_bn_relu_eval") + " --calibrate 2");
    CHECK(q.status == 0);
    CHECK(q.out.find("_frozen_param0 = self._frozen_param0") != std::string::npos);
    CHECK(q.out.find("SQNR") != std::string::npos);
    CHECK(q.out.find("# calibrated on 3 batches") != std::string::npos);
    CHECK(q.out.find("# convert_pt2e(fold_quantize=True)") != std::string::npos);
    Run nf = run_cli("convert " + asset("conv_bn_relu_eval") + " --no-fold");
    INFO(nf.err);
    CHECK(nf.status == 0);
    CHECK(nf.out.find("# convert_pt2e(fold_quantize=False)") != std::string::npos);
    CHECK(nf.out.find("# calibrated on 9 batches") != std::string::npos); // the default 8 + 1
    // the weight's quantize stays in the graph instead of becoming an int8 constant
    CHECK(nf.out.find("quantize_per_tensor.default(conv_weight, ") != std::string::npos);
    CHECK(nf.out.find("_frozen_param0") == std::string::npos);
    CHECK(run_cli("prepare " + asset("conv_relu") + " --no-fold").status == 2);
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        INFO(rel);
        CHECK(run_cli("convert " + source_path(rel) + " --calibrate 1").status == 0);
        CHECK(run_cli("decompose " + source_path(rel) + " --level core").status == 0);
    }
}

TEST_CASE("pt2lab save: writes the program after its actions; usage rules", "[cli]") {
    const std::string out = "pt2lab_cli_saved.pt2";
    Run plain = run_cli("save " + asset("conv_bn_relu_eval") + " " + out);
    INFO(plain.err);
    REQUIRE(plain.status == 0);
    CHECK(plain.out.find("# wrote " + out) != std::string::npos);
    CHECK(plain.out.find("the exported program, 11 nodes, 3 parameters, 3 buffers") !=
          std::string::npos);
    // the saved file prints as the original does
    CHECK(run_cli("graph " + out).out == run_cli("graph " + asset("conv_bn_relu_eval")).out);
    CHECK(run_cli("code " + out + " --module").out ==
          run_cli("code " + asset("conv_bn_relu_eval") + " --module").out);
    Run core = run_cli("save " + asset("conv_bn_relu_eval") + " " + out + " --decompose core");
    CHECK(core.status == 0);
    CHECK(core.out.find("dialect ATEN") != std::string::npos);
    CHECK(run_cli("graph " + out).out.find("convolution.default") != std::string::npos);
    Run conv = run_cli("save " + asset("conv_bn_relu_eval") + " " + out + " --convert");
    CHECK(conv.status == 0);
    CHECK(conv.out.find("the converted module, lifted") != std::string::npos);
    Run sig = run_cli("signature " + out);
    CHECK(sig.out.find("b__frozen_param0: BUFFER target='_frozen_param0' persistent=True") !=
          std::string::npos);
    CHECK(sig.out.find("p_conv_weight_bias: PARAMETER target='conv.weight_bias'") !=
          std::string::npos);
    std::remove(out.c_str());
    // usage: two paths, a .pt2 name, options that need another
    for (const char* args :
         {"save x.pt2", "save x.pt2 out.npy", "save x.pt2 y.pt2 --keep aten.relu.default",
          "save x.pt2 y.pt2 --calibrate 2", "save x.pt2 y.pt2 --prepare --convert",
          "save x.pt2 y.pt2 --decompose medium"}) {
        Run r = run_cli(std::string(args).replace(5, 5, asset("conv_relu")));
        INFO(args << ": " << r.err);
        CHECK(r.status == 2);
    }
    Run fx = run_cli("save " + source_path("assets/fx/conv_relu.json") + " " + out);
    CHECK(fx.status == 1);
    CHECK(fx.err.find("symbolic_trace graph JSON") != std::string::npos);
}
