// Parser for lesson files: splits the Markdown into title, intro and step
// sections, reads the ```lesson and ```step JSON blocks into a Lesson, and
// checks the prose against the Markdown subset the page draws.
#include "lesson/lesson.h"

#include <set>
#include <sstream>

#include "lesson/markdown.h"
#include "util/json_read.h"
#include "workspace/action_json.h"
#include "workspace/action_table.h"

namespace pt2lab {

const char* const kShowPanels[] = {"graph", "code",        "inspector", "signature", "weights",
                                   "state", "run",         "parity",    "observers", "lint",
                                   "diff",  "torch_error", "op_counts", "history",   nullptr};
const char* const kLessonLangs[] = {"zh-TW", "en", nullptr};

const LessonGraph* Lesson::find_graph(const std::string& key) const {
    for (const auto& g : graphs)
        if (g.key == key) return &g;
    return nullptr;
}

namespace {

bool in_list(const char* const* list, const std::string& s) {
    for (; *list; ++list)
        if (s == *list) return true;
    return false;
}

bool starts_with(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

// Drops blank lines at both ends of a block of Markdown; `first_line` (the
// file line of lines[0]) moves past the dropped leading ones.
std::string trim_lines(const std::vector<std::string>& lines, int& first_line) {
    size_t a = 0, b = lines.size();
    while (a < b && trim(lines[a]).empty()) ++a;
    while (b > a && trim(lines[b - 1]).empty()) --b;
    first_line += static_cast<int>(a);
    std::string out;
    for (size_t i = a; i < b; ++i) {
        out += lines[i];
        if (i + 1 < b) out += '\n';
    }
    return out;
}

// Reads one JSON block of the file; `line` is the fence's line.
struct BlockReader {
    const std::string& file;
    int line;
    std::string where(const std::string& path) const {
        return "line " + std::to_string(line) + ": " + path;
    }
    Error error(const std::string& path, const std::string& message,
                const std::string& hint = {}) const {
        Error e = make_error(where(path), message, hint);
        e.file = file;
        return e;
    }
    Error error(const JsonAt& at, const std::string& message, const std::string& hint = {}) const {
        return error(at.path, message, hint);
    }
    // Every key of `obj` must be in `allowed` (catches typos such as "hightlight").
    Status only_keys(const JsonAt& obj, std::initializer_list<const char*> allowed) const {
        for (auto it = obj.v->begin(); it != obj.v->end(); ++it) {
            bool ok = false;
            for (const char* k : allowed) ok = ok || it.key() == k;
            if (!ok) {
                std::string list;
                for (const char* k : allowed) list += std::string(list.empty() ? "" : ", ") + k;
                return error(obj.path + "." + it.key(), "unknown field \"" + it.key() + "\"",
                             "expected one of: " + list);
            }
        }
        return {};
    }
    Result<std::string> str(const JsonAt& obj, const char* key, bool required) const {
        JsonAt v = obj.get(key);
        if (!v.v) {
            if (required)
                return error(obj.path + "." + key, "missing field \"" + std::string(key) + "\"");
            return std::string();
        }
        if (!v.v->is_string()) return error(v, "expected a string");
        std::string s = v.v->get<std::string>();
        if (required && trim(s).empty()) return error(v, "must not be empty");
        return s;
    }
    Result<std::vector<std::string>> strings(const JsonAt& obj, const char* key) const {
        std::vector<std::string> out;
        JsonAt v = obj.get(key);
        if (!v.v) return out;
        if (!v.is_array()) return error(v, "expected an array of strings");
        for (size_t i = 0; i < v.size(); ++i) {
            JsonAt x = v.index(i);
            if (!x.v->is_string()) return error(x, "expected a string");
            out.push_back(x.v->get<std::string>());
        }
        return out;
    }
};

Result<json> parse_block(const BlockReader& r, const std::string& text) {
    auto j = parse_json_text(text, r.file, r.where("$"));
    if (!j.ok()) {
        Error e = j.error();
        e.hint = "the block between the ``` fences must be one JSON object";
        return e;
    }
    if (!j.value().is_object()) return r.error("$", "expected a JSON object");
    return j;
}

Status read_lesson_block(const BlockReader& r, const std::string& text, Lesson& l) {
    auto j = parse_block(r, text);
    if (!j.ok()) return j.error();
    JsonAt root = json_root(j.value(), &r.file);
    if (Status s = r.only_keys(root, {"id", "order", "summary", "graphs"}); !s.ok()) return s;
    auto id = r.str(root, "id", true);
    if (!id.ok()) return id.error();
    l.id = id.value();
    JsonAt order = root.get("order");
    if (!order.v || !order.v->is_number_integer())
        return r.error("$.order", "expected an integer (the lesson's place in the list)");
    l.order = order.v->get<int>();
    auto summary = r.str(root, "summary", true);
    if (!summary.ok()) return summary.error();
    l.summary = summary.value();
    JsonAt graphs = root.get("graphs");
    if (!graphs.v || !graphs.is_object() || graphs.size() == 0)
        return r.error("$.graphs", "expected an object of graph key -> asset path",
                       "e.g. {\"main\": \"assets/graphs/conv_relu.pt2\"}");
    for (auto it = graphs.v->begin(); it != graphs.v->end(); ++it) {
        std::string path = "$.graphs." + it.key();
        if (!it->is_string()) return r.error(path, "expected an asset path");
        LessonGraph g;
        g.key = it.key();
        g.path = it->get<std::string>();
        bool pt2 = g.path.size() > 4 && g.path.compare(g.path.size() - 4, 4, ".pt2") == 0;
        bool json_file = g.path.size() > 5 && g.path.compare(g.path.size() - 5, 5, ".json") == 0;
        if (!starts_with(g.path, "assets/") || !(pt2 || json_file))
            return r.error(path, "expected a path under assets/ ending in .pt2 or .json");
        g.kind = starts_with(g.path, "assets/fx/") ? LessonGraph::Kind::SymbolicTrace
                                                   : LessonGraph::Kind::Export;
        l.graphs.push_back(g);
    }
    return {};
}

Status read_action(const BlockReader& r, const JsonAt& a, const Lesson& l, const LessonStep& st,
                   StepAction& out) {
    if (!a.is_object()) return r.error(a, "expected an action object");
    auto kind = r.str(a, "kind", true);
    if (!kind.ok()) return kind.error();
    out.kind = kind.value();
    out.where = r.file + ":" + r.where(a.path);
    auto graph = r.str(a, "graph", false);
    if (!graph.ok()) return graph.error();
    out.graph = graph.value().empty() ? st.graph : graph.value();
    const LessonGraph* g = l.find_graph(out.graph);
    if (!g) return r.error(a.path + ".graph", "no graph \"" + out.graph + "\" in the lesson block");
    if (g->kind == LessonGraph::Kind::SymbolicTrace)
        return r.error(a.path,
                       "graph \"" + out.graph + "\" is a symbolic_trace graph, shown read-only",
                       "act on a torch.export graph (.pt2) instead");
    // The action table (workspace/action_rows.inc) says which kinds and fields exist.
    const ActionRow* row = find_action_row(out.kind);
    if (!row)
        return r.error(a.path + ".kind", "unknown action \"" + out.kind + "\"",
                       "expected one of: " + action_kind_list());
    for (auto it = a.v->begin(); it != a.v->end(); ++it) {
        const std::string& key = it.key();
        if (key != "graph" && !row->allows(key))
            return r.error(a.path + "." + key,
                           "unknown field \"" + key + "\" for a " + out.kind + " action");
    }
    json copy = *a.v;
    copy.erase("graph");
    out.json = copy.dump();
    out.is_edit =
        row->is_edit && row->edit != EditAction::Kind::Undo && row->edit != EditAction::Kind::Redo;
    // The Workspace's own reader checks the rest (levels, node names, input sources).
    json at_path = copy;
    JsonAt view = json_root(at_path, &r.file, a.path);
    auto parsed = action_from_json(view);
    if (!parsed.ok()) {
        Error e = parsed.error();
        e.where = r.where(e.where);
        e.file = r.file;
        return e;
    }
    return {};
}

Status read_check(const BlockReader& r, const JsonAt& c, Check& out) {
    if (!c.v || !c.is_object())
        return r.error("$.check",
                       "every step needs a check: {\"question\", \"options\", \"answer\"}");
    if (Status s = r.only_keys(c, {"question", "options", "answer"}); !s.ok()) return s;
    auto q = r.str(c, "question", true);
    if (!q.ok()) return q.error();
    out.question = q.value();
    JsonAt opts = c.get("options");
    if (!opts.v || !opts.is_array() || opts.size() < 2)
        return r.error("$.check.options", "expected at least two options");
    for (size_t i = 0; i < opts.size(); ++i) {
        JsonAt o = opts.index(i);
        if (!o.is_object()) return r.error(o, "expected {\"text\", \"feedback\"}");
        if (Status s = r.only_keys(o, {"text", "feedback"}); !s.ok()) return s;
        auto t = r.str(o, "text", true);
        if (!t.ok()) return t.error();
        auto f = r.str(o, "feedback", true);
        if (!f.ok()) return f.error();
        out.options.push_back({t.value(), f.value()});
    }
    JsonAt ans = c.get("answer");
    if (!ans.v || !ans.v->is_number_integer())
        return r.error("$.check.answer", "expected the index of the right option (from 0)");
    out.answer = ans.v->get<int>();
    if (out.answer < 0 || out.answer >= static_cast<int>(out.options.size()))
        return r.error("$.check.answer", "no option " + std::to_string(out.answer),
                       "options count from 0");
    for (const auto& o : out.options) {
        if (Status s = check_inline_markdown(o.text, r.file, r.line); !s.ok()) return s;
        if (Status s = check_inline_markdown(o.feedback, r.file, r.line); !s.ok()) return s;
    }
    return check_inline_markdown(out.question, r.file, r.line);
}

Status read_expect(const BlockReader& r, const JsonAt& e, StepExpect& out) {
    if (!e.v) return {};
    if (!e.is_object()) return r.error(e, "expected an object");
    if (Status s = r.only_keys(
            e, {"lint", "parity", "torch_error", "added", "removed", "changed", "same_outputs"});
        !s.ok())
        return s;
    auto lint = r.str(e, "lint", false);
    if (!lint.ok()) return lint.error();
    out.lint = lint.value();
    if (!out.lint.empty() && out.lint != "ok" && out.lint != "error")
        return r.error(e.path + ".lint", "expected \"ok\" or \"error\"");
    auto parity = r.str(e, "parity", false);
    if (!parity.ok()) return parity.error();
    out.parity = parity.value();
    if (!out.parity.empty() && out.parity != "bit_identical" && out.parity != "allclose" &&
        out.parity != "differs")
        return r.error(e.path + ".parity",
                       "expected \"bit_identical\", \"allclose\" or \"differs\"");
    auto te = r.str(e, "torch_error", false);
    if (!te.ok()) return te.error();
    out.torch_error_kind = te.value();
    auto added = r.strings(e, "added");
    if (!added.ok()) return added.error();
    out.added = added.value();
    auto removed = r.strings(e, "removed");
    if (!removed.ok()) return removed.error();
    out.removed = removed.value();
    JsonAt ch = e.get("changed");
    if (ch.v) {
        if (!ch.v->is_boolean()) return r.error(ch, "expected true or false");
        out.changed = ch.v->get<bool>() ? 1 : 0;
    }
    JsonAt same = e.get("same_outputs");
    if (same.v) {
        if (!same.v->is_boolean()) return r.error(same, "expected true or false");
        out.same_outputs = same.v->get<bool>() ? 1 : 0;
    }
    return {};
}

Status read_step_block(const BlockReader& r, const std::string& text, const Lesson& l,
                       LessonStep& st) {
    auto j = parse_block(r, text);
    if (!j.ok()) return j.error();
    JsonAt root = json_root(j.value(), &r.file);
    if (Status s = r.only_keys(root, {"graph", "view", "compare", "button", "actions", "highlight",
                                      "select", "show", "expect", "check", "quiz"});
        !s.ok())
        return s;
    auto graph = r.str(root, "graph", true);
    if (!graph.ok()) return graph.error();
    st.graph = graph.value();
    const LessonGraph* g = l.find_graph(st.graph);
    if (!g) return r.error("$.graph", "no graph \"" + st.graph + "\" in the lesson block");
    auto view = r.str(root, "view", false);
    if (!view.ok()) return view.error();
    st.view = view.value().empty() ? "module" : view.value();
    if (st.view != "module" && st.view != "program")
        return r.error("$.view", "expected \"module\" (ep.module()) or \"program\" (ep.graph)");
    if (g->kind == LessonGraph::Kind::SymbolicTrace && st.view != "module")
        return r.error("$.view", "a symbolic_trace graph has only the module view");
    auto compare = r.strings(root, "compare");
    if (!compare.ok()) return compare.error();
    st.compare = compare.value();
    for (size_t i = 0; i < st.compare.size(); ++i)
        if (!l.find_graph(st.compare[i]) || st.compare[i] == st.graph)
            return r.error("$.compare[" + std::to_string(i) + "]",
                           "\"" + st.compare[i] + "\" is not another graph of the lesson block");
    auto button = r.str(root, "button", false);
    if (!button.ok()) return button.error();
    st.button = button.value();
    JsonAt actions = root.get("actions");
    if (actions.v) {
        if (!actions.is_array()) return r.error(actions, "expected an array of actions");
        for (size_t i = 0; i < actions.size(); ++i) {
            StepAction a;
            if (Status s = read_action(r, actions.index(i), l, st, a); !s.ok()) return s;
            st.actions.push_back(std::move(a));
        }
    }
    if (st.actions.empty() != st.button.empty())
        return r.error("$.button", st.actions.empty() ? "a button without actions"
                                                      : "actions need a \"button\" label");
    auto hl = r.strings(root, "highlight");
    if (!hl.ok()) return hl.error();
    st.highlight = hl.value();
    auto sel = r.str(root, "select", false);
    if (!sel.ok()) return sel.error();
    st.select = sel.value();
    auto show = r.strings(root, "show");
    if (!show.ok()) return show.error();
    st.show = show.value();
    for (size_t i = 0; i < st.show.size(); ++i)
        if (!in_list(kShowPanels, st.show[i]))
            return r.error("$.show[" + std::to_string(i) + "]",
                           "unknown panel \"" + st.show[i] + "\"");
    if (Status s = read_expect(r, root.get("expect"), st.expect); !s.ok()) return s;
    if (Status s = read_check(r, root.get("check"), st.check); !s.ok()) return s;
    JsonAt quiz = root.get("quiz");
    if (quiz.v) {
        if (!quiz.v->is_boolean()) return r.error(quiz, "expected true or false");
        st.is_quiz = quiz.v->get<bool>();
    }
    return {};
}

Error file_error(const std::string& file, int line, const std::string& message,
                 const std::string& hint = {}) {
    Error e = make_error(line > 0 ? "line " + std::to_string(line) : std::string(), message, hint);
    e.file = file;
    return e;
}

// "assets/lessons/m00-4.zh-TW.md" -> ("m00-4", "zh-TW"); false if it is not so named.
bool split_file_name(const std::string& file, std::string& id, std::string& lang) {
    std::string base =
        file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
    if (base.size() < 4 || base.compare(base.size() - 3, 3, ".md") != 0) return false;
    base = base.substr(0, base.size() - 3);
    size_t dot = base.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= base.size()) return false;
    id = base.substr(0, dot);
    lang = base.substr(dot + 1);
    return true;
}

} // namespace

Result<Lesson> parse_lesson(const std::string& text, const std::string& file) {
    Lesson l;
    l.file = file;
    std::string name_id;
    if (!split_file_name(file, name_id, l.lang))
        return file_error(file, 0, "a lesson file is named <id>.<lang>.md",
                          "e.g. assets/lessons/m00-4.zh-TW.md");
    if (!in_list(kLessonLangs, l.lang))
        return file_error(file, 0, "unknown language \"" + l.lang + "\"", "expected zh-TW or en");

    std::vector<std::string> lines;
    {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            lines.push_back(line);
        }
    }
    enum class Part { BeforeTitle, Intro, StepProse, StepAfter } part = Part::BeforeTitle;
    std::vector<std::string> intro, prose, after;
    int prose_line = 0, after_line = 0, intro_line = 0;
    bool have_lesson_block = false, have_step_block = false;
    LessonStep* cur = nullptr;

