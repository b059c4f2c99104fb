// Forwarding-block removal: a block whose only instruction is `jump T(args)`
// (a latch that loop-form made to merge back edges, an empty preheader)
// costs a jump per pass and, when it has parameters, moves on both sides of
// it: the allocator gives its parameters registers of their own. After the
// loop passes no longer need single latches and preheaders, every `jump` or
// `brif` edge into such a block goes straight to T instead, with the
// forwarder's parameters replaced by the edge's own arguments:
//
//   p:  jump b(x, y)              p:  jump t(y, 7, x)
//   b(u, v): jump t(v, 7, u)      (b removed once nothing branches to it)
//
// A forwarder whose parameters are used anywhere but in its own jump (a
// loop header that jumps into its body, which reads the parameters) stays.
// Chains of forwarders are followed (a cycle of them, an empty infinite
// loop, is left alone). `br_table` edges are not redirected: a jump table
// may be shared between tables, and x86-64/AArch64 emission already
// threads parameterless forwarders. The entry block is never removed.
// The forwarder's arguments other than its parameters dominate it, so they
// dominate every predecessor's branch: the result stays valid SSA.
// Invalidates loop form; the CFG, dominator tree and loops the context holds
// are updated instead of dropped (PassContext::bypass_removed_blocks), so
// the block order can use the pipeline's loops, except when a removed block
// was a loop header (the loops are dropped) or a forwarder an edge skipped
// stays because a br_table names it (the CFG and all on it are dropped).
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many branch edges were redirected.
uint32_t remove_forwarding_blocks(Function& func, PassContext& ctx);

}  // namespace heron
