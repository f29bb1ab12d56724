// Zip reading: CRC-32, DEFLATE, PyTorch's zip64 layout and Python's plain zips.
#include <catch2/catch.hpp>

#include <cstring>

#include "io/zip.h"
#include "test_support.h"

using namespace pt2lab;
using namespace pt2lab_test;

TEST_CASE("crc32 check value", "[zip]") {
    const char* s = "123456789";
    CHECK(crc32(reinterpret_cast<const uint8_t*>(s), std::strlen(s)) == 0xCBF43926u);
    CHECK(crc32(nullptr, 0) == 0u);
}

TEST_CASE("crc32 of every length and alignment equals the bitwise definition", "[zip]") {
    std::vector<uint8_t> data(300);
    uint32_t x = 12345;
    for (auto& b : data) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);
    auto bitwise = [](const uint8_t* p, size_t n) {
        uint32_t c = 0xffffffffu;
        for (size_t i = 0; i < n; ++i) {
            c ^= p[i];
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        return c ^ 0xffffffffu;
    };
    for (size_t off = 0; off < 9; ++off)
        for (size_t n = 0; off + n <= data.size(); n += 7) {
            INFO(off << " " << n);
            CHECK(crc32(data.data() + off, n) == bitwise(data.data() + off, n));
        }
}

TEST_CASE("PyTorch-written archives: zip64, stored, sizes in the central directory", "[zip]") {
    auto bytes = read_file_bytes(source_path("assets/graphs/conv_relu.pt2"));
    REQUIRE(bytes.ok());
    auto z = ZipArchive::open(bytes.take(), "conv_relu.pt2");
    REQUIRE(z.ok());
    CHECK(z.value().zip64());
    const ZipEntry* e = z.value().find("conv_relu/models/model.json");
    REQUIRE(e);
    CHECK(e->method == 0);
    CHECK((e->flags & 8) != 0); // sizes only after the data / in the central directory
    auto data = z.value().read(*e);
    REQUIRE(data.ok());
    CHECK(data.value().size() == e->size);
    CHECK(data.value()[0] == '{');
    // every record of PyTorch's writer starts 64-byte aligned
    for (const auto& entry : z.value().entries()) CHECK(z.value().read(entry).ok());
}

TEST_CASE("deflated and plain zips read back the same bytes", "[zip]") {
    auto stored = ZipArchive::open(
        read_file_bytes(source_path("tests/corpus/good/python_zipfile_no_root_folder.pt2")).take(),
        "a");
    auto deflated = ZipArchive::open(
        read_file_bytes(source_path("tests/corpus/good/deflated.pt2")).take(), "b");
    REQUIRE(stored.ok());
    REQUIRE(deflated.ok());
    CHECK_FALSE(stored.value().zip64());
    int compared = 0;
    for (const auto& e : deflated.value().entries()) {
        CHECK(e.method == 8);
        auto a = deflated.value().read(e);
        REQUIRE(a.ok());
        std::string plain_name = e.name.substr(e.name.find('/') + 1);
        auto b = stored.value().read(plain_name);
        REQUIRE(b.ok());
        CHECK(a.value() == b.value());
        ++compared;
    }
    CHECK(compared >= 10);
}

TEST_CASE("inflate rejects corrupt streams without crashing", "[zip]") {
    const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x12};
    CHECK_FALSE(inflate_raw(junk, sizeof junk, 100).ok());
    CHECK_FALSE(inflate_raw(junk, 0, 100).ok());
    // a valid fixed-Huffman stream of "hi" claims the wrong size
    const uint8_t hi[] = {0xcb, 0xc8, 0x04, 0x00};
    auto ok = inflate_raw(hi, sizeof hi, 2);
    REQUIRE(ok.ok());
    CHECK(std::string(ok.value().begin(), ok.value().end()) == "hi");
    CHECK_FALSE(inflate_raw(hi, sizeof hi, 5).ok());
    CHECK_FALSE(inflate_raw(hi, sizeof hi, 1).ok());
}
