// The Run & parity tab: where the inputs come from, the outputs, and parity
// against the file as loaded and PyTorch's eager outputs when the file has them.
#include "ui/run_panel.h"

#include <cmath>
#include <cstdio>

#include "tensor_summary.h"
#include "ui/graph_toolbar.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

ImU32 sqnr_color(double db) {
    return db >= 30 ? colors::good : db >= 15 ? colors::warn : colors::bad;
}

std::string sci(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string db_text(double db) {
    return std::isinf(db) ? (db > 0 ? "inf dB" : "-inf dB") : sci(db) + " dB";
}

// One row per output. A quantized run is meant to differ: its columns are the SQNR
// and its reading, not allclose and bit-identical, which say nothing there.
void parity_table(const App& app, const char* id, const ParityReport& p) {
    const bool approx = p.approximate;
    if (!ImGui::BeginTable(id, approx ? 6 : 7,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH))
        return;
    for (Str h :
         {Str::run_col_output, Str::run_col_type, Str::run_col_max_diff, Str::run_col_max_rel})
        ImGui::TableSetupColumn(tr(app, h));
    if (approx) {
        ImGui::TableSetupColumn("SQNR");
        ImGui::TableSetupColumn(tr(app, Str::run_col_reading));
    } else {
        ImGui::TableSetupColumn(tr(app, Str::parity_allclose));
        ImGui::TableSetupColumn(tr(app, Str::parity_bit_identical));
        ImGui::TableSetupColumn("SQNR");
    }
    ImGui::TableHeadersRow();
    for (const TensorParity& t : p.outputs) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.type_a.c_str());
        if (!t.comparable) {
            ImGui::TableNextColumn();
            ImGui::TextColored(to_vec4(colors::bad), tr(app, Str::run_not_comparable),
                               t.type_a.c_str(), t.type_b.c_str());
            continue;
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_abs).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_rel).c_str());
        if (approx) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(db_text(t.sqnr_db).c_str());
            ImGui::TableNextColumn();
            if (t.nan + t.inf > 0)
                ImGui::TextColored(to_vec4(colors::bad), tr(app, Str::parity_nonfinite),
                                   static_cast<long long>(t.nan), static_cast<long long>(t.inf));
            else if (!std::isinf(t.sqnr_db) || t.sqnr_db < 0)
                ImGui::TextColored(to_vec4(sqnr_color(t.sqnr_db)), "%s",
                                   tr(app, sqnr_words(t.sqnr_db)));
            continue;
        }
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.allclose ? colors::good : colors::bad), "%s",
                           tr(app, t.allclose ? Str::yes : Str::no));
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.bit_identical ? colors::good : colors::text_dim), "%s",
                           tr(app, t.bit_identical ? Str::yes : Str::no));
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(db_text(t.sqnr_db).c_str());
    }
    ImGui::EndTable();
}

