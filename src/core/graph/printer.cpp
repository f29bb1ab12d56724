// torch.fx's text forms: Node.format_node, Graph.__str__, Graph.python_code
// (CodeGen and _PyTreeCodeGen), print_readable and print_tabular.
#include "graph/printer.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/op_schema.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {

// operator.* functions that fx's codegen prints infix (magic_methods).
const char* magic_format(std::string_view name) {
    static const std::pair<const char*, const char*> kMagic[] = {
        {"eq", "{} == {}"},       {"ne", "{} != {}"},     {"lt", "{} < {}"},
        {"gt", "{} > {}"},        {"le", "{} <= {}"},     {"ge", "{} >= {}"},
        {"pos", "+{}"},           {"neg", "-{}"},         {"invert", "~{}"},
        {"add", "{} + {}"},       {"sub", "{} - {}"},     {"mul", "{} * {}"},
        {"floordiv", "{} // {}"}, {"truediv", "{} / {}"}, {"div", "{} / {}"},
        {"mod", "{} % {}"},       {"pow", "{} ** {}"},    {"lshift", "{} << {}"},
        {"rshift", "{} >> {}"},   {"and_", "{} & {}"},    {"or_", "{} | {}"},
        {"xor", "{} ^ {}"},       {"getitem", "{}[{}]"},  {"matmul", "{} @ {}"},
    };
    for (const auto& [k, v] : kMagic)
        if (name == k) return v;
    return nullptr;
}

std::string fill_format(const char* fmt, const std::vector<std::string>& parts) {
    std::string out;
    size_t k = 0;
    for (const char* p = fmt; *p; ++p) {
        if (p[0] == '{' && p[1] == '}') {
            out += k < parts.size() ? parts[k++] : "";
            ++p;
        } else {
            out += *p;
        }
    }
    return out;
}

std::string format_args_fx(const std::vector<Argument>& args) {
    return arg_format_fx(Argument::tuple(args));
}

std::string format_kwargs_fx(const Kwargs& kwargs) {
    std::string out = "{";
    for (size_t k = 0; k < kwargs.size(); ++k) {
        if (k) out += ", ";
        out += kwargs[k].first + ": " + arg_format_fx(kwargs[k].second);
    }
    return out + "}";
}

// fx's _format_target: "body.0" under "self" -> getattr(self.body, "0")
std::string format_target(const std::string& base, const std::string& target) {
    std::string r = base;
    size_t b = 0;
    while (b <= target.size()) {
        size_t dot = target.find('.', b);
        std::string atom = target.substr(b, dot == std::string::npos ? std::string::npos : dot - b);
        if (py_is_identifier(atom))
            r += "." + atom;
        else
            r = "getattr(" + r + ", \"" + atom + "\")";
        if (dot == std::string::npos) break;
        b = dot + 1;
    }
    return r;
}

std::string format_call_args(const std::vector<Argument>& args, const Kwargs& kwargs,
                             const NodeNamer& name_of, size_t skip = 0) {
    std::string a, k;
    for (size_t i = skip; i < args.size(); ++i) {
        if (!a.empty()) a += ", ";
        a += arg_repr(args[i], name_of);
    }
    for (const auto& kv : kwargs) {
        if (!k.empty()) k += ", ";
        k += kv.first + " = " + arg_repr(kv.second, name_of);
    }
    if (!a.empty() && !k.empty()) return a + ", " + k;
    return a.empty() ? k : a;
}

std::string last_atom(const std::string& qualified) {
    size_t dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

// Stand-in for a CPython object address in print_tabular: stable per name,
// shaped like a real 64-bit heap pointer (tests match addresses by pattern).
std::string fake_address(const std::string& key) {
    uint64_t h = 1469598103934665603ull;
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x7f%010llx",
                  static_cast<unsigned long long>(h & 0xffffffffffull));
    return buf;
}

struct Summary {
    std::string file, lineno, name, code;
};

