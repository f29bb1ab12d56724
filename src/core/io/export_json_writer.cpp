// Serializes an ExportedProgram the way torch/_export/serde/serialize.py does:
// placeholders become graph inputs, each call_function a Node whose inputs
// walk the op schema (given keyword arguments KEYWORD, positional ones
// POSITIONAL, missing defaulted ones not written), getitem nodes fold into
// their producer's outputs (unused outputs named <node>_unused_<i>), every
// value's TensorMeta goes into tensor_values in definition order. Arguments,
// the signature and the module call graph: export_json_parts.h.
#include "io/export_json_writer.h"

#include <map>
#include <unordered_map>

#include "io/export_json_parts.h"
#include "util/json_read.h"

namespace pt2lab {

namespace {

class Serializer {
public:
    explicit Serializer(const ExportedProgram& ep) : ep_(ep), g_(*ep.graph) {}

    Result<std::string> run() {
        if (ep_.range_constraints != "{}" && !ep_.range_constraints.empty())
            return make_error("range_constraints", "the program has symbolic shapes",
                              "pt2lab writes programs with static shapes only");
        name_getitems();
        PyJson inputs, nodes, outputs;
        bool single = false;
        inputs.begin_array();
        nodes.begin_array();
        for (Node* n : g_.nodes()) {
            Status s;
            switch (n->op()) {
            case Op::Placeholder: s = placeholder(inputs, *n); break;
            case Op::CallFunction:
                if (n->target() != "operator.getitem") s = call(nodes, *n);
                break;
            case Op::Output: s = output(outputs, *n, single); break;
            case Op::GetAttr:
                s = node_error(*n, "get_attr nodes of tensors should not appear in an "
                                   "ExportedProgram's graph (torch's serializer refuses them)");
                break;
            case Op::CallModule:
            case Op::CallMethod:
                s = node_error(*n, std::string("an ExportedProgram has no ") +
                                       std::string(op_name(n->op())) + " nodes");
                break;
            }
            if (!s.ok()) return s.error();
        }
        inputs.end_array();
        nodes.end_array();

        PyJson j;
        j.begin_object().key("graph_module").begin_object().key("graph").begin_object();
        j.key("inputs").raw(inputs.text()).key("outputs").raw(outputs.text());
        j.key("nodes").raw(nodes.text()).key("tensor_values").begin_object();
        for (const auto& [name, meta] : tensor_values_) {
            j.key(name);
            write_tensor_meta(j, meta);
        }
        j.end_object().key("sym_int_values").begin_object();
        for (const auto& [name, v] : sym_int_values_)
            j.key(name).begin_object().key("as_int").integer(v).end_object();
        j.end_object().key("sym_bool_values").begin_object().end_object();
        j.key("is_single_tensor_return").boolean(single);
        j.key("custom_obj_values").begin_object().end_object();
        j.key("sym_float_values").begin_object().end_object();
        j.end_object(); // graph
        if (Status s = write_signature(j, ep_, names_, output_args_); !s.ok()) return s.error();
        write_module_call_graph(j, ep_);
        j.key("metadata").begin_object();
        for (const auto& [k, v] : ep_.graph_module_metadata) j.key(k).str(v);
        j.end_object();
        j.key("treespec_namedtuple_fields");
        if (Status s = raw_json(j, ep_.treespec_namedtuple_fields, "treespec_namedtuple_fields");
            !s.ok())
            return s.error();
        j.end_object(); // graph_module
        j.key("opset_version").begin_object();
        if (ep_.opset_version.empty()) j.key("aten").integer(10);
        for (const auto& [k, v] : ep_.opset_version) j.key(k).integer(v);
        j.end_object();
        j.key("range_constraints").begin_object().end_object();
        j.key("schema_version").begin_object();
        j.key("major").integer(kWriteSchemaMajor).key("minor").integer(kWriteSchemaMinor);
        j.end_object().key("verifiers").begin_array();
        for (const std::string& v : verifiers()) j.str(v);
        j.end_array();
        j.key("torch_version").str(ep_.torch_version.empty() ? "<=2.4" : ep_.torch_version);
        j.key("guards_code").begin_array();
        for (const std::string& g : ep_.guards_code) j.str(g);
        j.end_array().end_object();
        return j.take();
    }

private:
    // Each multi-output node's outputs by index: the first getitem reading that index
    // names it (torch's _output_node_name_at_index); a second getitem of the same index
    // stands for the first (duplicate_getitem_nodes).
    void name_getitems() {
        for (Node* n : g_.nodes()) {
            if (n->op() != Op::CallFunction || n->target() != "operator.getitem") continue;
            if (n->args().size() != 2 || !n->args()[0].is_node() ||
                n->args()[1].kind != ArgKind::Int)
                continue;
            auto& by_index = outputs_of_[n->args()[0].node];
            auto [it, fresh] = by_index.emplace(n->args()[1].i, n);
            names_.alias[n] = fresh ? n->name() : it->second->name();
        }
    }

