// pt2lab: command-line view of torch.export files (and pt2lab's symbolic_trace
// graph JSON), printed exactly the way PyTorch prints them.
// Exit status: 0 success, 1 bad input (message on stderr; for lesson check, a
// lesson that fails its check), 2 bad usage.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_options.h"
#include "exec/kernels.h"
#include "graph/op_schema.h"
#include "graph/printer.h"
#include "io/program_loader.h"

using namespace pt2lab;

namespace {

const char* kUsage =
    "usage: pt2lab <command> FILE [--module] [--no-guards]\n"
    "       pt2lab run FILE [--input x.npy ... | --seed N] [--module] [--out out.npy|out.json]\n"
    "                       [--fast] [--repeat N] [--profile]\n"
    "       pt2lab decompose FILE --level inference|core [--keep OP ...] [--module]\n"
    "       pt2lab prepare FILE | pt2lab convert FILE [--input x.npy ...] [--calibrate N] "
    "[--no-fold]\n"
    "       pt2lab save FILE OUT.pt2 [--decompose inference|core [--keep OP ...]]\n"
    "                               [--prepare | --convert [--input x.npy ...] [--calibrate N]]\n"
    "       pt2lab lesson check PATH [--no-index]\n"
    "       pt2lab lesson python FILE.md --out DIR\n"
    "\n"
    "FILE is a .pt2 archive (torch.export.save), an ExportedProgram .json, or a\n"
    "pt2lab symbolic_trace graph .json (assets/fx).\n"
    "\n"
    "commands:\n"
    "  info       how the file was made and what it holds\n"
    "  graph      the graph, as print(graph) shows it\n"
    "  code       the generated forward(), as gm.code shows it\n"
    "  tabular    the node table, as graph.print_tabular() shows it\n"
    "  signature  the graph signature and range constraints, as print(ep) ends\n"
    "  readable   gm.print_readable() (types annotated from node metadata)\n"
    "  run        run it on the CPU executor (on the file's own sample inputs unless --input or\n"
    "             --seed); compare with PyTorch's eager output when the asset carries one\n"
    "             (extra/pt2lab)\n"
    "  decompose  ep.run_decompositions({}) (inference) or ep.run_decompositions() (core):\n"
    "             the rules applied, op counts, the new code and signature, and the parity\n"
    "             against the exported program\n"
    "  prepare    prepare_pt2e on ep.module() as XNNPACKQuantizer with\n"
    "             get_symmetric_quantization_config() does it: fold BatchNorm into conv, place\n"
    "             observers (activations HistogramObserver int8 -128..127, weights\n"
    "             MinMaxObserver int8 -127..127)\n"
    "  convert    prepare, calibrate, convert_pt2e: observers become quantize/dequantize pairs;\n"
    "             prints the code and the quantization error (max |diff|, SQNR)\n"
    "  save       write the program, after the actions given (decompose, then prepare or\n"
    "             convert), as a .pt2 that torch.export.load reads (docs/FORMATS.md)\n"
    "  lesson check  PATH is a lesson file <id>.<lang>.md or a course folder of them: parse\n"
    "             each, compare the translations, open every graph, run every step and say per\n"
    "             step whether its expect claims hold; a folder that passes gets index.json\n"
    "             (--no-index: not written; docs/LESSONS.md \"Checking a course\")\n"
    "\n";

std::string shape_str(const TensorData& t) {
    std::string s = std::string(scalar_type_abbr(t.dtype)) + "[";
    for (size_t k = 0; k < t.sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(t.sizes[k]);
    return s + "]";
}

std::string node_kind_counts(const Graph& g) {
    std::map<std::string, int> by_op;
    std::vector<std::string> order;
    for (Node* n : g.nodes()) {
        std::string k(op_name(n->op()));
        if (!by_op.count(k)) order.push_back(k);
        ++by_op[k];
    }
    std::string s = std::to_string(g.size()) + " nodes:";
    for (size_t i = 0; i < order.size(); ++i)
        s += (i ? ", " : " ") + std::to_string(by_op[order[i]]) + " " + order[i];
    return s;
}

// Ops the executor cannot run, each once in graph order: "target xN (why)".
std::vector<std::string> not_runnable(const Graph& g) {
    std::map<std::string, int> count;
    std::map<std::string, std::string> why;
    std::vector<std::string> order;
    for (Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction && n->op() != Op::CallModule && n->op() != Op::CallMethod)
            continue;
        std::string reason;
        if (n->op() != Op::CallFunction)
            reason = "an ExportedProgram has no modules or methods to call";
        else if (!n->schema())
            reason = "not in pt2lab's op schema table: shown, but the executor refuses it";
        else if (!find_kernel(*n))
            reason = "no kernel in pt2lab's executor";
        else
            continue;
        std::string t = n->op() == Op::CallFunction
                            ? n->target()
                            : std::string(op_name(n->op())) + " " + n->target();
        if (!count.count(t)) order.push_back(t);
        ++count[t];
        why[t] = reason;
    }
    std::vector<std::string> out;
    for (const auto& t : order)
        out.push_back(t + " x" + std::to_string(count[t]) + " (" + why[t] + ")");
    return out;
}

std::string call_targets(const Graph& g) {
    std::map<std::string, int> count;
    std::vector<std::string> order;
    for (Node* n : g.nodes()) {
        if (n->op() != Op::CallFunction && n->op() != Op::CallModule && n->op() != Op::CallMethod)
            continue;
        std::string t = n->op() == Op::CallFunction
                            ? target_str(*n)
                            : std::string(op_name(n->op())) + " " + n->target();
        if (!count.count(t)) order.push_back(t);
        ++count[t];
    }
    std::string s;
    for (size_t i = 0; i < order.size(); ++i)
        s += (i ? "\n             " : "") + order[i] + " x" + std::to_string(count[order[i]]);
    return s;
}

void print_info(const ExportedProgram& ep) {
    std::printf("file:        %s\n", ep.source_file.c_str());
    std::printf("format:      %s\n", ep.format.c_str());
    if (ep.provenance.present) {
        const Provenance& p = ep.provenance;
        std::printf("made by:     %s of torch %s (%s)\n", p.made_by.c_str(),
                    p.torch_version.c_str(), p.script.c_str());
        if (!p.model_class.empty())
            std::printf("model:       %s%s (seed %lld)\n", p.model_class.c_str(),
                        p.mode.empty() ? "" : (", " + p.mode + " mode").c_str(),
                        static_cast<long long>(p.seed));
        if (!p.note.empty()) std::printf("note:        %s\n", p.note.c_str());
    } else {
        std::printf(
            "made by:     %s\n",
            ep.torch_version.empty()
                ? "not recorded (no extra/pt2lab/manifest.json, no torch_version)"
                : ("torch.export of torch " + ep.torch_version + " (the file's torch_version)")
                      .c_str());
    }
    std::printf("torch_version (in the file): %s\n",
                ep.torch_version.empty() ? "(none)" : ep.torch_version.c_str());
    std::printf("schema:      %d.%d\n", ep.schema_major, ep.schema_minor);
    std::printf("graph:       %s\n", node_kind_counts(*ep.graph).c_str());
    std::printf("calls:       %s\n", call_targets(*ep.graph).c_str());
    int params = 0, buffers = 0, users = 0, consts = 0;
    for (const auto& is : ep.signature.inputs) {
        params += is.kind == InputKind::Parameter;
        buffers += is.kind == InputKind::Buffer;
        users += is.kind == InputKind::UserInput;
        consts += is.kind == InputKind::ConstantTensor;
    }
    int user_out = 0, mutations = 0;
    for (const auto& os : ep.signature.outputs) {
        user_out += os.kind == OutputKind::UserOutput;
        mutations += os.kind == OutputKind::BufferMutation ||
                     os.kind == OutputKind::ParameterMutation ||
                     os.kind == OutputKind::UserInputMutation;
    }
    std::printf("signature:   %d parameters, %d buffers, %d constants, %d user inputs -> %d user "
                "outputs, %d mutations\n",
                params, buffers, consts, users, user_out, mutations);
    int64_t values = 0, bytes = 0;
    bool stand_in = false;
    for (const auto* m : {&ep.state_dict, &ep.constants})
        for (const auto& kv : *m) {
            values += kv.second->numel();
            bytes += static_cast<int64_t>(kv.second->bytes.size());
            stand_in |= kv.second->stand_in;
        }
    std::printf("weights:     %zu tensors, %lld values, %lld bytes%s\n",
                ep.state_dict.size() + ep.constants.size(), static_cast<long long>(values),
                static_cast<long long>(bytes),
                stand_in ? " (deterministic stand-ins, not the real values)" : "");
    for (const auto& t : ep.example_inputs)
        std::printf("input:       %s %s\n", t.name.c_str(), shape_str(t.tensor).c_str());
    for (const auto& t : ep.reference_outputs)
        std::printf("reference:   %s %s (PyTorch eager output)\n", t.name.c_str(),
                    shape_str(t.tensor).c_str());
    for (const auto& t : ep.buffers_after)
        std::printf("after run:   %s %s (buffer after one eager forward)\n", t.name.c_str(),
                    shape_str(t.tensor).c_str());
    std::vector<std::string> refused = not_runnable(*ep.graph);
    for (size_t i = 0; i < refused.size(); ++i)
        std::printf("%s%s\n", i ? "             " : "not runnable: ", refused[i].c_str());
    for (const auto& w : ep.warnings) std::printf("warning:     %s\n", w.c_str());
}

void print_fx_info(const GraphModule& gm, const std::string& file) {
    std::printf("file:        %s\n", file.c_str());
    std::printf("format:      pt2lab symbolic_trace graph JSON (traced by torch %s)\n",
                gm.traced_by.c_str());
    std::printf("model:       %s\n", gm.class_name.c_str());
    std::printf("graph:       %s\n", node_kind_counts(*gm.graph).c_str());
    std::printf("calls:       %s\n", call_targets(*gm.graph).c_str());
    std::printf("submodules:  %zu\n", gm.submodules.size());
}

// graph | code | tabular | readable of one graph with its codegen.
void print_view(const std::string& cmd, const Graph& g, const CodegenOptions& codegen) {
    if (cmd == "graph")
        std::printf("%s\n", graph_str(g).c_str());
    else if (cmd == "code")
        std::printf("%s\n", python_code(g, codegen).c_str());
    else if (cmd == "tabular")
        std::fputs(print_tabular(g).c_str(), stdout);
    else if (cmd == "readable")
        std::printf("%s\n", print_readable(g, codegen).c_str());
}

} // namespace

