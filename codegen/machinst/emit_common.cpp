// ISA-neutral emitter helpers. See emit_common.h.
#include "codegen/machinst/emit_common.h"

#include <algorithm>
#include <cstring>

namespace heron {

uint64_t float_bits_of(double v, unsigned size) {
    if (size == 4) {
        float f = static_cast<float>(v);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
    }
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
}

uint64_t layout_slots(const Function& f, uint32_t base, uint32_t num_spill_slots, std::vector<uint32_t>& slot_offset) {
    // 64-bit sums of 32-bit sizes: cannot wrap for any number of slots a
    // function can hold.
    uint64_t off = base + uint64_t{8} * num_spill_slots;
    for (StackSlot ss : f.stack_slots.keys()) {
        const StackSlotData& sd = f.stack_slots[ss];
        uint64_t align = std::max<uint64_t>(8, sd.align);
        off = (off + align - 1) / align * align;
        slot_offset.push_back(static_cast<uint32_t>(off));
        off += sd.size;
    }
    return off;
}

std::string frame_size_error(uint64_t bytes) {
    if (bytes <= kMaxFrameSize) return {};
    return "frame of " + std::to_string(bytes) + " bytes is larger than the limit of " +
           std::to_string(kMaxFrameSize);
}

}  // namespace heron
