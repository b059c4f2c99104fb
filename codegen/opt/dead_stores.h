// dead-stores: stores to a private stack slot that nothing can read
// (docs/optimizer.md).
//
// Only slots that do not escape (memory_classes.h) are considered: nothing
// but this function's own loads can read them, and nothing after it
// returns. A store to such a slot goes when
//   - no load anywhere reads the slot;
//   - later in its block, before any load of the slot, a store through the
//     same address value covers every byte it wrote;
//   - its block leaves the function (return, return_call, trap) and no
//     load of the slot follows it there.
// One backward walk per block over at most kMaxPending later stores.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// How many stores it removed.
uint32_t eliminate_dead_stores(Function& func, PassContext& ctx);

}  // namespace heron