// fx's _parse_stack_trace: the innermost 'File "...", line N, in name' and its code line.
bool parse_stack_trace(const std::string& st, Summary& out) {
    std::vector<std::string> lines;
    size_t b = st.find_first_not_of(" \n\t");
    size_t e = st.find_last_not_of(" \n\t");
    if (b == std::string::npos) return false;
    std::string s = st.substr(b, e - b + 1);
    size_t p = 0;
    while (p <= s.size()) {
        size_t nl = s.find('\n', p);
        lines.push_back(s.substr(p, nl == std::string::npos ? std::string::npos : nl - p));
        if (nl == std::string::npos) break;
        p = nl + 1;
    }
    auto strip = [](std::string x) {
        size_t bb = x.find_first_not_of(" \t");
        size_t ee = x.find_last_not_of(" \t");
        return bb == std::string::npos ? std::string() : x.substr(bb, ee - bb + 1);
    };
    for (int idx = static_cast<int>(lines.size()) - 2; idx >= 0; --idx) {
        std::string line = strip(lines[static_cast<size_t>(idx)]);
        // ^File "(.+)", line (\d+), in (.+)$
        if (line.rfind("File \"", 0) != 0) continue;
        size_t q = line.find("\", line ", 6);
        if (q == std::string::npos) continue;
        size_t in = line.find(", in ", q + 8);
        if (in == std::string::npos) continue;
        std::string num = line.substr(q + 8, in - q - 8);
        if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit)) continue;
        out.file = line.substr(6, q - 6);
        out.lineno = num;
        out.name = line.substr(in + 5);
        out.code = strip(lines[static_cast<size_t>(idx) + 1]);
        return !out.name.empty();
    }
    return false;
}

class CodeWriter {
public:
    CodeWriter(const Graph& g, const CodegenOptions& opt)
        : g_(g), opt_(opt), name_of_([this](const Node* n) { return code_name(n); }) {}

    // torch's _lineno_map: for each line of the result, the node that emitted it
    // ("" for the def line, the flatten line and blank lines before the body).
    std::vector<std::string> line_nodes;
    std::vector<uint32_t> line_ids; // the same lines' node ids (0: none)

    // Writes nodes until `deadline` (at least one); true once the code is written
    // (then take() it). A writer stepped to the end is python_code().
    bool step(std::chrono::steady_clock::time_point deadline) {
        if (phase_ == Phase::Done) return true;
        if (phase_ == Phase::Start) {
            nodes_ = g_.nodes();
            at_ = nodes_.size();
            phase_ = Phase::LastUses;
        }
        size_t k = 0;
        while (phase_ == Phase::LastUses && at_ > 0) {
            last_uses_of(nodes_[--at_]);
            if (++k % 64 == 0 && at_ > 0 && std::chrono::steady_clock::now() >= deadline)
                return false;
        }
        if (phase_ == Phase::LastUses) phase_ = Phase::Body;
        while (phase_ == Phase::Body && at_ < nodes_.size()) {
            body_of(nodes_[at_++]);
            if (++k % 64 == 0 && at_ < nodes_.size() &&
                std::chrono::steady_clock::now() >= deadline)
                return false;
        }
        if (phase_ == Phase::Body) {
            phase_ = Phase::Finish; // the lines' map and the indenting: pieces of their own
            if (std::chrono::steady_clock::now() >= deadline) return false;
        }
        // A 24k-node graph's code is 24k lines: mapped, indented and the writer's
        // working state let go a few thousand lines (one container) a piece.
        while (phase_ == Phase::Finish) {
            if (finish_some(deadline)) break;
            if (std::chrono::steady_clock::now() >= deadline) return false;
        }
        phase_ = Phase::Done;
        return true;
    }
    bool done() const { return phase_ == Phase::Done; }
    // How far, in units of nodes: each node twice (last uses backwards, then the
    // body), and as many units again for the end (the lines mapped and indented, the
    // working state let go), so that every piece moves it on.
    size_t nodes_done() const {
        const size_t n = nodes_.size();
        switch (phase_) {
        case Phase::LastUses: return n - at_;
        case Phase::Body: return n + at_;
        case Phase::Finish: return 2 * n + finish_units(n);
        case Phase::Done: return nodes_total();
        default: return 0;
        }
    }
    size_t nodes_total() const { return 3 * g_.size(); }
    std::string take() { return std::move(code_); }

private:
    // Last use of each value: walked backwards, first sighting wins.
    void last_uses_of(Node* user) {
        auto reg = [&](Node* n) {
            if (seen_.insert(n).second) user_to_last_uses_[user].push_back(n);
        };
        for (const Argument& a : user->args()) for_each_node(a, reg);
        for (const auto& kv : user->kwargs()) for_each_node(kv.second, reg);
    }

