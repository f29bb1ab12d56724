// A read-only pane for one of a lesson step's `compare` graphs: a label line
// (key, file, view) and the graph's boxes and edges, fitted; wheel and drag
// pan and zoom it as in the main view.
#include "ui/compare_view.h"

#include <cmath>

#include "ui/graph_view.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

void draw_compare_view(App& app, size_t index, ImVec2 pos, ImVec2 size) {
    std::vector<App::CompareGraph> graphs = app.compare_graphs();
    if (index >= graphs.size()) return;
    const App::CompareGraph& g = graphs[index];
    const Scene& sc = app.compare_scene(index);
    Camera& cam = app.view().compare_camera[index % 4];
    std::string name = "compare " + std::to_string(index);
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(px(8), px(6)));
    ImGui::Begin(name.c_str(), nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
    ImGui::PopStyleVar();
    std::string file = g.ws->file();
    size_t slash = file.find_last_of('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    ImGui::TextColored(to_vec4(colors::code_target), "%s", g.key.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s, %s", file.c_str(), graph_view_name(g.view));
    ImVec2 cpos = ImGui::GetCursorScreenPos();
    ImVec2 csize = ImGui::GetContentRegionAvail();
    csize.x = std::max(csize.x, 10.0f);
    csize.y = std::max(csize.y, 10.0f);
    CanvasRect rect{cpos.x, cpos.y, csize.x, csize.y, fonts().scale};
    if (!cam.fitted || (cam.follow_fit && (cam.fit_w != rect.w || cam.fit_h != rect.h)))
        fit_camera(cam, sc, rect);
    ImGui::InvisibleButton("canvas", csize);
    ImGuiIO& io = ImGui::GetIO();
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
        float k = cam.zoom * rect.scale;
        cam.follow_fit = false;
        cam.cx -= io.MouseDelta.x / k;
        cam.cy -= io.MouseDelta.y / k;
    }
    if (ImGui::IsItemHovered() && io.MouseWheel != 0)
        zoom_camera(cam, rect, std::pow(1.15f, io.MouseWheel), {io.MousePos.x, io.MousePos.y});
    float k = cam.zoom * rect.scale;
    auto screen = [&](LayoutPoint p) {
        LayoutPoint s = world_to_screen(cam, rect, p);
        return ImVec2(s.x, s.y);
    };
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(cpos, ImVec2(cpos.x + csize.x, cpos.y + csize.y), true);
    dl->AddRectFilled(cpos, ImVec2(cpos.x + csize.x, cpos.y + csize.y), colors::canvas);
    float thick = std::max(1.0f, 1.3f * k);
    for (const LayoutEdge& e : sc.layout.edges) {
        if (e.self_loop || e.points.size() < 2) continue;
        for (size_t i = 0; i + 1 < e.points.size(); ++i) {
            ImVec2 a = screen(e.points[i]), b = screen(e.points[i + 1]);
            float dy = (b.y - a.y) * 0.5f;
            dl->AddBezierCubic(a, ImVec2(a.x, a.y + dy), ImVec2(b.x, b.y - dy), b, colors::edge,
                               thick);
        }
    }
    float name_px = fonts().ui_size * k;
    bool text = name_px >= 5.0f * rect.scale;
    for (size_t i = 0; i < sc.nodes.size(); ++i) {
        const SceneNode& n = sc.nodes[i];
        ImVec2 c = screen(sc.layout.center[i]);
        float hw = n.size.x * k * 0.5f, hh = n.size.y * k * 0.5f;
        ImVec2 a(c.x - hw, c.y - hh), b(c.x + hw, c.y + hh);
        ImU32 kind = op_color(n.op);
        dl->AddRectFilled(a, b, colors::node_body, 5 * k);
        dl->AddRectFilled(a, ImVec2(a.x + 4 * k, b.y), kind, 5 * k, ImDrawFlags_RoundCornersLeft);
        dl->AddRect(a, b, (kind & 0x00FFFFFF) | 0x70000000, 5 * k, 0, std::max(1.0f, k));
        if (!text) continue;
        ImVec4 clip(a.x, a.y, b.x, b.y);
        ImVec2 t(a.x + 10 * k, a.y + 6 * k);
        dl->AddText(fonts().ui, name_px, t, colors::text, n.name.c_str(), nullptr, 0, &clip);
        dl->AddText(fonts().ui, name_px * 0.93f, ImVec2(t.x, t.y + 17 * k), kind, n.kind.c_str(),
                    nullptr, 0, &clip);
    }
    dl->PopClipRect();
    ImGui::End();
}

} // namespace pt2lab::app::ui