    auto finish_step = [&]() -> Status {
        if (!cur) return {};
        if (!have_step_block)
            return file_error(file, cur->line, "step \"" + cur->title + "\" has no ```step block");
        cur->prose = trim_lines(prose, prose_line);
        cur->after = trim_lines(after, after_line);
        if (Status s = check_markdown(cur->prose, file, prose_line); !s.ok()) return s;
        if (Status s = check_markdown(cur->after, file, after_line); !s.ok()) return s;
        return {};
    };

    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        int lineno = static_cast<int>(i) + 1;
        if (starts_with(line, "```")) {
            std::string info = trim(line.substr(3));
            size_t end = i + 1;
            while (end < lines.size() && !starts_with(lines[end], "```")) ++end;
            if (end >= lines.size()) return file_error(file, lineno, "a ``` block is not closed");
            if (info == "lesson" || info == "step") {
                std::string body;
                for (size_t k = i + 1; k < end; ++k) body += lines[k] + "\n";
                BlockReader r{file, lineno};
                if (info == "lesson") {
                    if (have_lesson_block || part == Part::StepProse || part == Part::StepAfter)
                        return file_error(file, lineno,
                                          "one ```lesson block, before the first step");
                    if (Status s = read_lesson_block(r, body, l); !s.ok()) return s.error();
                    have_lesson_block = true;
                } else {
                    if (!cur)
                        return file_error(file, lineno, "a ```step block outside a step",
                                          "start each step with a \"## \" heading");
                    if (have_step_block)
                        return file_error(file, lineno, "a second ```step block in one step");
                    if (Status s = read_step_block(r, body, l, *cur); !s.ok()) return s.error();
                    have_step_block = true;
                    part = Part::StepAfter;
                    after_line = static_cast<int>(end) + 2;
                }
                i = end;
                continue;
            }
            // An ordinary code block: prose, copied whole.
            std::vector<std::string>* target = part == Part::Intro       ? &intro
                                               : part == Part::StepProse ? &prose
                                                                         : &after;
            if (part == Part::BeforeTitle)
                return file_error(file, lineno, "the file must start with the \"# \" title");
            for (size_t k = i; k <= end; ++k) target->push_back(lines[k]);
            i = end;
            continue;
        }
        if (starts_with(line, "# ")) {
            if (part != Part::BeforeTitle)
                return file_error(file, lineno, "a second \"# \" title",
                                  "steps start with \"## \", sub-headings with \"### \"");
            l.title = trim(line.substr(2));
            part = Part::Intro;
            intro_line = lineno + 1;
            continue;
        }
        if (starts_with(line, "## ")) {
            if (part == Part::BeforeTitle)
                return file_error(file, lineno, "the file must start with the \"# \" title");
            if (Status s = finish_step(); !s.ok()) return s.error();
            if (!have_lesson_block)
                return file_error(file, lineno,
                                  "the ```lesson block must come before the first step");
            l.steps.emplace_back();
            cur = &l.steps.back();
            cur->index = static_cast<int>(l.steps.size());
            cur->line = lineno;
            cur->title = trim(line.substr(3));
            if (Status s = check_inline_markdown(cur->title, file, lineno); !s.ok())
                return s.error();
            prose.clear();
            after.clear();
            have_step_block = false;
            part = Part::StepProse;
            prose_line = lineno + 1;
            continue;
        }
        switch (part) {
        case Part::BeforeTitle:
            if (!trim(line).empty())
                return file_error(file, lineno, "the file must start with the \"# \" title");
            break;
        case Part::Intro: intro.push_back(line); break;
        case Part::StepProse: prose.push_back(line); break;
        case Part::StepAfter: after.push_back(line); break;
        }
    }
    if (part == Part::BeforeTitle) return file_error(file, 0, "empty lesson file");
    if (Status s = finish_step(); !s.ok()) return s.error();
    if (!have_lesson_block) return file_error(file, 0, "no ```lesson block");
    if (l.id != name_id)
        return file_error(file, 0, "the lesson block says id \"" + l.id + "\"",
                          "the file name says \"" + name_id + "\"");
    l.intro = trim_lines(intro, intro_line);
    if (Status s = check_markdown(l.intro, file, intro_line); !s.ok()) return s.error();
    if (l.steps.empty()) return file_error(file, 0, "a lesson needs at least one step");
    for (const auto& st : l.steps)
        if (st.is_quiz && st.index != static_cast<int>(l.steps.size()))
            return file_error(file, st.line, "the chapter-map quiz must be the last step");
    if (!l.steps.back().is_quiz)
        return file_error(file, l.steps.back().line, "a lesson ends with its chapter-map question",
                          "mark the last step's block with \"quiz\": true");
    return l;
}

