// The CLIF text parser (shared/docs/text-format.md). It never aborts on bad
// input: errors come back as diagnostics with line:column, several per file
// where it can recover (it skips to the next function). Entity numbers of
// the source (v7, block3, ss1, fn0, sig2) are kept as the entity indices, so
// the printer and the verifier name things as the source did.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/diagnostic.h"
#include "codegen/ir/entity.h"
#include "codegen/ir/function.h"

namespace heron {

/// Where each entity of a parsed function was written.
struct SourceMap {
    Location function;                   // the `function` keyword
    SecondaryMap<Inst, uint32_t> inst_line;
    SecondaryMap<Block, uint32_t> block_line;
    uint32_t end_line = 0;               // the closing brace
};

/// A `; comment` line and the function it follows (or precedes, for the
/// file header). `text` is everything after the ';', untrimmed.
struct Comment {
    uint32_t line = 0;
    std::string text;
};

struct ParsedFunction {
    std::unique_ptr<Function> func;
    SourceMap srcmap;
    /// Comments from after this function's opening line up to the next
    /// function (run directives, error annotations, check lines).
    std::vector<Comment> comments;
};

struct TestFile {
    std::vector<std::string> tests;                              // `test KIND ...` lines (after "test ")
    std::vector<std::pair<std::string, std::string>> settings;   // `set NAME=VALUE`
    std::vector<std::string> targets;                            // `target ISA [flags]` (after "target ")
    std::vector<Comment> preamble_comments;                      // before the first function
    std::vector<ParsedFunction> functions;
};

struct ParseOutcome {
    TestFile file;
    Diagnostics errors;  // empty when the whole text parsed
    bool ok() const { return errors.empty(); }
};

/// Parses a whole file test (header + functions + comments). Functions that
/// parsed are kept even when others failed.
ParseOutcome parse_test_file(std::string_view text);

/// Parses text holding one or more functions (no header). Errors go to `errors`.
std::vector<std::unique_ptr<Function>> parse_functions(std::string_view text, Diagnostics& errors);

}  // namespace heron
