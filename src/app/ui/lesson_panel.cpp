// The lesson panel (see lesson_panel.h). Everything it shows comes from the
// App's LessonRunner; every button posts a lesson request (App::lesson_*).
#include "ui/lesson_panel.h"

#include <algorithm>
#include <cctype>

#include <imgui_internal.h>

#include "platform/platform.h"
#include "ui/keyboard.h"
#include "ui/markdown_view.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

namespace {

const ImU32 kAccent = colors::rgb(0x82AAFF);

std::string progress_label(const App& app, const std::string& id, size_t steps) {
    const LessonProgress& p = app.progress(id);
    return std::to_string(p.done.size()) + " / " + std::to_string(steps);
}

// The first step not done yet (where "open" resumes), 1 when all are.
int resume_step(const App& app, const std::string& id, size_t steps) {
    const LessonProgress& p = app.progress(id);
    for (int k = 1; k <= static_cast<int>(steps); ++k)
        if (!p.is_done(k)) return k;
    return 1;
}

void language_switch(App& app) {
    struct L {
        const char* lang;
        const char* label;
    };
    for (L l : {L{"zh-TW", "繁中"}, L{"en", "EN"}}) {
        bool on = app.lesson_lang() == l.lang;
        if (on) ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3A4A6A)));
        if (small_button(app, l.label)) app.set_lesson_lang(l.lang);
        if (on) ImGui::PopStyleColor();
        expose(app, std::string("lesson:lang:") + l.lang);
        ImGui::SameLine(0, px(2));
    }
    ImGui::NewLine();
}

// One dot per step: done filled, the current one ringed; click to go there.
void step_dots(App& app, const LessonRunner& r) {
    const LessonProgress& p = app.progress(r.lesson().id);
    float d = px(11), gap = px(5);
    // Not tab stops (Left / Right walk the steps); the arrows still reach them.
    ImGui::PushItemFlag(ImGuiItemFlags_NoTabStop, true);
    float avail = ImGui::GetContentRegionAvail().x;
    int per_line = std::max(1, static_cast<int>((avail + gap) / (d + gap)));
    for (int k = 1; k <= r.step_count(); ++k) {
        if ((k - 1) % per_line != 0) ImGui::SameLine(0, gap);
        ImGui::PushID(k);
        ImVec2 pos = ImGui::GetCursorScreenPos();
        if (ImGui::InvisibleButton("dot", ImVec2(d, d))) app.lesson_go(k);
        bool hovered = ImGui::IsItemHovered();
        ImGui::PopID();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        ImVec2 c(pos.x + d * 0.5f, pos.y + d * 0.5f);
        bool done = p.is_done(k);
        ImU32 col = done ? colors::good : colors::rgb(0x3A404C);
        dl->AddCircleFilled(c, d * 0.36f, col);
        if (k == r.step()) dl->AddCircle(c, d * 0.5f, kAccent, 0, px(1.6f));
        if (hovered) {
            dl->AddCircle(c, d * 0.5f, colors::text, 0, px(1));
            const LessonStep& st = r.lesson().steps[static_cast<size_t>(k - 1)];
            ImGui::SetTooltip("%d. %s", k, st.title.c_str());
        }
    }
    ImGui::PopItemFlag();
}

// What each of the step's actions did, one line each: "decompose: changed",
// "run: max |diff| 0, bit-identical", "lint: torch raises RuntimeError".
void action_result(const App& app, const LessonRunner& r) {
    const auto& rep = r.report();
    if (!rep) return;
    for (const LessonActionReport& a : rep->actions) {
        std::string what;
        ImU32 col = colors::text_dim;
        if (!a.torch_error_type.empty()) {
            what = strf(tr(app, Str::torch_raises_type), a.torch_error_type.c_str());
            col = colors::bad;
        } else if (a.run) {
            const ParityReport& pr = a.run->parity;
            char diff[32];
            std::snprintf(diff, sizeof diff, "%.3g", pr.max_abs());
            what = strf(tr(app, Str::res_parity), diff, parity_word(app, pr).c_str());
            col = pr.bit_identical() ? colors::good : pr.allclose() ? colors::warn : colors::bad;
        } else {
            what = tr(app, a.changed ? Str::res_changed : Str::res_unchanged);
        }
        std::string line = strf(tr(app, Str::res_line), a.kind.c_str(), what.c_str());
        ImGui::PushFont(fonts().mono);
        text_wrapped(line, col);
        ImGui::PopFont();
    }
    if (auto c = compare_step_runs(*rep)) { // several graphs ran: do their outputs agree?
        char diff[32];
        std::snprintf(diff, sizeof diff, "%.3g", c->max_abs);
        std::string line =
            strf(tr(app, Str::res_runs), static_cast<int>(c->runs),
                 tr(app, c->bit_identical ? Str::parity_bit_identical : Str::parity_differs), diff);
        ImGui::PushFont(fonts().mono);
        text_wrapped(line, c->bit_identical ? colors::good : colors::warn);
        ImGui::PopFont();
    }
}

