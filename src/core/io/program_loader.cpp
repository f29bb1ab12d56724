// PT2 archive layout, weights, constants and pt2lab extras.
#include "io/program_loader.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "io/export_json.h"
#include "io/npy.h"
#include "io/zip.h"
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

std::string basename_of(const std::string& path) {
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A read-only view of the archive rooted at its top folder.
struct Archive {
    const ZipArchive& zip;
    std::string prefix; // "conv_relu/" or ""
    std::string file;   // the archive's name for messages

    bool has(const std::string& rel) const { return zip.find(prefix + rel) != nullptr; }
    Result<std::vector<uint8_t>> read(const std::string& rel) const {
        const ZipEntry* e = zip.find(prefix + rel);
        if (!e) return file_error(file, rel, "record missing from the archive");
        return zip.read(*e);
    }
    std::string label(const std::string& rel) const { return file + ":" + rel; }
};

std::string as_text(const std::vector<uint8_t>& b) {
    return std::string(b.begin(), b.end());
}

// Cuts a tensor out of raw storage bytes, honouring strides and offset.
Result<TensorData> tensor_from_storage(const std::vector<uint8_t>& storage, const TensorMeta& m,
                                       const std::string& file, const std::string& where) {
    TensorData t;
    t.dtype = m.dtype;
    t.sizes = m.sizes;
    t.requires_grad = m.requires_grad;
    size_t item = scalar_type_size(m.dtype);
    if (item == 0)
        return file_error(file, where,
                          "unsupported dtype " + std::string(scalar_type_name(m.dtype)));
    int64_t numel = t.numel();
    std::vector<int64_t> strides = m.strides;
    if (strides.size() != m.sizes.size()) { // contiguous by default
        strides.assign(m.sizes.size(), 1);
        for (int k = static_cast<int>(m.sizes.size()) - 2; k >= 0; --k)
            strides[static_cast<size_t>(k)] =
                strides[static_cast<size_t>(k) + 1] * m.sizes[static_cast<size_t>(k) + 1];
    }
    int64_t extent = numel == 0 ? 0 : m.storage_offset + 1;
    for (size_t k = 0; k < m.sizes.size() && numel; ++k) extent += (m.sizes[k] - 1) * strides[k];
    uint64_t need = static_cast<uint64_t>(extent) * item;
    if (storage.size() < need) {
        std::string shape = "[";
        for (size_t k = 0; k < m.sizes.size(); ++k)
            shape += (k ? ", " : "") + std::to_string(m.sizes[k]);
        shape += "]";
        return file_error(file, where,
                          "weight size mismatch: " + std::string(scalar_type_name(m.dtype)) +
                              shape + " needs " + std::to_string(need) +
                              " bytes, the stored data has " + std::to_string(storage.size()),
                          "the weights do not belong to this graph; export the model again");
    }
    t.bytes.resize(static_cast<size_t>(numel) * item);
    // Walk the index space in C order.
    std::vector<int64_t> idx(m.sizes.size(), 0);
    for (int64_t n = 0; n < numel; ++n) {
        int64_t off = m.storage_offset;
        for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * strides[k];
        std::memcpy(&t.bytes[static_cast<size_t>(n) * item],
                    &storage[static_cast<size_t>(off) * item], item);
        for (int k = static_cast<int>(idx.size()) - 1; k >= 0; --k) {
            if (++idx[static_cast<size_t>(k)] < m.sizes[static_cast<size_t>(k)]) break;
            idx[static_cast<size_t>(k)] = 0;
        }
    }
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
// and fills `out` for each fqn in `wanted`.
Status read_payloads(const Archive& ar, const std::string& config_rel, const std::string& data_dir,
                     ExportedProgram& ep, TensorMap& out) {
    auto bytes = ar.read(config_rel);
    if (!bytes.ok()) return bytes.error();
    std::string label = ar.label(config_rel);
    auto j = parse_json_text(as_text(bytes.value()), label);
    if (!j.ok()) return j.error();
    JsonAt root = json_root(j.value(), &label);
    auto config = root.object("config");
    if (!config.ok()) return config.error();
    for (auto it = config.value().v->begin(); it != config.value().v->end(); ++it) {
        JsonAt entry{&*it, config.value().path + "." + it.key(), &label};
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
            auto read_ints = [&](const char* key, std::vector<int64_t>& dst) -> Status {
                JsonAt list = tm.get(key);
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
            ep.warnings.push_back(
                "tensor " + it.key() +
                " is a pickled tensor subclass pt2lab cannot read: stand-in values are used");
            out[it.key()] = std::make_shared<TensorData>(make_stand_in(it.key(), meta));
            continue;
        }
        std::string rel = data_dir + path_name.value();
        if (!ar.has(rel))
            return entry.get("path_name")
                .error("points at \"" + rel + "\", which is not in the archive",
                       "the archive is incomplete; export it again");
        auto storage = ar.read(rel);
        if (!storage.ok()) return storage.error();
        auto t = tensor_from_storage(storage.value(), meta, ar.label(rel), "tensor " + it.key());
        if (!t.ok()) return t.error();
        out[it.key()] = std::make_shared<TensorData>(t.take());
    }
    return {};
}

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

void fill_stand_ins(ExportedProgram& ep, const std::string& why) {
    int made = 0;
    for (const InputSpec& is : ep.signature.inputs) {
        if (is.kind != InputKind::Parameter && is.kind != InputKind::Buffer &&
            is.kind != InputKind::ConstantTensor)
            continue;
        if (ep.find_tensor(is.target)) continue;
        Node* ph = ep.graph->find(is.arg);
        if (!ph || !ph->meta.val.is_tensor()) continue;
        auto& dst = (is.kind == InputKind::Parameter ||
                     (is.kind == InputKind::Buffer && is.persistent.value_or(true)))
                        ? ep.state_dict
                        : ep.constants;
        dst[is.target] =
            std::make_shared<TensorData>(make_stand_in(is.target, ph->meta.val.tensor));
        ++made;
    }
    if (made)
        ep.warnings.push_back(why + ": " + std::to_string(made) +
                              " parameters/buffers use deterministic stand-in values (outputs will "
                              "not match PyTorch)");
}

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
    if (JsonAt p = root.get("provenance"); p.v && p.v->is_object()) {
        Provenance& pv = ep.provenance;
        pv.present = true;
        pv.made_by = p.str_or("made_by", "");
        pv.torch_version = p.str_or("torch_version", "");
        pv.emulates_torch = p.str_or("emulates_torch", "");
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
            auto data = ar.read(rel);
            if (!data.ok())
                return e.get("file").error("points at \"" + rel +
                                           "\", which is not in the archive");
            auto t = read_npy(data.value(), ar.label(rel));
            if (!t.ok()) return t.error();
            out.push_back({e.str_or(name_key, ""), t.take()});
        }
        return {};
    };
    if (Status s = read_list("inputs", "name", ep.example_inputs); !s.ok()) return s;
    if (Status s = read_list("outputs", "name", ep.reference_outputs); !s.ok()) return s;
    if (Status s = read_list("buffers_after", "target", ep.buffers_after); !s.ok()) return s;
    return {};
}

