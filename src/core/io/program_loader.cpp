// PT2 archive layout, weights, constants and pt2lab extras.
#include "io/program_loader.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include "io/export_json.h"
#include "io/npy.h"
#include "io/pickle.h"
#include "io/zip.h"
#include "util/check.h"
#include "util/checked.h"
#include "util/json_read.h"
#include "util/rng.h"

namespace pt2lab {

namespace {

Error file_error(const std::string& file, const std::string& where, const std::string& msg,
                 const std::string& hint = {}) {
    Error e = make_error(where, msg, hint);
    e.file = file;
    return e;
}

// A budget refusal, attributed to `file`.
Status in_file(Status s, const std::string& file) {
    if (!s.ok() && s.error().file.empty()) s.error().file = file;
    return s;
}

std::string basename_of(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A read-only view of the archive rooted at its top folder; every record
// copied out is charged to the file's budget before it is extracted.
struct Archive {
    const ZipArchive& zip;
    std::string prefix; // "conv_relu/" or ""
    std::string file;   // the archive's name for messages
    Budget& budget;

    bool has(const std::string& rel) const { return zip.find(prefix + rel) != nullptr; }
    Result<std::vector<uint8_t>> read(const std::string& rel) const {
        const ZipEntry* e = zip.find(prefix + rel);
        if (!e) return file_error(file, rel, "record missing from the archive");
        if (Status s = in_file(budget.bytes(e->size, "record " + rel), file); !s.ok())
            return s.error();
        return zip.read(*e);
    }
    // A record without a copy when it is stored (a view into the file's buffer);
    // only a deflated record, which needs a buffer of its own, is charged.
    Result<Bytes> view(const std::string& rel) const {
        const ZipEntry* e = zip.find(prefix + rel);
        if (!e) return file_error(file, rel, "record missing from the archive");
        if (e->method != 0)
            if (Status s = in_file(budget.bytes(e->size, "record " + rel), file); !s.ok())
                return s.error();
        return zip.view(*e);
    }
    // view(), except that a weight record still arriving is a view before its bytes are
    // there (ZipArchive::view_arriving); `late` says whether it is.
    Result<Bytes> view_arriving(const std::string& rel, bool& late) const {
        const ZipEntry* e = zip.find(prefix + rel);
        late = e && zip.late(*e);
        if (!late) return view(rel);
        return zip.view_arriving(*e);
    }
    std::string label(const std::string& rel) const { return file + ":" + rel; }
};

std::string as_text(const std::vector<uint8_t>& b) {
    return std::string(b.begin(), b.end());
}

// Whether `p` may be read as the dtype of `itemsize` bytes (float*, int64_t*...).
bool aligned_for(const uint8_t* p, size_t itemsize) {
    const size_t align = std::min<size_t>(itemsize, alignof(std::max_align_t));
    return align == 0 || reinterpret_cast<uintptr_t>(p) % align == 0;
}

// Cuts a tensor out of raw storage bytes, honouring strides and offset. Every
// size, stride and offset is checked (negative values, int64 overflow) before
// the storage is indexed, and the tensor is charged to the budget first. A
// contiguous tensor whose first byte is aligned for its dtype is a view into
// `storage` (which a stored record shares with the file: no copy); any other
// is copied once into a buffer of its own (malloc's, so aligned).
Result<TensorData> tensor_from_storage(const Bytes& storage, const TensorMeta& m,
                                       const std::string& file, const std::string& where,
                                       Budget& budget) {
    TensorData t;
    t.dtype = m.dtype;
    t.sizes = m.sizes;
    t.requires_grad = m.requires_grad;
    size_t item = scalar_type_size(m.dtype);
    if (item == 0)
        return file_error(file, where,
                          "unsupported dtype " + std::string(scalar_type_name(m.dtype)));
    const size_t rank = m.sizes.size();
    for (size_t k = 0; k < rank; ++k)
        if (m.sizes[k] < 0)
            return file_error(file, where,
                              "negative size " + std::to_string(m.sizes[k]) + " in dimension " +
                                  std::to_string(k),
                              "the weights config is damaged; export the model again");
    std::vector<int64_t> strides = m.strides;
    if (strides.empty()) { // contiguous by default; sizes were checked to fit
        strides.assign(rank, 1);
        for (size_t k = rank; k-- > 1;)
            strides[k - 1] = checked_mul(strides[k], std::max<int64_t>(m.sizes[k], 1)).value_or(0);
    } else if (strides.size() != rank) {
        return file_error(file, where,
                          std::to_string(strides.size()) + " strides for " + std::to_string(rank) +
                              " sizes",
                          "the weights config is damaged; export the model again");
    }
    for (size_t k = 0; k < rank; ++k)
        if (strides[k] < 0)
            return file_error(file, where,
                              "negative stride " + std::to_string(strides[k]) + " in dimension " +
                                  std::to_string(k),
                              "torch tensors never have negative strides; the weights config "
                              "is damaged");
    if (m.storage_offset < 0)
        return file_error(file, where,
                          "negative storage offset " + std::to_string(m.storage_offset),
                          "torch tensors never start before their storage; the weights config "
                          "is damaged");
    if (Status s = in_file(budget.tensor(m.sizes, item, where), file); !s.ok()) return s.error();
    const int64_t numel = t.numel(); // fits: budget.tensor checked it
    // Elements of storage the tensor reaches: offset + 1 + sum (size - 1) * stride.
    std::optional<int64_t> extent = numel == 0 ? 0 : checked_add(m.storage_offset, 1);
    for (size_t k = 0; k < rank && numel && extent; ++k) {
        auto step = checked_mul(m.sizes[k] - 1, strides[k]);
        extent = step ? checked_add(*extent, *step) : std::nullopt;
    }
    std::optional<uint64_t> need =
        extent ? checked_mul_u64(static_cast<uint64_t>(*extent), item) : std::nullopt;
    if (!need || storage.size() < *need) {
        std::string shape = "[";
        for (size_t k = 0; k < rank; ++k) shape += (k ? ", " : "") + std::to_string(m.sizes[k]);
        shape += "]";
        return file_error(file, where,
                          "weight size mismatch: " + std::string(scalar_type_name(m.dtype)) +
                              shape + " needs " +
                              (need ? std::to_string(*need) + " bytes"
                                    : std::string("more bytes than fit in 64 bits")) +
                              ", the stored data has " + std::to_string(storage.size()),
                          "the weights do not belong to this graph; export the model again");
    }
    const size_t nbytes = static_cast<size_t>(numel) * item;
    bool contiguous = true;
    for (size_t k = rank, expect = 1; k-- > 0;) {
        if (m.sizes[k] != 1 && strides[k] != static_cast<int64_t>(expect)) contiguous = false;
        expect *= static_cast<size_t>(m.sizes[k]);
    }
    if (contiguous) {
        // numel == 0: storage_offset may lie past the data; nothing is read.
        const size_t first = numel ? static_cast<size_t>(m.storage_offset) * item : 0;
        if (aligned_for(storage.data() + first, item)) {
            t.bytes = storage.slice(first, nbytes);
        } else {
            std::vector<uint8_t> copy(nbytes);
            if (numel) std::memcpy(copy.data(), storage.data() + first, nbytes);
            t.bytes = Bytes(std::move(copy));
        }
        return t;
    }
    // Walk the index space in C order; every offset is within `extent`.
    std::vector<uint8_t> out(nbytes);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t n = 0; n < numel; ++n) {
        int64_t off = m.storage_offset;
        for (size_t k = 0; k < rank; ++k) off += idx[k] * strides[k];
        std::memcpy(&out[static_cast<size_t>(n) * item],
                    storage.data() + static_cast<size_t>(off) * item, item);
        for (size_t k = rank; k-- > 0;) {
            if (++idx[k] < m.sizes[k]) break;
            idx[k] = 0;
        }
    }
    t.bytes = Bytes(std::move(out));
    return t;
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

struct ModelRecords {
    std::string model_json; // relative path
    std::string name;       // "model"
};

// Reads a payload config ({"config": {fqn: {path_name, is_param, use_pickle, tensor_meta}}})
// into `out`, one tensor per step (a tensor is a view into the file, CRC-checked, or one copy).
struct PayloadRead {
    std::string label, data_dir;
    json root;
    JsonAt config{nullptr, "", nullptr};
    size_t k = 0, total = 0;
    TensorMap* out = nullptr;

    Status start(const Archive& ar, const std::string& config_rel, const std::string& dir,
                 TensorMap& into) {
        auto bytes = ar.read(config_rel);
        if (!bytes.ok()) return bytes.error();
        label = ar.label(config_rel);
        data_dir = dir;
        out = &into;
        const auto& b = bytes.value();
        auto j = parse_json_text(
            std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), label);
        if (!j.ok()) return j.error();
        root = j.take();
        auto c = json_root(root, &label).object("config");
        if (!c.ok()) return c.error();
        config = c.value();
        total = config.v->size();
        return {};
    }
    // Reads entries until `deadline` (at least one); true when all are read.
    Result<bool> step(const Archive& ar, ExportedProgram& ep,
                      ProgramLoad::Clock::time_point deadline) {
        const auto& members = json_members(*config.v);
        while (k < members.size()) {
            const auto& [key, value] = members[k++];
            JsonAt entry{&value, config.path + "." + key, &label};
            if (Status s = read_entry(ar, ep, key, entry); !s.ok()) return s.error();
            if (ProgramLoad::Clock::now() >= deadline) return k >= members.size();
        }
        return true;
    }

    Status read_entry(const Archive& ar, ExportedProgram& ep, const std::string& key,
                      const JsonAt& entry) {
        TensorMap& out = *this->out;
        if (!entry.is_object())
            return entry.error("expected {path_name, is_param, use_pickle, tensor_meta}");
        auto path_name = entry.str("path_name");
        if (!path_name.ok()) return path_name.error();
        bool pickled = false;
        if (JsonAt up = entry.get("use_pickle"); up.v && up.v->is_boolean())
            pickled = up.v->get<bool>();
        auto tm_at = entry.object("tensor_meta");
        if (!tm_at.ok()) return tm_at.error();
        // Reuse the graph reader's TensorMeta rules through a tiny program.
        TensorMeta meta;
        {
            JsonAt tm = tm_at.value();
            auto dt = tm.integer("dtype");
            if (!dt.ok()) return dt.error();
            auto st = scalar_type_from_code(dt.value());
            if (!st)
                return tm.get("dtype").error("unknown dtype code " + std::to_string(dt.value()));
            meta.dtype = *st;
            auto read_ints = [&](const char* field, std::vector<int64_t>& dst) -> Status {
                JsonAt list = tm.get(field);
                if (!list.v) return {};
                if (!list.v->is_array()) return list.error("expected an array");
                for (size_t k = 0; k < list.size(); ++k) {
                    JsonAt x = list.index(k);
                    if (x.v->is_number_integer()) {
                        dst.push_back(x.v->get<int64_t>());
                    } else if (x.has("as_int")) {
                        auto v = x.integer("as_int");
                        if (!v.ok()) return v.error();
                        dst.push_back(v.value());
                    } else {
                        return x.error("expected an integer size, found " + json_preview(*x.v));
                    }
                }
                return {};
            };
            if (Status s = read_ints("sizes", meta.sizes); !s.ok()) return s;
            if (Status s = read_ints("strides", meta.strides); !s.ok()) return s;
            JsonAt so = tm.get("storage_offset");
            if (so.v && so.v->is_number_integer()) {
                meta.storage_offset = so.v->get<int64_t>();
            } else if (so.v && so.has("as_int")) {
                auto v = so.integer("as_int");
                if (!v.ok()) return v.error();
                meta.storage_offset = v.value();
            }
            if (JsonAt rg = tm.get("requires_grad"); rg.v && rg.v->is_boolean())
                meta.requires_grad = rg.v->get<bool>();
        }
        if (pickled) {
            if (Status s = in_file(ar.budget.tensor(meta.sizes, scalar_type_size(meta.dtype),
                                                    "stand-in values for " + key),
                                   label);
                !s.ok())
                return s;
            ep.warnings.push_back(
                "tensor " + key +
                " is a pickled tensor subclass pt2lab cannot read: stand-in values are used");
            out[key] = std::make_shared<TensorData>(make_stand_in(key, meta));
            return {};
        }
        std::string rel = data_dir + path_name.value();
        if (!ar.has(rel))
            return entry.get("path_name")
                .error("points at \"" + rel + "\", which is not in the archive",
                       "the archive is incomplete; export it again");
        bool late = false;
        auto storage = ar.view_arriving(rel, late);
        if (!storage.ok()) return storage.error();
        auto t =
            tensor_from_storage(storage.value(), meta, ar.label(rel), "tensor " + key, ar.budget);
        if (!t.ok()) return t.error();
        // A copy made now would hold bytes that have not arrived: such a file opens whole.
        if (late && t.value().numel() && !storage.value().contains(t.value().bytes.data()))
            return file_error(ar.label(rel), "tensor " + key,
                              "is not a plain view of its record, and the record's bytes have "
                              "not all been read yet",
                              "open the file again once it is read whole");
        out[key] = std::make_shared<TensorData>(t.take());
        return {};
    }
};

// Checks every lifted parameter/buffer/constant against the graph's placeholder metadata.
Status check_state(const ExportedProgram& ep, const std::string& file) {
    for (const InputSpec& is : ep.signature.inputs) {
        if (is.kind != InputKind::Parameter && is.kind != InputKind::Buffer &&
            is.kind != InputKind::ConstantTensor)
            continue;
        auto t = ep.find_tensor(is.target);
        if (!t) {
            return file_error(
                file, "placeholder %" + is.arg,
                "no stored value for " + std::string(input_kind_name(is.kind)) + " " + is.target,
                "the archive's weights config does not list it; export the model again");
        }
        Node* ph = ep.graph->find(is.arg);
        if (!ph || !ph->meta.val.is_tensor()) continue;
        const TensorMeta& m = ph->meta.val.tensor;
        if (m.dtype != t->dtype || m.sizes != t->sizes) {
            auto shape = [](ScalarType d, const std::vector<int64_t>& s) {
                std::string out = std::string(scalar_type_abbr(d)) + "[";
                for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
                return out + "]";
            };
            return file_error(file, "placeholder %" + is.arg,
                              "weight size mismatch: the graph expects " + shape(m.dtype, m.sizes) +
                                  " for " + is.target + ", the stored tensor is " +
                                  shape(t->dtype, t->sizes),
                              "the weights do not belong to this graph; export the model again");
        }
    }
    return {};
}

// Stand-in values for the lifted inputs a file carries no values for, a few
// tensors per check of the deadline (a bare 10k-node JSON has thousands): true when done.
struct StandIns {
    size_t k = 0; // next input spec
    int made = 0;
};
Result<bool> fill_stand_ins(ExportedProgram& ep, const std::string& why, Budget& budget,
                            StandIns& at, ProgramLoad::Clock::time_point deadline) {
    const std::vector<InputSpec>& inputs = ep.signature.inputs;
    for (int since_check = 0; at.k < inputs.size(); ++at.k) {
        if (++since_check == 16) {
            since_check = 0;
            if (ProgramLoad::Clock::now() >= deadline) return false;
        }
        const InputSpec& is = inputs[at.k];
        if (is.kind != InputKind::Parameter && is.kind != InputKind::Buffer &&
            is.kind != InputKind::ConstantTensor)
            continue;
        if (ep.find_tensor(is.target)) continue;
        Node* ph = ep.graph->find(is.arg);
        if (!ph || !ph->meta.val.is_tensor()) continue;
        const TensorMeta& meta = ph->meta.val.tensor;
        if (Status s =
                in_file(budget.tensor(meta.sizes, std::max<size_t>(scalar_type_size(meta.dtype), 1),
                                      "stand-in values for " + is.target),
                        ep.source_file);
            !s.ok())
            return s.error();
        auto& dst = (is.kind == InputKind::Parameter ||
                     (is.kind == InputKind::Buffer && is.persistent.value_or(true)))
                        ? ep.state_dict
                        : ep.constants;
        dst[is.target] =
            std::make_shared<TensorData>(make_stand_in(is.target, ph->meta.val.tensor));
        ++at.made;
    }
    if (at.made)
        ep.warnings.push_back(why + ": " + std::to_string(at.made) +
                              " parameters/buffers use deterministic stand-in values (outputs will "
                              "not match PyTorch)");
    return true;
}

// RFC 4648 base64 (torch.export.save's extra_files hold text only); whitespace is skipped.
Result<std::vector<uint8_t>> decode_base64(const std::vector<uint8_t>& text,
                                           const std::string& file, const std::string& where) {
    std::vector<uint8_t> out;
    out.reserve(text.size() / 4 * 3);
    uint32_t acc = 0;
    int bits = 0;
    size_t pad = 0;
    for (uint8_t c : text) {
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else if (c == '=') {
            ++pad;
            continue;
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        else
            return file_error(file, where, "not base64 text",
                              "write the record with base64.b64encode");
        if (pad) return file_error(file, where, "base64 data after its '=' padding");
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<uint8_t>(acc >> bits));
            acc &= (1u << bits) - 1;
        }
    }
    if (pad > 2 || bits >= 6) return file_error(file, where, "base64 text of a wrong length");
    return out;
}

// extra/pt2lab/manifest.json (FORMATS.md section 3): provenance, reference outputs and
// train-mode buffers after one forward, each an .npy file written as base64 text.
Status read_extras(const Archive& ar, ExportedProgram& ep) {
    const std::string manifest_rel = "extra/pt2lab/manifest.json";
    if (!ar.has(manifest_rel)) return {};
    auto bytes = ar.read(manifest_rel);
    if (!bytes.ok()) return bytes.error();
    std::string label = ar.label(manifest_rel);
    auto j = parse_json_text(as_text(bytes.value()), label);
    if (!j.ok()) return j.error();
    JsonAt root = json_root(j.value(), &label);
    if (!root.is_object()) return root.error("expected an object");
    auto version = root.integer("version");
    if (!version.ok()) return version.error();
    if (version.value() != 2)
        return root.get("version").error("pt2lab.extra version " + std::to_string(version.value()) +
                                             " (this pt2lab reads version 2)",
                                         "regenerate the asset with tools/make_assets.py");
    if (JsonAt p = root.get("provenance"); p.v && p.v->is_object()) {
        Provenance& pv = ep.provenance;
        pv.present = true;
        pv.made_by = p.str_or("made_by", "");
        pv.torch_version = p.str_or("torch_version", "");
        pv.script = p.str_or("script", "");
        pv.model_class = p.str_or("model_class", "");
        pv.mode = p.str_or("mode", "");
        pv.note = p.str_or("note", "");
        if (JsonAt s = p.get("seed"); s.v && s.v->is_number_integer())
            pv.seed = s.v->get<int64_t>();
    }
    auto read_list = [&](const char* key, const char* name_key,
                         std::vector<NamedTensor>& out) -> Status {
        JsonAt list = root.get(key);
        if (!list.v) return {};
        if (!list.is_array()) return list.error("expected an array");
        for (size_t k = 0; k < list.size(); ++k) {
            JsonAt e = list.index(k);
            auto f = e.str("file");
            if (!f.ok()) return f.error();
            std::string rel = f.value();
            if (!ar.has(rel))
                return e.get("file").error("points at \"" + rel +
                                           "\", which is not in the archive");
            if (!ends_with(rel, ".npy.b64"))
                return e.get("file").error("\"" + rel + "\" is not an .npy.b64 record");
            auto data = ar.read(rel);
            if (!data.ok()) return data.error();
            auto npy = decode_base64(data.value(), ar.file, rel);
            if (!npy.ok()) return npy.error();
            // The array is a copy of the record's data.
            if (Status s = in_file(ar.budget.bytes(npy.value().size(), "array " + rel), ar.file);
                !s.ok())
                return s;
            auto t = read_npy(npy.value(), ar.label(rel));
            if (!t.ok()) return t.error();
            out.push_back({e.str_or(name_key, ""), t.take()});
        }
        return {};
    };
    if (Status s = read_list("outputs", "name", ep.reference_outputs); !s.ok()) return s;
    if (Status s = read_list("buffers_after", "target", ep.buffers_after); !s.ok()) return s;
    return {};
}

// data/sample_inputs/model.pt: torch.save of ((args...), {kwargs}), the example inputs
// torch.export.save keeps. They become the program's example inputs when their tensors
// match its user inputs one for one; anything else is a warning (the graph still loads).
void read_sample_inputs(const Archive& ar, ExportedProgram& ep) {
    const std::string rel = "data/sample_inputs/model.pt";
    if (!ar.has(rel)) return;
    auto bytes = ar.read(rel);
    auto fail = [&](const std::string& why) {
        ep.warnings.push_back(why + "; the program loads without its sample inputs");
    };
    if (!bytes.ok()) return fail(bytes.error().str());
    auto v = read_torch_save(bytes.value(), ar.file, rel);
    if (!v.ok()) return fail(v.error().str());
    const PyValue& top = v.value();
    if (top.kind != PyValue::Kind::Tuple || top.items.size() != 2 ||
        top.items[0].kind != PyValue::Kind::Tuple || top.items[1].kind != PyValue::Kind::Dict)
        return fail(ar.label(rel) + ": expected ((args...), {kwargs}), found " + top.describe());
    std::vector<const PyValue*> leaves;
    for (const PyValue& a : top.items[0].items) leaves.push_back(&a);
    for (const auto& kv : top.items[1].entries) leaves.push_back(&kv.second);
    std::vector<std::string> names;
    for (const InputSpec& is : ep.signature.inputs)
        if (is.kind == InputKind::UserInput) names.push_back(is.arg);
    if (leaves.size() != names.size())
        return fail(ar.label(rel) + ": " + std::to_string(leaves.size()) +
                    " sample inputs for a program with " + std::to_string(names.size()) +
                    " user inputs");
    std::vector<NamedTensor> inputs;
    for (size_t k = 0; k < leaves.size(); ++k) {
        if (leaves[k]->kind != PyValue::Kind::Tensor)
            return fail(ar.label(rel) + ": sample input " + names[k] + " is a " +
                        leaves[k]->describe() + ", not a tensor");
        inputs.push_back({names[k], *leaves[k]->tensor});
    }
    ep.example_inputs = std::move(inputs);
}

} // namespace

