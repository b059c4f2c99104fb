// Loop-invariant code motion for pure instructions: an instruction whose
// effects are movable (effects.h) and whose operands are all defined outside
// the loop moves to the end of the loop's preheader. Loops are visited inner
// first, so a computation hoisted out of an inner loop into its preheader
// (a block of the outer loop) can leave the outer loop too. A loop looks
// only at its own blocks (not those of nested loops), in reverse postorder,
// so a chain of invariant instructions moves in one sweep and deep nests
// cost linear time. Only the layout changes: the DFG, the
// CFG and every analysis stay valid. Requires LoopForm (the preheader).
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many instructions moved.
uint32_t hoist_loop_invariants(Function& func, PassContext& ctx);

}  // namespace heron
