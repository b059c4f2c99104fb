// The `heron` command: file tests, cat, verify (and later run, compile, repl).
#include "tools/cli.h"

int main(int argc, char** argv) { return heron::tools::main(argc, argv); }
