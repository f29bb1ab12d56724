// Syntax colouring for the code view: one line of torch.fx's generated Python
// split into tokens, dotted targets and self.attributes whole. No ImGui.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace pt2lab::app {

enum class TokenKind {
    Space,
    Keyword,   // def, return, None, True, False, class, ...
    Name,      // an identifier (the view colours node names by their kind)
    Target,    // a dotted call target: torch.ops.aten.relu.default, operator.getitem, pytree.*
    Attribute, // self.conv.weight
    Number,
    String,
    Comment,
    Punct, // ( ) [ ] , : = ; . and operators
};

struct Token {
    size_t begin = 0, end = 0; // bytes of the line
    TokenKind kind = TokenKind::Space;
};

// Tokens covering the whole line, in order, with no gaps.
std::vector<Token> tokenize_python_line(std::string_view line);

} // namespace pt2lab::app
