// File-test kinds that check analyses and passes (docs/filetests.md):
//
//   domtree    `; domtree: blockB idom blockA` for every reachable non-entry
//              block (`blockB unreachable` may be written for the others)
//   loops      `; loop: blockH depth D parent blockP|none blocks ... latches
//              ... exits ...` for every loop, or `; error: TEXT` for an
//              irreducible function; `; counted: ...` lines for the counted
//              loops
//   optimize   run the passes named on the `test optimize` line, then match
//              `; check:` / `; nextln:` / `; not:` lines against the printed
//              result and run its `; run:` directives on the interpreter
//
// Each kind reports into a KindReport: one failure line per mismatch, one
// passed count per annotation that matched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codegen/ir/parser.h"
#include "tools/filetest.h"

namespace heron::tools {

struct KindReport {
    std::string_view path;
    std::string& out;
    FileTestStats& stats;

    void fail(uint32_t line, const std::string& msg);
    void pass() { ++stats.passed; }
};

void run_domtree_kind(const ParsedFunction& pf, KindReport& report);
void run_loops_kind(const ParsedFunction& pf, KindReport& report);
/// `passes` is the rest of the `test optimize` line (comma-separated pass
/// names). The other functions of `file` are callable from run directives.
void run_optimize_kind(const TestFile& file, const ParsedFunction& pf, std::string_view passes,
                       KindReport& report);

}  // namespace heron::tools
