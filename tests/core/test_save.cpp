// Writing .pt2 archives (io/pt2_writer.h, Workspace::save_pt2): what torch
// wrote comes back byte for byte, and every saved program - as loaded,
// decomposed, converted - opens again in pt2lab with the same graph,
// signature, weights and outputs. (tools/save_roundtrip.py checks the same
// files against real torch.export.load.)
#include <catch2/catch.hpp>

#include <cstring>

#include <nlohmann/json.hpp>

#include "graph/printer.h"
#include "io/export_json_writer.h"
#include "io/pickle.h"
#include "io/pt2_writer.h"
#include "io/py_json.h"
#include "io/torch_save_writer.h"
#include "io/zip.h"
#include "io/zip_writer.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

// Records of an archive by their name inside its root folder.
std::map<std::string, std::vector<uint8_t>> records(const std::vector<uint8_t>& bytes) {
    auto z = ZipArchive::open(bytes, "archive");
    REQUIRE(z.ok());
    std::map<std::string, std::vector<uint8_t>> out;
    for (const ZipEntry& e : z.value().entries()) {
        auto data = z.value().read(e);
        REQUIRE(data.ok());
        out[e.name.substr(e.name.find('/') + 1)] = data.take();
    }
    return out;
}

std::string text(const std::vector<uint8_t>& b) {
    return std::string(b.begin(), b.end());
}

// Every file torch.export.save wrote that pt2lab can load: the lesson assets and
// torch's own decomposed programs of them.
std::vector<std::string> torch_written_files() {
    std::vector<std::string> files = list_dir("assets/graphs", ".pt2");
    for (const auto& f : list_dir("tests/golden/export", ".pt2")) files.push_back(f);
    return files;
}

} // namespace

TEST_CASE("zip writer: stored records under one root, 64-byte aligned, read back", "[save]") {
    ZipWriter w("model");
    REQUIRE(w.add("a.txt", std::string_view("hello")).ok());
    std::vector<uint8_t> big(1000);
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<uint8_t>(k * 7);
    REQUIRE(w.add("data/weights/weight_0", big).ok());
    REQUIRE(w.add("empty", std::string_view()).ok());
    CHECK_FALSE(w.add("a.txt", std::string_view("again")).ok());
    auto bytes = w.finish();
    REQUIRE(bytes.ok());
    auto z = ZipArchive::open(bytes.value(), "model.pt2");
    REQUIRE(z.ok());
    REQUIRE(z.value().entries().size() == 3);
    for (const ZipEntry& e : z.value().entries()) {
        CHECK(e.name.rfind("model/", 0) == 0);
        CHECK(e.method == 0);
        CHECK(e.data_offset % 64 == 0);
    }
    CHECK(text(z.value().read("model/a.txt").take()) == "hello");
    CHECK(z.value().read("model/data/weights/weight_0").take() == big);
    CHECK(z.value().read("model/empty").take().empty());
}

TEST_CASE("zip writer refuses an archive past its size limit", "[save]") {
    ZipWriter w("model");
    w.set_limit(200);
    CHECK(w.add("small", std::string_view("x")).ok());
    std::vector<uint8_t> big(300);
    Status s = w.add("big", big);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("would pass 200 bytes") != std::string::npos);
    CHECK(w.finish().ok()); // what was added before still makes an archive
}

TEST_CASE("JSON text as Python's json.dumps writes it", "[save]") {
    PyJson j;
    j.begin_object().key("a").integer(1).key("b").begin_array().number(0.1).number(1e-05);
    j.number(2.0).boolean(true).null().end_array().key("c").str(
        "x\"y\\\n\x01\x7f\xc3\xa9\xf0\x9f\x98\x80");
    j.end_object();
    CHECK(j.text() == "{\"a\": 1, \"b\": [0.1, 1e-05, 2.0, true, null], \"c\": "
                      "\"x\\\"y\\\\\\n\\u0001\\u007f\\u00e9\\ud83d\\ude00\"}");
    CHECK(py_json_string("\xff") == "\"\\ufffd\"");
}

