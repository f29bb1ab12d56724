// The restricted unpickler (pickle protocols 2-5, the opcodes torch.save's
// pickler emits) and the torch.save zip around it. Not a general unpickler:
// there are no classes to instantiate, only tensors rebuilt from storages.
#include "io/pickle.h"

#include <cstdio>
#include <cstring>
#include <map>

#include "io/zip.h"

namespace pt2lab {

namespace {

// What the pickle machine holds on its stack: Python values plus the few
// callables and storages the tensor rebuild needs.
struct Obj;
using ObjP = std::shared_ptr<Obj>;
struct Obj {
    enum class K { None, Bool, Int, Float, Str, Tuple, List, Dict, Tensor, Global, Storage };
    K k = K::None;
    bool b = false;
    int64_t i = 0;
    double f = 0.0;
    std::string s; // Str; Global: "module.name"
    std::vector<ObjP> items;
    std::vector<std::pair<ObjP, ObjP>> entries;
    ScalarType dtype = ScalarType::Float;              // Global (a storage type), Storage
    std::shared_ptr<const std::vector<uint8_t>> bytes; // Storage
    int64_t numel = 0;                                 // Storage
    std::shared_ptr<const TensorData> tensor;          // Tensor
};

const char* kind_name(Obj::K k) {
    switch (k) {
    case Obj::K::None: return "None";
    case Obj::K::Bool: return "bool";
    case Obj::K::Int: return "int";
    case Obj::K::Float: return "float";
    case Obj::K::Str: return "str";
    case Obj::K::Tuple: return "tuple";
    case Obj::K::List: return "list";
    case Obj::K::Dict: return "dict";
    case Obj::K::Tensor: return "Tensor";
    case Obj::K::Global: return "global";
    case Obj::K::Storage: return "storage";
    }
    return "?";
}

constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr const char* kOrderedDict = "collections.OrderedDict";

// torch.<X>Storage -> element type (torch/storage.py's typed storages).
const std::map<std::string, ScalarType>& storage_types() {
    static const std::map<std::string, ScalarType> m = {
        {"torch.FloatStorage", ScalarType::Float}, {"torch.DoubleStorage", ScalarType::Double},
        {"torch.HalfStorage", ScalarType::Half},   {"torch.BFloat16Storage", ScalarType::BFloat16},
        {"torch.LongStorage", ScalarType::Long},   {"torch.IntStorage", ScalarType::Int},
        {"torch.ShortStorage", ScalarType::Short}, {"torch.CharStorage", ScalarType::Char},
        {"torch.ByteStorage", ScalarType::Byte},   {"torch.BoolStorage", ScalarType::Bool},
    };
    return m;
}

const char* opcode_name(uint8_t op) {
    switch (op) {
    case 0x80: return "PROTO";
    case 0x95: return "FRAME";
    case '.': return "STOP";
    case '(': return "MARK";
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 0x94: return "MEMOIZE";
    case 'h': return "BINGET";
    case 'j': return "LONG_BINGET";
    case 'N': return "NONE";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'M': return "BININT2";
    case 0x8a: return "LONG1";
    case 'G': return "BINFLOAT";
    case 'X': return "BINUNICODE";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case ')': return "EMPTY_TUPLE";
    case 't': return "TUPLE";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case ']': return "EMPTY_LIST";
    case 'a': return "APPEND";
    case 'e': return "APPENDS";
    case '}': return "EMPTY_DICT";
    case 's': return "SETITEM";
    case 'u': return "SETITEMS";
    case 'R': return "REDUCE";
    case 'Q': return "BINPERSID";
    // refused
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'P': return "PERSID";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 0x8b: return "LONG4";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x8e: return "BINBYTES8";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'd': return "DICT";
    case 'l': return "LIST";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    default: return nullptr;
    }
}

bool mul_ok(int64_t a, int64_t b, int64_t* out) {
    return !__builtin_mul_overflow(a, b, out);
}
bool add_ok(int64_t a, int64_t b, int64_t* out) {
    return !__builtin_add_overflow(a, b, out);
}

class Machine {
public:
    Machine(const std::vector<uint8_t>& p, const std::string& file, const std::string& record,
            StorageReader reader, void* ctx, const PickleLimits& limits)
        : p_(p), file_(file), record_(record), reader_(reader), ctx_(ctx), lim_(limits) {}
    // A pickle can make a container hold itself (through the memo); the shared pointers
    // of such a cycle would never free it, so every container is emptied at the end.
    ~Machine() {
        for (const ObjP& o : containers_) {
            o->items.clear();
            o->entries.clear();
        }
    }
    Machine(const Machine&) = delete;
    Machine& operator=(const Machine&) = delete;