struct ProgramLoad::Impl {
    Impl(std::shared_ptr<const std::vector<uint8_t>> b, std::string f, const Limits& limits,
         std::vector<ByteRange> l)
        : bytes(std::move(b)), file(std::move(f)), late(std::move(l)),
          budget(limits, Budget::Scope::File, bytes->size()) {}

    enum class Kind { Json, Archive, Legacy };
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    std::string file;
    std::vector<ByteRange> late; // not yet in `bytes` (an archive's weights still arriving)
    std::vector<ArrivingRecord> arriving; // the records viewed before they arrived
    Budget budget;
    Kind kind = Kind::Json;
    bool started = false;
    std::optional<ZipArchive> zip;
    std::optional<Archive> ar;
    std::string model_rel;     // the archive's model JSON, relative to its root folder
    std::vector<uint8_t> text; // its bytes (a bare JSON file is read in place)
    ExportedProgram ep;
    std::unique_ptr<ProgramJsonReader> reader;
    // After the graph: the weights, then the constants, one tensor per step.
    enum class Data { Weights, Constants, Rest } data = Data::Weights;
    std::optional<PayloadRead> payloads;
    StandIns stand_ins; // a file without weights: how far its stand-ins are
    std::string weights_cfg;
    std::optional<Result<ExportedProgram>> result;

