// Draws lesson prose (the Markdown subset of docs/LESSONS.md, as the core's
// markdown_blocks() splits it) with Dear ImGui: headings, paragraphs with
// `code`, *emphasis* and **strong**, lists, tables and copyable code blocks,
// wrapped with CJK break opportunities (text_wrap.h's rules).
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "app.h"

namespace pt2lab::app::ui {

// Inline Markdown laid out in lines of at most `width` device pixels.
struct InlineLayout {
    struct Piece {
        std::string text;
        int style = 0; // 0 plain, 1 code, 2 emphasis, 3 strong
        float x = 0;
        int line = 0;
        float w = 0;
    };
    std::vector<Piece> pieces;
    int lines = 1;
    float line_h = 0;
    float height() const { return static_cast<float>(lines) * line_h; }
};
InlineLayout layout_inline(const std::string& markdown, float width);
// Draws a layout with its top-left at `pos` (no ImGui item is added).
void draw_inline(const InlineLayout& l, ImVec2 pos, ImU32 color = 0);
// Inline Markdown as a wrapped text item at the cursor.
void inline_text(const std::string& markdown, ImU32 color = 0, float width = 0);
// A list of blocks; code blocks get a Copy button (app.copy).
void markdown_view(App& app, const std::vector<MdBlock>& blocks, const char* id);

} // namespace pt2lab::app::ui
