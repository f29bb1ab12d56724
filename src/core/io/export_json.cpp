// Deserializes an ExportedProgram the way torch/_export/serde/serialize.py
// does: placeholders from graph.inputs, one node per serialized node (with
// getitem nodes for multi-output ops), args/kwargs placed by the op schema and
// the serialized argument kinds, metadata strings parsed back.
#include "io/export_json.h"

#include <optional>
#include <set>
#include <unordered_map>

#include "graph/namespace.h"
#include "graph/op_schema.h"
#include "util/checked.h"
#include "util/json_read.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {

using Clock = std::chrono::steady_clock;

class Deserializer {
public:
    Deserializer(const std::string& file, ExportedProgram& ep) : file_(file), ep_(ep) {}

    // Reads the program in pieces: each call does work until `deadline` (a
    // piece of tensor metadata or a node at least) and says whether it is all
    // done; an error ends it.
    Result<bool> step(const json& root, Clock::time_point deadline) {
        const JsonAt r = json_root(root, &file_);
        unsigned tick = 0;
        auto time_up = [&] { return (++tick % 32) == 0 && Clock::now() >= deadline; };
        while (true) {
            switch (stage_) {
            case Stage::Head:
                if (Status s = head(r); !s.ok()) return s.error();
                stage_ = Stage::TensorValues;
                k_ = 0;
                break;
            case Stage::TensorValues: {
                JsonAt tv = graph_.get("tensor_values");
                if (!tv.v) {
                    stage_ = Stage::Inputs;
                    break;
                }
                if (!tv.v->is_object()) return tv.error("expected an object of tensor metadata");
                const auto& members = json_members(*tv.v);
                while (k_ < members.size()) {
                    const auto& [key, value] = members[k_++];
                    JsonAt m{&value, tv.path + "." + key, &file_};
                    if (!value.is_object()) return m.error("expected a TensorMeta object");
                    auto t = tensor_meta(m);
                    if (!t.ok()) return t.error();
                    metas_[key] = t.take();
                    if (time_up()) return false;
                }
                if (JsonAt si = graph_.get("sym_int_values"); si.v && si.v->is_object())
                    for (auto it = si.v->begin(); it != si.v->end(); ++it)
                        sym_names_.insert(it.key());
                stage_ = Stage::Inputs;
                break;
            }
            case Stage::Inputs:
                if (Status s = inputs(graph_); !s.ok()) return s.error();
                stage_ = Stage::Nodes;
                k_ = 0;
                break;
            case Stage::Nodes: {
                auto ns = graph_.array("nodes");
                if (!ns.ok()) return ns.error();
                nodes_total_ = ns.value().size();
                while (k_ < nodes_total_) {
                    if (Status s = node(ns.value().index(k_++)); !s.ok()) return s.error();
                    if (time_up()) return false;
                }
                stage_ = Stage::Tail;
                break;
            }
            case Stage::Tail:
                if (Status s = tail(); !s.ok()) return s.error();
                stage_ = Stage::Done;
                return true;
            case Stage::Done: return true;
            }
            if (Clock::now() >= deadline) return false;
        }
    }
    // How far step() has got: nodes read of the file's nodes.
    size_t nodes_done() const {
        return stage_ == Stage::Nodes ? k_ : stage_ > Stage::Nodes ? nodes_total_ : 0;
    }
    size_t nodes_total() const { return nodes_total_; }

private:
    enum class Stage { Head, TensorValues, Inputs, Nodes, Tail, Done };

    Status head(const JsonAt& r) {
        if (!r.is_object()) return r.error("expected a JSON object (an ExportedProgram)");
        if (!r.has("graph_module") && r.str_or("format", "") == "pt2lab.fx_graph")
            return r.error("this is pt2lab's symbolic_trace graph JSON (torch.fx), not a "
                           "serialized ExportedProgram: it can be shown (info, graph, code, "
                           "tabular, readable) but not run, decomposed, prepared or converted",
                           "open the torch.export .pt2 of the same model (assets/graphs/" +
                               r.str_or("name", "<name>") + ".pt2) for those");
        if (!r.has("graph_module"))
            return r.error("not a serialized ExportedProgram: no \"graph_module\" key",
                           "open a .pt2 written by torch.export.save, or its models/model.json");
        if (Status s = schema_version(r); !s.ok()) return s;
        ep_.torch_version = r.str_or("torch_version", "");
        if (JsonAt ops = r.get("opset_version"); ops.v && ops.v->is_object())
            for (auto it = ops.v->begin(); it != ops.v->end(); ++it)
                if (it->is_number_integer()) ep_.opset_version[it.key()] = it->get<int64_t>();
        if (JsonAt rc = r.get("range_constraints"); rc.v && rc.v->is_object() && !rc.v->empty())
            ep_.range_constraints = rc.v->dump();
        if (JsonAt ver = r.get("verifiers"); ver.v && ver.v->is_array())
            for (const auto& v : *ver.v)
                if (v.is_string()) ep_.verifiers.push_back(v.get<std::string>());
        if (JsonAt gc = r.get("guards_code"); gc.v && gc.v->is_array())
            for (const auto& v : *gc.v)
                if (v.is_string()) ep_.guards_code.push_back(v.get<std::string>());

        auto gm = r.object("graph_module");
        if (!gm.ok()) return gm.error();
        auto graph = gm.value().object("graph");
        if (!graph.ok()) return graph.error();
        gm_ = gm.value();
        graph_ = graph.value();
        if (JsonAt nt = gm_.get("treespec_namedtuple_fields"); nt.v && nt.v->is_object())
            ep_.treespec_namedtuple_fields = nt.v->dump();
        ep_.graph = std::make_unique<Graph>();
        g_ = ep_.graph.get();
        return {};
    }

