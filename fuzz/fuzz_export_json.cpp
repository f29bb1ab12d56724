// libFuzzer harness: the ExportedProgram JSON deserializer (schema 8, every
// argument kind, metadata strings, the signature) and the printers, on JSON
// whose *values* are mutated (mutators.h): boundary integers, names from
// elsewhere in the document, spliced subtrees, dropped members, deep nesting.
#include <cstdint>
#include <string>

#include "graph/printer.h"
#include "io/export_json.h"
#include "mutators.h"
#include "passes/unlift.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    pt2lab::ExportedProgram ep;
    if (!pt2lab::read_exported_program_json(text, "fuzz.json", ep).ok()) return 0;
    size_t printed = pt2lab::graph_str(*ep.graph).size() + pt2lab::python_code(*ep.graph).size() +
                     pt2lab::print_tabular(*ep.graph).size() +
                     pt2lab::exported_program_str(ep).size();
    auto gm = pt2lab::unlift(ep);
    if (gm.ok()) {
        printed += gm.value().code().size();
        (void)gm.value().lint();
    }
    if (printed == 0) __builtin_trap(); // a loaded program always prints something
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
