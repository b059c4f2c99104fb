// load-elim: redundant loads and store-to-load forwarding
// (docs/optimizer.md).
//
// A load whose value is already known — an equal load earlier, or a store
// of a value of its type to the same address — takes that value, and goes.
// "The same address" is the same SSA value plus the same offset; what is
// known flows down the dominator tree into blocks whose only predecessor
// is their immediate dominator, and starts empty at merges and loop
// headers, so every known value dominates the load it replaces.
//
// What a write forgets comes from the memory classes (memory_classes.h):
// a store forgets what it may overlap in its own class -- at another
// address value, everything of the class; at its own address value, what
// its bytes overlap. A call forgets class 0; any other writer forgets
// everything. Values of `readonly` loads are never forgotten. Loads and
// stores must agree on type, width, byte order, and a later `aligned`
// access needs an `aligned` earlier one (the reference traps on a
// misaligned `aligned` access).
//
// Linear in the function: at most kMaxKnown values are kept per block.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// How many loads it removed.
uint32_t eliminate_redundant_loads(Function& func, PassContext& ctx);

}  // namespace heron