    Result<PyValue> run() {
        if (p_.size() > lim_.max_pickle_bytes)
            return fail("the pickle is " + std::to_string(p_.size()) + " bytes, more than the " +
                        std::to_string(lim_.max_pickle_bytes) + " pt2lab reads");
        while (true) {
            if (pos_ >= p_.size()) return fail("the pickle ends without a STOP opcode");
            op_at_ = pos_;
            uint8_t op = p_[pos_++];
            if (op == '.') {
                if (stack_.empty()) return fail("STOP with an empty stack");
                ObjP top = stack_.back();
                size_t budget = 0;
                return convert(*top, 0, budget);
            }
            if (Status s = step(op); !s.ok()) return s.error();
            if (stack_.size() + marks_.size() > lim_.max_stack)
                return fail("the pickle's stack grows past " + std::to_string(lim_.max_stack) +
                            " entries");
        }
    }

private:
    const std::vector<uint8_t>& p_;
    const std::string& file_;
    const std::string& record_;
    StorageReader reader_;
    void* ctx_;
    PickleLimits lim_;
    size_t pos_ = 0, op_at_ = 0;
    std::vector<ObjP> stack_;
    std::vector<size_t> marks_;
    std::map<uint64_t, ObjP> memo_;
    std::map<std::string, ObjP> storages_;
    std::vector<ObjP> containers_; // every tuple, list and dict made (see ~Machine)

    ObjP make(Obj::K k) {
        auto o = std::make_shared<Obj>();
        o->k = k;
        if (k == Obj::K::Tuple || k == Obj::K::List || k == Obj::K::Dict) containers_.push_back(o);
        return o;
    }

    Error fail(const std::string& msg, const std::string& hint = {}) const {
        Error e = make_error(record_ + " at byte " + std::to_string(op_at_), msg,
                             hint.empty() ? "pt2lab reads only the tensors and plain containers "
                                            "torch.save writes (for example the sample inputs "
                                            "of torch.export.save)"
                                          : hint);
        e.file = file_;
        return e;
    }

