// GVN: global value numbering over the dominator tree, with the rewrite
// rules applied as values are numbered (docs/optimizer.md).
//
// One walk over the reachable blocks in dominator-tree preorder. Each
// instruction's operands are first replaced by the values they were
// numbered as; then, while something applies, it is constant-folded
// (fold.def, the interpreter's own operations) or rewritten by the first
// matching rule of rules.def (an identity gives an existing value, a
// strength reduction or reassociation a new instruction in its place); a
// pure instruction (effects.h: no memory access, trap, call or control)
// that is left is looked up in one hash table of the pure instructions of
// the dominating blocks: an equal one there numbers its results, else it
// enters the table. `brif` on a known condition becomes a `jump`.
//
// The table needs no scopes: an entry found but not dominating the current
// block belongs to a dominator subtree the preorder walk has left for
// good, so the new instruction replaces it. Cost: O(instructions) hash
// probes and O(1) dominance queries (DominatorTree::dominates).
//
// Instructions whose results were replaced stay in place, unused (dce
// removes them): blocks the walk does not reach (unreachable ones) may
// still use them.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// Returns how many instructions it rewrote, replaced or numbered as an
/// earlier one. Invalidates the cached CFG itself when a brif became a jump.
uint32_t number_values(Function& func, PassContext& ctx);

}  // namespace heron
