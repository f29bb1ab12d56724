// Every printer against torch 2.14.1 on real programs (tests/golden/export, written by
// tools/export_goldens.py): for each lesson asset, the exported program as pt2lab loads
// it, pt2lab's own run_decompositions at both levels, and torch's decomposed programs
// (saved .pt2) as pt2lab loads them. print(ep), str(ep.graph), ep.graph_module.code,
// print_readable, print_tabular, str(ep.graph_signature) and the same views of
// ep.module() must equal torch's text byte for byte.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "graph/printer.h"
#include "passes/decompose.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using nlohmann::json;

namespace {

std::vector<std::string> golden_files() {
    return list_dir("tests/golden/export", ".json");
}
std::vector<std::string> case_files() {
    return list_dir("tests/golden/export/cases", ".json");
}

json golden(const std::string& rel) {
    json j = json::parse(read_text(source_path(rel)), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    REQUIRE(j["producer"]["torch_version"].get<std::string>().rfind("2.14.1", 0) == 0);
    return j;
}

// What pt2lab prints for a program, under the keys tools/export_goldens.py uses.
std::map<std::string, std::string> texts(const ExportedProgram& ep) {
    std::map<std::string, std::string> t;
    t["ep"] = exported_program_str(ep);
    t["graph"] = graph_str(*ep.graph);
    t["code"] = python_code(*ep.graph);
    CodegenOptions verbose;
    verbose.verbose = true;
    t["readable"] = print_readable(*ep.graph, verbose);
    t["tabular"] = print_tabular(*ep.graph);
    t["signature"] = signature_str(ep.signature);
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    const GraphModule& m = gm.value();
    t["module_graph"] = graph_str(*m.graph);
    t["module_code"] = python_code(*m.graph, m.codegen);
    CodegenOptions mv = m.codegen;
    mv.verbose = true;
    t["module_readable"] = print_readable(*m.graph, mv);
    return t;
}

// Compares every text; returns how many matched.
int compare(const std::string& what, const std::map<std::string, std::string>& ours,
            const json& torch_texts) {
    int same = 0;
    for (auto it = torch_texts.begin(); it != torch_texts.end(); ++it) {
        if (it.key() == "meta") continue; // check_meta
        REQUIRE(ours.count(it.key()));
        const std::string expected = it.value().get<std::string>();
        const std::string& actual = ours.at(it.key());
        INFO(what << " " << it.key() << "\n" << first_difference(expected, actual));
        CHECK(actual == expected);
        same += actual == expected;
    }
    return same;
}

// Node metadata as pt2lab read it equals torch.export.load's node.meta.
void check_meta(const std::string& what, const ExportedProgram& ep, const json& meta) {
    REQUIRE(meta.is_object());
    size_t seen = 0;
    for (Node* n : ep.graph->nodes()) {
        if (n->op() == Op::Placeholder || n->op() == Op::Output) continue;
        INFO(what << " %" << n->name());
        REQUIRE(meta.contains(n->name()));
        const json& m = meta[n->name()];
        ++seen;
        CHECK(n->meta.stack_trace ==
              (m["stack_trace"].is_null() ? std::string() : m["stack_trace"].get<std::string>()));
        REQUIRE(n->meta.nn_module_stack.size() == m["nn_module_stack"].size());
        for (size_t k = 0; k < n->meta.nn_module_stack.size(); ++k) {
            const ModuleStackEntry& e = n->meta.nn_module_stack[k];
            CHECK(e.key == m["nn_module_stack"][k][0].get<std::string>());
            CHECK(e.path == m["nn_module_stack"][k][1].get<std::string>());
            CHECK(e.type == m["nn_module_stack"][k][2].get<std::string>());
        }
        CHECK(n->meta.source_fn_stack.size() == m["source_fn_stack"].size());
        if (m["torch_fn"].is_null()) {
            CHECK_FALSE(n->meta.torch_fn);
        } else {
            REQUIRE(n->meta.torch_fn);
            CHECK(n->meta.torch_fn->first == m["torch_fn"][0].get<std::string>());
            CHECK(n->meta.torch_fn->second == m["torch_fn"][1].get<std::string>());
        }
    }
    CHECK(seen == meta.size());
}

ExportedProgram decomposed(const std::string& asset, IrLevel level) {
    ExportedProgram ep = load_asset(asset);
    auto r = run_decompositions(ep, DecompTable::for_level(level));
    INFO(asset << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return ep;
}
} // namespace

TEST_CASE("every lesson asset has torch 2.14.1's texts to compare against", "[printer]") {
    CHECK(golden_files().size() == list_dir("assets/graphs", ".pt2").size());
}

TEST_CASE("the exported programs print as torch 2.14.1 prints them", "[printer]") {
    for (const auto& rel : golden_files()) {
        json g = golden(rel);
        ExportedProgram ep = load_asset(g["files"]["export"].get<std::string>());
        compare(rel + " export", texts(ep), g["programs"]["export"]);
        check_meta(rel, ep, g["programs"]["export"]["meta"]);
    }
}

TEST_CASE("printer corner cases of real programs: a builtin-named input, an op pt2lab lacks",
          "[printer]") {
    REQUIRE(case_files().size() >= 2);
    for (const auto& rel : case_files()) {
        json g = golden(rel);
        ExportedProgram ep = load_asset(g["files"]["export"].get<std::string>());
        INFO(g["description"].get<std::string>());
        compare(rel, texts(ep), g["programs"]["export"]);
        check_meta(rel, ep, g["programs"]["export"]["meta"]);
    }
}

TEST_CASE("pt2lab's run_decompositions prints as torch's", "[printer]") {
    for (const auto& rel : golden_files()) {
        json g = golden(rel);
        std::string asset = g["files"]["export"].get<std::string>();
        compare(rel + " inference", texts(decomposed(asset, IrLevel::Inference)),
                g["programs"]["inference"]);
        compare(rel + " core_aten", texts(decomposed(asset, IrLevel::CoreAten)),
                g["programs"]["core_aten"]);
    }
}

TEST_CASE("torch's own decomposed programs load and print as torch prints them", "[printer]") {
    for (const auto& rel : golden_files()) {
        json g = golden(rel);
        for (const char* level : {"inference", "core_aten"}) {
            std::string file = g["files"][level].get<std::string>();
            ExportedProgram ep = load_asset(file);
            INFO(file);
            CHECK(ep.provenance.torch_version.rfind("2.14.1", 0) == 0);
            CHECK(ep.example_inputs.size() == 1);
            compare(rel + " " + level + "_file", texts(ep),
                    g["programs"][std::string(level) + "_file"]);
        }
    }
}
