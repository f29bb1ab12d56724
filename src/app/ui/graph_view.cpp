// The graph view's canvas: boxes coloured by node kind, edges with arrowheads,
// pan / zoom, hover and click, search matches, the diff overlay, culling.
#include "ui/graph_view.h"

#include <imgui_internal.h> // IsMouseDragPastThreshold

#include <algorithm>
#include <array>
#include <cmath>

#include "ui/graph_toolbar.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

ImVec2 to_im(LayoutPoint p) {
    return ImVec2(p.x, p.y);
}

ImU32 with_alpha(ImU32 c, float a) {
    unsigned alpha =
        static_cast<unsigned>(std::clamp(a, 0.0f, 1.0f) * ((c >> IM_COL32_A_SHIFT) & 0xFF));
    return (c & ~IM_COL32_A_MASK) | (alpha << IM_COL32_A_SHIFT);
}

struct View {
    Camera& cam;
    CanvasRect rect;
    float k; // device pixels per layout unit
    ImVec2 screen(LayoutPoint p) const { return to_im(world_to_screen(cam, rect, p)); }
};

void draw_grid(ImDrawList* dl, const View& v) {
    float step = 40 * v.k;
    while (step < 14 * v.rect.scale) step *= 2;
    LayoutPoint origin = world_to_screen(v.cam, v.rect, {0, 0});
    float x0 = v.rect.x + std::fmod(origin.x - v.rect.x, step);
    float y0 = v.rect.y + std::fmod(origin.y - v.rect.y, step);
    if (x0 < v.rect.x) x0 += step;
    if (y0 < v.rect.y) y0 += step;
    float dot = std::max(1.0f, v.rect.scale);
    for (float x = x0; x < v.rect.x + v.rect.w; x += step)
        for (float y = y0; y < v.rect.y + v.rect.h; y += step)
            dl->AddRectFilled(ImVec2(x, y), ImVec2(x + dot, y + dot), colors::grid);
}

void arrowhead(ImDrawList* dl, ImVec2 tip, ImVec2 from, float size, ImU32 col) {
    ImVec2 d(tip.x - from.x, tip.y - from.y);
    float len = std::sqrt(d.x * d.x + d.y * d.y);
    if (len < 1e-3f) d = ImVec2(0, 1), len = 1;
    d = ImVec2(d.x / len, d.y / len);
    ImVec2 n(-d.y, d.x);
    ImVec2 base(tip.x - d.x * size, tip.y - d.y * size);
    dl->AddTriangleFilled(tip, ImVec2(base.x + n.x * size * 0.5f, base.y + n.y * size * 0.5f),
                          ImVec2(base.x - n.x * size * 0.5f, base.y - n.y * size * 0.5f), col);
}

// Cubic pieces between consecutive route points, vertical at both ends.
void draw_route(ImDrawList* dl, const std::vector<ImVec2>& pts, ImU32 col, float thick, bool back) {
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
        ImVec2 a = pts[i], b = pts[i + 1];
        float dy = (b.y - a.y) * 0.5f;
        if (back && std::fabs(dy) < 1) dy = -20;
        dl->AddBezierCubic(a, ImVec2(a.x, a.y + dy), ImVec2(b.x, b.y - dy), b, col, thick);
    }
}

// Index of the node under p (device pixels), or -1; the last drawn wins.
// The diff badge on a box in the page's language (diff_mark_name is the state hook's word).
Str diff_mark_label(DiffMark m) {
    switch (m) {
    case DiffMark::Added: return Str::diff_added;
    case DiffMark::Rewired: return Str::diff_rewired;
    case DiffMark::Changed: return Str::diff_changed;
    case DiffMark::Removed:
    case DiffMark::None: break;
    }
    return Str::diff_removed;
}

int hit_test(const Scene& sc, const View& v, ImVec2 p) {
    for (int i = static_cast<int>(sc.nodes.size()) - 1; i >= 0; --i) {
        ImVec2 c = v.screen(sc.layout.center[static_cast<size_t>(i)]);
        const LayoutPoint& s = sc.nodes[static_cast<size_t>(i)].size;
        if (std::fabs(p.x - c.x) <= s.x * v.k * 0.5f && std::fabs(p.y - c.y) <= s.y * v.k * 0.5f)
            return i;
    }
    return -1;
}