    void body_of(Node* n) {
        if (opt_.verbose) stacktrace_summary(*n);
        marks_.emplace_back(body_.size(), n); // torch's "# COUNTER: i"
        emit(*n);
        // delete_unused_values
        if (n->op() == Op::Placeholder) return;
        if (n->op() == Op::Output) {
            body_ += "\n";
            return;
        }
        auto it = user_to_last_uses_.find(n);
        std::vector<Node*> dels;
        if (it != user_to_last_uses_.end()) dels = std::move(it->second);
        if (n->users().empty()) dels.push_back(n);
        if (dels.empty()) {
            body_ += "\n";
        } else {
            std::string s;
            for (Node* d : dels) s += code_name(d) + " = ";
            body_ += ";  " + s + "None\n";
        }
    }

    // One piece of the end: true once the code is whole and the working state gone.
    bool finish_some(std::chrono::steady_clock::time_point deadline) {
        auto late = [&](size_t& k) {
            return ++k % kLinesPerLook == 0 && std::chrono::steady_clock::now() >= deadline;
        };
        size_t k = 0;
        switch (fin_) {
        case Fin::Start: {
            if (body_.empty()) body_ = "pass\n";
            prologue_ = fn_def();
            first_ = body_.find_first_not_of('\n');
            // "\n\n\n" + prologue + "\n": every line before the body belongs to no node
            size_t head =
                3 + static_cast<size_t>(std::count(prologue_.begin(), prologue_.end(), '\n')) + 1;
            line_nodes.assign(head, "");
            line_ids.assign(head, 0);
            off_ = first_ == std::string::npos ? body_.size() : first_;
            line_count_ =
                head + static_cast<size_t>(std::count(body_.begin(), body_.end(), '\n')) + 1;
            mark_ = 0;
            current_ = nullptr;
            fin_ = Fin::Lines;
        }
            [[fallthrough]];
        case Fin::Lines: // torch's _lineno_map
            while (off_ <= body_.size()) {
                while (mark_ < marks_.size() && marks_[mark_].first <= off_)
                    current_ = marks_[mark_++].second;
                const Node* n = off_ == body_.size() ? nullptr : current_; // "    " at the end
                line_nodes.push_back(n ? n->name() : std::string());
                line_ids.push_back(n ? n->id() : 0);
                size_t nl = body_.find('\n', off_);
                if (nl == std::string::npos) break;
                off_ = nl + 1;
                if (late(k)) return false;
            }
            code_ = "\n\n\n" + prologue_ + "\n";
            code_.reserve(code_.size() + body_.size() + body_.size() / 8 + 8);
            off_ = first_;
            fin_ = Fin::Indent;
            [[fallthrough]];
        case Fin::Indent: // every line of the body indented by four spaces
            // (the last line too, an empty one after the body's last newline)
            if (first_ == std::string::npos) {
                code_ += "    ";
                indented_ = true;
            }
            while (!indented_) {
                size_t nl = body_.find('\n', off_);
                code_ += "    ";
                if (nl == std::string::npos) {
                    code_.append(body_, off_, std::string::npos);
                    indented_ = true;
                    break;
                }
                code_.append(body_, off_, nl + 1 - off_);
                off_ = nl + 1;
                ++lines_indented_;
                if (late(k)) return false;
            }
            fin_ = Fin::Release;
            [[fallthrough]];
        case Fin::Release: // the working state: a big container (thousands of entries)
                           // is a piece of its own, the small ones go together
            if (release_big(user_to_last_uses_) || release_big(seen_) || release_big(code_names_))
                return false;
            free_all(user_to_last_uses_);
            free_all(seen_);
            free_all(code_names_);
            free_all(marks_);
            free_all(body_);
            free_all(nodes_);
            fin_ = Fin::Done;
            return true;
        case Fin::Done: break;
        }
        return true;
    }
    // The end's share of nodes_done(), below n: the lines handled (each twice) of all,
    // then one unit per container let go.
    size_t finish_units(size_t n) const {
        if (n < 8) return fin_ == Fin::Start ? 0 : n - 1;
        const size_t span = n - 5, lines = std::max<size_t>(1, 2 * line_count_);
        switch (fin_) {
        case Fin::Start: return 0;
        case Fin::Lines: return (line_ids.size() * span) / lines;
        case Fin::Indent: return ((line_count_ + lines_indented_) * span) / lines;
        case Fin::Release: return span + 1 + released_;
        default: return n - 1;
        }
    }
    template <class C> static void free_all(C& c) { C().swap(c); }
    template <class C> bool release_big(C& c) {
        if (c.size() <= kLinesPerLook) return false;
        free_all(c);
        ++released_;
        return true;
    }

