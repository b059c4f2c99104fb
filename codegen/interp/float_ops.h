// Float semantics of ir-reference.md sections 10-11, on raw bit patterns.
//
// Floats live as their bits (uint32_t for f32, uint64_t for f64) and are
// turned into host floats only for arithmetic. Two families (1.4):
//   - bit-exact ops (fneg fabs fcopysign, and everything outside this file:
//     bitcast select band load ...) work on the bits and never touch a NaN;
//   - arithmetic ops return, whenever their result is a NaN, the positive
//     canonical NaN (0x7fc00000 / 0x7ff8000000000000), the **Heron** rule
//     that fits both targets' behaviour and makes runs deterministic.
// Rounding is IEEE round-to-nearest-even as the host does it under the
// default floating-point environment; the file is compiled with
// -ffp-contract=off so no multiply and add are ever fused behind our back.
// `F` is float or double throughout.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "codegen/ir/instructions.h"
#include "codegen/interp/int_ops.h"

namespace heron::interp {

template <typename F>
struct FloatBits;
template <>
struct FloatBits<float> {
    using Bits = uint32_t;
    static constexpr Bits kSign = 0x8000'0000u;
    static constexpr Bits kCanonicalNaN = 0x7fc0'0000u;
    static constexpr int kMantissaBits = 23;  // explicit fraction bits
};
template <>
struct FloatBits<double> {
    using Bits = uint64_t;
    static constexpr Bits kSign = 0x8000'0000'0000'0000u;
    static constexpr Bits kCanonicalNaN = 0x7ff8'0000'0000'0000u;
    static constexpr int kMantissaBits = 52;
};

template <typename F>
F to_float(uint64_t bits) {
    return std::bit_cast<F>(static_cast<typename FloatBits<F>::Bits>(bits));
}
/// The bits of an arithmetic result: any NaN becomes the positive canonical NaN.
template <typename F>
uint64_t arith_bits(F r) {
    if (r != r) return FloatBits<F>::kCanonicalNaN;
    return std::bit_cast<typename FloatBits<F>::Bits>(r);
}
template <typename F>
bool is_nan_bits(uint64_t bits) {
    F f = to_float<F>(bits);
    return f != f;
}

// --- 11. arithmetic ---------------------------------------------------------

template <typename F>
uint64_t fadd(uint64_t x, uint64_t y) { return arith_bits<F>(to_float<F>(x) + to_float<F>(y)); }
template <typename F>
uint64_t fsub(uint64_t x, uint64_t y) { return arith_bits<F>(to_float<F>(x) - to_float<F>(y)); }
template <typename F>
uint64_t fmul(uint64_t x, uint64_t y) { return arith_bits<F>(to_float<F>(x) * to_float<F>(y)); }
template <typename F>
uint64_t fdiv(uint64_t x, uint64_t y) { return arith_bits<F>(to_float<F>(x) / to_float<F>(y)); }
template <typename F>
uint64_t fsqrt(uint64_t x) { return arith_bits<F>(std::sqrt(to_float<F>(x))); }
/// x * y + z rounded once (std::fma is correctly rounded for float and double).
template <typename F>
uint64_t ffma(uint64_t x, uint64_t y, uint64_t z) {
    return arith_bits<F>(std::fma(to_float<F>(x), to_float<F>(y), to_float<F>(z)));
}

template <typename F>
uint64_t fneg(uint64_t x) { return x ^ FloatBits<F>::kSign; }
template <typename F>
uint64_t fabs(uint64_t x) { return x & ~uint64_t{FloatBits<F>::kSign}; }
template <typename F>
uint64_t fcopysign(uint64_t x, uint64_t y) {
    constexpr uint64_t s = FloatBits<F>::kSign;
    return (x & ~s) | (y & s);
}

/// WebAssembly min/max: NaN if either is NaN; -0.0 < +0.0. For equal
/// operands OR (min) / AND (max) of the bits picks the right zero and is the
/// identity otherwise.
template <typename F>
uint64_t fmin(uint64_t x, uint64_t y) {
    F a = to_float<F>(x), b = to_float<F>(y);
    if (a != a || b != b) return FloatBits<F>::kCanonicalNaN;
    if (a == b) return x | y;
    return a < b ? x : y;
}
template <typename F>
uint64_t fmax(uint64_t x, uint64_t y) {
    F a = to_float<F>(x), b = to_float<F>(y);
    if (a != a || b != b) return FloatBits<F>::kCanonicalNaN;
    if (a == b) return x & y;
    return a > b ? x : y;
}

// std::ceil/floor/trunc are exact, keep the sign of zero and pass ±Inf.
template <typename F>
uint64_t fceil(uint64_t x) { return arith_bits<F>(std::ceil(to_float<F>(x))); }
template <typename F>
uint64_t ffloor(uint64_t x) { return arith_bits<F>(std::floor(to_float<F>(x))); }
template <typename F>
uint64_t ftrunc(uint64_t x) { return arith_bits<F>(std::trunc(to_float<F>(x))); }
/// Round to nearest, ties to even, written out so that it does not depend on
/// the host's rounding mode. x - trunc(x) is exact (the fraction of a float
/// is representable), and so is t ± 1 below 2^mantissa.
template <typename F>
uint64_t fnearest(uint64_t bits) {
    F x = to_float<F>(bits);
    if (x != x) return FloatBits<F>::kCanonicalNaN;
    const F limit = std::ldexp(F(1), FloatBits<F>::kMantissaBits);
    if (!(std::fabs(x) < limit)) return bits;  // ±Inf and values already integral
    F t = std::trunc(x);
    F frac = std::fabs(x - t);
    bool odd = (static_cast<int64_t>(t) & 1) != 0;
    if (frac > F(0.5) || (frac == F(0.5) && odd)) t += std::copysign(F(1), x);
    return arith_bits<F>(std::copysign(t, x));
}

// --- 9. fcmp: exactly one of UN, EQ, LT, GT holds -----------------------------

template <typename F>
uint64_t fcmp(FloatCC cc, uint64_t x, uint64_t y) {
    F a = to_float<F>(x), b = to_float<F>(y);
    bool un = a != a || b != b;
    bool eq = !un && a == b, lt = !un && a < b, gt = !un && a > b;
    switch (cc) {
    case FloatCC::Ord: return !un;
    case FloatCC::Uno: return un;
    case FloatCC::Eq: return eq;
    case FloatCC::Ne: return !eq;
    case FloatCC::One: return lt || gt;
    case FloatCC::Ueq: return un || eq;
    case FloatCC::Lt: return lt;
    case FloatCC::Le: return lt || eq;
    case FloatCC::Gt: return gt;
    case FloatCC::Ge: return gt || eq;
    case FloatCC::Ult: return un || lt;
    case FloatCC::Ule: return un || lt || eq;
    case FloatCC::Ugt: return un || gt;
    case FloatCC::Uge: return un || gt || eq;
    }
    return 0;
}

// --- 10. conversions --------------------------------------------------------

inline uint64_t fpromote(uint64_t x) { return arith_bits<double>(static_cast<double>(to_float<float>(x))); }
inline uint64_t fdemote(uint64_t x) { return arith_bits<float>(static_cast<float>(to_float<double>(x))); }

/// trunc(x) as a double: exact for every float and double.
template <typename F>
double trunc_to_double(uint64_t x) { return std::trunc(static_cast<double>(to_float<F>(x))); }

/// fcvt_to_sint: NaN -> bad_toint; trunc(x) outside [MIN, MAX] -> int_ovf.
/// The bounds -2^(B-1) and 2^(B-1) are exact doubles; the cast happens only
/// in range, where it is defined.
template <typename F>
uint8_t fcvt_to_sint(uint64_t x, unsigned bits, uint64_t& out) {
    if (is_nan_bits<F>(x)) return TrapCode::kBadConversionToInteger;
    double t = trunc_to_double<F>(x), lim = std::ldexp(1.0, static_cast<int>(bits) - 1);
    if (!(t >= -lim && t < lim)) return TrapCode::kIntegerOverflow;
    out = wrap(static_cast<int64_t>(t), bits);
    return 0;
}
/// fcvt_to_uint: as above with the range [0, 2^B-1]; -1 < x <= -0.0
/// truncates to (-)0 and gives 0.
template <typename F>
uint8_t fcvt_to_uint(uint64_t x, unsigned bits, uint64_t& out) {
    if (is_nan_bits<F>(x)) return TrapCode::kBadConversionToInteger;
    double t = trunc_to_double<F>(x), lim = std::ldexp(1.0, static_cast<int>(bits));
    if (!(t >= 0.0 && t < lim)) return TrapCode::kIntegerOverflow;  // -0.0 >= 0.0 holds
    out = static_cast<uint64_t>(t);
    return 0;
}
template <typename F>
uint64_t fcvt_to_sint_sat(uint64_t x, unsigned bits) {
    if (is_nan_bits<F>(x)) return 0;
    double t = trunc_to_double<F>(x), lim = std::ldexp(1.0, static_cast<int>(bits) - 1);
    if (t < -lim) return wrap(smin_of(bits), bits);
    if (t >= lim) return static_cast<uint64_t>(smax_of(bits));
    return wrap(static_cast<int64_t>(t), bits);
}
template <typename F>
uint64_t fcvt_to_uint_sat(uint64_t x, unsigned bits) {
    if (is_nan_bits<F>(x)) return 0;
    double t = trunc_to_double<F>(x), lim = std::ldexp(1.0, static_cast<int>(bits));
    if (t < 0.0) return 0;
    if (t >= lim) return mask_of(bits);
    return static_cast<uint64_t>(t);
}

/// The integer rounded once to F: a direct int64/uint64 -> F conversion
/// (never through double for F = float, which would round twice).
template <typename F>
uint64_t fcvt_from_sint(uint64_t x, unsigned bits) {
    return std::bit_cast<typename FloatBits<F>::Bits>(static_cast<F>(sext(x, bits)));
}
template <typename F>
uint64_t fcvt_from_uint(uint64_t x, unsigned bits) {
    return std::bit_cast<typename FloatBits<F>::Bits>(static_cast<F>(x & mask_of(bits)));
}

}  // namespace heron::interp