// Frames of expanded modules: outer ones get more room around their boxes.
float frame_pad(int depth) {
    return 6.0f + 5.0f * static_cast<float>(std::max(0, 4 - depth));
}
constexpr float kFrameHeader = 15; // layout units above a frame's top edge

// The header tab of frame f (screen): click it to collapse the module.
void frame_header(const SceneFrame& f, const View& v, ImVec2& a, ImVec2& b) {
    float pad = frame_pad(f.depth);
    ImVec2 lo = v.screen({f.lo.x - pad, f.lo.y - pad});
    float w = std::max(60.0f, 7.0f * static_cast<float>(f.path.size() + f.type.size() + 4));
    a = ImVec2(lo.x, lo.y - kFrameHeader * v.k);
    b = ImVec2(lo.x + w * v.k, lo.y);
}

int hit_frame(const Scene& sc, const View& v, ImVec2 p) {
    for (int i = static_cast<int>(sc.frames.size()) - 1; i >= 0; --i) {
        ImVec2 a, b;
        frame_header(sc.frames[static_cast<size_t>(i)], v, a, b);
        if (p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y) return i;
    }
    return -1;
}

// The minimap (large graphs): the whole layout in a corner, the visible part outlined.
struct Minimap {
    bool shown = false;
    ImVec2 a, b; // screen rect
    float s = 1; // screen pixels per layout unit
    ImVec2 origin;
    ImVec2 screen(LayoutPoint p) const { return ImVec2(origin.x + p.x * s, origin.y + p.y * s); }
    LayoutPoint world(ImVec2 p) const { return {(p.x - origin.x) / s, (p.y - origin.y) / s}; }
};

Minimap minimap_for(const Scene& sc, const View& v) {
    Minimap m;
    float lw = std::max(1.0f, sc.layout.width), lh = std::max(1.0f, sc.layout.height);
    bool big = sc.nodes.size() > 80 || lw * v.k > v.rect.w * 2.5f || lh * v.k > v.rect.h * 2.5f;
    if (!big || v.rect.w < 320 * v.rect.scale || v.rect.h < 220 * v.rect.scale) return m;
    float pad = 6 * v.rect.scale;
    float max_w = std::min(180 * v.rect.scale, v.rect.w * 0.22f);
    float max_h = v.rect.h * 0.45f;
    m.s = std::min(max_w / lw, max_h / lh);
    float w = lw * m.s, h = lh * m.s;
    m.b = ImVec2(v.rect.x + v.rect.w - 10 * v.rect.scale, v.rect.y + v.rect.h - 10 * v.rect.scale);
    m.a = ImVec2(m.b.x - w - 2 * pad, m.b.y - h - 2 * pad);
    m.origin = ImVec2(m.a.x + pad, m.a.y + pad);
    m.shown = true;
    return m;
}

bool inside(ImVec2 p, ImVec2 a, ImVec2 b) {
    return p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y;
}

void draw_minimap(ImDrawList* dl, const Minimap& m, const Scene& sc, const View& v) {
    dl->AddRectFilled(m.a, m.b, colors::rgb(0x0F1115, 230), 4 * v.rect.scale);
    dl->AddRect(m.a, m.b, colors::rgb(0x3A414D), 4 * v.rect.scale);
    float dot = std::max(1.0f, 0.6f * v.rect.scale);
    for (size_t i = 0; i < sc.nodes.size(); ++i) {
        const SceneNode& n = sc.nodes[i];
        ImVec2 c = m.screen(sc.layout.center[i]);
        float hw = std::max(dot, n.size.x * m.s * 0.5f), hh = std::max(dot, n.size.y * m.s * 0.5f);
        dl->AddRectFilled(ImVec2(c.x - hw, c.y - hh), ImVec2(c.x + hw, c.y + hh),
                          n.group >= 0 ? colors::code_target : op_color(n.op));
    }
    LayoutPoint w0 = screen_to_world(v.cam, v.rect, {v.rect.x, v.rect.y});
    LayoutPoint w1 = screen_to_world(v.cam, v.rect, {v.rect.x + v.rect.w, v.rect.y + v.rect.h});
    ImVec2 a = m.screen(w0), b = m.screen(w1);
    a = ImVec2(std::max(a.x, m.a.x), std::max(a.y, m.a.y));
    b = ImVec2(std::min(b.x, m.b.x), std::min(b.y, m.b.y));
    if (a.x < b.x && a.y < b.y) {
        dl->AddRectFilled(a, b, colors::rgb(0xFFFFFF, 28));
        dl->AddRect(a, b, colors::rgb(0xFFFFFF, 170), 0, 0, std::max(1.0f, v.rect.scale));
    }
}

