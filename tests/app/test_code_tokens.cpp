// Syntax colouring of generated code: the tokens cover each line exactly and
// dotted targets, attributes, numbers and strings come out whole.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "code_tokens.h"

using namespace pt2lab::app;

namespace {
std::vector<std::pair<std::string, TokenKind>> toks(const std::string& line) {
    std::vector<std::pair<std::string, TokenKind>> out;
    size_t at = 0;
    for (const Token& t : tokenize_python_line(line)) {
        REQUIRE(t.begin == at); // no gaps, no overlaps
        at = t.end;
        if (t.kind != TokenKind::Space)
            out.push_back({line.substr(t.begin, t.end - t.begin), t.kind});
    }
    REQUIRE(at == line.size());
    return out;
}
} // namespace

TEST_CASE("a call line of gm.code", "[tokens]") {
    auto t =
        toks("    conv2d = torch.ops.aten.conv2d.default(x, conv_weight, None, [1, 1], [1, 1]);  "
             "x = conv_weight = None");
    REQUIRE(t.size() > 10);
    CHECK(t[0] == std::make_pair(std::string("conv2d"), TokenKind::Name));
    CHECK(t[1].second == TokenKind::Punct);
    CHECK(t[2] == std::make_pair(std::string("torch.ops.aten.conv2d.default"), TokenKind::Target));
    CHECK(t[6] == std::make_pair(std::string("conv_weight"), TokenKind::Name));
    CHECK(t[8] == std::make_pair(std::string("None"), TokenKind::Keyword));
    CHECK(t[11] == std::make_pair(std::string("1"), TokenKind::Number));
}

TEST_CASE("attributes, numbers, strings, comments", "[tokens]") {
    auto t = toks("def forward(self, x):");
    CHECK(t[0] == std::make_pair(std::string("def"), TokenKind::Keyword));
    CHECK(t[1] == std::make_pair(std::string("forward"), TokenKind::Name));
    t = toks("    bn_weight = self.bn.weight");
    CHECK(t[2] == std::make_pair(std::string("self.bn.weight"), TokenKind::Attribute));
    t = toks("    b = f(a, 0.1, 1e-05, -3, 'x\\'y', \"s\")  # note");
    CHECK(t[6] == std::make_pair(std::string("0.1"), TokenKind::Number));
    CHECK(t[8] == std::make_pair(std::string("1e-05"), TokenKind::Number));
    CHECK(t[11] == std::make_pair(std::string("3"), TokenKind::Number));
    CHECK(t[13] == std::make_pair(std::string("'x\\'y'"), TokenKind::String));
    CHECK(t[15] == std::make_pair(std::string("\"s\""), TokenKind::String));
    CHECK(t.back() == std::make_pair(std::string("# note"), TokenKind::Comment));
    t = toks("    getitem = operator.getitem(x, 0)");
    CHECK(t[2] == std::make_pair(std::string("operator.getitem"), TokenKind::Target));
    CHECK(toks("").empty());
    t = toks("    s = 'unterminated");
    CHECK(t.back().second == TokenKind::String);
}
