#include "tools/cli.h"

#include <cstdio>

namespace heron::tools {
int main(int, char**) {
    std::fprintf(stderr, "heron: not implemented yet\n");
    return 2;
}
}  // namespace heron::tools
