// Entry splitting, for shrink-wrapping: when the entry block makes no call
// and branches (`brif`) to a block S that only it enters, and the blocks S
// dominates make calls, every value the entry defines (its parameters, the
// results of its instructions other than constants) that those blocks read
// becomes a new parameter of S, passed by the branch, and the reads there
// use the parameter. The entry's values then live only in the entry: the
// register allocator can leave them in their argument registers there and
// put the copies that live across the calls in callee-saved registers at
// S, so the path that does not go to S touches no callee-saved register
// and the x86-64 emitter can return from it without a frame (emit.cpp,
// plan_shrink_wrap). fib's base case is 4 instructions instead of 12.
//
// Only the entry's terminator and S's parameters change: the CFG, the
// dominator tree and the loops stay valid.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many values were split (new parameters).
uint32_t split_entry_values(Function& func, PassContext& ctx);

}  // namespace heron
