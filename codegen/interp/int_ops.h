// Integer semantics of ir-reference.md sections 4-10, on canonical values.
//
// Every value is a uint64_t holding the B bits of an `iN` with the bits above
// B zero (1.3). Each helper takes the width `bits` (8, 16, 32 or 64 only;
// the interpreter's decoder guarantees it) and returns a canonical result.
// Signed readings go through `sext`; exact results that need more than 64
// bits (flags, high halves) are computed in 128-bit integers, so no helper
// ever relies on C++ signed overflow, shifts by >= the width, or
// `INT_MIN / -1`. Trapping helpers return the trap code byte (0: no trap).
#pragma once

#include <cstdint>

#include "codegen/ir/instructions.h"

namespace heron::interp {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr uint64_t mask_of(unsigned bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

/// s(x): the low `bits` bits of x read as two's complement.
constexpr int64_t sext(uint64_t x, unsigned bits) {
    unsigned sh = 64 - bits;
    return static_cast<int64_t>(x << sh) >> sh;
}
constexpr int64_t smin_of(unsigned bits) { return -static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1) - 1; }
constexpr int64_t smax_of(unsigned bits) { return static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1); }
/// The low `bits` bits of a (possibly negative) mathematical integer.
constexpr uint64_t wrap(int64_t v, unsigned bits) { return static_cast<uint64_t>(v) & mask_of(bits); }
constexpr bool fits_signed(Int128 v, unsigned bits) { return v >= smin_of(bits) && v <= smax_of(bits); }

// --- 4. arithmetic ---------------------------------------------------------

constexpr uint64_t iadd(uint64_t x, uint64_t y, unsigned bits) { return (x + y) & mask_of(bits); }
constexpr uint64_t isub(uint64_t x, uint64_t y, unsigned bits) { return (x - y) & mask_of(bits); }
constexpr uint64_t imul(uint64_t x, uint64_t y, unsigned bits) { return (x * y) & mask_of(bits); }
constexpr uint64_t ineg(uint64_t x, unsigned bits) { return (0 - x) & mask_of(bits); }
constexpr uint64_t iabs(uint64_t x, unsigned bits) { return sext(x, bits) < 0 ? ineg(x, bits) : x; }

constexpr uint64_t umulhi(uint64_t x, uint64_t y, unsigned bits) {
    return static_cast<uint64_t>((static_cast<UInt128>(x) * y) >> bits) & mask_of(bits);
}
/// Bits [B, 2B) of the two's complement 2B-bit product, i.e. the low B bits
/// of floor(s(x) * s(y) / 2^B).
constexpr uint64_t smulhi(uint64_t x, uint64_t y, unsigned bits) {
    Int128 p = static_cast<Int128>(sext(x, bits)) * sext(y, bits);
    return static_cast<uint64_t>(static_cast<UInt128>(p) >> bits) & mask_of(bits);
}

constexpr uint8_t udiv(uint64_t x, uint64_t y, unsigned, uint64_t& out) {
    if (y == 0) return TrapCode::kIntegerDivisionByZero;
    out = x / y;
    return 0;
}
constexpr uint8_t urem(uint64_t x, uint64_t y, unsigned, uint64_t& out) {
    if (y == 0) return TrapCode::kIntegerDivisionByZero;
    out = x % y;
    return 0;
}
constexpr uint8_t sdiv(uint64_t x, uint64_t y, unsigned bits, uint64_t& out) {
    if (y == 0) return TrapCode::kIntegerDivisionByZero;
    int64_t sx = sext(x, bits), sy = sext(y, bits);
    if (sy == -1 && sx == smin_of(bits)) return TrapCode::kIntegerOverflow;
    out = wrap(sx / sy, bits);  // C++ division truncates toward zero
    return 0;
}
/// `MIN srem -1` is 0 and does not trap (ir-reference.md 4, srem).
constexpr uint8_t srem(uint64_t x, uint64_t y, unsigned bits, uint64_t& out) {
    if (y == 0) return TrapCode::kIntegerDivisionByZero;
    int64_t sx = sext(x, bits), sy = sext(y, bits);
    out = sy == -1 ? 0 : wrap(sx % sy, bits);  // % takes the dividend's sign
    return 0;
}

