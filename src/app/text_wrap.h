// Line breaking for the page's prose: at spaces, and between any two CJK
// characters, keeping closing punctuation off line starts. No ImGui.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace pt2lab::app {

// One wrapped line: bytes [begin, end) of the text, trailing spaces excluded.
struct LineSpan {
    size_t begin = 0, end = 0;
};

// Decodes the UTF-8 character at text[i] (invalid bytes decode as U+FFFD) and
// advances i past it.
uint32_t next_codepoint(std::string_view text, size_t& i);

// True for ideographs, kana, hangul, CJK punctuation and full-width forms:
// a line may break before and after them.
bool is_cjk(uint32_t cp);
// Closing punctuation (，。、）」 ... and their ASCII cousins): never starts a line.
bool no_break_before(uint32_t cp);
// Opening punctuation (（「『 ...): never ends a line.
bool no_break_after(uint32_t cp);

// How a line may break: prose (at spaces and around CJK) or code, which may also
// break after punctuation that ends a token (". , ( [ { = :" ...), so a long call
// wraps between its parts, never inside an identifier or a number.
enum class Wrap { Prose, Code };

// Splits text into lines no wider than max_width, where advance(cp) is the
// width of one character. '\n' always ends a line. A word (code: a token)
// wider than the line is cut between characters; closing punctuation that
// would overflow hangs past the edge instead of starting the next line.
std::vector<LineSpan> wrap_lines(std::string_view text, float max_width,
                                 const std::function<float(uint32_t)>& advance,
                                 Wrap mode = Wrap::Prose);

} // namespace pt2lab::app
