// The page's drop path over the core API (see drop_file.h).
#include "drop_file.h"

#include <chrono>

#include "exec/interpreter.h"
#include "graph/printer.h"
#include "io/fx_json.h"
#include "io/program_loader.h"
#include "passes/decompose.h"
#include "passes/pt2e.h"
#include "passes/unlift.h"

using namespace pt2lab;

namespace pt2lab_test {

namespace {

// Starts a stage: closes the previous one's clock.
void begin(DropTrace& t, const char* stage) {
    auto now = std::chrono::steady_clock::now();
    if (!t.seconds.empty())
        t.seconds.back().second = std::chrono::duration<double>(now - t.stage_start).count();
    t.stage_start = now;
    t.stage = stage;
    t.seconds.emplace_back(stage, 0.0);
}

Status named(Status s, const std::string& name) {
    if (!s.ok() && s.error().file.empty()) s.error().file = name;
    return s;
}

// Every text view of a graph the page offers.
size_t print_views(const Graph& g, const CodegenOptions& codegen) {
    return graph_str(g).size() + python_code(g, codegen).size() +
           print_readable(g, codegen).size() + print_tabular(g).size();
}

Status drop_fx(const std::string& text, const std::string& name, const Limits& limits,
               DropTrace& t) {
    begin(t, "load");
    auto fx = read_fx_graph_json(text, name, limits);
    if (!fx.ok()) return fx.error();
    begin(t, "print");
    t.printed_bytes += print_views(*fx.value().graph, {});
    begin(t, "module");
    GraphModule gm = module_from_fx(fx.take());
    t.printed_bytes += gm.code().size();
    begin(t, "lint");
    return gm.lint();
}

Status drop_program(std::vector<uint8_t> bytes, const std::string& name, const Limits& limits,
                    DropTrace& t) {
    begin(t, "load");
    auto loaded = load_program(std::move(bytes), name, limits);
    if (!loaded.ok()) return loaded.error();
    const ExportedProgram& ep = loaded.value();
    begin(t, "print");
    t.printed_bytes += print_views(*ep.graph, {}) + exported_program_str(ep).size() +
                       signature_str(ep.signature).size();
    begin(t, "unlift");
    auto gm = unlift(ep);
    if (!gm.ok()) return gm.error();
    begin(t, "lint");
    if (Status s = gm.value().lint(); !s.ok()) return s;
    begin(t, "print module");
    t.printed_bytes +=
        print_views(*gm.value().graph, gm.value().codegen) + gm.value().code().size();

    begin(t, "inputs");
    std::vector<Tensor> inputs;
    if (!ep.example_inputs.empty()) {
        inputs = example_inputs(ep);
    } else {
        auto seeded = seeded_inputs(ep, 0, limits);
        if (!seeded.ok()) return seeded.error();
        inputs = seeded.take();
    }
    RunOptions opt;
    opt.limits = limits;
    begin(t, "run");
    ModuleState state = ModuleState::from_program(ep);
    auto r = run_program(ep, state, inputs, opt);
    if (!r.ok()) return r.error();
    begin(t, "run module");
    ModuleState mstate = ModuleState::from_program(ep);
    auto rm = run_module(gm.value(), mstate, inputs, opt);
    if (!rm.ok()) return rm.error();
    t.ran = true;

    begin(t, "decompose");
    ExportedProgram low = ep.clone();
    auto dec = run_decompositions(low, DecompTable::for_level(IrLevel::CoreAten));
    if (!dec.ok()) return dec.error();
    t.printed_bytes += dec.value().str().size() + python_code(*low.graph).size();
    begin(t, "run decomposed");
    ModuleState lstate = ModuleState::from_program(low);
    auto rl = run_program(low, lstate, inputs, opt);
    if (!rl.ok()) return rl.error();

    begin(t, "prepare");
    GraphModule q = gm.value().clone();
    auto prep = prepare_pt2e(q);
    if (!prep.ok()) return prep.error();
    t.printed_bytes += prep.value().str().size() + q.code().size();
    begin(t, "calibrate");
    ModuleState qstate = ModuleState::from_module(q);
    qstate.file_size = ep.file_size;
    if (Status s = calibrate(q, qstate, {inputs}); !s.ok()) return s;
    begin(t, "convert");
    auto conv = convert_pt2e(q, qstate, true);
    if (!conv.ok()) return conv.error();
    t.printed_bytes += q.code().size();
    begin(t, "run converted");
    ModuleState cstate = ModuleState::from_module(q);
    cstate.file_size = ep.file_size;
    auto rc = run_module(q, cstate, inputs, opt);
    if (!rc.ok()) return rc.error();
    begin(t, "done");
    return {};
}

} // namespace

Status drop_file(const std::vector<uint8_t>& bytes, const std::string& name, const Limits& limits,
                 DropTrace* trace) {
    DropTrace local;
    DropTrace& t = trace ? *trace : local;
    t = DropTrace();
    // The page's sniff, as the CLI does it: pt2lab's symbolic_trace JSON names its
    // format near the start; everything else goes to the program loader.
    std::string head(bytes.begin(), bytes.begin() + std::min<size_t>(bytes.size(), 4096));
    if (looks_like_fx_graph_json(head))
        return named(drop_fx(std::string(bytes.begin(), bytes.end()), name, limits, t), name);
    return named(drop_program(bytes, name, limits, t), name);
}

} // namespace pt2lab_test