// A lesson step that shows "lint": graph.lint()'s verdict on the shown graph, at
// the canvas's bottom left (a lesson has no file panel, where lint is shown otherwise).
void draw_lint_note(App& app, ImDrawList* dl, const CanvasRect& r) {
    const LessonRunner* lesson = app.lesson();
    if (!lesson) return;
    const std::vector<std::string>& show = lesson->current().show;
    if (std::find(show.begin(), show.end(), "lint") == show.end()) return;
    // Linted once per shown version (App::shown_key: a new epoch on every open).
    PanelCaches::LintNote& note = app.view().caches.lint_note;
    if (note.key != app.shown_key()) {
        note.message = app.workspace()->lint_message(app.view().graph);
        note.key = app.shown_key();
        app.glyphs().note(note.message); // node names in any script: drawn, not "?"
    }
    const std::string& message = note.message;
    const std::string line = message.empty() ? tr(app, Str::web_lint_ok)
                                             : tr(app, Str::file_lint_fails) + (" " + message);
    ImFont* font = fonts().mono;
    const float size = fonts().mono_size * r.scale, pad = 6 * r.scale;
    const float wrap = std::max(40 * r.scale, std::min(r.w * 0.7f, 560 * r.scale));
    ImVec2 ts = font->CalcTextSizeA(size, 1e9f, wrap, line.c_str());
    ImVec2 a(r.x + 10 * r.scale, r.y + r.h - 10 * r.scale - ts.y - 2 * pad);
    ImVec2 b(a.x + ts.x + 2 * pad, a.y + ts.y + 2 * pad);
    ImU32 col = message.empty() ? colors::good : colors::bad;
    dl->AddRectFilled(a, b, colors::rgb(0x0F1115, 235), 4 * r.scale);
    dl->AddRect(a, b, col, 4 * r.scale);
    dl->AddText(font, size, ImVec2(a.x + pad, a.y + pad), col, line.c_str(), nullptr, wrap);
    const float k = r.scale;
    app.ui().widgets["graph:lint"] = {a.x / k, a.y / k, (b.x - a.x) / k, (b.y - a.y) / k};
}

} // namespace

void fit_camera(Camera& cam, const Scene& sc, const CanvasRect& r) {
    float margin = 24 * r.scale;
    float w = std::max(1.0f, sc.layout.width), h = std::max(1.0f, sc.layout.height);
    float zx = (r.w - 2 * margin) / (w * r.scale), zy = (r.h - 2 * margin) / (h * r.scale);
    // Never smaller than legible: node titles at least kLegiblePx CSS pixels tall.
    // A graph that does not fit at that size starts at its input, the rest a
    // scroll, the minimap or a search away. Above 1 the glyphs blur.
    const float legible = std::min(1.0f, kLegiblePx / fonts().ui_size);
    cam.zoom = std::clamp(std::min(zx, zy), legible, 1.0f);
    cam.cx = sc.layout.width * 0.5f;
    cam.cy = sc.layout.height * 0.5f;
    const float half_w = r.w * 0.5f / (cam.zoom * r.scale);
    const float half_h = r.h * 0.5f / (cam.zoom * r.scale);
    const float m = margin / (cam.zoom * r.scale);
    if (zx < legible || zy < legible) {
        int start = sc.nodes.empty() ? -1 : 0;
        for (size_t i = 0; i < sc.nodes.size(); ++i)
            if (sc.nodes[i].op == Op::Placeholder && sc.nodes[i].kind == "input") {
                start = static_cast<int>(i);
                break;
            }
        LayoutPoint at =
            start >= 0 ? sc.layout.center[static_cast<size_t>(start)] : LayoutPoint{0, 0};
        float top = start >= 0 ? at.y - sc.nodes[static_cast<size_t>(start)].size.y * 0.5f : 0;
        if (zx < legible) // the input in the middle, the layout's edges never far inside
            cam.cx = std::clamp(at.x, half_w - m, std::max(half_w - m, w - half_w + m));
        if (zy < legible) cam.cy = top - m + half_h; // the input's row at the top
    }
    cam.fitted = true;
    cam.follow_fit = true;
    cam.fit_w = r.w;
    cam.fit_h = r.h;
    cam.fit_lw = sc.layout.width;
    cam.fit_lh = sc.layout.height;
}