    // The name of output `idx` of a multi-output node.
    std::string output_name(const Node& n, int64_t idx) const {
        auto it = outputs_of_.find(&n);
        if (it != outputs_of_.end()) {
            auto at = it->second.find(idx);
            if (at != it->second.end()) return at->second->name();
        }
        return n.name() + "_unused_" + std::to_string(idx);
    }

    Status define_tensor(const std::string& name, const MetaVal& v, const Node& n) {
        if (!v.is_tensor())
            return node_error(n, "no tensor metadata (meta['val']) for value " + name,
                              "every value an ExportedProgram defines carries its shape; run "
                              "the program once or export it again");
        if (!v.tensor.symbolic_sizes.empty())
            return node_error(n, "value " + name + " has symbolic sizes",
                              "pt2lab writes programs with static shapes only");
        tensor_values_.emplace_back(name, v.tensor);
        return {};
    }

    Status placeholder(PyJson& j, const Node& n) {
        const MetaVal& v = n.meta.val;
        if (v.kind == MetaVal::Kind::Int) { // a constant user input
            j.begin_object().key("as_int").integer(v.value).end_object();
            return {};
        }
        if (v.kind == MetaVal::Kind::None) {
            const InputSpec* is = ep_.signature.input_for(n.name());
            if (is && is->constant_value) {
                j.begin_object().key("as_none").boolean(true).end_object();
                return {};
            }
        }
        if (Status s = define_tensor(n.name(), v, n); !s.ok()) return s;
        j.begin_object().key("as_tensor").begin_object().key("name").str(n.name());
        j.end_object().end_object();
        return {};
    }

    // One returned value: a tensor, a SymInt, or None.
    Status returned(PyJson& j, const std::string& name, const MetaVal& v, const Node& n) {
        if (v.kind == MetaVal::Kind::None) {
            j.begin_object().key("as_none").boolean(true).end_object();
            return {};
        }
        if (v.kind == MetaVal::Kind::Int) {
            sym_int_values_.emplace_back(name, v.value);
            names_.sym.insert(name);
            j.begin_object().key("as_sym_int").begin_object().key("as_name").str(name);
            j.end_object().end_object();
            return {};
        }
        if (v.kind == MetaVal::Kind::SymInt)
            return node_error(n, "value " + name + " is a symbolic integer",
                              "pt2lab writes programs with static shapes only");
        if (Status s = define_tensor(name, v, n); !s.ok()) return s;
        j.begin_object().key("as_tensor").begin_object().key("name").str(name);
        j.end_object().end_object();
        return {};
    }

    Status outputs(PyJson& j, const Node& n, const OpSchema& schema) {
        const auto& returns = schema.returns;
        j.begin_array();
        const MetaVal& v = n.meta.val;
        if (returns.size() == 1 && returns[0].type.is_list && returns[0].type.base == "Tensor") {
            if (v.kind != MetaVal::Kind::Tuple)
                return node_error(n, "no metadata for the tensors it returns");
            j.begin_object().key("as_tensors").begin_array();
            for (size_t k = 0; k < v.items.size(); ++k) {
                const std::string name = output_name(n, static_cast<int64_t>(k));
                if (Status s = define_tensor(name, v.items[k], n); !s.ok()) return s;
                j.begin_object().key("name").str(name).end_object();
            }
            j.end_array().end_object();
        } else if (returns.size() == 1) {
            if (Status s = returned(j, n.name(), v, n); !s.ok()) return s;
        } else if (!returns.empty()) {
            if (v.kind != MetaVal::Kind::Tuple || v.items.size() != returns.size())
                return node_error(n, "no metadata for the " + std::to_string(returns.size()) +
                                         " values it returns");
            for (size_t k = 0; k < returns.size(); ++k)
                if (Status s = returned(j, output_name(n, static_cast<int64_t>(k)), v.items[k], n);
                    !s.ok())
                    return s;
        }
        j.end_array();
        return {};
    }

