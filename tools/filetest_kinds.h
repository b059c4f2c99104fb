// File-test kinds that check analyses and passes (docs/filetests.md):
//
//   domtree    `; domtree: blockB idom blockA` for every reachable non-entry
//              block (`blockB unreachable` may be written for the others)
//   loops      `; loop: blockH depth D parent blockP|none blocks ... latches
//              ... exits ...` for every loop, or `; error: TEXT` for an
//              irreducible function; `; counted: ...` lines for the counted
//              loops
//   compile    compile for each `target` line and match check lines or a
//              precise listing (filetest_compile.cpp)
//   optimize   run the passes named on the `test optimize` line, then match
//              `; check:` / `; nextln:` / `; not:` lines against the printed
//              result and run its `; run:` directives on the interpreter
//
// Each kind reports into a KindReport: one failure line per mismatch, one
// passed count per annotation that matched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codegen/ir/parser.h"
#include "tools/filetest.h"

namespace heron::tools {

/// `s` without leading blanks and without trailing blanks and '\r'.
std::string_view trim(std::string_view s);

struct KindReport {
    std::string_view path;
    std::string& out;
    FileTestStats& stats;

    void fail(uint32_t line, const std::string& msg);
    void pass() { ++stats.passed; }
};

/// filecheck-style matching of the `; check:` / `; nextln:` / `; not:`
/// comments of `pf` against `output` (docs/filetests.md, `test optimize`).
/// `what` starts every failure message ("%f x86_64 disasm: "). Returns
/// the number of check lines of `pf` (0: nothing was matched).
size_t match_checks(const ParsedFunction& pf, const std::string& output, std::string_view what,
                    KindReport& report);

void run_domtree_kind(const ParsedFunction& pf, KindReport& report);
void run_loops_kind(const ParsedFunction& pf, KindReport& report);
/// `passes` is the rest of the `test optimize` line (comma-separated pass
/// names). The other functions of `file` are callable from run directives.
void run_optimize_kind(const TestFile& file, const ParsedFunction& pf, std::string_view passes,
                       KindReport& report);
/// `test compile [disasm|vcode] [precise]` (tools/filetest_compile.cpp):
/// compiles every function of `file` for each of its `target` lines and
/// matches check lines, or with `precise` the whole listing that follows
/// each function. `text` is the file's text. With `bless`, a precise
/// listing that differs is replaced; the rewritten text is returned (the
/// caller writes it), nullopt when nothing changed.
std::optional<std::string> run_compile_kind(std::string_view text, const TestFile& file, std::string_view mode,
                                            bool bless, KindReport& report);

}  // namespace heron::tools
