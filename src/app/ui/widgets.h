// Small widgets the panels share: wrapped prose (CJK-aware), clickable node
// names in their kind's colour, badges, section headings, tooltips.
#pragma once

#include <imgui.h>

#include <string>

#include "app.h"
#include "page_strings.h"
#include "text_wrap.h"

namespace pt2lab::app::ui {

// The page's words (page_strings.inc) in the page's language, which is the lesson
// language (App::lesson_lang).
const char* tr(const App& app, Str s);
// A widget label in the page's language whose ImGui id is the row's key, so it
// stays the same in both languages (focus, the selected tab): "程式碼###tab_code".
std::string label(const App& app, Str s);
// A button in a row of small ones: ImGui::SmallButton on a desk, a full-height
// button in the compact layout (a phone's finger needs 44 px: ui/frame.cpp).
bool small_button(const App& app, const char* label);
inline bool small_button(const App& app, const std::string& label) {
    return small_button(app, label.c_str());
}
// A toolbar's next item, `w` wide: on this line (ImGui::SameLine(0, spacing)), or,
// in the compact layout when it would run past the window's right edge, on the
// next line (a phone's toolbar wraps instead of running off the screen).
void same_line_fit(const App& app, float w, float spacing = -1.0f);
// The width of a Button / SmallButton with this label, of a badge() with this text.
float button_width(const char* label);
float badge_width(const std::string& text);
// `text` cut to `max_width` with "…" (at a character boundary) when it is wider.
std::string fit_text(const std::string& text, float max_width);
// Text wrapped at `width` (0: the available width), breaking between CJK
// characters too; and the height that takes.
// Wrapped at the page's break rules (text_wrap.h); code by its tokens.
void text_wrapped(const std::string& text, ImU32 color = 0, float width = 0,
                  Wrap mode = Wrap::Prose);
float text_wrapped_height(const std::string& text, float width);
// A node's name as a link in its kind's colour: hover highlights it, click selects it.
void node_link(App& app, const Node& n, const char* id_suffix = "");
// A small rounded label.
void badge(const std::string& text, ImU32 color, bool filled = false);
// A parity verdict's colour: good when equal, allclose or a close quantized run
// (>= 30 dB), warn for a visible error, bad for a large one, a lost output or NaN.
ImU32 parity_color(const ParityReport& p);
// A float comparison that is neither bit-identical nor NaN / Inf: the one whose
// verdict is allclose or not, with max |diff| beside it.
bool parity_plain(const ParityReport& p);
// The verdict as the page words it (ParityReport::verdict()'s cases, with "differs"
// for a plain comparison that is not allclose), in the page's language (or `lang`).
std::string parity_word(const App& app, const ParityReport& p);
std::string parity_word(const ParityReport& p, std::string_view lang);
// An SQNR in plain words ("close" >= 30 dB, "a visible error" >= 15, "a large
// error" >= 5, else "the output is lost"), as exec/parity.h's sqnr_reading.
Str sqnr_words(double db);
// A heading line inside a panel.
void section(const char* title);
// A "(?)" that shows `text` on hover.
void help_marker(const char* text);
// Label / value rows with aligned values (a two-column table).
bool begin_facts(const char* id);
void fact(const char* label, const std::string& value, ImU32 color = 0);
void end_facts();
// Records the last item's rectangle under `name` for the test hook (UiState::widgets).
void expose(App& app, const std::string& name);
// Scales a CSS-pixel length by the current UI scale.
float px(float css);

} // namespace pt2lab::app::ui