    static void metadata(PyJson& j, const NodeMeta& m) {
        j.begin_object();
        if (!m.stack_trace.empty()) j.key("stack_trace").str(m.stack_trace);
        if (!m.nn_module_stack.empty()) {
            std::string s;
            for (size_t k = 0; k < m.nn_module_stack.size(); ++k) {
                const ModuleStackEntry& e = m.nn_module_stack[k];
                s += (k ? ";" : "") + e.key + "," + e.path + "," + e.type;
            }
            j.key("nn_module_stack").str(s);
        }
        if (!m.source_fn_stack.empty()) {
            std::string s;
            for (size_t k = 0; k < m.source_fn_stack.size(); ++k)
                s +=
                    (k ? ";" : "") + m.source_fn_stack[k].first + "," + m.source_fn_stack[k].second;
            j.key("source_fn_stack").str(s);
        }
        if (m.torch_fn) j.key("torch_fn").str(m.torch_fn->first + ";" + m.torch_fn->second);
        // The only other keys torch's serializer writes (pt2lab's own, such as a
        // quantization annotation, stay out).
        for (const char* k : {"custom", "from_node"}) {
            auto it = m.other.find(k);
            if (it != m.other.end()) j.key(k).str(it->second);
        }
        j.end_object();
    }

    Status call(PyJson& j, const Node& n) {
        const OpSchema* schema = n.schema();
        if (!schema || schema->ns.empty())
            return node_error(
                n, "target " + n.target() + " is not an ATen operator pt2lab's schema table knows",
                "a .pt2 records operator overloads by their schema; torch.export would trace a "
                "Python function into ATen ops");
        j.begin_object().key("target").str(n.target()).key("inputs").begin_array();
        const auto& args = n.args();
        for (size_t i = 0; i < schema->arguments.size(); ++i) {
            const SchemaArg& sa = schema->arguments[i];
            const Argument* kw = kwargs_find(n.kwargs(), sa.name);
            const Argument* value = kw                                  ? kw
                                    : !sa.kwarg_only && i < args.size() ? &args[i]
                                                                        : nullptr;
            if (!value) continue; // torch leaves defaulted arguments out
            j.begin_object().key("name").str(sa.name).key("arg");
            if (Status s = write_argument(j, *value, &sa.type, n, names_); !s.ok()) return s;
            j.key("kind").integer(kw ? 2 : 1).end_object();
        }
        j.end_array().key("outputs");
        if (Status s = outputs(j, n, *schema); !s.ok()) return s;
        j.key("metadata");
        metadata(j, n.meta);
        j.key("is_hop_single_tensor_return").null().key("name").str(n.name()).end_object();
        return {};
    }

    Status output(PyJson& j, const Node& n, bool& single) {
        j.begin_array();
        if (n.args().size() != 1) return node_error(n, "the output node takes one argument");
        const Argument& r = n.args()[0];
        single = r.is_node();
        if (single) {
            if (Status s = write_argument(j, r, nullptr, n, names_); !s.ok()) return s;
        } else if (r.is_sequence()) {
            for (const Argument& a : r.items)
                if (Status s = write_argument(j, a, nullptr, n, names_); !s.ok()) return s;
        } else {
            return node_error(n, "the output is neither a value nor a tuple of values");
        }
        j.end_array();
        output_args_ = single ? std::vector<Argument>{r} : r.items;
        return {};
    }

    // The verifiers as the program records them; a program without any gets the
    // dialect its ops allow (TRAINING when an op writes its input in place).
    std::vector<std::string> verifiers() const {
        if (!ep_.verifiers.empty()) return ep_.verifiers;
        for (Node* n : g_.nodes())
            if (n->schema() && n->schema()->is_mutable()) return {"TRAINING"};
        return {"ATEN"};
    }

    static Status raw_json(PyJson& j, const std::string& text, const std::string& what) {
        if (text.empty()) {
            j.begin_object().end_object();
            return {};
        }
        auto parsed = parse_json_text(text, what);
        if (!parsed.ok()) return parsed.error();
        j.value(parsed.value());
        return {};
    }

    const ExportedProgram& ep_;
    const Graph& g_;
    std::unordered_map<const Node*, std::map<int64_t, const Node*>> outputs_of_;
    std::vector<std::pair<std::string, TensorMeta>> tensor_values_;
    std::vector<std::pair<std::string, int64_t>> sym_int_values_;
    ValueNames names_;
    std::vector<Argument> output_args_;
};

} // namespace

Result<std::string> write_exported_program_json(const ExportedProgram& ep) {
    PT2LAB_CHECK(ep.graph);
    return Serializer(ep).run();
}

} // namespace pt2lab
