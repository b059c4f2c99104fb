// Signature classification. See abi.h.
#include "codegen/machinst/abi.h"

#include "codegen/machinst/emit_common.h"

namespace heron {

namespace {

/// Hands out the registers of one class in order, then nothing.
struct RegCursor {
    std::span<const ra::PReg> regs;
    size_t next = 0;
    bool take(ra::PReg& r) {
        if (next == regs.size()) return false;
        r = regs[next++];
        return true;
    }
};

/// Locations for `values` in order: the next register of the value's class
/// while there is one, else the next slot (`slot` bytes) of kind `spill`.
/// Returns the bytes of slots taken.
uint32_t place(const std::vector<AbiParam>& values, RegCursor ints, RegCursor floats, AbiLoc::Kind spill, uint32_t slot,
               std::vector<AbiLoc>& out) {
    // Appended (a resize would value-initialize every element first).
    out.clear();
    uint32_t bytes = 0;
    for (const AbiParam& v : values) {
        AbiLoc loc;
        if (!(v.type.is_float() ? floats : ints).take(loc.reg)) {
            loc.kind = spill;
            loc.offset = bytes;
            bytes += slot;
        }
        out.push_back(loc);
    }
    return bytes;
}

}  // namespace

std::string popped_bytes_error(uint32_t popped, uint32_t max) {
    return "tail-convention function with " + std::to_string(popped) + " bytes of stack arguments (at most " +
           std::to_string(max) + ")";
}

std::string classify_signature(const Signature& sig, const AbiFacts& facts, AbiSignature& out) {
    // Results first: whether there is a return area decides where the
    // integer parameters start.
    out.ret_area_bytes = place(sig.returns, {facts.int_rets}, {facts.float_rets}, AbiLoc::Kind::RetArea,
                               facts.slot_size, out.returns);
    out.has_ret_area = out.ret_area_bytes != 0;
    const size_t first_int = out.has_ret_area && facts.ret_area_is_first_arg() ? 1 : 0;
    out.stack_arg_bytes = place(sig.params, {facts.int_args, first_int}, {facts.float_args}, AbiLoc::Kind::Stack,
                                facts.slot_size, out.params);
    const bool pops = sig.call_conv == CallConv::Tail && facts.tail_callee_pops;
    const uint32_t a = facts.popped_align;
    out.popped_bytes = pops ? (out.stack_arg_bytes + a - 1) / a * a : 0;
    if (out.popped_bytes > facts.max_popped_bytes) return popped_bytes_error(out.popped_bytes, facts.max_popped_bytes);
    return {};
}

void AbiCache::reset(size_t num_sigs) {
    if (calls_.size() < num_sigs) {
        calls_.resize(num_sigs);
        stamp_.resize(num_sigs, 0);
    }
    ++generation_;
}

const AbiSignature& AbiCache::of_call(SigRef ref, const Signature& sig, const AbiFacts& facts, std::string& err) {
    AbiSignature& s = calls_[ref.index()];
    if (stamp_[ref.index()] != generation_) {
        classify_signature(sig, facts, s);
        stamp_[ref.index()] = generation_;
    }
    if (s.popped_bytes > facts.max_popped_bytes) err = popped_bytes_error(s.popped_bytes, facts.max_popped_bytes);
    return s;
}

FrameLayout frame_layout(const Function& f, uint32_t outgoing_args_size, uint32_t num_spill_slots, uint32_t saved_bytes,
                         std::vector<uint32_t>& slot_offset) {
    slot_offset.clear();
    const uint64_t end = layout_slots(f, outgoing_args_size, num_spill_slots, slot_offset);
    return {outgoing_args_size, (end + saved_bytes + 15) / 16 * 16 - saved_bytes};
}

}  // namespace heron