    Status tail() {
        if (Status s = outputs(graph_); !s.ok()) return s;
        if (Status s = signature(gm_); !s.ok()) return s;
        module_call_graph(gm_);
        if (JsonAt md = gm_.get("metadata"); md.v && md.v->is_object())
            for (auto it = md.v->begin(); it != md.v->end(); ++it)
                if (it->is_string()) ep_.graph_module_metadata[it.key()] = it->get<std::string>();
        if (Status s = g_->lint(); !s.ok()) {
            Error e = s.error();
            e.file = file_;
            e.hint = "the graph in the file is not topologically ordered";
            return e;
        }
        return {};
    }

    Status schema_version(const JsonAt& r) {
        JsonAt sv = r.get("schema_version");
        if (!sv.v) {
            warn("no schema_version: read as a pre-2.2 (schema 1) program, best effort");
            ep_.schema_major = 1;
            return {};
        }
        // Versions are compared as read (int64), before any narrowing: 2^32 + 8 is not 8.
        int64_t major = 0, minor = 0;
        if (sv.v->is_number_integer()) {
            major = sv.v->get<int64_t>();
        } else {
            auto m = sv.integer("major");
            if (!m.ok()) return m.error();
            major = m.value();
            auto mi = sv.integer("minor");
            minor = mi.ok() ? mi.value() : 0;
            if (minor < 0 || minor > 1000000)
                return sv.get("minor").error("invalid schema minor version " +
                                             std::to_string(minor));
        }
        if (major > kSchemaMajorSupported)
            return sv.error("unknown schema major version " + std::to_string(major) +
                                " (pt2lab reads 8.x, and older versions best-effort)",
                            "this file comes from a newer torch than pt2lab knows; re-export it "
                            "with torch 2.8 to 2.11");
        if (major < 1) return sv.error("invalid schema major version " + std::to_string(major));
        ep_.schema_major = static_cast<int>(major);
        ep_.schema_minor = static_cast<int>(minor);
        if (ep_.schema_major < kSchemaMajorSupported)
            warn("schema version " + std::to_string(ep_.schema_major) + "." +
                 std::to_string(ep_.schema_minor) +
                 " is older than 8.x: read best-effort, some fields may be missing");
        return {};
    }

    void warn(const std::string& w) { ep_.warnings.push_back(w); }

    // ---- tensor metadata -------------------------------------------------------
    Result<int64_t> sym_int(const JsonAt& a, std::string* symbol) {
        if (a.v->is_number_integer()) return a.v->get<int64_t>();
        auto key = a.union_key();
        if (!key.ok()) return key.error();
        JsonAt val = a.get(key.value());
        if (key.value() == "as_int") return val.as_int();
        if (key.value() == "as_expr") {
            std::string expr = val.v->is_object() ? val.str_or("expr_str", "?") : "?";
            if (symbol) *symbol = expr;
            JsonAt hint = val.get("hint");
            if (hint.v && hint.v->is_object() && hint.has("as_int")) return hint.integer("as_int");
            if (hint.v && hint.v->is_number_integer()) return hint.as_int();
            return int64_t{0};
        }
        return a.error("unexpected symbolic int kind \"" + key.value() + "\"");
    }

    Result<TensorMeta> tensor_meta(const JsonAt& m) {
        TensorMeta t;
        auto dt = m.integer("dtype");
        if (!dt.ok()) return dt.error();
        auto st = scalar_type_from_code(dt.value());
        if (!st) return m.get("dtype").error("unknown dtype code " + std::to_string(dt.value()));
        t.dtype = *st;
        auto sizes = m.array("sizes");
        if (!sizes.ok()) return sizes.error();
        for (size_t k = 0; k < sizes.value().size(); ++k) {
            std::string sym;
            auto s = sym_int(sizes.value().index(k), &sym);
            if (!s.ok()) return s.error();
            if (s.value() < 0 && sym.empty()) return sizes.value().index(k).error("negative size");
            t.sizes.push_back(s.value());
            t.symbolic_sizes.push_back(sym);
        }
        if (!checked_numel(t.sizes))
            return sizes.value().error("sizes " + shape_text(t.sizes) +
                                           " hold more elements than fit in 64 bits",
                                       "no real tensor has this shape; the file is damaged");
        bool any_sym = false;
        for (const auto& s : t.symbolic_sizes) any_sym |= !s.empty();
        if (!any_sym) t.symbolic_sizes.clear();
        if (JsonAt strides = m.get("strides"); strides.v && strides.v->is_array()) {
            for (size_t k = 0; k < strides.size(); ++k) {
                auto s = sym_int(strides.index(k), nullptr);
                if (!s.ok()) return s.error();
                if (s.value() < 0)
                    return strides.index(k).error("negative stride " + std::to_string(s.value()),
                                                  "torch tensors never have negative strides; "
                                                  "the file is damaged");
                t.strides.push_back(s.value());
            }
        }
        if (JsonAt so = m.get("storage_offset"); so.v && !so.v->is_null()) {
            auto s = sym_int(so, nullptr);
            if (!s.ok()) return s.error();
            if (s.value() < 0)
                return so.error("negative storage offset " + std::to_string(s.value()),
                                "torch tensors never start before their storage; the file is "
                                "damaged");
            t.storage_offset = s.value();
        }
        if (JsonAt rg = m.get("requires_grad"); rg.v && rg.v->is_boolean())
            t.requires_grad = rg.v->get<bool>();
        if (JsonAt dev = m.get("device"); dev.v && dev.v->is_object()) t.device = device_text(dev);
        return t;
    }

    static std::string shape_text(const std::vector<int64_t>& sizes) {
        std::string s = "[";
        for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
        return s + "]";
    }

