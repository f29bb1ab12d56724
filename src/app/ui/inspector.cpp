// The node inspector: op, target spelled out, args and kwargs under their
// schema names with node links, users, meta, stored tensors, node actions.
#include "ui/inspector.h"

#include "graph/op_schema.h"
#include "graph/printer.h"
#include "passes/decompose.h"
#include "passes/pt2e.h"
#include "tensor_summary.h"
#include "ui/theme.h"
#include "ui/widgets.h"

namespace pt2lab::app::ui {
namespace {

bool has_node_refs(const Argument& a) {
    bool any = false;
    for_each_node(a, [&](Node*) { any = true; });
    return any;
}

// An argument value: node references as links, everything else as Python's repr.
void argument_value(App& app, const Argument& a, int depth = 0) {
    if (a.is_node() && a.node) {
        node_link(app, *a.node, "arg");
        return;
    }
    if (!has_node_refs(a) || depth > 3) {
        ImGui::PushFont(fonts().mono);
        text_wrapped(arg_repr(a));
        ImGui::PopFont();
        return;
    }
    // A list / tuple holding nodes: [a, b, ...] with each node a link.
    const char* open = a.kind == ArgKind::List ? "[" : a.kind == ArgKind::Dict ? "{" : "(";
    const char* close = a.kind == ArgKind::List ? "]" : a.kind == ArgKind::Dict ? "}" : ")";
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, ImGui::GetStyle().ItemSpacing.y));
    ImGui::PushFont(fonts().mono);
    ImGui::TextUnformatted(open);
    ImGui::PopFont();
    for (size_t i = 0; i < a.items.size(); ++i) {
        ImGui::SameLine();
        if (a.kind == ArgKind::Dict && i < a.keys.size()) {
            ImGui::TextUnformatted((a.keys[i] + ": ").c_str());
            ImGui::SameLine();
        }
        ImGui::PushID(static_cast<int>(i));
        argument_value(app, a.items[i], depth + 1);
        ImGui::PopID();
        ImGui::SameLine();
        ImGui::TextUnformatted(i + 1 < a.items.size() ? ", " : "");
        if (ImGui::GetContentRegionAvail().x < px(80) && i + 1 < a.items.size()) ImGui::NewLine();
    }
    ImGui::SameLine();
    ImGui::PushFont(fonts().mono);
    ImGui::TextUnformatted(a.kind == ArgKind::Tuple && a.items.size() == 1 ? ",)" : close);
    ImGui::PopFont();
    ImGui::PopStyleVar();
}

void tensor_rows(const App& app, const char* label, const TensorSummary& s) {
    fact(label, s.type);
    if (!s.numeric) return;
    fact("min / max", format_number(s.min) + " / " + format_number(s.max));
    fact(tr(app, Str::insp_mean), format_number(s.mean));
    fact(tr(app, Str::insp_values), format_values(s.first, s.numel));
}

void arguments_table(App& app, const Node& n) {
    const OpSchema* schema = n.schema();
    if (n.args().empty() && n.kwargs().empty() && !schema) {
        ImGui::TextDisabled("%s", tr(app, Str::insp_no_arguments));
        return;
    }
    if (!ImGui::BeginTable("args", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg))
        return;
    ImGui::TableSetupColumn("##name", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("##value", ImGuiTableColumnFlags_WidthStretch);
    std::vector<bool> given(schema ? schema->arguments.size() : 0, false);
    for (size_t i = 0; i < n.args().size(); ++i) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        std::string name = "args[" + std::to_string(i) + "]";
        if (schema && i < schema->arguments.size()) {
            name = schema->arguments[i].name;
            given[i] = true;
        }
        ImGui::TextUnformatted(name.c_str());
        if (schema && i < schema->arguments.size() && ImGui::IsItemHovered())
            ImGui::SetTooltip(tr(app, Str::insp_positional),
                              schema->arguments[i].type.str().c_str(), name.c_str(), i);
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(i));
        argument_value(app, n.args()[i]);
        ImGui::PopID();
    }
    for (size_t i = 0; i < n.kwargs().size(); ++i) {
        const auto& [key, value] = n.kwargs()[i];
        if (schema) {
            int idx = schema->arg_index(key);
            if (idx >= 0) given[static_cast<size_t>(idx)] = true;
        }
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%s=", key.c_str());
        ImGui::TableNextColumn();
        ImGui::PushID(1000 + static_cast<int>(i));
        argument_value(app, value);
        ImGui::PopID();
    }
    // What the call left out: the schema's defaults (export drops trailing ones).
    for (size_t i = 0; i < given.size(); ++i) {
        if (given[i] || !schema->arguments[i].has_default) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", schema->arguments[i].name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextDisabled(tr(app, Str::insp_default), schema->arguments[i].default_text.c_str());
    }
    ImGui::EndTable();
}