namespace pt2lab {
std::string usage_text() {
    std::string s = kUsage;
    s += "options (the commands that take each in parentheses):\n";
    for (const CliOption& o : kCliOptions) {
        std::string name = std::string(o.name) + (o.value ? std::string(" ") + o.value : "");
        char line[512];
        std::snprintf(line, sizeof line, "  %-14s %s\n  %-14s (%s)\n", name.c_str(), o.help, "",
                      o.commands);
        s += line;
    }
    return s +
           "\nexit status: 0 success, 1 bad input (lesson check: a lesson fails its check), 2 bad "
           "usage\n";
}

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "pt2lab: %s\n\n%s", msg.c_str(), usage_text().c_str());
    return 2;
}

int input_error(const Error& e) {
    std::fprintf(stderr, "pt2lab: error: %s\n", e.str().c_str());
    return 1;
}

Result<std::unique_ptr<Workspace>> open_workspace(const CliArgs& a, bool programs_only) {
    OpenOptions opt;
    opt.limits = a.limits;
    opt.guards_fn = a.guards;
    opt.programs_only = programs_only;
    return Workspace::open_file(a.file, opt);
}

Result<ActionOutcome> apply_action(Workspace& ws, const Action& action, const CliArgs& a) {
    auto out = ws.apply(action);
    if (!out.ok()) {
        Error e = out.error();
        e.file = a.file;
        return e;
    }
    return out;
}
} // namespace pt2lab