    static std::string device_text(const JsonAt& dev) {
        std::string type = dev.str_or("type", "cpu");
        JsonAt idx = dev.get("index");
        if (idx.v && idx.v->is_number_integer())
            return type + ":" + std::to_string(idx.v->get<int64_t>());
        return type;
    }

    void attach_meta(Node* n, const std::string& value_name) {
        auto it = metas_.find(value_name);
        if (it != metas_.end()) {
            n->meta.val.kind = MetaVal::Kind::Tensor;
            n->meta.val.tensor = it->second;
        } else if (sym_names_.count(value_name)) {
            n->meta.val.kind = MetaVal::Kind::SymInt;
            n->meta.val.sym = value_name;
        }
    }

    // Names are printed into gm.code: refuse what torch.fx could not have made.
    static Status check_name(const std::string& name, const JsonAt& at) {
        std::string problem = node_name_problem(name);
        if (problem.empty()) return {};
        return at.error(problem, "names come from torch.fx; this one was edited into the file");
    }

    Status define(const std::string& name, Node* n, const JsonAt& at) {
        if (Status s = check_name(name, at); !s.ok()) return s;
        if (by_name_.count(name))
            return at.error("duplicate name \"" + name + "\": two graph values have the same name",
                            "every node output must have a unique name; the file is inconsistent");
        by_name_[name] = n;
        return {};
    }

    // ---- graph inputs ---------------------------------------------------------
    Status inputs(const JsonAt& graph) {
        auto ins = graph.array("inputs");
        if (!ins.ok()) return ins.error();
        for (size_t k = 0; k < ins.value().size(); ++k) {
            JsonAt a = ins.value().index(k);
            auto key = a.union_key();
            if (!key.ok()) return key.error();
            JsonAt body = a.get(key.value());
            std::string name;
            if (key.value() == "as_tensor" || key.value() == "as_custom_obj" ||
                key.value() == "as_token") {
                auto n = body.str("name");
                if (!n.ok()) return n.error();
                name = n.value();
            } else if (key.value() == "as_sym_int" || key.value() == "as_sym_float" ||
                       key.value() == "as_sym_bool") {
                auto n = body.str("as_name");
                if (!n.ok()) return n.error();
                name = n.value();
            } else {
                // Constant inputs (as_int, as_none ...) get their placeholder name from the
                // signature.
                name = "_const_input_" + std::to_string(k);
                constant_inputs_.insert(name);
            }
            if (name.empty()) return a.error("empty input name");
            if (Status s = check_name(name, a); !s.ok()) return s;
            if (by_name_.count(name)) return define(name, nullptr, a);
            Node* n = g_->placeholder(name);
            g_->force_name(n,
                           name); // keep the serialized name exactly, as torch's deserializer does
            attach_meta(n, name);
            if (Status s = define(name, n, a); !s.ok()) return s;
            placeholder_order_.push_back(name);
        }
        return {};
    }

    // ---- arguments ------------------------------------------------------------
    Result<Node*> ref(const JsonAt& at, const std::string& name) {
        auto it = by_name_.find(name);
        if (it == by_name_.end())
            return at.error("reference to undefined value \"" + name + "\"",
                            "a node uses a value that no earlier node or input defines; the file "
                            "is inconsistent");
        return it->second;
    }

    Result<Argument> tensor_ref(const JsonAt& body) {
        auto n = body.str("name");
        if (!n.ok()) return n.error();
        auto node = ref(body.get("name"), n.value());
        if (!node.ok()) return node.error();
        return Argument::from_node(node.value());
    }

    Result<Argument> sym_arg(const JsonAt& body, const char* literal_key) {
        auto key = body.union_key();
        if (!key.ok()) return key.error();
        JsonAt v = body.get(key.value());
        if (key.value() == "as_name") {
            auto name = v.as_str();
            if (!name.ok()) return name.error();
            auto node = ref(v, name.value());
            if (!node.ok()) return node.error();
            return Argument::from_node(node.value());
        }
        if (key.value() == literal_key) {
            if (std::string(literal_key) == "as_int") {
                auto i = v.as_int();
                if (!i.ok()) return i.error();
                return Argument::from_int(i.value());
            }
            if (std::string(literal_key) == "as_float") {
                auto d = v.as_double();
                if (!d.ok()) return d.error();
                return Argument::from_float(d.value());
            }
            auto b = v.as_bool();
            if (!b.ok()) return b.error();
            return Argument::from_bool(b.value());
        }
        return body.error("unexpected symbolic argument kind \"" + key.value() + "\"");
    }

    template <class F> Result<Argument> list_of(const JsonAt& arr, F&& item) {
        if (!arr.v->is_array())
            return arr.error("expected an array, found " + json_preview(*arr.v));
        std::vector<Argument> items;
        for (size_t k = 0; k < arr.size(); ++k) {
            auto a = item(arr.index(k));
            if (!a.ok()) return a.error();
            items.push_back(a.take());
        }
        return Argument::list(std::move(items));
    }

