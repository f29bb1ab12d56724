// symbolic_trace JSON -> Graph, with torch.fx's exact node names.
#include "io/fx_json.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "graph/namespace.h"
#include "util/checked.h"
#include "util/json_read.h"
#include "util/limits.h"
#include "util/pyrepr.h"

namespace pt2lab {

namespace {

using NodeResolver = std::function<Result<Argument>(const std::string&, const JsonAt&)>;

// Text printed verbatim into code or tables (reprs) must stay on its line.
bool has_control_chars(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return true;
    return false;
}

// "cpu", "cuda:0": what device_repr prints as device(type='cuda', index=0).
bool is_device_text(const std::string& s) {
    size_t colon = s.find(':');
    std::string type = s.substr(0, colon);
    if (type.empty() || !node_name_problem(type).empty()) return false;
    if (colon == std::string::npos) return true;
    std::string index = s.substr(colon + 1);
    if (index.empty() || index.size() > 9) return false;
    for (char c : index)
        if (c < '0' || c > '9') return false;
    return true;
}

Result<Argument> decode_arg(const JsonAt& a, const NodeResolver& node_ref) {
    const json& v = *a.v;
    if (v.is_null()) return Argument::none();
    if (v.is_boolean()) return Argument::from_bool(v.get<bool>());
    if (v.is_number_integer()) return Argument::from_int(v.get<int64_t>());
    if (v.is_number_float()) return Argument::from_float(v.get<double>());
    if (v.is_string()) return Argument::from_string(v.get<std::string>());
    if (v.is_array()) {
        std::vector<Argument> items;
        for (size_t k = 0; k < v.size(); ++k) {
            auto x = decode_arg(a.index(k), node_ref);
            if (!x.ok()) return x;
            items.push_back(x.take());
        }
        return Argument::list(std::move(items));
    }
    auto key = a.union_key();
    if (!key.ok()) return key.error();
    JsonAt body = a.get(key.value());
    const std::string& k = key.value();
    if (k == "node") {
        auto name = body.as_str();
        if (!name.ok()) return name.error();
        return node_ref(name.value(), body);
    }
    if (k == "tuple") {
        if (!body.is_array()) return body.error("expected an array");
        std::vector<Argument> items;
        for (size_t i = 0; i < body.size(); ++i) {
            auto x = decode_arg(body.index(i), node_ref);
            if (!x.ok()) return x;
            items.push_back(x.take());
        }
        return Argument::tuple(std::move(items));
    }
    if (k == "dict") {
        if (!body.is_array()) return body.error("expected an array of [key, value] pairs");
        Argument d;
        d.kind = ArgKind::Dict;
        for (size_t i = 0; i < body.size(); ++i) {
            JsonAt pair = body.index(i);
            if (!pair.is_array() || pair.size() != 2 || !pair.v->at(0).is_string())
                return pair.error("expected [key, value] with a string key");
            auto x = decode_arg(pair.index(1), node_ref);
            if (!x.ok()) return x;
            d.keys.push_back(pair.v->at(0).get<std::string>());
            d.items.push_back(x.take());
        }
        return d;
    }
    if (k == "float") {
        auto d = body.as_double();
        if (!d.ok()) return d.error();
        return Argument::from_float(d.value());
    }
    if (k == "dtype") {
        auto s = body.as_str();
        if (!s.ok()) return s.error();
        auto dt = scalar_type_from_name(s.value());
        if (!dt) return body.error("unknown dtype \"" + s.value() + "\"");
        return Argument::from_dtype(*dt);
    }
    if (k == "device") {
        auto s = body.as_str();
        if (!s.ok()) return s.error();
        if (!is_device_text(s.value()))
            return body.error("device " + py_str_repr(s.value()) +
                              " is not a device name (\"cpu\", \"cuda:0\")");
        return Argument::device(s.value());
    }
    if (k == "repr") {
        auto s = body.as_str();
        if (!s.ok()) return s.error();
        if (has_control_chars(s.value()))
            return body.error("repr " + py_str_repr(s.value()) +
                                  " holds a line break or control character",
                              "a repr is printed into the code as written; it must be one line");
        return Argument::repr(s.value());
    }
    return a.error("unknown argument encoding \"" + k + "\"");
}

// Why `target` cannot be the target of an `op` node torch.fx made ("" if it can).
std::string target_problem(Op op, const std::string& target) {
    switch (op) {
    case Op::Placeholder:
    case Op::CallMethod: return node_name_problem(target);
    case Op::GetAttr:
    case Op::CallModule: return attribute_path_problem(target);
    case Op::CallFunction: return qualified_name_problem(target);
    case Op::Output: return target == "output" ? "" : "an output node's target is \"output\"";
    }
    return {};
}

class FxReader {
public:
    FxReader(const std::string& file, const Limits& limits)
        : file_(file), budget_(limits, Budget::Scope::File, 0) {}

