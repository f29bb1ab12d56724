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
                    bool keep_going, DropTrace& t) {
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

    // From here on the page's actions are independent buttons: with keep_going
    // (the fuzzer) a refused one does not stop the others; the first error is
    // what is returned either way.
    Status first;
    auto failed = [&](Status s) {
        if (!s.ok() && first.ok()) first = s;
        return !s.ok();
    };
    auto stop = [&] { return !first.ok() && !keep_going; };

    begin(t, "inputs");
    std::vector<Tensor> inputs;
    bool have_inputs = true;
    if (!ep.example_inputs.empty()) {
        inputs = example_inputs(ep);
    } else {
        auto seeded = seeded_inputs(ep, 0, limits);
        if (failed(seeded.status()))
            have_inputs = false;
        else
            inputs = seeded.take();
    }
    if (stop()) return first;
    RunOptions opt;
    opt.limits = limits;
    if (have_inputs) {
        begin(t, "run");
        ModuleState state = ModuleState::from_program(ep);
        auto r = run_program(ep, state, inputs, opt);
        if (failed(r.status()) && stop()) return first;
        begin(t, "run module");
        ModuleState mstate = ModuleState::from_program(ep);
        auto rm = run_module(gm.value(), mstate, inputs, opt);
        if (failed(rm.status()) && stop()) return first;
        t.ran = r.ok() && rm.ok();
    }

    { // the decomposed copy is gone before prepare, as the page keeps one graph at a time
        begin(t, "decompose");
        ExportedProgram low = ep.clone();
        auto dec = run_decompositions(low, DecompTable::for_level(IrLevel::CoreAten));
        if (failed(dec.status())) {
            if (stop()) return first;
        } else {
            t.printed_bytes += dec.value().str().size() + python_code(*low.graph).size();
            if (have_inputs) {
                begin(t, "run decomposed");
                ModuleState lstate = ModuleState::from_program(low);
                auto rl = run_program(low, lstate, inputs, opt);
                if (failed(rl.status()) && stop()) return first;
            }
        }
    }

    begin(t, "prepare");
    GraphModule q = gm.value().clone();
    auto prep = prepare_pt2e(q);
    if (failed(prep.status())) return first;
    t.printed_bytes += prep.value().str().size() + q.code().size();
    if (!have_inputs) return first;
    begin(t, "calibrate");
    ModuleState qstate = ModuleState::from_module(q);
    qstate.file_size = ep.file_size;
    if (failed(calibrate(q, qstate, {inputs}))) return first;
    begin(t, "convert");
    auto conv = convert_pt2e(q, qstate, true);
    if (failed(conv.status())) return first;
    t.printed_bytes += q.code().size();
    begin(t, "run converted");
    ModuleState cstate = ModuleState::from_module(q);
    cstate.file_size = ep.file_size;
    auto rc = run_module(q, cstate, inputs, opt);
    if (failed(rc.status())) return first;
    if (first.ok()) begin(t, "done");
    return first;
}

} // namespace

Status drop_file(const std::vector<uint8_t>& bytes, const std::string& name, const Limits& limits,
                 DropTrace* trace, bool keep_going) {
    DropTrace local;
    DropTrace& t = trace ? *trace : local;
    t = DropTrace();
    // The page's sniff, as the CLI does it: pt2lab's symbolic_trace JSON names its
    // format near the start; everything else goes to the program loader.
    std::string head(bytes.begin(), bytes.begin() + std::min<size_t>(bytes.size(), 4096));
    if (looks_like_fx_graph_json(head))
        return named(drop_fx(std::string(bytes.begin(), bytes.end()), name, limits, t), name);
    return named(drop_program(bytes, name, limits, keep_going, t), name);
}

} // namespace pt2lab_test
