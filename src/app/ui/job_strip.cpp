// The job strip (see job_strip.h): a small window over the graph canvas, so the
// panels keep their places while an action runs and the graph stays usable.
#include "ui/job_strip.h"

#include <algorithm>
#include <cstdio>

#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

void draw_job_strip(App& app) {
    const Action* a = app.job_action();
    const bool opening = app.opening_file();
    if (!a && !opening) return;
    // The file being opened goes first (App::work steps it before any action).
    ActionProgress p;
    std::string title;
    if (opening) {
        OpenProgress o = app.open_progress();
        title = strf(tr(app, Str::job_opening), app.opening().c_str());
        p.what = o.what;
        p.done = o.done;
        p.total = o.total;
        p.seconds = o.seconds;
    } else {
        p = app.job_progress();
        title = p.what;
    }
    const CanvasRect& c = app.ui().canvas;
    const float margin = px(8);
    const float w = std::max(px(200), std::min(c.w - 2 * margin, px(560)));
    ImGui::SetNextWindowPos(ImVec2(c.x + (c.w - w) * 0.5f, c.y + margin));
    ImGui::SetNextWindowSize(ImVec2(w, 0)); // height: fits the contents
    ImGui::PushStyleColor(ImGuiCol_WindowBg, to_vec4(colors::rgb(0x1B2333, 242)));
    ImGui::PushStyleColor(ImGuiCol_Border, to_vec4(colors::rgb(0x3D4F73)));
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram, to_vec4(colors::code_target));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 1);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, px(6));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(12), px(8)));
    ImGui::Begin("job", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                     ImGuiWindowFlags_NoNav);
    ImGui::PopStyleVar(3);

    // Line 1: what it does (Workspace::progress) and how long it has taken.
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f s", p.seconds);
    ImGui::TextUnformatted(title.c_str());
    if (!opening && (a->kind == Action::Kind::Run || a->kind == Action::Kind::Calibrate)) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", tr(app, a->fast_kernels ? Str::job_fast : Str::job_reference));
    }
    float secs_w = ImGui::CalcTextSize(secs).x;
    ImGui::SameLine(ImGui::GetContentRegionMax().x - secs_w);
    ImGui::TextDisabled("%s", secs);

    // Line 2: nodes run of all the action will run, and Cancel.
    const std::string cancel = label(app, Str::job_cancel);
    float cancel_w =
        ImGui::CalcTextSize(tr(app, Str::job_cancel)).x + 2 * ImGui::GetStyle().FramePadding.x;
    char count[160];
    if (opening && p.total > 0)
        std::snprintf(count, sizeof count, "%s", p.what.c_str()); // "reading ...: 3.1 of 6.9 MB"
    else if (p.total > 0)
        std::snprintf(count, sizeof count, tr(app, Str::job_nodes),
                      static_cast<unsigned long long>(p.done),
                      static_cast<unsigned long long>(p.total));
    else
        std::snprintf(count, sizeof count, "%s", tr(app, Str::job_working));
    float fraction = p.total > 0 ? static_cast<float>(p.done) / static_cast<float>(p.total) : 0;
    ImGui::ProgressBar(
        fraction,
        ImVec2(ImGui::GetContentRegionAvail().x - cancel_w - ImGui::GetStyle().ItemSpacing.x, 0),
        count);
    ImGui::SameLine();
    if (ImGui::Button(cancel.c_str())) app.cancel_job();
    expose(app, "cancel");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", tr(app, opening ? Str::job_cancel_open_tip : Str::job_cancel_tip));

    float k = fonts().scale;
    ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    app.ui().widgets["job"] = {wp.x / k, wp.y / k, ws.x / k, ws.y / k};
    ImGui::End();
    ImGui::PopStyleColor(3);
}

} // namespace pt2lab::app::ui
