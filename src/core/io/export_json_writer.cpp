// Serializes an ExportedProgram the way torch/_export/serde/serialize.py does:
// placeholders become graph inputs, each call_function a Node whose inputs
// walk the op schema (given keyword arguments KEYWORD, positional ones
// POSITIONAL, missing defaulted ones not written), getitem nodes fold into
// their producer's outputs (unused outputs named <node>_unused_<i>), every
// value's TensorMeta goes into tensor_values in definition order.
#include "io/export_json_writer.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "graph/op_schema.h"
#include "util/json_read.h"

namespace pt2lab {

namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> st(sizes.size(), 1);
    for (size_t k = sizes.size(); k-- > 1;) st[k - 1] = st[k] * std::max<int64_t>(sizes[k], 1);
    return st;
}

void write_device(PyJson& j, const std::string& device) {
    const size_t colon = device.find(':');
    j.begin_object().key("type").str(device.substr(0, colon)).key("index");
    if (colon == std::string::npos)
        j.null();
    else
        j.integer(std::atoll(device.c_str() + colon + 1));
    j.end_object();
}

void write_sym_ints(PyJson& j, const std::vector<int64_t>& v) {
    j.begin_array();
    for (int64_t x : v) j.begin_object().key("as_int").integer(x).end_object();
    j.end_array();
}