void node_actions(App& app, const Node& n) {
    const Workspace& ws = *app.workspace();
    GraphView view = app.view().graph;
    if (view == GraphView::Program && n.op() == Op::CallFunction && ws.has_program()) {
        for (IrLevel level : {IrLevel::Inference, IrLevel::CoreAten}) {
            const DecompRule* rule = DecompTable::for_level(level).find(n);
            if (!rule ||
                (level == IrLevel::CoreAten && DecompTable::for_level(IrLevel::Inference).find(n)))
                continue;
            std::string label = strf(tr(app, Str::insp_decompose_node), ir_level_name(level)) +
                                "###decompose_node_" + std::to_string(static_cast<int>(level));
            bool clicked = ImGui::Button(label.c_str());
            expose(app, level == IrLevel::Inference ? "inspector:decompose inference"
                                                    : "inspector:decompose core");
            if (clicked) {
                Action a;
                a.kind = Action::Kind::DecomposeNode;
                a.node = n.name();
                a.level = level;
                app.post(a);
            }
            ImGui::SameLine();
            help_marker(rule->summary);
        }
    }
    if (view == GraphView::Module && n.op() != Op::Output && !n.users().empty()) {
        bool clicked = ImGui::Button(label(app, Str::insp_insert_observer).c_str());
        expose(app, "inspector:insert observer");
        if (clicked) {
            Action a;
            a.kind = Action::Kind::InsertObserver;
            a.node = n.name();
            app.post(a);
        }
        ImGui::SameLine();
        help_marker(tr(app, Str::insp_insert_help));
    }
}

} // namespace

