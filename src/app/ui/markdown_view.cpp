// Lesson prose in Dear ImGui (see markdown_view.h): inline spans in a flow
// layout whose break opportunities are text_wrap.h's, blocks one under another.
#include "ui/markdown_view.h"

#include <algorithm>

#include "text_wrap.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

struct Span {
    std::string text;
    int style = 0;
};

// `code`, *emphasis*, **strong**; the parser already refused unclosed markers.
std::vector<Span> inline_spans(const std::string& s) {
    std::vector<Span> out;
    bool em = false, strong = false;
    std::string cur;
    auto flush = [&](int style) {
        if (!cur.empty()) out.push_back({cur, style});
        cur.clear();
    };
    auto style = [&] { return strong ? 3 : em ? 2 : 0; };
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '`') {
            size_t end = s.find('`', i + 1);
            if (end == std::string::npos) end = s.size();
            flush(style());
            cur = s.substr(i + 1, end - i - 1);
            flush(1);
            i = end;
        } else if (c == '*' && i + 1 < s.size() && s[i + 1] == '*') {
            flush(style());
            strong = !strong;
            ++i;
        } else if (c == '*') {
            flush(style());
            em = !em;
        } else {
            cur += c;
        }
    }
    flush(style());
    return out;
}

// Code in the mono font; the rest in the current one (the heading font in headings).
ImFont* font_of(int style) {
    return style == 1 ? fonts().mono : ImGui::GetFont();
}

ImU32 color_of(int style, ImU32 plain) {
    switch (style) {
    case 1: return colors::code_attr;
    case 2: return colors::rgb(0xFFCB6B);
    case 3: return colors::rgb(0xFFFFFF);
    }
    return plain;
}

} // namespace

InlineLayout layout_inline(const std::string& markdown, float width) {
    InlineLayout l;
    l.line_h = ImGui::GetTextLineHeightWithSpacing();
    float x = 0;
    int line = 0;
    float code_pad = px(3);
    for (const Span& sp : inline_spans(markdown)) {
        ImFont* f = font_of(sp.style);
        float k = (sp.style == 1 ? f->FontSize : ImGui::GetFontSize()) / f->FontSize;
        auto adv = [&](uint32_t cp) { return f->GetCharAdvance(static_cast<ImWchar>(cp)) * k; };
        // Units: a word (no space, no CJK), one CJK character, or one space.
        size_t i = 0;
        bool first_unit = true;
        while (i < sp.text.size()) {
            size_t start = i;
            uint32_t cp = next_codepoint(sp.text, i);
            float w = adv(cp);
            bool space = cp == ' ';
            if (!space && !is_cjk(cp)) {
                size_t j = i;
                while (j < sp.text.size()) {
                    size_t k2 = j;
                    uint32_t c2 = next_codepoint(sp.text, k2);
                    if (c2 == ' ' || is_cjk(c2)) break;
                    w += adv(c2);
                    j = k2;
                }
                i = j;
            }
            float extra = sp.style == 1 && first_unit ? code_pad : 0;
            bool hang = no_break_before(cp);
            // Closing punctuation never starts a line: a unit it follows goes down with
            // it rather than leave it hanging past the edge ("迴圈、" showed a cut "、").
            float follow = 0;
            if (i < sp.text.size()) {
                size_t k2 = i;
                const uint32_t next = next_codepoint(sp.text, k2);
                if (no_break_before(next) && next != ' ') follow = adv(next);
            }
            if (!space && x > 0 && x + w + follow + extra > width && !hang) {
                ++line;
                x = 0;
            }
            if (space && x == 0) continue; // no leading spaces on a line
            auto emit = [&](std::string text, float tw) {
                InlineLayout::Piece* last = l.pieces.empty() ? nullptr : &l.pieces.back();
                if (last && last->line == line && last->style == sp.style && !first_unit) {
                    last->text += text;
                    last->w += tw;
                } else {
                    l.pieces.push_back({std::move(text), sp.style, x + extra, line, tw});
                }
                x += tw + extra;
                first_unit = false;
                extra = 0;
            };
            if (space || x + w + extra <= width) {
                emit(sp.text.substr(start, i - start), w);
                continue;
            }
            // A word wider than a whole line (`ep.run_decompositions({})` in a table's
            // narrow column): broken over lines rather than cut at the edge, after a
            // '.', '_', '(' or ',' when one is far enough along, else anywhere.
            size_t from = start;
            while (from < i) {
                size_t k = from, cut = from, soft = from;
                float cw = 0, soft_w = 0;
                while (k < i) {
                    size_t k2 = k;
                    const uint32_t c = next_codepoint(sp.text, k2);
                    const float a = adv(c);
                    if (cut > from && x + cw + a + extra > width) break;
                    cw += a;
                    k = cut = k2;
                    if (c == '.' || c == '_' || c == '(' || c == ',' || c == '/') {
                        soft = k;
                        soft_w = cw;
                    }
                }
                if (k < i && soft > from && soft_w >= 0.4f * (width - x)) {
                    cut = soft;
                    cw = soft_w;
                }
                emit(sp.text.substr(from, cut - from), cw);
                from = cut;
                if (from < i) {
                    ++line;
                    x = 0;
                }
            }
        }
        if (sp.style == 1) x += code_pad;
    }
    l.lines = line + 1;
    return l;
}

