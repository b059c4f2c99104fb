// ISA-neutral helpers of the emitters (codegen/isa/*/emit.cpp): frame slot
// layout and constant bit patterns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/function.h"

namespace heron {

/// `v` rounded to a float of `size` bytes (4 or 8), as its bit pattern.
uint64_t float_bits_of(double v, unsigned size);

/// The largest frame (everything below the return address) a function
/// may have, on every ISA. Frame offsets are 32-bit displacements (x86-64
/// addressing, the probe loop's page count), so a frame must stay well
/// below 2 GiB; a native stack is far smaller, and a larger frame is a
/// compile error rather than a wrapped size.
inline constexpr uint64_t kMaxFrameSize = uint64_t{1} << 30;

/// Lays out the frame's spill slots (8 bytes each, from `base`) and the
/// function's explicit stack slots after them, each at its alignment (at
/// least 8). Appends each stack slot's offset to `slot_offset` and returns
/// the end offset, computed without wrapping: when it is above
/// kMaxFrameSize the offsets appended are meaningless and the caller
/// reports frame_size_error.
uint64_t layout_slots(const Function& f, uint32_t base, uint32_t num_spill_slots, std::vector<uint32_t>& slot_offset);

/// The error for a frame of `bytes`, "" when it is within kMaxFrameSize.
std::string frame_size_error(uint64_t bytes);

}  // namespace heron
