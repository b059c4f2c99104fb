// Lowers a region tree (codegen/opt/structurize.h) back into IR: a new
// function built statement by statement with the FunctionBuilder, so that
// the structured form can be checked for real against the original under
// the interpreter (tests/unit/structure_test.cpp).
//
// Every value of the original function, the block parameters included,
// becomes a FunctionBuilder variable: instructions are copied with their
// operands read by use_var and their results written by def_var, an Assign
// statement is a parallel assignment of variables, and the exit codes and
// flags of the tree are variables too. The SSA builder then places the block
// parameters the new control flow needs. Loops become a header block that
// the body jumps back to (`while !flag` tests the flag there), labeled
// blocks an end block that `break` jumps to, `if` a brif, `switch` a
// br_table.
#pragma once

#include <optional>
#include <string>

#include "codegen/ir/function.h"
#include "codegen/opt/structurize.h"
#include "frontend/function_builder.h"

namespace heron {

/// Builds in `out` (which must be empty) a function with the name, signature,
/// stack slots, signatures and external functions of `func` whose body is
/// `tree`, which must have been built for `func`. Returns an error message if
/// the builder reported misuse (a bug in the tree).
std::optional<std::string> lower_region_tree(const Function& func, const RegionTree& tree, Function& out,
                                             FunctionBuilderContext& ctx);

}  // namespace heron
