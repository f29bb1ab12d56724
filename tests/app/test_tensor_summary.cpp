// Tensor summaries for the weights and outputs tables, checked on a real
// lesson weight against values computed here from its raw bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "io/program_loader.h"
#include "tensor_summary.h"

using namespace pt2lab;
using namespace pt2lab::app;

TEST_CASE("summaries of stored tensors of several dtypes", "[summary]") {
    TensorData f;
    f.dtype = ScalarType::Float;
    f.sizes = {2, 3};
    float vals[6] = {1.5f, -2.0f, 0.25f, std::numeric_limits<float>::quiet_NaN(), 4.0f, 0.0f};
    std::vector<uint8_t> fb(sizeof vals);
    std::memcpy(fb.data(), vals, sizeof vals);
    f.bytes = Bytes(std::move(fb));
    TensorSummary s = summarize(f, 4);
    CHECK(s.type == "f32[2, 3]");
    CHECK(s.numel == 6);
    REQUIRE(s.numeric);
    CHECK(s.min == -2.0);
    CHECK(s.max == 4.0);
    CHECK(s.mean == Approx((1.5 - 2.0 + 0.25 + 4.0 + 0.0) / 5));
    CHECK(s.nonfinite == 1);
    REQUIRE(s.first.size() == 4);
    CHECK(std::isnan(s.first[3]));
    CHECK(format_values(s.first, s.numel) == "[1.5, -2, 0.25, nan, ...]");

    Tensor t = Tensor::scalar_i64(7);
    s = summarize(t);
    CHECK(s.type == "i64[]");
    CHECK(s.min == 7);
    CHECK(format_values(s.first, s.numel) == "[7]");

    TensorData half;
    half.dtype = ScalarType::Half;
    half.sizes = {4};
    half.bytes = Bytes(std::vector<uint8_t>(8, 0));
    s = summarize(half);
    CHECK_FALSE(s.numeric);
    CHECK(s.type == "f16[4]");
}

TEST_CASE("summary of a real lesson weight", "[summary]") {
    auto ep = load_program_file(std::string(PT2LAB_SOURCE_DIR) + "/assets/graphs/conv_relu.pt2");
    REQUIRE(ep.ok());
    auto w = ep.value().find_tensor("conv.weight");
    REQUIRE(w);
    TensorSummary s = summarize(*w);
    CHECK(s.type == "f32[8, 3, 3, 3]");
    CHECK(s.numel == 216);
    const float* p = w->f32();
    float lo = p[0], hi = p[0];
    double sum = 0;
    for (int k = 0; k < 216; ++k) {
        lo = std::min(lo, p[k]);
        hi = std::max(hi, p[k]);
        sum += p[k];
    }
    CHECK(s.min == lo);
    CHECK(s.max == hi);
    CHECK(s.mean == Approx(sum / 216));
    CHECK(s.first[0] == p[0]);
    CHECK(format_number(1e-05) == "1e-05");
    CHECK(format_number(0.1) == "0.1");
    CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
}