    Status need(size_t n) const {
        if (p_.size() - pos_ < n) return fail("the pickle is cut short inside an opcode");
        return {};
    }
    uint64_t le(size_t n) {
        uint64_t v = 0;
        for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(p_[pos_ + k]) << (8 * k);
        pos_ += n;
        return v;
    }
    Result<ObjP> pop() {
        size_t floor = marks_.empty() ? 0 : marks_.back();
        if (stack_.size() <= floor) return fail("an opcode pops from an empty stack");
        ObjP o = stack_.back();
        stack_.pop_back();
        return o;
    }
    Result<std::vector<ObjP>> pop_mark() {
        if (marks_.empty()) return fail("an opcode needs a MARK and there is none");
        size_t m = marks_.back();
        marks_.pop_back();
        std::vector<ObjP> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
        stack_.resize(m);
        return items;
    }
    void push(ObjP o) { stack_.push_back(std::move(o)); }
    Status put(uint64_t key) {
        if (stack_.empty()) return fail("memoizing with an empty stack");
        if (!memo_.count(key) && memo_.size() >= lim_.max_memo)
            return fail("more than " + std::to_string(lim_.max_memo) + " memo entries");
        memo_[key] = stack_.back();
        return {};
    }
    Status get(uint64_t key) {
        auto it = memo_.find(key);
        if (it == memo_.end()) return fail("memo entry " + std::to_string(key) + " was never set");
        push(it->second);
        return {};
    }
    Result<std::string> str_bytes(size_t n) {
        if (Status s = need(n); !s.ok()) return s.error();
        std::string out(reinterpret_cast<const char*>(p_.data() + pos_), n);
        pos_ += n;
        return out;
    }
    Status push_str(uint64_t n) {
        if (n > p_.size() - pos_) return fail("a string runs past the end of the pickle");
        auto s = str_bytes(static_cast<size_t>(n));
        if (!s.ok()) return s.error();
        ObjP o = make(Obj::K::Str);
        o->s = s.take();
        push(o);
        return {};
    }
    Status push_global(const std::string& module, const std::string& name) {
        std::string full = module + "." + name;
        ObjP g = make(Obj::K::Global);
        g->s = full;
        auto st = storage_types().find(full);
        if (st != storage_types().end()) {
            g->dtype = st->second;
        } else if (full != kRebuildTensor && full != kOrderedDict) {
            return fail("global '" + module + " " + name + "' is not allowed");
        }
        push(g);
        return {};
    }

