// How long opening a file takes and how long its longest uninterruptible piece
// is (the page opens in pieces of about 10 ms, docs/ARCHITECTURE.md): each file
// opened --runs times with Workspace::open, then once more in pieces with
// Opening::step(--slice), timing every piece by stage.
//   pt2lab_open_bench FILE... [--runs N] [--slice SECONDS] [--pieces]
// --pieces lists every piece longer than twice the slice, with the stage it began in.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "io/program_loader.h"
#include "workspace/workspace.h"

using namespace pt2lab;
using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int main(int argc, char** argv) {
    std::vector<std::string> files;
    int runs = 5;
    double slice = 0.008;
    bool list_pieces = false;
    for (int k = 1; k < argc; ++k) {
        std::string a = argv[k];
        if (a == "--runs" && k + 1 < argc)
            runs = std::atoi(argv[++k]);
        else if (a == "--slice" && k + 1 < argc)
            slice = std::atof(argv[++k]);
        else if (a == "--pieces")
            list_pieces = true;
        else
            files.push_back(a);
    }
    if (files.empty()) {
        std::fprintf(stderr,
                     "usage: pt2lab_open_bench FILE... [--runs N] [--slice SECONDS] [--pieces]\n");
        return 2;
    }
    std::printf("%-28s %9s %9s %7s  %s\n", "file", "MB", "open ms", "pieces",
                "longest piece ms (stage)");
    for (const std::string& path : files) {
        auto bytes = read_file_bytes(path);
        if (!bytes.ok()) {
            std::fprintf(stderr, "%s\n", bytes.error().str().c_str());
            return 1;
        }
        const std::string name = path.substr(path.find_last_of('/') + 1);
        std::vector<double> whole;
        for (int r = 0; r < runs; ++r) {
            std::vector<uint8_t> copy = bytes.value();
            const Clock::time_point t0 = Clock::now();
            auto ws = Workspace::open(std::move(copy), name);
            whole.push_back(ms_since(t0));
            if (!ws.ok()) {
                std::fprintf(stderr, "%s\n", ws.error().str().c_str());
                return 1;
            }
        }
        std::sort(whole.begin(), whole.end());
        Opening o(bytes.value(), name);
        int pieces = 0;
        double longest = 0;
        std::string longest_what;
        while (true) {
            const std::string what = o.progress().what;
            const Clock::time_point t0 = Clock::now();
            const bool over = o.step(slice);
            const double ms = ms_since(t0);
            ++pieces;
            if (ms > longest) longest = ms, longest_what = what;
            if (list_pieces && ms > 2000 * slice)
                std::printf("  piece %d: %.1f ms from \"%s\" to \"%s\"\n", pieces, ms, what.c_str(),
                            o.progress().what.c_str());
            if (over) break;
        }
        if (!o.finish().ok()) return 1;
        std::printf("%-28s %9.1f %9.1f %7d  %.1f (%s)\n", name.c_str(),
                    static_cast<double>(bytes.value().size()) / 1e6, whole[whole.size() / 2],
                    pieces, longest, longest_what.c_str());
    }
    return 0;
}