constexpr uint64_t smin(uint64_t x, uint64_t y, unsigned bits) { return sext(x, bits) <= sext(y, bits) ? x : y; }
constexpr uint64_t smax(uint64_t x, uint64_t y, unsigned bits) { return sext(x, bits) >= sext(y, bits) ? x : y; }
constexpr uint64_t umin(uint64_t x, uint64_t y) { return x <= y ? x : y; }
constexpr uint64_t umax(uint64_t x, uint64_t y) { return x >= y ? x : y; }

// --- 5. overflow flags: the flag is 1 iff the exact result does not fit ----

constexpr uint64_t uadd_flag(uint64_t x, uint64_t y, unsigned bits) {
    return static_cast<UInt128>(x) + y > mask_of(bits);
}
constexpr uint64_t sadd_flag(uint64_t x, uint64_t y, unsigned bits) {
    return !fits_signed(static_cast<Int128>(sext(x, bits)) + sext(y, bits), bits);
}
constexpr uint64_t usub_flag(uint64_t x, uint64_t y) { return x < y; }
constexpr uint64_t ssub_flag(uint64_t x, uint64_t y, unsigned bits) {
    return !fits_signed(static_cast<Int128>(sext(x, bits)) - sext(y, bits), bits);
}
constexpr uint64_t umul_flag(uint64_t x, uint64_t y, unsigned bits) {
    return static_cast<UInt128>(x) * y > mask_of(bits);
}
constexpr uint64_t smul_flag(uint64_t x, uint64_t y, unsigned bits) {
    return !fits_signed(static_cast<Int128>(sext(x, bits)) * sext(y, bits), bits);
}

// Carry/borrow chains: one exact 3-input operation with c = (c_in != 0).
constexpr uint64_t uadd_cin_flag(uint64_t x, uint64_t y, uint64_t c, unsigned bits) {
    return static_cast<UInt128>(x) + y + (c != 0) > mask_of(bits);
}
constexpr uint64_t sadd_cin_flag(uint64_t x, uint64_t y, uint64_t c, unsigned bits) {
    return !fits_signed(static_cast<Int128>(sext(x, bits)) + sext(y, bits) + (c != 0), bits);
}
constexpr uint64_t usub_bin_flag(uint64_t x, uint64_t y, uint64_t c) {
    return static_cast<Int128>(x) - static_cast<Int128>(y) - (c != 0) < 0;
}
constexpr uint64_t ssub_bin_flag(uint64_t x, uint64_t y, uint64_t c, unsigned bits) {
    return !fits_signed(static_cast<Int128>(sext(x, bits)) - sext(y, bits) - (c != 0), bits);
}

/// The sums of the carry chain: x + y + (c != 0) and x - y - (c != 0).
constexpr uint64_t iadd_cin(uint64_t x, uint64_t y, uint64_t c, unsigned bits) { return iadd(iadd(x, y, bits), c != 0, bits); }
constexpr uint64_t isub_bin(uint64_t x, uint64_t y, uint64_t c, unsigned bits) { return isub(isub(x, y, bits), c != 0, bits); }

// --- 6. bitwise logic: on any type's bits (floats included) ----------------

constexpr uint64_t band(uint64_t x, uint64_t y) { return x & y; }
constexpr uint64_t bor(uint64_t x, uint64_t y) { return x | y; }
constexpr uint64_t bxor(uint64_t x, uint64_t y) { return x ^ y; }
constexpr uint64_t bnot(uint64_t x, unsigned bits) { return ~x & mask_of(bits); }
/// Bits of x where c is 1, of y where c is 0.
constexpr uint64_t bitselect(uint64_t c, uint64_t x, uint64_t y, unsigned bits) {
    return ((c & x) | (~c & y)) & mask_of(bits);
}

// --- 7. shifts and rotates: the amount is u(y) mod B ------------------------

