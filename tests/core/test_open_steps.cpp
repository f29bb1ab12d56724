// Opening in pieces (JsonParser, ProgramLoad, Opening): a file read in the
// smallest steps there are gives the same values, the same program and the
// same errors as one read to the end, and the JSON tokenizer accepts exactly
// what a strict JSON parser accepts (nlohmann's, the oracle here).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "util/json_read.h"

using namespace pt2lab;
using namespace pt2lab_test;

namespace {

// nlohmann's strict parse, without exceptions: "" when it refuses the text.
std::string oracle(const std::string& text) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded()) return "";
    return j.dump();
}

// Ours, stepped one byte at a time; "" when refused (the error must then say "invalid JSON").
std::string stepped(const std::string& text, size_t step_bytes) {
    JsonParser p(text, "t.json");
    int guard = 0;
    while (!p.step(step_bytes)) {
        CHECK(p.done() <= p.size());
        REQUIRE(++guard < 1000000);
    }
    auto r = p.finish();
    if (!r.ok()) return "";
    return r.value().dump();
}

} // namespace

TEST_CASE("JSON tokenizer: values as a strict parser reads them, in any steps", "[util]") {
    const char* good[] = {
        "0",
        "-0",
        "1",
        "-1",
        "12345678901234",
        "1.5",
        "-1.5e3",
        "1E+2",
        "1e-2",
        "0.000001",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551616", // a float
        "-9223372036854775809",
        "true",
        "false",
        "null",
        "\"\"",
        "\"a\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\u4e2d\\ud83d\\ude00\"",
        "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"",
        "[]",
        "{}",
        " [ 1 , 2 ] ",
        "{\"a\":{\"b\":[1,{\"c\":null}],\"d\":\"e\"},\"f\":[[],[{}]]}",
        "\t\n\r [1]\n",
        "[1.25,-0.0,3e0]",
        "{\"k\":\"v\",\"k2\":[true,false]}",
    };
    for (const char* t : good) {
        INFO(t);
        const std::string want = oracle(t);
        REQUIRE_FALSE(want.empty());
        CHECK(stepped(t, SIZE_MAX) == want);
        CHECK(stepped(t, 1) == want);
    }
    const char* bad[] = {
        "",
        " ",
        "[",
        "]",
        "{",
        "[1,]",
        "{\"a\":1,}",
        "[1 2]",
        "{\"a\" 1}",
        "{1:2}",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "tru",
        "nul",
        "falsey",
        "[1]x",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\x01\"",
        "\"\xc3\"",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"",
        "[1]]",
        "{\"a\":1}}",
        "NaN",
        "[Infinity]",
        "{\"a\":}",
        "[,1]",
        "1e400",
        "[-1e999]",
        "// c\n1",
        "'a'",
    };
    for (const char* t : bad) {
        INFO(t);
        REQUIRE(oracle(t).empty());
        JsonParser p(t, "t.json");
        p.step(SIZE_MAX);
        auto r = p.finish();
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().file == "t.json");
        CHECK(r.error().message.rfind("invalid JSON: ", 0) == 0);
        CHECK(r.error().message.find(" at line ") != std::string::npos);
        CHECK(stepped(t, 1).empty());
    }
    // Where: line and column of the problem.
    auto r = parse_json_text("{\n  \"a\": [1,\n  2,]\n}", "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "invalid JSON: expected a value, found ']' at line 3, column 5 "
                               "(byte 17)");
}

TEST_CASE("JSON tokenizer: a real export read in steps equals one read", "[util]") {
    const std::string text = read_text(source_path("tests/golden/zoo/manifest.json"));
    REQUIRE_FALSE(text.empty());
    const std::string want = oracle(text);
    REQUIRE_FALSE(want.empty());
    CHECK(stepped(text, 1) == want);
    CHECK(stepped(text, 4096) == want);
}

