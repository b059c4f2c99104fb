// The file-test runner behind `heron test` (text-format.md, "What heron test
// prints"): each .clif file names test kinds in its header; the runner
// applies each kind to every function and counts directives. Failures print
// one line each, `FILE:LINE: what was expected, what came back`; the closing
// line is `N passed, N failed[, N skipped]`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/machinst/isa.h"

namespace heron::tools {

struct FileTestStats {
    uint64_t passed = 0;
    uint64_t failed = 0;
    uint64_t skipped = 0;

    FileTestStats& operator+=(const FileTestStats& o) {
        passed += o.passed;
        failed += o.failed;
        skipped += o.skipped;
        return *this;
    }
};

struct FileTestOptions {
    /// Instructions one interpreted call may execute before it is stopped.
    uint64_t fuel = 200'000'000;
    /// The ISA `test run` compiles for (see isa_by_name), empty for the
    /// host's; "x86_64-baseline" switches off every optional CPU feature to
    /// exercise the fallbacks.
    std::string isa;
    /// The opt_level `test run` compiles at, overriding the file's
    /// `set opt_level=` (nullopt: the file's, else none).
    std::optional<OptLevel> opt_level;
    /// The register allocator `test run` compiles with.
    RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan;
    /// `test compile precise`: replace a listing that differs from the
    /// output instead of failing (HERON_TEST_BLESS=1 sets it).
    bool bless = false;
};

/// Runs the tests of one file whose contents are `text`. Failure lines and
/// notes are appended to `out`, each ending in '\n'. With opts.bless, a
/// precise listing that changed is rewritten into the file at `path`.
FileTestStats run_file_test(std::string_view path, std::string_view text, const FileTestOptions& opts,
                            std::string& out);

/// Expands directories into their *.clif files (recursively, sorted). Paths
/// that do not exist and folder entries that cannot be read (a folder
/// without permission, a dangling link) are appended to `errors`, one line
/// each naming the path.
std::vector<std::string> collect_test_files(const std::vector<std::string>& paths, std::string& errors);

/// `heron test [--opt-level=none|speed] PATH...`: runs every file, prints
/// failures and the closing line to stdout; returns the exit status (0 only
/// when nothing failed).
int run_test_command(const std::vector<std::string>& args);

}  // namespace heron::tools