// A quantized run layer by layer against the float model, in graph order: the layer
// that loses most in one sentence, then the table (a node link per layer, the worst
// row marked), clipped to the rows on screen (a large model has hundreds).
void layers_table(App& app, const RunReport& run) {
    const LayerTable& t = *run.layers;
    const Workspace& ws = *app.workspace();
    ImGui::Spacing();
    ImGui::PushFont(fonts().heading);
    ImGui::TextUnformatted(tr(app, Str::run_layers));
    ImGui::PopFont();
    ImGui::SameLine();
    help_marker(tr(app, Str::run_layers_note));
    ImGui::Separator();
    if (t.worst >= 0) {
        const LayerParity& w = t.rows[static_cast<size_t>(t.worst)];
        std::string line =
            w.parity.nonfinite_new > 0
                ? strf(tr(app, Str::run_layers_worst_nonfinite), w.layer.node.c_str(),
                       w.layer.op.c_str())
                : strf(tr(app, Str::run_layers_worst), w.layer.node.c_str(), w.layer.op.c_str(),
                       w.parity.sqnr_db, tr(app, sqnr_words(w.parity.sqnr_db)));
        text_wrapped(line, w.parity.nonfinite_new > 0 ? colors::bad : sqnr_color(w.parity.sqnr_db));
    } else {
        text_wrapped(tr(app, t.rows.empty() ? Str::run_layers_empty : Str::run_layers_none_lost),
                     colors::text_dim);
    }
    expose(app, "run tab:worst layer");
    if (t.not_kept > 0)
        text_wrapped(strf(tr(app, Str::run_layers_not_kept), static_cast<int>(t.not_kept)),
                     colors::warn);
    if (t.rows.empty()) return;
    const float row_h = ImGui::GetTextLineHeightWithSpacing() + px(2);
    const float height = row_h * static_cast<float>(std::min<size_t>(t.rows.size(), 8) + 1);
    // As wide as its columns need (not the tab's width), so the wheel beside it scrolls
    // the tab and over it scrolls the rows.
    const float width = std::min(ImGui::GetContentRegionAvail().x, px(680));
    if (!ImGui::BeginTable("layers", 5,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY,
                           ImVec2(width, height)))
        return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn(tr(app, Str::run_col_layer));
    ImGui::TableSetupColumn(tr(app, Str::run_col_op));
    ImGui::TableSetupColumn("SQNR");
    ImGui::TableSetupColumn(tr(app, Str::run_col_reading));
    ImGui::TableSetupColumn(tr(app, Str::run_col_max_rel));
    ImGui::TableHeadersRow();
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(t.rows.size()));
    while (clip.Step())
        for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
            const LayerParity& r = t.rows[static_cast<size_t>(i)];
            ImGui::TableNextRow();
            if (i == t.worst)
                ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1,
                                       (colors::bad & 0x00FFFFFF) | 0x38000000);
            ImGui::TableNextColumn();
            // The graph on screen may have changed since the run: a link while it has the node.
            if (const Node* n = ws.find(run.view, r.layer.node)) {
                node_link(app, *n, "layer");
                if (i == 0) expose(app, "run tab:first layer");
            } else
                ImGui::TextUnformatted(r.layer.node.c_str());
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%s", r.layer.op.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(db_text(r.parity.sqnr_db).c_str());
            ImGui::TableNextColumn();
            if (r.parity.nonfinite_new > 0)
                ImGui::TextColored(to_vec4(colors::bad), tr(app, Str::parity_nonfinite),
                                   static_cast<long long>(r.parity.nan),
                                   static_cast<long long>(r.parity.inf));
            else if (!std::isinf(r.parity.sqnr_db) || r.parity.sqnr_db < 0)
                ImGui::TextColored(to_vec4(sqnr_color(r.parity.sqnr_db)), "%s",
                                   tr(app, sqnr_words(r.parity.sqnr_db)));
            else if (r.parity.bit_identical)
                ImGui::TextColored(to_vec4(colors::good), "%s", tr(app, Str::parity_bit_identical));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(sci(r.parity.max_rel).c_str());
        }
    ImGui::EndTable();
}

// A share of the whole as a bar with its percentage.
void share_bar(double share) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f %%", 100 * share);
    ImGui::ProgressBar(static_cast<float>(share), ImVec2(px(90), 0), pct);
}