Result<ExportedProgram> load_archive(std::vector<uint8_t> bytes, const std::string& file) {
    auto z = ZipArchive::open(std::move(bytes), file);
    if (!z.ok()) return z.error();
    const ZipArchive& zip = z.value();
    // Find the root folder from the records, not from the file name.
    std::string prefix, model_rel, legacy;
    for (const ZipEntry& e : zip.entries()) {
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
    ExportedProgram ep;
    ep.source_file = file;
    if (model_rel.empty() && !legacy.empty()) {
        Archive ar{
            zip, legacy.substr(0, legacy.size() - std::strlen("serialized_exported_program.json")),
            file};
        auto text = ar.read("serialized_exported_program.json");
        if (!text.ok()) return text.error();
        ep.format = "pt2 archive (legacy, torch <= 2.7)";
        ep.warnings.push_back(
            "legacy archive (torch <= 2.7 layout): the graph is read best-effort");
        if (Status s = read_exported_program_json(as_text(text.value()),
                                                  ar.label("serialized_exported_program.json"), ep);
            !s.ok())
            return s.error();
        fill_stand_ins(ep, "the legacy archive's weights are pickled (serialized_state_dict.pt), "
                           "which pt2lab cannot read");
        return ep;
    }
    if (model_rel.empty()) {
        bool has_format = false;
        for (const ZipEntry& e : zip.entries()) has_format |= ends_with(e.name, "archive_format");
        return file_error(file, "models/model.json",
                          has_format ? "the PT2 archive has no models/model.json"
                                     : "this zip is not a PT2 archive: no models/model.json and no "
                                       "serialized_exported_program.json",
                          "save the program with torch.export.save(ep, \"model.pt2\")");
    }
    Archive ar{zip, prefix, file};
    ep.format = "pt2 archive";
    if (ar.has("archive_format")) {
        auto fmt = ar.read("archive_format");
        if (!fmt.ok()) return fmt.error();
        std::string f = as_text(fmt.value());
        while (!f.empty() && (f.back() == '\n' || f.back() == '\r' || f.back() == ' '))
            f.pop_back();
        if (f != "pt2") ep.warnings.push_back("archive_format is \"" + f + "\", expected \"pt2\"");
    }
    auto text = ar.read(model_rel);
    if (!text.ok()) return text.error();
    if (Status s = read_exported_program_json(as_text(text.value()), ar.label(model_rel), ep);
        !s.ok())
        return s.error();

    std::string model_name = basename_of(model_rel);
    model_name = model_name.substr(0, model_name.size() - 5);
    std::string weights_cfg = "data/weights/" + model_name + "_weights_config.json";
    if (!ar.has(weights_cfg) && ar.has("data/weights/" + model_name + "_model_param_config.json"))
        weights_cfg = "data/weights/" + model_name + "_model_param_config.json";
    bool needs_weights = false;
    for (const InputSpec& is : ep.signature.inputs)
        needs_weights |= is.kind == InputKind::Parameter || is.kind == InputKind::Buffer;
    if (ar.has(weights_cfg)) {
        if (Status s = read_payloads(ar, weights_cfg, "data/weights/", ep, ep.state_dict); !s.ok())
            return s.error();
        ep.has_weights = true;
    } else if (needs_weights) {
        return file_error(file, weights_cfg, "the archive has no weights config",
                          "the archive is incomplete; export it again with torch.export.save");
    }
    std::string consts_cfg = "data/constants/" + model_name + "_constants_config.json";
    if (ar.has(consts_cfg)) {
        if (Status s = read_payloads(ar, consts_cfg, "data/constants/", ep, ep.constants); !s.ok())
            return s.error();
    }
    if (Status s = check_state(ep, ar.label(weights_cfg)); !s.ok()) return s.error();
    if (Status s = read_extras(ar, ep); !s.ok()) return s.error();
    return ep;
}

} // namespace

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