    Result<Argument> argument(const JsonAt& a) {
        // Schema 1 wrote None as an empty list/tuple.
        if (a.v->is_array() && a.v->empty()) return Argument::none();
        auto key = a.union_key();
        if (!key.ok()) return key.error();
        const std::string& k = key.value();
        JsonAt v = a.get(k);
        if (k == "as_none") return Argument::none();
        if (k == "as_tensor") return tensor_ref(v);
        if (k == "as_tensors") return list_of(v, [&](const JsonAt& x) { return tensor_ref(x); });
        if (k == "as_int") {
            auto i = v.as_int();
            if (!i.ok()) return i.error();
            return Argument::from_int(i.value());
        }
        if (k == "as_float") {
            auto d = v.as_double();
            if (!d.ok()) return d.error();
            return Argument::from_float(d.value());
        }
        if (k == "as_bool") {
            auto b = v.as_bool();
            if (!b.ok()) return b.error();
            return Argument::from_bool(b.value());
        }
        if (k == "as_string") {
            auto s = v.as_str();
            if (!s.ok()) return s.error();
            return Argument::from_string(s.value());
        }
        if (k == "as_ints")
            return list_of(v, [&](const JsonAt& x) -> Result<Argument> {
                auto i = x.as_int();
                if (!i.ok()) return i.error();
                return Argument::from_int(i.value());
            });
        if (k == "as_floats")
            return list_of(v, [&](const JsonAt& x) -> Result<Argument> {
                auto d = x.as_double();
                if (!d.ok()) return d.error();
                return Argument::from_float(d.value());
            });
        if (k == "as_bools")
            return list_of(v, [&](const JsonAt& x) -> Result<Argument> {
                auto b = x.as_bool();
                if (!b.ok()) return b.error();
                return Argument::from_bool(b.value());
            });
        if (k == "as_strings")
            return list_of(v, [&](const JsonAt& x) -> Result<Argument> {
                auto s = x.as_str();
                if (!s.ok()) return s.error();
                return Argument::from_string(s.value());
            });
        if (k == "as_sym_int") return sym_arg(v, "as_int");
        if (k == "as_sym_float") return sym_arg(v, "as_float");
        if (k == "as_sym_bool") return sym_arg(v, "as_bool");
        if (k == "as_sym_ints")
            return list_of(v, [&](const JsonAt& x) { return sym_arg(x, "as_int"); });
        if (k == "as_sym_floats")
            return list_of(v, [&](const JsonAt& x) { return sym_arg(x, "as_float"); });
        if (k == "as_sym_bools")
            return list_of(v, [&](const JsonAt& x) { return sym_arg(x, "as_bool"); });
        if (k == "as_scalar_type") {
            auto code = v.as_int();
            if (!code.ok()) return code.error();
            auto st = scalar_type_from_code(code.value());
            if (!st) return v.error("unknown dtype code " + std::to_string(code.value()));
            return Argument::from_dtype(*st);
        }
        if (k == "as_memory_format") {
            auto code = v.as_int();
            if (!code.ok()) return code.error();
            return Argument::memory_format(code.value());
        }
        if (k == "as_layout") {
            auto code = v.as_int();
            if (!code.ok()) return code.error();
            return Argument::layout(code.value());
        }
        if (k == "as_device") {
            if (!v.v->is_object()) return v.error("expected a device object");
            return Argument::device(device_text(v));
        }
        if (k == "as_optional_tensors")
            return list_of(v, [&](const JsonAt& x) -> Result<Argument> {
                auto kk = x.union_key();
                if (!kk.ok()) return kk.error();
                if (kk.value() == "as_none") return Argument::none();
                if (kk.value() == "as_tensor") return tensor_ref(x.get("as_tensor"));
                return x.error("expected as_tensor or as_none, found \"" + kk.value() + "\"");
            });
        if (k == "as_optional_tensor") {
            auto kk = v.union_key();
            if (!kk.ok()) return kk.error();
            if (kk.value() == "as_none") return Argument::none();
            return tensor_ref(v.get(kk.value()));
        }
        if (k == "as_int_lists")
            return list_of(v, [&](const JsonAt& x) {
                return list_of(x, [&](const JsonAt& y) -> Result<Argument> {
                    auto i = y.as_int();
                    if (!i.ok()) return i.error();
                    return Argument::from_int(i.value());
                });
            });
        if (k == "as_custom_obj") {
            auto n = v.str("name");
            if (!n.ok()) return n.error();
            auto it = by_name_.find(n.value());
            if (it != by_name_.end()) return Argument::from_node(it->second);
            if (Status st = check_name(n.value(), v.get("name")); !st.ok()) return st.error();
            return Argument::repr(n.value());
        }
        if (k == "as_operator") {
            auto s = v.as_str();
            if (!s.ok()) return s.error();
            if (std::string p = qualified_name_problem(s.value()); !p.empty()) return v.error(p);
            return Argument::repr(s.value());
        }
        if (k == "as_complex") {
            auto re = v.get("real").as_double();
            auto im = v.get("imag").as_double();
            if (!re.ok() || !im.ok()) return v.error("expected {real, imag}");
            return Argument::repr("(" + std::to_string(re.value()) + "+" +
                                  std::to_string(im.value()) + "j)");
        }
        if (k == "as_string_to_argument") {
            if (!v.v->is_object()) return v.error("expected an object");
            Argument d;
            d.kind = ArgKind::Dict;
            for (auto it = v.v->begin(); it != v.v->end(); ++it) {
                auto item = argument(JsonAt{&*it, v.path + "." + it.key(), &file_});
                if (!item.ok()) return item.error();
                d.keys.push_back(it.key());
                d.items.push_back(item.take());
            }
            return d;
        }
        if (k == "as_graph")
            return a.error(
                "higher-order operators with subgraphs (torch.cond, map ...) are not supported yet",
                "export a model without control-flow operators");
        return a.error("unknown argument kind \"" + k + "\"",
                       "the file may come from a newer torch than pt2lab knows");
    }

    // ---- metadata ---------------------------------------------------------------
    // torch's metadata_split: split on commas outside () and [].
    static std::vector<std::string> split_outside_brackets(const std::string& s) {
        std::vector<std::string> out;
        int depth = 0;
        size_t start = 0;
        for (size_t i = 0; i < s.size(); ++i) {
            char c = s[i];
            if (c == '(' || c == '[')
                ++depth;
            else if (c == ')' || c == ']')
                --depth;
            else if (c == ',' && depth == 0) {
                out.push_back(s.substr(start, i - start));
                start = i + 1;
            }
        }
        out.push_back(s.substr(start));
        return out;
    }