    std::string annotation(const Node& n) const {
        if (!opt_.verbose) return "";
        const MetaVal& v = n.meta.val;
        if (v.kind == MetaVal::Kind::Tensor) return ": \"" + v.tensor.type_str() + "\"";
        if (v.kind == MetaVal::Kind::SymInt) return ": \"Sym(" + v.sym + ")\"";
        return "";
    }

    // torch >= 2.9's append_stacktrace_summary: a "# File: ..." comment whenever
    // the summary changes; nodes without a trace get one shared notice.
    void stacktrace_summary(const Node& n) {
        if (n.op() == Op::Placeholder || n.op() == Op::Output) return;
        std::string text = "No stacktrace found for following nodes";
        Summary s;
        if (!n.meta.stack_trace.empty() && parse_stack_trace(n.meta.stack_trace, s))
            text = "File: " + s.file + ":" + s.lineno + " in " + s.name + ", code: " + s.code;
        std::string summary = "\n# " + text + "\n";
        if (!has_prev_summary_ || summary != prev_summary_) {
            prev_summary_ = summary;
            has_prev_summary_ = true;
            body_ += summary;
        }
    }

    // Node.__repr__ inside python_code: a name from the code's own namespace, made at
    // first use (torch overrides node reprs with namespace.create_name(node.name)). Names
    // equal node names except where one would shadow a builtin or keyword (input -> input_1).
    std::string code_name(const Node* n) {
        auto it = code_names_.find(n);
        if (it != code_names_.end()) return it->second;
        std::string name = names_.create_name(n->name());
        code_names_[n] = name;
        return name;
    }
    std::string repr(const Argument& a) { return arg_repr(a, name_of_); }

