// Weights are held once: a .pt2's tensors are views into the file's bytes
// (stored, aligned records), executor states share them, and the first write
// copies only the tensor written (copy on write), so the program never changes.
#include <catch2/catch.hpp>

#include <cstdint>

#include "exec/interpreter.h"
#include "io/zip.h"
#include "passes/unlift.h"
#include "test_support.h"

using namespace pt2lab;
using pt2lab_test::source_path;

namespace {

using FileBytes = std::shared_ptr<const std::vector<uint8_t>>;

FileBytes file_bytes(const std::string& rel) {
    auto b = read_file_bytes(source_path(rel));
    REQUIRE(b.ok());
    return std::make_shared<const std::vector<uint8_t>>(b.take());
}

bool inside(const FileBytes& file, const void* p) {
    auto* b = static_cast<const uint8_t*>(p);
    return b >= file->data() && b < file->data() + file->size();
}

// The bytes a state tensor reads, through a const reference (a non-const access un-shares).
const uint8_t* bytes_of(const ModuleState& s, const std::string& fqn) {
    const Tensor& t = *s.tensors.at(fqn);
    return t.storage.data();
}

// A copy of every state_dict tensor's bytes, to check later that nothing wrote them.
std::map<std::string, std::vector<uint8_t>> snapshot(const ExportedProgram& ep) {
    std::map<std::string, std::vector<uint8_t>> out;
    for (const auto& [fqn, t] : ep.state_dict) out[fqn] = t->bytes.to_vector();
    return out;
}

void check_unchanged(const ExportedProgram& ep,
                     const std::map<std::string, std::vector<uint8_t>>& before) {
    for (const auto& [fqn, t] : ep.state_dict) {
        INFO(fqn);
        CHECK(t->bytes.to_vector() == before.at(fqn));
    }
}

} // namespace

TEST_CASE("a .pt2's weights are views into the file's bytes, shared by the state until written",
          "[memory]") {
    FileBytes file = file_bytes("assets/graphs/conv_relu.pt2");
    auto loaded = load_program(file, "conv_relu.pt2");
    REQUIRE(loaded.ok());
    const ExportedProgram& ep = loaded.value();
    REQUIRE(ep.state_dict.size() == 2);
    for (const auto& [fqn, t] : ep.state_dict) {
        INFO(fqn);
        CHECK(inside(file, t->bytes.data())); // no copy: the record's bytes in the file
        CHECK(reinterpret_cast<uintptr_t>(t->bytes.data()) % 4 == 0);
    }
    const auto before = snapshot(ep);

    ModuleState s = ModuleState::from_program(ep);
    for (const auto& [fqn, t] : ep.state_dict) {
        INFO(fqn);
        CHECK(bytes_of(s, fqn) == t->bytes.data()); // shared, not copied
        CHECK(s.tensors.at(fqn)->storage.shared());
    }
    // A forward only reads the weights: nothing is copied.
    auto r = run_program(ep, s, example_inputs(ep));
    REQUIRE(r.ok());
    for (const auto& [fqn, t] : ep.state_dict) CHECK(bytes_of(s, fqn) == t->bytes.data());
    // A clone of the state shares them too.
    ModuleState c = s.clone();
    CHECK(bytes_of(c, "conv.weight") == ep.find_tensor("conv.weight")->bytes.data());

    // relu_ on the weight (an in-place op) writes the state's tensor: it gets its own bytes.
    Graph g;
    Node* w = g.placeholder("w");
    Node* relu = g.call_function("torch.ops.aten.relu_.default", {Argument::from_node(w)});
    g.output(Argument::tuple({Argument::from_node(relu)}));
    auto rr = run_graph(g, {Value::of(s.tensors.at("conv.weight"))}, s);
    REQUIRE(rr.ok());
    const Tensor& written = *s.tensors.at("conv.weight");
    CHECK_FALSE(written.storage.shared());
    CHECK_FALSE(inside(file, written.storage.data()));
    const TensorData& original = *ep.find_tensor("conv.weight");
    int negatives = 0;
    for (int64_t k = 0; k < original.numel(); ++k) {
        negatives += original.f32()[k] < 0.0f;
        CHECK(written.f32()[k] == std::max(original.f32()[k], 0.0f));
    }
    CHECK(negatives > 0); // the relu_ did change values the program still has
    check_unchanged(ep, before);
    CHECK(inside(file, original.bytes.data()));
    // The tensor not written is still shared; the clone still reads the program's bytes.
    CHECK(bytes_of(s, "conv.bias") == ep.find_tensor("conv.bias")->bytes.data());
    CHECK(bytes_of(c, "conv.weight") == original.bytes.data());
}

