// A protocol-2 pickle of ((tensors...), {}) as Python's pickler writes what
// torch.save hands it, and the zip torch.save puts it in.
#include "io/torch_save_writer.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "io/zip_writer.h"

namespace pt2lab {

namespace {

// torch.<X>Storage of a dtype, as torch.save names the storage's type; null when none.
const char* storage_type(ScalarType t) {
    switch (t) {
    case ScalarType::Float: return "FloatStorage";
    case ScalarType::Double: return "DoubleStorage";
    case ScalarType::Half: return "HalfStorage";
    case ScalarType::BFloat16: return "BFloat16Storage";
    case ScalarType::Long: return "LongStorage";
    case ScalarType::Int: return "IntStorage";
    case ScalarType::Short: return "ShortStorage";
    case ScalarType::Char: return "CharStorage";
    case ScalarType::Byte: return "ByteStorage";
    case ScalarType::Bool: return "BoolStorage";
    default: return nullptr;
    }
}

// Python's pickle.Pickler (protocol 2) for the few values torch.save writes here,
// with its memo: every string, global, non-empty tuple and dict is remembered, and
// the same object written again is a BINGET of it.
class Pickler {
public:
    std::vector<uint8_t> out{0x80, 2}; // PROTO 2

    void op(uint8_t c) { out.push_back(c); }
    void u32(uint32_t v) {
        for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(v >> (8 * k)));
    }
    void memoize() {
        const uint32_t k = next_++;
        if (k < 256) {
            op('q'); // BINPUT
            op(static_cast<uint8_t>(k));
        } else {
            op('r'); // LONG_BINPUT
            u32(k);
        }
    }
    void get(uint32_t k) {
        if (k < 256) {
            op('h'); // BINGET
            op(static_cast<uint8_t>(k));
        } else {
            op('j'); // LONG_BINGET
            u32(k);
        }
    }
    // An object written once and fetched from the memo after (a global, an interned string).
    bool memo_hit(const std::string& id) {
        auto it = memo_.find(id);
        if (it == memo_.end()) return false;
        get(it->second);
        return true;
    }
    void remember(const std::string& id) {
        memo_[id] = next_;
        memoize();
    }
    void global(const std::string& module, const std::string& name) {
        const std::string id = "global:" + module + "." + name;
        if (memo_hit(id)) return;
        op('c');
        out.insert(out.end(), module.begin(), module.end());
        op('\n');
        out.insert(out.end(), name.begin(), name.end());
        op('\n');
        remember(id);
    }
    // A string; `interned` ones are one object in Python (literals), fetched again.
    void string(const std::string& s, bool interned) {
        if (interned && memo_hit("str:" + s)) return;
        op('X'); // BINUNICODE
        u32(static_cast<uint32_t>(s.size()));
        out.insert(out.end(), s.begin(), s.end());
        if (interned)
            remember("str:" + s);
        else
            memoize();
    }
    void integer(int64_t v) {
        if (v >= 0 && v <= 0xff) {
            op('K'); // BININT1
            op(static_cast<uint8_t>(v));
        } else if (v >= 0 && v <= 0xffff) {
            op('M'); // BININT2
            op(static_cast<uint8_t>(v));
            op(static_cast<uint8_t>(v >> 8));
        } else if (v >= -0x80000000ll && v <= 0x7fffffffll) {
            op('J'); // BININT
            u32(static_cast<uint32_t>(v));
        } else { // LONG1: little-endian two's complement, as short as it goes
            std::vector<uint8_t> b;
            for (int k = 0; k < 8; ++k) b.push_back(static_cast<uint8_t>(uint64_t(v) >> (8 * k)));
            while (b.size() > 1 && ((b.back() == 0 && !(b[b.size() - 2] & 0x80)) ||
                                    (b.back() == 0xff && (b[b.size() - 2] & 0x80))))
                b.pop_back();
            op(0x8a);
            op(static_cast<uint8_t>(b.size()));
            out.insert(out.end(), b.begin(), b.end());
        }
    }
    // Python's save_tuple: () is EMPTY_TUPLE (not remembered); 1-3 items TUPLE1..3;
    // more MARK ... TUPLE. `items` writes the items.
    template <class F> void tuple(size_t n, F&& items) {
        if (n == 0) {
            op(')');
            return;
        }
        if (n > 3) op('(');
        items();
        op(n == 1 ? 0x85 : n == 2 ? 0x86 : n == 3 ? 0x87 : 't');
        memoize();
    }

private:
    std::map<std::string, uint32_t> memo_;
    uint32_t next_ = 0;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
    std::vector<int64_t> st(sizes.size(), 1);
    for (size_t k = sizes.size(); k-- > 1;) st[k - 1] = st[k] * std::max<int64_t>(sizes[k], 1);
    return st;
}

} // namespace