TEST_CASE("an unchanged program is written back as torch.export.save wrote it", "[save]") {
    for (const std::string& rel : torch_written_files()) {
        INFO(rel);
        ExportedProgram ep = load_asset(rel);
        auto bytes = write_pt2(ep, archive_root_for(rel));
        INFO((bytes.ok() ? "" : bytes.error().str()));
        REQUIRE(bytes.ok());
        auto ours = records(bytes.value());
        auto theirs = records(read_file_bytes(source_path(rel)).take());
        for (const auto& [name, data] : theirs) {
            if (name.rfind("extra/", 0) == 0 || name == ".data/serialization_id") continue;
            INFO(name);
            REQUIRE(ours.count(name));
            if (name == "data/sample_inputs/model.pt") {
                auto a = records(data), b = records(ours[name]);
                for (const auto& [inner, d] : a) {
                    INFO(inner);
                    if (inner == ".data/serialization_id") continue;
                    REQUIRE(b.count(inner));
                    CHECK(b[inner] == d);
                }
                CHECK(a.size() == b.size());
                continue;
            }
            if (data != ours[name]) CHECK(first_difference(text(data), text(ours[name])) == "");
            CHECK(data == ours[name]);
        }
        size_t extras = 0;
        for (const auto& kv : theirs) extras += kv.first.rfind("extra/", 0) == 0;
        CHECK(ours.size() == theirs.size() - extras);
    }
}

namespace {

// What a workspace's current program looks like after a save and an open.
struct Saved {
    std::unique_ptr<Workspace> ws;
    std::vector<uint8_t> bytes;
};

Saved save_and_open(const Workspace& ws) {
    auto bytes = ws.save_pt2("saved");
    INFO((bytes.ok() ? "" : bytes.error().str()));
    REQUIRE(bytes.ok());
    auto again = Workspace::open(bytes.value(), "saved.pt2");
    INFO((again.ok() ? "" : again.error().str()));
    REQUIRE(again.ok());
    return {again.take(), bytes.take()};
}

ActionOutcome apply_ok(Workspace& ws, const std::string& json) {
    auto out = ws.apply(action(json));
    INFO(json << ": " << (out.ok() ? "" : out.error().str()));
    REQUIRE(out.ok());
    return out.take();
}

// The module's outputs on the file's sample inputs (the first run from its state).
std::vector<Value> run_outputs(Workspace& ws) {
    auto out = apply_ok(ws, R"({"kind": "run", "inputs": "sample"})");
    REQUIRE(out.run);
    return out.run->result.outputs;
}

void check_same_outputs(const std::vector<Value>& a, const std::vector<Value>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
        REQUIRE(a[k].is_tensor());
        REQUIRE(b[k].is_tensor());
        const TensorData da = a[k].tensor->to_data(), db = b[k].tensor->to_data();
        CHECK(da.dtype == db.dtype);
        CHECK(da.sizes == db.sizes);
        CHECK(da.bytes == db.bytes); // bit for bit: the same graph on the same values
    }
}

// The saved file holds the live state's values of every tensor it names.
void check_same_weights(const Workspace& before, const Workspace& after) {
    const ExportedProgram& ep = after.program();
    size_t n = 0;
    for (const TensorMap* m : {&ep.state_dict, &ep.constants})
        for (const auto& [fqn, t] : *m) {
            INFO(fqn);
            auto it = before.state().tensors.find(fqn);
            REQUIRE(it != before.state().tensors.end());
            CHECK(it->second->to_data().bytes == t->bytes);
            ++n;
        }
    CHECK(n == ep.state_dict.size() + ep.constants.size());
}

const char* const kConvert = R"({"kind": "convert"})";

} // namespace

