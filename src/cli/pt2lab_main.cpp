// pt2lab: command-line view of torch.export files, printed the way PyTorch prints them.
#include <cstdio>

int main(int argc, char** argv) {
    std::fprintf(stderr, "usage: pt2lab info|graph|code|tabular|signature FILE [--module]\n");
    return argc > 1 && argv ? 2 : 2;
}
