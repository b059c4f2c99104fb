// Dead-code elimination and CFG simplification (docs/optimizer.md).
//
// dce: counts the uses of every value over the whole layout, then removes
// pure instructions (effects.h) whose results are all unused and unused
// parameters of non-entry blocks (with the matching argument of every
// branch to the block), following a work list: a removal that leaves an
// operand unused looks at its definition next. Linear in the function.
//
// simplify-cfg: in one walk, `brif` on a constant and `brif` whose two
// destinations are the same call, and `br_table` on a constant, become
// `jump`; the blocks no longer reachable from the entry are removed; a
// block ending in a jump to a block with no other predecessor absorbs it
// (the absorbed block's parameters become the jump's arguments). Linear.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// How many instructions and parameters it removed.
uint32_t eliminate_dead_code(Function& func, PassContext& ctx);
/// How many branches it folded and blocks it removed or merged.
uint32_t simplify_cfg(Function& func, PassContext& ctx);

}  // namespace heron
