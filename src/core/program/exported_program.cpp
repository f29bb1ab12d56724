// ExportedProgram helpers and its printed forms (signature, str(ep)).
#include "program/exported_program.h"

namespace pt2lab {

int64_t TensorData::numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
}

const char* input_kind_name(InputKind k) {
    switch (k) {
    case InputKind::UserInput: return "USER_INPUT";
    case InputKind::Parameter: return "PARAMETER";
    case InputKind::Buffer: return "BUFFER";
    case InputKind::ConstantTensor: return "CONSTANT_TENSOR";
    case InputKind::CustomObj: return "CUSTOM_OBJ";
    case InputKind::Token: return "TOKEN";
    }
    return "?";
}

const char* output_kind_name(OutputKind k) {
    switch (k) {
    case OutputKind::UserOutput: return "USER_OUTPUT";
    case OutputKind::LossOutput: return "LOSS_OUTPUT";
    case OutputKind::BufferMutation: return "BUFFER_MUTATION";
    case OutputKind::ParameterMutation: return "PARAMETER_MUTATION";
    case OutputKind::GradientToParameter: return "GRADIENT_TO_PARAMETER";
    case OutputKind::GradientToUserInput: return "GRADIENT_TO_USER_INPUT";
    case OutputKind::UserInputMutation: return "USER_INPUT_MUTATION";
    case OutputKind::Token: return "TOKEN";
    }
    return "?";
}

const InputSpec* GraphSignature::input_for(const std::string& placeholder) const {
    for (const auto& is : inputs)
        if (is.arg == placeholder) return &is;
    return nullptr;
}

std::string signature_str(const GraphSignature& sig) {
    // InputSpec.__str__: f"{arg.name}: {kind.name}{ target=...!r}{ persistent=...}"
    auto quote = [](const std::string& s) { return "'" + s + "'"; };
    std::string ins, outs;
    for (size_t k = 0; k < sig.inputs.size(); ++k) {
        const InputSpec& is = sig.inputs[k];
        if (k) ins += "\n";
        ins += is.arg + ": " + input_kind_name(is.kind);
        if (!is.target.empty()) ins += " target=" + quote(is.target);
        if (is.persistent) ins += std::string(" persistent=") + (*is.persistent ? "True" : "False");
    }
    for (size_t k = 0; k < sig.outputs.size(); ++k) {
        const OutputSpec& os = sig.outputs[k];
        if (k) outs += "\n";
        outs += os.arg + ": " + output_kind_name(os.kind);
        if (!os.target.empty()) outs += " target=" + quote(os.target);
    }
    return "\n# inputs\n" + ins + "\n\n# outputs\n" + outs + "\n";
}

namespace {
std::string indent_newlines(const std::string& s) {
    std::string out;
    for (char c : s) {
        out += c;
        if (c == '\n') out += "    ";
    }
    return out;
}
} // namespace

std::string exported_program_str(const ExportedProgram& ep) {
    std::string gm = indent_newlines(print_readable(*ep.graph, CodegenOptions{}));
    std::string sig = indent_newlines(signature_str(ep.signature));
    // torch 2.14: no space after "Graph signature:" (the signature starts with a newline)
    return "ExportedProgram:\n    " + gm + "\nGraph signature:" + sig +
           "\nRange constraints: " + ep.range_constraints + "\n";
}

std::vector<std::string> ExportedProgram::forward_arg_names() const {
    for (const auto& e : module_call_graph)
        if (e.fqn.empty() && e.has_signature && !e.forward_arg_names.empty())
            return e.forward_arg_names;
    std::vector<std::string> out;
    for (const auto& is : signature.inputs)
        if (is.kind == InputKind::UserInput) out.push_back(is.arg);
    return out;
}

std::shared_ptr<const TensorData> ExportedProgram::find_tensor(const std::string& fqn) const {
    auto it = state_dict.find(fqn);
    if (it != state_dict.end()) return it->second;
    it = constants.find(fqn);
    if (it != constants.end()) return it->second;
    return nullptr;
}

} // namespace pt2lab
