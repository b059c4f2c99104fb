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
// What a write forgets comes from an alias analysis built on what the IR
// says. An address is of a stack slot when it is a `stack_addr` or an
// `iadd` of one; a slot whose addresses only feed loads, stores and such
// iadds does not escape, and memory is then split into classes: each such
// slot on its own, and the rest (escaping slots and everything reached
// through other pointers). A store forgets what it may overlap in its own
// class: at another address value, everything of the class; at its own
// address value, what its bytes overlap. A call forgets the rest-class; an
// instruction that writes memory otherwise (none yet besides stores and
// calls) forgets everything. Values of `readonly` loads are never
// forgotten. Loads and stores must agree on type, width, byte order, and a
// later `aligned` access needs an `aligned` earlier one (the reference
// traps on a misaligned `aligned` access).
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
