// AArch64 machine instructions over virtual registers (VCode). The forms and
// their operand patterns come from insts.def; `MInst` holds the
// non-register fields, the register operands live in the allocator's
// `ra::Function` (operands_begin[i] ..), in the order the pattern gives.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/machinst/abi.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::aarch64 {

enum class Op : uint8_t {
#define A64_INST(N, mnemonic, pattern) N,
#include "codegen/isa/aarch64/insts.def"
#undef A64_INST
};

struct OpInfo {
    std::string_view mnemonic;
    std::string_view pattern;
};
const OpInfo& op_info(Op op);

// Hardware encodings. x16/x17 (IP0/IP1) and v31 are never allocated; x18 is
// the platform register; x29 is the frame pointer, x30 the link register.
namespace regs {
inline constexpr uint8_t X8 = 8, X16 = 16, X17 = 17, X19 = 19, X28 = 28, FP = 29, LR = 30;
inline constexpr uint8_t V31 = 31;
inline constexpr ra::PReg gpr(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Int); }
inline constexpr ra::PReg fpr(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Float); }
}  // namespace regs

/// AArch64 condition codes in encoding order; `invert` flips the low bit.
enum class Cond : uint8_t { EQ, NE, HS, LO, MI, PL, VS, VC, HI, LS, GE, LT, GT, LE, AL };
inline Cond invert(Cond c) { return static_cast<Cond>(static_cast<uint8_t>(c) ^ 1); }
std::string_view cond_name(Cond c);

enum class AluOp : uint8_t { Add, Sub, And, Orr, Eor, Bic, Mul, Lsl, Lsr, Asr, Ror, Smulh, Umulh, Adds, Subs, Adcs, Sbcs };
enum class UnaryOp : uint8_t { Neg, Mvn, Rev, Rev16, Rbit, Clz, Cls };
enum class DivOp : uint8_t { Udiv, Sdiv, Urem, Srem };
/// CmpExt: the second operand's extension or shift.
enum class ExtOp : uint8_t { Uxtb, Uxth, Uxtw, Sxtb, Sxth, Sxtw, Asr63 };
/// The shift of a shifted-register operand (AluShift, CmpShift).
enum class ShiftKind : uint8_t { Lsl, Lsr, Asr };
/// Bitfield moves (Bfx).
enum class BfOp : uint8_t { Ubfx, Sbfx, Ubfiz, Sbfiz };
enum class FAluOp : uint8_t { Add, Sub, Mul, Div, Min, Max };
enum class FUnaryOp : uint8_t { Sqrt, Neg, Abs, Ceil, Floor, Trunc, Nearest, Promote, Demote };

/// MInst::flags bits.
namespace mflags {
inline constexpr uint8_t kSigned = 1;     // Ext, Div, MulWide, Cvt*, Load: signed reading
inline constexpr uint8_t kSaturate = 2;   // CvtFloatToInt: saturating
inline constexpr uint8_t kBig = 4;        // Load/Store: big-endian
inline constexpr uint8_t kTrapSite = 8;   // Load/Store: record a trap site with `trap`
inline constexpr uint8_t kFloat = 16;     // Load/Store: float register
inline constexpr uint8_t kMsub = 32;      // Madd: subtract
}  // namespace mflags

struct MInst {
    Op op = Op::Nop;
    uint8_t sub = 0;    // AluOp / UnaryOp / DivOp / ExtOp / BfOp / FAluOp / FUnaryOp
    uint8_t size = 8;   // operand size in bytes (ints: 1 2 4 8; floats: 4 8)
    uint8_t size2 = 0;  // Cvt* integer size, Div IR type size; AluShift/CmpShift ShiftKind,
                        // AluExt ExtOp, Bfx/Bfi field width in bits
    Cond cc = Cond::AL;
    uint8_t flags = 0;  // mflags
    uint8_t trap = 0;   // trap code byte
    /// Load, Store: the address is [base register operand + imm] (Reg),
    /// [sp + imm] (Sp) or [x29 + imm] (Fp); Sp and Fp take no base operand.
    MemBase base = MemBase::Reg;
    int64_t imm = 0;    // immediate / offset
    uint32_t aux = 0;   // block target / stack slot / symbol / jump table
    uint32_t aux2 = 0;  // second block target
    uint32_t ir_inst = ~0u;
};

}  // namespace heron::aarch64
