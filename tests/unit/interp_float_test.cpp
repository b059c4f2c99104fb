// Interpreter float semantics (ir-reference.md 1.4, 9-11): the NaN rules
// (bit-exact ops keep every NaN bit, arithmetic ops give the positive
// canonical NaN), every fcmp code against NaN / -0.0 / Inf, the reference's
// examples, conversions at their exact range edges, and the rounding of
// every conversion against software models that never use host float
// conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/unit/interp_test_util.h"

namespace heron {
namespace {

using test::f32b;
using test::f64b;
using test::kF32CanonNaN;
using test::kF64CanonNaN;
using test::OpEval;
using test::Rng;
using namespace types;

constexpr uint8_t kOvf = TrapCode::kIntegerOverflow;
constexpr uint8_t kBadToInt = TrapCode::kBadConversionToInteger;

// Interesting f32 / f64 bit patterns.
constexpr uint64_t kF32QNaN1 = 0x7fc0'0001, kF32SNaN1 = 0x7f80'0001, kF32NegNaN = 0xffc0'0000;
constexpr uint64_t kF32Inf = 0x7f80'0000, kF32NegInf = 0xff80'0000, kF32NegZero = 0x8000'0000;
constexpr uint64_t kF64QNaN1 = 0x7ff8'0000'0000'0001, kF64SNaN1 = 0x7ff0'0000'0000'0001;
constexpr uint64_t kF64NegNaN = 0xfff8'0000'0000'0000;
constexpr uint64_t kF64Inf = 0x7ff0'0000'0000'0000, kF64NegInf = 0xfff0'0000'0000'0000;
constexpr uint64_t kF64NegZero = 0x8000'0000'0000'0000;

std::vector<uint64_t> special32() {
    return {0, kF32NegZero, f32b(1.0f), f32b(-1.0f), f32b(0.5f), f32b(-2.5f), 0x0000'0001, 0x8000'0001,
            0x7f7f'ffff, 0xff7f'ffff, kF32Inf, kF32NegInf, kF32CanonNaN, kF32NegNaN, kF32QNaN1, kF32SNaN1,
            0xffc0'1234, 0xff80'0001};
}
std::vector<uint64_t> special64() {
    return {0, kF64NegZero, f64b(1.0), f64b(-1.0), f64b(0.5), f64b(-2.5), 1, 0x8000'0000'0000'0001,
            0x7fef'ffff'ffff'ffff, kF64Inf, kF64NegInf, kF64CanonNaN, kF64NegNaN, kF64QNaN1, kF64SNaN1,
            0xfff0'0000'0000'0abc};
}
bool nan32(uint64_t b) { return (b & 0x7f80'0000) == 0x7f80'0000 && (b & 0x007f'ffff) != 0; }
bool nan64(uint64_t b) {
    return (b & 0x7ff0'0000'0000'0000) == 0x7ff0'0000'0000'0000 && (b & 0x000f'ffff'ffff'ffff) != 0;
}

// --- 1.4: bit-exact ops keep NaNs, arithmetic ops canonicalize -------------------

TEST(InterpFloat, BitExactOpsKeepNaNBits) {
    OpEval neg32(Opcode::Fneg, F32, {F32}), abs32(Opcode::Fabs, F32, {F32}), cs32(Opcode::Fcopysign, F32, {F32, F32});
    EXPECT_EQ(neg32({0}), kF32NegZero);
    EXPECT_EQ(neg32({kF32QNaN1}), 0xffc0'0001ULL);   // fneg(+NaN:0x1) == -NaN:0x1
    EXPECT_EQ(neg32({kF32SNaN1}), 0xff80'0001ULL);   // fneg(+sNaN:0x1) == -sNaN:0x1
    EXPECT_EQ(abs32({kF32NegNaN}), kF32CanonNaN);    // fabs -NaN = +NaN
    EXPECT_EQ(abs32({0xff80'0001}), kF32SNaN1);
    EXPECT_EQ(cs32({f32b(3.0f), kF32SNaN1}), f32b(3.0f));       // fcopysign(0x3.0, +sNaN:0x1) = 0x3.0
    EXPECT_EQ(cs32({kF32QNaN1, kF32NegNaN}), 0xffc0'0001ULL);   // fcopysign(+NaN:0x1, -NaN) = -NaN:0x1
    OpEval neg64(Opcode::Fneg, F64, {F64}), abs64(Opcode::Fabs, F64, {F64}), cs64(Opcode::Fcopysign, F64, {F64, F64});
    EXPECT_EQ(neg64({kF64SNaN1}), 0xfff0'0000'0000'0001ULL);
    EXPECT_EQ(abs64({0xfff0'0000'0000'0abcULL}), 0x7ff0'0000'0000'0abcULL);
    EXPECT_EQ(cs64({kF64QNaN1, kF64NegZero}), 0xfff8'0000'0000'0001ULL);
    EXPECT_EQ(cs64({f64b(-7.0), 0}), f64b(7.0));
    // bitcast and constants are exact too.
    EXPECT_EQ(OpEval(Opcode::Bitcast, F32, {I32})({kF32SNaN1}), kF32SNaN1);
    auto f = test::build_function("c", {}, [](FuncCursor& c, const std::vector<Value>&) {
        return std::vector<Value>{c.ins().f32const(Ieee32{0x7f80'0001}), c.ins().f64const(Ieee64{kF64SNaN1}),
                                  c.ins().f32const(Ieee32{0x8000'0000})};
    });
    Interpreter interp;
    auto r = interp.call(*f, {});
    ASSERT_EQ(r.values.size(), 3u);
    EXPECT_EQ(r.values[0].bits, kF32SNaN1);
    EXPECT_EQ(r.values[1].bits, kF64SNaN1);
    EXPECT_EQ(r.values[2].bits, kF32NegZero);
}

// Every arithmetic op, every special input: a NaN result is always the
// positive canonical NaN, and a non-NaN result agrees with the host op.
TEST(InterpFloat, ArithmeticNaNsAreCanonical) {
    struct Bin {
        Opcode op;
        double (*ref)(double, double);
    };
    const Bin bins[] = {
        {Opcode::Fadd, [](double a, double b) { return a + b; }},
        {Opcode::Fsub, [](double a, double b) { return a - b; }},
        {Opcode::Fmul, [](double a, double b) { return a * b; }},
        {Opcode::Fdiv, [](double a, double b) { return a / b; }},
        {Opcode::Fmin, nullptr},
        {Opcode::Fmax, nullptr},
    };
    for (const Bin& bin : bins) {
        OpEval e32(bin.op, F32, {F32, F32}), e64(bin.op, F64, {F64, F64});
        for (uint64_t x : special32()) {
            for (uint64_t y : special32()) {
                uint64_t r = e32({x, y});
                if (nan32(x) || nan32(y)) {
                    EXPECT_EQ(r, kF32CanonNaN) << opcode_name(bin.op) << " " << x << " " << y;
                }
                if (nan32(r)) {
                    EXPECT_EQ(r, kF32CanonNaN) << opcode_name(bin.op);
                }
                if (bin.ref && !nan32(r)) {
                    float want = static_cast<float>(bin.ref(std::bit_cast<float>(uint32_t(x)), std::bit_cast<float>(uint32_t(y))));
                    EXPECT_EQ(r, f32b(want)) << opcode_name(bin.op) << " " << x << " " << y;
                }
            }
        }
        for (uint64_t x : special64()) {
            for (uint64_t y : special64()) {
                uint64_t r = e64({x, y});
                if (nan64(x) || nan64(y)) {
                    EXPECT_EQ(r, kF64CanonNaN) << opcode_name(bin.op);
                }
                if (nan64(r)) {
                    EXPECT_EQ(r, kF64CanonNaN) << opcode_name(bin.op);
                }
                if (bin.ref && !nan64(r)) {
                    EXPECT_EQ(r, f64b(bin.ref(std::bit_cast<double>(x), std::bit_cast<double>(y)))) << opcode_name(bin.op);
                }
            }
        }
    }
    for (Opcode op : {Opcode::Sqrt, Opcode::Ceil, Opcode::Floor, Opcode::Trunc, Opcode::Nearest}) {
        OpEval e32(op, F32, {F32}), e64(op, F64, {F64});
        for (uint64_t x : special32()) {
            uint64_t r = e32({x});
            if (nan32(x) || nan32(r)) {
                EXPECT_EQ(r, kF32CanonNaN) << opcode_name(op) << " " << x;
            }
        }
        for (uint64_t x : special64()) {
            uint64_t r = e64({x});
            if (nan64(x) || nan64(r)) {
                EXPECT_EQ(r, kF64CanonNaN) << opcode_name(op) << " " << x;
            }
        }
    }
    OpEval fma32(Opcode::Fma, F32, {F32, F32, F32});
    for (uint64_t x : special32()) {
        for (uint64_t z : special32()) {
            uint64_t r = fma32({x, f32b(2.0f), z});
            if (nan32(x) || nan32(z) || nan32(r)) {
                EXPECT_EQ(r, kF32CanonNaN);
            }
        }
    }
    EXPECT_EQ(fma32({kF32Inf, 0, f32b(1.0f)}), kF32CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Fma, F64, {F64, F64, F64})({kF64Inf, f64b(1.0), kF64NegInf}), kF64CanonNaN);
    OpEval promote(Opcode::Fpromote, F64, {F32}), demote(Opcode::Fdemote, F32, {F64});
    for (uint64_t x : {kF32QNaN1, kF32SNaN1, kF32NegNaN, kF32CanonNaN}) EXPECT_EQ(promote({x}), kF64CanonNaN);
    for (uint64_t x : {kF64QNaN1, kF64SNaN1, kF64NegNaN, kF64CanonNaN}) EXPECT_EQ(demote({x}), kF32CanonNaN);
    // Invalid operations produce the canonical NaN, positive.
    EXPECT_EQ(OpEval(Opcode::Fsub, F32, {F32, F32})({kF32Inf, kF32Inf}), kF32CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Fmul, F64, {F64, F64})({0, kF64NegInf}), kF64CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Fdiv, F32, {F32, F32})({0, kF32NegZero}), kF32CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Sqrt, F64, {F64})({f64b(-1.0)}), kF64CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Sqrt, F32, {F32})({kF32NegInf}), kF32CanonNaN);
}

TEST(InterpFloat, ArithmeticSignsAndInfinities) {
    OpEval add(Opcode::Fadd, F32, {F32, F32}), sub(Opcode::Fsub, F32, {F32, F32}), div(Opcode::Fdiv, F64, {F64, F64});
    EXPECT_EQ(add({f32b(3.0f), f32b(-3.0f)}), 0ULL);                // x + (-x) = +0.0
    EXPECT_EQ(add({kF32NegZero, kF32NegZero}), kF32NegZero);      // -0 + -0 = -0
    EXPECT_EQ(add({0, kF32NegZero}), 0ULL);
    EXPECT_EQ(sub({f32b(5.0f), f32b(5.0f)}), 0ULL);                 // x - x = +0.0
    EXPECT_EQ(sub({kF32NegZero, 0}), kF32NegZero);
    EXPECT_EQ(div({f64b(1.0), 0}), kF64Inf);
    EXPECT_EQ(div({f64b(1.0), kF64NegZero}), kF64NegInf);
    EXPECT_EQ(div({f64b(-1.0), kF64NegZero}), kF64Inf);
    EXPECT_EQ(div({kF64Inf, kF64Inf}), kF64CanonNaN);
    EXPECT_EQ(div({0, 0}), kF64CanonNaN);
    EXPECT_EQ(OpEval(Opcode::Sqrt, F32, {F32})({kF32NegZero}), kF32NegZero);
    EXPECT_EQ(OpEval(Opcode::Sqrt, F64, {F64})({kF64Inf}), kF64Inf);
    EXPECT_EQ(OpEval(Opcode::Sqrt, F64, {F64})({f64b(2.0)}), f64b(std::sqrt(2.0)));
    // Subnormals are honoured (no flush to zero).
    EXPECT_EQ(OpEval(Opcode::Fmul, F32, {F32, F32})({0x0080'0000, f32b(0.5f)}), 0x0040'0000ULL);
    EXPECT_EQ(OpEval(Opcode::Fadd, F64, {F64, F64})({1, 1}), 2ULL);
}

TEST(InterpFloat, FmaIsFused) {
    OpEval fma32(Opcode::Fma, F32, {F32, F32, F32});
    EXPECT_EQ(fma32({f32b(0x1.00001p50f), f32b(0x1.1p50f), f32b(0x1.0p-149f)}), f32b(0x1.100012p100f));
    EXPECT_EQ(fma32({f32b(0x1.84ae3p125f), f32b(0x1.6p-141f), f32b(0x1.0p-149f)}), f32b(0x1.0b37c2p-15f));
    OpEval fma64(Opcode::Fma, F64, {F64, F64, F64});
    // (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104 exactly; unfused gives 0.
    EXPECT_EQ(fma64({f64b(1.0 + 0x1p-52), f64b(1.0 - 0x1p-52), f64b(-1.0)}), f64b(-0x1p-104));
    EXPECT_EQ(fma64({f64b(2.0), f64b(3.0), f64b(4.0)}), f64b(10.0));
    // A separate fmul then fadd rounds twice.
    OpEval mul(Opcode::Fmul, F32, {F32, F32}), add(Opcode::Fadd, F32, {F32, F32});
    uint64_t p = mul({f32b(0x1.00001p50f), f32b(0x1.1p50f)});
    EXPECT_EQ(add({p, f32b(0x1.0p-149f)}), f32b(0x1.10001p100f));
}

TEST(InterpFloat, MinMaxWasmSemantics) {
    OpEval min32(Opcode::Fmin, F32, {F32, F32}), max32(Opcode::Fmax, F32, {F32, F32});
    EXPECT_EQ(min32({0, kF32NegZero}), kF32NegZero);
    EXPECT_EQ(min32({kF32NegZero, 0}), kF32NegZero);
    EXPECT_EQ(max32({0, kF32NegZero}), 0ULL);
    EXPECT_EQ(max32({kF32NegZero, 0}), 0ULL);
    EXPECT_EQ(max32({kF32NegZero, kF32NegZero}), kF32NegZero);
    EXPECT_EQ(min32({kF32Inf, kF32NegInf}), kF32NegInf);
    EXPECT_EQ(max32({kF32Inf, kF32NegInf}), kF32Inf);
    EXPECT_EQ(min32({f32b(1.0f), kF32QNaN1}), kF32CanonNaN);   // not IEEE minNum: NaN wins
    EXPECT_EQ(max32({kF32SNaN1, f32b(1.0f)}), kF32CanonNaN);
    EXPECT_EQ(min32({f32b(-1.0f), f32b(2.0f)}), f32b(-1.0f));
    EXPECT_EQ(max32({f32b(-1.0f), f32b(2.0f)}), f32b(2.0f));
    OpEval min64(Opcode::Fmin, F64, {F64, F64}), max64(Opcode::Fmax, F64, {F64, F64});
    EXPECT_EQ(min64({0, kF64NegZero}), kF64NegZero);
    EXPECT_EQ(max64({kF64NegZero, 0}), 0ULL);
    EXPECT_EQ(min64({kF64NegNaN, f64b(1.0)}), kF64CanonNaN);
    EXPECT_EQ(max64({1, 2}), 2ULL);  // subnormals
}

TEST(InterpFloat, RoundingToIntegral) {
    OpEval near32(Opcode::Nearest, F32, {F32}), near64(Opcode::Nearest, F64, {F64});
    EXPECT_EQ(near32({f32b(2.5f)}), f32b(2.0f));
    EXPECT_EQ(near32({f32b(1.5f)}), f32b(2.0f));
    EXPECT_EQ(near32({f32b(0.5f)}), 0ULL);
    EXPECT_EQ(near32({f32b(-0.5f)}), kF32NegZero);
    EXPECT_EQ(near32({f32b(-2.5f)}), f32b(-2.0f));
    EXPECT_EQ(near32({f32b(-3.5f)}), f32b(-4.0f));
    EXPECT_EQ(near32({f32b(0x1.fffffep22f)}), f32b(0x1p23f));  // 8388607.5 -> even 8388608
    EXPECT_EQ(near32({f32b(0x1.fffffcp22f)}), f32b(0x1.fffffcp22f));
    EXPECT_EQ(near32({f32b(0.49999997f)}), 0ULL);
    EXPECT_EQ(near64({f64b(0.5)}), 0ULL);
    EXPECT_EQ(near64({f64b(-0.5)}), kF64NegZero);
    EXPECT_EQ(near64({f64b(4503599627370495.5)}), f64b(4503599627370496.0));
    EXPECT_EQ(near64({f64b(-0x1.0p-1074)}), kF64NegZero);
    EXPECT_EQ(near64({f64b(0.5000000000000001)}), f64b(1.0));
    EXPECT_EQ(near64({kF64NegInf}), kF64NegInf);
    OpEval ceil32(Opcode::Ceil, F32, {F32}), floor32(Opcode::Floor, F32, {F32}), trunc64(Opcode::Trunc, F64, {F64});
    EXPECT_EQ(ceil32({f32b(-0.5f)}), kF32NegZero);     // ceil(-0x0.5) = -0.0
    EXPECT_EQ(ceil32({f32b(0.5f)}), f32b(1.0f));
    EXPECT_EQ(floor32({f32b(0.5f)}), 0ULL);            // floor(0x0.5) = +0.0
    EXPECT_EQ(floor32({f32b(-0.5f)}), f32b(-1.0f));
    EXPECT_EQ(floor32({kF32NegZero}), kF32NegZero);
    EXPECT_EQ(trunc64({f64b(-0.7)}), kF64NegZero);     // trunc(-0.7) = -0.0
    EXPECT_EQ(trunc64({f64b(-1.7)}), f64b(-1.0));
    EXPECT_EQ(trunc64({f64b(0x1p60 + 0x1p8)}), f64b(0x1p60 + 0x1p8));
    // nearest against the host's nearbyint (default rounding mode: ties to even).
    Rng rng(5);
    for (int i = 0; i < 100000; ++i) {
        uint64_t b32 = rng.next() & 0xffff'ffff;
        float f = std::bit_cast<float>(uint32_t(b32));
        if (f == f) {
            ASSERT_EQ(near32({b32}), f32b(std::nearbyint(f))) << b32;
        }
        double d = std::ldexp(static_cast<double>(rng.next() >> 11), -int(rng.next() % 60));
        if (rng.next() & 1) d = -d;
        ASSERT_EQ(near64({f64b(d)}), f64b(std::nearbyint(d))) << d;
    }
}

// --- 9: fcmp, every code against NaN, zeros and infinities ------------------------

TEST(InterpFloat, FcmpEveryCode) {
    enum Rel { UN = 1, EQ = 2, LT = 4, GT = 8 };
    const struct {
        FloatCC cc;
        int set;
    } codes[] = {
        {FloatCC::Ord, EQ | LT | GT}, {FloatCC::Uno, UN},           {FloatCC::Eq, EQ},
        {FloatCC::Ueq, UN | EQ},      {FloatCC::One, LT | GT},      {FloatCC::Ne, UN | LT | GT},
        {FloatCC::Lt, LT},            {FloatCC::Ult, UN | LT},      {FloatCC::Le, LT | EQ},
        {FloatCC::Ule, UN | LT | EQ}, {FloatCC::Gt, GT},            {FloatCC::Ugt, UN | GT},
        {FloatCC::Ge, GT | EQ},       {FloatCC::Uge, UN | GT | EQ},
    };
    // Values in increasing order (NaNs apart); equal ranks compare equal.
    const struct {
        uint64_t b32, b64;
        int rank;  // -1: NaN
    } vals[] = {
        {kF32NegInf, kF64NegInf, 0},        {f32b(-1.0f), f64b(-1.0), 1},      {0x8000'0001, 0x8000'0000'0000'0001, 2},
        {kF32NegZero, kF64NegZero, 3},      {0, 0, 3},                          {1, 1, 4},
        {f32b(1.0f), f64b(1.0), 5},         {kF32Inf, kF64Inf, 6},              {kF32CanonNaN, kF64CanonNaN, -1},
        {kF32NegNaN, kF64NegNaN, -1},       {kF32SNaN1, kF64SNaN1, -1},         {kF32QNaN1, kF64QNaN1, -1},
    };
    for (const auto& c : codes) {
        OpEval e32(Opcode::Fcmp, F32, {F32, F32}, uint8_t(c.cc)), e64(Opcode::Fcmp, F64, {F64, F64}, uint8_t(c.cc));
        for (const auto& x : vals) {
            for (const auto& y : vals) {
                int rel = x.rank < 0 || y.rank < 0 ? UN : x.rank == y.rank ? EQ : x.rank < y.rank ? LT : GT;
                uint64_t want = (c.set & rel) != 0;
                EXPECT_EQ(e32({x.b32, y.b32}), want) << floatcc_name(c.cc) << " " << x.b32 << " " << y.b32;
                EXPECT_EQ(e64({x.b64, y.b64}), want) << floatcc_name(c.cc) << " " << x.b64 << " " << y.b64;
            }
        }
    }
}

// --- 10: float <-> float ------------------------------------------------------------

/// double -> float rounded to nearest even, in integers only.
uint32_t ref_demote(uint64_t d) {
    uint32_t sign = static_cast<uint32_t>(d >> 63) << 31;
    int exp = static_cast<int>((d >> 52) & 0x7ff);
    uint64_t frac = d & ((1ULL << 52) - 1);
    if (exp == 0x7ff) return frac ? 0x7fc0'0000 : sign | 0x7f80'0000;
    uint64_t mant = exp ? frac | (1ULL << 52) : frac;  // value = mant * 2^e
    int e = exp ? exp - 1075 : -1074;
    if (mant == 0) return sign;
    int msb = 63 - __builtin_clzll(mant);
    int target_e = std::max(msb + e - 23, -149);  // exponent of the result's unit in the last place
    int shift = target_e - e;
    uint64_t m = mant;
    if (shift > 0) {
        uint64_t rem = shift >= 64 ? mant : mant & ((1ULL << shift) - 1);
        uint64_t half = shift > 64 ? ~0ULL : 1ULL << (shift - 1);
        m = shift >= 64 ? 0 : mant >> shift;
        if (rem > half || (rem == half && (m & 1))) ++m;
    } else {
        m = mant << -shift;
    }
    if (m == (1ULL << 24)) m >>= 1, ++target_e;
    if (m < (1ULL << 23)) return sign | static_cast<uint32_t>(m);  // subnormal (or zero)
    int biased = target_e + 150;
    if (biased >= 255) return sign | 0x7f80'0000;
    return sign | (static_cast<uint32_t>(biased) << 23) | static_cast<uint32_t>(m - (1ULL << 23));
}

TEST(InterpFloat, PromoteDemote) {
    OpEval promote(Opcode::Fpromote, F64, {F32}), demote(Opcode::Fdemote, F32, {F64});
    EXPECT_EQ(demote({0x7fef'ffff'ffff'ffffULL}), kF32Inf);           // 0x1.fffffffffffffp1023 -> +Inf
    EXPECT_EQ(demote({f64b(-0x1.0p-1022)}), kF32NegZero);              // -> -0.0
    EXPECT_EQ(demote({f64b(1.0 + 0x1p-24)}), f32b(1.0f));              // tie -> even
    EXPECT_EQ(demote({f64b(1.0 + 3 * 0x1p-24)}), f32b(1.0f + 0x1p-22f));
    EXPECT_EQ(demote({f64b(0x1.ffffffp127)}), kF32Inf);                // halfway to 2^128 rounds up
    EXPECT_EQ(demote({f64b(0x1.fffffefffffffp127)}), 0x7f7f'ffffULL);
    EXPECT_EQ(demote({f64b(0x1p-149)}), 1ULL);
    EXPECT_EQ(demote({f64b(0x1p-150)}), 0ULL);                         // tie -> even (0)
    EXPECT_EQ(demote({f64b(0x1.8p-149)}), 2ULL);                       // tie -> even (2)
    EXPECT_EQ(demote({kF64NegInf}), kF32NegInf);
    EXPECT_EQ(promote({kF32NegZero}), kF64NegZero);
    EXPECT_EQ(promote({1}), f64b(0x1p-149));
    EXPECT_EQ(promote({kF32Inf}), kF64Inf);
    Rng rng(11);
    for (int i = 0; i < 200000; ++i) {
        uint64_t d = rng.next();
        if (i % 4 == 0) d = (d & 0x800f'ffff'ffff'ffffULL) | (uint64_t(874 + rng.next() % 300) << 52);  // near f32 range
        ASSERT_EQ(demote({d}), ref_demote(d)) << std::hex << d;
        uint64_t f = rng.next() & 0xffff'ffff;
        if (!nan32(f)) {
            ASSERT_EQ(promote({f}), f64b(static_cast<double>(std::bit_cast<float>(uint32_t(f)))));
        }
    }
}

// --- 10: int -> float, rounded once ---------------------------------------------------

/// `mag` (with sign) rounded to nearest even into a float with `p` significand
/// bits (24 or 53) and `frac` fraction bits, in integers only.
uint64_t ref_int_to_float(bool neg, uint64_t mag, int p) {
    int frac = p - 1, bias = p == 24 ? 127 : 1023;
    uint64_t sign = neg ? 1ULL << (p == 24 ? 31 : 63) : 0;
    if (mag == 0) return 0;
    int msb = 63 - __builtin_clzll(mag);
    uint64_t m = mag;
    if (msb >= p) {
        int shift = msb - frac;
        uint64_t rem = mag & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
        m = mag >> shift;
        if (rem > half || (rem == half && (m & 1))) ++m;
        if (m == (1ULL << p)) m >>= 1, ++msb;
    } else {
        m = mag << (frac - msb);
    }
    return sign | (uint64_t(msb + bias) << frac) | (m & ((1ULL << frac) - 1));
}

TEST(InterpFloat, IntToFloatRoundsOnce) {
    OpEval u64f32(Opcode::FcvtFromUint, F32, {I64}), s64f32(Opcode::FcvtFromSint, F32, {I64});
    EXPECT_EQ(s64f32({0x1000'0010'0000'0001ULL}), f32b(0x1.000002p60f));  // not 0x1.0p60 (double rounding)
    EXPECT_EQ(u64f32({0x1000'0010'0000'0001ULL}), f32b(0x1.000002p60f));
    EXPECT_EQ(u64f32({~0ULL}), f32b(0x1.0p64f));
    EXPECT_EQ(OpEval(Opcode::FcvtFromUint, F64, {I32})({0xffff'ffff}), f64b(0x1.fffffffep31));
    EXPECT_EQ(OpEval(Opcode::FcvtFromUint, F32, {I8})({0xff}), f32b(0x1.fep7f));
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F32, {I8})({0xff}), f32b(-1.0f));
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F64, {I16})({uint64_t(-12800) & 0xffff}), f64b(-0x1.9p13));
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F64, {I64})({0}), 0ULL);  // +0.0
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F64, {I64})({1ULL << 63}), f64b(-0x1p63));
    EXPECT_EQ(OpEval(Opcode::FcvtFromUint, F64, {I64})({~0ULL}), f64b(0x1p64));
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F32, {I32})({0x7fff'ffff}), f32b(0x1p31f));
    EXPECT_EQ(OpEval(Opcode::FcvtFromSint, F32, {I32})({0x0100'0003}), f32b(16777220.0f));  // tie up to even

    Rng rng(3);
    for (unsigned bits : {8u, 16u, 32u, 64u}) {
        Type it = Type::int_with_bits(bits);
        uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
        OpEval uf(Opcode::FcvtFromUint, F32, {it}), sf(Opcode::FcvtFromSint, F32, {it});
        OpEval ud(Opcode::FcvtFromUint, F64, {it}), sd(Opcode::FcvtFromSint, F64, {it});
        for (int i = 0; i < 30000; ++i) {
            uint64_t x = rng.edgy(bits) & mask;
            if (i % 3 == 0) x = (rng.next() >> (rng.next() % 64)) & mask;
            int64_t s = bits == 64 ? int64_t(x) : int64_t(x << (64 - bits)) >> (64 - bits);
            uint64_t smag = s < 0 ? 0 - uint64_t(s) : uint64_t(s);
            SCOPED_TRACE("bits " + std::to_string(bits) + " x " + std::to_string(x));
            ASSERT_EQ(uf({x}), ref_int_to_float(false, x, 24));
            ASSERT_EQ(ud({x}), ref_int_to_float(false, x, 53));
            ASSERT_EQ(sf({x}), ref_int_to_float(s < 0, smag, 24));
            ASSERT_EQ(sd({x}), ref_int_to_float(s < 0, smag, 53));
        }
    }
}

// --- 10: float -> int, trapping and saturating ----------------------------------------

struct Cvt {
    Type from, to;
    double x;  // converted to `from` exactly by the test
    bool is_signed;
    uint8_t trap;  // 0: returns `want`
    int64_t want;
};

uint64_t bits_of(Type t, double x) { return t == F32 ? f32b(static_cast<float>(x)) : f64b(x); }

TEST(InterpFloat, FloatToIntExactRangeEdges) {
    const double p31 = 0x1p31, p63 = 0x1p63, p32 = 0x1p32, p64 = 0x1p64;
    const Cvt cases[] = {
        // f32 -> i32: -0x1.0p31 is MIN and fits; 0x1.0p31 does not.
        {F32, I32, -p31, true, 0, INT32_MIN},
        {F32, I32, p31, true, kOvf, 0},
        {F32, I32, 0x1.fffffep30, true, 0, 0x7fff'ff80},
        {F32, I32, -0x1.000002p31, true, kOvf, 0},
        // f64 -> i32: MIN-1 < x < MAX+1.
        {F64, I32, -2147483648.9, true, 0, INT32_MIN},
        {F64, I32, -2147483649.0, true, kOvf, 0},
        {F64, I32, 2147483647.9, true, 0, INT32_MAX},
        {F64, I32, 2147483648.0, true, kOvf, 0},
        // i64 bounds from f32 and f64.
        {F64, I64, -p63, true, 0, INT64_MIN},
        {F64, I64, p63, true, kOvf, 0},
        {F64, I64, 0x1.fffffffffffffp62, true, 0, 0x7fff'ffff'ffff'fc00},
        {F64, I64, -0x1.0000000000001p63, true, kOvf, 0},
        {F32, I64, -p63, true, 0, INT64_MIN},
        {F32, I64, p63, true, kOvf, 0},
        {F32, I64, 0x1.fffffep62, true, 0, 0x7fff'ff80'0000'0000},
        // i8 / i16 targets.
        {F32, I8, 127.9, true, 0, 127},
        {F32, I8, 128.0, true, kOvf, 0},
        {F32, I8, -128.9, true, 0, -128},
        {F32, I8, -129.0, true, kOvf, 0},
        {F32, I8, -0x80.1p0, true, 0, -128},  // -0x80.1 -> i8 -128
        {F64, I8, -0.0625, true, 0, 0},       // -0x0.1 -> 0
        {F64, I16, 32767.99, true, 0, 32767},
        {F64, I16, 32768.0, true, kOvf, 0},
        {F64, I16, -32768.99, true, 0, -32768},
        {F64, I16, -32769.0, true, kOvf, 0},
        // unsigned: -1 < x <= -0.0 gives 0; x <= -1 traps.
        {F32, I32, -0.0625, false, 0, 0},
        {F32, I32, -0.0, false, 0, 0},
        {F64, I32, -0.9999999, false, 0, 0},
        {F64, I32, -1.0, false, kOvf, 0},
        {F64, I32, 4294967295.9, false, 0, 0xffff'ffff},
        {F64, I32, p32, false, kOvf, 0},
        {F64, I64, 0x1.fffffffffffffp63, false, 0, int64_t(0xffff'ffff'ffff'f800)},
        {F64, I64, p64, false, kOvf, 0},
        {F32, I64, 0x1.fffffep63, false, 0, int64_t(0xffff'ff00'0000'0000)},
        {F32, I64, p64, false, kOvf, 0},
        {F32, I8, 255.9, false, 0, 255},
        {F32, I8, 256.0, false, kOvf, 0},
        {F64, I16, 65535.5, false, 0, 65535},
        {F64, I16, 65536.0, false, kOvf, 0},
        // infinities
        {F32, I32, INFINITY, true, kOvf, 0},
        {F64, I64, -INFINITY, true, kOvf, 0},
        {F64, I32, INFINITY, false, kOvf, 0},
    };
    for (const Cvt& c : cases) {
        OpEval e(c.is_signed ? Opcode::FcvtToSint : Opcode::FcvtToUint, c.to, {c.from});
        uint64_t mask = c.to.mask();
        SCOPED_TRACE(std::string(c.from.name()) + " -> " + std::string(c.to.name()) + (c.is_signed ? " s " : " u ") +
                     std::to_string(c.x));
        if (c.trap) {
            EXPECT_EQ(e.trap({bits_of(c.from, c.x)}), c.trap);
        } else {
            EXPECT_EQ(e({bits_of(c.from, c.x)}), uint64_t(c.want) & mask);
        }
    }
    // NaN (either sign, quiet or signalling) -> bad_toint.
    for (bool s : {true, false}) {
        OpEval e32(s ? Opcode::FcvtToSint : Opcode::FcvtToUint, I32, {F32});
        OpEval e64(s ? Opcode::FcvtToSint : Opcode::FcvtToUint, I8, {F64});
        for (uint64_t n : {kF32CanonNaN, kF32NegNaN, kF32SNaN1}) EXPECT_EQ(e32.trap({n}), kBadToInt);
        for (uint64_t n : {kF64CanonNaN, kF64NegNaN, kF64SNaN1}) EXPECT_EQ(e64.trap({n}), kBadToInt);
    }
}

TEST(InterpFloat, FloatToIntSaturating) {
    EXPECT_EQ(OpEval(Opcode::FcvtToSintSat, I8, {F32})({f32b(3000000000.0f)}), 127ULL);  // 0xB2D05E00.0
    EXPECT_EQ(OpEval(Opcode::FcvtToUintSat, I32, {F32})({kF32NegInf}), 0ULL);
    EXPECT_EQ(OpEval(Opcode::FcvtToSintSat, I64, {F32})({0xff7f'ffff}), 0x8000'0000'0000'0000ULL);
    for (Opcode op : {Opcode::FcvtToSintSat, Opcode::FcvtToUintSat}) {
        for (unsigned bits : {8u, 16u, 32u, 64u}) {
            Type t = Type::int_with_bits(bits);
            bool s = op == Opcode::FcvtToSintSat;
            uint64_t mx = s ? (t.mask() >> 1) : t.mask(), mn = s ? (t.mask() >> 1) + 1 : 0;
            OpEval e32(op, t, {F32}), e64(op, t, {F64});
            for (uint64_t n : {kF32CanonNaN, kF32NegNaN, kF32SNaN1}) EXPECT_EQ(e32({n}), 0u);
            for (uint64_t n : {kF64CanonNaN, kF64NegNaN, kF64SNaN1}) EXPECT_EQ(e64({n}), 0u);
            EXPECT_EQ(e32({kF32Inf}), mx);
            EXPECT_EQ(e32({kF32NegInf}), mn);
            EXPECT_EQ(e64({f64b(std::ldexp(1.0, int(bits)))}), mx);
            EXPECT_EQ(e64({f64b(-std::ldexp(1.0, int(bits)))}), mn);
            EXPECT_EQ(e64({f64b(-0.9)}), 0u);
            EXPECT_EQ(e64({f64b(-1.0)}), s ? t.mask() : 0);
            EXPECT_EQ(e32({f32b(100.7f)}), 100u);
        }
    }
    // Randomized against a long double model (exact for every 64-bit integer).
    Rng rng(9);
    OpEval ss(Opcode::FcvtToSintSat, I64, {F64}), us(Opcode::FcvtToUintSat, I64, {F64});
    OpEval st(Opcode::FcvtToSint, I64, {F64}), ut(Opcode::FcvtToUint, I64, {F64});
    for (int i = 0; i < 50000; ++i) {
        uint64_t b = (rng.next() & 0x800f'ffff'ffff'ffffULL) | (uint64_t(1000 + rng.next() % 100) << 52);
        long double t = std::trunc(static_cast<long double>(std::bit_cast<double>(b)));
        const long double lo = -0x1p63L, hi = 0x1p63L, uhi = 0x1p64L;
        uint64_t want_s = t < lo ? 1ULL << 63 : t >= hi ? (1ULL << 63) - 1 : uint64_t(int64_t(t));
        uint64_t want_u = t < 0 ? 0 : t >= uhi ? ~0ULL : uint64_t(t);
        ASSERT_EQ(ss({b}), want_s) << b;
        ASSERT_EQ(us({b}), want_u) << b;
        if (t >= lo && t < hi) {
            ASSERT_EQ(st({b}), want_s);
        } else {
            ASSERT_EQ(st.trap({b}), kOvf);
        }
        if (t > -1 && t < uhi) {
            ASSERT_EQ(ut({b}), want_u);
        } else {
            ASSERT_EQ(ut.trap({b}), kOvf);
        }
    }
}

}  // namespace
}  // namespace heron
