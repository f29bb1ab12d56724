// The CJK-aware line breaker: Chinese wraps between any two characters,
// closing punctuation never starts a line, English words stay whole.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "text_wrap.h"

using namespace pt2lab::app;

namespace {

// CJK characters are 2 units wide, everything else 1 (like a monospace CJK font).
float advance(uint32_t cp) {
    return is_cjk(cp) ? 2.0f : 1.0f;
}

std::vector<std::string> wrap(const std::string& text, float width, Wrap mode = Wrap::Prose) {
    std::vector<std::string> out;
    for (const LineSpan& l : wrap_lines(text, width, advance, mode))
        out.push_back(text.substr(l.begin, l.end - l.begin));
    return out;
}

float width_of(const std::string& s) {
    float w = 0;
    for (size_t i = 0; i < s.size();) w += advance(next_codepoint(s, i));
    return w;
}

uint32_t first_codepoint(const std::string& s) {
    size_t i = 0;
    return s.empty() ? 0 : next_codepoint(s, i);
}

} // namespace

TEST_CASE("UTF-8 decoding", "[text]") {
    std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";
    size_t i = 0;
    CHECK(next_codepoint(s, i) == 'a');
    CHECK(next_codepoint(s, i) == 0xE9);
    CHECK(next_codepoint(s, i) == 0x4E2D);
    CHECK(next_codepoint(s, i) == 0x1F600);
    CHECK(i == s.size());
    std::string bad = "\xE4\xB8"; // truncated
    i = 0;
    CHECK(next_codepoint(bad, i) == 0xFFFD);
    CHECK(i > 0);
}

TEST_CASE("English wraps at spaces only", "[text]") {
    auto lines = wrap("the graph is a list of nodes", 12);
    REQUIRE(lines == std::vector<std::string>{"the graph is", "a list of", "nodes"});
    // A word longer than the line is cut between characters.
    lines = wrap("torch.ops.aten.conv2d.default", 10);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "torch.ops.");
    for (const auto& l : lines) CHECK(width_of(l) <= 10);
}

TEST_CASE("Chinese wraps between any two characters", "[text]") {
    // 16 characters, 2 units each, lines of 10 units: 5 characters per line.
    std::string text = "量化需要知道每個張量的生產者與使用";
    auto lines = wrap(text, 10);
    REQUIRE(lines.size() == 4);
    for (const auto& l : lines) CHECK(width_of(l) <= 10);
    std::string joined;
    for (const auto& l : lines) joined += l;
    CHECK(joined == text);
    CHECK(lines[0] == "量化需要知");
}

TEST_CASE("closing punctuation never starts a line; opening never ends one", "[text]") {
    // "圖中每個節點，" : the comma would start line 2; it hangs on line 1 instead.
    auto lines = wrap("圖中每個節點，都是一個運算。", 12);
    for (const auto& l : lines) {
        INFO(l);
        CHECK_FALSE(no_break_before(first_codepoint(l)));
    }
    CHECK(lines[0] == "圖中每個節點，");
    // An opening bracket stays with what follows it: 「 fits on line 1 but moves down.
    lines = wrap("這是一個「節點」", 10);
    CHECK(lines == std::vector<std::string>{"這是一個", "「節點」"});
}

TEST_CASE("mixed Chinese, English words and inline code", "[text]") {
    auto lines = wrap("呼叫 torch.export.export 之後得到 ExportedProgram 物件", 20);
    for (const auto& l : lines) {
        INFO(l);
        CHECK(width_of(l) <= 20.5f);
        CHECK(l.front() != ' ');
        CHECK(l.back() != ' ');
    }
    // The Latin words are never cut: both fit in a line, so each is whole somewhere.
    bool export_whole = false, ep_whole = false;
    for (const auto& l : lines) {
        export_whole |= l.find("torch.export.export") != std::string::npos;
        ep_whole |= l.find("ExportedProgram") != std::string::npos;
    }
    CHECK(export_whole);
    CHECK(ep_whole);
    // Between a CJK character and a Latin letter a break is allowed without a space.
    lines = wrap("節點node", 5);
    CHECK(lines == std::vector<std::string>{"節點", "node"});
}

TEST_CASE("newlines end lines; empty text is one empty line", "[text]") {
    CHECK(wrap("a\nb", 100) == std::vector<std::string>{"a", "b"});
    CHECK(wrap("a\n\nb", 100) == std::vector<std::string>{"a", "", "b"});
    CHECK(wrap("", 100) == std::vector<std::string>{""});
}

TEST_CASE("code wraps between tokens, never inside an identifier", "[text]") {
    // A lesson's code line wider than the panel.
    const std::string line = "ep2 = ep.run_decompositions(decomp_table=default_decompositions())";
    auto lines = wrap(line, 26, Wrap::Code);
    std::string joined;
    for (const auto& l : lines) {
        INFO(l);
        CHECK(width_of(l) <= 26.5f);
        joined += l;
    }
    // Nothing lost but the spaces at the breaks.
    std::string squeezed;
    for (char c : line)
        if (c != ' ') squeezed += c;
    std::string joined_squeezed;
    for (char c : joined)
        if (c != ' ') joined_squeezed += c;
    CHECK(joined_squeezed == squeezed);
    // Every identifier is whole on one line.
    for (const char* id : {"run_decompositions", "decomp_table", "default_decompositions"}) {
        bool whole = false;
        for (const auto& l : lines) whole |= l.find(id) != std::string::npos;
        CHECK(whole);
    }
    CHECK(lines == std::vector<std::string>{"ep2 = ep.", "run_decompositions(",
                                            "decomp_table=", "default_decompositions())"});
    // Prose would have cut the 60-character word between characters, inside a name.
    bool whole = false;
    for (const auto& l : wrap(line, 26)) whole |= l.find("decomp_table") != std::string::npos;
    CHECK_FALSE(whole);
    // A closing bracket or a dot never starts a code line; `({})` stays whole.
    for (const auto& l : wrap("ep.run_decompositions({})", 10, Wrap::Code)) {
        INFO(l);
        CHECK(l.front() != ')');
        CHECK(l.front() != '.');
        CHECK(l.front() != '}');
    }
    // A token wider than the line is still cut (nothing else fits).
    CHECK(wrap("abcdefghij", 4, Wrap::Code) == std::vector<std::string>{"abcd", "efgh", "ij"});
}