void check_block(App& app, const LessonRunner& r) {
    const LessonStep& st = r.current();
    const Check& c = st.check;
    if (c.options.empty()) return;
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::Spacing();
    if (st.is_quiz) {
        badge(tr(app, Str::lesson_quiz), colors::rgb(0xC792EA), true);
    } else {
        badge(tr(app, Str::lesson_check), kAccent);
    }
    inline_text(c.question, colors::rgb(0xFFFFFF));
    ImGui::Spacing();
    int chosen = app.view().answer;
    float w = ImGui::GetContentRegionAvail().x;
    float pad = px(8);
    for (size_t i = 0; i < c.options.size(); ++i) {
        ImGui::PushID(static_cast<int>(i));
        std::string label = std::string(1, static_cast<char>('A' + i)) + ". ";
        InlineLayout l = layout_inline(label + c.options[i].text, w - 2 * pad);
        ImVec2 pos = ImGui::GetCursorScreenPos();
        // Touch (the compact layout): at least 44 px tall, the text in the middle.
        ImVec2 size(w, std::max(l.height() + pad, app.ui().compact ? px(44) : 0.f));
        const float text_y = (size.y - l.height()) * 0.5f;
        if (ImGui::InvisibleButton("option", size)) app.lesson_answer(static_cast<int>(i));
        expose(app, "lesson:option:" + std::to_string(i));
        bool hovered = ImGui::IsItemHovered();
        bool is_chosen = chosen == static_cast<int>(i);
        bool right = static_cast<int>(i) == c.answer;
        ImU32 bg = colors::rgb(0x20252D), border = colors::rgb(0x3A404C);
        if (hovered) bg = colors::rgb(0x2A303B);
        if (is_chosen)
            border = app.check_is_prediction() ? kAccent : right ? colors::good : colors::bad;
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(pos, ImVec2(pos.x + size.x, pos.y + size.y), bg, px(4));
        dl->AddRect(pos, ImVec2(pos.x + size.x, pos.y + size.y), border, px(4), 0,
                    is_chosen ? px(2) : px(1));
        draw_inline(l, ImVec2(pos.x + pad, pos.y + text_y));
        if (hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        ImGui::PopID();
    }
    if (chosen >= 0 && app.check_is_prediction()) {
        // A prediction: judged once the step's button has run.
        ImGui::Spacing();
        expose(app, "lesson:feedback");
        const std::string letter(1, static_cast<char>('A' + chosen));
        inline_text(strf(tr(app, Str::lesson_predicted), letter.c_str()), kAccent);
    } else if (chosen >= 0) {
        LessonCheckResult res = r.check_answer(chosen);
        ImGui::Spacing();
        ImGui::PushFont(fonts().heading);
        ImGui::TextColored(to_vec4(res.correct ? colors::good : colors::bad), "%s",
                           tr(app, res.correct ? Str::lesson_right : Str::lesson_wrong));
        ImGui::PopFont();
        expose(app, "lesson:feedback");
        inline_text(res.feedback);
    }
}

void header(App& app, const LessonRunner& r) {
    const Lesson& l = r.lesson();
    float lang_w = px(80);
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - lang_w);
    std::string preview = l.title;
    if (ImGui::BeginCombo("##lesson", preview.c_str())) {
        for (const LessonCatalog::Entry& e : app.lessons().entries) {
            const Lesson* el = app.lessons().find(e.id, app.lesson_lang());
            if (!el) continue;
            std::string item = el->title + "   " + progress_label(app, e.id, el->steps.size());
            if (ImGui::Selectable(item.c_str(), e.id == l.id) && e.id != l.id)
                app.open_lesson(e.id, resume_step(app, e.id, el->steps.size()));
            expose(app, "lesson:open:" + e.id);
        }
        ImGui::EndCombo();
    }
    expose(app, "lesson:select");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.title.c_str());
    ImGui::SameLine();
    language_switch(app);
    ImGui::Spacing();
    text_wrapped(l.summary, colors::text_dim);
    ImGui::Spacing();
    ImGui::TextUnformatted(strf(tr(app, Str::lesson_step_of), r.step(), r.step_count()).c_str());
    expose(app, "lesson:counter");
    ImGui::SameLine();
    step_dots(app, r);
}

// A button that looks disabled while `inert` but keeps keyboard focus (a disabled
// item is no tab stop: focus on it would be stuck once it turns off).
bool inert_button(const std::string& label, ImVec2 size, bool inert) {
    if (inert) ImGui::PushStyleVar(ImGuiStyleVar_Alpha, ImGui::GetStyle().DisabledAlpha);
    bool pressed = ImGui::Button(label.c_str(), size);
    if (inert) ImGui::PopStyleVar();
    return pressed && !inert;
}

