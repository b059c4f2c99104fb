// Count-down: counted loops (counted_loops.h) whose induction variable does
// nothing but count become do-while loops on a trip counter that runs down
// to zero, so the backend's loop branch is `sub` + `jne` on x86-64 (the
// flags of the sub, no cmp) and `sub` + `cbnz` on AArch64.
//
// Before (after loop-form; h holds only the compare and the branch):
//   pre:    jump h(a, x0)
//   h(i, x): c = icmp slt i, b ; brif c, body, exit(x)
//   latch:  n = iadd i, s ; jump h(n, x1)
// After:
//   pre:    N = trip count of [a, b) by s ; g = icmp slt a, b
//           brif g, h(N, x0), exit(x0)          (jump h(N, x0) when a and b
//                                                 are constants, N >= 1)
//   h(k, x): jump body
//   latch:  k1 = isub k, 1 ; brif k1, h(k1, x1), exit(x1)
//
// The trip count is exact at the type's edges: N = (b-1-a)/s + 1 for `<`
// and (b-a)/s + 1 for `<=`, computed in the type's width as unsigned (the
// guard has established a < b or a <= b, so b - a is the exact distance),
// and it always fits: the recognizer accepts a step only when the increment
// cannot wrap before the test fails, and a `<=` loop with step 1 and a
// bound that may be MAX (`no_exit_at_max`, possibly no exit at all) is not
// rewritten. Constant bounds give a constant N; an empty constant range is
// left as it is.
//
// A loop is rewritten when
//   - it is in loop form (a preheader ending in `jump`, one latch other than
//     the header, ending in `jump`) and its header holds only the icmp and
//     the brif;
//   - i is used only by the compare and the increment, the increment only
//     by the back edge, the compare only by the brif;
//   - no exit block's predecessor ends in a br_table (their tables may be
//     shared: new arguments would reach other edges);
//   - a header parameter used outside the loop (the header no longer
//     dominates what follows the loop) has one exit block to receive it
//     (the loop's only exit block, or the header's exit when every such use
//     is in it): that block gets a new parameter and the uses outside the
//     loop read it.
// Requires LoopForm and CountedLoopsKnown; keeps the CFG, dominator tree
// and loops current (PassContext::keep_loop_nest), drops the counted loops
// and LoopForm (preheaders may end in a brif).
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many loops were rewritten.
uint32_t count_down_loops(Function& func, PassContext& ctx);

}  // namespace heron
