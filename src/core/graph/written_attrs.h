// What running a graph can change: the get_attr targets its ops write in
// place (copy_ into a buffer, batch_norm's running statistics), per the op
// table's in-place writes. The page asks it before running a graph on its own.
#pragma once

#include <set>
#include <string>

#include "graph/graph.h"

namespace pt2lab {

// An op whose `training` argument is a literal False (eval-mode batch_norm)
// writes nothing. The Workspace copies these before a run (so the history keeps
// its values) and asks it whether a run would change the state.
std::set<std::string> attrs_written_in_place(const Graph& g);

} // namespace pt2lab
