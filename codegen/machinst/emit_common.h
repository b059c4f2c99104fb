// ISA-neutral helpers of the emitters (codegen/isa/*/emit.cpp): frame slot
// layout and constant bit patterns.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/function.h"

namespace heron {

/// `v` rounded to a float of `size` bytes (4 or 8), as its bit pattern.
uint64_t float_bits_of(double v, unsigned size);

/// Lays out the frame's spill slots (8 bytes each, from `base`) and the
/// function's explicit stack slots after them, each at its alignment (at
/// least 8). Appends each stack slot's offset to `slot_offset` and returns
/// the end offset.
uint32_t layout_slots(const Function& f, uint32_t base, uint32_t num_spill_slots, std::vector<uint32_t>& slot_offset);

}  // namespace heron
