// The page's look: one colour per node kind (graph, code view, inspector
// alike), the diff colours (added green, removed red, rewired amber), the
// Dear ImGui style at the current scale, and the fonts.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "glyph_wants.h"
#include "graph/node.h"
#include "graph_scene.h"

namespace pt2lab::app::ui {

namespace colors {
constexpr ImU32 rgb(unsigned v, unsigned a = 255) {
    return IM_COL32((v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF, a);
}
inline const ImU32 canvas = rgb(0x15181D);
inline const ImU32 grid = rgb(0x22262E);
inline const ImU32 node_body = rgb(0x262B34);
inline const ImU32 node_body_hover = rgb(0x2E3440);
inline const ImU32 text = rgb(0xE6EAF0);
inline const ImU32 text_dim = rgb(0x8E98A8);
inline const ImU32 edge = rgb(0x59606E);
inline const ImU32 edge_hot = rgb(0xE6EAF0);
inline const ImU32 select = rgb(0xFFFFFF);
inline const ImU32 search = rgb(0x4FC3F7);
inline const ImU32 highlight = rgb(0xFFD54F); // a lesson step's highlighted nodes
inline const ImU32 added = rgb(0x3FB950);
inline const ImU32 removed = rgb(0xF85149);
inline const ImU32 rewired = rgb(0xE3B341);
inline const ImU32 good = rgb(0x3FB950);
inline const ImU32 warn = rgb(0xE3B341);
inline const ImU32 bad = rgb(0xF85149);
inline const ImU32 code_keyword = rgb(0xC792EA);
inline const ImU32 code_target = rgb(0x82AAFF);
inline const ImU32 code_attr = rgb(0x89DDFF);
inline const ImU32 code_number = rgb(0xF78C6C);
inline const ImU32 code_string = rgb(0xC3E88D);
inline const ImU32 code_comment = rgb(0x6A7385);
inline const ImU32 code_punct = rgb(0xA6ACB8);
inline const ImU32 line_hover = rgb(0x2C3340);
inline const ImU32 line_select = rgb(0x33405A);
inline const ImU32 focus = rgb(0xFFFFFF); // the keyboard focus ring (ui/keyboard.cpp)
} // namespace colors

ImU32 op_color(Op op);           // the node-kind colour
const char* op_label(Op op);     // "placeholder", ...
ImU32 diff_color(DiffMark mark); // 0 for None
ImVec4 to_vec4(ImU32 c);

struct Fonts {
    ImFont* ui = nullptr;      // Noto Sans CJK TC
    ImFont* mono = nullptr;    // JetBrains Mono, CJK merged from the UI font
    ImFont* heading = nullptr; // the UI font, larger
    float ui_size = 15;        // in CSS pixels (scale 1)
    float mono_size = 14;
    float scale = 1; // device pixels per CSS pixel the atlas was built for
};
Fonts& fonts();

// Loads the subset fonts (fonts/ui.otf, fonts/mono.ttf, fonts/chars.txt from
// the loader) rasterized for `scale` device pixels per CSS pixel, and sets
// the style for that scale. Call before the first frame and whenever
// devicePixelRatio changes (then recreate the renderer's font texture).
// False when the font files are missing.
bool load_fonts_and_style(float scale);
// Files of font pages (fonts/more/PP[-K].otf, glyph_wants.h) that arrived, kept for
// every rebuild, and the characters beyond the subset the atlas should draw from
// them (GlyphWants::atlas_extra). Then load_fonts_and_style builds the atlas with
// them: each file merged into each font at that font's size (tools/subset_fonts.py
// gives every file the UI font's metrics per em), given only its page's characters.
void add_font_pages(std::vector<std::pair<FontFile, std::vector<uint8_t>>> files);
void set_extra_glyphs(std::vector<char32_t> chars);
// Text widths of the graph's boxes, measured with the loaded fonts (layout units).
SceneMetrics scene_metrics();

} // namespace pt2lab::app::ui
