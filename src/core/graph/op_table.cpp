// The graph layer's view of graph/op_rows.inc: schemas parsed once, flags.
#include "graph/op_table.h"

#include <string>
#include <unordered_map>

#include "util/check.h"

namespace pt2lab {

namespace {

#define CORE_ATEN kOpCoreAten
#define SIDE_EFFECT kOpSideEffect
#define WRITES(k) op_writes_arg(k)

struct Row {
    OpId id;
    const char* schema;
    uint32_t flags;
};
const Row kRows[] = {
#define PT2LAB_OP(id, schema, kernel, decomposition, flags) {OpId::id, schema, flags},
#include "graph/op_rows.inc"
#undef PT2LAB_OP
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kOpCount, "one row per OpId");

#undef CORE_ATEN
#undef SIDE_EFFECT
#undef WRITES

struct Table {
    std::vector<OpInfo> ops;
    std::unordered_map<std::string, size_t> by_target;
};

const Table& table() {
    static const Table t = [] {
        Table tb;
        tb.ops.reserve(kOpCount);
        for (size_t k = 0; k < kOpCount; ++k) {
            PT2LAB_CHECK(static_cast<size_t>(kRows[k].id) == k);
            auto parsed = parse_op_schema(kRows[k].schema);
            // The table is our own data: a schema that does not parse is a bug.
            PT2LAB_CHECK(parsed.ok());
            tb.by_target[parsed.value().target()] = k;
            tb.ops.push_back(OpInfo{kRows[k].id, kRows[k].schema, kRows[k].flags, parsed.take()});
        }
        PT2LAB_CHECK(tb.by_target.size() == kOpCount); // no target twice
        return tb;
    }();
    return t;
}

} // namespace

bool OpInfo::writes(size_t k) const {
    if (k < schema.arguments.size() && schema.arguments[k].type.mutable_alias()) return true;
    return k < 24 && (flags & op_writes_arg(static_cast<unsigned>(k)));
}

const std::vector<OpInfo>& op_table() {
    return table().ops;
}

const OpInfo& op_info(OpId id) {
    return table().ops[static_cast<size_t>(id)];
}

const OpInfo* find_op(std::string_view target) {
    const Table& t = table();
    auto it = t.by_target.find(std::string(target));
    return it == t.by_target.end() ? nullptr : &t.ops[it->second];
}

} // namespace pt2lab
