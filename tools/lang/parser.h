// Recursive-descent parser of the small language (grammar: docs/lang.md).
// Stops at the first error and returns it with its line and column.
#pragma once

#include <optional>
#include <string_view>

#include "codegen/ir/diagnostic.h"
#include "tools/lang/ast.h"

namespace heron::lang {

struct ParseResult {
    Program program;
    std::optional<Diagnostic> error;
};

/// A source file: function definitions only.
ParseResult parse_program(std::string_view src);
/// A REPL input: function definitions and statements in any order; a final
/// expression without ';' is the input's value.
ParseResult parse_repl_input(std::string_view src);

}  // namespace heron::lang