// Where the last forward's time went: a line, the ops (most time first), the slowest
// nodes (links to them while the graph on screen has them). Lists are clipped to the
// rows on screen: a 10k-node graph's node list is 10k rows.
void profile_section(App& app, const RunReport& run) {
    const RunProfile& p = *run.profile;
    if (p.nodes.empty()) return;
    const Workspace& ws = *app.workspace();
    ImGui::Spacing();
    ImGui::PushFont(fonts().heading);
    ImGui::TextUnformatted(tr(app, Str::run_profile));
    ImGui::PopFont();
    ImGui::SameLine();
    help_marker(tr(app, Str::run_profile_note));
    ImGui::Separator();
    const RunProfile::Op& top = p.ops.front();
    text_wrapped(strf(tr(app, Str::run_profile_line), p.nodes_ms, static_cast<int>(p.nodes.size()),
                      p.run_ms, top.op.c_str(), 100 * p.share(top.ms)));
    expose(app, "run tab:profile");
    if (p.fused > 0)
        text_wrapped(strf(tr(app, Str::run_profile_fused), static_cast<int>(p.fused)),
                     colors::text_dim);
    if (run.layers)
        text_wrapped(run.layers_float_reused
                         ? strf(tr(app, Str::run_profile_layers_reused), run.layers_ms)
                         : strf(tr(app, Str::run_profile_layers), run.float_run_ms, run.layers_ms),
                     colors::text_dim);
    const float row_h = ImGui::GetTextLineHeightWithSpacing() + px(2);
    auto height = [&](size_t rows) {
        return row_h * static_cast<float>(std::min<size_t>(rows, 8) + 1);
    };
    const float width = std::min(ImGui::GetContentRegionAvail().x, px(640));
    const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY;
    if (ImGui::BeginTable("profile ops", 4, flags, ImVec2(width, height(p.ops.size())))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn(tr(app, Str::run_col_op));
        ImGui::TableSetupColumn(tr(app, Str::run_col_nodes));
        ImGui::TableSetupColumn(tr(app, Str::run_col_ms));
        ImGui::TableSetupColumn(tr(app, Str::run_col_share));
        ImGui::TableHeadersRow();
        ImGuiListClipper clip;
        clip.Begin(static_cast<int>(p.ops.size()));
        while (clip.Step())
            for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
                const RunProfile::Op& o = p.ops[static_cast<size_t>(i)];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(o.op.c_str());
                ImGui::TableNextColumn();
                if (o.fused)
                    ImGui::Text(tr(app, Str::run_nodes_fused), static_cast<int>(o.nodes),
                                static_cast<int>(o.fused));
                else
                    ImGui::Text("%d", static_cast<int>(o.nodes));
                ImGui::TableNextColumn();
                ImGui::Text("%.3f", o.ms);
                ImGui::TableNextColumn();
                share_bar(p.share(o.ms));
            }
        ImGui::EndTable();
    }
    const bool open = ImGui::TreeNode(label(app, Str::run_profile_nodes).c_str());
    expose(app, "run tab:slowest nodes");
    if (!open) return;
    if (ImGui::BeginTable("profile nodes", 4, flags, ImVec2(width, height(p.nodes.size())))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn(tr(app, Str::run_col_node));
        ImGui::TableSetupColumn(tr(app, Str::run_col_op));
        ImGui::TableSetupColumn(tr(app, Str::run_col_ms));
        ImGui::TableSetupColumn(tr(app, Str::run_col_share));
        ImGui::TableHeadersRow();
        ImGuiListClipper clip;
        clip.Begin(static_cast<int>(p.nodes.size()));
        while (clip.Step())
            for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
                const RunProfile::Entry& e = p.nodes[static_cast<size_t>(i)];
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                // The graph on screen may have changed since the run: a link while it has the node.
                if (const Node* n = ws.find(run.view, e.node)) {
                    node_link(app, *n, "profile");
                    if (i == 0) expose(app, "run tab:slowest node");
                } else
                    ImGui::TextUnformatted(e.node.c_str());
                ImGui::TableNextColumn();
                ImGui::TextDisabled("%s", e.op.c_str());
                ImGui::TableNextColumn();
                ImGui::Text("%.3f", e.ms);
                ImGui::TableNextColumn();
                share_bar(p.share(e.ms));
            }
        ImGui::EndTable();
    }
    ImGui::TreePop();
}

void verdict(const App& app, const ParityReport& p, Str against) {
    std::string what = parity_word(app, p);
    ImGui::PushFont(fonts().heading);
    ImGui::TextColored(to_vec4(parity_color(p)), "%s", what.c_str());
    ImGui::PopFont();
    ImGui::SameLine();
    if (p.approximate)
        ImGui::TextDisabled(tr(app, Str::run_verdict_approx), tr(app, against),
                            sci(p.max_abs()).c_str(), sci(p.max_rel()).c_str());
    else
        ImGui::TextDisabled(tr(app, Str::run_verdict), tr(app, against), sci(p.max_abs()).c_str());
}

} // namespace

