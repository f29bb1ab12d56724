// Colours, style and fonts of the page (see theme.h).
#include "ui/theme.h"

#include "platform/platform.h"

namespace pt2lab::app::ui {

ImU32 op_color(Op op) {
    switch (op) {
    case Op::Placeholder: return colors::rgb(0x5B9DF0);  // blue
    case Op::GetAttr: return colors::rgb(0x46C2CC);      // cyan
    case Op::CallFunction: return colors::rgb(0xA58CF0); // violet
    case Op::CallModule: return colors::rgb(0xE07FD0);   // orchid
    case Op::CallMethod: return colors::rgb(0xF0A0A8);   // pink
    case Op::Output: return colors::rgb(0xA0A8B6);       // grey
    }
    return colors::text;
}

const char* op_label(Op op) {
    switch (op) {
    case Op::Placeholder: return "placeholder";
    case Op::GetAttr: return "get_attr";
    case Op::CallFunction: return "call_function";
    case Op::CallModule: return "call_module";
    case Op::CallMethod: return "call_method";
    case Op::Output: return "output";
    }
    return "";
}

ImU32 diff_color(DiffMark m) {
    switch (m) {
    case DiffMark::None: return 0;
    case DiffMark::Added: return colors::added;
    case DiffMark::Removed: return colors::removed;
    case DiffMark::Rewired:
    case DiffMark::Changed: return colors::rewired;
    }
    return 0;
}

ImVec4 to_vec4(ImU32 c) {
    return ImGui::ColorConvertU32ToFloat4(c);
}

// The fonts, their bytes and glyph ranges are the process's, like the ImGui context
// whose atlas points into them (FontDataOwnedByAtlas = false): made once, kept for
// the page's life, the same whatever file is open.
Fonts& fonts() {
    static Fonts f;
    return f;
}

namespace {

void set_style(float scale) {
    ImGuiStyle& s = ImGui::GetStyle();
    s = ImGuiStyle();
    ImGui::StyleColorsDark(&s);
    s.WindowPadding = ImVec2(10, 8);
    s.FramePadding = ImVec2(7, 4);
    s.ItemSpacing = ImVec2(8, 6);
    s.ItemInnerSpacing = ImVec2(6, 4);
    s.CellPadding = ImVec2(6, 3);
    s.ScrollbarSize = 12;
    s.WindowRounding = 0;
    s.ChildRounding = 4;
    s.FrameRounding = 4;
    s.PopupRounding = 4;
    s.GrabRounding = 4;
    s.TabRounding = 4;
    s.WindowBorderSize = 0;
    s.FrameBorderSize = 0;
    s.TabBorderSize = 0;
    ImVec4* c = s.Colors;
    c[ImGuiCol_Text] = to_vec4(colors::text);
    c[ImGuiCol_TextDisabled] = to_vec4(colors::text_dim);
    c[ImGuiCol_WindowBg] = to_vec4(colors::rgb(0x1C1F26));
    c[ImGuiCol_ChildBg] = to_vec4(colors::rgb(0x1C1F26));
    c[ImGuiCol_PopupBg] = to_vec4(colors::rgb(0x242832));
    c[ImGuiCol_Border] = to_vec4(colors::rgb(0x303642));
    c[ImGuiCol_FrameBg] = to_vec4(colors::rgb(0x2A2F3A));
    c[ImGuiCol_FrameBgHovered] = to_vec4(colors::rgb(0x343A47));
    c[ImGuiCol_FrameBgActive] = to_vec4(colors::rgb(0x3B4252));
    c[ImGuiCol_Button] = to_vec4(colors::rgb(0x2F3542));
    c[ImGuiCol_ButtonHovered] = to_vec4(colors::rgb(0x3C4456));
    c[ImGuiCol_ButtonActive] = to_vec4(colors::rgb(0x4A5468));
    c[ImGuiCol_Header] = to_vec4(colors::rgb(0x2F3542));
    c[ImGuiCol_HeaderHovered] = to_vec4(colors::rgb(0x3A4152));
    c[ImGuiCol_HeaderActive] = to_vec4(colors::rgb(0x455066));
    c[ImGuiCol_Tab] = to_vec4(colors::rgb(0x232730));
    c[ImGuiCol_TabHovered] = to_vec4(colors::rgb(0x3A4152));
    c[ImGuiCol_TabActive] = to_vec4(colors::rgb(0x343B4A));
    c[ImGuiCol_TableHeaderBg] = to_vec4(colors::rgb(0x262B34));
    c[ImGuiCol_TableBorderStrong] = to_vec4(colors::rgb(0x323846));
    c[ImGuiCol_TableBorderLight] = to_vec4(colors::rgb(0x2A2F3A));
    c[ImGuiCol_TableRowBgAlt] = to_vec4(colors::rgb(0x20242C));
    c[ImGuiCol_Separator] = to_vec4(colors::rgb(0x303642));
    c[ImGuiCol_CheckMark] = to_vec4(colors::rgb(0x82AAFF));
    c[ImGuiCol_SliderGrab] = to_vec4(colors::rgb(0x82AAFF));
    c[ImGuiCol_TextSelectedBg] = to_vec4(colors::rgb(0x3A5580));
    c[ImGuiCol_MenuBarBg] = to_vec4(colors::rgb(0x171A20));
    c[ImGuiCol_TitleBg] = to_vec4(colors::rgb(0x20242C));
    c[ImGuiCol_TitleBgActive] = to_vec4(colors::rgb(0x252A34));
    c[ImGuiCol_TitleBgCollapsed] = to_vec4(colors::rgb(0x20242C));
    s.ScaleAllSizes(scale);
}

std::vector<uint8_t>& font_bytes(int which) {
    static std::vector<uint8_t> ui, mono;
    return which == 0 ? ui : mono;
}

// The font page files that arrived (the atlas reads them on every build) and the
// characters beyond the subset they are for.
struct MoreGlyphs {
    std::map<FontFile, std::vector<uint8_t>> files;
    std::vector<char32_t> chars;
};
MoreGlyphs& more_glyphs() {
    static MoreGlyphs m;
    return m;
}

// Glyph ranges ({first, last, ..., 0}) of sorted code points.
std::vector<ImWchar> ranges_of(const std::vector<char32_t>& sorted) {
    std::vector<ImWchar> r;
    for (char32_t c : sorted) {
        if (!r.empty() && r.back() + 1 == c)
            r.back() = static_cast<ImWchar>(c);
        else
            r.insert(r.end(), {static_cast<ImWchar>(c), static_cast<ImWchar>(c)});
    }
    r.push_back(0);
    return r;
}

} // namespace

SceneMetrics scene_metrics() {
    SceneMetrics m;
    m.text_width = [](const std::string& s, bool mono) {
        const Fonts& f = fonts();
        ImFont* font = mono ? f.mono : f.ui;
        float size = mono ? f.mono_size * 0.92f : f.ui_size;
        return font->CalcTextSizeA(size * f.scale, 1e9f, 0, s.c_str()).x / f.scale;
    };
    return m;
}

void add_font_pages(std::vector<std::pair<FontFile, std::vector<uint8_t>>> files) {
    for (auto& [file, bytes] : files) more_glyphs().files[file] = std::move(bytes);
}

void set_extra_glyphs(std::vector<char32_t> chars) {
    more_glyphs().chars = std::move(chars);
}

bool load_fonts_and_style(float scale) {
    std::vector<uint8_t>& ui = font_bytes(0);
    std::vector<uint8_t>& mono = font_bytes(1);
    if (ui.empty()) ui = platform::preloaded("fonts/ui.otf");
    if (mono.empty()) mono = platform::preloaded("fonts/mono.ttf");
    if (ui.empty() || mono.empty()) return false;
    // The glyph ranges: the subset's characters and Latin-1 for the two fonts; for
    // each page, the characters met since on it (ImGui keeps pointers to them for
    // as long as the fonts live: statics, made before any font is added).
    static std::vector<uint8_t> chars;
    if (chars.empty()) {
        chars = platform::preloaded("fonts/chars.txt");
        chars.push_back(0);
    }
    static ImVector<ImWchar> ranges;
    static std::map<int, std::vector<ImWchar>> page_ranges;
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    atlas->Clear();
    ranges.clear();
    ImFontGlyphRangesBuilder b;
    b.AddText(reinterpret_cast<const char*>(chars.data()));
    b.AddRanges(atlas->GetGlyphRangesDefault());
    b.BuildRanges(&ranges);
    page_ranges.clear();
    {
        std::map<int, std::vector<char32_t>> by_page;
        for (char32_t c : more_glyphs().chars)
            if (c <= IM_UNICODE_CODEPOINT_MAX) by_page[static_cast<int>(c >> 8)].push_back(c);
        for (const auto& [page, cps] : by_page) page_ranges[page] = ranges_of(cps);
    }

    Fonts& f = fonts();
    f.scale = scale;
    ImFontConfig cfg;
    cfg.FontDataOwnedByAtlas = false;
    cfg.OversampleH = 1; // sizes are already in device pixels
    cfg.OversampleV = 1;
    cfg.PixelSnapH = true;
    ImFontConfig merge = cfg;
    merge.MergeMode = true;
    auto add = [&](std::vector<uint8_t>& bytes, float size, const ImFontConfig& c,
                   const ImWchar* r) {
        return atlas->AddFontFromMemoryTTF(bytes.data(), static_cast<int>(bytes.size()),
                                           size * scale, &c, r);
    };
    // Each font, then the page files merged into it (a merged font adds only the
    // characters the fonts before it lack). A file gets only its page's characters:
    // ImGui sizes a bit set per font by the highest code point it is asked for.
    auto add_pages = [&](float size) {
        for (auto& [file, bytes] : more_glyphs().files)
            if (auto it = page_ranges.find(file.page); it != page_ranges.end())
                add(bytes, size, merge, it->second.data());
    };
    f.ui = add(ui, f.ui_size, cfg, ranges.Data);
    add_pages(f.ui_size);
    f.mono = add(mono, f.mono_size, cfg, ranges.Data);
    add(ui, f.mono_size, merge, ranges.Data);
    add_pages(f.mono_size);
    f.heading = add(ui, f.ui_size * 1.2f, cfg, ranges.Data);
    add_pages(f.ui_size * 1.2f);
    atlas->Build();
    set_style(scale);
    return f.ui && f.mono && f.heading;
}

} // namespace pt2lab::app::ui