    Result<Argument> arg(const JsonAt& a) {
        return decode_arg(a, [this](const std::string& name, const JsonAt& at) -> Result<Argument> {
            auto it = nodes_.find(name);
            if (it == nodes_.end())
                return at.error("reference to undefined node \"" + name + "\"",
                                "nodes must be listed in graph order");
            return Argument::from_node(it->second);
        });
    }

    Result<FxGraph> run(const json& root) {
        JsonAt r = json_root(root, &file_);
        auto fmt = r.str("format");
        if (!fmt.ok()) return fmt.error();
        if (fmt.value() != "pt2lab.fx_graph")
            return r.get("format").error("expected \"pt2lab.fx_graph\", found \"" + fmt.value() +
                                         "\"");
        auto version = r.integer("version");
        if (!version.ok()) return version.error();
        if (version.value() != 1)
            return r.get("version").error("unsupported version " + std::to_string(version.value()) +
                                          " (pt2lab reads 1)");
        FxGraph fx;
        fx.name = r.str_or("name", "");
        fx.module_class = r.str_or("module_class", "");
        if (JsonAt p = r.get("producer"); p.v && p.v->is_object())
            fx.torch_version = p.str_or("torch_version", "");
        if (JsonAt m = r.get("modules"); m.v && m.v->is_object())
            for (auto it = m.v->begin(); it != m.v->end(); ++it) {
                if (!it->is_string()) continue;
                JsonAt at{&*it, m.path + "." + it.key(), &file_};
                if (std::string p = attribute_path_problem(it.key()); !p.empty())
                    return at.error(p, "module paths are printed into gm.code");
                if (std::string p = qualified_name_problem(it->get<std::string>()); !p.empty())
                    return at.error(p);
                fx.modules[it.key()] = it->get<std::string>();
            }
        if (JsonAt im = r.get("impure_modules"); im.v && im.is_array())
            for (size_t i = 0; i < im.size(); ++i) {
                auto name = im.index(i).as_str();
                if (!name.ok()) return name.error();
                fx.impure_modules.push_back(name.value());
            }
        if (JsonAt at = r.get("attributes"); at.v && at.v->is_object())
            for (auto it = at.v->begin(); it != at.v->end(); ++it) {
                JsonAt attr{&*it, at.path + "." + it.key(), &file_};
                if (std::string p = attribute_path_problem(it.key()); !p.empty())
                    return attr.error(p, "attribute paths are printed into gm.code");
                std::vector<int64_t> shape;
                auto sh = it->find("shape");
                if (it->is_object() && sh != it->end() && sh->is_array())
                    for (const auto& d : *sh)
                        if (d.is_number_integer()) shape.push_back(d.get<int64_t>());
                // module_from_fx allocates zero float32 tensors of these shapes.
                if (Status s = budget_.tensor(shape, 4, "attribute " + it.key()); !s.ok()) {
                    Error e = s.error();
                    e.where = attr.path;
                    e.message = "attribute " + it.key() + ": " + e.message;
                    e.file = file_;
                    return e;
                }
                fx.attributes[it.key()] = shape;
            }
        auto ns = r.array("nodes");
        if (!ns.ok()) return ns.error();
        fx.graph = std::make_unique<Graph>();
        Graph& g = *fx.graph;
        for (size_t k = 0; k < ns.value().size(); ++k) {
            JsonAt n = ns.value().index(k);
            auto op_s = n.str("op");
            if (!op_s.ok()) return op_s.error();
            auto op = op_from_name(op_s.value());
            if (!op) return n.get("op").error("unknown opcode \"" + op_s.value() + "\"");
            auto name = n.str("name");
            if (!name.ok()) return name.error();
            if (std::string p = node_name_problem(name.value()); !p.empty())
                return n.get("name").error(p, "names come from torch.fx and are printed into "
                                              "gm.code; this one was edited into the file");
            auto target = n.str("target");
            if (!target.ok()) return target.error();
            if (std::string p = target_problem(*op, target.value()); !p.empty())
                return n.get("target").error(p, "targets are printed into gm.code as written");
            if (nodes_.count(name.value()))
                return n.get("name").error("duplicate node name \"" + name.value() + "\"");
            std::vector<Argument> args;
            Kwargs kwargs;
            if (JsonAt a = n.get("args"); a.v) {
                if (!a.is_array()) return a.error("expected an array");
                for (size_t i = 0; i < a.size(); ++i) {
                    auto x = arg(a.index(i));
                    if (!x.ok()) return x.error();
                    args.push_back(x.take());
                }
            }
            if (JsonAt kw = n.get("kwargs"); kw.v) {
                if (!kw.is_object()) return kw.error("expected an object");
                for (auto it = kw.v->begin(); it != kw.v->end(); ++it) {
                    if (!node_name_problem(it.key()).empty())
                        return kw.error("keyword argument name " + py_str_repr(it.key()) +
                                        " is not a Python identifier");
                    auto x = arg(JsonAt{&*it, kw.path + "." + it.key(), &file_});
                    if (!x.ok()) return x.error();
                    kwargs.emplace_back(it.key(), x.take());
                }
            }
            Node* node = g.create_node(*op, target.value(), std::move(args), std::move(kwargs),
                                       name.value());
            g.force_name(node, name.value());
            if (JsonAt tr = n.get("target_repr"); tr.v && tr.v->is_string()) {
                if (has_control_chars(tr.v->get<std::string>()))
                    return tr.error("target_repr holds a line break or control character",
                                    "it is printed into the node table as written");
                node->meta.other["target_repr"] = tr.v->get<std::string>();
            }
            nodes_[name.value()] = node;
        }
        if (JsonAt e = r.get("expected"); e.v && e.v->is_object()) {
            fx.expected_graph = e.str_or("graph", "");
            fx.expected_code = e.str_or("code", "");
            fx.expected_tabular = e.str_or("tabular", "");
        }
        return fx;
    }

private:
    const std::string& file_;
    Budget budget_;
    std::map<std::string, Node*> nodes_;
};

} // namespace

GraphModule module_from_fx(FxGraph fx) {
    GraphModule gm;
    gm.graph = std::move(fx.graph);
    gm.class_name = fx.module_class;
    gm.traced_by = fx.torch_version;
    for (const auto& [name, type] : fx.modules) {
        Submodule sub;
        sub.type = type;
        if (type.find("MinMaxObserver") != std::string::npos)
            sub.observer = ObserverConfig::minmax_default();
        sub.impure = std::find(fx.impure_modules.begin(), fx.impure_modules.end(), name) !=
                     fx.impure_modules.end();
        gm.submodules[name] = sub;
    }
    for (const auto& [name, shape] : fx.attributes) {
        auto t = std::make_shared<TensorData>();
        t->sizes = shape;
        t->bytes = Bytes(std::vector<uint8_t>(static_cast<size_t>(t->numel()) * 4, 0));
        t->stand_in = true;
        gm.attrs[name] = t;
    }
    gm.recompile();
    return gm;
}

Result<Argument> decode_fx_arg(const JsonAt& a) {
    return decode_arg(a, [](const std::string& name, const JsonAt&) -> Result<Argument> {
        return Argument::node_name(name);
    });
}

bool looks_like_fx_graph_json(const std::string& text) {
    return text.find("\"pt2lab.fx_graph\"") != std::string::npos;
}

Result<FxGraph> read_fx_graph_json(const std::string& text, const std::string& file,
                                   const Limits& limits) {
    auto root = parse_json_text(text, file);
    if (!root.ok()) return root.error();
    if (!root.value().is_object())
        return json_root(root.value(), &file).error("expected a JSON object");
    FxReader r(file, limits);
    return r.run(root.value());
}

} // namespace pt2lab