    void emit(const Node& n) {
        switch (n.op()) {
        case Op::Placeholder: {
            std::string def = n.args().empty() ? "" : " = " + repr(n.args()[0]);
            free_vars_.push_back(n.target() + annotation(n) + def);
            std::string raw = n.target();
            raw.erase(std::remove(raw.begin(), raw.end(), '*'), raw.end());
            std::string name = code_name(&n);
            if (raw != name) body_ += name + " = " + raw + "\n"; // no annotation (torch)
            return;
        }
        case Op::CallMethod: {
            std::string name = code_name(&n);
            body_ += name + annotation(n) + " = " +
                     format_target(n.args().empty() ? "None" : repr(n.args()[0]), n.target()) +
                     "(" + format_call_args(n.args(), n.kwargs(), name_of_, 1) + ")";
            return;
        }
        case Op::CallFunction: {
            const std::string& t = n.target();
            if (t.rfind("operator.", 0) == 0 && n.kwargs().empty()) {
                if (const char* fmt = magic_format(last_atom(t))) {
                    std::string name = code_name(&n);
                    std::vector<std::string> parts;
                    for (const Argument& a : n.args()) parts.push_back(repr(a));
                    body_ += name + annotation(n) + " = " + fill_format(fmt, parts);
                    return;
                }
            }
            std::string global = global_name(t);
            std::string name = code_name(&n);
            if (global == "getattr" && n.args().size() == 2 &&
                n.args()[1].kind == ArgKind::String && py_is_identifier(n.args()[1].s)) {
                body_ +=
                    name + annotation(n) + " = " + format_target(repr(n.args()[0]), n.args()[1].s);
                return;
            }
            body_ += name + annotation(n) + " = " + global + "(" +
                     format_call_args(n.args(), n.kwargs(), name_of_) + ")";
            return;
        }
        case Op::CallModule: {
            std::string name = code_name(&n);
            body_ += name + annotation(n) + " = " + format_target("self", n.target()) + "(" +
                     format_call_args(n.args(), n.kwargs(), name_of_) + ")";
            return;
        }
        case Op::GetAttr: {
            std::string name = code_name(&n);
            body_ += name + annotation(n) + " = " + format_target("self", n.target());
            return;
        }
        case Op::Output: {
            std::string out = n.args().empty() ? "None" : repr(n.args()[0]);
            if (opt_.pytree)
                body_ += "return pytree.tree_unflatten(" + out + ", self._out_spec)";
            else
                body_ += "return " + out;
            return;
        }
        }
    }

    // fx's add_global(_get_qualified_name(target)): torch callables keep their
    // dotted name, Python builtins their bare name, anything else a sanitized global.
    std::string global_name(const std::string& qualified) {
        if (qualified.rfind("torch.", 0) == 0) return qualified;
        if (qualified.rfind("builtins.", 0) == 0) return qualified.substr(9);
        auto it = globals_.find(qualified);
        if (it != globals_.end()) return it->second;
        std::string g = names_.create_name(qualified);
        globals_[qualified] = g;
        return g;
    }

    std::string fn_def() {
        if (!opt_.pytree) {
            std::vector<std::string> vars = free_vars_;
            if (vars.empty() || vars[0] != "self") vars.insert(vars.begin(), "self");
            return "def forward(" + join(vars, ", ") + "):";
        }
        std::vector<std::string> fn_args = opt_.pytree_args;
        fn_args.insert(fn_args.end(), opt_.pytree_kwargs.begin(), opt_.pytree_kwargs.end());
        std::vector<std::string> head = fn_args;
        head.insert(head.begin(), "self");
        std::string def = "def forward(" + join(head, ", ") + "):";
        if (!free_vars_.empty()) {
            std::string kw = "{";
            for (size_t k = 0; k < opt_.pytree_kwargs.size(); ++k) {
                if (k) kw += ", ";
                kw += "'" + opt_.pytree_kwargs[k] + "':" + opt_.pytree_kwargs[k];
            }
            kw += "}";
            std::string sig = "([" + join(opt_.pytree_args, ", ") + "], " + kw + "), self._in_spec";
            std::vector<std::string> without, with;
            for (const auto& v : free_vars_) {
                without.push_back(v.substr(0, v.find(':')));
                if (v.find(':') != std::string::npos) with.push_back(v);
            }
            // _format_annotations: "x: ...; y: ...;" with no trailing space
            if (!with.empty()) def += "\n    " + join(with, "; ") + ";\n";
            def += "\n    " + join(without, ", ") + ", = fx_pytree.tree_flatten_spec(" + sig + ")";
        }
        return def;
    }

