// The Observers tab: the PT2E steps as buttons on the live module, and each
// MinMaxObserver's min / max with the scale and zero_point it would choose.
#include "ui/observers_panel.h"

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
    if (ImGui::Button("Fold conv-BN")) post_fold_conv_bn(app);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("fold BatchNorm into the preceding conv's weight and bias");
    ImGui::SameLine();
    if (ImGui::Button("prepare_pt2e")) post_prepare(app);
    expose(app, "observers:prepare");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("fold BatchNorm, annotate conv / linear (+ relu), place MinMaxObservers "
                          "(activations quint8 affine, weights qint8 symmetric)");
    ImGui::SameLine();
    ImGui::BeginDisabled(!has_observers(ws));
    if (ImGui::Button("Calibrate")) post_calibrate(app, batches);
    expose(app, "observers:calibrate");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(44));
    ImGui::InputInt("batches", &batches, 0);
    batches = std::clamp(batches, 1, 64);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!observers_calibrated(ws));
    if (ImGui::Button("convert_pt2e")) post_convert(app, fold_quantize);
    expose(app, "observers:convert");
    ImGui::SameLine();
    ImGui::Checkbox("fold_quantize", &fold_quantize);
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    ImGui::SameLine();
    help_marker("Calibrate runs the module on the Run tab's inputs, then on seeded batches, so the "
                "observers record min / max. convert_pt2e replaces each observer by "
                "quantize_per_tensor -> dequantize_per_tensor with those qparams.");

    ImGui::Separator();
    if (ws.state().observers.empty()) {
        text_wrapped("No observers in ep.module(). prepare_pt2e places them; selecting a node in "
                     "ep.module() lets you insert one by hand (inspector).",
                     colors::text_dim);
        return;
    }
    if (!ImGui::BeginTable("observers", 7,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH))
        return;
    for (const char* h : {"observer", "reads", "calls", "min", "max", "scale", "zero_point"})
        ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const Graph& g = *ws.module().graph;
    for (const auto& [name, obs] : ws.state().observers) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const Node* user = nullptr;
        for (const Node* n : g.nodes())
            if (n->op() == Op::CallModule && n->target() == name) user = n;
        if (user && app.view().graph == GraphView::Module)
            node_link(app, *user, "obs");
        else
            ImGui::TextUnformatted(name.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", obs->config().describe().c_str());
        ImGui::TableNextColumn();
        const Node* input = user && !user->input_nodes().empty() ? user->input_nodes()[0] : nullptr;
        ImGui::TextUnformatted(input ? input->name().c_str() : "");
        ImGui::TableNextColumn();
        ImGui::Text("%lld", static_cast<long long>(obs->calls()));
        if (obs->calls() == 0) {
            ImGui::TableNextColumn();
            ImGui::TextDisabled("not calibrated");
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