TEST_CASE("every lesson graph round-trips through save and open", "[save]") {
    for (const std::string& rel : list_dir("assets/graphs", ".pt2")) {
        const std::string name = rel.substr(14, rel.size() - 18);
        auto golden = nlohmann::json::parse(
            read_text(source_path("tests/golden/export/" + name + ".json")), nullptr, false);
        REQUIRE_FALSE(golden.is_discarded());
        for (const char* step : {"export", "inference", "core_aten", "convert"}) {
            INFO(rel << " after " << step);
            auto ws = open_workspace(name);
            const std::string s = step;
            if (s == "inference") apply_ok(*ws, R"({"kind": "decompose", "level": "inference"})");
            if (s == "core_aten") apply_ok(*ws, R"({"kind": "decompose", "level": "core"})");
            if (s == "convert") {
                apply_ok(*ws, R"({"kind": "prepare"})");
                apply_ok(*ws, R"({"kind": "calibrate", "inputs": "sample", "repeat": 3})");
                apply_ok(*ws, kConvert);
            }
            auto expected = ws->program_to_save();
            REQUIRE(expected.ok());
            Saved saved = save_and_open(*ws);
            const ExportedProgram& back = saved.ws->program();
            // The printed graph: as before, or for a decomposed program as torch prints its
            // own decomposition saved and loaded (unused outputs get named getitems).
            const std::string graph = graph_str(*back.graph);
            if (s == "inference" || s == "core_aten") {
                const auto& torch_texts = golden["programs"][s + "_file"];
                CHECK(first_difference(torch_texts["graph"].get<std::string>(), graph) ==
                      "identical");
                CHECK(first_difference(torch_texts["module_code"].get<std::string>(),
                                       saved.ws->module().code()) == "identical");
            } else {
                CHECK(first_difference(graph_str(*expected.value().graph), graph) == "identical");
            }
            if (s == "export")
                CHECK(graph == golden["programs"]["export"]["graph"].get<std::string>());
            CHECK(signature_str(back.signature) == signature_str(expected.value().signature));
            CHECK(back.verifiers == expected.value().verifiers);
            REQUIRE(back.example_inputs.size() == ws->program().example_inputs.size());
            for (size_t k = 0; k < back.example_inputs.size(); ++k)
                CHECK(back.example_inputs[k].tensor.bytes ==
                      ws->program().example_inputs[k].tensor.bytes);
            check_same_weights(*ws, *saved.ws);
            // Saving is deterministic: the same state writes the same bytes.
            auto twice = ws->save_pt2("saved");
            REQUIRE(twice.ok());
            CHECK(twice.value() == saved.bytes);
            check_same_outputs(run_outputs(*ws), run_outputs(*saved.ws));
        }
    }
}

TEST_CASE("a prepared module is refused, as torch.export refuses to export it", "[save]") {
    auto ws = open_workspace("conv_bn_relu_eval");
    apply_ok(*ws, R"({"kind": "prepare"})");
    auto bytes = ws->save_pt2();
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.error().file == "conv_bn_relu_eval.pt2");
    CHECK(bytes.error().message.find("a prepared model has no ExportedProgram") !=
          std::string::npos);
    CHECK(bytes.error().hint.find("calibrate and convert first") != std::string::npos);
    // undo prepare: the file as loaded saves again
    REQUIRE(ws->undo().ok());
    CHECK(ws->save_pt2().ok());
}

