// LoopForm (seed 003): puts every loop of a reducible function into the
// canonical shape the later loop passes rely on,
//
//     preheader -> header(carriers) -> ... body ... -> latch -> header
//                      |                   |
//                      v                   v
//                 dedicated exits (every predecessor inside the loop)
//
//   - preheader: the only block outside the loop that branches to the
//     header, and it ends in `jump header(...)`;
//   - single latch: all back edges leave from one block;
//   - dedicated exits: every predecessor of a loop's exit block lies in that
//     loop (an exit block reached from several loops, or from inside and
//     outside, gets one new block per innermost source loop);
//   - header parameters are the loop's carriers: a parameter that receives
//     the same value V on every incoming edge (or itself, around the loop)
//     is invariant, is removed, and becomes an alias of V.
//
// New blocks take a parameter only where the edges they collect pass
// different values, and end in a jump that forwards everything. Only the
// branches and blocks of the affected edges are touched; the rest of the
// function is not rebuilt. Running it twice changes nothing the second
// time. Requires LoopsValid; keeps the CFG, dominator tree and loops
// current (PassContext::keep_loop_nest) and drops the counted loops.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

struct LoopFormStats {
    uint32_t preheaders = 0;       // blocks inserted as preheaders
    uint32_t latches = 0;          // blocks inserted to merge back edges
    uint32_t exits = 0;            // blocks inserted to dedicate exits
    uint32_t invariant_params = 0; // header parameters removed

    bool changed() const { return preheaders + latches + exits + invariant_params > 0; }
};

/// Canonicalizes every loop of `func` (bound to `ctx`). Returns false with
/// `error` set when the function is irreducible ("irreducible control flow:
/// edge blockA -> blockB"); the function is then unchanged.
bool form_loops(Function& func, PassContext& ctx, LoopFormStats& stats, std::string& error);

}  // namespace heron
