// ExportedProgram: torch.export's result as pt2lab holds it (graph, graph
// signature, state_dict and constants, module call graph, provenance), and
// GraphModule: the ep.module() view that unlift() builds from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/printer.h"
#include "program/graph_module.h"
#include "program/tensor_data.h"
#include "util/clone_ptr.h"

namespace pt2lab {

// Values follow torch.export.graph_signature (1-based, auto()).
enum class InputKind { UserInput = 1, Parameter, Buffer, ConstantTensor, CustomObj, Token };
// The newer numbering, with PARAMETER_MUTATION after BUFFER_MUTATION.
enum class OutputKind {
    UserOutput = 1,
    LossOutput,
    BufferMutation,
    ParameterMutation,
    GradientToParameter,
    GradientToUserInput,
    UserInputMutation,
    Token
};
const char* input_kind_name(InputKind k);   // "PARAMETER"
const char* output_kind_name(OutputKind k); // "BUFFER_MUTATION"

struct InputSpec {
    InputKind kind = InputKind::UserInput;
    std::string arg;                // placeholder name
    std::string target;             // FQN for parameters/buffers/constants; "" otherwise
    std::optional<bool> persistent; // buffers only
    bool constant_value = false;    // a constant (non-tensor) user input
};

struct OutputSpec {
    OutputKind kind = OutputKind::UserOutput;
    std::string arg;    // output node argument name
    std::string target; // mutated buffer/parameter FQN or input name; "" otherwise
};

struct GraphSignature {
    std::vector<InputSpec> inputs;
    std::vector<OutputSpec> outputs;

    const InputSpec* input_for(const std::string& placeholder) const;
};

// str(ep.graph_signature): "\n# inputs\n...\n\n# outputs\n...\n"
std::string signature_str(const GraphSignature& sig);

struct ModuleCallEntry {
    std::string fqn;
    bool has_signature = false;
    std::vector<std::string> inputs; // argument names
    std::vector<std::string> outputs;
    std::string in_spec, out_spec; // treespec JSON text as serialized
    std::vector<std::string> forward_arg_names;
};

// How the asset was made (extra/pt2lab/manifest.json), when present.
struct Provenance {
    bool present = false;
    std::string made_by;       // "torch.export"
    std::string torch_version; // the torch that ran ("2.14.1+debian")
    std::string script;
    std::string model_class;
    std::string mode;
    std::string note;
    int64_t seed = 0;
};

struct NamedTensor {
    std::string name;
    TensorData tensor;
};

// Everything an ExportedProgram holds besides its graph, apart so that a copy
// can take a graph copied in pieces (ExportedProgram::clone_with).
struct ExportedProgramFields {
    GraphSignature signature;
    TensorMap state_dict; // parameters and persistent buffers by FQN
    TensorMap constants;  // tensor constants, non-persistent buffers
    std::vector<ModuleCallEntry> module_call_graph;
    std::map<std::string, std::string> graph_module_metadata;
    std::map<std::string, int64_t> opset_version;
    std::string range_constraints = "{}";
    std::vector<std::string> verifiers;
    std::vector<std::string> guards_code;          // as serialized (torch >= 2.9)
    std::string treespec_namedtuple_fields = "{}"; // JSON text, as serialized
    int schema_major = 0, schema_minor = 0;
    std::string torch_version;

    // Where it came from.
    std::string source_file;
    std::string format;     // "pt2 archive", "pt2 archive (legacy <= 2.7)", "ExportedProgram JSON"
    uint64_t file_size = 0; // bytes of that file: sizes the budgets of its runs (util/limits.h)
    bool has_weights = false;
    std::vector<std::string> warnings;
    Provenance provenance;
    std::vector<NamedTensor> example_inputs;    // data/sample_inputs/model.pt (torch's own)
    std::vector<NamedTensor> reference_outputs; // extra/pt2lab outputs (PyTorch eager)
    std::vector<NamedTensor> buffers_after;     // train-mode buffers after one eager forward
};

struct ExportedProgram : ExportedProgramFields {
    ExportedProgram() = default;
    ExportedProgram(ExportedProgram&&) = default;
    ExportedProgram& operator=(ExportedProgram&&) = default;
    // A copy with its own graph; weights and constants are shared (immutable),
    // inputs and reference outputs copied.
    ExportedProgram clone() const { return ExportedProgram(*this); }
    // clone() with the copy of the graph made already (GraphCloning, in pieces).
    ExportedProgram clone_with(std::unique_ptr<Graph> copy_of_graph) const {
        ExportedProgram p;
        static_cast<ExportedProgramFields&>(p) = *this;
        p.graph = std::move(copy_of_graph);
        return p;
    }

    ClonePtr<Graph> graph;

    // forward()'s user-facing argument names (from the root module call entry,
    // else the user-input placeholders).
    std::vector<std::string> forward_arg_names() const;
    // Looks a parameter/buffer/constant up by FQN; null when absent.
    std::shared_ptr<const TensorData> find_tensor(const std::string& fqn) const;

private:
    ExportedProgram(const ExportedProgram&) = default; // through clone(): copies are explicit
};

// print_readable + signature, as str(ep) prints it:
// "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n ... Range constraints: {}\n"
std::string exported_program_str(const ExportedProgram& ep);

} // namespace pt2lab
