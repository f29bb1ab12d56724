// The action table (action_rows.inc) as data: every JSON action kind with the
// Action::Kind it becomes, its fields and its button label. action_json.cpp
// validates with it; the lesson parser lists it in its errors.
#pragma once

#include <cstddef>
#include <string>

#include "workspace/workspace.h"

namespace pt2lab {

struct ActionRow {
    const char* json;  // "decompose", "insert", ...
    Action::Kind kind; // what it becomes
    bool is_edit;      // kind == Edit: `edit` says which
    EditAction::Kind edit;
    const char* fields; // space-separated, besides "kind" and "label"
    const char* label;  // the page's button text
    // Whether `field` is one this row allows ("kind" and "label" always are).
    bool allows(const std::string& field) const;
};

// All rows, in table order; count() of them.
const ActionRow* action_rows();
size_t action_row_count();
// The row of a JSON kind, or null.
const ActionRow* find_action_row(const std::string& json_kind);
// The row an action came from: its JSON kind (train / eval by Action::train).
const ActionRow& action_row(const Action& a);
// "decompose, decompose_node, ..." (for error messages).
std::string action_kind_list();

} // namespace pt2lab
