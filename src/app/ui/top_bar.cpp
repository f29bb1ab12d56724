// The top bar: product name, Open file, Save .pt2, the transformations (decompose,
// fold, prepare, calibrate, convert, dead code, recompile), undo / redo, the
// lessons, "?"; and under it the banner of the last error (e.g. a bad file),
// until dismissed.
#include "ui/top_bar.h"

#include <algorithm>

#include "ui/lesson_panel.h"
#include "ui/theme.h"
#include "ui/transforms.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

float top_bar_height() {
    return ImGui::GetFrameHeight() + px(14);
}

void draw_top_bar(App& app, float width) {
    float h = top_bar_height();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(width, h));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, to_vec4(colors::rgb(0x14171C)));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(12), px(7)));
    ImGui::Begin("top bar", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove);
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
    ImGui::PushFont(fonts().heading);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("pt2lab");
    ImGui::PopFont();
    if (!app.ui().compact) { // a phone has no room for the subtitle
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%s", tr(app, Str::top_tagline));
    }
    ImGui::SameLine(0, px(24));
    if (ImGui::Button(label(app, Str::top_open).c_str())) app.open_picker();
    expose(app, "open");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::top_open_tip));
    const Workspace* ws = app.workspace();
    ImGui::SameLine(0, px(6));
    ImGui::BeginDisabled(!ws || !ws->has_program());
    if (ImGui::Button(label(app, Str::top_save).c_str())) app.save_file();
    expose(app, "save");
    ImGui::EndDisabled();
    if (ws && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(tr(app, ws->has_program() ? Str::top_save_tip : Str::top_save_none),
                          app.save_name().c_str());
    if (ws && !app.ui().compact) { // a phone copies it from the Code tab's "as Python"
        ImGui::SameLine(0, px(6));
        if (ImGui::Button(label(app, Str::top_copy_python).c_str()))
            app.copy(ws->python_script(), "Python");
        expose(app, "copy python");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(tr(app, Str::top_copy_python_tip),
                              static_cast<int>(ws->undo_history().size()), ws->file().c_str());
    }
    // On a phone in a lesson the transformations (off there anyway) leave their room
    // to the lessons list.
    if (ws && !(app.ui().compact && app.lesson())) {
        // In a lesson only its steps change the graphs (so they stay the engine's); while
        // an action runs, the next waits for it (the job strip over the graph can cancel it).
        ImGui::BeginDisabled(app.lesson() != nullptr || app.busy());
        ImGui::SameLine(0, px(18));
        ImGui::BeginDisabled(!ws->has_program());
        if (ImGui::Button(label(app, Str::top_decompose).c_str())) ImGui::OpenPopup("decompose");
        expose(app, "decompose");
        ImGui::EndDisabled();
        if (ImGui::BeginPopup("decompose")) {
            if (ImGui::MenuItem(ir_level_name(IrLevel::Inference), "run_decompositions({})"))
                post_decompose(app, IrLevel::Inference);
            expose(app, "decompose:inference");
            if (ImGui::MenuItem(ir_level_name(IrLevel::CoreAten), "run_decompositions()"))
                post_decompose(app, IrLevel::CoreAten);
            expose(app, "decompose:core");
            ImGui::EndPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button(label(app, Str::top_prepare).c_str())) post_prepare(app);
        expose(app, "prepare");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::top_prepare_tip));
        ImGui::SameLine();
        ImGui::BeginDisabled(!has_observers(*ws));
        if (ImGui::Button(label(app, Str::calibrate).c_str()))
            post_calibrate(app, kCalibrationBatches);
        expose(app, "calibrate");
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(tr(app, Str::top_calibrate_tip), kCalibrationBatches - 1);
        ImGui::SameLine();
        ImGui::BeginDisabled(!ws->observers_calibrated());
        if (ImGui::Button(label(app, Str::top_convert).c_str())) post_convert(app, true);
        expose(app, "convert");
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("%s", tr(app, Str::top_convert_tip));
        ImGui::SameLine();
        if (ImGui::Button(label(app, Str::top_more).c_str())) ImGui::OpenPopup("more");
        expose(app, "more");
        if (ImGui::BeginPopup("more")) {
            if (ImGui::MenuItem(label(app, Str::fold_conv_bn).c_str())) post_fold_conv_bn(app);
            expose(app, "more:fold");
            if (ImGui::MenuItem(label(app, Str::top_dce).c_str(), "graph.eliminate_dead_code()"))
                post_dead_code_elimination(app);
            expose(app, "more:dce");
            if (ImGui::MenuItem(label(app, Str::recompile).c_str(), "gm.recompile()"))
                post_recompile(app);
            ImGui::Separator();
            if (ImGui::MenuItem("module.train()", tr(app, Str::top_mode_fixed)))
                post_set_training(app, true);
            expose(app, "more:train");
            if (ImGui::MenuItem("module.eval()")) post_set_training(app, false);
            expose(app, "more:eval");
            expose(app, "more:recompile");
            ImGui::EndPopup();
        }
        ImGui::SameLine(0, px(18));
        auto undo = ws->undo_history();
        auto redo = ws->redo_history();
        ImGui::BeginDisabled(undo.empty());
        if (ImGui::Button(label(app, Str::top_undo).c_str())) app.post_undo();
        expose(app, "undo");
        ImGui::EndDisabled();
        if (!undo.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(tr(app, Str::top_undo_tip), undo.back().label.c_str());
        ImGui::SameLine(0, px(2));
        ImGui::BeginDisabled(redo.empty());
        if (ImGui::Button(label(app, Str::top_redo).c_str())) app.post_redo();
        expose(app, "redo");
        ImGui::EndDisabled();
        if (!redo.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip(tr(app, Str::top_redo_tip), redo.front().label.c_str());
        ImGui::EndDisabled();
    }
    // The lessons, with their progress (also listed in the left column).
    ImGui::SameLine(0, px(18));
    const LessonRunner* lesson = app.lesson();
    float help_w = ImGui::CalcTextSize("?").x + 2 * ImGui::GetStyle().FramePadding.x;
    // The list takes what is left before "?" on a phone.
    ImGui::SetNextItemWidth(
        app.ui().compact
            ? std::clamp(width - ImGui::GetCursorPosX() - help_w - px(24), px(80), px(220))
            : px(220));
    std::string preview = lesson ? lesson->lesson().title : tr(app, Str::lessons);
    if (ImGui::BeginCombo("##lessons", preview.c_str())) {
        for (const LessonCatalog::Entry& e : app.lessons().entries) {
            const Lesson* l = app.lessons().find(e.id, app.lesson_lang());
            if (!l) continue;
            std::string item = l->title + "   " + std::to_string(app.progress(e.id).done.size()) +
                               " / " + std::to_string(l->steps.size());
            if (ImGui::Selectable(item.c_str(), lesson && lesson->lesson().id == e.id))
                app.open_lesson(e.id, 1);
            expose(app, "top:lesson:" + e.id);
        }
        ImGui::EndCombo();
    }
    expose(app, "top:lessons");
    ImGui::SameLine(width - help_w - px(12));
    if (ImGui::Button("?")) app.ui().show_help = !app.ui().show_help;
    expose(app, "help");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::top_help_tip));
    ImGui::End();
}