    Status step(uint8_t op) {
        switch (op) {
        case 0x80: { // PROTO
            if (Status s = need(1); !s.ok()) return s;
            uint8_t v = p_[pos_++];
            if (v < 2 || v > 5)
                return fail("pickle protocol " + std::to_string(v) + " (pt2lab reads 2 to 5)");
            return {};
        }
        case 0x95: // FRAME: a length prefix only
            if (Status s = need(8); !s.ok()) return s;
            pos_ += 8;
            return {};
        case '(': marks_.push_back(stack_.size()); return {};
        case 'c': { // GLOBAL "module\nname\n"
            std::string parts[2];
            for (auto& part : parts) {
                size_t nl = pos_;
                while (nl < p_.size() && p_[nl] != '\n' && nl - pos_ < 256) ++nl;
                if (nl >= p_.size() || p_[nl] != '\n') return fail("a GLOBAL name is not ended");
                part.assign(reinterpret_cast<const char*>(p_.data() + pos_), nl - pos_);
                pos_ = nl + 1;
            }
            return push_global(parts[0], parts[1]);
        }
        case 0x93: { // STACK_GLOBAL
            auto name = pop();
            if (!name.ok()) return name.error();
            auto module = pop();
            if (!module.ok()) return module.error();
            if (module.value()->k != Obj::K::Str || name.value()->k != Obj::K::Str)
                return fail("STACK_GLOBAL needs two strings");
            return push_global(module.value()->s, name.value()->s);
        }
        case 'q':
            if (Status s = need(1); !s.ok()) return s;
            return put(le(1));
        case 'r':
            if (Status s = need(4); !s.ok()) return s;
            return put(le(4));
        case 0x94: return put(memo_.size());
        case 'h':
            if (Status s = need(1); !s.ok()) return s;
            return get(le(1));
        case 'j':
            if (Status s = need(4); !s.ok()) return s;
            return get(le(4));
        case 'N': push(make(Obj::K::None)); return {};
        case 0x88:
        case 0x89: {
            ObjP o = make(Obj::K::Bool);
            o->b = op == 0x88;
            push(o);
            return {};
        }
        case 'J':
        case 'K':
        case 'M': {
            size_t n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if (Status s = need(n); !s.ok()) return s;
            uint64_t v = le(n);
            ObjP o = make(Obj::K::Int);
            o->i =
                op == 'J' ? static_cast<int64_t>(static_cast<int32_t>(v)) : static_cast<int64_t>(v);
            push(o);
            return {};
        }
        case 0x8a: { // LONG1: n bytes, little-endian two's complement
            if (Status s = need(1); !s.ok()) return s;
            size_t n = p_[pos_++];
            if (n > 8) return fail("an integer wider than 64 bits");
            if (Status s = need(n); !s.ok()) return s;
            uint64_t v = le(n);
            if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
            ObjP o = make(Obj::K::Int);
            o->i = static_cast<int64_t>(v);
            push(o);
            return {};
        }
        case 'G': { // BINFLOAT: big-endian double
            if (Status s = need(8); !s.ok()) return s;
            uint64_t v = 0;
            for (int k = 0; k < 8; ++k) v = (v << 8) | p_[pos_++];
            ObjP o = make(Obj::K::Float);
            std::memcpy(&o->f, &v, sizeof v);
            push(o);
            return {};
        }
        case 'X':
            if (Status s = need(4); !s.ok()) return s;
            return push_str(le(4));
        case 0x8c:
            if (Status s = need(1); !s.ok()) return s;
            return push_str(le(1));
        case 0x8d:
            if (Status s = need(8); !s.ok()) return s;
            return push_str(le(8));
        case ')': push(make(Obj::K::Tuple)); return {};
        case 't': {
            auto items = pop_mark();
            if (!items.ok()) return items.error();
            ObjP o = make(Obj::K::Tuple);
            o->items = items.take();
            push(o);
            return {};
        }
        case 0x85:
        case 0x86:
        case 0x87: {
            size_t n = op - 0x84u;
            ObjP o = make(Obj::K::Tuple);
            o->items.resize(n);
            for (size_t k = n; k-- > 0;) {
                auto v = pop();
                if (!v.ok()) return v.error();
                o->items[k] = v.take();
            }
            push(o);
            return {};
        }
        case ']': push(make(Obj::K::List)); return {};
        case '}': push(make(Obj::K::Dict)); return {};
        case 'a':
        case 'e': {
            std::vector<ObjP> items;
            if (op == 'a') {
                auto v = pop();
                if (!v.ok()) return v.error();
                items.push_back(v.take());
            } else {
                auto v = pop_mark();
                if (!v.ok()) return v.error();
                items = v.take();
            }
            if (stack_.empty() || stack_.back()->k != Obj::K::List)
                return fail(std::string(opcode_name(op)) + " onto something that is not a list");
            for (auto& v : items) stack_.back()->items.push_back(std::move(v));
            return {};
        }
        case 's':
        case 'u': {
            std::vector<ObjP> kv;
            if (op == 's') {
                auto v = pop();
                if (!v.ok()) return v.error();
                auto k = pop();
                if (!k.ok()) return k.error();
                kv = {k.take(), v.take()};
            } else {
                auto v = pop_mark();
                if (!v.ok()) return v.error();
                kv = v.take();
                if (kv.size() % 2) return fail("SETITEMS with an odd number of items");
            }
            if (stack_.empty() || stack_.back()->k != Obj::K::Dict)
                return fail(std::string(opcode_name(op)) + " onto something that is not a dict");
            for (size_t k = 0; k < kv.size(); k += 2) {
                if (kv[k]->k != Obj::K::Str && kv[k]->k != Obj::K::Int)
                    return fail(std::string("a dict key of type ") + kind_name(kv[k]->k) +
                                " (pt2lab reads str and int keys)");
                stack_.back()->entries.emplace_back(kv[k], kv[k + 1]);
            }
            return {};
        }
        case 'R': {
            auto args = pop();
            if (!args.ok()) return args.error();
            auto fn = pop();
            if (!fn.ok()) return fn.error();
            return reduce(*fn.value(), *args.value());
        }
        case 'Q': {
            auto pid = pop();
            if (!pid.ok()) return pid.error();
            return persistent_load(*pid.value());
        }
        default: {
            const char* name = opcode_name(op);
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", op);
            return fail(name ? std::string("opcode ") + name + " (" + hex + ") is not allowed"
                             : std::string("unknown pickle opcode ") + hex);
        }
        }
    }

