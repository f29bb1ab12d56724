// Reader for torch.export's serialized ExportedProgram JSON (schema.yaml,
// major 8 fully; older majors best-effort with a warning).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "program/exported_program.h"

namespace pt2lab {

// Fills ep.graph, ep.signature and the program metadata from `text`.
// `file` names the source in errors (e.g. "model.pt2:models/model.json").
Status read_exported_program_json(std::string_view text, const std::string& file,
                                  ExportedProgram& ep);

// How far a ProgramJsonReader has got.
struct ReadProgress {
    size_t bytes_done = 0, bytes_total = 0; // of the JSON text parsed
    size_t nodes_done = 0, nodes_total = 0; // of the graph's nodes read (known once parsed)
    bool parsed = false;                    // the text is parsed; nodes are being read
};

// The same read in pieces, for a caller that must keep doing other things (the
// page draws frames while a big file opens): read_exported_program_json is one
// of these stepped to the end. `text` and `ep` must outlive it; on an error ep.graph
// is reset, as read_exported_program_json leaves it.
class ProgramJsonReader {
public:
    using Clock = std::chrono::steady_clock;
    ProgramJsonReader(std::string_view text, std::string file, ExportedProgram& ep);
    ~ProgramJsonReader();
    ProgramJsonReader(const ProgramJsonReader&) = delete;
    ProgramJsonReader& operator=(const ProgramJsonReader&) = delete;
    // Works until `deadline` (at least a piece of text or a node) and says whether it is done.
    bool step(Clock::time_point deadline);
    ReadProgress progress() const;
    Status status() const; // once step() said done

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The JSON parsed per piece (about a millisecond of work).
constexpr size_t kJsonStepBytes = 256 * 1024;

// The schema major versions this reader knows.
constexpr int kSchemaMajorSupported = 8;

} // namespace pt2lab
