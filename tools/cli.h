// Entry point of the `heron` command, callable from tests.
#pragma once

namespace heron::tools {
int main(int argc, char** argv);
}
