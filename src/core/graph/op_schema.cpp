// Parser for ATen schema strings and lookups into the schema table.
#include "graph/op_schema.h"

#include <cctype>
#include <cstdlib>

#include "graph/op_table.h"
#include "util/check.h"
#include "util/pyrepr.h"

namespace pt2lab {

std::string SchemaType::str() const {
    std::string s = base;
    if (!alias.empty()) s += "(" + alias + ")";
    if (optional_elements) s += "?";
    if (is_list) s += list_size ? "[" + std::to_string(list_size) + "]" : "[]";
    if (optional) s += "?";
    return s;
}

std::string OpSchema::target() const {
    if (ns.empty()) return "operator." + name;
    return "torch.ops." + ns + "." + name + "." + overload;
}

std::string OpSchema::overload_str() const {
    if (ns.empty()) return "<built-in function " + name + ">";
    return ns + "." + name + "." + overload;
}

bool OpSchema::is_mutable() const {
    for (const auto& a : arguments)
        if (a.type.mutable_alias()) return true;
    return false;
}

int OpSchema::arg_index(std::string_view n) const {
    for (size_t k = 0; k < arguments.size(); ++k)
        if (arguments[k].name == n) return static_cast<int>(k);
    return -1;
}

namespace {

class SchemaParser {
public:
    explicit SchemaParser(std::string_view text) : t_(text) {}

    Result<OpSchema> parse() {
        OpSchema s;
        s.text = std::string(t_);
        size_t colons = t_.find("::");
        if (colons == std::string_view::npos) return fail("expected 'namespace::name'");
        s.ns = std::string(t_.substr(0, colons));
        p_ = colons + 2;
        std::string full = ident_with_dots();
        if (full.empty()) return fail("expected an operator name");
        size_t dot = full.find('.');
        s.name = full.substr(0, dot);
        s.overload = dot == std::string::npos ? "default" : full.substr(dot + 1);
        if (!eat('(')) return fail("expected '('");
        bool kwarg_only = false;
        skip_ws();
        if (!eat(')')) {
            for (;;) {
                skip_ws();
                if (eat('*')) {
                    kwarg_only = true;
                } else {
                    auto a = argument(true);
                    if (!a.ok()) return a.error();
                    a.value().kwarg_only = kwarg_only;
                    s.arguments.push_back(a.take());
                }
                skip_ws();
                if (eat(')')) break;
                if (!eat(',')) return fail("expected ',' or ')'");
            }
        }
        skip_ws();
        if (!eat('-') || !eat('>')) return fail("expected '->'");
        skip_ws();
        if (eat('(')) {
            skip_ws();
            if (!eat(')')) {
                for (;;) {
                    auto r = argument(false);
                    if (!r.ok()) return r.error();
                    s.returns.push_back(r.take());
                    skip_ws();
                    if (eat(')')) break;
                    if (!eat(',')) return fail("expected ',' or ')' in returns");
                }
            }
        } else {
            auto r = argument(false);
            if (!r.ok()) return r.error();
            s.returns.push_back(r.take());
        }
        skip_ws();
        if (p_ != t_.size()) return fail("unexpected text after the schema");
        return s;
    }

private:
    Error fail(const std::string& what) const {
        return make_error("schema column " + std::to_string(p_ + 1),
                          what + " in '" + std::string(t_) + "'");
    }
    void skip_ws() {
        while (p_ < t_.size() && t_[p_] == ' ') ++p_;
    }
    bool eat(char c) {
        skip_ws();
        if (p_ < t_.size() && t_[p_] == c) {
            ++p_;
            return true;
        }
        return false;
    }
    static bool word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
    std::string ident() {
        skip_ws();
        size_t b = p_;
        while (p_ < t_.size() && word(t_[p_])) ++p_;
        return std::string(t_.substr(b, p_ - b));
    }
    std::string ident_with_dots() {
        size_t b = p_;
        while (p_ < t_.size() && (word(t_[p_]) || t_[p_] == '.')) ++p_;
        return std::string(t_.substr(b, p_ - b));
    }