constexpr unsigned shift_amount(uint64_t y, unsigned bits) { return static_cast<unsigned>(y & (bits - 1)); }

constexpr uint64_t ishl(uint64_t x, uint64_t y, unsigned bits) { return (x << shift_amount(y, bits)) & mask_of(bits); }
constexpr uint64_t ushr(uint64_t x, uint64_t y, unsigned bits) { return (x & mask_of(bits)) >> shift_amount(y, bits); }
constexpr uint64_t sshr(uint64_t x, uint64_t y, unsigned bits) { return wrap(sext(x, bits) >> shift_amount(y, bits), bits); }
constexpr uint64_t rotl(uint64_t x, uint64_t y, unsigned bits) {
    unsigned k = shift_amount(y, bits);
    x &= mask_of(bits);
    return k == 0 ? x : ((x << k) | (x >> (bits - k))) & mask_of(bits);
}
constexpr uint64_t rotr(uint64_t x, uint64_t y, unsigned bits) {
    unsigned k = shift_amount(y, bits);
    x &= mask_of(bits);
    return k == 0 ? x : ((x >> k) | (x << (bits - k))) & mask_of(bits);
}

// --- 8. bit counting and byte/bit order -------------------------------------

constexpr uint64_t clz(uint64_t x, unsigned bits) {
    x &= mask_of(bits);
    return x == 0 ? bits : static_cast<uint64_t>(__builtin_clzll(x)) - (64 - bits);
}
/// Bit i of d (i < B-1) says whether bits i and i+1 of x differ; the top bit
/// of d is 0, so the run of leading zeros of d is one more than cls.
constexpr uint64_t cls(uint64_t x, unsigned bits) {
    int64_t s = sext(x, bits);
    return clz(static_cast<uint64_t>(s ^ (s >> 1)) & mask_of(bits), bits) - 1;
}
constexpr uint64_t ctz(uint64_t x, unsigned bits) {
    x &= mask_of(bits);
    return x == 0 ? bits : static_cast<uint64_t>(__builtin_ctzll(x));
}
constexpr uint64_t popcnt(uint64_t x, unsigned bits) {
    return static_cast<uint64_t>(__builtin_popcountll(x & mask_of(bits)));
}
constexpr uint64_t bitrev(uint64_t x, unsigned bits) {
    uint64_t r = 0;
    for (unsigned i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
    return r;
}
constexpr uint64_t bswap(uint64_t x, unsigned bits) { return __builtin_bswap64(x) >> (64 - bits); }

// --- 9. integer comparison -------------------------------------------------

constexpr uint64_t icmp(IntCC cc, uint64_t x, uint64_t y, unsigned bits) {
    switch (cc) {
    case IntCC::Eq: return x == y;
    case IntCC::Ne: return x != y;
    case IntCC::Slt: return sext(x, bits) < sext(y, bits);
    case IntCC::Sge: return sext(x, bits) >= sext(y, bits);
    case IntCC::Sgt: return sext(x, bits) > sext(y, bits);
    case IntCC::Sle: return sext(x, bits) <= sext(y, bits);
    case IntCC::Ult: return x < y;
    case IntCC::Uge: return x >= y;
    case IntCC::Ugt: return x > y;
    case IntCC::Ule: return x <= y;
    }
    return 0;
}

/// select / select_spectre_guard: a condition is true iff any bit is set.
constexpr uint64_t select_of(uint64_t c, uint64_t x, uint64_t y) { return c != 0 ? x : y; }
constexpr uint64_t bmask(uint64_t c, unsigned bits) { return c != 0 ? mask_of(bits) : 0; }

// --- 10. integer conversions: `from` is the operand's width ------------------

constexpr uint64_t uextend(uint64_t x, unsigned from) { return x & mask_of(from); }
constexpr uint64_t sextend(uint64_t x, unsigned from, unsigned bits) { return wrap(sext(x, from), bits); }
/// ireduce and bitcast: the low `bits` bits.
constexpr uint64_t ireduce(uint64_t x, unsigned bits) { return x & mask_of(bits); }

}  // namespace heron::interp
