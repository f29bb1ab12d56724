// ExportedProgram JSON: the graph signature (input and output specs) and the
// module call graph, as torch's serializer writes them.
#include "io/export_json_parts.h"

namespace pt2lab {

namespace {

// Treespecs as torch's treespec_dumps writes them (version 1).
void spec_leaf(PyJson& t) {
    t.begin_object().key("type").null().key("context").null();
    t.key("children_spec").begin_array().end_array().end_object();
}
void spec_tuple(PyJson& t, size_t n) {
    t.begin_object().key("type").str("builtins.tuple").key("context").str("null");
    t.key("children_spec").begin_array();
    for (size_t k = 0; k < n; ++k) spec_leaf(t);
    t.end_array().end_object();
}
// forward(*args) with `n` positional tensors: ((args...), {}).
std::string in_spec(size_t n) {
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
std::string out_spec(size_t n) {
    PyJson t;
    t.begin_array().integer(1);
    if (n == 1)
        spec_leaf(t);
    else
        spec_tuple(t, n);
    t.end_array();
    return t.take();
}

} // namespace

Status write_signature(PyJson& j, const ExportedProgram& ep, const ValueNames& names,
                       const std::vector<Argument>& output_args) {
    const GraphSignature& sig = ep.signature;
    j.key("signature").begin_object().key("input_specs").begin_array();
    for (const InputSpec& is : sig.inputs) {
        auto named = [&](const char* kind) {
            j.begin_object().key(kind).begin_object().key("arg").begin_object();
            j.key("name").str(is.arg).end_object();
        };
        switch (is.kind) {
        case InputKind::UserInput: {
            if (is.constant_value)
                return make_error("input " + is.arg, "constant user inputs are not written yet");
            j.begin_object().key("user_input").begin_object().key("arg").begin_object();
            const Node* ph = ep.graph->find(is.arg);
            j.key(ph && names.is_sym(ph) ? "as_sym_int" : "as_tensor").begin_object();
            j.key(ph && names.is_sym(ph) ? "as_name" : "name").str(is.arg).end_object();
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
        const Node* at = ep.graph->output_node();
        PT2LAB_CHECK(at);
        const bool have = k < output_args.size();
        const std::string arg = have && output_args[k].is_node() && output_args[k].node
                                    ? names.of(output_args[k].node)
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
                if (Status s = write_argument(j, output_args[k], nullptr, *at, names); !s.ok())
                    return s;
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
        case OutputKind::UserInputMutation: spec("user_input_mutation", "user_input_name"); break;
        case OutputKind::Token: spec("token", nullptr); break;
        }
    }
    j.end_array().end_object();
    return {};
}

void write_module_call_graph(PyJson& j, const ExportedProgram& ep) {
    j.key("module_call_graph").begin_array();
    if (ep.module_call_graph.empty()) {
        // No record of forward()'s structure: positional tensors in, a tuple out
        // (one output: the tensor itself), as export records a plain forward.
        std::vector<std::string> names = ep.forward_arg_names();
        size_t outs = 0;
        for (const OutputSpec& os : ep.signature.outputs) outs += os.kind == OutputKind::UserOutput;
        j.begin_object().key("fqn").str("").key("signature").begin_object();
        j.key("inputs").begin_array().end_array().key("outputs").begin_array().end_array();
        j.key("in_spec").str(in_spec(names.size())).key("out_spec").str(out_spec(outs));
        j.key("forward_arg_names").begin_array();
        for (const std::string& nm : names) j.str(nm);
        j.end_array().end_object().end_object();
    }
    for (const ModuleCallEntry& e : ep.module_call_graph) {
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

} // namespace pt2lab
