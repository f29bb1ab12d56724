// The core depends on nothing but std and nlohmann_json: no ImGui, no
// emscripten, no app headers; and inside it, folders depend on each other only
// along the edges docs/ARCHITECTURE.md draws. This test reads every file under src/core.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {
void list_files(const std::string& dir, std::vector<std::string>& out) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        struct stat st {};
        if (stat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            list_files(path, out);
        else
            out.push_back(path);
    }
    closedir(d);
}
} // namespace

TEST_CASE("src/core includes only std, nlohmann and itself", "[layering]") {
    std::vector<std::string> files;
    list_files(std::string(PT2LAB_SOURCE_DIR) + "/src/core", files);
    REQUIRE(files.size() > 10);
    int includes = 0;
    for (const auto& f : files) {
        std::ifstream in(f);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("#include", 0) != 0) continue;
            ++includes;
            INFO(f << ": " << line);
            CHECK(line.find("imgui") == std::string::npos);
            CHECK(line.find("emscripten") == std::string::npos);
            CHECK(line.find("GLFW") == std::string::npos);
            CHECK(line.find("app/") == std::string::npos);
        }
    }
    CHECK(includes > 20);
}

// Which folders each folder of src/core may include (itself always).
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"util", {}},
    {"graph", {"util"}},
    {"program", {"graph", "util"}},
    {"io", {"program", "graph", "util"}},
    {"exec", {"program", "graph", "util"}},
    {"passes", {"exec", "program", "graph", "util"}},
    {"edit", {"program", "graph", "util"}},
    {"workspace", {"edit", "passes", "exec", "io", "program", "graph", "util"}},
    {"lesson", {"workspace", "edit", "passes", "exec", "io", "program", "graph", "util"}},
};

TEST_CASE("src/core folders include each other only along the documented edges", "[layering]") {
    const std::string root = std::string(PT2LAB_SOURCE_DIR) + "/src/core/";
    std::vector<std::string> files;
    list_files(root.substr(0, root.size() - 1), files);
    int edges = 0;
    for (const auto& f : files) {
        std::string rel = f.substr(root.size());
        size_t slash = rel.find('/');
        if (slash == std::string::npos) continue; // CMakeLists.txt
        std::string folder = rel.substr(0, slash);
        INFO(rel);
        auto allowed = kAllowed.find(folder);
        REQUIRE(allowed != kAllowed.end()); // a new folder: add it to the table and the docs
        std::ifstream in(f);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("#include \"", 0) != 0) continue;
            size_t start = 10, end = line.find('/', start);
            if (end == std::string::npos) continue;
            std::string dep = line.substr(start, end - start);
            if (dep == folder) continue;
            INFO(line);
            CHECK(allowed->second.count(dep) == 1);
            ++edges;
        }
    }
    CHECK(edges > 30);
}

TEST_CASE("a header of one folder is not implemented in another", "[layering]") {
    // Every Type::member definition in a .cpp names a type its own folder declares.
    const std::string root = std::string(PT2LAB_SOURCE_DIR) + "/src/core/";
    std::vector<std::string> files;
    list_files(root.substr(0, root.size() - 1), files);
    std::map<std::string, std::string> type_folder; // "GraphModule" -> "program"
    for (const auto& f : files) {
        if (f.size() < 2 || f.substr(f.size() - 2) != ".h") continue;
        std::string rel = f.substr(root.size());
        std::string folder = rel.substr(0, rel.find('/'));
        std::ifstream in(f);
        std::string line;
        while (std::getline(in, line))
            for (const char* kw : {"struct ", "class "}) {
                if (line.rfind(kw, 0) != 0) continue;
                std::string name = line.substr(std::string(kw).size());
                name = name.substr(0, name.find_first_of(" {;:"));
                if (!name.empty() && line.find(';') == std::string::npos)
                    type_folder[name] = folder;
            }
    }
    REQUIRE(type_folder.count("GraphModule"));
    REQUIRE(type_folder.at("ObserverConfig") == "program");
    int checked = 0;
    for (const auto& f : files) {
        if (f.size() < 4 || f.substr(f.size() - 4) != ".cpp") continue;
        std::string rel = f.substr(root.size());
        std::string folder = rel.substr(0, rel.find('/'));
        std::ifstream in(f);
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == ' ' || line[0] == '/' || line[0] == '#') continue;
            size_t colons = line.find("::");
            size_t paren = line.find('(');
            if (colons == std::string::npos || paren == std::string::npos || colons > paren)
                continue;
            size_t start = line.rfind(' ', colons);
            std::string type = line.substr(start == std::string::npos ? 0 : start + 1,
                                           colons - (start == std::string::npos ? 0 : start + 1));
            auto it = type_folder.find(type);
            if (it == type_folder.end()) continue;
            INFO(rel << ": " << line);
            CHECK(it->second == folder);
            ++checked;
        }
    }
    CHECK(checked > 20);
}
