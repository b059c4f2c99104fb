// Loop scopes: let a frontend emit loops directly in the canonical form of
// seed 003 (LoopForm), instead of leaving a pass to repair them:
//
//   preheader --> header --(test)--> body ... --> latch --> header
//                   |  \________________________________________
//                   v        break (from anywhere in the body)  v
//                  exit <----------------------------------------
//
// - the preheader is the block begin_loop is called in: its only successor
//   is the header;
// - every `continue` jumps to the one latch, the latch to the header, so the
//   header has exactly two predecessors (preheader and latch);
// - every `break` and the header's test jump to the exit, which nothing
//   outside the loop reaches (a dedicated exit).
//
// The block parameters follow from the SSA builder (Braun et al. 2013),
// which runs with the header unsealed until end_loop: a variable the loop
// only reads (invariant) gets no header parameter (its temporary one is
// trivial and removed when end_loop seals the header), a variable the body
// assigns (carried) gets one; at the exit a variable gets a parameter only
// if the paths that reach the exit (the test, each break) carry different
// values. Nested loops are a stack: break/continue take how many loops out
// to go (0 = the innermost).
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/error.h"
#include "frontend/function_builder.h"

namespace heron {

struct LoopBlocks {
    Block preheader, header, body, latch, exit;
};

class LoopScopes {
public:
    /// Ends the current block with a jump to a new header and switches to
    /// the header. Build the loop test there, then loop_while / enter_body.
    Result<LoopBlocks> begin_loop(FunctionBuilder& b);
    /// In the header: `brif cond, body, exit`; switches to the body.
    Result<void> loop_while(FunctionBuilder& b, Value cond);
    /// In the header: jump to the body (the loop ends only by break).
    Result<void> enter_body(FunctionBuilder& b);

    /// Jumps to the latch of the loop `outer` levels out (0 = innermost).
    /// The current block is filled afterwards.
    Result<void> continue_loop(FunctionBuilder& b, uint32_t outer = 0);
    /// Jumps to the exit of the loop `outer` levels out.
    Result<void> break_loop(FunctionBuilder& b, uint32_t outer = 0);
    /// `brif cond, latch, next` and continues in `next` (sealed).
    Result<void> continue_if(FunctionBuilder& b, Value cond, uint32_t outer = 0);
    /// `brif cond, exit, next` and continues in `next` (sealed).
    Result<void> break_if(FunctionBuilder& b, Value cond, uint32_t outer = 0);

    /// Closes the innermost loop: the body falls through to the latch, the
    /// latch jumps to the header; seals the latch, the header and the exit
    /// and switches to the exit.
    Result<void> end_loop(FunctionBuilder& b);

    uint32_t depth() const { return static_cast<uint32_t>(open_.size()); }
    /// The blocks of the loop `outer` levels out; depth() must exceed it.
    const LoopBlocks& loop(uint32_t outer = 0) const { return open_[open_.size() - 1 - outer].blocks; }
    /// Forgets every open loop (e.g. after an error), keeping the memory.
    void clear() { open_.clear(); }

private:
    struct Open {
        LoopBlocks blocks;
        bool entered = false;  // the header branched to the body
    };
    Result<void> check_open(const FunctionBuilder& b, const char* what, uint32_t outer) const;
    Result<void> leave_header(FunctionBuilder& b, const char* what);
    Result<void> jump_if(FunctionBuilder& b, Value cond, Block target);

    std::vector<Open> open_;
};

}  // namespace heron
