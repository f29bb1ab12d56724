// The small Markdown subset lesson prose is written in (docs/LESSONS.md
// section 2): split into blocks and checked, so every lesson only uses what
// the page's own renderer draws. Inline formatting is left in the text.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace pt2lab {

struct MdBlock {
    enum class Kind { Heading, Paragraph, Bullets, Numbered, Table, Code } kind = Kind::Paragraph;
    int line = 0;                   // first line, counted in the file
    std::string text;               // Heading / Paragraph: inline Markdown (lines joined by ' ')
    std::string lang;               // Code: the fence's info word ("python", "text" or "")
    std::vector<std::string> items; // Bullets / Numbered: one inline text per item;
                                    // Code: the lines
    std::vector<std::vector<std::string>> rows; // Table: header row first, cells trimmed
};

// Splits prose into blocks. `first_line` is the file line of text's first line.
// Errors name the file and line of anything outside the subset.
Result<std::vector<MdBlock>> markdown_blocks(const std::string& text, const std::string& file,
                                             int first_line);
Status check_markdown(const std::string& text, const std::string& file, int first_line);
// Inline text only (titles, check options): `code`, *emphasis*, **strong**.
Status check_inline_markdown(const std::string& text, const std::string& file, int line);

} // namespace pt2lab