namespace {
std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
}
} // namespace

std::string compare_translations(const Lesson& a, const Lesson& b) {
    if (a.id != b.id) return "different ids: " + a.id + " vs " + b.id;
    if (a.order != b.order) return "different order";
    if (a.graphs.size() != b.graphs.size()) return "different graphs";
    for (size_t i = 0; i < a.graphs.size(); ++i)
        if (a.graphs[i].key != b.graphs[i].key || a.graphs[i].path != b.graphs[i].path)
            return "graph " + a.graphs[i].key + " differs";
    if (a.steps.size() != b.steps.size())
        return std::to_string(a.steps.size()) + " steps vs " + std::to_string(b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
        const LessonStep& x = a.steps[i];
        const LessonStep& y = b.steps[i];
        std::string at = "step " + std::to_string(i + 1) + ": ";
        if (x.graph != y.graph || x.view != y.view || x.compare != y.compare)
            return at + "shows a different graph";
        if (x.actions.size() != y.actions.size()) return at + "a different number of actions";
        for (size_t k = 0; k < x.actions.size(); ++k) {
            // Labels are for the history panel and may be translated.
            json ja = json::parse(x.actions[k].json, nullptr, false);
            json jb = json::parse(y.actions[k].json, nullptr, false);
            ja.erase("label");
            jb.erase("label");
            if (x.actions[k].graph != y.actions[k].graph || ja != jb)
                return at + "action " + std::to_string(k + 1) + " differs: " + ja.dump() + " vs " +
                       jb.dump();
        }
        if (x.button.empty() != y.button.empty()) return at + "a button in one language only";
        if (x.highlight != y.highlight)
            return at + "highlights " + join(x.highlight) + " vs " + join(y.highlight);
        if (x.select != y.select) return at + "selects a different node";
        if (x.show != y.show) return at + "shows different panels";
        const StepExpect& e = x.expect;
        const StepExpect& f = y.expect;
        if (e.lint != f.lint || e.parity != f.parity || e.torch_error_kind != f.torch_error_kind ||
            e.added != f.added || e.removed != f.removed || e.changed != f.changed ||
            e.same_outputs != f.same_outputs)
            return at + "expects something different";
        if (x.check.options.size() != y.check.options.size())
            return at + "a different number of check options";
        if (x.check.answer != y.check.answer) return at + "a different right answer";
        if (x.is_quiz != y.is_quiz) return at + "quiz in one language only";
    }
    return "";
}

} // namespace pt2lab
