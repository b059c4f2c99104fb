// `heron structure FILE [--no-break]` and the `test structure` file-test
// kind (docs/structure.md, docs/filetests.md).
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/parser.h"
#include "tools/filetest_kinds.h"

namespace heron::tools {

/// Prints the structured pseudo-code of every function of the file.
int cmd_structure(const std::vector<std::string>& args);

/// Checks `; structure:` / `; no-break:` / `; error:` annotations of `pf`.
void run_structure_kind(const ParsedFunction& pf, KindReport& report);

}  // namespace heron::tools