    Status start() {
        const std::vector<uint8_t>& b = *bytes;
        ep.source_file = file;
        if (b.empty())
            return file_error(file, "", "the file is empty",
                              "open a .pt2 or an ExportedProgram .json");
        size_t first = 0;
        while (first < b.size() &&
               (b[first] == ' ' || b[first] == '\n' || b[first] == '\r' || b[first] == '\t'))
            ++first;
        if (b.size() >= 2 && b[0] == 'P' && b[1] == 'K') return start_archive();
        if (!late.empty())
            return file_error(file, "", "only a .pt2 archive opens before all of it is read");
        if (first < b.size() && (b[first] == '{' || b[first] == '[')) {
            kind = Kind::Json;
            ep.format = "ExportedProgram JSON";
            reader = std::make_unique<ProgramJsonReader>(
                std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), file, ep);
            return {};
        }
        char magic[16];
        std::snprintf(magic, sizeof magic, "%02x %02x %02x %02x", b[0], b.size() > 1 ? b[1] : 0,
                      b.size() > 2 ? b[2] : 0, b.size() > 3 ? b[3] : 0);
        return file_error(file, "header",
                          std::string("not a PT2 archive or ExportedProgram JSON (first bytes ") +
                              magic + ")",
                          "open a .pt2 written by torch.export.save, or an ExportedProgram .json");
    }

    Status start_archive() {
        auto z = ZipArchive::open(bytes, file, late);
        if (!z.ok()) return z.error();
        zip.emplace(z.take());
        // Find the root folder from the records, not from the file name.
        std::string prefix, legacy;
        for (const ZipEntry& e : zip->entries()) {
            size_t m = e.name.find("models/");
            if (m != std::string::npos && ends_with(e.name, ".json") &&
                e.name.find('/', m + 7) == std::string::npos) {
                std::string p = e.name.substr(0, m);
                if (model_rel.empty() || ends_with(e.name, "models/model.json")) {
                    prefix = p;
                    model_rel = e.name.substr(m);
                }
            }
            if (ends_with(e.name, "serialized_exported_program.json")) legacy = e.name;
        }
        if (model_rel.empty() && !legacy.empty()) {
            const char* json_name = "serialized_exported_program.json";
            ar.emplace(Archive{*zip, legacy.substr(0, legacy.size() - std::strlen(json_name)), file,
                               budget});
            kind = Kind::Legacy;
            ep.format = "pt2 archive (legacy, torch <= 2.7)";
            ep.warnings.push_back(
                "legacy archive (torch <= 2.7 layout): the graph is read best-effort");
            return read_model(json_name);
        }
        if (model_rel.empty()) {
            bool has_format = false;
            for (const ZipEntry& e : zip->entries())
                has_format |= ends_with(e.name, "archive_format");
            return file_error(file, "models/model.json",
                              has_format
                                  ? "the PT2 archive has no models/model.json"
                                  : "this zip is not a PT2 archive: no models/model.json and no "
                                    "serialized_exported_program.json",
                              "save the program with torch.export.save(ep, \"model.pt2\")");
        }
        ar.emplace(Archive{*zip, prefix, file, budget});
        kind = Kind::Archive;
        ep.format = "pt2 archive";
        if (ar->has("archive_format")) {
            auto fmt = ar->read("archive_format");
            if (!fmt.ok()) return fmt.error();
            std::string f = as_text(fmt.value());
            while (!f.empty() && (f.back() == '\n' || f.back() == '\r' || f.back() == ' '))
                f.pop_back();
            if (f != "pt2")
                ep.warnings.push_back("archive_format is \"" + f + "\", expected \"pt2\"");
        }
        return read_model(model_rel);
    }

    Status read_model(const std::string& rel) {
        auto t = ar->read(rel);
        if (!t.ok()) return t.error();
        text = t.take();
        reader = std::make_unique<ProgramJsonReader>(
            std::string_view(reinterpret_cast<const char*>(text.data()), text.size()),
            ar->label(rel), ep);
        return {};
    }

    // After the graph: weights (or stand-ins), constants, sample inputs, extras;
    // until `deadline` (at least one tensor). True when all is read.
    Result<bool> rest(Clock::time_point deadline) {
        if (kind != Kind::Archive) {
            const char* why = kind == Kind::Json
                                  ? "a bare ExportedProgram JSON carries no weights"
                                  : "the legacy archive's weights are pickled "
                                    "(serialized_state_dict.pt), which pt2lab cannot read";
            return fill_stand_ins(ep, why, budget, stand_ins, deadline);
        }
        std::string model_name = basename_of(model_rel);
        model_name = model_name.substr(0, model_name.size() - 5);
        while (true) {
            if (payloads) {
                auto r = payloads->step(*ar, ep, deadline);
                if (!r.ok()) return r.error();
                if (!r.value()) return false;
                payloads.reset();
                data = data == Data::Weights ? Data::Constants : Data::Rest;
                if (Clock::now() >= deadline) return false;
                continue;
            }
            if (data == Data::Weights) {
                weights_cfg = "data/weights/" + model_name + "_weights_config.json";
                if (!ar->has(weights_cfg) &&
                    ar->has("data/weights/" + model_name + "_model_param_config.json"))
                    weights_cfg = "data/weights/" + model_name + "_model_param_config.json";
                bool needs_weights = false;
                for (const InputSpec& is : ep.signature.inputs)
                    needs_weights |=
                        is.kind == InputKind::Parameter || is.kind == InputKind::Buffer;
                if (ar->has(weights_cfg)) {
                    payloads.emplace();
                    if (Status s =
                            payloads->start(*ar, weights_cfg, "data/weights/", ep.state_dict);
                        !s.ok())
                        return s.error();
                    ep.has_weights = true;
                    continue;
                }
                if (needs_weights)
                    return file_error(
                        file, weights_cfg, "the archive has no weights config",
                        "the archive is incomplete; export it again with torch.export.save");
                data = Data::Constants;
            }
            if (data == Data::Constants) {
                std::string consts_cfg = "data/constants/" + model_name + "_constants_config.json";
                data = Data::Rest;
                if (ar->has(consts_cfg)) {
                    payloads.emplace();
                    if (Status s =
                            payloads->start(*ar, consts_cfg, "data/constants/", ep.constants);
                        !s.ok())
                        return s.error();
                    data = Data::Constants;
                    continue;
                }
            }
            // Data::Rest
            if (Status s = check_state(ep, ar->label(weights_cfg)); !s.ok()) return s.error();
            read_sample_inputs(*ar, ep);
            if (Status s = read_extras(*ar, ep); !s.ok()) return s.error();
            return true;
        }
    }

    bool end(Status s) {
        reader.reset();
        text = std::vector<uint8_t>();
        if (!s.ok()) {
            result = Result<ExportedProgram>(s.error());
        } else {
            ep.file_size = bytes->size();
            result = Result<ExportedProgram>(std::move(ep));
        }
        if (zip) arriving = zip->take_arriving();
        ar.reset();
        zip.reset();
        bytes.reset();
        return true;
    }
};