    static std::vector<std::string> split(const std::string& s, char sep) {
        std::vector<std::string> out;
        size_t start = 0;
        for (;;) {
            size_t p = s.find(sep, start);
            out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
            if (p == std::string::npos) break;
            start = p + 1;
        }
        return out;
    }

    Status metadata(const JsonAt& md, NodeMeta& meta) {
        if (!md.v) return {};
        if (!md.v->is_object()) return md.error("expected an object of metadata strings");
        for (auto it = md.v->begin(); it != md.v->end(); ++it) {
            JsonAt m{&*it, md.path + "." + it.key(), &file_};
            if (!it->is_string()) {
                meta.other[it.key()] = it->dump();
                continue;
            }
            const std::string& s = it->get_ref<const std::string&>();
            if (it.key() == "stack_trace") {
                meta.stack_trace = s;
            } else if (it.key() == "nn_module_stack") {
                for (const std::string& item : split(s, ';')) {
                    auto parts = split_outside_brackets(item);
                    if (parts.size() != 3)
                        return m.error(
                            "expected \"key,path,type\" entries separated by ';', found \"" + item +
                            "\"");
                    meta.nn_module_stack.push_back({parts[0], parts[1], parts[2]});
                }
            } else if (it.key() == "source_fn_stack") {
                for (const std::string& item : split(s, ';')) {
                    size_t comma = item.find(',');
                    if (comma == std::string::npos)
                        return m.error("expected \"name,op\" entries separated by ';', found \"" +
                                       item + "\"");
                    meta.source_fn_stack.emplace_back(item.substr(0, comma),
                                                      item.substr(comma + 1));
                }
            } else if (it.key() == "torch_fn") {
                size_t semi = s.find(';');
                if (semi == std::string::npos)
                    return m.error("expected \"name;type\", found \"" + s + "\"");
                meta.torch_fn = std::make_pair(s.substr(0, semi), s.substr(semi + 1));
            } else {
                meta.other[it.key()] = s;
            }
        }
        return {};
    }

    // ---- nodes -----------------------------------------------------------------
    static std::string canonical_target(std::string t) {
        if (t.rfind("_operator.", 0) == 0) return "operator." + t.substr(10);
        if (t.rfind("torch._ops.", 0) == 0) return "torch.ops." + t.substr(11);
        return t;
    }

