// The calling convention, shared by the backends: a signature is
// classified once into where each parameter and result lives (a register,
// a stack-argument slot, a slot of the return area) from an ISA's table of
// facts (AbiFacts: its argument and return registers, where the
// return-area pointer goes, what the `tail` convention pops). The argument,
// call and return lowering over this classification is LowerBase's
// (lower_common.h, "the ABI"); an ISA adds its facts and a few instruction
// hooks. The frame below the callee-saved registers is laid out here too
// (frame_layout). docs/abi.md describes the conventions.
//
// Heron's convention on both ISAs: integer and float parameters take the
// argument registers of their class in order, the rest go to the stack in
// 8-byte slots in parameter order (the first at the lowest address).
// Results take the return registers of their class in order; the rest go
// to a return area of 8-byte slots (in result order) whose address the
// caller passes in `AbiFacts::ret_area_reg`. Under `tail` the callee pops
// its stack arguments, padded to 16 bytes; other conventions leave them to
// the caller.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/ir/signature.h"
#include "codegen/regalloc/regalloc.h"

namespace heron {

/// The base of a machine instruction's stack access that names no base
/// register: the stack pointer (outgoing arguments, a return area after
/// its call) or the frame pointer (incoming stack arguments, a tail call's
/// arguments stored into the incoming area). MInst::base on both ISAs.
enum class MemBase : uint8_t {
    Reg,  // the instruction's base register operand
    Sp,
    Fp,
};

/// One ISA's calling-convention facts.
struct AbiFacts {
    std::span<const ra::PReg> int_args;    // in order
    std::span<const ra::PReg> float_args;
    std::span<const ra::PReg> int_rets;
    std::span<const ra::PReg> float_rets;
    /// Where the return-area pointer goes. When it is int_args[0] (System V
    /// x86-64, rdi) it is a hidden first argument and the integer
    /// parameters start at int_args[1]; otherwise (AArch64's x8) it is a
    /// register of its own.
    ra::PReg ret_area_reg;
    uint32_t slot_size = 8;  // bytes per stack argument and per return-area result
    /// The `tail` convention: the callee pops its stack arguments, padded to
    /// `popped_align` bytes, at most `max_popped_bytes` of them.
    bool tail_callee_pops = true;
    uint32_t popped_align = 16;
    uint32_t max_popped_bytes = 65520;
    /// Bytes from the frame pointer to the first incoming stack argument
    /// (the saved frame pointer and the return address lie between).
    uint32_t incoming_args_offset = 16;
    /// The outgoing-argument area a call reserves below the frame
    /// (VCodeBase::outgoing_args_size) is a multiple of this; a tail call
    /// that stores its arguments in the incoming area reserves none.
    uint32_t outgoing_align = 8;

    bool ret_area_is_first_arg() const { return !int_args.empty() && int_args[0] == ret_area_reg; }
};

/// Where one parameter or result lives.
struct AbiLoc {
    enum class Kind : uint8_t { Reg, Stack, RetArea };
    Kind kind = Kind::Reg;
    ra::PReg reg;         // Reg
    uint32_t offset = 0;  // Stack: from the first stack argument; RetArea: from the area's start
};

/// A classified signature. The vectors keep their memory when it is
/// classified again.
struct AbiSignature {
    std::vector<AbiLoc> params;   // by parameter
    std::vector<AbiLoc> returns;  // by result
    bool has_ret_area = false;    // the return-area pointer goes in AbiFacts::ret_area_reg
    uint32_t stack_arg_bytes = 0; // stack arguments a call passes
    uint32_t popped_bytes = 0;    // of them (padded), what the callee pops on return
    uint32_t ret_area_bytes = 0;
};

/// Classifies `sig` into `out` (overwritten). Returns "" or, when the
/// callee would pop more than facts.max_popped_bytes, the error every
/// backend reports for it (popped_bytes_error); `out` is complete either way.
std::string classify_signature(const Signature& sig, const AbiFacts& facts, AbiSignature& out);

/// "tail-convention function with N bytes of stack arguments (at most M)".
std::string popped_bytes_error(uint32_t popped, uint32_t max);

/// The classifications of one function's signatures (its own and those of
/// its calls by SigRef), each computed when first asked for. Kept in the
/// LowerContext: its memory is reused by the next function.
class AbiCache {
public:
    /// Forgets the previous function's classifications; `num_sigs` is the
    /// number of call signatures (dfg.signatures) of the next.
    void reset(size_t num_sigs);
    /// The classification of call signature `ref` (whose Signature is
    /// `sig`); `err` set as classify_signature says.
    const AbiSignature& of_call(SigRef ref, const Signature& sig, const AbiFacts& facts, std::string& err);
    AbiSignature& own() { return own_; }

private:
    AbiSignature own_;
    std::vector<AbiSignature> calls_;  // by SigRef; grows only, so its vectors keep their memory
    /// By SigRef: calls_ holds this function's classification when it is
    /// `generation_` (a reset fills nothing).
    std::vector<uint64_t> stamp_;
    uint64_t generation_ = 0;
};

/// The part of a frame below the callee-saved registers, from sp up: the
/// outgoing stack arguments and return areas of the calls
/// (VCodeBase::outgoing_args_size), the spill slots, then the function's
/// stack slots (layout_slots, whose offsets go to `slot_offset`).
struct FrameLayout {
    uint32_t spill_base;  // offset of spill slot 0 from sp
    uint64_t size;        // bytes below the saved registers (check frame_size_error before narrowing)
};
/// `saved_bytes`: the callee-saved registers between this part and the 16
/// bytes of frame pointer and return address; `size` keeps sp 16-byte
/// aligned below them.
FrameLayout frame_layout(const Function& f, uint32_t outgoing_args_size, uint32_t num_spill_slots, uint32_t saved_bytes,
                         std::vector<uint32_t>& slot_offset);

}  // namespace heron