TEST_CASE("Opening in the smallest pieces gives what one open gives", "[workspace]") {
    for (const std::string& path : list_dir("assets/graphs", ".pt2")) {
        INFO(path);
        auto whole = Workspace::open_file(source_path(path));
        REQUIRE(whole.ok());
        auto bytes = read_file_bytes(source_path(path));
        REQUIRE(bytes.ok());
        Opening o(bytes.take(), path.substr(path.find_last_of('/') + 1));
        uint64_t last = 0;
        int steps = 0;
        while (!o.step(1e-9)) {
            OpenProgress p = o.progress();
            CHECK(p.done >= last);
            CHECK(p.done <= p.total);
            CHECK_FALSE(p.what.empty());
            last = p.done;
            REQUIRE(++steps < 1000000);
        }
        CHECK(steps >= 3); // the archive, the text, the nodes, ep.module()
        CHECK(o.progress().done == 1000);
        auto ws = o.finish();
        REQUIRE(ws.ok());
        const std::string a = fingerprint(*whole.value()), b = fingerprint(*ws.value());
        INFO(first_difference(a, b));
        CHECK(a == b);
    }
}

TEST_CASE("Opening in pieces fails where one open fails, with the same message", "[workspace]") {
    auto bad = list_dir("tests/corpus/bad", ".pt2");
    auto bad_json = list_dir("tests/corpus/bad", ".json");
    bad.insert(bad.end(), bad_json.begin(), bad_json.end());
    REQUIRE(bad.size() > 40);
    for (const std::string& path : bad) {
        INFO(path);
        auto whole = Workspace::open_file(source_path(path));
        auto bytes = read_file_bytes(source_path(path));
        REQUIRE(bytes.ok());
        Opening o(bytes.take(), path.substr(path.find_last_of('/') + 1));
        int steps = 0;
        while (!o.step(1e-9)) REQUIRE(++steps < 1000000);
        auto ws = o.finish();
        REQUIRE(ws.ok() == whole.ok());
        if (!ws.ok()) CHECK(ws.error().str() == whole.error().str());
    }
}

TEST_CASE("An opening dropped halfway leaves nothing behind", "[workspace]") {
    auto bytes = read_file_bytes(source_path("assets/graphs/conv_bn_relu_train.pt2"));
    REQUIRE(bytes.ok());
    for (int stop = 1; stop < 8; ++stop) {
        Opening o(bytes.value(), "conv_bn_relu_train.pt2");
        bool over = false;
        for (int k = 0; k < stop && !over; ++k) over = o.step(1e-9);
        if (over) break; // opened before the stop: nothing left to drop
        // ~Opening frees the load (ASan checks the leak).
    }
}

namespace {

// The file's bytes with its late ranges (zip_late_ranges over its last `tail`
// bytes, every weight record of over 1 KB) not yet there: zeros, as the page's
// buffer holds them before the browser has read them.
struct Arriving {
    std::vector<uint8_t> whole;
    std::vector<ByteRange> late;
    std::shared_ptr<std::vector<uint8_t>> buffer;

    explicit Arriving(const std::string& path, size_t tail = 1 << 20) {
        auto b = read_file_bytes(source_path(path));
        REQUIRE(b.ok());
        whole = b.take();
        tail = std::min(tail, whole.size());
        late = zip_late_ranges(whole.data() + whole.size() - tail, tail, whole.size(), 0);
        buffer = std::make_shared<std::vector<uint8_t>>(whole);
        for (const ByteRange& r : late)
            std::fill(buffer->begin() + static_cast<std::ptrdiff_t>(r.begin),
                      buffer->begin() + static_cast<std::ptrdiff_t>(r.end), 0);
    }
    Result<std::unique_ptr<Workspace>> open(const std::string& name) const {
        OpenOptions opt;
        opt.late = late;
        Opening o(std::shared_ptr<const std::vector<uint8_t>>(buffer), name, opt);
        int steps = 0;
        while (!o.step(1e-9)) REQUIRE(++steps < 1000000);
        return o.finish();
    }
    void arrive() const { std::copy(whole.begin(), whole.end(), buffer->begin()); }
};

} // namespace