    Status reduce(const Obj& fn, const Obj& args) {
        if (fn.k != Obj::K::Global)
            return fail(std::string("REDUCE calls a ") + kind_name(fn.k) + ", not a global");
        if (args.k != Obj::K::Tuple) return fail("REDUCE arguments are not a tuple");
        if (fn.s == kOrderedDict) {
            if (!args.items.empty()) return fail("OrderedDict(...) with arguments");
            push(make(Obj::K::Dict));
            return {};
        }
        if (fn.s == kRebuildTensor) return rebuild_tensor(args.items);
        return fail("REDUCE of '" + fn.s + "' is not allowed");
    }

    // ('storage', torch.FloatStorage, key, location, numel) -> the storage's bytes
    Status persistent_load(const Obj& pid) {
        if (pid.k != Obj::K::Tuple || pid.items.size() != 5 || pid.items[0]->k != Obj::K::Str ||
            pid.items[0]->s != "storage")
            return fail("a persistent id that is not ('storage', type, key, location, numel)");
        const Obj& type = *pid.items[1];
        const Obj& key = *pid.items[2];
        const Obj& numel = *pid.items[4];
        if (type.k != Obj::K::Global || !storage_types().count(type.s))
            return fail("a persistent id whose storage type is not a torch.<X>Storage");
        if (key.k != Obj::K::Str || key.s.empty() || key.s.find('/') != std::string::npos ||
            key.s.find("..") != std::string::npos)
            return fail("a storage key that is not a plain name");
        if (pid.items[3]->k != Obj::K::Str) return fail("a storage location that is not a string");
        if (numel.k != Obj::K::Int || numel.i < 0) return fail("a storage size that is not >= 0");
        auto cached = storages_.find(key.s);
        if (cached != storages_.end()) {
            if (cached->second->dtype != type.dtype || cached->second->numel != numel.i)
                return fail("storage " + key.s + " is read twice with different types or sizes");
            push(cached->second);
            return {};
        }
        auto bytes = reader_(ctx_, key.s);
        if (!bytes.ok())
            return fail("storage " + key.s + ": " + bytes.error().where + ": " +
                            bytes.error().message,
                        bytes.error().hint);
        int64_t need = 0;
        if (!mul_ok(numel.i, static_cast<int64_t>(scalar_type_size(type.dtype)), &need) ||
            static_cast<uint64_t>(need) > bytes.value().size())
            return fail("storage " + key.s + " should hold " + std::to_string(numel.i) + " " +
                        std::string(scalar_type_name(type.dtype)) + " values, its record has " +
                        std::to_string(bytes.value().size()) + " bytes");
        ObjP st = make(Obj::K::Storage);
        st->dtype = type.dtype;
        st->numel = numel.i;
        st->s = key.s;
        st->bytes = std::make_shared<const std::vector<uint8_t>>(bytes.take());
        storages_[key.s] = st;
        push(st);
        return {};
    }