void draw_inline(const InlineLayout& l, ImVec2 pos, ImU32 color) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImU32 plain = color ? color : ImGui::GetColorU32(ImGuiCol_Text);
    float ui_size = ImGui::GetFontSize();
    for (const InlineLayout::Piece& p : l.pieces) {
        ImVec2 at(pos.x + p.x, pos.y + static_cast<float>(p.line) * l.line_h);
        ImFont* f = font_of(p.style);
        float size = p.style == 1 ? f->FontSize : ui_size;
        if (p.style == 1) {
            float dy = (ui_size - size) * 0.5f;
            at.y += std::max(0.0f, dy);
            dl->AddRectFilled(ImVec2(at.x - px(3), at.y - px(1)),
                              ImVec2(at.x + p.w + px(3), at.y + size + px(1)),
                              colors::rgb(0x2A303B), px(3));
        }
        ImU32 c = color_of(p.style, plain);
        dl->AddText(f, size, at, c, p.text.c_str());
        if (p.style == 3) // faux bold: the same glyphs half a pixel to the right
            dl->AddText(f, size, ImVec2(at.x + std::max(0.5f, px(0.5f)), at.y), c, p.text.c_str());
    }
}

void inline_text(const std::string& markdown, ImU32 color, float width) {
    if (width <= 0) width = ImGui::GetContentRegionAvail().x;
    InlineLayout l = layout_inline(markdown, width);
    ImVec2 pos = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(width, l.height() - ImGui::GetStyle().ItemSpacing.y));
    draw_inline(l, pos, color);
}

void markdown_view(App& app, const std::vector<MdBlock>& blocks, const char* id) {
    ImGui::PushID(id);
    int n = 0;
    for (const MdBlock& b : blocks) {
        ImGui::PushID(n++);
        switch (b.kind) {
        case MdBlock::Kind::Heading:
            ImGui::Spacing();
            ImGui::PushFont(fonts().heading);
            inline_text(b.text);
            ImGui::PopFont();
            break;
        case MdBlock::Kind::Paragraph: inline_text(b.text); break;
        case MdBlock::Kind::Bullets:
        case MdBlock::Kind::Numbered: {
            int k = 1;
            for (const std::string& item : b.items) {
                std::string mark = b.kind == MdBlock::Kind::Bullets ? "\xE2\x80\xA2" // •
                                                                    : std::to_string(k) + ".";
                float indent = px(18);
                ImVec2 pos = ImGui::GetCursorScreenPos();
                ImGui::GetWindowDrawList()->AddText(pos, colors::text_dim, mark.c_str());
                ImGui::Indent(indent);
                inline_text(item);
                ImGui::Unindent(indent);
                ++k;
            }
            break;
        }
        case MdBlock::Kind::Table: {
            if (b.rows.empty()) break;
            int cols = static_cast<int>(b.rows[0].size());
            if (ImGui::BeginTable("table", cols,
                                  ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                      ImGuiTableFlags_SizingStretchProp)) {
                for (size_t r = 0; r < b.rows.size(); ++r) {
                    ImGui::TableNextRow(r == 0 ? ImGuiTableRowFlags_Headers : 0);
                    for (int c = 0; c < cols && c < static_cast<int>(b.rows[r].size()); ++c) {
                        ImGui::TableSetColumnIndex(c);
                        inline_text(b.rows[r][static_cast<size_t>(c)],
                                    r == 0 ? colors::rgb(0xFFFFFF) : 0);
                    }
                }
                ImGui::EndTable();
            }
            break;
        }
        case MdBlock::Kind::Code: {
            std::string text;
            for (const std::string& l : b.items) text += l + "\n";
            // A header line (the language, Copy), then the code at the full width.
            float w = ImGui::GetContentRegionAvail().x;
            float pad = px(8);
            ImDrawList* dl = ImGui::GetWindowDrawList();
            ImVec2 pos = ImGui::GetCursorScreenPos();
            dl->ChannelsSplit(2);
            dl->ChannelsSetCurrent(1);
            ImGui::Indent(pad);
            ImGui::Dummy(ImVec2(0, px(1)));
            ImGui::AlignTextToFramePadding();
            ImGui::TextDisabled("%s", b.lang.empty() ? tr(app, Str::code_block) : b.lang.c_str());
            ImGui::SameLine(w - pad - ImGui::CalcTextSize(tr(app, Str::copy)).x - px(10));
            if (small_button(app, label(app, Str::copy).c_str())) app.copy(text, "lesson code");
            expose(app, "lesson:copy:" + std::to_string(ImGui::GetItemID()));
            ImGui::PushFont(fonts().mono);
            for (const std::string& l : b.items)
                text_wrapped(l.empty() ? " " : l, colors::code_string, w - 2 * pad, Wrap::Code);
            ImGui::PopFont();
            ImGui::Dummy(ImVec2(0, px(2)));
            ImGui::Unindent(pad);
            ImVec2 end = ImGui::GetCursorScreenPos();
            dl->ChannelsSetCurrent(0);
            dl->AddRectFilled(pos, ImVec2(pos.x + w, end.y), colors::rgb(0x1B1F26), px(4));
            dl->ChannelsMerge();
            ImGui::Dummy(ImVec2(0, 0));
            break;
        }
        }
        ImGui::Spacing();
        ImGui::PopID();
    }
    ImGui::PopID();
}

} // namespace pt2lab::app::ui