namespace {
float banner_wrap_width(float width) {
    return width - px(260);
}
} // namespace

float error_banner_height(const App& app) {
    if (app.view().error.empty()) return 0;
    float w = banner_wrap_width(ImGui::GetIO().DisplaySize.x);
    return std::max(ImGui::GetFrameHeight(), text_wrapped_height(app.view().error, w)) + px(12);
}

void draw_error_banner(App& app, float y, float width) {
    FileView& fv = app.view();
    if (fv.error.empty()) return;
    ImGui::SetNextWindowPos(ImVec2(0, y));
    ImGui::SetNextWindowSize(ImVec2(width, error_banner_height(app)));
    ImGui::PushStyleColor(ImGuiCol_WindowBg, to_vec4(colors::rgb(0x4A1E22)));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(12), px(5)));
    // NoFocusOnAppearing: keyboard focus stays on the control that caused it.
    ImGui::Begin("error", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoFocusOnAppearing);
    ImGui::PopStyleVar();
    ImGui::PopStyleColor();
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(to_vec4(colors::rgb(0xFFB4AE)), "%s", tr(app, Str::banner_failed));
    ImGui::SameLine();
    text_wrapped(fv.error, 0, banner_wrap_width(width));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", fv.error.c_str());
    ImGui::SetCursorPos(ImVec2(width - px(90), px(6)));
    if (ImGui::Button(label(app, Str::dismiss).c_str())) fv.error.clear();
    expose(app, "dismiss error");
    ImGui::End();
}

} // namespace pt2lab::app::ui
