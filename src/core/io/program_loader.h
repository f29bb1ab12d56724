// Opens what torch.export writes: a PT2 archive (torch >= 2.8), a legacy
// (<= 2.7) zip, or a bare ExportedProgram JSON; reads weights, constants and
// pt2lab's extra/pt2lab/ folder. Every problem is an Error naming the file
// and the record, JSON path or node.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "io/export_json.h"
#include "io/zip.h"
#include "program/exported_program.h"
#include "util/limits.h"

namespace pt2lab {

// Everything loading allocates for the file's data (records, weights, stand-ins,
// extras) is charged to one Budget made from `limits` and the file's size, so a
// small file cannot take much memory; the default limits are the page's.
// Weights are not copied: a tensor in a stored (not deflated) record whose
// data is aligned for its dtype is a view into the file's bytes, which it
// keeps alive (the load takes the vector, moved, not copied); any other is
// copied once. The file's bytes are then the program's weights.
Result<ExportedProgram> load_program(std::vector<uint8_t> bytes, const std::string& file,
                                     const Limits& limits = Limits());
// The same for bytes the caller keeps sharing (tests check the views point into them).
Result<ExportedProgram> load_program(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                     const std::string& file, const Limits& limits = Limits());
// How far a ProgramLoad has got.
struct LoadProgress {
    ReadProgress read;    // the graph's JSON: bytes parsed, then nodes read
    bool weights = false; // the graph is read; the weights and the rest are next
    size_t tensors_done = 0, tensors_total = 0; // of the weights (or constants) config
    bool stand_ins =
        false; // a file without weights: tensors_* count the lifted inputs given stand-ins
};

// The same load in pieces, for a caller that must keep doing other things (the
// page draws frames while a big file opens): load_program is one of these
// stepped to the end. Dropping it before it is done drops everything it read.
class ProgramLoad {
public:
    using Clock = std::chrono::steady_clock;
    // `late`: ranges of an archive not yet in `bytes` (zip_late_ranges); their weight
    // records become views whose CRCs take_arriving() lists for a later check.
    ProgramLoad(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string file,
                const Limits& limits = Limits(), std::vector<ByteRange> late = {});
    ~ProgramLoad();
    ProgramLoad(const ProgramLoad&) = delete;
    ProgramLoad& operator=(const ProgramLoad&) = delete;
    // Works until `deadline` (at least one piece: the archive's directory, a piece
    // of JSON text, a node, the weights) and says whether it is done.
    bool step(Clock::time_point deadline);
    LoadProgress progress() const;
    Result<ExportedProgram> finish(); // once step() said done
    // The records viewed before their bytes arrived (none without `late`).
    std::vector<ArrivingRecord> take_arriving();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

Result<ExportedProgram> load_program_file(const std::string& path, const Limits& limits = Limits());

// Reads a whole file; the error names it.
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

// Deterministic stand-in values for a tensor whose real values are missing
// (legacy pickled weights, bare JSON): BatchNorm-style buffers get their
// initial values (weight 1, bias 0, running_mean 0, running_var 1,
// num_batches_tracked 0); other floats U(-b, b) with b = 1/sqrt(fan_in) from
// SeededRng seeded by a hash of the FQN.
TensorData make_stand_in(const std::string& fqn, const TensorMeta& meta);

} // namespace pt2lab
