// Helpers shared by the core tests.
#include "test_support.h"

#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "graph/printer.h"
#include "io/npy.h"
#include "workspace/action_json.h"

namespace pt2lab_test {

using namespace pt2lab;

std::vector<std::string> list_dir(const std::string& rel_dir, const std::string& suffix) {
    std::vector<std::string> out;
    DIR* d = opendir(source_path(rel_dir).c_str());
    if (!d) return out;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n[0] != '.' && n.size() > suffix.size() &&
            n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(rel_dir + "/" + n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

pt2lab::ExportedProgram load_asset(const std::string& name_or_path) {
    std::string rel = name_or_path.find('/') == std::string::npos
                          ? "assets/graphs/" + name_or_path + ".pt2"
                          : name_or_path;
    auto r = pt2lab::load_program_file(source_path(rel));
    INFO(rel << ": " << (r.ok() ? "" : r.error().str()));
    REQUIRE(r.ok());
    return r.take();
}

pt2lab::Tensor load_npy(const std::string& rel) {
    auto bytes = pt2lab::read_file_bytes(source_path(rel));
    INFO(rel);
    REQUIRE(bytes.ok());
    auto t = pt2lab::read_npy(bytes.value(), rel);
    INFO((t.ok() ? "" : t.error().str()));
    REQUIRE(t.ok());
    return pt2lab::Tensor::from_data(t.value());
}

std::string mask_addresses(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        if (s[i] == '0' && i + 2 < s.size() && s[i + 1] == 'x' &&
            std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            size_t j = i + 2;
            while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j]))) ++j;
            out += "0xADDR" + std::string(j - i > 6 ? j - i - 6 : 0, ' ');
            i = j;
        } else {
            out += s[i++];
        }
    }
    return out;
}

std::string first_difference(const std::string& expected, const std::string& actual) {
    std::istringstream a(expected), b(actual);
    std::string la, lb;
    int line = 1;
    for (;; ++line) {
        bool ga = static_cast<bool>(std::getline(a, la));
        bool gb = static_cast<bool>(std::getline(b, lb));
        if (!ga && !gb) return "identical";
        if (la != lb || ga != gb)
            return "line " + std::to_string(line) + ":\n  expected: [" + (ga ? la : "<end>") +
                   "]\n  actual:   [" + (gb ? lb : "<end>") + "]";
    }
}

std::unique_ptr<Workspace> open_workspace(const std::string& name) {
    auto ws = Workspace::open_file(source_path("assets/graphs/" + name + ".pt2"));
    INFO(name << ": " << (ws.ok() ? std::string() : ws.error().str()));
    REQUIRE(ws.ok());
    return ws.take();
}

Action action(const std::string& json) {
    auto a = parse_action(json, "test");
    INFO(json << ": " << (a.ok() ? std::string() : a.error().str()));
    REQUIRE(a.ok());
    return a.take();
}

// Everything a user can see of a workspace, as one string.
std::string fingerprint(const Workspace& ws) {
    std::string f = "version " + std::to_string(ws.version()) + "\n";
    f += graph_str(*ws.module().graph) + ws.module().code() + ws.readable(GraphView::Module);
    for (uint32_t id : ws.code(GraphView::Module).line_nodes) f += std::to_string(id) + ",";
    for (const Node* n : ws.module().graph->nodes()) f += std::to_string(n->id()) + n->name() + ";";
    for (const auto& [name, sub] : ws.module().submodules)
        f += "sub " + name + " " + sub.type + "\n";
    for (const auto& [fqn, t] : ws.module().attrs)
        f += "attr " + fqn + " " + std::to_string(t->numel()) + "\n";
    if (ws.has_program()) {
        f += graph_str(*ws.program().graph) + ws.program_str() + ws.code(GraphView::Program).text;
        f += ir_level_name(ws.level());
    }
    for (const auto& [fqn, t] : ws.state().tensors) {
        uint64_t h = 1469598103934665603ull; // FNV-1a over the bytes
        for (uint8_t b : t->storage) h = (h ^ b) * 1099511628211ull;
        f += "tensor " + fqn + " " + t->type_str() + " " + std::to_string(h) + "\n";
    }
    for (const auto& [name, o] : ws.state().observers) {
        char line[128];
        std::snprintf(line, sizeof line, "observer %s %a %a %lld\n", name.c_str(), o->min_val(),
                      o->max_val(), static_cast<long long>(o->calls()));
        f += line;
    }
    for (const auto& h : ws.undo_history()) f += "undo " + h.label + "\n";
    for (const auto& h : ws.redo_history()) f += "redo " + h.label + "\n";
    if (ws.last_run()) f += "run at " + std::to_string(ws.last_run()->version) + "\n";
    return f;
}

} // namespace pt2lab_test
