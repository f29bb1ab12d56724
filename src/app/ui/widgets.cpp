// Shared widgets (see widgets.h).
#include "ui/widgets.h"

#include <algorithm>
#include <cmath>

#include "text_wrap.h"
#include "ui/keyboard.h"
#include "ui/theme.h"

namespace pt2lab::app::ui {

const char* tr(const App& app, Str s) {
    return text(s, app.lesson_lang());
}

std::string label(const App& app, Str s) {
    return std::string(tr(app, s)) + "###" + key(s);
}

bool small_button(const App& app, const char* label) {
    return app.ui().compact ? ImGui::Button(label) : ImGui::SmallButton(label);
}

void same_line_fit(const App& app, float w, float spacing) {
    if (app.ui().compact) {
        const float sp = spacing < 0 ? ImGui::GetStyle().ItemSpacing.x : spacing;
        const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x - px(4);
        if (ImGui::GetItemRectMax().x + sp + w > right) return; // the next line
    }
    ImGui::SameLine(0, spacing);
}

float button_width(const char* label) {
    return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float badge_width(const std::string& text) {
    return ImGui::CalcTextSize(text.c_str()).x + 2 * px(6);
}

float px(float css) {
    return css * fonts().scale;
}

void expose(App& app, const std::string& name) {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    float k = fonts().scale;
    // What can be seen and clicked: the part inside the window's clip rect.
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 ca = dl->GetClipRectMin(), cb = dl->GetClipRectMax();
    ImVec2 va(std::clamp(a.x, ca.x, cb.x), std::clamp(a.y, ca.y, cb.y));
    ImVec2 vb(std::clamp(b.x, va.x, cb.x), std::clamp(b.y, va.y, cb.y));
    app.ui().widgets[name] = {va.x / k, va.y / k, (vb.x - va.x) / k, (vb.y - va.y) / k};
    if (va.x != a.x || va.y != a.y || vb.x != b.x || vb.y != b.y)
        app.ui().widgets_cut[name] = {a.x / k, a.y / k, (b.x - a.x) / k, (b.y - a.y) / k};
    keyboard_focus_item(app, name);
}

namespace {
std::vector<LineSpan> wrap_current_font(const std::string& text, float width,
                                        Wrap mode = Wrap::Prose) {
    ImFont* font = ImGui::GetFont();
    float k = ImGui::GetFontSize() / font->FontSize;
    auto advance = [&](uint32_t cp) { return font->GetCharAdvance(static_cast<ImWchar>(cp)) * k; };
    return wrap_lines(text, width, advance, mode);
}
} // namespace

std::string fit_text(const std::string& text, float max_width) {
    if (ImGui::CalcTextSize(text.c_str()).x <= max_width) return text;
    const char* ellipsis = "\u2026";
    const float room = max_width - ImGui::CalcTextSize(ellipsis).x;
    // The longest prefix of whole characters that fits beside the ellipsis.
    size_t fit = 0;
    for (size_t k = 0; k < text.size();) {
        size_t next = k;
        next_codepoint(text, next);
        if (ImGui::CalcTextSize(text.data(), text.data() + next).x > room) break;
        fit = k = next;
    }
    return text.substr(0, fit) + ellipsis;
}

void text_wrapped(const std::string& text, ImU32 color, float width, Wrap mode) {
    if (width <= 0) width = ImGui::GetContentRegionAvail().x;
    if (color) ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::BeginGroup();
    for (const LineSpan& l : wrap_current_font(text, width, mode))
        ImGui::TextUnformatted(text.data() + l.begin, text.data() + l.end);
    ImGui::EndGroup();
    if (color) ImGui::PopStyleColor();
}

float text_wrapped_height(const std::string& text, float width) {
    size_t lines = wrap_current_font(text, width).size();
    return static_cast<float>(lines) * ImGui::GetTextLineHeightWithSpacing() -
           ImGui::GetStyle().ItemSpacing.y;
}

void node_link(App& app, const Node& n, const char* id_suffix) {
    ImGui::PushID(static_cast<int>(n.id()));
    ImGui::PushID(id_suffix);
    ImVec2 size = ImGui::CalcTextSize(n.name().c_str());
    ImVec2 pos = ImGui::GetCursorScreenPos();
    bool clicked = ImGui::InvisibleButton("link", size);
    bool hovered = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImU32 col = op_color(n.op());
    dl->AddText(pos, col, n.name().c_str());
    if (hovered) {
        dl->AddLine(ImVec2(pos.x, pos.y + size.y), ImVec2(pos.x + size.x, pos.y + size.y), col);
        app.ui().hovered = n.id();
        ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        ImGui::SetTooltip("%s %s", op_label(n.op()), n.target().c_str());
    }
    if (clicked) app.select(n.id());
    ImGui::PopID();
    ImGui::PopID();
}

bool parity_plain(const ParityReport& p) {
    return p.nonfinite() == 0 && !p.bit_identical() && !p.approximate;
}

Str sqnr_words(double db) {
    return db >= 30   ? Str::sqnr_close
           : db >= 15 ? Str::sqnr_visible
           : db >= 5  ? Str::sqnr_large
                      : Str::sqnr_lost;
}

std::string parity_word(const ParityReport& p, std::string_view lang) {
    auto t = [&](Str s) { return text(s, lang); };
    if (p.outputs.empty()) return t(Str::parity_nothing);
    long long nan = 0, inf = 0;
    for (const TensorParity& o : p.outputs) nan += o.nan, inf += o.inf;
    if (nan + inf > 0) return strf(t(Str::parity_nonfinite), nan, inf);
    if (p.bit_identical()) return t(Str::parity_bit_identical);
    if (p.approximate) {
        double db = p.min_sqnr_db();
        if (std::isinf(db)) return t(Str::parity_allclose); // equal values (a -0 for a +0)
        return strf(t(Str::parity_sqnr), db, t(sqnr_words(db)));
    }
    return t(p.allclose() ? Str::parity_allclose : Str::parity_differs);
}

std::string parity_word(const App& app, const ParityReport& p) {
    return parity_word(p, app.lesson_lang());
}

ImU32 parity_color(const ParityReport& p) {
    if (p.outputs.empty()) return colors::text_dim;
    if (p.nonfinite() > 0) return colors::bad;
    if (p.bit_identical()) return colors::good;
    if (p.approximate) {
        double db = p.min_sqnr_db();
        return db >= 30 ? colors::good : db >= 15 ? colors::warn : colors::bad;
    }
    return p.allclose() ? colors::good : colors::warn;
}

void badge(const std::string& text, ImU32 color, bool filled) {
    ImVec2 pad(px(6), px(1));
    ImVec2 size = ImGui::CalcTextSize(text.c_str());
    ImVec2 pos = ImGui::GetCursorScreenPos();
    float h = ImGui::GetFrameHeight();
    ImVec2 box(size.x + 2 * pad.x, h);
    ImGui::Dummy(box);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float y0 = pos.y + (h - size.y - 2 * pad.y) * 0.5f;
    ImVec2 a(pos.x, y0), b(pos.x + box.x, y0 + size.y + 2 * pad.y);
    if (filled) {
        dl->AddRectFilled(a, b, color, px(4));
        dl->AddText(ImVec2(a.x + pad.x, a.y + pad.y), colors::rgb(0x111318), text.c_str());
    } else {
        dl->AddRectFilled(a, b, (color & 0x00FFFFFF) | 0x30000000, px(4));
        dl->AddText(ImVec2(a.x + pad.x, a.y + pad.y), color, text.c_str());
    }
}

void section(const char* title) {
    ImGui::Spacing();
    ImGui::PushFont(fonts().heading);
    ImGui::TextUnformatted(title);
    ImGui::PopFont();
    ImGui::Separator();
}

void help_marker(const char* text) {
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

bool begin_facts(const char* id) {
    if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingFixedFit)) return false;
    ImGui::TableSetupColumn("##label", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("##value", ImGuiTableColumnFlags_WidthStretch);
    return true;
}

void fact(const char* label, const std::string& value, ImU32 color) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", label);
    ImGui::TableNextColumn();
    text_wrapped(value, color);
}

void end_facts() {
    ImGui::EndTable();
}

} // namespace pt2lab::app::ui