void draw_run_tab(App& app) {
    const Workspace& ws = *app.workspace();
    FileView& fv = app.view();
    ImGui::TextDisabled("%s", tr(app, Str::run_inputs));
    ImGui::SameLine();
    // The widget names stay English (the state hook's), the labels follow the language.
    const char* names[] = {"the file's own", "sample inputs", "seeded"};
    const Str kinds[] = {Str::run_kind_own, Str::run_kind_sample, Str::run_kind_seeded};
    const Str tips[] = {Str::run_kind_own_tip, Str::run_kind_sample_tip, Str::run_kind_seeded_tip};
    for (int i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine(0, px(2));
        bool active = static_cast<int>(fv.run_inputs.kind) == i;
        if (active) ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3D4F73)));
        if (small_button(app, label(app, kinds[i]).c_str()))
            fv.run_inputs.kind = static_cast<InputSource::Kind>(i);
        expose(app, std::string("run tab:") + names[i]);
        if (active) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, tips[i]));
    }
    if (fv.run_inputs.kind == InputSource::Kind::Seeded) {
        ImGui::SameLine();
        int seed = static_cast<int>(fv.run_inputs.seed);
        ImGui::SetNextItemWidth(px(90));
        if (ImGui::InputInt(label(app, Str::run_seed).c_str(), &seed, 0))
            fv.run_inputs.seed = static_cast<uint64_t>(std::max(0, seed));
        expose(app, "run tab:seed");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(44));
    ImGui::InputInt(label(app, Str::run_times).c_str(), &fv.run_repeat, 0);
    fv.run_repeat = std::clamp(fv.run_repeat, 1, 100);
    ImGui::SameLine();
    ImGui::BeginDisabled(app.busy());
    if (ImGui::Button(label(app, Str::run_button).c_str())) run_now(app);
    ImGui::EndDisabled();
    expose(app, "run tab:run");
    ImGui::SameLine();
    ImGui::Checkbox(label(app, Str::run_auto).c_str(), &app.settings().auto_run);
    ImGui::SameLine();
    help_marker(tr(app, Str::run_auto_help));
    ImGui::SameLine();
    bool fast = fv.fast_kernels;
    if (ImGui::Checkbox(label(app, Str::run_fast).c_str(), &fast)) app.set_fast_kernels(fast);
    expose(app, "run tab:fast kernels");
    ImGui::SameLine();
    help_marker(tr(app, Str::run_fast_help));

    const auto& run = ws.last_run();
    if (!run) {
        ImGui::Spacing();
        text_wrapped(tr(app, Str::run_not_run), colors::text_dim);
        return;
    }
    ImGui::Separator();
    bool current = run->version == ws.version();
    ImGui::Text(tr(app, run->fast_kernels ? Str::run_ran_on_fast : Str::run_ran_on),
                run->inputs_label.c_str());
    if (run->stale) {
        ImGui::SameLine();
        badge(tr(app, Str::run_stale), colors::warn);
    }
    ImGui::SameLine();
    if (current)
        badge(tr(app, Str::run_current), colors::good);
    else
        badge(tr(app, Str::run_run_again), colors::warn);

    if (ImGui::BeginTable("outputs", 6,
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                              ImGuiTableFlags_BordersInnerH)) {
        for (Str h : {Str::run_col_output, Str::run_col_type, Str::run_col_min, Str::run_col_max,
                      Str::run_col_mean, Str::run_col_first})
            ImGui::TableSetupColumn(tr(app, h));
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < run->result.outputs.size(); ++i) {
            const Value& v = run->result.outputs[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(
                i < run->result.output_names.size() ? run->result.output_names[i].c_str() : "");
            ImGui::TableNextColumn();
            if (!v.is_tensor()) {
                ImGui::TextUnformatted(v.describe().c_str());
                continue;
            }
            TensorSummary s = summarize(*v.tensor, 5);
            ImGui::TextUnformatted(s.type.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_number(s.min).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_number(s.max).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_number(s.mean).c_str());
            ImGui::TableNextColumn();
            ImGui::PushFont(fonts().mono);
            ImGui::TextUnformatted(format_values(s.first, s.numel).c_str());
            ImGui::PopFont();
        }
        ImGui::EndTable();
    }
    ImGui::Spacing();
    verdict(app, run->parity, Str::run_vs_file);
    if (run->parity.approximate && !run->parity.bit_identical())
        text_wrapped(tr(app, Str::run_quant_note), colors::text_dim);
    parity_table(app, "parity", run->parity);
    if (run->layers) {
        ImGui::Spacing();
        layers_table(app, *run);
    }
    if (run->reference) {
        ImGui::Spacing();
        verdict(app, *run->reference, Str::run_vs_eager);
        parity_table(app, "reference", *run->reference);
    }
    if (run->profile) profile_section(app, *run);
    if (!run->parity.nodes.empty() && ImGui::TreeNode(label(app, Str::run_per_node).c_str())) {
        ImGui::TextDisabled("%s", tr(app, Str::run_per_node_note));
        ParityReport nodes;
        nodes.outputs = run->parity.nodes;
        parity_table(app, "nodes", nodes);
        ImGui::TreePop();
    }
}

} // namespace pt2lab::app::ui