    static std::string join(const std::vector<std::string>& v, const std::string& sep) {
        std::string out;
        for (size_t k = 0; k < v.size(); ++k) {
            if (k) out += sep;
            out += v[k];
        }
        return out;
    }

    const Graph& g_;
    const CodegenOptions& opt_;
    std::string body_;
    std::vector<std::string> free_vars_;
    std::string prev_summary_;
    bool has_prev_summary_ = false;
    std::vector<std::pair<size_t, const Node*>> marks_; // body offset where each node's code starts
    std::map<std::string, std::string> globals_;
    Namespace names_; // python_code's namespace: globals and node names
    std::map<const Node*, std::string> code_names_;
    NodeNamer name_of_;
    enum class Phase { Start, LastUses, Body, Finish, Done } phase_ = Phase::Start;
    std::vector<Node*> nodes_;
    size_t at_ = 0;
    std::unordered_set<const Node*> seen_;
    std::unordered_map<const Node*, std::vector<Node*>> user_to_last_uses_;
    std::string code_;
    // The end, in pieces (finish_some).
    static constexpr size_t kLinesPerLook = 512; // lines between looks at the clock
    enum class Fin { Start, Lines, Indent, Release, Done } fin_ = Fin::Start;
    std::string prologue_;
    size_t first_ = 0, off_ = 0, mark_ = 0;
    size_t line_count_ = 0, lines_indented_ = 0, released_ = 0;
    bool indented_ = false;
    const Node* current_ = nullptr;
};

} // namespace

std::string pretty_target(const Node& n) {
    return n.target();
}

std::string format_node(const Node& n) {
    std::string users = "[num_users=" + std::to_string(n.users().size()) + "]";
    switch (n.op()) {
    case Op::Placeholder: {
        std::string def = n.args().empty() ? "" : "(default=" + arg_str(n.args()[0]) + ")";
        return "%" + n.name() + " : " + users + " = placeholder[target=" + n.target() + "]" + def;
    }
    case Op::GetAttr:
        return "%" + n.name() + " : " + users + " = get_attr[target=" + n.target() + "]";
    case Op::Output:
        return "return " + (n.args().empty() ? std::string("None") : arg_str(n.args()[0]));
    default:
        return "%" + n.name() + " : " + users + " = " + std::string(op_name(n.op())) +
               "[target=" + pretty_target(n) + "](args = " + format_args_fx(n.args()) +
               ", kwargs = " + format_kwargs_fx(n.kwargs()) + ")";
    }
}

std::string graph_str(const Graph& g) {
    std::string s = "graph():";
    for (Node* n : g.nodes()) s += "\n    " + format_node(*n);
    return s;
}

struct CodeWriting::Impl {
    Impl(const Graph& g, const CodegenOptions& opt) : opt(opt), w(g, this->opt) {}
    CodegenOptions opt; // the writer keeps a reference
    CodeWriter w;
};

CodeWriting::CodeWriting(const Graph& g, const CodegenOptions& opt)
    : impl_(std::make_unique<Impl>(g, opt)) {
}
CodeWriting::~CodeWriting() = default;
CodeWriting::CodeWriting(CodeWriting&&) noexcept = default;
CodeWriting& CodeWriting::operator=(CodeWriting&&) noexcept = default;

bool CodeWriting::step(std::chrono::steady_clock::time_point deadline) {
    return impl_->w.step(deadline);
}
bool CodeWriting::done() const {
    return impl_->w.done();
}
size_t CodeWriting::nodes_done() const {
    return impl_->w.nodes_done();
}
size_t CodeWriting::nodes_total() const {
    return impl_->w.nodes_total();
}

CodeLines CodeWriting::take() {
    CodeLines out;
    out.src = impl_->w.take();
    out.line_nodes = std::move(impl_->w.line_nodes);
    out.line_ids = std::move(impl_->w.line_ids);
    return out;
}

