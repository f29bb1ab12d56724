// The Log tab: files opened, actions and what they did, errors, copies.
#include "ui/log_panel.h"

#include <cstdio>

#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

void draw_log_tab(App& app) {
    UiState& ui = app.ui();
    if (small_button(app, label(app, Str::log_copy).c_str())) {
        std::string all;
        for (const LogLine& l : ui.log) all += l.text + "\n";
        app.copy(all, "the log");
    }
    ImGui::SameLine();
    if (small_button(app, label(app, Str::log_clear).c_str())) ui.log.clear();
    ImGui::BeginChild("log", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    for (const LogLine& l : ui.log) {
        ImU32 col = l.kind == LogLine::Kind::Error     ? colors::bad
                    : l.kind == LogLine::Kind::Warning ? colors::warn
                    : l.kind == LogLine::Kind::Action  ? colors::text
                                                       : colors::text_dim;
        char t[32];
        std::snprintf(t, sizeof t, "%7.2fs", l.time);
        ImGui::PushFont(fonts().mono);
        ImGui::TextDisabled("%s", t);
        ImGui::PopFont();
        ImGui::SameLine();
        // Pass reports and parity tables are laid out in columns: keep them monospace.
        bool table = l.text.find('\n') != std::string::npos;
        if (table) ImGui::PushFont(fonts().mono);
        ImGui::PushStyleColor(ImGuiCol_Text, col);
        ImGui::TextUnformatted(l.text.c_str());
        ImGui::PopStyleColor();
        if (table) ImGui::PopFont();
    }
    if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 4) ImGui::SetScrollHereY(1.0f);
    ImGui::EndChild();
}

} // namespace pt2lab::app::ui
