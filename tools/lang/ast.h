// The syntax tree of the small language (docs/lang.md). The parser builds
// it, codegen.cpp type-checks and lowers it through the FunctionBuilder.
// Every node keeps the location of its first token for error messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/ir/diagnostic.h"
#include "tools/lang/lexer.h"

namespace heron::lang {

enum class ValType : uint8_t { I64, F64 };

/// How deep expressions and statements may nest. The parser, the code
/// generator and the tree's destructors recurse, so input nested deeper is
/// an error instead of a stack overflow.
inline constexpr uint32_t kMaxNesting = 256;
inline const char* val_type_name(ValType t) { return t == ValType::I64 ? "i64" : "f64"; }

struct Expr {
    enum class Kind : uint8_t { Int, Float, Var, Unary, Binary, Call };
    Kind kind = Kind::Int;
    Location loc;
    int64_t ival = 0;
    double fval = 0;
    std::string name;  // Var, Call
    Tok op = Tok::End;  // Unary, Binary
    std::vector<std::unique_ptr<Expr>> args;  // operands or call arguments
    uint32_t height = 1;  // of the subtree: bounded by the parser (kMaxNesting)
};
using ExprPtr = std::unique_ptr<Expr>;

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct MatchArm {
    Location loc;
    std::vector<int64_t> values;      // empty for `_`
    std::vector<Location> value_locs;
    bool is_default = false;
    StmtList body;
};

struct Stmt {
    enum class Kind : uint8_t { Let, Assign, If, While, For, Break, Continue, Return, Match, Block, Expr };
    Kind kind = Kind::Expr;
    Location loc;
    std::string name;            // Let, Assign, For (the loop variable)
    bool has_type = false;       // Let with `: T`
    ValType type = ValType::I64;
    Tok op = Tok::Assign;        // Assign: = += -= ...
    ExprPtr e1, e2;              // value / condition / range bounds / selector / returned value
    StmtList body, else_body;    // If, While, For, Block
    bool has_else = false;
    bool is_tail = false;        // Expr: the last expression of a body, without ';' (its value)
    std::vector<MatchArm> arms;
};

struct Param {
    std::string name;
    ValType type = ValType::I64;
    Location loc;
};

struct FnDecl {
    std::string name;
    Location loc;
    std::vector<Param> params;
    ValType ret = ValType::I64;
    StmtList body;
};

/// A source file (only functions) or a REPL input (functions and/or
/// statements to run at once).
struct Program {
    std::vector<FnDecl> fns;
    StmtList stmts;
};

}  // namespace heron::lang
