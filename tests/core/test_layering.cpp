// The core depends on nothing but std and nlohmann_json: no ImGui, no
// emscripten, no app headers. This test reads every file under src/core.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
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
