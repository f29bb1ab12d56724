// Writing .pt2 archives (io/pt2_writer.h, Workspace::save_pt2): what torch
// wrote comes back byte for byte, and every saved program - as loaded,
// decomposed, converted - opens again in pt2lab with the same graph,
// signature, weights and outputs. (tools/save_roundtrip.py checks the same
// files against real torch.export.load.)
#include <catch2/catch.hpp>

#include <cstring>

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