void zoom_camera(Camera& cam, const CanvasRect& r, float factor, LayoutPoint anchor_screen) {
    cam.follow_fit = false;
    LayoutPoint before = screen_to_world(cam, r, anchor_screen);
    cam.zoom = std::clamp(cam.zoom * factor, 0.05f, 4.0f);
    LayoutPoint after = screen_to_world(cam, r, anchor_screen);
    cam.cx += before.x - after.x;
    cam.cy += before.y - after.y;
}

void reveal_node(Camera& cam, const Scene& sc, const CanvasRect& r, int index) {
    if (index < 0) return;
    LayoutPoint c = sc.layout.center[static_cast<size_t>(index)];
    LayoutPoint s = world_to_screen(cam, r, c);
    float m = 40 * r.scale;
    if (s.x < r.x + m || s.x > r.x + r.w - m || s.y < r.y + m || s.y > r.y + r.h - m) {
        cam.follow_fit = false;
        cam.cx = c.x;
        cam.cy = c.y;
    }
}

void draw_graph_view(App& app, ImVec2 pos, ImVec2 size) {
    const Workspace* ws = app.workspace();
    UiState& ui = app.ui();
    FileView& fv = app.view();
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::Begin("graph", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
    ImGui::PopStyleVar();
    if (!ws) {
        ImGui::SetCursorPos(ImVec2(px(16), px(16)));
        ImGui::TextDisabled("%s", tr(app, Str::graph_loading));
        ImGui::End();
        return;
    }
    const Scene& sc = app.scene(fv.graph);
    if (sc.nodes.empty() && !app.scene_current(fv.graph)) { // its first scene, a frame later
        ImGui::SetCursorPos(ImVec2(px(16), px(16)));
        ImGui::TextDisabled(tr(app, Str::graph_laying_out), ws->graph(fv.graph).size());
        ImGui::End();
        return;
    }
    Camera& cam = fv.camera[fv.graph == GraphView::Program ? 0 : 1];
    draw_graph_toolbar(app, sc);

    ImVec2 cpos = ImGui::GetCursorScreenPos();
    ImVec2 csize = ImGui::GetContentRegionAvail();
    csize.x = std::max(csize.x, 10.0f);
    csize.y = std::max(csize.y, 10.0f);
    ui.canvas = {cpos.x, cpos.y, csize.x, csize.y, fonts().scale};
    bool resized = cam.fit_w != ui.canvas.w || cam.fit_h != ui.canvas.h ||
                   cam.fit_lw != sc.layout.width || cam.fit_lh != sc.layout.height;
    const uint64_t epoch = app.scene_epoch(fv.graph); // the shown scene's (a new one may wait)
    if (!cam.fitted || (cam.follow_fit && (resized || cam.epoch != epoch)))
        fit_camera(cam, sc, ui.canvas);
    cam.epoch = epoch;
    if (fv.reveal) { // a search hit or breadcrumb target, now that its modules are expanded
        reveal_node(cam, sc, ui.canvas, sc.find_shown(fv.reveal));
        fv.reveal = 0;
    }
    View v{cam, ui.canvas, cam.zoom * ui.canvas.scale};
    Minimap map = minimap_for(sc, v);

    ImGui::InvisibleButton("canvas", csize,
                           ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
    bool hovered = ImGui::IsItemHovered();
    ImGuiIO& io = ImGui::GetIO();
    bool& map_drag = ui.map_drag; // the press began on the minimap: it steers the camera
    if (ImGui::IsItemActivated()) map_drag = map.shown && inside(io.MousePos, map.a, map.b);
    bool on_map = map.shown && inside(io.MousePos, map.a, map.b);
    int under = hovered && !on_map ? hit_test(sc, v, io.MousePos) : -1;
    if (ImGui::IsItemActive() && map_drag && map.shown) {
        LayoutPoint w = map.world(io.MousePos);
        cam.follow_fit = false;
        cam.cx = std::clamp(w.x, 0.0f, sc.layout.width);
        cam.cy = std::clamp(w.y, 0.0f, sc.layout.height);
    } else if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
        cam.follow_fit = false;
        cam.cx -= io.MouseDelta.x / v.k;
        cam.cy -= io.MouseDelta.y / v.k;
    }
    if (ImGui::IsItemDeactivated() && !map_drag &&
        !ImGui::IsMouseDragPastThreshold(ImGuiMouseButton_Left, 2.0f)) {
        int hit = hit_test(sc, v, io.MousePos);
        int frame = hit < 0 ? hit_frame(sc, v, io.MousePos) : -1;
        if (hit >= 0 && sc.nodes[static_cast<size_t>(hit)].group >= 0)
            app.toggle_module(sc.nodes[static_cast<size_t>(hit)].name); // expand it
        else if (frame >= 0)
            app.toggle_module(sc.frames[static_cast<size_t>(frame)].path); // collapse it
        else
            app.select(hit >= 0 ? sc.nodes[static_cast<size_t>(hit)].id : 0);
    }
    if (hovered && io.MouseWheel != 0)
        zoom_camera(cam, ui.canvas, std::pow(1.15f, io.MouseWheel), {io.MousePos.x, io.MousePos.y});
    v.k = cam.zoom * ui.canvas.scale;
    if (under >= 0) {
        const SceneNode& n = sc.nodes[static_cast<size_t>(under)];
        if (n.id) ui.hovered = n.id;
        if (n.group >= 0)
            ImGui::SetTooltip(tr(app, Str::graph_group_tip), n.name.c_str(), n.kind.c_str(),
                              n.members);
        ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    } else if (hovered && !on_map && hit_frame(sc, v, io.MousePos) >= 0) {
        ImGui::SetTooltip("%s", tr(app, Str::graph_collapse_tip));
        ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    }

    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(cpos, ImVec2(cpos.x + csize.x, cpos.y + csize.y), true);
    dl->AddRectFilled(cpos, ImVec2(cpos.x + csize.x, cpos.y + csize.y), colors::canvas);
    draw_grid(dl, v);

    // What is "hot": the hovered node (graph or code view), else the selection.
    int focus = under;
    if (focus < 0 && ui.hovered_shown) focus = sc.find_shown(ui.hovered_shown);
    if (focus < 0 && fv.selected) focus = sc.find_shown(fv.selected);
    std::vector<uint8_t> hot(sc.nodes.size(), 0); // 1 input of focus, 2 user of focus
    if (focus >= 0) {
        for (int i : sc.inputs[static_cast<size_t>(focus)]) hot[static_cast<size_t>(i)] |= 1;
        for (int u : sc.users[static_cast<size_t>(focus)]) hot[static_cast<size_t>(u)] |= 2;
    }
    double t = ImGui::GetTime();
    float ghost_alpha =
        app.animating() ? 0.75f - 0.4f * static_cast<float>(std::fmod(t, 2.0) / 2.0) : 0.35f;
    auto node_alpha = [&](int i) {
        return sc.nodes[static_cast<size_t>(i)].mark == DiffMark::Removed ? ghost_alpha : 1.0f;
    };
    // Culling in layout units: what lies outside the canvas (plus a margin) is not drawn.
    LayoutPoint w_lo = screen_to_world(cam, ui.canvas, {cpos.x, cpos.y});
    LayoutPoint w_hi = screen_to_world(cam, ui.canvas, {cpos.x + csize.x, cpos.y + csize.y});
    w_lo = {w_lo.x - 60, w_lo.y - 60};
    w_hi = {w_hi.x + 60, w_hi.y + 60};
    auto visible = [&](float x0, float y0, float x1, float y1) {
        return x1 >= w_lo.x && x0 <= w_hi.x && y1 >= w_lo.y && y0 <= w_hi.y;
    };
    // Level of detail: text from 5 px glyphs up; below ~7 px boxes, plain blocks
    // and straight edges (a 10k-node graph fitted to the canvas).
    float name_px = fonts().ui_size * v.k;
    bool text = name_px >= 5.0f * ui.canvas.scale;
    bool coarse = 17 * v.k < 4.0f * ui.canvas.scale;

    // Frames of expanded modules, outermost first.
    ImFont* ui_font = fonts().ui;
    for (const SceneFrame& f : sc.frames) {
        float pad = frame_pad(f.depth);
        if (!visible(f.lo.x - pad, f.lo.y - pad - kFrameHeader, f.hi.x + pad, f.hi.y + pad))
            continue;
        ImVec2 a = v.screen({f.lo.x - pad, f.lo.y - pad}),
               b = v.screen({f.hi.x + pad, f.hi.y + pad});
        dl->AddRectFilled(a, b, colors::rgb(0x82AAFF, 10), 6 * v.k);
        dl->AddRect(a, b, colors::rgb(0x82AAFF, 70), 6 * v.k, 0, std::max(1.0f, v.k));
        if (!text) continue;
        ImVec2 ha, hb;
        frame_header(f, v, ha, hb);
        dl->AddRectFilled(ha, hb, colors::rgb(0x2A3550), 4 * v.k, ImDrawFlags_RoundCornersTop);
        const float css = ui.canvas.scale; // the header, for the state hook (click it to collapse)
        ui.widgets["frame:" + f.path] = {ha.x / css, ha.y / css, (hb.x - ha.x) / css,
                                         (hb.y - ha.y) / css};
        std::string label = "- " + f.path + "  " + f.type;
        dl->AddText(ui_font, name_px * 0.85f, ImVec2(ha.x + 5 * v.k, ha.y + 1.5f * v.k),
                    colors::code_target, label.c_str());
    }

    // Edges.
    float thick = std::max(1.0f, 1.3f * v.k);
    float arrow = std::clamp(7.0f * v.k, 3.0f * ui.canvas.scale, 12.0f * ui.canvas.scale);
    std::vector<ImVec2> pts;
    for (size_t ei = 0; ei < sc.layout.edges.size(); ++ei) {
        const LayoutEdge& e = sc.layout.edges[ei];
        bool is_hot = focus >= 0 && (e.src == focus || e.dst == focus);
        const SceneNode& src = sc.nodes[static_cast<size_t>(e.src)];
        const SceneNode& dst = sc.nodes[static_cast<size_t>(e.dst)];
        bool ghost = src.mark == DiffMark::Removed || dst.mark == DiffMark::Removed;
        ImU32 col = is_hot ? colors::edge_hot : colors::edge;
        if (ghost)
            col = with_alpha(colors::removed, ghost_alpha);
        else if (dst.mark == DiffMark::Added || src.mark == DiffMark::Added)
            col = is_hot ? colors::edge_hot : with_alpha(colors::added, 0.8f);
        float w = is_hot ? thick * 1.8f : thick;
        if (e.self_loop) {
            ImVec2 c = v.screen(sc.layout.center[static_cast<size_t>(e.src)]);
            float hw = src.size.x * v.k * 0.5f, hh = src.size.y * v.k * 0.5f;
            ImVec2 a(c.x + hw, c.y - hh * 0.4f), b(c.x + hw, c.y + hh * 0.4f);
            float bulge = 36 * v.k;
            dl->AddBezierCubic(b, ImVec2(b.x + bulge, b.y + bulge * 0.6f),
                               ImVec2(a.x + bulge, a.y - bulge * 0.6f), a, colors::bad, w * 1.2f);
            arrowhead(dl, a, ImVec2(a.x + bulge * 0.5f, a.y - bulge * 0.3f), arrow, colors::bad);
            continue;
        }
        const std::array<float, 4>& eb = sc.edge_bounds[ei];
        if (!visible(eb[0], eb[1], eb[2], eb[3])) continue;
        pts.clear();
        for (const LayoutPoint& p : e.points) pts.push_back(v.screen(p));
        if (e.back) col = is_hot ? colors::edge_hot : colors::warn;
        if (coarse) { // straight segments, no arrowheads
            dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, w);
            continue;
        }
        draw_route(dl, pts, col, w, e.back);
        ImVec2 tip = pts.back();
        ImVec2 from(tip.x, tip.y + (e.back ? arrow : -arrow));
        arrowhead(dl, tip, from, arrow, col);
    }

    // Nodes.
    ImFont* mono_font = fonts().mono;
    float mono_px = fonts().mono_size * 0.92f * v.k;
    float line_h = 17 * v.k, pad_x = 10 * v.k, pad_y = 6 * v.k;
    float round = 5 * v.k;
    const std::vector<uint8_t>& matches = app.search_marks();
    for (size_t i = 0; i < sc.nodes.size(); ++i) {
        const SceneNode& n = sc.nodes[i];
        LayoutPoint wc = sc.layout.center[i];
        if (!visible(wc.x - n.size.x * 0.5f, wc.y - n.size.y * 0.5f, wc.x + n.size.x * 0.5f,
                     wc.y + n.size.y * 0.5f))
            continue;
        ImVec2 c = v.screen(wc);
        float hw = n.size.x * v.k * 0.5f, hh = n.size.y * v.k * 0.5f;
        ImVec2 a(c.x - hw, c.y - hh), b(c.x + hw, c.y + hh);
        bool is_group = n.group >= 0;
        ImU32 kind = is_group ? colors::code_target : op_color(n.op);
        bool is_sel = n.id && n.id == fv.selected;
        bool is_match = i < matches.size() && matches[i];
        if (coarse) { // a block in the node's colour; selection and matches stay visible
            ImU32 col = is_sel ? colors::select : is_match ? colors::search : kind;
            dl->AddRectFilled(a, b, with_alpha(col, node_alpha(static_cast<int>(i))));
            continue;
        }
        float alpha = node_alpha(static_cast<int>(i));
        bool is_focus = static_cast<int>(i) == focus;
        if (is_group) // a stack of cards: one box standing for many
            dl->AddRectFilled(ImVec2(a.x + 4 * v.k, a.y + 4 * v.k),
                              ImVec2(b.x + 4 * v.k, b.y + 4 * v.k), colors::rgb(0x1C2230), round);
        dl->AddRectFilled(
            a, b, with_alpha(is_focus ? colors::node_body_hover : colors::node_body, alpha), round);
        dl->AddRectFilled(a, ImVec2(a.x + 4 * v.k, b.y), with_alpha(kind, alpha), round,
                          ImDrawFlags_RoundCornersLeft);
        ImU32 border = with_alpha(kind, is_group ? 0.8f : 0.45f * alpha);
        float bw = std::max(1.0f, 1.0f * v.k);
        if (hot[i]) border = colors::edge_hot, bw = std::max(1.0f, 1.5f * v.k);
        if (ImU32 dc = diff_color(n.mark))
            border = with_alpha(dc, alpha), bw = std::max(1.5f, 2.2f * v.k);
        if (is_match) border = colors::search, bw = std::max(1.5f, 2.2f * v.k);
        if (is_sel) border = colors::select, bw = std::max(2.0f, 2.5f * v.k);
        // A lesson step's highlight: a halo outside the box, so diff and selection stay readable.
        if (n.id &&
            std::find(fv.highlight.begin(), fv.highlight.end(), n.id) != fv.highlight.end()) {
            float o = std::max(3.0f, 4.0f * v.k);
            dl->AddRect(ImVec2(a.x - o, a.y - o), ImVec2(b.x + o, b.y + o), colors::highlight,
                        round + o, 0, std::max(2.0f, 2.5f * v.k));
        }
        dl->AddRect(a, b, border, round, 0, bw);
        if (n.mark == DiffMark::Removed) // a cross over the ghost
            dl->AddLine(ImVec2(a.x + round, b.y - round), ImVec2(b.x - round, a.y + round),
                        with_alpha(colors::removed, alpha * 0.6f), bw);
        if (!text) continue;
        float x = a.x + pad_x, y = a.y + pad_y;
        ImVec4 clip(a.x, a.y, b.x, b.y);
        dl->AddText(ui_font, name_px, ImVec2(x, y), with_alpha(colors::text, alpha), n.name.c_str(),
                    nullptr, 0, &clip);
        if (is_group) {
            dl->AddText(ui_font, name_px * 0.93f, ImVec2(x, y + line_h), kind, n.kind.c_str(),
                        nullptr, 0, &clip);
            std::string more = "+ " + strf(tr(app, Str::nodes_count), n.members);
            dl->AddText(mono_font, mono_px, ImVec2(x, y + 2 * line_h + 4 * v.k), colors::text_dim,
                        more.c_str(), nullptr, 0, &clip);
            continue;
        }
        // An op the executor cannot run: its target in red and a red right edge.
        ImU32 kind_text = n.runnable ? kind : colors::bad;
        if (!n.runnable)
            dl->AddRectFilled(ImVec2(b.x - 4 * v.k, a.y), b, with_alpha(colors::bad, alpha), round,
                              ImDrawFlags_RoundCornersRight);
        dl->AddText(ui_font, name_px * 0.93f, ImVec2(x, y + line_h), with_alpha(kind_text, alpha),
                    n.kind.c_str(), nullptr, 0, &clip);
        float line_y = y + 2 * line_h + 1 * v.k;
        if (!n.detail.empty()) {
            dl->AddText(mono_font, mono_px, ImVec2(x, line_y), with_alpha(colors::text_dim, alpha),
                        n.detail.c_str(), nullptr, 0, &clip);
            line_y += line_h;
        }
        if (!n.weights.empty()) // the weights it reads, under a rule
            dl->AddLine(ImVec2(x, line_y - 1 * v.k), ImVec2(b.x - pad_x, line_y - 1 * v.k),
                        with_alpha(colors::rgb(0x3A414D), alpha), std::max(1.0f, 0.6f * v.k));
        for (const std::string& w : n.weights) {
            dl->AddText(mono_font, mono_px, ImVec2(x, line_y + 1 * v.k),
                        with_alpha(colors::code_target, alpha * 0.9f), w.c_str(), nullptr, 0,
                        &clip);
            line_y += line_h;
        }
        if (n.mark != DiffMark::None) {
            const char* label = tr(app, diff_mark_label(n.mark));
            float lp = name_px * 0.8f;
            ImVec2 ts = ui_font->CalcTextSizeA(lp, 1e9f, 0, label);
            ImVec2 ta(b.x - ts.x - 6 * v.k, a.y + pad_y + (line_h - ts.y) * 0.5f);
            dl->AddRectFilled(ImVec2(ta.x - 3 * v.k, ta.y),
                              ImVec2(ta.x + ts.x + 3 * v.k, ta.y + ts.y),
                              with_alpha(diff_color(n.mark), alpha), 3 * v.k);
            dl->AddText(ui_font, lp, ta, colors::rgb(0x111318), label);
        }
    }
    if (sc.nodes.empty()) {
        dl->AddText(ImVec2(cpos.x + px(16), cpos.y + px(16)), colors::text_dim,
                    tr(app, Str::graph_empty));
    }
    if (map.shown) draw_minimap(dl, map, sc, v);
    draw_lint_note(app, dl, ui.canvas);
    dl->PopClipRect();
    if (map.shown) {
        float k = ui.canvas.scale;
        ui.widgets["minimap"] = {map.a.x / k, map.a.y / k, (map.b.x - map.a.x) / k,
                                 (map.b.y - map.a.y) / k};
    }
    ImGui::End();
}

} // namespace pt2lab::app::ui