    Result<SchemaArg> argument(bool named_required) {
        SchemaArg a;
        a.type.base = ident();
        if (a.type.base.empty()) return fail("expected a type");
        if (p_ < t_.size() && t_[p_] == '(') { // alias annotation
            size_t close = t_.find(')', p_);
            if (close == std::string_view::npos) return fail("unclosed alias annotation");
            a.type.alias = std::string(t_.substr(p_ + 1, close - p_ - 1));
            p_ = close + 1;
        }
        if (p_ < t_.size() && t_[p_] == '?' && p_ + 1 < t_.size() && t_[p_ + 1] == '[') {
            a.type.optional_elements = true;
            ++p_;
        }
        if (p_ < t_.size() && t_[p_] == '[') {
            size_t close = t_.find(']', p_);
            if (close == std::string_view::npos) return fail("unclosed list type");
            a.type.is_list = true;
            std::string n(t_.substr(p_ + 1, close - p_ - 1));
            a.type.list_size = n.empty() ? 0 : std::atoi(n.c_str());
            p_ = close + 1;
        }
        if (p_ < t_.size() && t_[p_] == '?') {
            a.type.optional = true;
            ++p_;
        }
        skip_ws();
        if (p_ < t_.size() && word(t_[p_])) a.name = ident();
        if (named_required && a.name.empty()) return fail("expected an argument name");
        skip_ws();
        if (p_ < t_.size() && t_[p_] == '=') {
            ++p_;
            skip_ws();
            size_t b = p_;
            int depth = 0;
            while (p_ < t_.size() && (depth > 0 || (t_[p_] != ',' && t_[p_] != ')'))) {
                if (t_[p_] == '[') ++depth;
                if (t_[p_] == ']') --depth;
                ++p_;
            }
            a.default_text = std::string(t_.substr(b, p_ - b));
            a.has_default = true;
            auto v = default_value(a.default_text, a.type);
            if (!v.ok()) return v.error();
            a.default_value = v.take();
        }
        return a;
    }

    Result<Argument> scalar_default(const std::string& s, const SchemaType& type) {
        if (s == "None") return Argument::none();
        if (s == "True") return Argument::from_bool(true);
        if (s == "False") return Argument::from_bool(false);
        if (!s.empty() && (s[0] == '"' || s[0] == '\''))
            return Argument::from_string(s.substr(1, s.size() - 2));
        if (s == "contiguous_format") return Argument::memory_format(1);
        if (s == "long") return Argument::from_dtype(ScalarType::Long);
        char* end = nullptr;
        bool floaty = s.find_first_of(".eE") != std::string::npos && type.base != "int";
        if (floaty || type.base == "float") {
            double d = std::strtod(s.c_str(), &end);
            if (end && *end == '\0') return Argument::from_float(d);
        } else {
            long long v = std::strtoll(s.c_str(), &end, 10);
            if (end && *end == '\0') return Argument::from_int(v);
        }
        return fail("cannot read default value '" + s + "'");
    }

    Result<Argument> default_value(const std::string& s, const SchemaType& type) {
        if (type.is_list && !s.empty() && s[0] == '[') {
            std::vector<Argument> items;
            std::string inner = s.substr(1, s.size() - 2);
            size_t b = 0;
            while (b < inner.size()) {
                size_t c = inner.find(',', b);
                std::string item =
                    inner.substr(b, c == std::string::npos ? std::string::npos : c - b);
                while (!item.empty() && item[0] == ' ') item.erase(0, 1);
                if (!item.empty()) {
                    auto v = scalar_default(item, type);
                    if (!v.ok()) return v.error();
                    items.push_back(v.take());
                }
                if (c == std::string::npos) break;
                b = c + 1;
            }
            return Argument::list(std::move(items));
        }
        auto v = scalar_default(s, type);
        if (!v.ok()) return v;
        // A scalar default of a sized list expands: SymInt[2] stride=1 -> [1, 1].
        if (type.is_list && type.list_size > 0 && !v.value().is_none()) {
            std::vector<Argument> items(static_cast<size_t>(type.list_size), v.value());
            return Argument::list(std::move(items));
        }
        return v;
    }

    std::string_view t_;
    size_t p_ = 0;
};

} // namespace

Result<OpSchema> parse_op_schema(std::string_view text) {
    return SchemaParser(text).parse();
}

const OpSchema* find_op_schema(std::string_view target) {
    const OpInfo* op = find_op(target);
    return op ? &op->schema : nullptr;
}

void drop_trailing_defaults(const OpSchema& schema, std::vector<Argument>& args, Kwargs& kwargs) {
    while (!args.empty()) {
        size_t k = args.size() - 1;
        if (k >= schema.arguments.size()) break;
        const SchemaArg& sa = schema.arguments[k];
        if (!sa.has_default || !arg_equal(sa.default_value, args[k])) break;
        args.pop_back();
    }
    Kwargs kept;
    for (auto& kv : kwargs) {
        int idx = schema.arg_index(kv.first);
        if (idx >= 0) {
            const SchemaArg& sa = schema.arguments[static_cast<size_t>(idx)];
            if (sa.has_default && arg_equal(sa.default_value, kv.second)) continue;
        }
        kept.push_back(std::move(kv));
    }
    kwargs = std::move(kept);
}

} // namespace pt2lab
