// Rendering of Error values.
#include "util/status.h"

namespace pt2lab {

std::string Error::str() const {
    std::string s;
    if (!file.empty()) s += file + ": ";
    if (!where.empty()) s += where + ": ";
    s += message;
    if (!hint.empty()) s += " (hint: " + hint + ")";
    return s;
}

Error make_error(std::string where, std::string message, std::string hint) {
    Error e;
    e.where = std::move(where);
    e.message = std::move(message);
    e.hint = std::move(hint);
    return e;
}

} // namespace pt2lab
