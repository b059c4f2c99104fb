// Widen-fill: a loop that only stores one loop-invariant byte to base + i
// for i counting up by one (what C's `for (i = a; i < n; ++i) p[i] = v`
// gives, and what gcc turns into memset) first runs a wide loop storing
// that byte replicated into two 8-byte stores, 16 bytes per iteration; the
// original loop then stores the last 0..15 bytes.
//
// Before (in loop form):
//   pre:     jump h(a)
//   h(i):    c = icmp cc i, b ; brif c, body, exit(...)     cc: ult or slt
//   body:    p = iadd base, i ; store notrap v, p+off ; n = iadd i, 1 ; jump h(n)
// After:
//   pre:     lim = b - 15 when b >= MIN + 15 (of cc's signedness), else MIN
//            s = v * 0x0101010101010101 (as i64) ; jump w(a)
//   w(j):    cw = icmp cc j, lim ; brif cw, wbody, rest
//   wbody:   q = iadd base, j ; store notrap s, q+off ; store notrap s, q+off+8
//            j16 = iadd j, 16 ; jump w(j16)
//   rest:    jump h(j)
//   h, body, exit: as before (the remainder loop)
//
// Correctness: the wide loop runs while j + 15 < b (cc), so every byte it
// stores is one the original loop would have stored, in the same order
// relative to the loop's other effects (there are none), and j + 16 never
// wraps (j + 15 < b <= MAX). It leaves j at a point the original loop also
// reaches, which then runs exactly the iterations left. The new stores
// have the original's flags without `aligned` (8-byte stores at base + i
// need not be 8-byte aligned); only `notrap` stores are widened, so no trap
// can move or merge. `lim` is computed without wrapping: for b < MIN + 15
// it is MIN, and `j cc MIN` is false.
//
// A loop is rewritten when it is a counted loop (counted_loops.h) with step
// 1 and cc ult or slt over i64, its header holds only the icmp and the brif
// and has the counter as its only parameter, and its only other block is
// the latch, holding exactly the address iadd, the store (`store` of an i8
// value or `istore8`, notrap), the increment and the jump; base and v are
// defined outside the loop (or v is an iconst). The new blocks keep loop
// form: the preheader jumps to w, w's exit `rest` is dedicated and is the
// original loop's preheader. forward-blocks later removes `rest`.
// Requires LoopsValid, LoopForm and CountedLoopsKnown; when it changes the
// function it invalidates the CFG and everything computed from it, and
// keeps LoopForm.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many loops were widened.
uint32_t widen_fill_loops(Function& func, PassContext& ctx);

}  // namespace heron