// The step's button (always in view, under the text), then the navigation.
void footer(App& app, const LessonRunner& r) {
    ImGui::Separator();
    ImGui::Spacing();
    const LessonStep& st = r.current();
    if (!st.button.empty()) {
        bool done = r.performed();
        ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x2E6BE6)));
        ImGui::PushStyleColor(ImGuiCol_ButtonHovered,
                              to_vec4(colors::rgb(done ? 0x2E6BE6 : 0x4A82F0)));
        std::string text = (done ? std::string(tr(app, Str::lesson_done)) : std::string()) +
                           st.button + "###perform"; // one id, done or not: focus stays
        if (inert_button(text, ImVec2(ImGui::GetContentRegionAvail().x, 0), done))
            app.lesson_perform();
        ImGui::PopStyleColor(2);
        expose(app, "lesson:perform");
        ImGui::Spacing();
    }
    float w = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    if (inert_button(label(app, Str::lesson_prev), ImVec2(w, 0), r.step() <= 1))
        app.lesson_go(r.step() - 1);
    expose(app, "lesson:prev");
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x2F3D5C)));
    // The last step leads on to the next lesson of the course, when there is one.
    if (const Lesson* next_lesson = app.next_lesson()) {
        if (inert_button(label(app, Str::lesson_next_lesson), ImVec2(w, 0), false))
            app.open_lesson(next_lesson->id, 1);
        expose(app, "lesson:next-lesson");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(tr(app, Str::lesson_next_lesson_tip), next_lesson->title.c_str());
    } else {
        if (inert_button(label(app, Str::lesson_next), ImVec2(w, 0), r.step() >= r.step_count()))
            app.lesson_go(r.step() + 1);
        expose(app, "lesson:next");
    }
    ImGui::PopStyleColor();
    // Small buttons side by side while they fit, else on the next line.
    auto same_line_if_fits = [&](Str s) {
        float w = ImGui::CalcTextSize(tr(app, s)).x + 2 * ImGui::GetStyle().FramePadding.x;
        float spacing = ImGui::GetStyle().ItemSpacing.x;
        float right = ImGui::GetItemRectMax().x + spacing + w;
        if (right <= ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
            ImGui::SameLine();
    };
    if (small_button(app, label(app, Str::lesson_reset).c_str())) app.lesson_reset();
    expose(app, "lesson:reset");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::lesson_reset_tip));
    same_line_if_fits(Str::lesson_text_view);
    if (small_button(app, label(app, Str::lesson_text_view).c_str())) platform::toggle_text_view();
    expose(app, "lesson:textview");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::lesson_text_view_tip));
    same_line_if_fits(Str::lesson_leave);
    if (small_button(app, label(app, Str::lesson_leave).c_str())) app.leave_lesson();
    expose(app, "lesson:leave");
}

// What was wrong with the link the page followed (#m00-9/1), until dismissed.
void link_notice(App& app) {
    if (app.link_notice().empty()) return;
    text_wrapped(app.link_notice(), colors::warn);
    expose(app, "lesson:link_notice");
    if (small_button(app, (tr(app, Str::dismiss) + std::string("###link_dismiss")).c_str()))
        app.dismiss_link_notice();
    expose(app, "lesson:link_notice:dismiss");
    ImGui::Separator();
}

// A dropped lesson file: what it is and what the check said, while it is shown.
void preview_notice(App& app) {
    const auto* p = app.lesson_preview();
    if (!p) return;
    text_wrapped(strf(tr(app, Str::lesson_preview), p->file.c_str()), colors::text_dim);
    expose(app, "lesson:preview");
    if (!p->checked) return;
    size_t nl = p->notes.find('\n');
    text_wrapped(p->notes.substr(0, nl), p->ok ? colors::good : colors::warn);
    if (nl != std::string::npos) text_wrapped(p->notes.substr(nl + 1), colors::warn);
    ImGui::Separator();
}

} // namespace

// A first visit: what the page is, and the course's first lesson one press away.
// In the list, not over the graph (a card there covered nodes one must reach).
void welcome(App& app) {
    const auto& entries = app.lessons().entries;
    if (!app.first_visit() || entries.empty()) return;
    text_wrapped(tr(app, Str::welcome_text));
    expose(app, "welcome");
    const std::string id = entries.front().id;
    std::string shown = id;
    for (char& c : shown) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x2F5A9E)));
    if (ImGui::Button(
            (strf(tr(app, Str::welcome_start), shown.c_str()) + "###welcome_start").c_str())) {
        app.dismiss_welcome();
        app.open_lesson(id, 1);
    }
    ImGui::PopStyleColor();
    expose(app, "welcome:start");
    same_line_fit(app, button_width(tr(app, Str::welcome_dismiss)));
    if (small_button(app, label(app, Str::welcome_dismiss).c_str())) app.dismiss_welcome();
    expose(app, "welcome:dismiss");
    ImGui::Spacing();
}

