// A direct encoder for the x86-64 instruction forms the emitter uses most
// (moves, ALU and compares between registers, with an immediate or with a
// [base + index*scale + disp] operand, loads and stores, lea, push/pop,
// setcc, scalar SSE moves and arithmetic). Each function writes one
// instruction at `p` and returns the position after it; an instruction is
// at most 15 bytes, so the caller reserves 16. The bytes are those asmjit's
// x86::Assembler produces for the same instruction (tests/unit/
// x64_encoder_test.cpp, through codegen/isa/x64/testing/encoder_check.cpp,
// compares them form by form, register by register):
// the emitter uses this for what it covers and asmjit for the rest.
//
// Encoding (Intel SDM vol. 2, ch. 2): [66 operand size | F2/F3 mandatory
// prefix] [REX 0100WRXB] opcode ModRM [SIB] [disp8/disp32] [imm].
// ModRM.reg and ModRM.rm carry the low 3 bits of a register, REX.R/B the
// fourth; REX.W selects 64 bits. A byte register 4-7 (spl, bpl, sil, dil)
// needs a REX prefix, even 0x40, or it would mean ah..bh. Memory: mod 00
// without displacement, 01 with disp8, 10 with disp32; rm 100 (rsp, r12
// as base) needs a SIB byte; mod 00 with base 101 (rbp, r13) means
// rip-relative or no base, so those bases always carry a displacement.
#pragma once

#include <cstdint>
#include <cstring>

