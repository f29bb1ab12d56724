// The restricted unpickler: real torch.save files (torch 2.14.1, tests/golden/pickle,
// written by tools/pickle_goldens.py) read back value for value, the files it must
// refuse, and hand-made hostile pickles (bombs, cycles, truncation, lies about sizes).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "io/pickle.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;
using nlohmann::json;

namespace {
const std::string kDir = "tests/golden/pickle/";

json cases() {
    json j = json::parse(read_text(source_path(kDir + "cases.json")), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
}

std::vector<uint8_t> file_bytes(const std::string& rel) {
    auto b = read_file_bytes(source_path(kDir + rel));
    REQUIRE(b.ok());
    return b.take();
}

// Compares an unpickled value with its cases.json description.
void check_value(const PyValue& v, const json& e, const std::string& path) {
    INFO(path << ": got " << v.describe() << ", expected " << e.dump().substr(0, 200));
    if (e.is_null()) {
        CHECK(v.kind == PyValue::Kind::None);
    } else if (e.is_boolean()) {
        REQUIRE(v.kind == PyValue::Kind::Bool);
        CHECK(v.b == e.get<bool>());
    } else if (e.is_number_integer()) {
        REQUIRE(v.kind == PyValue::Kind::Int);
        CHECK(v.i == e.get<int64_t>());
    } else if (e.is_number_float()) {
        REQUIRE(v.kind == PyValue::Kind::Float);
        CHECK(v.f == e.get<double>());
    } else if (e.is_string()) {
        REQUIRE(v.kind == PyValue::Kind::String);
        CHECK(v.s == e.get<std::string>());
    } else if (e.contains("float")) {
        REQUIRE(v.kind == PyValue::Kind::Float);
        std::string f = e["float"].get<std::string>();
        if (f == "-0.0")
            CHECK((v.f == 0.0 && std::signbit(v.f)));
        else
            CHECK(v.f == (f == "inf" ? INFINITY : -INFINITY));
    } else if (e.contains("tuple") || e.contains("list")) {
        const json& items = e.contains("tuple") ? e["tuple"] : e["list"];
        REQUIRE(v.kind == (e.contains("tuple") ? PyValue::Kind::Tuple : PyValue::Kind::List));
        REQUIRE(v.items.size() == items.size());
        for (size_t k = 0; k < items.size(); ++k)
            check_value(v.items[k], items[k], path + "[" + std::to_string(k) + "]");
    } else if (e.contains("dict")) {
        REQUIRE(v.kind == PyValue::Kind::Dict);
        REQUIRE(v.entries.size() == e["dict"].size());
        for (size_t k = 0; k < v.entries.size(); ++k) {
            check_value(v.entries[k].first, e["dict"][k][0], path + ".key" + std::to_string(k));
            check_value(v.entries[k].second, e["dict"][k][1], path + "." + std::to_string(k));
        }
    } else if (e.contains("tensor")) {
        REQUIRE(v.kind == PyValue::Kind::Tensor);
        auto dt = scalar_type_from_name(e["dtype"].get<std::string>());
        REQUIRE(dt);
        CHECK(v.tensor->dtype == *dt);
        CHECK(v.tensor->requires_grad == e["requires_grad"].get<bool>());
        auto npy = read_npy(file_bytes(e["tensor"].get<std::string>()), e["tensor"]);
        REQUIRE(npy.ok());
        CHECK(v.tensor->sizes == npy.value().sizes);
        // float16 / bfloat16 are stored as their int16 bits; every other dtype as itself
        CHECK(v.tensor->bytes == npy.value().bytes);
    } else {
        FAIL("unknown expected encoding " << e.dump());
    }
}

// ---- hand-made pickles ------------------------------------------------------------

struct P {
    std::vector<uint8_t> b{0x80, 2}; // PROTO 2
    P& op(uint8_t c) {
        b.push_back(c);
        return *this;
    }
    P& u8(uint8_t v) { return op(v); }
    P& u32(uint32_t v) {
        for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
        return *this;
    }
    P& str(const std::string& s) {
        op('X').u32(static_cast<uint32_t>(s.size()));
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    P& global(const std::string& module, const std::string& name) {
        op('c');
        for (const std::string& s : {module, name}) {
            b.insert(b.end(), s.begin(), s.end());
            b.push_back('\n');
        }
        return *this;
    }
    P& integer(uint8_t v) { return op('K').u8(v); }
    P& stop() { return op('.'); }
    // _rebuild_tensor_v2(storage <key>, offset, (sizes...), (strides...), False, OrderedDict())
    P& tensor(const std::string& key, int64_t storage_numel, uint8_t offset,
              std::vector<uint8_t> sizes, std::vector<uint8_t> strides) {
        global("torch._utils", "_rebuild_tensor_v2").op('(');
        op('(').str("storage").global("torch", "FloatStorage").str(key).str("cpu");
        op('J').u32(static_cast<uint32_t>(storage_numel)).op('t').op('Q');
        integer(offset).op('(');
        for (uint8_t s : sizes) integer(s);
        op('t').op('(');
        for (uint8_t s : strides) integer(s);
        op('t').op(0x89).global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
        return *this;
    }
};

// Four float32 storages named "0": 4 values 0, 1, 2, 3.
Result<std::vector<uint8_t>> four_floats(void*, const std::string& key) {
    if (key != "0") return make_error("data/" + key, "no such record");
    std::vector<uint8_t> out(16);
    for (int k = 0; k < 4; ++k) {
        float f = static_cast<float>(k);
        std::memcpy(&out[static_cast<size_t>(k) * 4], &f, 4);
    }
    return out;
}

Result<PyValue> run(const P& p, const PickleLimits& limits = {}) {
    return unpickle(p.b, "hostile.pt", "archive/data.pkl", four_floats, nullptr, limits);
}

void check_refused(const Result<PyValue>& r, const std::string& phrase) {
    REQUIRE_FALSE(r.ok());
    std::string msg = r.error().str();
    INFO(msg);
    CHECK(msg.find("hostile.pt") != std::string::npos);
    CHECK(msg.find("archive/data.pkl at byte ") != std::string::npos);
    CHECK(msg.find(phrase) != std::string::npos);
}
} // namespace

TEST_CASE("torch.save files read back value for value (torch 2.14.1)", "[pickle]") {
    json all = cases();
    REQUIRE(all["producer"]["torch_version"].get<std::string>().rfind("2.14.1", 0) == 0);
    REQUIRE(all["accepted"].size() >= 8);
    for (const auto& c : all["accepted"]) {
        std::string name = c["name"].get<std::string>();
        INFO(name);
        auto v = read_torch_save(file_bytes(c["file"].get<std::string>()), name + ".pt",
                                 c["file"].get<std::string>());
        INFO((v.ok() ? "" : v.error().str()));
        REQUIRE(v.ok());
        check_value(v.value(), c["value"], name);
    }
}

TEST_CASE("what torch.save or pickle wrote outside the tensor subset is refused", "[pickle]") {
    json all = cases();
    REQUIRE(all["refused"].size() >= 4);
    for (const auto& c : all["refused"]) {
        std::string file = c["file"].get<std::string>();
        auto v = read_torch_save(file_bytes(file), "user.pt2", "data/sample_inputs/model.pt");
        REQUIRE_FALSE(v.ok());
        std::string msg = v.error().str();
        INFO(c["name"].get<std::string>() << ": " << msg);
        CHECK(msg.find("user.pt2") != std::string::npos);
        CHECK(msg.find("data/sample_inputs/model.pt:archive/data.pkl at byte ") !=
              std::string::npos);
        CHECK(msg.find(c["error"].get<std::string>()) != std::string::npos);
    }
}

TEST_CASE("a hand-made tensor pickle reads; its lies are caught", "[pickle]") {
    auto ok = run(P().tensor("0", 4, 1, {3}, {1}).stop());
    REQUIRE(ok.ok());
    REQUIRE(ok.value().kind == PyValue::Kind::Tensor);
    CHECK(ok.value().tensor->sizes == std::vector<int64_t>{3});
    CHECK(ok.value().tensor->f32()[0] == 1.0f);
    CHECK(ok.value().tensor->f32()[2] == 3.0f);
    auto strided = run(P().tensor("0", 4, 0, {2}, {2}).stop());
    REQUIRE(strided.ok());
    CHECK(strided.value().tensor->f32()[1] == 2.0f);

    check_refused(run(P().tensor("0", 4, 2, {3}, {1}).stop()), "reaches element 4 of storage 0");
    check_refused(run(P().tensor("0", 5, 0, {4}, {1}).stop()),
                  "storage 0 should hold 5 float32 values, its record has 16 bytes");
    check_refused(run(P().tensor("1", 4, 0, {4}, {1}).stop()), "no such record");
    check_refused(run(P().tensor("0", 4, 0, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                 {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
                          .stop()),
                  "more than 16 dimensions");
}

TEST_CASE("hostile pickles: opcodes, globals, truncation", "[pickle]") {
    check_refused(run(P().global("os", "system").str("ls").op(0x85).op('R').stop()),
                  "global 'os system' is not allowed");
    check_refused(run(P().global("builtins", "eval").stop()),
                  "global 'builtins eval' is not allowed");
    check_refused(run(P().str("os").str("system").op(0x93).stop()),
                  "global 'os system' is not allowed");
    // an allowed callable applied to the wrong thing
    check_refused(run(P().global("collections", "OrderedDict").op(')').op('b').stop()),
                  "opcode BUILD (0x62) is not allowed");
    check_refused(run(P().global("collections", "OrderedDict").integer(1).op(0x85).op('R').stop()),
                  "OrderedDict(...) with arguments");
    check_refused(run(P().op(0x81).stop()), "opcode NEWOBJ (0x81) is not allowed");
    check_refused(run(P().op('i').stop()), "opcode INST (0x69) is not allowed");
    check_refused(run(P().op(0xff).stop()), "unknown pickle opcode 0xff");
    check_refused(run(P().op(']')), "ends without a STOP");
    check_refused(run(P().op('X').u32(0xffffffffu).stop()), "runs past the end of the pickle");
    check_refused(run(P().op(0x8a).u8(9).stop()), "wider than 64 bits");
    check_refused(run(P().op('a').stop()), "pops from an empty stack");
    check_refused(run(P().op('t').stop()), "needs a MARK");
    check_refused(run(P().op('h').u8(7).stop()), "memo entry 7 was never set");
    check_refused(run(P().integer(1).op('a').stop()), "APPEND onto something that is not a list");
    P proto6;
    proto6.b = {0x80, 6, '.'};
    check_refused(run(proto6), "pickle protocol 6");
    check_refused(run(P().op('Q').stop()), "pops from an empty stack");
    check_refused(run(P().integer(1).op(0x85).op('Q').stop()), "a persistent id that is not");
    check_refused(run(P().global("torch", "FloatStorage").stop()),
                  "the result holds a bare global");
}

TEST_CASE("hostile pickles: depth, self-reference, memo bombs and limits", "[pickle]") {
    P deep;
    for (int k = 0; k < 200; ++k) deep.op(']');
    for (int k = 0; k < 199; ++k) deep.op('a');
    check_refused(run(deep.stop()), "nested more than 64 levels deep");

    // l = []; l.append(l)
    check_refused(run(P().op(']').op('q').u8(0).op('h').u8(0).op('a').stop()),
                  "nested more than 64 levels deep (or contains itself)");

    // each level a list of 10 references to the level below: 10^7 values when expanded
    P bomb;
    bomb.op(']').op('q').u8(0);
    for (uint8_t level = 1; level <= 7; ++level) {
        bomb.op(']').op('(');
        for (int k = 0; k < 10; ++k) bomb.op('h').u8(static_cast<uint8_t>(level - 1));
        bomb.op('e').op('q').u8(level);
    }
    check_refused(run(bomb.stop()), "holds more than 1048576 items");

    PickleLimits small;
    small.max_pickle_bytes = 8;
    check_refused(run(P().str("0123456789").stop(), small), "more than the 8 pt2lab reads");
    small = {};
    small.max_stack = 4;
    check_refused(run(P().integer(1).integer(2).integer(3).integer(4).integer(5).stop(), small),
                  "stack grows past 4 entries");
    small = {};
    small.max_memo = 1;
    check_refused(run(P().integer(1).op('q').u8(0).op('q').u8(1).stop(), small),
                  "more than 1 memo entries");
}

TEST_CASE("the sample inputs of every lesson asset are torch's own", "[pickle]") {
    for (const auto& rel : list_dir("assets/graphs", ".pt2")) {
        ExportedProgram ep = load_asset(rel);
        INFO(rel);
        REQUIRE(ep.example_inputs.size() == 1);
        CHECK(ep.example_inputs[0].name == "x");
        CHECK(ep.example_inputs[0].tensor.dtype == ScalarType::Float);
        for (const auto& w : ep.warnings) CHECK(w.find("sample inputs") == std::string::npos);
    }
}