    Status node(const JsonAt& sn) {
        auto target = sn.str("target");
        if (!target.ok()) return target.error();
        if (std::string p = qualified_name_problem(target.value()); !p.empty())
            return sn.get("target").error(p, "op targets are printed into gm.code as written");
        std::string t = canonical_target(target.value());
        auto ins = sn.array("inputs");
        if (!ins.ok()) return ins.error();
        auto outs = sn.array("outputs");
        if (!outs.ok()) return outs.error();

        // Named inputs, in file order.
        struct Named {
            std::string name;
            Argument value;
            int64_t kind; // 0 unknown, 1 positional, 2 keyword
            JsonAt at;
        };
        std::vector<Named> named;
        for (size_t k = 0; k < ins.value().size(); ++k) {
            JsonAt in = ins.value().index(k);
            if (!in.v->is_object())
                return in.error("expected a NamedArgument object {name, arg, kind}");
            auto arg_at = in.member("arg");
            if (!arg_at.ok()) return arg_at.error();
            auto value = argument(arg_at.value());
            if (!value.ok()) return value.error();
            int64_t kind = 0;
            if (JsonAt kk = in.get("kind"); kk.v && kk.v->is_number_integer())
                kind = kk.v->get<int64_t>();
            named.push_back({in.str_or("name", ""), value.take(), kind, in});
        }

        std::vector<Argument> args;
        Kwargs kwargs;
        const OpSchema* schema = find_op_schema(t);
        if (schema) {
            std::set<std::string> used;
            for (const SchemaArg& sa : schema->arguments) {
                const Named* found = nullptr;
                for (const auto& n : named)
                    if (n.name == sa.name) found = &n;
                if (found) {
                    used.insert(sa.name);
                    if (found->kind == 1) {
                        if (!kwargs.empty())
                            return found->at.error("positional argument \"" + sa.name +
                                                   "\" after keyword arguments");
                        args.push_back(found->value);
                        continue;
                    }
                    if (found->kind == 2 && !py_keyword(sa.name)) {
                        kwargs.emplace_back(sa.name, found->value);
                        continue;
                    }
                }
                // No kind: torch's fallback rules.
                bool positional = !sa.has_default && !sa.kwarg_only;
                if (positional) {
                    if (!found)
                        return sn.error("missing required argument \"" + sa.name + "\" of " +
                                            schema->overload_str(),
                                        "the node does not match the ATen schema " + schema->text);
                    args.push_back(found->value);
                } else if (found) {
                    kwargs.emplace_back(sa.name, found->value);
                }
            }
            for (const auto& n : named)
                if (!used.count(n.name))
                    return n.at.error("unexpected argument \"" + n.name + "\" for " +
                                          schema->overload_str(),
                                      "the node does not match the ATen schema " + schema->text);
        } else {
            // An op pt2lab's table does not know: keep the named arguments as written.
            for (const auto& n : named) {
                if (n.kind == 2 && !n.name.empty() && !node_name_problem(n.name).empty())
                    return n.at.get("name").error("keyword argument name " + py_str_repr(n.name) +
                                                  " is not a Python identifier");
                if (n.kind == 2 && !n.name.empty())
                    kwargs.emplace_back(n.name, n.value);
                else
                    args.push_back(n.value);
            }
            unknown_ops_.insert(t);
        }

        NodeMeta meta;
        if (Status s = metadata(sn.get("metadata"), meta); !s.ok()) return s;

        // Name: the first output's name (torch renames the node to it).
        std::vector<JsonAt> out_list;
        for (size_t k = 0; k < outs.value().size(); ++k) out_list.push_back(outs.value().index(k));
        std::string node_name;
        bool single = false;
        bool unused = false; // a single as_none output: the node defines no value
        if (out_list.size() == 1) {
            auto key = out_list[0].union_key();
            if (!key.ok()) return key.error();
            JsonAt body = out_list[0].get(key.value());
            if (key.value() == "as_tensor") {
                auto n = body.str("name");
                if (!n.ok()) return n.error();
                node_name = n.value();
                single = true;
            } else if (key.value() == "as_sym_int" || key.value() == "as_sym_float" ||
                       key.value() == "as_sym_bool") {
                auto n = body.str("as_name");
                if (!n.ok()) return n.error();
                node_name = n.value();
                single = true;
            } else if (key.value() == "as_none") {
                node_name = target_to_name_candidate(Op::CallFunction, t) + "_unused";
                single = true;
                unused = true;
            }
        }
        if (node_name.empty()) node_name = target_to_name_candidate(Op::CallFunction, t);

        // Schema 8.20 records each node's own name: multi-output and None-returning nodes
        // take it ("_native_batch_norm_legit_no_training", not "..._default"; "lstm").
        bool has_own_name = false;
        if (!single || unused) {
            JsonAt nm = sn.get("name");
            if (nm.v && nm.v->is_string() && !nm.v->get<std::string>().empty()) {
                node_name = nm.v->get<std::string>();
                has_own_name = true;
            }
        }
        if (((single && !unused) || has_own_name) && by_name_.count(node_name))
            return define(node_name, nullptr, sn);
        Node* n = g_->call_function(t, std::move(args), std::move(kwargs), node_name);
        if ((single && !unused) || has_own_name) g_->force_name(n, node_name);
        n->meta = meta;
        if (single) {
            if (!unused) {
                if (Status s = define(node_name, n, sn); !s.ok()) return s;
            }
            attach_meta(n, node_name);
            return {};
        }
        // Multiple outputs: one getitem per output, named after it.
        MetaVal tuple;
        tuple.kind = MetaVal::Kind::Tuple;
        std::vector<JsonAt> flat = out_list;
        if (out_list.size() == 1) { // a single as_tensors output (Tensor[] return)
            JsonAt body = out_list[0].get("as_tensors");
            if (!body.v || !body.v->is_array())
                return out_list[0].error("unsupported node output " + json_preview(*out_list[0].v));
            flat.clear();
            for (size_t k = 0; k < body.size(); ++k) flat.push_back(body.index(k));
        }
        for (size_t idx = 0; idx < flat.size(); ++idx) {
            JsonAt o = flat[idx];
            std::string name;
            if (o.has("name") && !o.has("as_tensor")) {
                auto nn = o.str("name");
                if (!nn.ok()) return nn.error();
                name = nn.value();
            } else {
                auto key = o.union_key();
                if (!key.ok()) return key.error();
                JsonAt body = o.get(key.value());
                if (key.value() == "as_tensor") {
                    auto nn = body.str("name");
                    if (!nn.ok()) return nn.error();
                    name = nn.value();
                } else if (key.value() == "as_none") {
                    name = "as_none";
                } else if (key.value() == "as_sym_int") {
                    auto nn = body.str("as_name");
                    if (!nn.ok()) return nn.error();
                    name = nn.value();
                } else {
                    return o.error("unsupported node output kind \"" + key.value() + "\"");
                }
            }
            if (name != "as_none" && by_name_.count(name)) return define(name, nullptr, o);
            Node* gi = g_->call_function("operator.getitem",
                                         {Argument::from_node(n), Argument::from_int(int64_t(idx))},
                                         {}, name);
            if (name != "as_none") g_->force_name(gi, name);
            gi->meta = meta;
            if (name != "as_none") {
                if (Status s = define(name, gi, o); !s.ok()) return s;
            }
            attach_meta(gi, name);
            tuple.items.push_back(gi->meta.val);
        }
        n->meta.val = tuple;
        return {};
    }

    static bool py_keyword(const std::string& s) {
        return s == "from" || s == "in" || s == "is" || s == "lambda";
    }

    // ---- graph outputs ---------------------------------------------------------
    Status outputs(const JsonAt& graph) {
        auto outs = graph.array("outputs");
        if (!outs.ok()) return outs.error();
        std::vector<Argument> values;
        for (size_t k = 0; k < outs.value().size(); ++k) {
            auto a = argument(outs.value().index(k));
            if (!a.ok()) return a.error();
            values.push_back(a.take());
        }
        bool single = false;
        if (JsonAt st = graph.get("is_single_tensor_return"); st.v && st.v->is_boolean())
            single = st.v->get<bool>();
        if (single && values.size() == 1)
            g_->output(values[0]);
        else
            g_->output(Argument::tuple(values));
        output_count_ = values.size();
        return {};
    }

    // ---- signature -------------------------------------------------------------
    Result<std::string> spec_arg_name(const JsonAt& body) {
        auto arg = body.member("arg");
        if (!arg.ok()) return arg.error();
        const JsonAt& a = arg.value();
        if (a.has("name") && a.v->size() <= 2)
            return a.str("name"); // TensorArgument / CustomObjArgument
        auto key = a.union_key();
        if (!key.ok()) return key.error();
        JsonAt v = a.get(key.value());
        if (key.value() == "as_tensor" || key.value() == "as_custom_obj" ||
            key.value() == "as_token")
            return v.str("name");
        if (key.value() == "as_sym_int" || key.value() == "as_sym_float" ||
            key.value() == "as_sym_bool")
            return v.str("as_name");
        return std::string(); // a constant
    }