namespace heron::x64::enc {

/// A memory operand [base + index * (1 << scale) + disp] (index kNoIndex:
/// none; rsp cannot be an index).
struct Mem {
    static constexpr uint8_t kNoIndex = 0xff;
    uint8_t base;
    int32_t disp;
    uint8_t index = kNoIndex;
    uint8_t scale = 0;  // log2 of the factor
};

/// ALU operations by their ModRM.reg extension in the 80/81/83 group (the
/// register forms' opcodes are ext * 8 + 0..5).
enum class Alu : uint8_t { Add = 0, Or = 1, Adc = 2, Sbb = 3, And = 4, Sub = 5, Xor = 6, Cmp = 7 };
/// Shifts and rotates by their C0/C1/D0/D1/D2/D3 group extension.
enum class Shift : uint8_t { Rol = 0, Ror = 1, Shl = 4, Shr = 5, Sar = 7 };

namespace detail {

inline bool fits8(int64_t v) { return v >= -128 && v <= 127; }

inline uint8_t* put32(uint8_t* p, uint32_t v) {
    std::memcpy(p, &v, 4);
    return p + 4;
}

/// The 66 prefix of 16-bit operands and the REX prefix: `w` 64-bit, `r`
/// `x` `b` the fourth bits of ModRM.reg, SIB.index and ModRM.rm/SIB.base;
/// `force` writes 0x40 when nothing else needs a REX (byte registers 4-7).
[[gnu::always_inline]] inline uint8_t* prefix(uint8_t* p, unsigned size, uint8_t r, uint8_t x, uint8_t b, bool force) {
    if (size == 2) *p++ = 0x66;
    const uint8_t rex = static_cast<uint8_t>((size == 8 ? 8 : 0) | ((r >> 3) & 1) << 2 | ((x >> 3) & 1) << 1 | ((b >> 3) & 1));
    if (rex || force) *p++ = static_cast<uint8_t>(0x40 | rex);
    return p;
}

/// Whether byte register `r` needs a REX prefix to be itself (spl..dil).
inline bool byte_rex(uint8_t r) { return r >= 4 && r < 8; }

/// Opcode bytes, high first: 0x0FAF is 0F AF.
inline uint8_t* opcode(uint8_t* p, uint32_t op) {
    if (op > 0xffff) *p++ = static_cast<uint8_t>(op >> 16);
    if (op > 0xff) *p++ = static_cast<uint8_t>(op >> 8);
    *p++ = static_cast<uint8_t>(op);
    return p;
}

inline uint8_t* modrm_reg(uint8_t* p, uint8_t reg, uint8_t rm) {
    *p++ = static_cast<uint8_t>(0xC0 | (reg & 7) << 3 | (rm & 7));
    return p;
}

[[gnu::always_inline]] inline uint8_t* modrm_mem(uint8_t* p, uint8_t reg, const Mem& m) {
    const uint8_t base = m.base & 7;
    const bool sib = m.index != Mem::kNoIndex || base == 4;
    const uint8_t mod = m.disp == 0 && base != 5 ? 0 : fits8(m.disp) ? 1 : 2;
    *p++ = static_cast<uint8_t>(mod << 6 | (reg & 7) << 3 | (sib ? 4 : base));
    if (sib) {
        const uint8_t index = m.index == Mem::kNoIndex ? 4 : m.index & 7;
        *p++ = static_cast<uint8_t>(m.scale << 6 | index << 3 | base);
    }
    if (mod == 1) *p++ = static_cast<uint8_t>(m.disp);
    else if (mod == 2) p = put32(p, static_cast<uint32_t>(m.disp));
    return p;
}

inline uint8_t mem_x(const Mem& m) { return m.index == Mem::kNoIndex ? 0 : m.index; }

}  // namespace detail

/// `op reg-field, rm` between two registers of `size` bytes: `op` is the
/// opcode of the 16/32/64-bit form, `op8` that of the byte form (only used
/// when size is 1). `reg` goes to ModRM.reg (the source of MR forms such
/// as `add rm, reg`, the destination of RM forms such as `imul reg, rm`).
[[gnu::always_inline]] inline uint8_t* rr(uint8_t* p, uint32_t op, uint32_t op8, unsigned size, uint8_t reg, uint8_t rm) {
    const bool force = size == 1 && (detail::byte_rex(reg) || detail::byte_rex(rm));
    p = detail::prefix(p, size, reg, 0, rm, force);
    p = detail::opcode(p, size == 1 ? op8 : op);
    return detail::modrm_reg(p, reg, rm);
}

/// The same with a memory operand in ModRM.rm. `byte_reg`: `reg` is a byte
/// register (needs REX when 4-7).
[[gnu::always_inline]] inline uint8_t* rm(uint8_t* p, uint32_t op, unsigned size, uint8_t reg, const enc::Mem& m, bool byte_reg = false) {
    p = detail::prefix(p, size, reg, detail::mem_x(m), m.base, byte_reg && detail::byte_rex(reg));
    p = detail::opcode(p, op);
    return detail::modrm_mem(p, reg, m);
}

/// ALU op `dst, src` (register forms; cmp included).
inline uint8_t* alu_rr(uint8_t* p, Alu a, unsigned size, uint8_t dst, uint8_t src) {
    const uint32_t base = static_cast<uint32_t>(a) * 8;
    return rr(p, base + 1, base, size, src, dst);
}
inline uint8_t* mov_rr(uint8_t* p, unsigned size, uint8_t dst, uint8_t src) { return rr(p, 0x89, 0x88, size, src, dst); }
inline uint8_t* test_rr(uint8_t* p, unsigned size, uint8_t a, uint8_t b) { return rr(p, 0x85, 0x84, size, b, a); }
/// imul dst, src (2, 4 or 8 bytes).
inline uint8_t* imul_rr(uint8_t* p, unsigned size, uint8_t dst, uint8_t src) { return rr(p, 0x0FAF, 0, size, dst, src); }

/// ALU op `dst, imm` (imm within the size's signed range; 8 bytes: a
/// sign-extended imm32): imm8 when it fits, the accumulator's short form
/// otherwise (as asmjit picks).
inline uint8_t* alu_ri(uint8_t* p, Alu a, unsigned size, uint8_t dst, int32_t imm) {
    const uint8_t ext = static_cast<uint8_t>(a);
    if (size == 1) {
        if (dst == 0) {
            *p++ = static_cast<uint8_t>(ext * 8 + 4);
        } else {
            p = detail::prefix(p, 1, 0, 0, dst, detail::byte_rex(dst));
            *p++ = 0x80;
            p = detail::modrm_reg(p, ext, dst);
        }
        *p++ = static_cast<uint8_t>(imm);
        return p;
    }
    p = detail::prefix(p, size, 0, 0, dst, false);
    if (detail::fits8(imm)) {
        *p++ = 0x83;
        p = detail::modrm_reg(p, ext, dst);
        *p++ = static_cast<uint8_t>(imm);
        return p;
    }
    if (dst == 0) {
        *p++ = static_cast<uint8_t>(ext * 8 + 5);
    } else {
        *p++ = 0x81;
        p = detail::modrm_reg(p, ext, dst);
    }
    if (size == 2) {
        const uint16_t v = static_cast<uint16_t>(imm);
        std::memcpy(p, &v, 2);
        return p + 2;
    }
    return detail::put32(p, static_cast<uint32_t>(imm));
}

/// Shift or rotate `dst` by `imm` (D1 for 1, else C1 ib; byte forms D0/C0).
inline uint8_t* shift_ri(uint8_t* p, Shift s, unsigned size, uint8_t dst, uint8_t imm) {
    p = detail::prefix(p, size, 0, 0, dst, size == 1 && detail::byte_rex(dst));
    const uint8_t one = size == 1 ? 0xD0 : 0xD1;
    *p++ = imm == 1 ? one : static_cast<uint8_t>(one - 0x10);
    p = detail::modrm_reg(p, static_cast<uint8_t>(s), dst);
    if (imm != 1) *p++ = imm;
    return p;
}
/// Shift or rotate `dst` by cl.
inline uint8_t* shift_cl(uint8_t* p, Shift s, unsigned size, uint8_t dst) {
    p = detail::prefix(p, size, 0, 0, dst, size == 1 && detail::byte_rex(dst));
    *p++ = size == 1 ? 0xD2 : 0xD3;
    return detail::modrm_reg(p, static_cast<uint8_t>(s), dst);
}

/// mov r32, imm32 (B8+r; zero-extends to 64 bits).
inline uint8_t* mov_r32_imm(uint8_t* p, uint8_t dst, uint32_t imm) {
    p = detail::prefix(p, 4, 0, 0, dst, false);
    *p++ = static_cast<uint8_t>(0xB8 | (dst & 7));
    return detail::put32(p, imm);
}
/// mov r64, imm: C7 /0 with a sign-extended imm32 when it fits, else
/// B8+r with the 8-byte immediate.
inline uint8_t* mov_r64_imm(uint8_t* p, uint8_t dst, int64_t imm) {
    p = detail::prefix(p, 8, 0, 0, dst, false);
    if (imm >= INT32_MIN && imm <= INT32_MAX) {
        *p++ = 0xC7;
        p = detail::modrm_reg(p, 0, dst);
        return detail::put32(p, static_cast<uint32_t>(imm));
    }
    *p++ = static_cast<uint8_t>(0xB8 | (dst & 7));
    std::memcpy(p, &imm, 8);
    return p + 8;
}
/// mov qword [m], imm32 (sign-extended).
inline uint8_t* mov_m64_imm(uint8_t* p, const Mem& m, int32_t imm) {
    p = rm(p, 0xC7, 8, 0, m);
    return detail::put32(p, static_cast<uint32_t>(imm));
}

/// mov reg, [m] and mov [m], reg of `size` bytes.
inline uint8_t* load(uint8_t* p, unsigned size, uint8_t dst, const Mem& m) {
    return rm(p, size == 1 ? 0x8A : 0x8B, size, dst, m, size == 1);
}
inline uint8_t* store(uint8_t* p, unsigned size, const Mem& m, uint8_t src) {
    return rm(p, size == 1 ? 0x88 : 0x89, size, src, m, size == 1);
}
/// lea r64, [m].
inline uint8_t* lea(uint8_t* p, uint8_t dst, const Mem& m) { return rm(p, 0x8D, 8, dst, m); }
/// movzx r32, byte/word [m] (`from` 1 or 2).
inline uint8_t* movzx_load(uint8_t* p, unsigned from, uint8_t dst, const Mem& m) {
    return rm(p, from == 1 ? 0x0FB6 : 0x0FB7, 4, dst, m);
}
/// ALU op reg, [m] (RM form, cmp included) and imul reg, [m]; 2, 4 or 8
/// bytes.
inline uint8_t* alu_rm(uint8_t* p, Alu a, unsigned size, uint8_t dst, const Mem& m) {
    return rm(p, static_cast<uint32_t>(a) * 8 + 3, size, dst, m);
}
inline uint8_t* imul_rm(uint8_t* p, unsigned size, uint8_t dst, const Mem& m) { return rm(p, 0x0FAF, size, dst, m); }

inline uint8_t* push(uint8_t* p, uint8_t r) {
    if (r >= 8) *p++ = 0x41;
    *p++ = static_cast<uint8_t>(0x50 | (r & 7));
    return p;
}
inline uint8_t* pop(uint8_t* p, uint8_t r) {
    if (r >= 8) *p++ = 0x41;
    *p++ = static_cast<uint8_t>(0x58 | (r & 7));
    return p;
}
inline uint8_t* ret(uint8_t* p) {
    *p++ = 0xC3;
    return p;
}

/// setcc r8 (`cc` the x86 condition code 0-15).
inline uint8_t* setcc(uint8_t* p, uint8_t cc, uint8_t dst) {
    p = detail::prefix(p, 1, 0, 0, dst, detail::byte_rex(dst));
    p = detail::opcode(p, 0x0F90u | cc);
    return detail::modrm_reg(p, 0, dst);
}
/// cmovcc dst, src (2, 4 or 8 bytes).
inline uint8_t* cmov(uint8_t* p, uint8_t cc, unsigned size, uint8_t dst, uint8_t src) {
    return rr(p, 0x0F40u | cc, 0, size, dst, src);
}
/// movzx r32, r8/r16 (`from` 1 or 2).
inline uint8_t* movzx_rr(uint8_t* p, unsigned from, uint8_t dst, uint8_t src) {
    p = detail::prefix(p, 4, dst, 0, src, from == 1 && detail::byte_rex(src));
    p = detail::opcode(p, from == 1 ? 0x0FB6 : 0x0FB7);
    return detail::modrm_reg(p, dst, src);
}
/// neg/not dst (F7 /3, F7 /2; byte form F6).
inline uint8_t* unary(uint8_t* p, bool is_not, unsigned size, uint8_t dst) {
    p = detail::prefix(p, size, 0, 0, dst, size == 1 && detail::byte_rex(dst));
    *p++ = size == 1 ? 0xF6 : 0xF7;
    return detail::modrm_reg(p, is_not ? 2 : 3, dst);
}

/// Scalar SSE, `pfx` the mandatory prefix (0: none, else 0x66, 0xF2,
/// 0xF3) and `op` the 0F-map opcode: reg-reg (RM: dst in ModRM.reg) and
/// with memory.
inline uint8_t* sse_rr(uint8_t* p, uint8_t pfx, uint8_t op, uint8_t dst, uint8_t src) {
    if (pfx) *p++ = pfx;
    p = detail::prefix(p, 4, dst, 0, src, false);
    *p++ = 0x0F;
    *p++ = op;
    return detail::modrm_reg(p, dst, src);
}
/// Scalar AVX with three registers, `dst = src1 op src2` (VEX.LIG.W0, 0F
/// map; `pp` 1 = 66, 2 = F3, 3 = F2): the two-byte VEX when src2 needs no
/// extension bit, else the three-byte one.
inline uint8_t* vex_rrr(uint8_t* p, uint8_t pp, uint8_t op, uint8_t dst, uint8_t src1, uint8_t src2) {
    const uint8_t r_bar = dst < 8 ? 0x80 : 0;
    const uint8_t vvvv_bar = static_cast<uint8_t>((~src1 & 15) << 3);
    if (src2 < 8) {
        *p++ = 0xC5;
        *p++ = static_cast<uint8_t>(r_bar | vvvv_bar | pp);
    } else {
        *p++ = 0xC4;
        *p++ = static_cast<uint8_t>(r_bar | 0x40 | 0x01);  // X not set, B set (inverted: 0), map 0F
        *p++ = static_cast<uint8_t>(vvvv_bar | pp);
    }
    *p++ = op;
    return detail::modrm_reg(p, dst, src2);
}
inline uint8_t* sse_rm(uint8_t* p, uint8_t pfx, uint8_t op, uint8_t reg, const Mem& m) {
    if (pfx) *p++ = pfx;
    p = detail::prefix(p, 4, reg, detail::mem_x(m), m.base, false);
    *p++ = 0x0F;
    *p++ = op;
    return detail::modrm_mem(p, reg, m);
}

}  // namespace heron::x64::enc