std::vector<uint8_t> sample_inputs_pickle(const std::vector<const TensorData*>& inputs) {
    Pickler p;
    auto ints = [&](const std::vector<int64_t>& v) {
        p.tuple(v.size(), [&] {
            for (int64_t x : v) p.integer(x);
        });
    };
    p.tuple(2, [&] {
        p.tuple(inputs.size(), [&] {
            for (size_t k = 0; k < inputs.size(); ++k) {
                const TensorData& t = *inputs[k];
                // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)
                p.global("torch._utils", "_rebuild_tensor_v2");
                p.tuple(6, [&] {
                    p.tuple(5, [&] { // the storage's persistent id
                        p.string("storage", true);
                        p.global("torch", storage_type(t.dtype));
                        p.string(std::to_string(k), false);
                        p.string("cpu", true);
                        p.integer(t.numel());
                    });
                    p.op('Q'); // BINPERSID
                    p.integer(0);
                    ints(t.sizes);
                    ints(contiguous_strides(t.sizes));
                    p.op(t.requires_grad ? 0x88 : 0x89); // NEWTRUE / NEWFALSE
                    p.global("collections", "OrderedDict");
                    p.op(')');
                    p.op('R'); // REDUCE: OrderedDict()
                    p.memoize();
                });
                p.op('R'); // REDUCE: the tensor
                p.memoize();
            }
        });
        p.op('}'); // EMPTY_DICT: no keyword inputs
        p.memoize();
    });
    p.op('.');
    return std::move(p.out);
}

std::string serialization_id(const std::vector<std::string>& names,
                             const std::vector<uint32_t>& crcs) {
    uint64_t a = 1469598103934665603ull, b = 1099511628211ull * 7;
    for (size_t k = 0; k < names.size(); ++k) {
        for (char c : names[k]) a = (a ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        const uint32_t c = k < crcs.size() ? crcs[k] : 0;
        for (int s = 0; s < 32; s += 8) b = (b ^ ((c >> s) & 0xff)) * 1099511628211ull;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%020llu%020llu", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
}

Result<std::vector<uint8_t>> write_sample_inputs(const std::vector<const TensorData*>& inputs) {
    for (size_t k = 0; k < inputs.size(); ++k)
        if (!storage_type(inputs[k]->dtype))
            return make_error("data/sample_inputs/model.pt",
                              "sample input " + std::to_string(k) + " is a " +
                                  std::string(scalar_type_name(inputs[k]->dtype)) +
                                  " tensor, which torch.save's typed storages cannot name");
    ZipWriter z("archive");
    auto add = [&](const std::string& name, const uint8_t* d, size_t n) {
        return z.add(name, d, n);
    };
    std::vector<uint8_t> pkl = sample_inputs_pickle(inputs);
    Status s = add("data.pkl", pkl.data(), pkl.size());
    if (s.ok()) s = z.add(".format_version", std::string_view("1"));
    if (s.ok()) s = z.add(".storage_alignment", std::string_view("64"));
    if (s.ok()) s = z.add("byteorder", std::string_view("little"));
    // Storages in the order of their keys as strings ("0", "1", "10", "2"), as torch.save sorts.
    std::vector<std::pair<std::string, const TensorData*>> storages;
    for (size_t k = 0; k < inputs.size(); ++k) storages.emplace_back(std::to_string(k), inputs[k]);
    std::sort(storages.begin(), storages.end());
    for (const auto& [key, t] : storages) {
        if (!s.ok()) break;
        s = add("data/" + key, t->bytes.data(), t->bytes.size());
    }
    if (s.ok()) s = z.add("version", std::string_view("3\n"));
    if (s.ok()) s = z.add(".data/serialization_id", serialization_id(z.names(), z.crcs()));
    if (!s.ok()) return s.error();
    return z.finish();
}

} // namespace pt2lab
