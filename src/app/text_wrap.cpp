// Line breaking with CJK break opportunities (see text_wrap.h): a small
// subset of Unicode line breaking (UAX #14) that covers zh-TW prose mixed
// with English words and inline code.
#include "text_wrap.h"

namespace pt2lab::app {

uint32_t next_codepoint(std::string_view s, size_t& i) {
    uint8_t c = static_cast<uint8_t>(s[i++]);
    if (c < 0x80) return c;
    int extra = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 0;
    if (extra == 0 || i + static_cast<size_t>(extra) > s.size()) return 0xFFFD;
    uint32_t cp = c & (0x3Fu >> extra);
    for (int k = 0; k < extra; ++k) {
        uint8_t cc = static_cast<uint8_t>(s[i]);
        if ((cc & 0xC0) != 0x80) return 0xFFFD; // i stays on the byte that broke the sequence
        cp = (cp << 6) | (cc & 0x3Fu);
        ++i;
    }
    return cp;
}

bool is_cjk(uint32_t cp) {
    return (cp >= 0x2E80 && cp <= 0x2FDF) || // radicals
           (cp >= 0x3000 && cp <= 0x303F) || // CJK symbols and punctuation
           (cp >= 0x3040 && cp <= 0x30FF) || // hiragana, katakana
           (cp >= 0x3100 && cp <= 0x31FF) || // bopomofo, kana extensions
           (cp >= 0x3400 && cp <= 0x4DBF) || // extension A
           (cp >= 0x4E00 && cp <= 0x9FFF) || // unified ideographs
           (cp >= 0xAC00 && cp <= 0xD7AF) || // hangul syllables
           (cp >= 0xF900 && cp <= 0xFAFF) || // compatibility ideographs
           (cp >= 0xFE30 && cp <= 0xFE4F) || // compatibility forms
           (cp >= 0xFF00 && cp <= 0xFFEF) || // full-width forms
           (cp >= 0x20000 && cp <= 0x2FFFF); // extensions B..
}

bool no_break_before(uint32_t cp) {
    switch (cp) {
    case ',':
    case '.':
    case ';':
    case ':':
    case '!':
    case '?':
    case ')':
    case ']':
    case '}':
    case 0x3001:
    case 0x3002: // 、。
    case 0xFF0C:
    case 0xFF0E:
    case 0xFF1A:
    case 0xFF1B:
    case 0xFF01:
    case 0xFF1F: // ，．：；！？
    case 0xFF09:
    case 0xFF3D:
    case 0xFF5D: // ）］｝
    case 0x300D:
    case 0x300F:
    case 0x3011:
    case 0x300B:
    case 0x3009:
    case 0x3015:
    case 0x3017:
    case 0x2019:
    case 0x201D: // ’”
    case 0x2026:
    case 0x22EF: // … ⋯
    case 0x30FC:
    case 0x3005: // ー 々
        return true;
    default: return false;
    }
}

bool no_break_after(uint32_t cp) {
    switch (cp) {
    case '(':
    case '[':
    case '{':
    case 0xFF08:
    case 0xFF3B:
    case 0xFF5B: // （［｛
    case 0x300C:
    case 0x300E:
    case 0x3010:
    case 0x300A:
    case 0x3008:
    case 0x3014:
    case 0x3016:
    case 0x2018:
    case 0x201C: // ‘“
        return true;
    default: return false;
    }
}

namespace {

// Code: a break may follow these (the rest of a call, an argument, a value).
bool code_break_after(uint32_t cp) {
    switch (cp) {
    case '.':
    case ',':
    case '(':
    case '[':
    case '{':
    case '=':
    case ':':
    case ';':
    case '+':
    case '*':
    case '/':
    case '|':
    case '&':
    case '>': return true;
    default: return false;
    }
}

} // namespace

std::vector<LineSpan> wrap_lines(std::string_view text, float max_width,
                                 const std::function<float(uint32_t)>& advance, Wrap mode) {
    std::vector<LineSpan> lines;
    size_t line_begin = 0;
    float width = 0;        // of text[line_begin, i)
    size_t brk = 0;         // last break opportunity in the line (byte offset), 0 = none
    float width_at_brk = 0; // width of text[line_begin, brk)
    uint32_t prev = 0;      // previous code point in the line (0 at its start)
    auto trim_end = [&](size_t b, size_t e) {
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t')) --e;
        return e;
    };
    size_t i = 0;
    while (i < text.size()) {
        size_t at = i;
        uint32_t cp = next_codepoint(text, i);
        if (cp == '\n') {
            lines.push_back({line_begin, trim_end(line_begin, at)});
            line_begin = i;
            width = 0;
            brk = 0;
            prev = 0;
            continue;
        }
        bool space = cp == ' ' || cp == '\t';
        // A break before this character: after a space, or next to CJK, unless
        // punctuation forbids it.
        const bool after_token = mode == Wrap::Code && code_break_after(prev) &&
                                 !code_break_after(cp) && cp != ')' && cp != ']' && cp != '}';
        if (prev != 0 && !space && !no_break_before(cp) &&
            (after_token || (!no_break_after(prev) &&
                             (prev == ' ' || prev == '\t' || is_cjk(cp) || is_cjk(prev))))) {
            brk = at;
            width_at_brk = width;
        }
        float w = advance(cp);
        if (!space && width + w > max_width && at > line_begin && !no_break_before(cp)) {
            // Cut at the last opportunity; with none, cut the word before this character.
            // text[cut] is never a space (opportunities sit before non-spaces).
            size_t cut = brk > line_begin ? brk : at;
            float carried = brk > line_begin ? width - width_at_brk : 0;
            lines.push_back({line_begin, trim_end(line_begin, cut)});
            line_begin = cut;
            width = carried;
            brk = 0;
        }
        width += w;
        prev = cp;
    }
    lines.push_back({line_begin, trim_end(line_begin, text.size())});
    return lines;
}

} // namespace pt2lab::app
