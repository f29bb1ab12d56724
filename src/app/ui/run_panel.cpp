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

std::string sci(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void parity_table(const char* id, const ParityReport& p) {
    if (!ImGui::BeginTable(id, 7,
                           ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                               ImGuiTableFlags_BordersInnerH))
        return;
    for (const char* h :
         {"output", "type", "max |diff|", "max rel", "allclose", "bit-identical", "SQNR"})
        ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const TensorParity& t : p.outputs) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.type_a.c_str());
        if (!t.comparable) {
            ImGui::TableNextColumn();
            ImGui::TextColored(to_vec4(colors::bad), "not comparable (%s vs %s)", t.type_a.c_str(),
                               t.type_b.c_str());
            continue;
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_abs).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(sci(t.max_rel).c_str());
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.allclose ? colors::good : colors::bad),
                           t.allclose ? "yes" : "no");
        ImGui::TableNextColumn();
        ImGui::TextColored(to_vec4(t.bit_identical ? colors::good : colors::text_dim),
                           t.bit_identical ? "yes" : "no");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::isinf(t.sqnr_db) ? "inf dB" : (sci(t.sqnr_db) + " dB").c_str());
    }
    ImGui::EndTable();
}

void verdict(const ParityReport& p, const char* against) {
    std::string what = parity_word(p);
    ImGui::PushFont(fonts().heading);
    ImGui::TextColored(to_vec4(parity_color(p)), "%s", what.c_str());
    ImGui::PopFont();
    ImGui::SameLine();
    if (p.approximate)
        ImGui::TextDisabled("vs %s (the float outputs), max |diff| %s, max rel %s", against,
                            sci(p.max_abs()).c_str(), sci(p.max_rel()).c_str());
    else
        ImGui::TextDisabled("vs %s, max |diff| %s (rtol 1.3e-06, atol 1e-05)", against,
                            sci(p.max_abs()).c_str());
}

} // namespace

void draw_run_tab(App& app) {
    const Workspace& ws = *app.workspace();
    FileView& fv = app.view();
    ImGui::TextDisabled("inputs:");
    ImGui::SameLine();
    const char* kinds[] = {"the file's own", "sample inputs", "seeded"};
    const char* tips[] = {"the file's sample inputs if it has them, else seeded",
                          ("data/sample_inputs/model.pt: the example inputs torch.export.save "
                           "keeps in the archive"),
                          "SeededRng(seed).normal(), shaped by the graph's inputs"};
    for (int i = 0; i < 3; ++i) {
        if (i) ImGui::SameLine(0, px(2));
        bool active = static_cast<int>(fv.run_inputs.kind) == i;
        if (active) ImGui::PushStyleColor(ImGuiCol_Button, to_vec4(colors::rgb(0x3D4F73)));
        if (ImGui::SmallButton(kinds[i])) fv.run_inputs.kind = static_cast<InputSource::Kind>(i);
        expose(app, std::string("run tab:") + kinds[i]);
        if (active) ImGui::PopStyleColor();
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tips[i]);
    }
    if (fv.run_inputs.kind == InputSource::Kind::Seeded) {
        ImGui::SameLine();
        int seed = static_cast<int>(fv.run_inputs.seed);
        ImGui::SetNextItemWidth(px(90));
        if (ImGui::InputInt("seed", &seed, 0))
            fv.run_inputs.seed = static_cast<uint64_t>(std::max(0, seed));
        expose(app, "run tab:seed");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(44));
    ImGui::InputInt("times", &fv.run_repeat, 0);
    fv.run_repeat = std::clamp(fv.run_repeat, 1, 100);
    ImGui::SameLine();
    ImGui::BeginDisabled(app.busy());
    if (ImGui::Button("Run")) run_now(app);
    ImGui::EndDisabled();
    expose(app, "run tab:run");
    ImGui::SameLine();
    ImGui::Checkbox("run after each change", &app.settings().auto_run);
    ImGui::SameLine();
    help_marker("After a transformation the page runs the graph once on these inputs, unless a run "
                "would change the module's state (train-mode buffers, observers): then press Run.");
    ImGui::SameLine();
    bool fast = fv.fast_kernels;
    if (ImGui::Checkbox("fast kernels", &fast)) app.set_fast_kernels(fast);
    expose(app, "run tab:fast kernels");
    ImGui::SameLine();
    help_marker("conv2d as a blocked matrix product (several times faster on real models) instead "
                "of the reference loops. It adds floats in another order than torch, so outputs "
                "stay within 1e-4 of torch's (the model zoo's check); the run and the file as "
                "loaded use the same kernels, so their parity stays exact. Runs and calibration "
                "use it. On for your own files (the page remembers your choice), off for the "
                "lesson graphs.");

    const auto& run = ws.last_run();
    if (!run) {
        ImGui::Spacing();
        text_wrapped("Not run yet. Run executes ep.module() on pt2lab's CPU executor and compares "
                     "its outputs with the file as loaded (and with PyTorch's eager outputs when "
                     "the file carries them).",
                     colors::text_dim);
        return;
    }
    ImGui::Separator();
    bool current = run->version == ws.version();
    ImGui::Text("Ran on %s%s", run->inputs_label.c_str(),
                run->fast_kernels ? " with the fast kernels" : "");
    if (run->stale) {
        ImGui::SameLine();
        badge("forward() was stale: torch runs the code of the last recompile", colors::warn);
    }
    ImGui::SameLine();
    if (current)
        badge("current graph", colors::good);
    else
        badge("the graph changed since: run again", colors::warn);

    if (ImGui::BeginTable("outputs", 6,
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg |
                              ImGuiTableFlags_BordersInnerH)) {
        for (const char* h : {"output", "type", "min", "max", "mean", "first values"})
            ImGui::TableSetupColumn(h);
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
    verdict(run->parity, "the file as loaded");
    if (run->parity.approximate && !run->parity.bit_identical())
        text_wrapped("The graph quantizes: each quantize -> dequantize pair rounds values to "
                     "scale * integer steps, so the outputs move by about the quantization error. "
                     "SQNR says how much signal is left: 30 dB and up is close, below 5 dB the "
                     "output is lost.",
                     colors::text_dim);
    parity_table("parity", run->parity);
    if (run->reference) {
        ImGui::Spacing();
        verdict(*run->reference, "PyTorch eager (stored in the file)");
        parity_table("reference", *run->reference);
    }
    if (!run->parity.nodes.empty() && ImGui::TreeNode("per-node parity")) {
        ImGui::TextDisabled("nodes whose value both runs have under the same name");
        ParityReport nodes;
        nodes.outputs = run->parity.nodes;
        parity_table("nodes", nodes);
        ImGui::TreePop();
    }
}

} // namespace pt2lab::app::ui