    Status signature(const JsonAt& gm) {
        auto sig = gm.object("signature");
        if (!sig.ok()) return sig.error();
        auto ins = sig.value().array("input_specs");
        if (!ins.ok()) return ins.error();
        auto outs = sig.value().array("output_specs");
        if (!outs.ok()) return outs.error();
        for (size_t k = 0; k < ins.value().size(); ++k) {
            JsonAt spec = ins.value().index(k);
            auto key = spec.union_key();
            if (!key.ok()) return key.error();
            JsonAt body = spec.get(key.value());
            InputSpec is;
            const std::string& kind = key.value();
            if (kind == "constant_input") {
                is.kind = InputKind::UserInput;
                is.constant_value = true;
                auto n = body.str("name");
                if (!n.ok()) return n.error();
                is.arg = n.value();
            } else {
                auto name = spec_arg_name(body);
                if (!name.ok()) return name.error();
                is.arg = name.value();
                if (kind == "user_input") {
                    is.kind = InputKind::UserInput;
                } else if (kind == "parameter") {
                    is.kind = InputKind::Parameter;
                    auto t = body.str("parameter_name");
                    if (!t.ok()) return t.error();
                    is.target = t.value();
                } else if (kind == "buffer") {
                    is.kind = InputKind::Buffer;
                    auto t = body.str("buffer_name");
                    if (!t.ok()) return t.error();
                    is.target = t.value();
                    auto p = body.boolean("persistent");
                    if (!p.ok()) return p.error();
                    is.persistent = p.value();
                } else if (kind == "tensor_constant") {
                    is.kind = InputKind::ConstantTensor;
                    auto t = body.str("tensor_constant_name");
                    if (!t.ok()) return t.error();
                    is.target = t.value();
                } else if (kind == "custom_obj") {
                    is.kind = InputKind::CustomObj;
                    auto t = body.str("custom_obj_name");
                    if (!t.ok()) return t.error();
                    is.target = t.value();
                } else if (kind == "token") {
                    is.kind = InputKind::Token;
                } else {
                    return spec.error("unknown input spec kind \"" + kind + "\"");
                }
            }
            if (std::string p = attribute_path_problem(is.target); !is.target.empty() && !p.empty())
                return spec.error(p, "parameter and buffer names are printed into gm.code");
            ep_.signature.inputs.push_back(is);
        }
        if (ep_.signature.inputs.size() != placeholder_order_.size())
            return ins.value().error("the signature lists " +
                                     std::to_string(ep_.signature.inputs.size()) +
                                     " inputs but the graph has " +
                                     std::to_string(placeholder_order_.size()) + " placeholders");
        for (size_t k = 0; k < placeholder_order_.size(); ++k) {
            InputSpec& is = ep_.signature.inputs[k];
            const std::string& ph = placeholder_order_[k];
            if (constant_inputs_.count(ph)) {
                // Name the constant placeholder the way the signature does.
                Node* n = by_name_[ph];
                if (Status s = check_name(is.arg, ins.value().index(k)); !s.ok()) return s;
                if (!g_->force_name(n, is.arg))
                    return ins.value().index(k).error("duplicate name \"" + is.arg +
                                                      "\" for a constant input");
                continue;
            }
            if (is.arg != ph)
                return ins.value().index(k).error("input spec " + std::to_string(k) + " names \"" +
                                                  is.arg + "\" but placeholder " +
                                                  std::to_string(k) + " is \"" + ph + "\"");
        }
        for (size_t k = 0; k < outs.value().size(); ++k) {
            JsonAt spec = outs.value().index(k);
            auto key = spec.union_key();
            if (!key.ok()) return key.error();
            JsonAt body = spec.get(key.value());
            OutputSpec os;
            auto name = spec_arg_name(body);
            if (!name.ok()) return name.error();
            os.arg = name.value();
            const std::string& kind = key.value();
            auto target_of = [&](const char* field) -> Status {
                auto t = body.str(field);
                if (!t.ok()) return t.error();
                os.target = t.value();
                return {};
            };
            Status st;
            if (kind == "user_output")
                os.kind = OutputKind::UserOutput;
            else if (kind == "loss_output")
                os.kind = OutputKind::LossOutput;
            else if (kind == "buffer_mutation")
                os.kind = OutputKind::BufferMutation, st = target_of("buffer_name");
            else if (kind == "parameter_mutation")
                os.kind = OutputKind::ParameterMutation, st = target_of("parameter_name");
            else if (kind == "gradient_to_parameter")
                os.kind = OutputKind::GradientToParameter, st = target_of("parameter_name");
            else if (kind == "gradient_to_user_input")
                os.kind = OutputKind::GradientToUserInput, st = target_of("user_input_name");
            else if (kind == "user_input_mutation")
                os.kind = OutputKind::UserInputMutation, st = target_of("user_input_name");
            else if (kind == "token")
                os.kind = OutputKind::Token;
            else
                return spec.error("unknown output spec kind \"" + kind + "\"");
            if (!st.ok()) return st;
            if (std::string p = attribute_path_problem(os.target); !os.target.empty() && !p.empty())
                return spec.error(p, "parameter and buffer names are printed into gm.code");
            ep_.signature.outputs.push_back(os);
        }
        if (ep_.signature.outputs.size() != output_count_)
            return outs.value().error(
                "the signature lists " + std::to_string(ep_.signature.outputs.size()) +
                " outputs but the graph returns " + std::to_string(output_count_) + " values");
        return {};
    }

