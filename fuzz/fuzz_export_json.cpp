// libFuzzer harness: the ExportedProgram JSON deserializer (schema 8, every
// argument kind, metadata strings, the signature), ep.module() and the
// printers, on JSON whose *values* are mutated (mutators.h): boundary
// integers, names from elsewhere in the document, spliced subtrees, dropped
// members, deep nesting. The bytes open as a dropped .json file does, through
// Workspace::open (its one sniff: pt2lab's symbolic_trace JSON or an
// ExportedProgram), and every text view the page shows is printed.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/printer.h"
#include "mutators.h"
#include "workspace/workspace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Small budgets, as in fuzz_drop: a bare JSON's stand-in weights are made at open.
    pt2lab::OpenOptions opt;
    opt.limits.tensor_bytes = 4 << 20;
    opt.limits.file_bytes = 16 << 20;
    auto ws = pt2lab::Workspace::open(std::vector<uint8_t>(data, data + size), "fuzz.json", opt);
    if (!ws.ok()) {
        // An error always names the file, as the page shows it.
        if (ws.error().file.rfind("fuzz.json", 0) != 0) __builtin_trap();
        return 0;
    }
    const pt2lab::Workspace& w = *ws.value();
    size_t printed = 0;
    for (pt2lab::GraphView v : {pt2lab::GraphView::Program, pt2lab::GraphView::Module}) {
        if (v == pt2lab::GraphView::Program && !w.has_program()) continue;
        const pt2lab::CodeView& code = w.code(v);
        printed += code.text.size() + w.readable(v).size() + w.lint_message(v).size() +
                   pt2lab::graph_str(w.graph(v)).size() + pt2lab::print_tabular(w.graph(v)).size();
    }
    if (w.has_program()) printed += w.program_str().size();
    if (printed == 0) __builtin_trap(); // an opened file always prints something
    return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    pt2lab_fuzz::Rng rng(seed);
    std::string text(reinterpret_cast<const char*>(data), size);
    if (rng.one_in(32) || !pt2lab_fuzz::mutate_json(text, rng, max_size)) {
        std::vector<uint8_t> b(data, data + size);
        pt2lab_fuzz::mutate_bytes(b, max_size);
        text.assign(b.begin(), b.end());
    }
    std::copy(text.begin(), text.end(), data);
    return text.size();
}
