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

}  // namespace

std::string popped_bytes_error(uint32_t popped, uint32_t max) {
    return "tail-convention function with " + std::to_string(popped) + " bytes of stack arguments (at most " +
           std::to_string(max) + ")";
}

std::string classify_signature(const Signature& sig, const AbiFacts& facts, AbiSignature& out) {
    // Results first: whether there is a return area decides where the
    // integer parameters start.
    out.returns.resize(sig.returns.size());
    RegCursor ri{facts.int_rets}, rf{facts.float_rets};
    uint32_t area = 0;
    for (size_t k = 0; k < sig.returns.size(); ++k) {
        AbiLoc& loc = out.returns[k];
        if ((sig.returns[k].type.is_float() ? rf : ri).take(loc.reg)) {
            loc.kind = AbiLoc::Kind::Reg;
            continue;
        }
        loc.kind = AbiLoc::Kind::RetArea;
        loc.offset = area;
        area += facts.slot_size;
    }
    out.has_ret_area = area != 0;
    out.ret_area_bytes = area;

    out.params.resize(sig.params.size());
    RegCursor pi{facts.int_args}, pf{facts.float_args};
    if (out.has_ret_area && facts.ret_area_is_first_arg()) pi.next = 1;
    uint32_t stack = 0;
    for (size_t k = 0; k < sig.params.size(); ++k) {
        AbiLoc& loc = out.params[k];
        if ((sig.params[k].type.is_float() ? pf : pi).take(loc.reg)) {
            loc.kind = AbiLoc::Kind::Reg;
            continue;
        }
        loc.kind = AbiLoc::Kind::Stack;
        loc.offset = stack;
        stack += facts.slot_size;
    }
    out.stack_arg_bytes = stack;
    const bool pops = sig.call_conv == CallConv::Tail && facts.tail_callee_pops;
    const uint32_t a = facts.popped_align;
    out.popped_bytes = pops ? (stack + a - 1) / a * a : 0;
    if (out.popped_bytes > facts.max_popped_bytes) return popped_bytes_error(out.popped_bytes, facts.max_popped_bytes);
    return {};
}

void AbiCache::reset(size_t num_sigs) {
    if (calls_.size() < num_sigs) calls_.resize(num_sigs);
    done_.assign(num_sigs, 0);
}

const AbiSignature& AbiCache::of_call(SigRef ref, const Signature& sig, const AbiFacts& facts, std::string& err) {
    AbiSignature& s = calls_[ref.index()];
    if (!done_[ref.index()]) {
        classify_signature(sig, facts, s);
        done_[ref.index()] = 1;
    }
    if (s.popped_bytes > facts.max_popped_bytes) err = popped_bytes_error(s.popped_bytes, facts.max_popped_bytes);
    return s;
}

FrameLayout frame_layout(const Function& f, uint32_t outgoing_args_size, uint32_t num_spill_slots, uint32_t saved_bytes,
                         std::vector<uint32_t>& slot_offset) {
    slot_offset.clear();
    const uint32_t end = layout_slots(f, outgoing_args_size, num_spill_slots, slot_offset);
    return {outgoing_args_size, (end + saved_bytes + 15) / 16 * 16 - saved_bytes};
}

}  // namespace heron