Result<ExportedProgram> load_program(std::vector<uint8_t> bytes, const std::string& file) {
    size_t first = 0;
    while (first < bytes.size() && (bytes[first] == ' ' || bytes[first] == '\n' ||
                                    bytes[first] == '\r' || bytes[first] == '\t'))
        ++first;
    if (bytes.empty())
        return file_error(file, "", "the file is empty", "open a .pt2 or an ExportedProgram .json");
    if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K')
        return load_archive(std::move(bytes), file);
    if (first < bytes.size() && (bytes[first] == '{' || bytes[first] == '[')) {
        ExportedProgram ep;
        ep.source_file = file;
        ep.format = "ExportedProgram JSON";
        if (Status s = read_exported_program_json(as_text(bytes), file, ep); !s.ok())
            return s.error();
        fill_stand_ins(ep, "a bare ExportedProgram JSON carries no weights");
        return ep;
    }
    char magic[16];
    std::snprintf(magic, sizeof magic, "%02x %02x %02x %02x", bytes[0],
                  bytes.size() > 1 ? bytes[1] : 0, bytes.size() > 2 ? bytes[2] : 0,
                  bytes.size() > 3 ? bytes[3] : 0);
    return file_error(file, "header",
                      std::string("not a PT2 archive or ExportedProgram JSON (first bytes ") +
                          magic + ")",
                      "open a .pt2 written by torch.export.save, or an ExportedProgram .json");
}

Result<ExportedProgram> load_program_file(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes.ok()) return bytes.error();
    return load_program(bytes.take(), basename_of(path));
}

TensorData make_stand_in(const std::string& fqn, const TensorMeta& meta) {
    TensorData t;
    t.dtype = meta.dtype;
    t.sizes = meta.sizes;
    t.stand_in = true;
    t.requires_grad = meta.requires_grad;
    size_t item = scalar_type_size(meta.dtype);
    t.bytes.assign(static_cast<size_t>(t.numel()) * (item ? item : 1), 0);
    auto leaf =
        fqn.substr(fqn.find_last_of('.') == std::string::npos ? 0 : fqn.find_last_of('.') + 1);
    if (meta.dtype != ScalarType::Float) return t; // integers (num_batches_tracked) start at 0
    float* f = reinterpret_cast<float*>(t.bytes.data());
    int64_t n = t.numel();
    if (leaf == "running_var" || (leaf == "weight" && meta.sizes.size() == 1)) {
        for (int64_t k = 0; k < n; ++k) f[k] = 1.0f;
        return t;
    }
    if (leaf == "running_mean" ||
        (leaf == "bias" && meta.sizes.size() == 1 && fqn.find("bn") != std::string::npos))
        return t;
    int64_t fan_in = 1;
    for (size_t k = 1; k < meta.sizes.size(); ++k) fan_in *= meta.sizes[k];
    if (meta.sizes.size() <= 1) fan_in = meta.sizes.empty() ? 1 : meta.sizes[0];
    float bound = 1.0f / std::sqrt(static_cast<float>(fan_in > 0 ? fan_in : 1));
    SeededRng rng(fnv1a(fqn));
    for (int64_t k = 0; k < n; ++k) f[k] = rng.uniform(-bound, bound);
    return t;
}

} // namespace pt2lab
