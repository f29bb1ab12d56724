// The PT2 archive's records in the order torch.export.save writes them:
// weights and their config, constants and theirs, the program, the sample
// inputs, then the archive's own records.
#include "io/pt2_writer.h"

#include <set>

#include "io/export_json_writer.h"
#include "io/torch_save_writer.h"
#include "io/zip_writer.h"

namespace pt2lab {

namespace {

struct Payload {
    std::string fqn;
    std::shared_ptr<const TensorData> tensor;
    bool is_param = false;
};

TensorMeta meta_of(const TensorData& t) {
    TensorMeta m;
    m.dtype = t.dtype;
    m.sizes = t.sizes;
    m.requires_grad = t.requires_grad;
    return m; // contiguous, at offset 0, on the CPU
}

// Writes each tensor's bytes as <dir><prefix>N (one record per distinct buffer: tied
// weights share theirs, as torch shares a storage) and the config naming them.
Status write_payloads(ZipWriter& z, const std::vector<Payload>& items, const std::string& dir,
                      const std::string& prefix, const std::string& config) {
    PyJson j;
    j.begin_object().key("config").begin_object();
    std::vector<std::pair<const Payload*, std::string>> written; // buffer -> its record
    for (const Payload& p : items) {
        const TensorData& t = *p.tensor;
        std::string path;
        for (const auto& [other, name] : written) {
            const TensorData& o = *other->tensor;
            if (t.bytes.size() && o.bytes.data() == t.bytes.data() &&
                o.bytes.size() == t.bytes.size() && o.dtype == t.dtype)
                path = name;
        }
        if (path.empty()) {
            path = prefix + std::to_string(written.size());
            if (Status s = z.add(dir + path, t.bytes.data(), t.bytes.size()); !s.ok()) return s;
            written.emplace_back(&p, path);
        }
        j.key(p.fqn).begin_object().key("path_name").str(path);
        j.key("is_param").boolean(p.is_param).key("use_pickle").boolean(false);
        j.key("tensor_meta");
        write_tensor_meta(j, meta_of(t));
        j.end_object();
    }
    j.end_object().end_object();
    return z.add(dir + config, j.text());
}

} // namespace

std::string archive_root_for(const std::string& file_name) {
    std::string base = file_name.substr(
        file_name.find_last_of("/\\") == std::string::npos ? 0 : file_name.find_last_of("/\\") + 1);
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".pt2") == 0)
        base.resize(base.size() - 4);
    return base.empty() ? "model" : base;
}

Result<std::vector<uint8_t>> write_pt2(const ExportedProgram& ep, const std::string& root,
                                       const TensorMap* current) {
    auto text = write_exported_program_json(ep);
    if (!text.ok()) return text.error();

    // Weights: the signature's parameters and persistent buffers in its order, then
    // any other state_dict entry; constants: tensor constants and non-persistent buffers.
    std::vector<Payload> weights, constants;
    std::set<std::string> seen;
    Status missing;
    auto take = [&](const std::string& fqn, bool is_param, const TensorMap& from,
                    std::vector<Payload>& into) {
        if (!seen.insert(fqn).second) return;
        std::shared_ptr<const TensorData> own, t;
        if (auto it = from.find(fqn); it != from.end()) own = t = it->second;
        if (current)
            if (auto it = current->find(fqn); it != current->end()) t = it->second;
        if (!t) {
            if (missing.ok()) missing = make_error(fqn, "no value to write for " + fqn);
            return;
        }
        if ((t->stand_in || (own && own->stand_in)) && missing.ok())
            missing = make_error(fqn, "the values of " + fqn + " are pt2lab's stand-ins",
                                 "the file held no weights; a .pt2 of stand-ins would pass "
                                 "them off as the model's. Open the model's own .pt2");
        into.push_back({fqn, t, is_param});
    };
    for (const InputSpec& is : ep.signature.inputs) {
        if (is.kind == InputKind::Parameter)
            take(is.target, true, ep.state_dict, weights);
        else if (is.kind == InputKind::Buffer && is.persistent.value_or(true))
            take(is.target, false, ep.state_dict, weights);
        else if (is.kind == InputKind::Buffer || is.kind == InputKind::ConstantTensor)
            take(is.target, false, ep.constants, constants);
    }
    for (const auto& kv : ep.state_dict) take(kv.first, false, ep.state_dict, weights);
    for (const auto& kv : ep.constants) take(kv.first, false, ep.constants, constants);
    if (!missing.ok()) return missing.error();

    ZipWriter z(root);
    if (Status s =
            write_payloads(z, weights, "data/weights/", "weight_", "model_weights_config.json");
        !s.ok())
        return s.error();
    if (Status s = write_payloads(z, constants, "data/constants/", "tensor_",
                                  "model_constants_config.json");
        !s.ok())
        return s.error();
    if (Status s = z.add("models/model.json", text.value()); !s.ok()) return s.error();
    // torch.save of (example args, {}) ; b"" when the program has none, as torch writes.
    std::vector<uint8_t> inputs;
    if (!ep.example_inputs.empty()) {
        std::vector<const TensorData*> ts;
        for (const NamedTensor& t : ep.example_inputs) ts.push_back(&t.tensor);
        auto saved = write_sample_inputs(ts);
        if (!saved.ok()) return saved.error();
        inputs = saved.take();
    }
    Status s = z.add("data/sample_inputs/model.pt", inputs);
    if (s.ok()) s = z.add("archive_format", std::string_view("pt2"));
    if (s.ok()) s = z.add("archive_version", std::string_view("0"));
    if (s.ok()) s = z.add(".data/version", std::string_view("6\n"));
    if (s.ok()) s = z.add("byteorder", std::string_view("little"));
    if (s.ok()) s = z.add(".data/serialization_id", serialization_id(z.names(), z.crcs()));
    if (!s.ok()) return s.error();
    return z.finish();
}

} // namespace pt2lab