TEST_CASE("A .pt2 opens before its weights arrive, and is the same file once they have",
          "[workspace]") {
    int files = 0;
    for (const std::string& path : list_dir("assets/graphs", ".pt2")) {
        INFO(path);
        const std::string name = path.substr(path.find_last_of('/') + 1);
        auto whole = Workspace::open_file(source_path(path));
        REQUIRE(whole.ok());
        Arriving a(path);
        if (a.late.empty()) continue; // the small lessons: no weight record over 1 KB
        ++files;
        uint64_t late_bytes = 0;
        for (const ByteRange& r : a.late) late_bytes += r.end - r.begin;
        auto ws = a.open(name);
        if (!ws.ok()) FAIL(ws.error().str());
        Workspace& w = *ws.value();
        // The graph, its code and every shape are there; no value may be read yet.
        CHECK_FALSE(w.file_whole());
        CHECK(w.code(GraphView::Module).text == whole.value()->code(GraphView::Module).text);
        CHECK(w.program_str() == whole.value()->program_str());
        Status s = w.begin(Action::of(Action::Kind::Run));
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().str().find("still being read") != std::string::npos);
        CHECK_FALSE(w.save_pt2().ok());
        // The bytes arrive; the check goes in pieces of at most 4 MB, and then the
        // values are the file's: views into the buffer, not copies made at the open.
        a.arrive();
        uint64_t done = 0, total = 0;
        int pieces = 0;
        while (true) {
            auto r = w.check_arrived(std::chrono::steady_clock::time_point::min(), &done, &total);
            REQUIRE(r.ok());
            ++pieces;
            if (r.value()) break;
            REQUIRE(pieces < 100000);
        }
        CHECK(done == total);
        CHECK(total >= late_bytes);
        CHECK(w.file_whole());
        const std::string fa = fingerprint(*whole.value()), fb = fingerprint(w);
        INFO(first_difference(fa, fb));
        CHECK(fa == fb);
        auto run = w.apply(Action::of(Action::Kind::Run));
        REQUIRE(run.ok());
        CHECK(w.save_pt2().ok());
    }
    CHECK(files >= 1); // resnet_style.pt2: 7 of its weight records arrive late
}

TEST_CASE("Weights that arrive damaged are named; a tail without the directory defers nothing",
          "[workspace]") {
    Arriving a("assets/graphs/resnet_style.pt2");
    REQUIRE_FALSE(a.late.empty());
    auto ws = a.open("resnet_style.pt2");
    REQUIRE(ws.ok());
    a.arrive();
    // One byte of the last late range differs from the file.
    (*a.buffer)[a.late.back().end - 1] ^= 0x5a;
    Result<bool> r = false;
    while (true) {
        r = ws.value()->check_arrived(std::chrono::steady_clock::time_point::max());
        if (!r.ok() || r.value()) break;
    }
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == "resnet_style.pt2");
    CHECK(r.error().where.find("data/weights/") != std::string::npos);
    CHECK(r.error().message.find("CRC mismatch") != std::string::npos);
    CHECK_FALSE(ws.value()->file_whole());

    // 100 bytes of tail do not reach the central directory: read the file whole.
    CHECK(zip_late_ranges(a.whole.data() + a.whole.size() - 100, 100, a.whole.size(), 0).empty());
    // A JSON file has no records to defer, and refuses ranges it was given.
    const std::string json = read_text(source_path("tests/golden/zoo/manifest.json"));
    CHECK(
        zip_late_ranges(reinterpret_cast<const uint8_t*>(json.data()), json.size(), json.size(), 0)
            .empty());
    OpenOptions opt;
    opt.late = {{10, 20}};
    auto bytes = read_file_bytes(source_path("tests/corpus/good/bare_model.json"));
    REQUIRE(bytes.ok());
    Opening o(bytes.take(), "bare_model.json", opt);
    while (!o.step()) {
    }
    auto j = o.finish();
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().message.find("only a .pt2 archive") != std::string::npos);
}
