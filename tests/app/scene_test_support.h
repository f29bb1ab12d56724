// What the scene tests share: fixed text metrics (so layouts do not depend on a
// font) and the lesson graphs shipped in assets/graphs.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "graph_scene.h"
#include "io/program_loader.h"

namespace pt2lab::app::test {

inline SceneMetrics fixed_metrics() {
    SceneMetrics m;
    m.text_width = [](const std::string& s, bool mono) {
        return float(s.size()) * (mono ? 7.f : 6.f);
    };
    return m;
}

inline ExportedProgram load_asset(const std::string& name) {
    auto ep = load_program_file(std::string(PT2LAB_SOURCE_DIR) + "/assets/graphs/" + name);
    REQUIRE(ep.ok());
    return ep.take();
}

} // namespace pt2lab::app::test