TEST_CASE("edits: ATen nodes are saved, Python functions and modules are refused", "[save]") {
    auto ws = open_workspace("conv_relu");
    // an aten op inserted after relu, relu's other users rewired to it
    auto ins = apply_ok(*ws, R"({"kind": "insert", "where": "after", "anchor": "relu", "nodes": [
        {"op": "call_function", "target": "torch.ops.aten.sigmoid.default",
         "args": [{"node": "relu"}]}]})");
    REQUIRE(ins.edit.created.size() == 1);
    const std::string sig = ins.edit.created[0]; // fx's name: sigmoid_default
    apply_ok(*ws, R"({"kind": "replace_all_uses_with", "node": "relu", "with": ")" + sig +
                      R"(", "skip_users": [")" + sig + R"("]})");
    // Not recompiled: forward (and so the saved program, as torch.export traces forward)
    // is the graph of the last recompile.
    {
        Saved stale = save_and_open(*ws);
        CHECK(stale.ws->program().graph->find(sig) == nullptr);
    }
    apply_ok(*ws, R"({"kind": "recompile"})");
    Saved saved = save_and_open(*ws);
    const Node* n = saved.ws->program().graph->find(sig);
    REQUIRE(n);
    CHECK(n->target() == "torch.ops.aten.sigmoid.default");
    // its metadata, which the edit did not give it, comes from a run
    REQUIRE(n->meta.val.is_tensor());
    CHECK(n->meta.val.tensor.type_str() == "f32[2, 8, 16, 16]");
    CHECK(saved.ws->program().signature.outputs.at(0).arg == sig);
    check_same_outputs(run_outputs(*ws), run_outputs(*saved.ws));
    // a Python function: torch.export would have traced it into ATen ops
    auto py = apply_ok(*ws, R"({"kind": "insert", "where": "after", "anchor": ")" + sig +
                                R"(", "nodes": [
        {"op": "call_function", "target": "torch.relu", "args": [{"node": ")" +
                                sig + R"("}]}]})");
    apply_ok(*ws, R"({"kind": "recompile"})");
    auto refused = ws->save_pt2();
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().where == "%" + py.edit.created.at(0));
    CHECK(refused.error().message.find("torch.relu, a Python function") != std::string::npos);
    // an observer module
    REQUIRE(ws->undo().ok());
    REQUIRE(ws->undo().ok());
    apply_ok(*ws, R"({"kind": "insert", "where": "after", "anchor": ")" + sig + R"(", "nodes": [
        {"op": "call_module", "target": "activation_post_process_0", "args": [{"node": ")" +
                      sig + R"("}], "module_type": "MinMaxObserver"}]})");
    apply_ok(*ws, R"({"kind": "recompile"})");
    auto observer = ws->save_pt2();
    REQUIRE_FALSE(observer.ok());
    CHECK(observer.error().message.find("calls observer activation_post_process_0") !=
          std::string::npos);
}

TEST_CASE("a train-mode run moves the buffers the saved file holds, as in torch", "[save]") {
    auto ws = open_workspace("conv_bn_relu_train");
    const std::vector<Value> first = run_outputs(*ws);
    Saved saved = save_and_open(*ws);
    check_same_weights(*ws, *saved.ws);
    auto nbt = saved.ws->program().state_dict.at("bn.num_batches_tracked");
    CHECK(Tensor::from_data(*nbt).data<int64_t>()[0] == 4); // 3 in the file, one forward
    // the next run of each starts from the same state
    check_same_outputs(run_outputs(*ws), run_outputs(*saved.ws));
}

TEST_CASE("what cannot be saved says why", "[save]") {
    auto fx = Workspace::open_file(source_path("assets/fx/conv_relu.json"));
    REQUIRE(fx.ok());
    auto bytes = fx.value()->save_pt2();
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.error().message.find("not an ExportedProgram") != std::string::npos);
    // a bare JSON loads with stand-in weights, which a .pt2 would pass off as real ones
    auto model = records(read_file_bytes(source_path("assets/graphs/conv_relu.pt2")).take());
    auto bare = Workspace::open(model.at("models/model.json"), "model.json");
    REQUIRE(bare.ok());
    auto stand_ins = bare.value()->save_pt2();
    REQUIRE_FALSE(stand_ins.ok());
    CHECK(stand_ins.error().message.find("stand-ins") != std::string::npos);
}