ProgramLoad::ProgramLoad(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string file,
                         const Limits& limits, std::vector<ByteRange> late)
    : impl_(std::make_unique<Impl>(std::move(bytes), std::move(file), limits, std::move(late))) {
    PT2LAB_CHECK(impl_->bytes != nullptr);
}
ProgramLoad::~ProgramLoad() = default;

bool ProgramLoad::step(Clock::time_point deadline) {
    Impl& m = *impl_;
    if (m.result) return true;
    if (!m.started) {
        m.started = true;
        if (Status s = m.start(); !s.ok()) return m.end(s);
        if (Clock::now() >= deadline) return false;
    }
    if (m.reader) {
        if (!m.reader->step(deadline)) return false;
        if (Status s = m.reader->status(); !s.ok()) return m.end(s);
        m.reader.reset();
        m.text = std::vector<uint8_t>(); // the graph is read: its text goes
        if (Clock::now() >= deadline) return false;
    }
    auto r = m.rest(deadline);
    if (!r.ok()) return m.end(r.error());
    if (!r.value()) return false;
    return m.end({});
}

LoadProgress ProgramLoad::progress() const {
    const Impl& m = *impl_;
    LoadProgress p;
    if (m.reader) {
        p.read = m.reader->progress();
        return p;
    }
    p.read.parsed = m.started;
    p.weights = m.started;
    if (m.kind != Impl::Kind::Archive) {
        p.stand_ins = true;
        p.tensors_done = m.stand_ins.k;
        p.tensors_total = m.ep.signature.inputs.size();
    } else if (m.payloads && m.data == Impl::Data::Weights) {
        p.tensors_done = m.payloads->k;
        p.tensors_total = m.payloads->total;
    } else if (m.data != Impl::Data::Weights) {
        p.tensors_done = p.tensors_total = 1; // the weights are read; constants and the rest
    }
    return p;
}

