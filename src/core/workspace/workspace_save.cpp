// Workspace::save_pt2: the current program, as loaded, decomposed or
// converted, written as a .pt2 with the live state's values.
#include "io/pt2_writer.h"
#include "passes/lift.h"
#include "workspace/workspace_state.h"

namespace pt2lab {

Result<ExportedProgram> Workspace::program_to_save() const {
    if (!has_program())
        return make_error("save",
                          "a symbolic_trace graph is a torch.fx module, not an "
                          "ExportedProgram: torch.export.load has nothing to read",
                          "open the model's torch.export .pt2 to save it");
    const State& s = *state_;
    if (s.module_actions == 0) return s.ep->clone();
    auto lifted = lift(*s.gm, *s.ep);
    if (!lifted.ok()) {
        Error e = lifted.error();
        e.file = file_;
        return e;
    }
    return lifted;
}

Result<std::vector<uint8_t>> Workspace::save_pt2(const std::string& root) const {
    if (!file_whole()) {
        Error e = make_error("save", "the file's weights are still being read in",
                             "wait until the file is read whole");
        e.file = file_;
        return e;
    }
    auto ep = program_to_save();
    if (!ep.ok()) return ep.error();
    // The live values of what the program holds (shared, not copied, where no run wrote them).
    TensorMap current;
    for (const TensorMap* m : {&ep.value().state_dict, &ep.value().constants})
        for (const auto& kv : *m) {
            auto it = state_->exec.tensors.find(kv.first);
            if (it != state_->exec.tensors.end() && it->second)
                current[kv.first] = std::make_shared<TensorData>(it->second->to_data());
        }
    auto bytes = write_pt2(ep.value(), root, &current);
    if (!bytes.ok()) {
        Error e = bytes.error();
        if (e.file.empty()) e.file = file_;
        return e;
    }
    return bytes;
}

} // namespace pt2lab
