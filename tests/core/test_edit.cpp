// The editing API against real torch.fx: every scenario in tests/golden/fx_edits
// (tools/fx_edit_goldens.py replayed the same actions with torch 1.13) is
// replayed here action by action; after each step the graph text, the fresh
// code, lint's verdict, every node's users (in order) and the action's result
// must equal what torch produced. Plus undo/redo.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "io/fx_json.h"
#include "test_support.h"
#include "workspace/action_json.h"

using namespace pt2lab;
using namespace pt2lab_test;
using json = nlohmann::ordered_json; // key order matters (kwargs)

namespace {
std::string first_line(const std::string& s) {
    return s.substr(0, s.find('\n'));
}

std::vector<std::string> strings(const json& j) {
    std::vector<std::string> out;
    for (const auto& x : j) out.push_back(x.get<std::string>());
    return out;
}

std::vector<std::string> user_names(const Node* n) {
    std::vector<std::string> out;
    for (Node* u : n->users()) out.push_back(u->name());
    return out;
}
} // namespace

TEST_CASE("edit scenarios replay exactly as torch.fx ran them", "[edit]") {
    auto files = list_dir("tests/golden/fx_edits", ".json");
    REQUIRE(files.size() >= 8);
    int steps_checked = 0;
    for (const auto& rel : files) {
        json sc = json::parse(read_text(source_path(rel)), nullptr, false);
        REQUIRE_FALSE(sc.is_discarded());
        auto fx = read_fx_graph_json(sc["start"].dump(), rel + ":start");
        INFO(rel << (fx.ok() ? "" : fx.error().str()));
        REQUIRE(fx.ok());
        GraphModule gm = module_from_fx(fx.take());
        gm.codegen.free_unused_immediately = false; // torch 1.13's codegen
        gm.recompile();
        auto ws = Workspace::from_module(std::move(gm), rel);
        int k = 0;
        for (const auto& step : sc["steps"]) {
            INFO(rel << " step " << k << ": " << step["action"].dump());
            ++k;
            auto action = parse_edit_action(step["action"].dump(), rel);
            REQUIRE(action.ok());
            auto applied = ws->apply(Action::of(action.value()));
            INFO((applied.ok() ? std::string() : applied.error().str()));
            REQUIRE(applied.ok());
            const ActionResult& r = applied.value().edit;
            const json& expect = step["result"];
            if (expect.contains("created")) CHECK(r.created == strings(expect["created"]));
            if (expect.contains("changed")) {
                if (expect["changed"].is_boolean())
                    CHECK(r.dce_changed == std::optional<bool>(expect["changed"].get<bool>()));
                else
                    CHECK(r.changed == strings(expect["changed"]));
            }
            if (expect.contains("error"))
                CHECK(first_line(r.error) ==
                      (expect["error"].is_null() ? std::string()
                                                 : first_line(expect["error"].get<std::string>())));
            if (expect.contains("code")) CHECK(r.code == expect["code"].get<std::string>());
            CHECK(applied.value().torch_error == r.error);
            const GraphModule& m = ws->module();
            const json& after = step["after"];
            std::string g = graph_str(*m.graph);
            INFO(first_difference(after["graph"].get<std::string>(), g));
            CHECK(g == after["graph"].get<std::string>());
            std::string code = python_code(*m.graph, m.codegen);
            INFO(first_difference(after["code"].get<std::string>(), code));
            CHECK(code == after["code"].get<std::string>());
            Status lint = m.lint();
            CHECK((lint.ok() ? std::string("ok") : first_line(lint.error().message)) ==
                  first_line(after["lint"].get<std::string>()));
            for (auto it = after["users"].begin(); it != after["users"].end(); ++it) {
                const Node* n = m.graph->find(it.key());
                INFO("users of " << it.key());
                REQUIRE(n);
                CHECK(user_names(n) == strings(it.value()));
            }
            CHECK(after["users"].size() == m.graph->size());
            ++steps_checked;
        }
    }
    CHECK(steps_checked >= 60);
}

