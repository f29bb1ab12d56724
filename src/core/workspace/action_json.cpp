// JSON -> EditAction / Action, with errors that name the JSON path.
#include "workspace/action_json.h"

#include "io/fx_json.h"
#include "workspace/action_table.h"

namespace pt2lab {

namespace {

#define PT2LAB_ACTION(json_, kind_, edit_, fields_, label_)                                        \
    ActionRow{json_,                                                                               \
              Action::Kind::kind_,                                                                 \
              Action::Kind::kind_ == Action::Kind::Edit,                                           \
              EditKindOf::edit_,                                                                   \
              fields_,                                                                             \
              label_},
struct EditKindOf {
    static constexpr EditAction::Kind None = EditAction::Kind::Lint; // unused (is_edit false)
    static constexpr EditAction::Kind Insert = EditAction::Kind::Insert;
    static constexpr EditAction::Kind ReplaceAllUsesWith = EditAction::Kind::ReplaceAllUsesWith;
    static constexpr EditAction::Kind ReplaceInputWith = EditAction::Kind::ReplaceInputWith;
    static constexpr EditAction::Kind EraseNode = EditAction::Kind::EraseNode;
    static constexpr EditAction::Kind SetArgs = EditAction::Kind::SetArgs;
    static constexpr EditAction::Kind EliminateDeadCode = EditAction::Kind::EliminateDeadCode;
    static constexpr EditAction::Kind Lint = EditAction::Kind::Lint;
    static constexpr EditAction::Kind Recompile = EditAction::Kind::Recompile;
    static constexpr EditAction::Kind Undo = EditAction::Kind::Undo;
    static constexpr EditAction::Kind Redo = EditAction::Kind::Redo;
};
const ActionRow kRows[] = {
#include "workspace/action_rows.inc"
};
#undef PT2LAB_ACTION

#define PT2LAB_ACTION_KIND(Enum, name, history) +1
constexpr int kKinds = 0
#include "workspace/action_rows.inc"
    ;
#undef PT2LAB_ACTION_KIND

// Adding a row is deliberate: its JSON reader below, its lesson and page uses,
// and its tests come with it.
static_assert(sizeof kRows / sizeof kRows[0] == 20, "action_rows.inc: JSON action kinds");
static_assert(kKinds == 10, "action_rows.inc: Action::Kind rows");

} // namespace

bool ActionRow::allows(const std::string& field) const {
    if (field == "kind" || field == "label") return true;
    const char* f = fields;
    while (*f) {
        const char* end = f;
        while (*end && *end != ' ') ++end;
        if (field.size() == static_cast<size_t>(end - f) &&
            field.compare(0, field.size(), f, field.size()) == 0)
            return true;
        f = *end ? end + 1 : end;
    }
    return false;
}

const ActionRow* action_rows() {
    return kRows;
}

size_t action_row_count() {
    return sizeof kRows / sizeof kRows[0];
}

const ActionRow* find_action_row(const std::string& json_kind) {
    for (const ActionRow& r : kRows)
        if (json_kind == r.json) return &r;
    return nullptr;
}

const ActionRow& action_row(const Action& a) {
    for (const ActionRow& r : kRows) {
        if (r.kind != a.kind) continue;
        if (r.is_edit && r.edit != a.edit.kind) continue;
        if (a.kind == Action::Kind::SetTraining && (std::string(r.json) == "train") != a.train)
            continue;
        return r;
    }
    PT2LAB_CHECK(!"every action has a row in action_rows.inc");
    return kRows[0];
}

std::string action_kind_list() {
    std::string list;
    for (const ActionRow& r : kRows) list += std::string(list.empty() ? "" : ", ") + r.json;
    return list;
}

Result<EditAction> edit_action_from_json(const JsonAt& a) {
    auto decode_list = [&](const JsonAt& list, std::vector<Argument>& out) -> Status {
        if (!list.v || !list.is_array()) return list.error("expected an array of arguments");
        for (size_t i = 0; i < list.size(); ++i) {
            auto x = decode_fx_arg(list.index(i));
            if (!x.ok()) return x.error();
            out.push_back(x.take());
        }
        return {};
    };
    auto kind = a.str("kind");
    if (!kind.ok()) return kind.error();
    const std::string& k = kind.value();
    EditAction act;
    act.label = a.str_or("label", "");
    auto need = [&](const char* key, std::string& dst) -> Status {
        auto v = a.str(key);
        if (!v.ok()) return v.error();
        dst = v.value();
        return {};
    };
    if (k == "insert") {
        act.kind = EditAction::Kind::Insert;
        std::string w = a.str_or("where", "after");
        if (w != "after" && w != "before")
            return a.get("where").error("expected \"after\" or \"before\"");
        act.after = w == "after";
        JsonAt anchor = a.get("anchor");
        if (anchor.v && anchor.v->is_string())
            act.anchor = anchor.v->get<std::string>();
        else if (anchor.v && !anchor.v->is_null())
            return anchor.error("expected a node name or null");
        auto nodes = a.array("nodes");
        if (!nodes.ok()) return nodes.error();
        for (size_t i = 0; i < nodes.value().size(); ++i) {
            JsonAt n = nodes.value().index(i);
            NodeSpec spec;
            auto op = n.str("op");
            if (!op.ok()) return op.error();
            auto o = op_from_name(op.value());
            if (!o || *o == Op::Placeholder || *o == Op::Output)
                return n.get("op").error("cannot insert a node of kind \"" + op.value() + "\"");
            spec.op = *o;
            auto target = n.str("target");
            if (!target.ok()) return target.error();
            spec.target = target.value();
            spec.name = n.str_or("name", "");
            spec.module_type = n.str_or("module_type", "");
            if (JsonAt args = n.get("args"); args.v)
                if (Status s = decode_list(args, spec.args); !s.ok()) return s.error();
            if (JsonAt kw = n.get("kwargs"); kw.v && kw.is_object())
                for (auto it = kw.v->begin(); it != kw.v->end(); ++it) {
                    auto x = decode_fx_arg(JsonAt{&*it, kw.path + "." + it.key(), a.file});
                    if (!x.ok()) return x.error();
                    spec.kwargs.emplace_back(it.key(), x.take());
                }
            act.nodes.push_back(std::move(spec));
        }
    } else if (k == "replace_all_uses_with") {
        act.kind = EditAction::Kind::ReplaceAllUsesWith;
        if (Status s = need("node", act.node); !s.ok()) return s.error();
        if (Status s = need("with", act.with); !s.ok()) return s.error();
        JsonAt skip = a.get("skip_users");
        if (skip.v && skip.is_array()) {
            std::vector<std::string> names;
            for (size_t i = 0; i < skip.size(); ++i) {
                auto n = skip.index(i).as_str();
                if (!n.ok()) return n.error();
                names.push_back(n.value());
            }
            act.skip_users = names;
        }
    } else if (k == "replace_input_with") {
        act.kind = EditAction::Kind::ReplaceInputWith;
        if (Status s = need("node", act.node); !s.ok()) return s.error();
        if (Status s = need("old", act.old_input); !s.ok()) return s.error();
        if (Status s = need("new", act.new_input); !s.ok()) return s.error();
    } else if (k == "erase_node") {
        act.kind = EditAction::Kind::EraseNode;
        if (Status s = need("node", act.node); !s.ok()) return s.error();
    } else if (k == "set_args") {
        act.kind = EditAction::Kind::SetArgs;
        if (Status s = need("node", act.node); !s.ok()) return s.error();
        if (Status s = decode_list(a.get("args"), act.args); !s.ok()) return s.error();
    } else if (k == "eliminate_dead_code") {
        act.kind = EditAction::Kind::EliminateDeadCode;
    } else if (k == "lint") {
        act.kind = EditAction::Kind::Lint;
    } else if (k == "recompile") {
        act.kind = EditAction::Kind::Recompile;
    } else if (k == "undo") {
        act.kind = EditAction::Kind::Undo;
    } else if (k == "redo") {
        act.kind = EditAction::Kind::Redo;
    } else {
        return a.get("kind").error("unknown action \"" + k + "\"");
    }
    return act;
}

Result<EditAction> parse_edit_action(const std::string& text, const std::string& where) {
    auto root = parse_json_text(text, where);
    if (!root.ok()) return root.error();
    return edit_action_from_json(json_root(root.value(), &where));
}

namespace {

Result<IrLevel> level_from_json(const JsonAt& a) {
    std::string level = a.str_or("level", "core");
    if (level == "inference") return IrLevel::Inference;
    if (level == "core") return IrLevel::CoreAten;
    return a.get("level").error("expected \"inference\" or \"core\"");
}

Result<InputSource> inputs_from_json(const JsonAt& a) {
    InputSource src;
    std::string kind = a.str_or("inputs", "auto");
    if (kind == "auto")
        src.kind = InputSource::Kind::Auto;
    else if (kind == "sample")
        src.kind = InputSource::Kind::Sample;
    else if (kind == "seeded")
        src.kind = InputSource::Kind::Seeded;
    else
        return a.get("inputs").error("expected \"auto\", \"sample\" or \"seeded\"");
    if (JsonAt seed = a.get("seed"); seed.v) {
        auto v = seed.as_int();
        if (!v.ok()) return v.error();
        if (v.value() < 0) return seed.error("expected a seed >= 0");
        src.seed = static_cast<uint64_t>(v.value());
    }
    return src;
}

Result<int> repeat_from_json(const JsonAt& a) {
    JsonAt r = a.get("repeat");
    if (!r.v) return 1;
    auto v = r.as_int();
    if (!v.ok()) return v.error();
    if (v.value() < 1 || v.value() > 1000) return r.error("expected a repeat count from 1 to 1000");
    return static_cast<int>(v.value());
}

} // namespace

Result<Action> action_from_json(const JsonAt& a) {
    auto kind = a.str("kind");
    if (!kind.ok()) return kind.error();
    const std::string& k = kind.value();
    const ActionRow* row = find_action_row(k);
    if (!row)
        return a.get("kind").error("unknown action \"" + k + "\"",
                                   "expected one of: " + action_kind_list());
    if (a.is_object())
        for (auto it = a.v->begin(); it != a.v->end(); ++it)
            if (!row->allows(it.key()))
                return JsonAt{&*it, a.path + "." + it.key(), a.file}.error(
                    "unknown field \"" + it.key() + "\" for a " + k + " action");
    Action act;
    act.label = a.str_or("label", "");
    auto with_node = [&]() -> Status {
        auto n = a.str("node");
        if (!n.ok()) return n.error();
        act.node = n.value();
        return {};
    };
    if (k == "decompose" || k == "decompose_node") {
        act.kind = k == "decompose" ? Action::Kind::Decompose : Action::Kind::DecomposeNode;
        auto level = level_from_json(a);
        if (!level.ok()) return level.error();
        act.level = level.value();
        if (act.kind == Action::Kind::DecomposeNode) {
            if (Status s = with_node(); !s.ok()) return s.error();
        } else if (JsonAt keep = a.get("keep"); keep.v) {
            if (!keep.is_array()) return keep.error("expected an array of op overloads");
            for (size_t i = 0; i < keep.size(); ++i) {
                auto op = keep.index(i).as_str();
                if (!op.ok()) return op.error();
                act.keep.push_back(op.value());
            }
        }
    } else if (k == "fold_conv_bn") {
        act.kind = Action::Kind::FoldConvBn;
    } else if (k == "insert_observer") {
        act.kind = Action::Kind::InsertObserver;
        if (Status s = with_node(); !s.ok()) return s.error();
    } else if (k == "prepare") {
        act.kind = Action::Kind::Prepare;
    } else if (k == "calibrate" || k == "run") {
        act.kind = k == "run" ? Action::Kind::Run : Action::Kind::Calibrate;
        auto src = inputs_from_json(a);
        if (!src.ok()) return src.error();
        act.inputs = src.value();
        auto repeat = repeat_from_json(a);
        if (!repeat.ok()) return repeat.error();
        act.repeat = repeat.value();
        if (JsonAt f = a.get("fast_kernels"); f.v) {
            auto b = f.as_bool();
            if (!b.ok()) return b.error();
            act.fast_kernels = b.value();
        }
    } else if (k == "train" || k == "eval") {
        act.kind = Action::Kind::SetTraining;
        act.train = k == "train";
    } else if (k == "convert") {
        act.kind = Action::Kind::Convert;
        if (JsonAt f = a.get("fold_quantize"); f.v) {
            auto b = f.as_bool();
            if (!b.ok()) return b.error();
            act.fold_quantize = b.value();
        }
    } else {
        auto edit = edit_action_from_json(a);
        if (!edit.ok()) return edit.error();
        act.kind = Action::Kind::Edit;
        act.edit = edit.take();
    }
    return act;
}

Result<Action> parse_action(const std::string& text, const std::string& where) {
    auto root = parse_json_text(text, where);
    if (!root.ok()) return root.error();
    return action_from_json(json_root(root.value(), &where));
}

} // namespace pt2lab
