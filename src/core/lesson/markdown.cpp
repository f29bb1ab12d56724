// Block splitter and checker for the lesson Markdown subset: "### " headings,
// paragraphs, "- " and "1. " lists (one level), pipe tables, ``` code blocks,
// and inline `code`, *emphasis*, **strong**. Anything else is an error.
#include "lesson/markdown.h"

#include <cctype>
#include <sstream>

namespace pt2lab {

namespace {

Error md_error(const std::string& file, int line, const std::string& message,
               const std::string& hint = {}) {
    Error e = make_error("line " + std::to_string(line), message, hint);
    e.file = file;
    return e;
}

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    size_t b = s.find_last_not_of(" \t");
    return s.substr(a, b - a + 1);
}

bool starts_with(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

bool indented(const std::string& line) {
    return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

// "12. item" -> true, with the item text.
bool numbered_item(const std::string& line, std::string& item) {
    size_t k = 0;
    while (k < line.size() && line[k] >= '0' && line[k] <= '9') ++k;
    if (k == 0 || k + 1 >= line.size() || line[k] != '.' || line[k + 1] != ' ') return false;
    item = trim(line.substr(k + 2));
    return true;
}

std::vector<std::string> table_cells(const std::string& line) {
    std::string s = trim(line);
    if (!s.empty() && s.front() == '|') s.erase(0, 1);
    if (!s.empty() && s.back() == '|') s.pop_back();
    std::vector<std::string> cells;
    std::string cur;
    bool in_code = false;
    for (char c : s) {
        if (c == '`') in_code = !in_code;
        if (c == '|' && !in_code) {
            cells.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    cells.push_back(trim(cur));
    return cells;
}

bool is_separator_row(const std::vector<std::string>& cells) {
    for (const auto& c : cells) {
        if (c.empty()) return false;
        for (char ch : c)
            if (ch != '-' && ch != ':') return false;
    }
    return true;
}

} // namespace

Status check_inline_markdown(const std::string& text, const std::string& file, int line) {
    // Outside `code`: no links, images, HTML, and balanced * / ** markers.
    bool in_code = false;
    int stars_single = 0, stars_double = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '`') {
            in_code = !in_code;
            continue;
        }
        if (in_code) continue;
        if (c == '*') {
            if (i + 1 < text.size() && text[i + 1] == '*') {
                ++stars_double;
                ++i;
            } else {
                ++stars_single;
            }
        } else if (c == '<' && i + 1 < text.size() &&
                   (std::isalpha(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '/')) {
            return md_error(file, line, "HTML is not part of the lesson Markdown",
                            "write plain text, or put it in `inline code`");
        } else if (c == ']' && i + 1 < text.size() && text[i + 1] == '(') {
            return md_error(file, line, "links are not part of the lesson Markdown",
                            "the canvas cannot follow them; name the place in words");
        } else if (c == '!' && i + 1 < text.size() && text[i + 1] == '[') {
            return md_error(file, line, "images are not part of the lesson Markdown");
        }
    }
    if (in_code) return md_error(file, line, "an `inline code` span is not closed");
    if (stars_single % 2) return md_error(file, line, "an *emphasis* is not closed");
    if (stars_double % 2) return md_error(file, line, "a **strong** span is not closed");
    return {};
}

Result<std::vector<MdBlock>> markdown_blocks(const std::string& text, const std::string& file,
                                             int first_line) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::vector<MdBlock> out;
    size_t i = 0;
    while (i < lines.size()) {
        const std::string& line = lines[i];
        int lineno = first_line + static_cast<int>(i);
        std::string t = trim(line);
        if (t.empty()) {
            ++i;
            continue;
        }
        MdBlock b;
        b.line = lineno;
        if (starts_with(line, "```")) {
            b.kind = MdBlock::Kind::Code;
            b.lang = trim(line.substr(3));
            size_t k = i + 1;
            while (k < lines.size() && !starts_with(lines[k], "```")) b.items.push_back(lines[k++]);
            if (k >= lines.size()) return md_error(file, lineno, "a ``` block is not closed");
            out.push_back(b);
            i = k + 1;
            continue;
        }
        if (indented(line))
            return md_error(file, lineno, "indented lines are not part of the lesson Markdown",
                            "lists are one level deep, one line per item; code goes in ``` blocks");
        if (starts_with(t, "#")) {
            if (!starts_with(t, "### ") || starts_with(t, "####"))
                return md_error(file, lineno, "prose headings are \"### \"",
                                "\"# \" is the lesson title, \"## \" starts a step");
            b.kind = MdBlock::Kind::Heading;
            b.text = trim(t.substr(4));
            if (Status s = check_inline_markdown(b.text, file, lineno); !s.ok()) return s.error();
            out.push_back(b);
            ++i;
            continue;
        }
        if (starts_with(t, ">"))
            return md_error(file, lineno, "block quotes are not part of the lesson Markdown");
        if (t == "---" || t == "***" || t == "___")
            return md_error(file, lineno, "horizontal rules are not part of the lesson Markdown");
        std::string item;
        if (starts_with(t, "- ") || starts_with(t, "* ") || numbered_item(t, item)) {
            bool bullets = starts_with(t, "- ") || starts_with(t, "* ");
            b.kind = bullets ? MdBlock::Kind::Bullets : MdBlock::Kind::Numbered;
            while (i < lines.size()) {
                std::string u = trim(lines[i]);
                int ln = first_line + static_cast<int>(i);
                if (u.empty()) break;
                if (indented(lines[i]))
                    return md_error(file, ln, "lists are one level deep, one line per item");
                std::string it;
                if (bullets && (starts_with(u, "- ") || starts_with(u, "* ")))
                    it = trim(u.substr(2));
                else if (!bullets && numbered_item(u, it)) {
                } else
                    return md_error(file, ln, "a list item must start with \"- \" or \"1. \"",
                                    "leave a blank line after a list");
                if (Status s = check_inline_markdown(it, file, ln); !s.ok()) return s.error();
                b.items.push_back(it);
                ++i;
            }
            out.push_back(b);
            continue;
        }
        if (starts_with(t, "|")) {
            b.kind = MdBlock::Kind::Table;
            size_t width = 0;
            while (i < lines.size() && starts_with(trim(lines[i]), "|")) {
                int ln = first_line + static_cast<int>(i);
                auto cells = table_cells(lines[i]);
                if (b.rows.size() == 1) {
                    if (!is_separator_row(cells))
                        return md_error(file, ln, "the second table row must be |---|---|");
                } else {
                    for (const auto& c : cells)
                        if (Status s = check_inline_markdown(c, file, ln); !s.ok())
                            return s.error();
                }
                if (width == 0) width = cells.size();
                if (cells.size() != width)
                    return md_error(file, ln,
                                    "a table row has " + std::to_string(cells.size()) +
                                        " cells, the header " + std::to_string(width));
                b.rows.push_back(cells);
                ++i;
            }
            if (b.rows.size() < 2)
                return md_error(file, b.line, "a table needs a header and |---|");
            b.rows.erase(b.rows.begin() + 1); // the separator
            out.push_back(b);
            continue;
        }
        b.kind = MdBlock::Kind::Paragraph;
        while (i < lines.size()) {
            std::string u = trim(lines[i]);
            if (u.empty() || starts_with(u, "```") || starts_with(u, "|") || starts_with(u, "#") ||
                starts_with(u, "- ") || starts_with(u, "* ") || numbered_item(u, item))
                break;
            int ln = first_line + static_cast<int>(i);
            if (indented(lines[i]))
                return md_error(file, ln, "indented lines are not part of the lesson Markdown");
            if (Status s = check_inline_markdown(u, file, ln); !s.ok()) return s.error();
            // CJK text joins without a space; other lines join with one.
            if (!b.text.empty()) {
                unsigned char last = static_cast<unsigned char>(b.text.back());
                unsigned char first = static_cast<unsigned char>(u.front());
                if (!(last >= 0x80 && first >= 0x80)) b.text += ' ';
            }
            b.text += u;
            ++i;
        }
        out.push_back(b);
    }
    return out;
}

Status check_markdown(const std::string& text, const std::string& file, int first_line) {
    auto b = markdown_blocks(text, file, first_line);
    if (!b.ok()) return b.error();
    return {};
}

} // namespace pt2lab
