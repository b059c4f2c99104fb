// x86-64 machine instructions over virtual registers (VCode). The forms and
// their operand patterns come from insts.def; `MInst` holds the
// non-register fields, the register operands live in the allocator's
// `ra::Function` (operands_begin[i] ..), in the order the pattern gives.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/machinst/abi.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::x64 {

enum class Op : uint8_t {
#define X64_INST(N, mnemonic, pattern) N,
#include "codegen/isa/x64/insts.def"
#undef X64_INST
};

struct OpInfo {
    std::string_view mnemonic;
    std::string_view pattern;
};
const OpInfo& op_info(Op op);

// Hardware encodings.
namespace regs {
inline constexpr uint8_t RAX = 0, RCX = 1, RDX = 2, RBX = 3, RSP = 4, RBP = 5, RSI = 6, RDI = 7;
inline constexpr uint8_t R8 = 8, R9 = 9, R10 = 10, R11 = 11, R12 = 12, R13 = 13, R14 = 14, R15 = 15;
inline constexpr ra::PReg gpr(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Int); }
inline constexpr ra::PReg xmm(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Float); }
}  // namespace regs

/// x86 condition codes in encoding order, plus two float conditions that
/// need the parity flag too (after ucomis).
enum class Cond : uint8_t {
    O, NO, B, AE, E, NE, BE, A, S, NS, P, NP, L, GE, LE, G,
    FEq,  // ZF=1 and PF=0 (ordered and equal)
    FNe,  // ZF=0 or PF=1 (unordered or not equal)
};
Cond invert(Cond c);
std::string_view cond_name(Cond c);

enum class AluOp : uint8_t { Add, Sub, And, Or, Xor, Imul, Adc, Sbb };
enum class ShiftOp : uint8_t { Shl, Shr, Sar, Rol, Ror };
enum class UnaryOp : uint8_t { Neg, Not, Bswap };
enum class CountOp : uint8_t { Clz, Ctz, Popcnt };
enum class FAluOp : uint8_t { Add, Sub, Mul, Div, And, Or, Xor, AndNot };
enum class FUnaryOp : uint8_t { Sqrt, Ceil, Floor, Trunc, Nearest, Promote, Demote };

/// MInst::flags bits.
namespace mflags {
inline constexpr uint8_t kSigned = 1;     // Div, MulWide, Ext, Cvt*: signed reading
inline constexpr uint8_t kRem = 2;        // Div: remainder
inline constexpr uint8_t kSaturate = 4;   // CvtFloatToInt: saturating
inline constexpr uint8_t kBig = 8;        // Load/Store: big-endian
inline constexpr uint8_t kTrapSite = 16;  // Load/Store: record a trap site with `trap`
inline constexpr uint8_t kMin = 32;       // FMinMax: min (else max)
inline constexpr uint8_t kFloat = 64;     // Load/Store/Ret/...: float register
/// Load/Store/AluMem/CmpMem/CmpMemZero/FAluMem: the base operand is followed by an
/// index operand; the address is base + (index << scale) + imm.
inline constexpr uint8_t kIndex = 128;
}  // namespace mflags

struct MInst {
    Op op = Op::Nop;
    uint8_t sub = 0;    // AluOp / ShiftOp / UnaryOp / CountOp / FAluOp / FUnaryOp
    uint8_t size = 8;   // operand size in bytes (ints: 1 2 4 8; floats: 4 8)
    uint8_t size2 = 0;  // second size: Ext/Cvt* destination or source size
    Cond cc = Cond::O;
    uint8_t flags = 0;  // mflags
    uint8_t trap = 0;   // trap code byte
    uint8_t scale = 0;  // Lea: log2 scale
    int64_t imm = 0;    // immediate / displacement
    uint32_t aux = 0;   // block target / stack slot / symbol / jump table
    uint32_t aux2 = 0;  // second block target; a folded load's IR instruction (its trap site)
    uint32_t ir_inst = ~0u;
    /// Load, Store, LeaBase: the address is [base register operand + imm]
    /// (Reg), [rsp + imm] (Sp) or [rbp + imm] (Fp); Sp and Fp take no base
    /// operand.
    MemBase base = MemBase::Reg;
};

}  // namespace heron::x64
