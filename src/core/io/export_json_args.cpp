// ExportedProgram JSON: arguments in their serialized forms (serialize_input)
// and TensorMeta records.
#include <algorithm>
#include <cstdlib>

#include "io/export_json_parts.h"
#include "io/export_json_writer.h"

namespace pt2lab {

namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> st(sizes.size(), 1);
    for (size_t k = sizes.size(); k-- > 1;) st[k - 1] = st[k] * std::max<int64_t>(sizes[k], 1);
    return st;
}

void write_sym_ints(PyJson& j, const std::vector<int64_t>& v) {
    j.begin_array();
    for (int64_t x : v) j.begin_object().key("as_int").integer(x).end_object();
    j.end_array();
}

} // namespace

Error node_error(const Node& n, const std::string& msg, const std::string& hint) {
    return make_error("%" + n.name(), msg, hint);
}

void write_device(PyJson& j, const std::string& device) {
    const size_t colon = device.find(':');
    j.begin_object().key("type").str(device.substr(0, colon)).key("index");
    if (colon == std::string::npos)
        j.null();
    else
        j.integer(std::atoll(device.c_str() + colon + 1));
    j.end_object();
}

Status write_list(PyJson& j, const Argument& a, const SchemaType* type, const Node& at,
                  const ValueNames& names);

Status write_argument(PyJson& j, const Argument& a, const SchemaType* type, const Node& at,
                      const ValueNames& names) {
    auto tensor_ref = [&](const Node* n) {
        j.begin_object().key("name").str(names.of(n)).end_object();
    };
    auto sym_ref = [&](const Node* n) {
        j.begin_object().key("as_name").str(n->name()).end_object();
    };
    auto one = [&](const char* key) -> PyJson& { return j.begin_object().key(key); };
    switch (a.kind) {
    case ArgKind::None: one("as_none").boolean(true).end_object(); return {};
    case ArgKind::Bool: one("as_bool").boolean(a.b).end_object(); return {};
    case ArgKind::Int: one("as_int").integer(a.i).end_object(); return {};
    case ArgKind::Float: one("as_float").number(a.f).end_object(); return {};
    case ArgKind::String: one("as_string").str(a.s).end_object(); return {};
    case ArgKind::Dtype:
        one("as_scalar_type").integer(static_cast<int>(a.dtype)).end_object();
        return {};
    case ArgKind::Layout: one("as_layout").integer(a.i).end_object(); return {};
    case ArgKind::MemoryFormat: one("as_memory_format").integer(a.i).end_object(); return {};
    case ArgKind::Device:
        one("as_device");
        write_device(j, a.s);
        j.end_object();
        return {};
    case ArgKind::NodeRef:
        if (!a.node) return node_error(at, "an argument names no node");
        if (a.node->op() == Op::GetAttr)
            return node_error(at, "argument %" + a.node->name() +
                                      " is a get_attr, which torch's serializer refuses");
        if (names.is_sym(a.node)) {
            one("as_sym_int");
            sym_ref(a.node);
        } else {
            one("as_tensor");
            tensor_ref(a.node);
        }
        j.end_object();
        return {};
    case ArgKind::Dict:
        one("as_string_to_argument").begin_object();
        for (size_t k = 0; k < a.items.size(); ++k) {
            j.key(a.keys[k]);
            if (Status s = write_argument(j, a.items[k], nullptr, at, names); !s.ok()) return s;
        }
        j.end_object().end_object();
        return {};
    case ArgKind::List:
    case ArgKind::Tuple: return write_list(j, a, type, at, names);
    case ArgKind::Repr:
        return node_error(at, "argument " + a.s + " is a Python value pt2lab keeps as text",
                          "torch.export.save could not write it either");
    }
    return node_error(at, "unsupported argument");
}