    Result<std::vector<int64_t>> int_tuple(const Obj& o, const char* what) {
        if (o.k != Obj::K::Tuple)
            return fail(std::string("the tensor's ") + what + " is not a tuple");
        if (o.items.size() > lim_.max_tensor_dims)
            return fail(std::string("a tensor with more than ") +
                        std::to_string(lim_.max_tensor_dims) + " dimensions");
        std::vector<int64_t> out;
        for (const ObjP& x : o.items) {
            if (x->k != Obj::K::Int || x->i < 0)
                return fail(std::string("the tensor's ") + what +
                            " holds a value that is not an "
                            "int >= 0");
            out.push_back(x->i);
        }
        return out;
    }

    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
    //                    backward_hooks[, metadata])
    Status rebuild_tensor(const std::vector<ObjP>& a) {
        if (a.size() != 6 && a.size() != 7)
            return fail("_rebuild_tensor_v2 with " + std::to_string(a.size()) + " arguments");
        if (a[0]->k != Obj::K::Storage) return fail("_rebuild_tensor_v2 without a storage");
        if (a[1]->k != Obj::K::Int || a[1]->i < 0) return fail("a storage offset that is not >= 0");
        auto sizes = int_tuple(*a[2], "size");
        if (!sizes.ok()) return sizes.error();
        auto strides = int_tuple(*a[3], "stride");
        if (!strides.ok()) return strides.error();
        if (sizes.value().size() != strides.value().size())
            return fail("the tensor's size and stride have different lengths");
        if (a[4]->k != Obj::K::Bool) return fail("requires_grad is not a bool");
        if (a[5]->k != Obj::K::Dict || !a[5]->entries.empty())
            return fail("a tensor with backward hooks");
        if (a.size() == 7 &&
            !(a[6]->k == Obj::K::None || (a[6]->k == Obj::K::Dict && a[6]->entries.empty())))
            return fail("a tensor with Python metadata");
        const Obj& st = *a[0];
        const size_t item = scalar_type_size(st.dtype);
        int64_t numel = 1, extent = a[1]->i;
        for (size_t k = 0; k < sizes.value().size(); ++k)
            if (!mul_ok(numel, sizes.value()[k], &numel))
                return fail("the tensor's size overflows");
        if (numel > 0) {
            for (size_t k = 0; k < sizes.value().size(); ++k) {
                int64_t span = 0;
                if (!mul_ok(sizes.value()[k] - 1, strides.value()[k], &span) ||
                    !add_ok(extent, span, &extent))
                    return fail("the tensor's extent overflows");
            }
            if (extent >= st.numel)
                return fail("the tensor reaches element " + std::to_string(extent) +
                            " of storage " + st.s + ", which holds " + std::to_string(st.numel));
        }
        auto t = std::make_shared<TensorData>();
        t->dtype = st.dtype;
        t->sizes = sizes.value();
        t->requires_grad = a[4]->b;
        std::vector<uint8_t> bytes(static_cast<size_t>(numel) * item);
        std::vector<int64_t> idx(t->sizes.size(), 0);
        for (int64_t n = 0; n < numel; ++n) {
            int64_t off = a[1]->i;
            for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * strides.value()[k];
            std::memcpy(&bytes[static_cast<size_t>(n) * item],
                        st.bytes->data() + static_cast<size_t>(off) * item, item);
            for (size_t k = idx.size(); k-- > 0;) {
                if (++idx[k] < t->sizes[k]) break;
                idx[k] = 0;
            }
        }
        t->bytes = Bytes(std::move(bytes));
        ObjP o = make(Obj::K::Tensor);
        o->tensor = t;
        push(o);
        return {};
    }