std::vector<ArrivingRecord> ProgramLoad::take_arriving() {
    if (impl_->zip) return impl_->zip->take_arriving();
    std::vector<ArrivingRecord> out;
    out.swap(impl_->arriving);
    return out;
}

Result<ExportedProgram> ProgramLoad::finish() {
    PT2LAB_CHECK(impl_->result.has_value());
    Result<ExportedProgram> r = std::move(*impl_->result);
    impl_->result.reset();
    return r;
}

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return file_error(path, "", "cannot open the file", "check the path");
    std::vector<uint8_t> out;
    uint8_t buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
    bool err = std::ferror(f) != 0;
    std::fclose(f);
    if (err) return file_error(path, "", "read error");
    return out;
}

Result<ExportedProgram> load_program(std::vector<uint8_t> bytes, const std::string& file,
                                     const Limits& limits) {
    return load_program(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), file,
                        limits);
}

Result<ExportedProgram> load_program(std::shared_ptr<const std::vector<uint8_t>> shared,
                                     const std::string& file, const Limits& limits) {
    ProgramLoad load(std::move(shared), file, limits);
    load.step(ProgramLoad::Clock::time_point::max());
    return load.finish();
}

Result<ExportedProgram> load_program_file(const std::string& path, const Limits& limits) {
    auto bytes = read_file_bytes(path);
    if (!bytes.ok()) return bytes.error();
    return load_program(bytes.take(), basename_of(path), limits);
}

