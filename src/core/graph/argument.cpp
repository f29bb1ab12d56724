// Argument constructors, equality and Python-style printing.
#include "graph/argument.h"

#include <cmath>

#include "graph/node.h"
#include "util/pyrepr.h"

namespace pt2lab {

Argument Argument::from_bool(bool v) {
    Argument a;
    a.kind = ArgKind::Bool;
    a.b = v;
    return a;
}
Argument Argument::from_int(int64_t v) {
    Argument a;
    a.kind = ArgKind::Int;
    a.i = v;
    return a;
}
Argument Argument::from_float(double v) {
    Argument a;
    a.kind = ArgKind::Float;
    a.f = v;
    return a;
}
Argument Argument::from_string(std::string v) {
    Argument a;
    a.kind = ArgKind::String;
    a.s = std::move(v);
    return a;
}
Argument Argument::from_node(Node* n) {
    Argument a;
    a.kind = ArgKind::NodeRef;
    a.node = n;
    return a;
}
Argument Argument::node_name(std::string name) {
    Argument a;
    a.kind = ArgKind::NodeRef;
    a.s = std::move(name);
    return a;
}
Argument Argument::list(std::vector<Argument> v) {
    Argument a;
    a.kind = ArgKind::List;
    a.items = std::move(v);
    return a;
}
Argument Argument::tuple(std::vector<Argument> v) {
    Argument a;
    a.kind = ArgKind::Tuple;
    a.items = std::move(v);
    return a;
}
Argument Argument::int_list(const std::vector<int64_t>& v) {
    std::vector<Argument> items;
    items.reserve(v.size());
    for (int64_t x : v) items.push_back(from_int(x));
    return list(std::move(items));
}
Argument Argument::from_dtype(ScalarType t) {
    Argument a;
    a.kind = ArgKind::Dtype;
    a.dtype = t;
    return a;
}
Argument Argument::device(std::string text) {
    Argument a;
    a.kind = ArgKind::Device;
    a.s = std::move(text);
    return a;
}
Argument Argument::layout(int64_t code) {
    Argument a;
    a.kind = ArgKind::Layout;
    a.i = code;
    return a;
}
Argument Argument::memory_format(int64_t code) {
    Argument a;
    a.kind = ArgKind::MemoryFormat;
    a.i = code;
    return a;
}
Argument Argument::repr(std::string text) {
    Argument a;
    a.kind = ArgKind::Repr;
    a.s = std::move(text);
    return a;
}

namespace {
bool is_number(const Argument& a) {
    return a.kind == ArgKind::Int || a.kind == ArgKind::Float || a.kind == ArgKind::Bool;
}
double number_value(const Argument& a) {
    if (a.kind == ArgKind::Int) return static_cast<double>(a.i);
    if (a.kind == ArgKind::Bool) return a.b ? 1.0 : 0.0;
    return a.f;
}

const char* layout_name(int64_t code) {
    switch (code) {
    case 1: return "torch.sparse_coo";
    case 2: return "torch.sparse_csr";
    case 3: return "torch.sparse_csc";
    case 4: return "torch.sparse_bsr";
    case 5: return "torch.sparse_bsc";
    case 6: return "torch._mkldnn";
    case 7: return "torch.strided";
    default: return "torch.unknown_layout";
    }
}
const char* memory_format_name(int64_t code) {
    switch (code) {
    case 1: return "torch.contiguous_format";
    case 2: return "torch.channels_last";
    case 3: return "torch.channels_last_3d";
    case 4: return "torch.preserve_format";
    default: return "torch.unknown_memory_format";
    }
}

std::string device_repr(const std::string& text) {
    auto colon = text.find(':');
    if (colon == std::string::npos) return "device(type=" + py_str_repr(text) + ")";
    return "device(type=" + py_str_repr(text.substr(0, colon)) +
           ", index=" + text.substr(colon + 1) + ")";
}

// Shared walker: `fx` selects torch.fx _format_arg rules, otherwise Python repr.
std::string render(const Argument& a, bool fx, const NodeNamer* namer = nullptr) {
    switch (a.kind) {
    case ArgKind::None: return "None";
    case ArgKind::Bool: return a.b ? "True" : "False";
    case ArgKind::Int: return std::to_string(a.i);
    case ArgKind::Float: return py_float_repr(a.f);
    case ArgKind::String: return fx ? a.s : py_str_repr(a.s);
    case ArgKind::NodeRef: {
        const std::string name = a.node ? (namer ? (*namer)(a.node) : a.node->name()) : a.s;
        return fx ? "%" + name : name;
    }
    case ArgKind::Dtype: return "torch." + std::string(scalar_type_name(a.dtype));
    case ArgKind::Device: return fx ? a.s : device_repr(a.s);
    case ArgKind::Layout: return layout_name(a.i);
    case ArgKind::MemoryFormat: return memory_format_name(a.i);
    case ArgKind::Repr: return a.s;
    case ArgKind::List:
    case ArgKind::Tuple: {
        // Inside a container both Python repr and fx use the element's repr-like
        // form; fx recurses with _format_arg, Python with repr.
        std::string out = a.kind == ArgKind::List ? "[" : "(";
        for (size_t k = 0; k < a.items.size(); ++k) {
            if (k) out += ", ";
            out += render(a.items[k], fx, namer);
        }
        if (a.kind == ArgKind::Tuple && a.items.size() == 1) out += ",";
        out += a.kind == ArgKind::List ? "]" : ")";
        return out;
    }
    case ArgKind::Dict: {
        std::string out = "{";
        for (size_t k = 0; k < a.items.size(); ++k) {
            if (k) out += ", ";
            out += fx ? a.keys[k] : py_str_repr(a.keys[k]);
            out += ": " + render(a.items[k], fx, namer);
        }
        return out + "}";
    }
    }
    return "?";
}
} // namespace

bool arg_equal(const Argument& a, const Argument& b) {
    if (is_number(a) && is_number(b)) return number_value(a) == number_value(b);
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case ArgKind::None: return true;
    case ArgKind::String:
    case ArgKind::Device:
    case ArgKind::Repr: return a.s == b.s;
    case ArgKind::NodeRef: return a.node == b.node;
    case ArgKind::Dtype: return a.dtype == b.dtype;
    case ArgKind::Layout:
    case ArgKind::MemoryFormat: return a.i == b.i;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Dict:
        if (a.items.size() != b.items.size() || a.keys != b.keys) return false;
        for (size_t k = 0; k < a.items.size(); ++k)
            if (!arg_equal(a.items[k], b.items[k])) return false;
        return true;
    default: return false;
    }
}

const Argument* kwargs_find(const Kwargs& kw, std::string_view key) {
    for (const auto& [k, v] : kw)
        if (k == key) return &v;
    return nullptr;
}

std::string arg_repr(const Argument& a) {
    return render(a, false);
}

std::string arg_repr(const Argument& a, const NodeNamer& name_of) {
    return render(a, false, &name_of);
}

std::string arg_str(const Argument& a) {
    if (a.kind == ArgKind::String) return a.s;
    if (a.kind == ArgKind::Device) return a.s;
    return render(a, false);
}

std::string arg_format_fx(const Argument& a) {
    return render(a, true);
}

} // namespace pt2lab