CodeLines python_code_lines(const Graph& g, const CodegenOptions& opt) {
    CodeWriting w(g, opt);
    while (!w.step(std::chrono::steady_clock::time_point::max())) {
    }
    return w.take();
}

std::string python_code(const Graph& g, const CodegenOptions& opt) {
    return python_code_lines(g, opt).src;
}

std::string print_readable(const Graph& g, const CodegenOptions& opt,
                           const std::string& class_name) {
    CodegenOptions v = opt;
    v.verbose = true;
    std::string src = python_code(g, v);
    size_t first = src.find_first_not_of('\n');
    src = first == std::string::npos ? std::string() : src.substr(first);
    src = "class " + class_name + "(torch.nn.Module):\n" + src;
    // torch 2.14's _addindent(src, 4): every line but the first gains four spaces, and
    // blank (whitespace-only) lines become empty.
    std::string out;
    size_t p = 0;
    bool first_line = true;
    for (;;) {
        size_t nl = src.find('\n', p);
        std::string line = src.substr(p, nl == std::string::npos ? std::string::npos : nl - p);
        bool blank = line.find_first_not_of(" \t") == std::string::npos;
        out += first_line ? line : blank ? std::string() : "    " + line;
        first_line = false;
        if (nl == std::string::npos) break;
        out += "\n";
        p = nl + 1;
    }
    return out;
}

std::string target_str(const Node& n) {
    if (n.op() != Op::CallFunction) return n.target();
    if (n.schema()) return n.schema()->overload_str();
    const std::string& t = n.target();
    if (t.rfind("torch.ops.", 0) == 0) return t.substr(10); // OpOverload str: aten.foo.default
    std::string name = last_atom(t);
    if (t.rfind("operator.", 0) == 0 || t.rfind("builtins.", 0) == 0 ||
        t.rfind("torch._C._nn.", 0) == 0 || t.rfind("math.", 0) == 0)
        return "<built-in function " + name + ">";
    if (t.rfind("torch.nn.functional.", 0) == 0)
        return "<function " + name + " at " + fake_address(t) + ">";
    if (t.rfind("torch.", 0) == 0 && t.find('.', 6) == std::string::npos)
        return "<built-in method " + name + " of type object at " + fake_address("torch") + ">";
    // Anything else: what the file recorded as str(target), if it did.
    auto repr = n.meta.other.find("target_repr");
    if (repr != n.meta.other.end()) return repr->second;
    return "<function " + name + " at " + fake_address(t) + ">";
}

std::string print_tabular(const Graph& g) {
    std::vector<std::vector<std::string>> rows;
    for (Node* n : g.nodes()) {
        std::string kw = "{";
        for (size_t k = 0; k < n->kwargs().size(); ++k) {
            if (k) kw += ", ";
            kw += py_str_repr(n->kwargs()[k].first) + ": " + arg_repr(n->kwargs()[k].second);
        }
        kw += "}";
        rows.push_back({std::string(op_name(n->op())), n->name(), target_str(*n),
                        arg_repr(Argument::tuple(n->args())), kw});
    }
    const std::vector<std::string> headers = {"opcode", "name", "target", "args", "kwargs"};
    // tabulate "simple": width = max(cell widths, header + 2); left aligned; "  " between columns.
    std::vector<size_t> width(headers.size());
    for (size_t c = 0; c < headers.size(); ++c) {
        width[c] = headers[c].size() + 2;
        for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (size_t c = 0; c < cells.size(); ++c) {
            if (c) s += "  ";
            s += cells[c] + std::string(width[c] - cells[c].size(), ' ');
        }
        while (!s.empty() && s.back() == ' ') s.pop_back(); // tabulate strips each line
        return s;
    };
    std::string out = line(headers) + "\n";
    std::vector<std::string> dashes;
    for (size_t w : width) dashes.push_back(std::string(w, '-'));
    out += line(dashes);
    for (const auto& r : rows) out += "\n" + line(r);
    return out + "\n";
}

} // namespace pt2lab
