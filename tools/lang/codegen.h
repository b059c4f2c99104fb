// Lowers the small language to IR through the FunctionBuilder, the way an
// embedder's frontend would: variables become def_var/use_var, loops use
// the loop scopes (break/continue), `match` becomes a Switch. Types (i64,
// f64) are checked on the way; the first error comes back with its line and
// column, and nothing is produced then.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/ir/diagnostic.h"
#include "codegen/ir/function.h"
#include "codegen/ir/parser.h"
#include "tools/lang/ast.h"

namespace heron::lang {

/// Functions defined outside the program (earlier REPL definitions) that it
/// may call: name (without '%') -> signature.
using Environment = std::map<std::string, Signature>;

struct CompiledFunction {
    std::unique_ptr<Function> func;
    /// Source lines of the function and of instructions that may trap
    /// (divisions, calls); columns in `inst_col`.
    SourceMap srcmap;
    SecondaryMap<Inst, uint32_t> inst_col;
};

struct CodegenResult {
    std::vector<CompiledFunction> fns;  // in source order; the statements' function last
    std::optional<Diagnostic> error;
    /// Program::stmts were compiled into the function `stmts_name`_i64 or
    /// _f64 (by the type of their value), the last of `fns`.
    bool has_stmts = false;
    bool has_value = false;  // the statements end with an expression
    ValType value_type = ValType::I64;
};

struct CodegenOptions {
    /// Every variable lives in a stack slot of its own, stored at each
    /// definition and loaded at each use (`stack_addr` each time), the way
    /// a naive frontend writes IR; the optimizer's mem2reg makes values of
    /// them again. Off: variables go through the FunctionBuilder's SSA
    /// construction.
    bool locals_in_slots = false;
};

/// Compiles every function of `prog` and, if it has statements, a function
/// of no parameters running them (named `stmts_name` + "_" + its type).
CodegenResult compile(const Program& prog, const Environment& env, const std::string& stmts_name = "__lang_expr",
                      const CodegenOptions& options = {});

/// The IR signature of a language function.
Signature signature_of(const std::vector<ValType>& params, ValType ret);

}  // namespace heron::lang