void lesson_list(App& app) {
    section(tr(app, Str::lessons));
    link_notice(app);
    if (!app.lessons_error().empty()) {
        text_wrapped(app.lessons_error(), colors::bad);
        return;
    }
    welcome(app);
    language_switch(app);
    for (const LessonCatalog::Entry& e : app.lessons().entries) {
        const Lesson* l = app.lessons().find(e.id, app.lesson_lang());
        if (!l) continue;
        ImGui::PushID(e.id.c_str());
        // The title, cut with "…" where it would run into the progress (whole on hover).
        const std::string progress = progress_label(app, e.id, l->steps.size());
        const float x0 = ImGui::GetCursorPosX(), avail = ImGui::GetContentRegionAvail().x;
        const float progress_w = ImGui::CalcTextSize(progress.c_str()).x;
        const std::string title =
            fit_text(l->title, avail - progress_w - ImGui::GetStyle().ItemSpacing.x * 2);
        bool current = app.lesson() && app.lesson()->lesson().id == e.id;
        if (ImGui::Selectable((title + "###open").c_str(), current))
            app.open_lesson(e.id, resume_step(app, e.id, l->steps.size()));
        if (title != l->title && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l->title.c_str());
        expose(app, "lesson:open:" + e.id);
        ImGui::SameLine(x0 + avail - progress_w);
        ImGui::TextDisabled("%s", progress.c_str());
        ImGui::PopID();
    }
    if (!app.lesson_pending().empty()) ImGui::TextDisabled("%s", tr(app, Str::lesson_loading));
}

void draw_lesson_panel(App& app, ImVec2 pos, ImVec2 size) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("Lesson", nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoTitleBar);
    keyboard_focus_scope(app);
    const LessonRunner* rp = app.lesson();
    if (!rp) {
        lesson_list(app);
        ImGui::End();
        return;
    }
    const LessonRunner& r = *rp;
    const LessonStep& st = r.current();
    header(app, r);
    ImGui::Separator();
    link_notice(app);
    preview_notice(app);

    float row = ImGui::GetFrameHeightWithSpacing();
    float small_w = ImGui::CalcTextSize(tr(app, Str::lesson_reset)).x +
                    ImGui::CalcTextSize(tr(app, Str::lesson_text_view)).x +
                    ImGui::CalcTextSize(tr(app, Str::lesson_leave)).x +
                    6 * ImGui::GetStyle().FramePadding.x + 2 * ImGui::GetStyle().ItemSpacing.x;
    int small_rows = small_w <= ImGui::GetContentRegionAvail().x ? 1 : 2;
    float footer_h = row * static_cast<float>((st.button.empty() ? 1 : 2) + small_rows) + px(16);
    // NavFlattened: Tab goes from the header through the step's text to the footer.
    ImGui::BeginChild("step", ImVec2(0, -footer_h), false, ImGuiWindowFlags_NavFlattened);
    // The child scrolls back to the top when the step changes.
    std::string& shown = app.ui().lesson_scrolled;
    std::string key = r.deep_link() + app.lesson_lang();
    if (key != shown) {
        ImGui::SetScrollY(0);
        shown = key;
    }
    ImGui::PushFont(fonts().heading);
    inline_text(st.title, colors::rgb(0xFFFFFF));
    ImGui::PopFont();
    expose(app, "lesson:title");
    ImGui::Spacing();
    if (!app.step_text().intro.empty()) {
        markdown_view(app, app.step_text().intro, "intro");
        ImGui::Separator();
        ImGui::Spacing();
    }
    markdown_view(app, app.step_text().prose, "prose");
    if (!st.button.empty() && r.performed()) {
        ImGui::Spacing();
        action_result(app, r);
    }
    if (st.actions.empty() || r.performed()) {
        ImGui::Spacing();
        markdown_view(app, app.step_text().after, "after");
    }
    check_block(app, r);
    // The lesson's last step: how the checks went the first time (retries are free,
    // but they are not what counts).
    if (r.step() == r.step_count()) {
        const auto [right, asked] = app.first_tries();
        if (asked > 0) {
            ImGui::Spacing();
            inline_text(strf(tr(app, Str::lesson_first_tries), right, asked),
                        colors::rgb(0xB0B8C8));
            expose(app, "lesson:first-tries");
        }
    }
    ImGui::Dummy(ImVec2(0, px(8)));
    ImGui::EndChild();
    footer(app, r);
    ImGui::End();
}

} // namespace pt2lab::app::ui