TensorData make_stand_in(const std::string& fqn, const TensorMeta& meta) {
    TensorData t;
    t.dtype = meta.dtype;
    t.sizes = meta.sizes;
    t.stand_in = true;
    t.requires_grad = meta.requires_grad;
    size_t item = scalar_type_size(meta.dtype);
    auto leaf =
        fqn.substr(fqn.find_last_of('.') == std::string::npos ? 0 : fqn.find_last_of('.') + 1);
    const int64_t n = t.numel();
    if (meta.dtype != ScalarType::Float) { // integers (num_batches_tracked) start at 0
        t.bytes = Bytes(std::vector<uint8_t>(static_cast<size_t>(n) * (item ? item : 1), 0));
        return t;
    }
    std::vector<float> f(static_cast<size_t>(n), 0.0f);
    auto done = [&]() {
        std::vector<uint8_t> b(f.size() * sizeof(float));
        if (!f.empty()) std::memcpy(b.data(), f.data(), b.size());
        t.bytes = Bytes(std::move(b));
        return t;
    };
    if (leaf == "running_var" || (leaf == "weight" && meta.sizes.size() == 1)) {
        for (float& v : f) v = 1.0f;
        return done();
    }
    if (leaf == "running_mean" ||
        (leaf == "bias" && meta.sizes.size() == 1 && fqn.find("bn") != std::string::npos))
        return done();
    int64_t fan_in = 1;
    for (size_t k = 1; k < meta.sizes.size(); ++k) fan_in *= meta.sizes[k];
    if (meta.sizes.size() <= 1) fan_in = meta.sizes.empty() ? 1 : meta.sizes[0];
    float bound = 1.0f / std::sqrt(static_cast<float>(fan_in > 0 ? fan_in : 1));
    SeededRng rng(fnv1a(fqn));
    for (float& v : f) v = rng.uniform(-bound, bound);
    return done();
}

} // namespace pt2lab
