// The Observers tab: the PT2E steps as buttons on the live module, and each
// observer, in graph order, with what it reads, its min / max and the scale and
// zero_point it would choose.
#include "ui/observers_panel.h"

#include <map>
#include <set>

#include "tensor_summary.h"
#include "ui/theme.h"
#include "ui/transforms.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {

void draw_observers_tab(App& app) {
    const Workspace& ws = *app.workspace();
    int& batches = app.view().calibrate_batches;
    bool& fold_quantize = app.view().fold_quantize;
    ImGui::BeginDisabled(app.busy()); // one action at a time
    if (ImGui::Button(label(app, Str::fold_conv_bn).c_str())) post_fold_conv_bn(app);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::obs_fold_tip));
    ImGui::SameLine();
    if (ImGui::Button("prepare_pt2e")) post_prepare(app);
    expose(app, "observers:prepare");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(app, Str::obs_prepare_tip));
    ImGui::SameLine();
    ImGui::BeginDisabled(!has_observers(ws));
    if (ImGui::Button(label(app, Str::calibrate).c_str())) post_calibrate(app, batches);
    expose(app, "observers:calibrate");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(44));
    ImGui::InputInt("##batches", &batches, 0);
    expose(app, "observers:batches"); // the field alone, so a click at its middle lands in it
    batches = std::clamp(batches, 1, 64);
    ImGui::SameLine(0, px(4));
    ImGui::TextUnformatted(tr(app, Str::obs_batches));
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!ws.observers_calibrated());
    if (ImGui::Button("convert_pt2e")) post_convert(app, fold_quantize);
    expose(app, "observers:convert");
    ImGui::SameLine();
    ImGui::Checkbox("fold_quantize", &fold_quantize);
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    ImGui::SameLine();
    help_marker(tr(app, Str::obs_help));

    ImGui::Separator();
    if (ws.state().observers.empty()) {
        text_wrapped(tr(app, Str::obs_none), colors::text_dim);
        return;
    }
    // One row per observer call in graph order (then any observer nothing calls).
    // Names that share one instance (prepare_pt2e's shared quantization specs) share
    // its min / max: their row lists every tensor the instance reads.
    const Graph& g = *ws.module().graph;
    const auto& observers = ws.state().observers;
    std::map<const Observer*, std::vector<const Node*>> calls_of; // instance -> its call nodes
    std::vector<std::pair<std::string, const Node*>> rows;
    std::set<std::string> called;
    for (const Node* n : g.nodes()) {
        if (n->op() != Op::CallModule) continue;
        auto it = observers.find(n->target());
        if (it == observers.end()) continue;
        calls_of[it->second.get()].push_back(n);
        if (called.insert(n->target()).second) rows.emplace_back(n->target(), n);
    }
    for (const auto& [name, obs] : observers)
        if (!called.count(name)) rows.emplace_back(name, nullptr);
    if (!ImGui::BeginTable("observers", 7,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH))
        return;
    ImGui::TableSetupColumn("observer");
    ImGui::TableSetupColumn(tr(app, Str::obs_col_reads));
    ImGui::TableSetupColumn(tr(app, Str::obs_col_calls));
    for (const char* h : {"min", "max", "scale", "zero_point"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& [name, user] : rows) {
        const Observer* obs = observers.at(name).get();
        const std::vector<const Node*>& users = calls_of[obs];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        if (user && app.view().graph == GraphView::Module)
            node_link(app, *user, "obs");
        else
            ImGui::TextUnformatted(name.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", obs->config().describe().c_str());
        ImGui::TableNextColumn();
        std::string reads, shared;
        for (const Node* u : users) {
            if (!u->input_nodes().empty())
                reads += (reads.empty() ? "" : ", ") + u->input_nodes()[0]->name();
            if (u->target() != name && shared.find(u->target()) == std::string::npos)
                shared += (shared.empty() ? "" : ", ") + u->target();
        }
        ImGui::TextUnformatted(reads.c_str());
        if (!shared.empty()) {
            ImGui::SameLine();
            ImGui::TextColored(to_vec4(colors::warn), "%s", tr(app, Str::obs_shared));
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip(tr(app, Str::obs_shared_tip), shared.c_str(), reads.c_str());
        }
        ImGui::TableNextColumn();
        ImGui::Text("%lld", static_cast<long long>(obs->calls()));
        if (obs->calls() == 0) {
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%s", tr(app, Str::obs_not_calibrated));
            continue;
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_number(obs->min_val()).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_number(obs->max_val()).c_str());
        auto q = obs->calculate_qparams();
        ImGui::TableNextColumn();
        if (q.ok()) {
            ImGui::TextUnformatted(format_number(q.value().scale).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(q.value().zero_point));
        } else {
            ImGui::TextColored(to_vec4(colors::bad), "%s", q.error().message.c_str());
        }
    }
    ImGui::EndTable();
}

} // namespace pt2lab::app::ui
