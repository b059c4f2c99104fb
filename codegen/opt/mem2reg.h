// mem2reg: stack slots that are only loaded and stored become SSA values
// (docs/optimizer.md).
//
// A slot is promoted when every use of its address — `stack_addr ssN+k`,
// possibly offset further by `iadd` of a constant — is the address of a
// load or a store, and its accesses split it into cells: each access lies
// inside the slot, accesses at one offset agree on their width, their
// class (integer, or one float type) and their byte order, and no two
// cells overlap. A cell then is a variable of the integer type of its
// width or of its float type: `istore8` stores an `ireduce`, `uload8` /
// `sload8` load an `uextend` / `sextend` of it, a plain access moves the
// value as it is. An address that goes anywhere else (a call, a branch
// argument, a store's value, any other arithmetic) makes the slot stay.
//
// The SSA form is built as in textbooks, pruned by liveness: a cell gets a
// parameter in a block with two or more predecessors where it is live on
// entry; a walk over the dominator tree then renames (a load reads the
// cell's current value, a store sets it, a branch passes it to its
// targets' new parameters); a cell read before any store reads zero (the
// reference leaves it unspecified; the interpreter's fresh slots hold zero). Parameters whose
// incoming values are all one value (or the parameter itself) are removed
// afterwards, following a work list, so the result has no more parameters
// than a minimal SSA form. The promoted slots' accesses and addresses are
// removed and the remaining slots renumbered.
//
// Keeps the CFG, the dominator tree and the loops (no edge changes). Linear
// in the function plus the sum of the cells' live ranges, and a sort of the
// accesses.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// How many slots it promoted.
uint32_t promote_stack_slots(Function& func, PassContext& ctx);

}  // namespace heron
