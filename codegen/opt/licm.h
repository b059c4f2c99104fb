// Loop-invariant code motion for pure instructions: an instruction whose
// effects are movable (effects.h) and whose operands are all defined outside
// a loop moves to the end of that loop's preheader, for the outermost such
// loop around it: out of every loop it is invariant in, in one move. One
// walk over the blocks in reverse postorder, so a chain of invariant
// instructions moves in one sweep and a d-deep nest costs O(d log^2 d)
// (licm.cpp). Only the layout changes: the DFG, the CFG and every analysis
// stay valid. Requires LoopForm (the preheaders).
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many instructions moved.
uint32_t hoist_loop_invariants(Function& func, PassContext& ctx);

}  // namespace heron
