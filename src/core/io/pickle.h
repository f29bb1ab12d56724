// A restricted unpickler for the files torch.save writes (the zip format of
// torch >= 1.6: <root>/data.pkl, a pickle, plus <root>/data/<key> storages).
// It accepts only what torch.save emits for tensors in plain containers and
// refuses everything else (any other global, instance building, extensions)
// with an error naming the file, the record, the byte offset and the opcode
// or global. It never runs code and never allocates more than its limits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "program/tensor_data.h"
#include "util/status.h"

namespace pt2lab {

// A Python value as the restricted unpickler sees it.
struct PyValue {
    enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Tensor };
    Kind kind = Kind::None;
    bool b = false;
    int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<PyValue> items;                       // Tuple, List
    std::vector<std::pair<PyValue, PyValue>> entries; // Dict (dict and OrderedDict), in order
    std::shared_ptr<const TensorData> tensor;         // Tensor (contiguous copy)

    // Python's repr-like one-line description ("tuple of 2", "Tensor f32[2, 3]").
    std::string describe() const;
};

// Bounds on what a file may make the unpickler do.
struct PickleLimits {
    size_t max_pickle_bytes = 16u << 20; // data.pkl
    size_t max_depth = 64;               // container nesting (also stops self-references)
    size_t max_values = 1u << 20;        // values in the result, all containers expanded
    size_t max_memo = 1u << 20;          // memo entries
    size_t max_stack = 1u << 16;         // stack entries, marks included
    size_t max_tensor_dims = 16;
};

// Reads a torch.save zip held in `bytes`. `file` and `record` name it in errors
// ("model.pt2", "data/sample_inputs/model.pt"); record names inside the inner zip
// are appended ("data/sample_inputs/model.pt:archive/data.pkl").
Result<PyValue> read_torch_save(const std::vector<uint8_t>& bytes, const std::string& file,
                                const std::string& record, const PickleLimits& limits = {});

// The pickle layer alone, for tests: storages are looked up by key through `storage`.
// Returns the bytes of storage `key`, or an error.
using StorageReader = Result<std::vector<uint8_t>> (*)(void* ctx, const std::string& key);
Result<PyValue> unpickle(const std::vector<uint8_t>& pickle, const std::string& file,
                         const std::string& record, StorageReader storage, void* ctx,
                         const PickleLimits& limits = {});

} // namespace pt2lab
