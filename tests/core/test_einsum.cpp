// parse_einsum (graph/einsum_equation.h) reads equations as ATen's einsum does:
// the aligned order the Core ATen rule lowers with, and ATen's refusals. The
// kernel itself is checked against torch in tests/golden/exec (einsum_* cases) and
// the rule by the zoo's maxvit_reduced.
#include <catch2/catch.hpp>

#include "graph/einsum_equation.h"

using namespace pt2lab;

namespace {
int label(char ch) {
    return ch <= 'Z' ? ch - 'A' : ch - 'a' + 26;
}
} // namespace

TEST_CASE("einsum: MaxViT's spaced capitals align output labels first, then the contracted",
          "[exec]") {
    auto eq =
        parse_einsum("B G H I D, B G H J D -> B G H I J", {{1, 16, 2, 16, 8}, {1, 16, 2, 16, 8}});
    REQUIRE(eq.ok());
    const EinsumEquation& e = eq.value();
    CHECK(e.out_dims() == 5);
    CHECK(e.aligned_dims == 6);
    CHECK(e.position[size_t(label('J'))] == 4);
    CHECK(e.position[size_t(label('D'))] == 5); // contracted: after the output's
    CHECK(e.size[size_t(label('D'))] == 8);
    CHECK(e.operands[1] ==
          std::vector<int>{label('B'), label('G'), label('H'), label('J'), label('D')});
    CHECK_FALSE(e.repeats_a_label());
}

TEST_CASE("einsum: an implicit output is the labels seen once, capitals first", "[exec]") {
    auto eq = parse_einsum("bA,Ac", {{2, 3}, {3, 4}});
    REQUIRE(eq.ok());
    CHECK(eq.value().output == std::vector<int>{label('b'), label('c')});
    auto diag = parse_einsum("ii", {{3, 3}});
    REQUIRE(diag.ok());
    CHECK(diag.value().output.empty());
    CHECK(diag.value().repeats_a_label());
    auto broadcast = parse_einsum("ij,ij->ij", {{1, 3}, {4, 3}});
    REQUIRE(broadcast.ok());
    CHECK(broadcast.value().size[size_t(label('i'))] == 4);
}

TEST_CASE("einsum: ATen's refusals, and the ellipsis pt2lab does not take", "[exec]") {
    struct Bad {
        const char* eq;
        std::vector<std::vector<int64_t>> sizes;
        const char* message;
    };
    const Bad bad[] = {
        {"ab,bc->ac", {{2, 3}}, "einsum(): fewer operands were provided than specified"},
        {"ab", {{2, 3}, {3}}, "einsum(): more operands were provided than specified"},
        {"a1", {{2, 3}}, "einsum(): invalid subscript given at index 1"},
        {"ab->ab",
         {{2}},
         "einsum(): the number of subscripts in the equation (2) does not "
         "match the number of dimensions (1) for operand 0"},
        {"ab->ca", {{2, 2}}, "einsum(): output subscript c does not appear in the equation"},
        {"ab->aa", {{2, 2}}, "einsum(): output subscript a appears more than once"},
        {"aa->a",
         {{2, 3}},
         "einsum(): subscript a is repeated for operand 0 but the sizes "
         "don't match, 3 != 2"},
        {"ab,bc->ac",
         {{2, 3}, {4, 4}},
         "einsum(): subscript b has size 4 for operand 1 which "
         "does not broadcast with previously seen size 3"},
        {"a..b,b",
         {{2, 3}, {3}},
         "einsum(): found '.' for operand 0 that is not part of any "
         "ellipsis"},
        {"...ab,b", {{2, 3}, {3}}, "ellipsis (...) is not supported by pt2lab"},
        {"ab", {}, "einsum(): must provide at least one operand"},
    };
    for (const Bad& b : bad) {
        INFO(b.eq);
        auto eq = parse_einsum(b.eq, b.sizes);
        REQUIRE_FALSE(eq.ok());
        CHECK(eq.error().message.find(b.message) != std::string::npos);
    }
}