Error node_error(const Node& n, const std::string& msg, const std::string& hint = {}) {
    return make_error("%" + n.name(), msg, hint);
}

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
        if (Status s = signature(j); !s.ok()) return s.error();
        module_call_graph(j);
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
            value_name_[n] = fresh ? n->name() : it->second->name();
        }
    }

    const std::string& name_of(const Node* n) const {
        auto it = value_name_.find(n);
        return it == value_name_.end() ? n->name() : it->second;
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

    bool is_sym(const Node* n) const { return sym_names_.count(n->name()) != 0; }

    // serialize_input: by the value's Python type; an empty list by the schema type.
    Status input(PyJson& j, const Argument& a, const SchemaType* type, const Node& at) {
        auto tensor_ref = [&](const Node* n) {
            j.begin_object().key("name").str(name_of(n)).end_object();
        };
        auto sym_ref = [&](const Node* n) {
            j.begin_object().key("as_name").str(n->name()).end_object();
        };
        auto one = [&](const char* key) -> PyJson& { return j.begin_object().key(key); };
        switch (a.kind) {
        case ArgKind::None: one("as_none").boolean(true).end_object(); return {};
        case ArgKind::Bool: one("as_bool").boolean(a.b).end_object(); return {};
        case ArgKind::Int: one("as_int").integer(a.i).end_object(); return {};
        case ArgKind::Float: one("as_float").number(a.f).end_object(); return {};
        case ArgKind::String: one("as_string").str(a.s).end_object(); return {};
        case ArgKind::Dtype:
            one("as_scalar_type").integer(static_cast<int>(a.dtype)).end_object();
            return {};
        case ArgKind::Layout: one("as_layout").integer(a.i).end_object(); return {};
        case ArgKind::MemoryFormat: one("as_memory_format").integer(a.i).end_object(); return {};
        case ArgKind::Device:
            one("as_device");
            write_device(j, a.s);
            j.end_object();
            return {};
        case ArgKind::NodeRef:
            if (!a.node) return node_error(at, "an argument names no node");
            if (a.node->op() == Op::GetAttr)
                return node_error(at, "argument %" + a.node->name() +
                                          " is a get_attr, which torch's serializer refuses");
            if (is_sym(a.node)) {
                one("as_sym_int");
                sym_ref(a.node);
            } else {
                one("as_tensor");
                tensor_ref(a.node);
            }
            j.end_object();
            return {};
        case ArgKind::Dict:
            one("as_string_to_argument").begin_object();
            for (size_t k = 0; k < a.items.size(); ++k) {
                j.key(a.keys[k]);
                if (Status s = input(j, a.items[k], nullptr, at); !s.ok()) return s;
            }
            j.end_object().end_object();
            return {};
        case ArgKind::List:
        case ArgKind::Tuple: return list(j, a, type, at);
        case ArgKind::Repr:
            return node_error(at, "argument " + a.s + " is a Python value pt2lab keeps as text",
                              "torch.export.save could not write it either");
        }
        return node_error(at, "unsupported argument");
    }

    Status list(PyJson& j, const Argument& a, const SchemaType* type, const Node& at) {
        const auto& items = a.items;
        auto all = [&](auto pred) {
            for (const Argument& x : items)
                if (!pred(x)) return false;
            return true;
        };
        auto kind_is = [](ArgKind k) { return [k](const Argument& x) { return x.kind == k; }; };
        auto begin = [&](const char* key) { j.begin_object().key(key).begin_array(); };
        auto end = [&] { j.end_array().end_object(); };
        if (items.empty()) {
            const std::string base = type ? type->base : "Tensor";
            const char* key = base == "bool"                      ? "as_bools"
                              : base == "int" || base == "SymInt" ? "as_ints"
                              : base == "float"                   ? "as_floats"
                              : base == "str"                     ? "as_strings"
                              : base == "Tensor"                  ? "as_tensors"
                                                                  : nullptr;
            if (!key) return node_error(at, "an empty list of " + base + " cannot be written");
            begin(key);
            end();
            return {};
        }
        if (all(kind_is(ArgKind::Bool))) {
            begin("as_bools");
            for (const Argument& x : items) j.boolean(x.b);
        } else if (all(kind_is(ArgKind::Int))) {
            begin("as_ints");
            for (const Argument& x : items) j.integer(x.i);
        } else if (all(kind_is(ArgKind::Float))) {
            begin("as_floats");
            for (const Argument& x : items) j.number(x.f);
        } else if (all(kind_is(ArgKind::String))) {
            begin("as_strings");
            for (const Argument& x : items) j.str(x.s);
        } else if (all([&](const Argument& x) {
                       return x.kind == ArgKind::Int || (x.is_node() && x.node && is_sym(x.node));
                   })) {
            begin("as_sym_ints");
            for (const Argument& x : items) {
                if (x.kind == ArgKind::Int)
                    j.begin_object().key("as_int").integer(x.i).end_object();
                else
                    j.begin_object().key("as_name").str(x.node->name()).end_object();
            }
        } else if (all([](const Argument& x) { return x.is_node() && x.node; })) {
            begin("as_tensors");
            for (const Argument& x : items) {
                if (x.node->op() == Op::GetAttr)
                    return node_error(at, "argument %" + x.node->name() + " is a get_attr");
                j.begin_object().key("name").str(name_of(x.node)).end_object();
            }
        } else if (all([](const Argument& x) { return (x.is_node() && x.node) || x.is_none(); })) {
            begin("as_optional_tensors");
            for (const Argument& x : items) {
                j.begin_object();
                if (x.is_none())
                    j.key("as_none").boolean(true);
                else
                    j.key("as_tensor").begin_object().key("name").str(name_of(x.node)).end_object();
                j.end_object();
            }
        } else if (all([](const Argument& x) {
                       if (!x.is_sequence()) return false;
                       for (const Argument& y : x.items)
                           if (y.kind != ArgKind::Int) return false;
                       return true;
                   })) {
            begin("as_int_lists");
            for (const Argument& x : items) {
                j.begin_array();
                for (const Argument& y : x.items) j.integer(y.i);
                j.end_array();
            }
        } else {
            return node_error(at, "a list mixing value kinds (" + arg_repr(a) +
                                      ") cannot be written, as in torch's serializer");
        }
        end();
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
            sym_names_.insert(name);
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
            if (Status s = input(j, *value, &sa.type, n); !s.ok()) return s;
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
            if (Status s = input(j, r, nullptr, n); !s.ok()) return s;
        } else if (r.is_sequence()) {
            for (const Argument& a : r.items)
                if (Status s = input(j, a, nullptr, n); !s.ok()) return s;
        } else {
            return node_error(n, "the output is neither a value nor a tuple of values");
        }
        j.end_array();
        output_args_ = single ? std::vector<Argument>{r} : r.items;
        return {};
    }

    Status signature(PyJson& j) {
        const GraphSignature& sig = ep_.signature;
        j.key("signature").begin_object().key("input_specs").begin_array();
        for (const InputSpec& is : sig.inputs) {
            auto named = [&](const char* kind) {
                j.begin_object().key(kind).begin_object().key("arg").begin_object();
                j.key("name").str(is.arg).end_object();
            };
            switch (is.kind) {
            case InputKind::UserInput: {
                if (is.constant_value)
                    return make_error("input " + is.arg,
                                      "constant user inputs are not written yet");
                j.begin_object().key("user_input").begin_object().key("arg").begin_object();
                const Node* ph = g_.find(is.arg);
                j.key(ph && is_sym(ph) ? "as_sym_int" : "as_tensor").begin_object();
                j.key(ph && is_sym(ph) ? "as_name" : "name").str(is.arg).end_object();
                j.end_object();
                break;
            }
            case InputKind::Parameter:
                named("parameter");
                j.key("parameter_name").str(is.target);
                break;
            case InputKind::Buffer:
                named("buffer");
                j.key("buffer_name")
                    .str(is.target)
                    .key("persistent")
                    .boolean(is.persistent.value_or(true));
                break;
            case InputKind::ConstantTensor:
                named("tensor_constant");
                j.key("tensor_constant_name").str(is.target);
                break;
            case InputKind::Token: named("token"); break;
            case InputKind::CustomObj:
                return make_error("input " + is.arg,
                                  "custom objects (TorchBind) cannot be written by pt2lab");
            }
            j.end_object().end_object();
        }
        j.end_array().key("output_specs").begin_array();
        for (size_t k = 0; k < sig.outputs.size(); ++k) {
            const OutputSpec& os = sig.outputs[k];
            const Node* at = g_.output_node();
            PT2LAB_CHECK(at);
            const bool have = k < output_args_.size();
            const std::string arg = have && output_args_[k].is_node() && output_args_[k].node
                                        ? name_of(output_args_[k].node)
                                        : os.arg;
            auto spec = [&](const char* kind, const char* target_key) {
                j.begin_object().key(kind).begin_object().key("arg").begin_object();
                j.key("name").str(arg).end_object();
                if (target_key) j.key(target_key).str(os.target);
                j.end_object().end_object();
            };
            switch (os.kind) {
            case OutputKind::UserOutput:
                j.begin_object().key("user_output").begin_object().key("arg");
                if (have) {
                    if (Status s = input(j, output_args_[k], nullptr, *at); !s.ok()) return s;
                } else {
                    j.begin_object().key("as_tensor").begin_object().key("name").str(arg);
                    j.end_object().end_object();
                }
                j.end_object().end_object();
                break;
            case OutputKind::LossOutput: spec("loss_output", nullptr); break;
            case OutputKind::BufferMutation: spec("buffer_mutation", "buffer_name"); break;
            case OutputKind::ParameterMutation: spec("parameter_mutation", "parameter_name"); break;
            case OutputKind::GradientToParameter:
                spec("gradient_to_parameter", "parameter_name");
                break;
            case OutputKind::GradientToUserInput:
                spec("gradient_to_user_input", "user_input_name");
                break;
            case OutputKind::UserInputMutation:
                spec("user_input_mutation", "user_input_name");
                break;
            case OutputKind::Token: spec("token", nullptr); break;
            }
        }
        j.end_array().end_object();
        return {};
    }

    // Treespecs as torch's treespec_dumps writes them (version 1).
    static void spec_leaf(PyJson& t) {
        t.begin_object().key("type").null().key("context").null();
        t.key("children_spec").begin_array().end_array().end_object();
    }
    static void spec_tuple(PyJson& t, size_t n) {
        t.begin_object().key("type").str("builtins.tuple").key("context").str("null");
        t.key("children_spec").begin_array();
        for (size_t k = 0; k < n; ++k) spec_leaf(t);
        t.end_array().end_object();
    }
    // forward(*args) with `n` positional tensors: ((args...), {}).
    static std::string in_spec(size_t n) {
        PyJson t;
        t.begin_array().integer(1);
        t.begin_object().key("type").str("builtins.tuple").key("context").str("null");
        t.key("children_spec").begin_array();
        spec_tuple(t, n);
        t.begin_object().key("type").str("builtins.dict").key("context").str("[]");
        t.key("children_spec").begin_array().end_array().end_object();
        t.end_array().end_object().end_array();
        return t.take();
    }
    // `n` outputs: one is the tensor itself, more a tuple.
    static std::string out_spec(size_t n) {
        PyJson t;
        t.begin_array().integer(1);
        if (n == 1)
            spec_leaf(t);
        else
            spec_tuple(t, n);
        t.end_array();
        return t.take();
    }

    void module_call_graph(PyJson& j) {
        j.key("module_call_graph").begin_array();
        if (ep_.module_call_graph.empty()) {
            // No record of forward()'s structure: positional tensors in, a tuple out
            // (one output: the tensor itself), as export records a plain forward.
            std::vector<std::string> names = ep_.forward_arg_names();
            size_t outs = 0;
            for (const OutputSpec& os : ep_.signature.outputs)
                outs += os.kind == OutputKind::UserOutput;
            j.begin_object().key("fqn").str("").key("signature").begin_object();
            j.key("inputs").begin_array().end_array().key("outputs").begin_array().end_array();
            j.key("in_spec").str(in_spec(names.size())).key("out_spec").str(out_spec(outs));
            j.key("forward_arg_names").begin_array();
            for (const std::string& nm : names) j.str(nm);
            j.end_array().end_object().end_object();
        }
        for (const ModuleCallEntry& e : ep_.module_call_graph) {
            j.begin_object().key("fqn").str(e.fqn).key("signature");
            if (!e.has_signature) {
                j.null().end_object();
                continue;
            }
            j.begin_object();
            for (const auto* side : {&e.inputs, &e.outputs}) {
                j.key(side == &e.inputs ? "inputs" : "outputs").begin_array();
                for (const std::string& nm : *side) {
                    j.begin_object().key("as_tensor").begin_object().key("name").str(nm);
                    j.end_object().end_object();
                }
                j.end_array();
            }
            j.key("in_spec").str(e.in_spec).key("out_spec").str(e.out_spec);
            j.key("forward_arg_names");
            if (e.forward_arg_names.empty()) {
                j.null();
            } else {
                j.begin_array();
                for (const std::string& nm : e.forward_arg_names) j.str(nm);
                j.end_array();
            }
            j.end_object().end_object();
        }
        j.end_array();
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
    std::unordered_map<const Node*, std::string> value_name_;
    std::vector<std::pair<std::string, TensorMeta>> tensor_values_;
    std::vector<std::pair<std::string, int64_t>> sym_int_values_;
    std::set<std::string> sym_names_;
    std::vector<Argument> output_args_;
};

} // namespace

void write_tensor_meta(PyJson& j, const TensorMeta& m) {
    j.begin_object().key("dtype").integer(static_cast<int>(m.dtype)).key("sizes");
    write_sym_ints(j, m.sizes);
    j.key("requires_grad").boolean(m.requires_grad).key("device");
    write_device(j, m.device.empty() ? "cpu" : m.device);
    j.key("strides");
    write_sym_ints(j, m.strides.size() == m.sizes.size() ? m.strides : contiguous_strides(m.sizes));
    j.key("storage_offset").begin_object().key("as_int").integer(m.storage_offset).end_object();
    j.key("layout").integer(7).end_object(); // torch.strided
}

Result<std::string> write_exported_program_json(const ExportedProgram& ep) {
    PT2LAB_CHECK(ep.graph);
    return Serializer(ep).run();
}

} // namespace pt2lab