void draw_inspector(App& app, ImVec2 pos, ImVec2 size) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin(label(app, Str::panel_node).c_str(), nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    const Workspace* ws = app.workspace();
    const Node* n = app.selected_node();
    if (!ws || !n) {
        text_wrapped(tr(app, Str::insp_hint), colors::text_dim);
        ImGui::Spacing();
        text_wrapped(tr(app, Str::insp_hover), colors::text_dim);
        ImGui::End();
        return;
    }
    const FileView& fv = app.view();
    ImGui::PushFont(fonts().heading);
    ImGui::TextColored(to_vec4(op_color(n->op())), "%s", n->name().c_str());
    ImGui::PopFont();
    ImGui::SameLine();
    badge(op_label(n->op()), op_color(n->op()));
    if (begin_facts("what")) {
        fact("op", op_label(n->op()), op_color(n->op()));
        fact("target", pretty_target(*n));
        for (const Workspace::UnsupportedOp& u : ws->unsupported_ops(fv.graph))
            for (uint32_t id : u.nodes)
                if (id == n->id())
                    fact(tr(app, Str::insp_executor), tr(app, Str::insp_no_kernel), colors::bad);
        if (const OpSchema* s = n->schema()) {
            if (!s->ns.empty()) {
                fact(tr(app, Str::insp_namespace), s->ns);
                fact(tr(app, Str::insp_op_name), s->name);
                fact("overload", s->overload);
            }
        }
        const GraphSignature* sig = fv.graph == GraphView::Program && ws->has_program()
                                        ? &ws->program().signature
                                        : nullptr;
        if (n->op() == Op::Placeholder && sig) {
            if (const InputSpec* spec = sig->input_for(n->name())) {
                fact(tr(app, Str::insp_signature), input_kind_name(spec->kind));
                if (!spec->target.empty()) fact("target FQN", spec->target);
                if (!spec->target.empty())
                    if (auto t = ws->program().find_tensor(spec->target))
                        tensor_rows(app, tr(app, Str::insp_stored),
                                    ws->file_whole() ? summarize(*t)
                                                     : type_only(t->dtype, t->sizes));
            }
        }
        if (n->op() == Op::GetAttr) {
            auto it = ws->module().attrs.find(n->target());
            if (it != ws->module().attrs.end() && it->second)
                tensor_rows(app, tr(app, Str::insp_stored),
                            ws->file_whole() ? summarize(*it->second)
                                             : type_only(it->second->dtype, it->second->sizes));
        }
        end_facts();
    }
    if (const OpSchema* s = n->schema()) {
        ImGui::PushFont(fonts().mono);
        text_wrapped(s->text, colors::text_dim);
        ImGui::PopFont();
    }

    section(tr(app, Str::insp_arguments));
    arguments_table(app, *n);

    section(tr(app, Str::insp_users));
    if (n->users().empty()) {
        ImGui::TextDisabled(
            "%s", tr(app, n->op() == Op::Output ? Str::insp_output_no_users : Str::insp_no_users));
    } else {
        for (size_t i = 0; i < n->users().size(); ++i) {
            if (i) ImGui::SameLine();
            ImGui::PushID(static_cast<int>(i));
            node_link(app, *n->users()[i], "user");
            ImGui::PopID();
        }
    }

    section(tr(app, Str::insp_meta));
    const NodeMeta& m = n->meta;
    if (begin_facts("meta")) {
        if (m.val.is_tensor()) {
            const TensorMeta& t = m.val.tensor;
            fact("val", t.type_str());
            std::string shape = "[", stride = "[";
            for (size_t i = 0; i < t.sizes.size(); ++i)
                shape += (i ? ", " : "") + std::to_string(t.sizes[i]);
            for (size_t i = 0; i < t.strides.size(); ++i)
                stride += (i ? ", " : "") + std::to_string(t.strides[i]);
            fact("shape", shape + "]");
            fact("dtype", "torch." + std::string(scalar_type_name(t.dtype)));
            fact("stride", stride + "]");
            fact("device", t.device);
            if (t.requires_grad) fact("requires_grad", "True");
        } else if (m.val.kind != MetaVal::Kind::None) {
            fact("val", node_value_type(*n));
        } else {
            fact("val", tr(app, Str::insp_none), colors::text_dim);
        }
        if (!m.nn_module_stack.empty()) {
            std::string path;
            for (const ModuleStackEntry& e : m.nn_module_stack)
                path += (path.empty() ? "" : " > ") +
                        (e.path.empty() ? std::string(tr(app, Str::insp_root)) : e.path) + " (" +
                        e.type.substr(e.type.find_last_of('.') + 1) + ")";
            fact(tr(app, Str::insp_module), path);
        }
        if (!m.source_fn_stack.empty())
            fact("source_fn",
                 m.source_fn_stack.back().first + ": " + m.source_fn_stack.back().second);
        if (m.torch_fn) fact("torch_fn", m.torch_fn->first + ": " + m.torch_fn->second);
        for (const auto& [k, v] : m.other)
            if (k != kAnnotationKey) fact(k.c_str(), v);
        end_facts();
    }
    // What the quantizer decided for this node (prepare_pt2e), as torch prints it: full
    // width, as it names every observed input and the output with its settings.
    auto annotation = m.other.find(kAnnotationKey);
    if (annotation != m.other.end()) {
        ImGui::TextDisabled("node.meta[\"%s\"]", kAnnotationKey);
        ImGui::PushFont(fonts().mono);
        text_wrapped(annotation->second);
        ImGui::PopFont();
    }
    if (!m.stack_trace.empty() && ImGui::TreeNode(label(app, Str::insp_stack_trace).c_str())) {
        ImGui::PushFont(fonts().mono);
        text_wrapped(m.stack_trace, colors::text_dim);
        ImGui::PopFont();
        ImGui::TreePop();
    }

    const auto& run = ws->last_run();
    if (run && !run->values_kept && n->op() == Op::CallFunction) {
        section(tr(app, Str::insp_last_run));
        text_wrapped(
            strf(tr(app, Str::insp_values_not_kept), human_bytes(run->values_bytes).c_str()),
            colors::text_dim);
    }
    if (run) { // ep.module() ran; its values are found by node name
        auto it = run->result.values.find(n->name());
        if (it != run->result.values.end() && it->second.is_tensor()) {
            section(tr(app, run->version == ws->version() ? Str::insp_last_run
                                                          : Str::insp_last_run_before));
            if (begin_facts("value")) {
                tensor_rows(app, tr(app, Str::insp_value), summarize(*it->second.tensor));
                end_facts();
            }
        }
    }
    ImGui::Spacing();
    ImGui::BeginDisabled(app.busy()); // one action at a time (the job strip can cancel it)
    node_actions(app, *n);
    ImGui::EndDisabled();
    ImGui::End();
}

} // namespace pt2lab::app::ui