    Result<PyValue> convert(const Obj& o, size_t depth, size_t& count) {
        if (depth > lim_.max_depth)
            return fail("the value is nested more than " + std::to_string(lim_.max_depth) +
                        " levels deep (or contains itself)");
        if (++count > lim_.max_values)
            return fail("the value holds more than " + std::to_string(lim_.max_values) + " items");
        PyValue v;
        switch (o.k) {
        case Obj::K::None: v.kind = PyValue::Kind::None; break;
        case Obj::K::Bool:
            v.kind = PyValue::Kind::Bool;
            v.b = o.b;
            break;
        case Obj::K::Int:
            v.kind = PyValue::Kind::Int;
            v.i = o.i;
            break;
        case Obj::K::Float:
            v.kind = PyValue::Kind::Float;
            v.f = o.f;
            break;
        case Obj::K::Str:
            v.kind = PyValue::Kind::String;
            v.s = o.s;
            break;
        case Obj::K::Tensor:
            v.kind = PyValue::Kind::Tensor;
            v.tensor = o.tensor;
            break;
        case Obj::K::Tuple:
        case Obj::K::List:
            v.kind = o.k == Obj::K::Tuple ? PyValue::Kind::Tuple : PyValue::Kind::List;
            for (const ObjP& x : o.items) {
                auto c = convert(*x, depth + 1, count);
                if (!c.ok()) return c.error();
                v.items.push_back(c.take());
            }
            break;
        case Obj::K::Dict:
            v.kind = PyValue::Kind::Dict;
            for (const auto& [key, val] : o.entries) {
                auto k = convert(*key, depth + 1, count);
                if (!k.ok()) return k.error();
                auto c = convert(*val, depth + 1, count);
                if (!c.ok()) return c.error();
                v.entries.emplace_back(k.take(), c.take());
            }
            break;
        case Obj::K::Global:
        case Obj::K::Storage:
            return fail(std::string("the result holds a bare ") + kind_name(o.k) + " ('" + o.s +
                        "')");
        }
        return v;
    }
};

struct InnerZip {
    const ZipArchive* zip;
    std::string prefix; // "archive/"
};

Result<std::vector<uint8_t>> read_inner_storage(void* ctx, const std::string& key) {
    auto* z = static_cast<InnerZip*>(ctx);
    const ZipEntry* e = z->zip->find(z->prefix + "data/" + key);
    if (!e) {
        Error err = make_error(z->prefix + "data/" + key, "the storage record is missing",
                               "the torch.save file is incomplete; save it again");
        err.file = z->zip->file();
        return err;
    }
    return z->zip->read(*e);
}

} // namespace

std::string PyValue::describe() const {
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return b ? "True" : "False";
    case Kind::Int: return "int " + std::to_string(i);
    case Kind::Float: return "float";
    case Kind::String: return "str '" + s + "'";
    case Kind::Tuple: return "tuple of " + std::to_string(items.size());
    case Kind::List: return "list of " + std::to_string(items.size());
    case Kind::Dict: return "dict of " + std::to_string(entries.size());
    case Kind::Tensor: {
        std::string out = "Tensor " + std::string(scalar_type_abbr(tensor->dtype)) + "[";
        for (size_t k = 0; k < tensor->sizes.size(); ++k)
            out += (k ? ", " : "") + std::to_string(tensor->sizes[k]);
        return out + "]";
    }
    }
    return "?";
}

Result<PyValue> unpickle(const std::vector<uint8_t>& pickle, const std::string& file,
                         const std::string& record, StorageReader storage, void* ctx,
                         const PickleLimits& limits) {
    return Machine(pickle, file, record, storage, ctx, limits).run();
}

Result<PyValue> read_torch_save(const std::vector<uint8_t>& bytes, const std::string& file,
                                const std::string& record, const PickleLimits& limits) {
    auto z = ZipArchive::open(bytes, file + ":" + record);
    if (!z.ok()) return z.error();
    const ZipArchive& zip = z.value();
    InnerZip inner{&zip, ""};
    bool found = false;
    for (const ZipEntry& e : zip.entries()) {
        size_t slash = e.name.find('/');
        if (slash != std::string::npos &&
            e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
            inner.prefix = e.name.substr(0, slash + 1);
            found = true;
            break;
        }
    }
    if (!found) {
        Error e = make_error(record, "not a torch.save file: no <root>/data.pkl record",
                             "save the value with torch.save (the zip format of torch >= 1.6)");
        e.file = file;
        return e;
    }
    if (const ZipEntry* bo = zip.find(inner.prefix + "byteorder")) {
        auto order = zip.read(*bo);
        if (!order.ok()) return order.error();
        std::string text(order.value().begin(), order.value().end());
        if (text != "little") {
            Error e = make_error(record + ":" + inner.prefix + "byteorder",
                                 "the storages are stored '" + text + "' endian",
                                 "pt2lab reads little-endian files; save on a little-endian "
                                 "machine");
            e.file = file;
            return e;
        }
    }
    auto pkl = zip.read(*zip.find(inner.prefix + "data.pkl"));
    if (!pkl.ok()) return pkl.error();
    return unpickle(pkl.value(), file, record + ":" + inner.prefix + "data.pkl", read_inner_storage,
                    &inner, limits);
}

} // namespace pt2lab