TEST_CASE("a train-mode batch_norm updates the state's running stats, never the program's",
          "[memory]") {
    FileBytes file = file_bytes("assets/graphs/conv_bn_relu_train.pt2");
    auto loaded = load_program(file, "conv_bn_relu_train.pt2");
    REQUIRE(loaded.ok());
    const ExportedProgram& ep = loaded.value();
    const auto before = snapshot(ep);
    const TensorData& mean = *ep.find_tensor("bn.running_mean");
    CHECK(inside(file, mean.bytes.data()));

    // The program: running_mean is a BUFFER_MUTATION output written back to the state.
    ModuleState s = ModuleState::from_program(ep);
    CHECK(bytes_of(s, "bn.running_mean") == mean.bytes.data());
    auto r = run_program(ep, s, example_inputs(ep));
    REQUIRE(r.ok());
    const Tensor& rm = *s.tensors.at("bn.running_mean");
    CHECK_FALSE(rm.storage.shared());
    CHECK(rm.storage.data() != mean.bytes.data());
    CHECK(rm.storage.to_bytes() != mean.bytes); // new values
    // conv.weight is only read: still shared
    CHECK(bytes_of(s, "conv.weight") == ep.find_tensor("conv.weight")->bytes.data());
    check_unchanged(ep, before);

    // ep.module(): batch_norm updates the stats in place and add_ counts num_batches_tracked.
    auto gm = unlift(ep);
    REQUIRE(gm.ok());
    ModuleState ms = ModuleState::from_module(gm.value());
    CHECK(bytes_of(ms, "bn.num_batches_tracked") ==
          gm.value().attrs.at("bn.num_batches_tracked")->bytes.data());
    auto mr = run_module(gm.value(), ms, example_inputs(ep));
    REQUIRE(mr.ok());
    const Tensor& count = *ms.tensors.at("bn.num_batches_tracked");
    CHECK(count.get(0) == Tensor::from_data(*ep.find_tensor("bn.num_batches_tracked")).get(0) + 1);
    CHECK_FALSE(count.storage.shared());
    CHECK(ms.tensors.at("bn.running_mean")->storage.to_bytes() != mean.bytes);
    check_unchanged(ep, before);
    CHECK(gm.value().attrs.at("bn.running_mean")->bytes == mean.bytes);
}

TEST_CASE("deflated and misaligned records are copied once, aligned, and read the same values",
          "[memory]") {
    ExportedProgram ref = pt2lab_test::load_asset("conv_relu");
    // deflated.pt2: every record deflated; python_zipfile_no_root_folder.pt2: stored,
    // but its weight records start at file offsets 51 and 966 (not 4-byte aligned).
    for (const char* rel : {"tests/corpus/good/deflated.pt2",
                            "tests/corpus/good/python_zipfile_no_root_folder.pt2"}) {
        INFO(rel);
        FileBytes file = file_bytes(rel);
        auto loaded = load_program(file, rel);
        REQUIRE(loaded.ok());
        const ExportedProgram& ep = loaded.value();
        for (const char* fqn : {"conv.weight", "conv.bias"}) {
            INFO(fqn);
            auto t = ep.find_tensor(fqn);
            REQUIRE(t);
            CHECK_FALSE(inside(file, t->bytes.data()));
            CHECK(reinterpret_cast<uintptr_t>(t->bytes.data()) % 4 == 0);
            CHECK(t->bytes == ref.find_tensor(fqn)->bytes);
        }
        ModuleState s = ModuleState::from_program(ep);
        auto r = run_program(ep, s, example_inputs(ref));
        REQUIRE(r.ok());
        ModuleState rs = ModuleState::from_program(ref);
        auto expected = run_program(ref, rs, example_inputs(ref));
        REQUIRE(expected.ok());
        CHECK(r.value().outputs[0].tensor->storage == expected.value().outputs[0].tensor->storage);
    }
    // The stored record itself is a view into the archive's buffer, at its odd offset.
    FileBytes file = file_bytes("tests/corpus/good/python_zipfile_no_root_folder.pt2");
    auto z = ZipArchive::open(file, "python_zipfile_no_root_folder.pt2");
    REQUIRE(z.ok());
    const ZipEntry* e = z.value().find("data/weights/weight_0");
    REQUIRE(e);
    auto v = z.value().view(*e);
    REQUIRE(v.ok());
    CHECK(v.value().data() == file->data() + e->data_offset);
    CHECK(v.value().size() == 864);
}
