// The Code tab: gm.code / print_readable / print(ep) of the current view,
// syntax coloured, lines linked to their nodes both ways, Copy to the clipboard.
#include "ui/code_panel.h"

#include <chrono>
#include <string_view>

#include "code_tokens.h"
#include "graph/printer.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

ImU32 token_color(TokenKind k) {
    switch (k) {
    case TokenKind::Keyword: return colors::code_keyword;
    case TokenKind::Target: return colors::code_target;
    case TokenKind::Attribute: return colors::code_attr;
    case TokenKind::Number: return colors::code_number;
    case TokenKind::String: return colors::code_string;
    case TokenKind::Comment: return colors::code_comment;
    case TokenKind::Punct: return colors::code_punct;
    case TokenKind::Name:
    case TokenKind::Space: return colors::text;
    }
    return colors::text;
}

void split_lines(const std::string& text, std::vector<std::string_view>& lines) {
    lines.clear();
    size_t start = 0;
    while (true) {
        size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
            lines.push_back(std::string_view(text).substr(start));
            break;
        }
        lines.push_back(std::string_view(text).substr(start, nl - start));
        start = nl + 1;
    }
}

} // namespace

void draw_code_tab(App& app) {
    const Workspace& ws = *app.workspace();
    FileView& fv = app.view();
    CodeForm& form = app.settings().code_form;
    PanelCaches::Code& cache = fv.caches.code;
    const ShownKey key = app.shown_key();
    const bool program = fv.graph == GraphView::Program;
    if (!ws.code_ready(fv.graph)) {
        // A big graph's code (1 MB at 10k nodes) is written over frames, a slice each
        // (a node's worth where the frame's allowance went to the graph or the facts).
        size_t done = 0, total = 0;
        bool written = false;
        if (app.may_derive()) {
            auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(app.slice_seconds()));
            written = ws.write_code(fv.graph, deadline, &done, &total);
            app.derived();
            cache.writing_done = done;
            cache.writing_total = total;
        } else if (cache.writing_key == key) { // how far it was (the frame had no room)
            done = cache.writing_done;
            total = cache.writing_total;
        }
        cache.writing_key = key;
        if (!written) {
            app.ui().wants_frames = true;
            const float f = total ? float(done) / float(total) : 0.0f;
            ImGui::TextDisabled(tr(app, Str::code_writing),
                                program ? "ep.graph_module.code" : "gm.code",
                                ws.graph(fv.graph).size(), int(f * 100));
            ImGui::ProgressBar(f, ImVec2(px(240), 0), "");
            return;
        }
    }
    const CodeView& cv = ws.code(fv.graph);

    // Which text.
    const std::string script_label = label(app, Str::code_form_script);
    const char* forms[] = {program ? "ep.graph_module.code" : "gm.code", "print_readable()",
                           program ? "print(ep)" : "print(gm.graph)", "Python"};
    for (int i = 0; i < 4; ++i) {
        if (i) ImGui::SameLine(0, px(2));
        bool active = static_cast<int>(form) == i;
        if (active) ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3D4F73)));
        if (small_button(app, i == 3 ? script_label.c_str() : forms[i]))
            form = static_cast<CodeForm>(i);
        expose(app, std::string("code:") + forms[i]);
        if (active) ImGui::PopStyleColor();
        if (i == 3 && ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr(app, Str::code_form_script_tip));
    }
    const std::string* text = &cv.text;
    if (form == CodeForm::Readable) text = &ws.readable(fv.graph);
    if (form == CodeForm::Printed) {
        if (program) {
            text = &ws.program_str();
        } else {
            if (cache.printed_key != key) { // print(gm.graph), once per version
                cache.printed = graph_str(*ws.module().graph);
                cache.printed_key = key;
            }
            text = &cache.printed;
        }
    }
    if (form == CodeForm::Script) { // the same for both views: what was done to the file
        if (cache.script_key != key) {
            cache.script = ws.python_script();
            cache.script_key = key;
        }
        text = &cache.script;
    }
    ImGui::SameLine();
    if (small_button(app, label(app, Str::copy).c_str()))
        app.copy(*text, forms[static_cast<int>(form)]);
    expose(app, "copy code");
    if (form == CodeForm::Code && cv.stale) {
        ImGui::SameLine();
        badge(tr(app, Str::code_stale), colors::warn);
        ImGui::SameLine();
        ImGui::BeginDisabled(app.busy());
        if (small_button(app, label(app, Str::recompile).c_str())) {
            EditAction e;
            e.kind = EditAction::Kind::Recompile;
            app.post(Action::of(e));
        }
        ImGui::EndDisabled();
    }
    const bool linked = form == CodeForm::Code && !cv.stale;
    if (form == CodeForm::Code && !linked) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", tr(app, Str::code_relink));
    }

    // The text: line numbers, a node-kind mark per line, coloured tokens.
    ImGui::BeginChild("code", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    // Split once per text (a 10k-node graph's code is ~1 MB): per shown version and form.
    const std::vector<std::string_view>& lines = cache.lines;
    // (The text's address and size too: the lines point into it.)
    if (cache.lines_key != key || cache.lines_form != form || cache.lines_text != text->data() ||
        cache.lines_size != text->size()) {
        split_lines(*text, cache.lines);
        cache.lines_key = key;
        cache.lines_form = form;
        cache.lines_text = text->data();
        cache.lines_size = text->size();
    }
    ImGui::PushFont(fonts().mono);
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
    float line_h = ImGui::GetTextLineHeight() + px(3);
    float gutter = ImGui::CalcTextSize("0000").x + px(14);
    float char_w = ImGui::CalcTextSize("0").x;
    const Graph& g = ws.graph(fv.graph);
    auto line_node = [&](size_t i) -> const Node* {
        if (!linked || i >= cv.line_nodes.size() || cv.line_nodes[i] == 0) return nullptr;
        return g.find_id(cv.line_nodes[i]);
    };
    // Scroll to the selection's first line when it changed.
    if (fv.scroll_code_to_selection && linked) {
        for (size_t i = 0; i < lines.size(); ++i) {
            const Node* n = line_node(i);
            if (n && n->id() == fv.selected) {
                float y = static_cast<float>(i) * line_h;
                if (y < ImGui::GetScrollY() ||
                    y > ImGui::GetScrollY() + ImGui::GetWindowHeight() - 2 * line_h)
                    ImGui::SetScrollY(y - ImGui::GetWindowHeight() * 0.3f);
                break;
            }
        }
    }
    fv.scroll_code_to_selection = false;
    float widest = 0;
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(lines.size()), line_h);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    while (clip.Step()) {
        for (int li = clip.DisplayStart; li < clip.DisplayEnd; ++li) {
            std::string_view line = lines[static_cast<size_t>(li)];
            const Node* n = line_node(static_cast<size_t>(li));
            ImVec2 p = ImGui::GetCursorScreenPos();
            float w = ImGui::GetWindowWidth() + ImGui::GetScrollX();
            ImVec2 row_max(p.x + std::max(w, widest + gutter), p.y + line_h);
            bool hovered = ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, row_max);
            uint32_t id = n ? n->id() : 0;
            if (id && id == fv.selected)
                dl->AddRectFilled(p, row_max, colors::line_select);
            else if (id && (id == app.ui().hovered_shown || hovered))
                dl->AddRectFilled(p, row_max, colors::line_hover);
            if (hovered && id) {
                app.ui().hovered = id;
                if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) app.select(id);
            }
            char num[16];
            std::snprintf(num, sizeof num, "%4d", li + 1);
            dl->AddText(ImVec2(p.x, p.y + px(1.5f)), colors::code_comment, num);
            if (n)
                dl->AddRectFilled(ImVec2(p.x + gutter - px(8), p.y + px(2)),
                                  ImVec2(p.x + gutter - px(5), p.y + line_h - px(2)),
                                  op_color(n->op()));
            float x = p.x + gutter;
            // Past the right edge, a long line (forward()'s 3000 parameters) is not
            // drawn: its width is estimated from the mono font's advance.
            float right = ImGui::GetWindowPos().x + ImGui::GetWindowWidth();
            // Only what can show is tokenized: the line up to the right edge and a
            // margin (a token cut there is past the edge, so it is never drawn).
            size_t shown = line.size();
            if (x < right && char_w > 0)
                shown = std::min(shown, static_cast<size_t>((right - x) / char_w) * 2 + 64);
            else if (x >= right)
                shown = 0;
            bool cut = false; // the rest of the line's width estimated
            for (const Token& t : tokenize_python_line(line.substr(0, shown))) {
                const char* b = line.data() + t.begin;
                const char* e = line.data() + t.end;
                if (x > right) {
                    x += char_w * static_cast<float>(line.size() - t.begin);
                    cut = true;
                    break;
                }
                ImU32 col = token_color(t.kind);
                if (t.kind == TokenKind::Name)
                    if (const Node* named = g.find(std::string(b, e))) col = op_color(named->op());
                if (t.kind != TokenKind::Space) dl->AddText(ImVec2(x, p.y + px(1.5f)), col, b, e);
                x += ImGui::CalcTextSize(b, e).x;
            }
            if (!cut) x += char_w * static_cast<float>(line.size() - shown);
            widest = std::max(widest, x - p.x - gutter);
            ImGui::Dummy(ImVec2(x - p.x, line_h));
            if (li == 0) expose(app, "code:line 1");
        }
    }
    ImGui::PopStyleVar();
    ImGui::PopFont();
    ImGui::EndChild();
}

} // namespace pt2lab::app::ui