Status write_list(PyJson& j, const Argument& a, const SchemaType* type, const Node& at,
                  const ValueNames& names) {
    const auto& items = a.items;
    auto all = [&](auto pred) {
        for (const Argument& x : items)
            if (!pred(x)) return false;
        return true;
    };
    auto kind_is = [](ArgKind k) { return [k](const Argument& x) { return x.kind == k; }; };
    auto begin = [&](const char* key) { j.begin_object().key(key).begin_array(); };
    auto end = [&] { j.end_array().end_object(); };
    if (items.empty()) {
        const std::string base = type ? type->base : "Tensor";
        const char* key = base == "bool"                      ? "as_bools"
                          : base == "int" || base == "SymInt" ? "as_ints"
                          : base == "float"                   ? "as_floats"
                          : base == "str"                     ? "as_strings"
                          : base == "Tensor"                  ? "as_tensors"
                                                              : nullptr;
        if (!key) return node_error(at, "an empty list of " + base + " cannot be written");
        begin(key);
        end();
        return {};
    }
    if (all(kind_is(ArgKind::Bool))) {
        begin("as_bools");
        for (const Argument& x : items) j.boolean(x.b);
    } else if (all(kind_is(ArgKind::Int))) {
        begin("as_ints");
        for (const Argument& x : items) j.integer(x.i);
    } else if (all(kind_is(ArgKind::Float))) {
        begin("as_floats");
        for (const Argument& x : items) j.number(x.f);
    } else if (all(kind_is(ArgKind::String))) {
        begin("as_strings");
        for (const Argument& x : items) j.str(x.s);
    } else if (all([&](const Argument& x) {
                   return x.kind == ArgKind::Int || (x.is_node() && x.node && names.is_sym(x.node));
               })) {
        begin("as_sym_ints");
        for (const Argument& x : items) {
            if (x.kind == ArgKind::Int)
                j.begin_object().key("as_int").integer(x.i).end_object();
            else
                j.begin_object().key("as_name").str(x.node->name()).end_object();
        }
    } else if (all([](const Argument& x) { return x.is_node() && x.node; })) {
        begin("as_tensors");
        for (const Argument& x : items) {
            if (x.node->op() == Op::GetAttr)
                return node_error(at, "argument %" + x.node->name() + " is a get_attr");
            j.begin_object().key("name").str(names.of(x.node)).end_object();
        }
    } else if (all([](const Argument& x) { return (x.is_node() && x.node) || x.is_none(); })) {
        begin("as_optional_tensors");
        for (const Argument& x : items) {
            j.begin_object();
            if (x.is_none())
                j.key("as_none").boolean(true);
            else
                j.key("as_tensor").begin_object().key("name").str(names.of(x.node)).end_object();
            j.end_object();
        }
    } else if (all([](const Argument& x) {
                   if (!x.is_sequence()) return false;
                   for (const Argument& y : x.items)
                       if (y.kind != ArgKind::Int) return false;
                   return true;
               })) {
        begin("as_int_lists");
        for (const Argument& x : items) {
            j.begin_array();
            for (const Argument& y : x.items) j.integer(y.i);
            j.end_array();
        }
    } else {
        return node_error(at, "a list mixing value kinds (" + arg_repr(a) +
                                  ") cannot be written, as in torch's serializer");
    }
    end();
    return {};
}

void write_tensor_meta(PyJson& j, const TensorMeta& m) {
    j.begin_object().key("dtype").integer(static_cast<int>(m.dtype)).key("sizes");
    write_sym_ints(j, m.sizes);
    j.key("requires_grad").boolean(m.requires_grad).key("device");
    write_device(j, m.device.empty() ? "cpu" : m.device);
    j.key("strides");
    write_sym_ints(j, m.strides.size() == m.sizes.size() ? m.strides : contiguous_strides(m.sizes));
    j.key("storage_offset").begin_object().key("as_int").integer(m.storage_offset).end_object();
    j.key("layout").integer(7).end_object(); // torch.strided
}

} // namespace pt2lab
