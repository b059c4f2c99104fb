// The pass and analysis commands of `heron` (cli_passes.cpp).
#pragma once

#include <string>
#include <vector>

namespace heron::tools {

/// `heron opt FILE --passes=a,b [--dump-after=NAME|all]... [--no-verify]`
int cmd_opt(const std::vector<std::string>& args);
/// `heron loops FILE`: the loop tree with each loop's kind and range.
int cmd_loops(const std::vector<std::string>& args);

}  // namespace heron::tools