TEST_CASE("undo returns the exact previous graph; redo reapplies", "[edit]") {
    auto fx =
        read_fx_graph_json(read_text(source_path("assets/fx/conv_relu.json")), "conv_relu.json");
    REQUIRE(fx.ok());
    auto ws = Workspace::from_module(module_from_fx(fx.take()), "conv_relu.json");
    Workspace& s = *ws;
    auto act = [&](const char* text) {
        return s.apply(Action::of(parse_edit_action(text, "t").take()));
    };
    std::string g0 = graph_str(*s.module().graph);
    auto users0 = user_names(s.module().graph->find("relu"));
    // insert an observer, rewire badly, then undo both
    auto insert =
        parse_edit_action(R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
        {"op": "call_module", "target": "activation_post_process_0", "args": [{"node": "relu"}],
         "module_type": "MinMaxObserver"}]})",
                          "test");
    auto rewire = parse_edit_action(
        R"({"kind": "replace_all_uses_with", "node": "relu", "with": "activation_post_process_0"})",
        "test");
    REQUIRE(insert.ok());
    REQUIRE(rewire.ok());
    REQUIRE(s.apply(Action::of(insert.value())).ok());
    std::string g1 = graph_str(*s.module().graph);
    REQUIRE(s.module().submodules.count("activation_post_process_0"));
    REQUIRE(s.apply(Action::of(rewire.value())).ok());
    CHECK_FALSE(s.module().lint().ok()); // the self-loop
    auto history = s.undo_history();
    REQUIRE(history.size() == 2);
    CHECK(history[0].label == "insert");
    CHECK(history[1].label == "replace_all_uses_with");
    REQUIRE(act(R"({"kind": "undo"})").ok());
    CHECK(graph_str(*s.module().graph) == g1);
    CHECK(s.module().lint().ok());
    REQUIRE(act(R"({"kind": "undo"})").ok());
    CHECK(graph_str(*s.module().graph) == g0);
    CHECK(user_names(s.module().graph->find("relu")) == users0);
    CHECK_FALSE(
        s.module().submodules.count("activation_post_process_0")); // the registration is undone too
    CHECK_FALSE(s.can_undo());
    CHECK_FALSE(act(R"({"kind": "undo"})").ok());
    // redo twice brings the bad rewire back
    REQUIRE(act(R"({"kind": "redo"})").ok());
    REQUIRE(act(R"({"kind": "redo"})").ok());
    CHECK_FALSE(s.module().lint().ok());
    CHECK_FALSE(s.can_redo());
    // a new edit clears the redo stack
    REQUIRE(act(R"({"kind": "undo"})").ok());
    REQUIRE(act(R"({"kind": "eliminate_dead_code"})").ok());
    CHECK_FALSE(s.can_redo());
}

TEST_CASE("bad actions are errors that leave the graph alone", "[edit]") {
    auto fx =
        read_fx_graph_json(read_text(source_path("assets/fx/conv_relu.json")), "conv_relu.json");
    REQUIRE(fx.ok());
    auto ws = Workspace::from_module(module_from_fx(fx.take()), "conv_relu.json");
    Workspace& s = *ws;
    std::string g0 = graph_str(*s.module().graph);
    CHECK_FALSE(parse_edit_action(R"({"kind": "teleport"})", "t").ok());
    CHECK_FALSE(parse_edit_action(
                    R"({"kind": "insert", "where": "sideways", "anchor": "x", "nodes": []})", "t")
                    .ok());
    auto bad = parse_edit_action(R"({"kind": "erase_node", "node": "ghost"})", "t");
    REQUIRE(bad.ok());
    auto r = s.apply(Action::of(bad.value()));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "no node named 'ghost' in the graph");
    auto dangling =
        parse_edit_action(R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
        {"op": "call_function", "target": "torch.relu", "args": [{"node": "ghost"}]}]})",
                          "t");
    REQUIRE(dangling.ok());
    CHECK_FALSE(s.apply(Action::of(dangling.value())).ok());
    CHECK(graph_str(*s.module().graph) == g0);
    CHECK_FALSE(s.can_undo());
}