    void module_call_graph(const JsonAt& gm) {
        JsonAt mcg = gm.get("module_call_graph");
        if (!mcg.v || !mcg.v->is_array()) return;
        for (size_t k = 0; k < mcg.size(); ++k) {
            JsonAt e = mcg.index(k);
            if (!e.is_object()) continue;
            ModuleCallEntry entry;
            entry.fqn = e.str_or("fqn", "");
            JsonAt sig = e.get("signature");
            if (sig.v && sig.v->is_object()) {
                entry.has_signature = true;
                entry.in_spec = sig.str_or("in_spec", "");
                entry.out_spec = sig.str_or("out_spec", "");
                for (const char* side : {"inputs", "outputs"}) {
                    JsonAt list = sig.get(side);
                    if (!list.v || !list.v->is_array()) continue;
                    for (size_t i = 0; i < list.size(); ++i) {
                        JsonAt a = list.index(i);
                        std::string n;
                        if (a.is_object() && a.v->size() == 1) {
                            JsonAt body = a.get(a.v->begin().key());
                            if (body.v && body.v->is_object())
                                n = body.str_or("name", body.str_or("as_name", ""));
                        }
                        (std::string(side) == "inputs" ? entry.inputs : entry.outputs).push_back(n);
                    }
                }
                JsonAt fan = sig.get("forward_arg_names");
                if (fan.v && fan.v->is_array())
                    for (const auto& s : *fan.v)
                        if (s.is_string()) entry.forward_arg_names.push_back(s.get<std::string>());
            }
            ep_.module_call_graph.push_back(std::move(entry));
        }
    }

public:
    std::set<std::string> unknown_ops_;

private:
    const std::string& file_;
    ExportedProgram& ep_;
    Graph* g_ = nullptr;
    Stage stage_ = Stage::Head;
    JsonAt gm_{nullptr, "", nullptr}, graph_{nullptr, "", nullptr};
    size_t k_ = 0; // the next tensor_values member or node
    size_t nodes_total_ = 0;
    std::unordered_map<std::string, TensorMeta> metas_;
    std::set<std::string> sym_names_;
    std::unordered_map<std::string, Node*> by_name_;
    std::vector<std::string> placeholder_order_;
    std::set<std::string> constant_inputs_;
    size_t output_count_ = 0;
};

} // namespace

namespace {

// Frees a DOM a piece at a time (a 10k-node graph's takes tens of milliseconds
// to free at once): values are moved from the backs of arrays and objects onto
// the stack and freed once they hold nothing. True when all is freed.
bool free_some(std::vector<json>& stack, Clock::time_point deadline) {
    for (size_t n = 1; !stack.empty(); ++n) {
        if (n % 1024 == 0 && Clock::now() >= deadline) return false;
        json& top = stack.back();
        json last;
        if (top.is_array() && !top.empty()) {
            json::array_t& a = top.get_ref<json::array_t&>();
            last = std::move(a.back());
            a.pop_back();
        } else if (top.is_object() && !top.empty()) {
            json::object_t& o = top.get_ref<json::object_t&>();
            last = std::move(o.back().second);
            o.pop_back();
        } else {
            stack.pop_back();
            continue;
        }
        if (last.is_structured() && !last.empty()) stack.push_back(std::move(last));
    }
    return true;
}

} // namespace

struct ProgramJsonReader::Impl {
    Impl(std::string_view text, std::string file_name, ExportedProgram& ep)
        : file(std::move(file_name)), parser(text, file), d(file, ep), ep(ep) {}
    std::string file;
    JsonParser parser;
    std::optional<json> root;
    std::vector<json> freeing; // the DOM, once read (free_some)
    Deserializer d;
    ExportedProgram& ep;
    bool over = false;
    Status status;
};

ProgramJsonReader::ProgramJsonReader(std::string_view text, std::string file, ExportedProgram& ep)
    : impl_(std::make_unique<Impl>(text, std::move(file), ep)) {
}
ProgramJsonReader::~ProgramJsonReader() = default;

bool ProgramJsonReader::step(Clock::time_point deadline) {
    Impl& m = *impl_;
    auto end = [&](Status s) {
        m.over = true;
        m.status = std::move(s);
        if (!m.status.ok()) {
            m.ep.graph = ClonePtr<Graph>();
        } else {
            for (const auto& op : m.d.unknown_ops_)
                m.ep.warnings.push_back("op " + op +
                                        " is not in pt2lab's schema table: it loads and prints, "
                                        "but cannot run");
        }
        if (m.root) m.freeing.push_back(std::move(*m.root)); // the DOM is read: it goes
        m.root.reset();
        return free_some(m.freeing, deadline);
    };
    if (m.over) return free_some(m.freeing, deadline);
    while (!m.root) {
        if (m.parser.step(kJsonStepBytes)) {
            auto r = m.parser.finish();
            if (!r.ok()) return end(r.error());
            m.root = r.take();
            break;
        }
        if (Clock::now() >= deadline) return false;
    }
    auto r = m.d.step(*m.root, deadline);
    if (!r.ok()) return end(r.error());
    if (!r.value()) return false;
    return end({});
}

ReadProgress ProgramJsonReader::progress() const {
    const Impl& m = *impl_;
    ReadProgress p;
    p.bytes_done = m.parser.done();
    p.bytes_total = m.parser.size();
    p.nodes_done = m.d.nodes_done();
    p.nodes_total = m.d.nodes_total();
    p.parsed = m.root.has_value() || m.over;
    return p;
}

Status ProgramJsonReader::status() const {
    PT2LAB_CHECK(impl_->over);
    return impl_->status;
}

Status read_exported_program_json(std::string_view text, const std::string& file,
                                  ExportedProgram& ep) {
    ProgramJsonReader r(text, file, ep);
    r.step(Clock::time_point::max());
    return r.status();
}

} // namespace pt2lab