namespace {
// Parses a non-negative integer option value; false on junk.
bool parse_count(const char* s, uint64_t& out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (*end || s[0] == '-') return false;
    out = v;
    return true;
}
} // namespace

int main(int argc, char** argv) {
    // lesson check takes a lesson file or a course folder and options of its own.
    if (argc >= 2 && std::strcmp(argv[1], "lesson") == 0)
        return cmd_lesson(std::vector<std::string>(argv + 2, argv + argc));
    std::vector<std::string> positional;
    std::vector<std::pair<const CliOption*, std::string>> options; // in command-line order
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        }
        if (a.rfind("--", 0) != 0) {
            positional.push_back(a);
            continue;
        }
        const CliOption* o = find_cli_option(a.c_str());
        if (!o) return usage_error("unknown option " + a);
        if (o->value && i + 1 >= argc) return usage_error(a + " needs a value (" + o->value + ")");
        options.emplace_back(o, o->value ? argv[++i] : "");
    }
    const bool saving = !positional.empty() && positional[0] == "save";
    if (saving && positional.size() != 3)
        return usage_error("save needs a FILE and the OUT.pt2 to write");
    if (!saving && positional.size() != 2) return usage_error("expected a command and one FILE");
    const std::string& cmd = positional[0];
    const std::string& path = positional[1];
    // clang-format off
    static const char* kCommands[] = {
        "info", "graph", "code", "tabular", "signature", "readable",
        "run", "decompose", "prepare", "convert", "save",
    };
    // clang-format on
    bool known = false;
    for (const char* c : kCommands) known |= cmd == c;
    if (!known) return usage_error("unknown command '" + cmd + "'");

    CliArgs args;
    for (const auto& [o, v] : options) {
        const std::string name = o->name;
        if (!cli_option_applies(*o, cmd.c_str()))
            return usage_error(name + " is not an option of " + cmd +
                               " (it is for: " + o->commands + ")");
        uint64_t n = 0;
        const bool count = v.empty() ? false : parse_count(v.c_str(), n);
        if (name == "--module")
            args.module = true;
        else if (name == "--no-guards")
            args.guards = false;
        else if (name == "--fast")
            args.fast = true;
        else if (name == "--profile")
            args.profile = true;
        else if (name == "--no-fold")
            args.fold = false;
        else if (name == "--level")
            args.level = v;
        else if (name == "--keep")
            args.keep.push_back(v);
        else if (name == "--input")
            args.inputs.push_back(v);
        else if (name == "--out")
            args.out = v;
        else if (name == "--decompose")
            args.save_level = v;
        else if (name == "--prepare")
            args.save_prepare = true;
        else if (name == "--convert")
            args.save_convert = true;
        else if (name == "--limit") {
            if (Status s = args.limits.set(v); !s.ok()) return usage_error(s.error().message);
        } else if (!count)
            return usage_error(name + " needs a non-negative integer, got '" + v + "'");
        else if (name == "--seed")
            args.has_seed = true, args.seed = n;
        else if (name == "--repeat")
            args.repeat = static_cast<int>(n);
        else if (name == "--calibrate") {
            if (n > 1000) return usage_error("--calibrate needs a count up to 1000");
            args.calibrate = static_cast<int>(n);
        }
    }
    if (!args.guards && !args.module) return usage_error("--no-guards only applies with --module");
    const bool module = args.module;
    args.command = cmd;
    args.file = path;
    if (cmd == "run") return cmd_run(args);
    if (cmd == "decompose") return cmd_decompose(args);
    if (cmd == "prepare" || cmd == "convert") return cmd_prepare_convert(args);
    if (cmd == "save") {
        args.save_to = positional[2];
        return cmd_save(args);
    }

    auto opened = open_workspace(args);
    if (!opened.ok()) return input_error(opened.error());
    const Workspace& ws = *opened.value();
    if (!ws.has_program()) { // pt2lab's symbolic_trace graph JSON: a module only
        if (cmd == "signature") {
            Error e = make_error(
                "", "a symbolic_trace graph has no graph signature (only ExportedPrograms do)");
            e.file = path;
            return input_error(e);
        }
        if (cmd == "info")
            print_fx_info(ws.module(), path);
        else
            print_view(cmd, *ws.module().graph, {});
        return 0;
    }
    const ExportedProgram& program = ws.program();
    if (cmd == "info") {
        if (module) return usage_error("info describes the whole program; drop --module");
        print_info(program);
        return 0;
    }
    if (cmd == "signature") {
        if (module) return usage_error("ep.module() has no graph signature; drop --module");
        std::string sig = signature_str(program.signature);
        std::string indented;
        for (char c : sig) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
        std::printf("Graph signature:%s\nRange constraints: %s\n", indented.c_str(),
                    program.range_constraints.c_str());
        return 0;
    }
    if (module) {
        print_view(cmd, *ws.module().graph, ws.module().codegen);
        return 0;
    }
    print_view(cmd, *program.graph, {});
    return 0;
}
