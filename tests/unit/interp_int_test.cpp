// Interpreter integer semantics (ir-reference.md sections 3-10): every
// runtest example the reference quotes, exhaustive checks of the i8 ops over
// all 65,536 operand pairs against straightforward models written with host
// `int` arithmetic, and randomized plus edge-value checks of the wider
// widths against 128-bit models.
#include <gtest/gtest.h>

#include "tests/unit/interp_test_util.h"

namespace heron {
namespace {

using test::OpEval;
using test::Rng;
using namespace types;
using K = InterpOutcome::Kind;

constexpr uint8_t kDivz = TrapCode::kIntegerDivisionByZero;
constexpr uint8_t kOvf = TrapCode::kIntegerOverflow;

uint64_t m(unsigned bits) { return bits >= 64 ? ~0ULL : (1ULL << bits) - 1; }
uint64_t u(int64_t v, unsigned bits) { return static_cast<uint64_t>(v) & m(bits); }
Type itype(unsigned bits) { return Type::int_with_bits(bits); }
std::pair<uint64_t, uint64_t> P(uint64_t a, uint64_t b) { return {a, b}; }

// --- runtest examples quoted in ir-reference.md ---------------------------------

TEST(InterpInt, ReferenceExamplesArithmetic) {
    EXPECT_EQ(OpEval(Opcode::Iabs, I8, {I8})({u(-128, 8)}), u(-128, 8));
    EXPECT_EQ(OpEval(Opcode::Ineg, I32, {I32})({u(INT32_MIN, 32)}), u(INT32_MIN, 32));
    OpEval srem(Opcode::Srem, I32, {I32, I32});
    EXPECT_EQ(srem({u(-7, 32), 2}), u(-1, 32));
    EXPECT_EQ(srem({7, u(-2, 32)}), 1u);
    OpEval sdiv(Opcode::Sdiv, I32, {I32, I32});
    EXPECT_EQ(sdiv({u(-7, 32), 2}), u(-3, 32));
}

TEST(InterpInt, ReferenceExamplesOverflow) {
    EXPECT_EQ(OpEval(Opcode::UaddOverflow, I8, {I8, I8}).two({100, u(-20, 8)}), P(80ULL, 1ULL));
    EXPECT_EQ(OpEval(Opcode::UaddOverflow, I8, {I8, I8}).two({127, 1}), P(u(-128, 8), 0ULL));
    EXPECT_EQ(OpEval(Opcode::SmulOverflow, I32, {I32, I32}).two({0x7fffffff, 2}), P(u(-2, 32), 1ULL));
    EXPECT_EQ(OpEval(Opcode::UmulOverflow, I32, {I32, I32}).two({1, u(-1, 32)}), P(u(-1, 32), 0ULL));
    EXPECT_EQ(OpEval(Opcode::SmulOverflow, I64, {I64, I64}).two({u(-1, 64), 2}), P(u(-2, 64), 0ULL));
    EXPECT_EQ(OpEval(Opcode::UmulOverflow, I8, {I8, I8}).two({16, 16}), P(0ULL, 1ULL));
    EXPECT_EQ(OpEval(Opcode::UaddOverflowCin, I8, {I8, I8, I8}).two({0xff, 0xff, 1}), P(0xffULL, 1ULL));
    EXPECT_EQ(OpEval(Opcode::SaddOverflowCin, I8, {I8, I8, I8}).two({127, 127, 1}), P(0xffULL, 1ULL));
    EXPECT_EQ(OpEval(Opcode::UsubOverflowBin, I8, {I8, I8, I8}).two({0, 1, 10}), P(u(-2, 8), 1ULL));
    EXPECT_EQ(OpEval(Opcode::SsubOverflowBin, I8, {I8, I8, I8}).two({u(-120, 8), 8, 1}), P(127ULL, 1ULL));
    // The exact 3-input rule's corners, where a two-step computation differs.
    EXPECT_EQ(OpEval(Opcode::SaddOverflowCin, I8, {I8, I8, I8}).two({0x80, 0xff, 1}), P(0x80ULL, 0ULL));
    EXPECT_EQ(OpEval(Opcode::SsubOverflowBin, I8, {I8, I8, I8}).two({127, 0xff, 1}), P(127ULL, 0ULL));
    EXPECT_EQ(OpEval(Opcode::SaddOverflowCin, I64, {I64, I64, I8}).two({1ULL << 63, ~0ULL, 1}),
              P(1ULL << 63, 0ULL));
    EXPECT_EQ(OpEval(Opcode::SsubOverflowBin, I64, {I64, I64, I8}).two({(1ULL << 63) - 1, ~0ULL, 1}),
              P((1ULL << 63) - 1, 0ULL));
    // uadd_overflow_cin / usub_overflow_bin at 64 bits: the carry out of the third input.
    EXPECT_EQ(OpEval(Opcode::UaddOverflowCin, I64, {I64, I64, I8}).two({~0ULL, 0, 1}), P(0ULL, 1ULL));
    EXPECT_EQ(OpEval(Opcode::UsubOverflowBin, I64, {I64, I64, I8}).two({0, 0, 0x80}), P(~0ULL, 1ULL));
}

TEST(InterpInt, UaddOverflowTrap) {
    OpEval e32(Opcode::UaddOverflowTrap, I32, {I32, I32}, TrapCode::user(7).byte);
    EXPECT_EQ(e32({0xffff'fffe, 1}), 0xffff'ffffULL);
    EXPECT_EQ(e32.trap({0xffff'ffff, 1}), 7);
    OpEval e64(Opcode::UaddOverflowTrap, I64, {I64, I64}, TrapCode::kHeapOutOfBounds);
    EXPECT_EQ(e64({~0ULL - 5, 5}), ~0ULL);
    EXPECT_EQ(e64.trap({~0ULL, ~0ULL}), TrapCode::kHeapOutOfBounds);
}

TEST(InterpInt, ReferenceExamplesBitwise) {
    EXPECT_EQ(OpEval(Opcode::Bitselect, I8, {I8, I8, I8})({0x55, 0, 0xff}), 0xaaULL);
    EXPECT_EQ(OpEval(Opcode::Bnot, F32, {F32})({test::f32b(1.0f)}), test::f32b(-0x1.fffffep1f));
    EXPECT_EQ(OpEval(Opcode::Band, F32, {F32, F32})({0xffff'ffff, test::f32b(2.0f)}), test::f32b(2.0f));
    EXPECT_EQ(OpEval(Opcode::Bor, F64, {F64, F64})({0x8000'0000'0000'0000, test::f64b(2.0)}), test::f64b(-2.0));
    EXPECT_EQ(OpEval(Opcode::Bnot, I16, {I16})({0x00f0}), 0xff0fULL);
}

TEST(InterpInt, ReferenceExamplesShifts) {
    EXPECT_EQ(OpEval(Opcode::Ishl, I64, {I64, I64})({4, 65}), 8ULL);
    EXPECT_EQ(OpEval(Opcode::Ishl, I8, {I8, I8})({4, 34}), 16ULL);
    EXPECT_EQ(OpEval(Opcode::Ushr, I16, {I16, I16})({0x4000, 17}), 0x2000ULL);
    EXPECT_EQ(OpEval(Opcode::Sshr, I8, {I8, I8})({0xf0, 4}), 0xffULL);
    EXPECT_EQ(OpEval(Opcode::Sshr, I8, {I8, I8})({0x40, 8}), 0x40ULL);
    EXPECT_EQ(OpEval(Opcode::Rotl, I64, {I64, I64})({0xe000'0000'0000'0004ULL, 257}), 0xc000'0000'0000'0009ULL);
    EXPECT_EQ(OpEval(Opcode::Rotr, I8, {I8, I8})({0xe0, 66}), 0x38ULL);
    // i8 by 9 = by 1, by 8 = by 0, by -1 = by 7, with amounts of other widths.
    OpEval ishl8_64(Opcode::Ishl, I8, {I8, I64});
    EXPECT_EQ(ishl8_64({1, 9}), 2ULL);
    EXPECT_EQ(ishl8_64({1, 8}), 1ULL);
    EXPECT_EQ(ishl8_64({1, ~0ULL}), 0x80ULL);
    OpEval ishl64_8(Opcode::Ishl, I64, {I64, I8});
    EXPECT_EQ(ishl64_8({1, 0xff}), 1ULL << 63);
    EXPECT_EQ(ishl64_8({1, 64}), 1ULL);
    OpEval sshr32_16(Opcode::Sshr, I32, {I32, I16});
    EXPECT_EQ(sshr32_16({0x8000'0000, 0xffff}), 0xffff'ffffULL);
    EXPECT_EQ(sshr32_16({0x8000'0000, 32}), 0x8000'0000ULL);
}

TEST(InterpInt, ReferenceExamplesBitCounting) {
    EXPECT_EQ(OpEval(Opcode::Clz, I8, {I8})({0x40}), 1ULL);
    EXPECT_EQ(OpEval(Opcode::Cls, I8, {I8})({1}), 6ULL);
    EXPECT_EQ(OpEval(Opcode::Cls, I8, {I8})({0x40}), 0ULL);
    EXPECT_EQ(OpEval(Opcode::Cls, I64, {I64})({1}), 62ULL);
    EXPECT_EQ(OpEval(Opcode::Ctz, I8, {I8})({0x40}), 6ULL);
    EXPECT_EQ(OpEval(Opcode::Popcnt, I8, {I8})({0xff}), 8ULL);
    EXPECT_EQ(OpEval(Opcode::Bitrev, I8, {I8})({1}), 0x80ULL);
    EXPECT_EQ(OpEval(Opcode::Bitrev, I16, {I16})({16384}), 2ULL);
    EXPECT_EQ(OpEval(Opcode::Bswap, I16, {I16})({u(-2, 16)}), 0xfeffULL);
    EXPECT_EQ(OpEval(Opcode::Bswap, I32, {I32})({0x1234'5678}), 0x7856'3412ULL);
    EXPECT_EQ(OpEval(Opcode::Bswap, I64, {I64})({0x0102'0304'0506'0708ULL}), 0x0807'0605'0403'0201ULL);
    EXPECT_EQ(OpEval(Opcode::Bitrev, I64, {I64})({1}), 1ULL << 63);
    EXPECT_EQ(OpEval(Opcode::Bitrev, I32, {I32})({0x0000'00f1}), 0x8f00'0000ULL);
    for (unsigned bits : {8u, 16u, 32u, 64u}) {
        Type t = itype(bits);
        EXPECT_EQ(OpEval(Opcode::Clz, t, {t})({0}), bits);
        EXPECT_EQ(OpEval(Opcode::Ctz, t, {t})({0}), bits);
        EXPECT_EQ(OpEval(Opcode::Cls, t, {t})({0}), bits - 1);
        EXPECT_EQ(OpEval(Opcode::Cls, t, {t})({m(bits)}), bits - 1);
        EXPECT_EQ(OpEval(Opcode::Clz, t, {t})({m(bits)}), 0u);
        EXPECT_EQ(OpEval(Opcode::Popcnt, t, {t})({m(bits)}), bits);
    }
}

TEST(InterpInt, ReferenceExamplesCompareSelect) {
    // icmp sge against iconst.i8 192 (= -64).
    auto f = test::build_function("f", {I8}, [](FuncCursor& c, const std::vector<Value>& p) {
        Value k = c.ins().iconst(I8, 192);
        return std::vector<Value>{c.ins().icmp(IntCC::Sge, p[0], k)};
    });
    Interpreter interp;
    DataValue a = DataValue::i8(49), b = DataValue::i8(-65);
    EXPECT_EQ(interp.call(*f, std::span(&a, 1)).values.at(0).bits, 1u);
    EXPECT_EQ(interp.call(*f, std::span(&b, 1)).values.at(0).bits, 0u);

    OpEval bmask(Opcode::Bmask, I8, {I64});
    EXPECT_EQ(bmask({0x1000'0000'0000'0000ULL}), 0xffULL);
    EXPECT_EQ(bmask({0}), 0ULL);
    EXPECT_EQ(OpEval(Opcode::Bmask, I64, {I8})({2}), ~0ULL);
    OpEval sel(Opcode::Select, I32, {I8, I32, I32});
    EXPECT_EQ(sel({2, 10, 20}), 10ULL);
    EXPECT_EQ(sel({0xff, 10, 20}), 10ULL);
    EXPECT_EQ(sel({0, 10, 20}), 20ULL);
    OpEval sel64(Opcode::SelectSpectreGuard, I64, {I64, I64, I64});
    EXPECT_EQ(sel64({1ULL << 63, 1, 2}), 1ULL);
    // select copies float bits exactly (an sNaN stays an sNaN).
    EXPECT_EQ(OpEval(Opcode::Select, F32, {I8, F32, F32})({1, 0x7f80'0001, 0}), 0x7f80'0001ULL);
    EXPECT_EQ(OpEval(Opcode::Bitselect, F64, {F64, F64, F64})({0x8000'0000'0000'0000ULL, ~0ULL, 1}),
              0x8000'0000'0000'0001ULL);
}

TEST(InterpInt, ConstantsAndConversions) {
    auto f = test::build_function("k", {}, [](FuncCursor& c, const std::vector<Value>&) {
        return std::vector<Value>{c.ins().iconst(I8, 255), c.ins().iconst(I8, -1), c.ins().iconst(I16, -2),
                                  c.ins().iconst(I64, INT64_MIN)};
    });
    Interpreter interp;
    auto r = interp.call(*f, {});
    ASSERT_EQ(r.kind, K::Return) << r.message;
    EXPECT_EQ(r.values[0], DataValue::i8(-1));
    EXPECT_EQ(r.values[1], DataValue::i8(-1));
    EXPECT_EQ(r.values[2].bits, 0xfffeULL);
    EXPECT_EQ(r.values[3].bits, 1ULL << 63);

    EXPECT_EQ(OpEval(Opcode::Uextend, I64, {I8})({0x80}), 0x80ULL);
    EXPECT_EQ(OpEval(Opcode::Sextend, I64, {I8})({0x80}), 0xffff'ffff'ffff'ff80ULL);
    EXPECT_EQ(OpEval(Opcode::Sextend, I32, {I16})({0x7fff}), 0x7fffULL);
    EXPECT_EQ(OpEval(Opcode::Sextend, I16, {I8})({0xff}), 0xffffULL);
    EXPECT_EQ(OpEval(Opcode::Ireduce, I8, {I64})({0x1234'5678'9abc'def0ULL}), 0xf0ULL);
    EXPECT_EQ(OpEval(Opcode::Ireduce, I32, {I64})({0x1234'5678'9abc'def0ULL}), 0x9abc'def0ULL);
    EXPECT_EQ(OpEval(Opcode::Bitcast, F32, {I32})({0xffff'ffff}), 0xffff'ffffULL);  // -NaN:0x3fffff
    EXPECT_EQ(OpEval(Opcode::Bitcast, I64, {F64})({0x7ff0'0000'0000'0001ULL}), 0x7ff0'0000'0000'0001ULL);
}

TEST(InterpInt, MinDivMinusOneInEveryWidth) {
    for (unsigned bits : {8u, 16u, 32u, 64u}) {
        Type t = itype(bits);
        uint64_t min = 1ULL << (bits - 1), neg1 = m(bits);
        OpEval sdiv(Opcode::Sdiv, t, {t, t}), srem(Opcode::Srem, t, {t, t});
        OpEval udiv(Opcode::Udiv, t, {t, t}), urem(Opcode::Urem, t, {t, t});
        EXPECT_EQ(sdiv.trap({min, neg1}), kOvf) << bits;
        EXPECT_EQ(srem({min, neg1}), 0u) << bits;
        EXPECT_EQ(srem({5, neg1}), 0u) << bits;
        EXPECT_EQ(sdiv({min, 1}), min) << bits;
        EXPECT_EQ(sdiv({neg1, neg1}), 1u) << bits;
        EXPECT_EQ(sdiv({min, 2}), u(-static_cast<int64_t>(min >> 1), bits)) << bits;
        EXPECT_EQ(udiv({min, neg1}), 0u) << bits;
        EXPECT_EQ(urem({min, neg1}), min) << bits;
        for (OpEval* e : {&sdiv, &srem, &udiv, &urem}) {
            EXPECT_EQ(e->trap({min, 0}), kDivz) << bits;
            EXPECT_EQ(e->trap({0, 0}), kDivz) << bits;
        }
    }
}

// --- exhaustive i8: every operand pair against a model in host `int` --------------

struct Model {
    uint8_t trap = 0;
    std::vector<uint64_t> vals;
};
using Model8 = Model (*)(int x, int y, int sx, int sy);  // u(x), u(y), s(x), s(y)

Model one(int v) { return {0, {static_cast<uint64_t>(v & 0xff)}}; }
Model two(int v, bool flag) { return {0, {static_cast<uint64_t>(v & 0xff), flag ? 1ULL : 0ULL}}; }
Model trapped(uint8_t code) { return {code, {}}; }
bool out_s8(int v) { return v < -128 || v > 127; }
int rot_l8(int x, int k) { return k == 0 ? x : ((x << k) | (x >> (8 - k))) & 0xff; }

void check_all_pairs(const char* what, Opcode op, Model8 model, Type amount = I8) {
    OpEval e(op, I8, {I8, amount});
    int failures = 0;
    for (int x = 0; x < 256; ++x) {
        for (int y = 0; y < 256; ++y) {
            Model want = model(x, y, static_cast<int8_t>(x), static_cast<int8_t>(y));
            InterpOutcome got = e.run({static_cast<uint64_t>(x), static_cast<uint64_t>(y)});
            bool ok = want.trap ? got.kind == K::Trap && got.trap.byte == want.trap
                                : got.kind == K::Return && got.values.size() == want.vals.size();
            for (size_t i = 0; ok && !want.trap && i < want.vals.size(); ++i) ok = got.values[i].bits == want.vals[i];
            if (!ok && ++failures <= 5) {
                ADD_FAILURE() << what << "(" << x << ", " << y << "): got "
                              << (got.kind == K::Return && !got.values.empty() ? std::to_string(got.values[0].bits)
                                                                                : got.message)
                              << ", want " << (want.trap ? "trap" : std::to_string(want.vals.at(0)));
            }
        }
    }
    EXPECT_EQ(failures, 0) << what;
}

TEST(InterpInt, ExhaustiveI8Arithmetic) {
    check_all_pairs("iadd", Opcode::Iadd, [](int x, int y, int, int) { return one(x + y); });
    check_all_pairs("isub", Opcode::Isub, [](int x, int y, int, int) { return one(x - y); });
    check_all_pairs("imul", Opcode::Imul, [](int x, int y, int, int) { return one(x * y); });
    check_all_pairs("umulhi", Opcode::Umulhi, [](int x, int y, int, int) { return one((x * y) >> 8); });
    check_all_pairs("smulhi", Opcode::Smulhi, [](int, int, int a, int b) { return one((a * b) >> 8); });
    check_all_pairs("udiv", Opcode::Udiv,
                    [](int x, int y, int, int) { return y == 0 ? trapped(kDivz) : one(x / y); });
    check_all_pairs("urem", Opcode::Urem,
                    [](int x, int y, int, int) { return y == 0 ? trapped(kDivz) : one(x % y); });
    check_all_pairs("sdiv", Opcode::Sdiv, [](int, int, int a, int b) {
        if (b == 0) return trapped(kDivz);
        if (a == -128 && b == -1) return trapped(kOvf);
        return one(a / b);
    });
    check_all_pairs("srem", Opcode::Srem, [](int, int, int a, int b) { return b == 0 ? trapped(kDivz) : one(a % b); });
    check_all_pairs("smin", Opcode::Smin, [](int, int, int a, int b) { return one(a < b ? a : b); });
    check_all_pairs("smax", Opcode::Smax, [](int, int, int a, int b) { return one(a > b ? a : b); });
    check_all_pairs("umin", Opcode::Umin, [](int x, int y, int, int) { return one(x < y ? x : y); });
    check_all_pairs("umax", Opcode::Umax, [](int x, int y, int, int) { return one(x > y ? x : y); });
    check_all_pairs("band", Opcode::Band, [](int x, int y, int, int) { return one(x & y); });
    check_all_pairs("bor", Opcode::Bor, [](int x, int y, int, int) { return one(x | y); });
    check_all_pairs("bxor", Opcode::Bxor, [](int x, int y, int, int) { return one(x ^ y); });
}

TEST(InterpInt, ExhaustiveI8ShiftsAndRotates) {
    check_all_pairs("ishl", Opcode::Ishl, [](int x, int y, int, int) { return one(x << (y % 8)); });
    check_all_pairs("ushr", Opcode::Ushr, [](int x, int y, int, int) { return one(x >> (y % 8)); });
    check_all_pairs("sshr", Opcode::Sshr, [](int, int y, int a, int) { return one(a >> (y % 8)); });
    check_all_pairs("rotl", Opcode::Rotl, [](int x, int y, int, int) { return one(rot_l8(x, y % 8)); });
    check_all_pairs("rotr", Opcode::Rotr, [](int x, int y, int, int) { return one(rot_l8(x, (8 - y % 8) % 8)); });
    // An i64 amount whose low bits are y: only y mod 8 matters.
    check_all_pairs("ishl/i64 amount", Opcode::Ishl, [](int x, int y, int, int) { return one(x << (y % 8)); }, I64);
}

TEST(InterpInt, ExhaustiveI8OverflowFlags) {
    check_all_pairs("uadd_overflow", Opcode::UaddOverflow, [](int x, int y, int, int) { return two(x + y, x + y > 255); });
    check_all_pairs("sadd_overflow", Opcode::SaddOverflow, [](int, int, int a, int b) { return two(a + b, out_s8(a + b)); });
    check_all_pairs("usub_overflow", Opcode::UsubOverflow, [](int x, int y, int, int) { return two(x - y, x < y); });
    check_all_pairs("ssub_overflow", Opcode::SsubOverflow, [](int, int, int a, int b) { return two(a - b, out_s8(a - b)); });
    check_all_pairs("umul_overflow", Opcode::UmulOverflow, [](int x, int y, int, int) { return two(x * y, x * y > 255); });
    check_all_pairs("smul_overflow", Opcode::SmulOverflow, [](int, int, int a, int b) { return two(a * b, out_s8(a * b)); });
}

TEST(InterpInt, ExhaustiveI8CarryChains) {
    OpEval uadd(Opcode::UaddOverflowCin, I8, {I8, I8, I8}), sadd(Opcode::SaddOverflowCin, I8, {I8, I8, I8});
    OpEval usub(Opcode::UsubOverflowBin, I8, {I8, I8, I8}), ssub(Opcode::SsubOverflowBin, I8, {I8, I8, I8});
    int failures = 0;
    for (int cin : {0, 1, 10, 0x80, 0xff}) {
        int c = cin != 0;
        for (int x = 0; x < 256; ++x) {
            for (int y = 0; y < 256; ++y) {
                int a = static_cast<int8_t>(x), b = static_cast<int8_t>(y);
                std::vector<uint64_t> in = {uint64_t(x), uint64_t(y), uint64_t(cin)};
                auto want = [](int v, bool f) { return P(uint64_t(v & 0xff), uint64_t(f)); };
                failures += uadd.two(in) != want(x + y + c, x + y + c > 255);
                failures += sadd.two(in) != want(a + b + c, out_s8(a + b + c));
                failures += usub.two(in) != want(x - y - c, x - y - c < 0);
                failures += ssub.two(in) != want(a - b - c, out_s8(a - b - c));
            }
        }
    }
    EXPECT_EQ(failures, 0);
}

TEST(InterpInt, ExhaustiveI8Icmp) {
    struct {
        IntCC cc;
        bool (*holds)(int x, int y, int a, int b);
    } cases[] = {
        {IntCC::Eq, [](int x, int y, int, int) { return x == y; }},
        {IntCC::Ne, [](int x, int y, int, int) { return x != y; }},
        {IntCC::Slt, [](int, int, int a, int b) { return a < b; }},
        {IntCC::Sle, [](int, int, int a, int b) { return a <= b; }},
        {IntCC::Sgt, [](int, int, int a, int b) { return a > b; }},
        {IntCC::Sge, [](int, int, int a, int b) { return a >= b; }},
        {IntCC::Ult, [](int x, int y, int, int) { return x < y; }},
        {IntCC::Ule, [](int x, int y, int, int) { return x <= y; }},
        {IntCC::Ugt, [](int x, int y, int, int) { return x > y; }},
        {IntCC::Uge, [](int x, int y, int, int) { return x >= y; }},
    };
    for (const auto& tc : cases) {
        OpEval e(Opcode::Icmp, I8, {I8, I8}, static_cast<uint8_t>(tc.cc));
        int failures = 0;
        for (int x = 0; x < 256; ++x) {
            for (int y = 0; y < 256; ++y) {
                bool want = tc.holds(x, y, static_cast<int8_t>(x), static_cast<int8_t>(y));
                failures += e({uint64_t(x), uint64_t(y)}) != uint64_t(want);
            }
        }
        EXPECT_EQ(failures, 0) << intcc_name(tc.cc);
    }
}

TEST(InterpInt, ExhaustiveI8Unary) {
    OpEval clz(Opcode::Clz, I8, {I8}), cls(Opcode::Cls, I8, {I8}), ctz(Opcode::Ctz, I8, {I8});
    OpEval pop(Opcode::Popcnt, I8, {I8}), rev(Opcode::Bitrev, I8, {I8}), neg(Opcode::Ineg, I8, {I8});
    OpEval abs(Opcode::Iabs, I8, {I8}), bnot(Opcode::Bnot, I8, {I8});
    OpEval sext16(Opcode::Sextend, I16, {I8}), bmask(Opcode::Bmask, I32, {I8});
    for (int x = 0; x < 256; ++x) {
        int s = static_cast<int8_t>(x);
        int lead = 0, trail = 0, ones = 0, same = 0, r = 0;
        while (lead < 8 && !(x & (0x80 >> lead))) ++lead;
        while (trail < 8 && !(x & (1 << trail))) ++trail;
        for (int i = 0; i < 8; ++i) ones += (x >> i) & 1, r |= ((x >> i) & 1) << (7 - i);
        while (same < 7 && (((x >> (6 - same)) & 1) == ((x >> 7) & 1))) ++same;
        uint64_t ux = uint64_t(x);
        EXPECT_EQ(clz({ux}), uint64_t(lead)) << x;
        EXPECT_EQ(ctz({ux}), uint64_t(trail)) << x;
        EXPECT_EQ(pop({ux}), uint64_t(ones)) << x;
        EXPECT_EQ(cls({ux}), uint64_t(same)) << x;
        EXPECT_EQ(rev({ux}), uint64_t(r)) << x;
        EXPECT_EQ(neg({ux}), uint64_t(-x & 0xff)) << x;
        EXPECT_EQ(abs({ux}), uint64_t((s < 0 ? -s : s) & 0xff)) << x;
        EXPECT_EQ(bnot({ux}), uint64_t(~x & 0xff)) << x;
        EXPECT_EQ(sext16({ux}), uint64_t(s & 0xffff)) << x;
        EXPECT_EQ(bmask({ux}), x ? 0xffff'ffffULL : 0ULL) << x;
    }
}

// --- wider widths: random and edge operands against 128-bit models --------------

__extension__ typedef __int128 I128;
int64_t sx(uint64_t v, unsigned bits) {
    return bits == 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}
bool fits(I128 v, unsigned bits) {
    I128 lo = -(I128(1) << (bits - 1)), hi = (I128(1) << (bits - 1)) - 1;
    return v >= lo && v <= hi;
}

TEST(InterpInt, RandomWideBinaryOps) {
    Rng rng(42);
    for (unsigned bits : {16u, 32u, 64u}) {
        Type t = itype(bits);
        const uint64_t M = m(bits);
        OpEval add(Opcode::Iadd, t, {t, t}), sub(Opcode::Isub, t, {t, t}), mul(Opcode::Imul, t, {t, t});
        OpEval umulhi(Opcode::Umulhi, t, {t, t}), smulhi(Opcode::Smulhi, t, {t, t});
        OpEval udiv(Opcode::Udiv, t, {t, t}), sdiv(Opcode::Sdiv, t, {t, t});
        OpEval urem(Opcode::Urem, t, {t, t}), srem(Opcode::Srem, t, {t, t});
        OpEval sadd(Opcode::SaddOverflow, t, {t, t}), ssub(Opcode::SsubOverflow, t, {t, t});
        OpEval smul(Opcode::SmulOverflow, t, {t, t}), umul(Opcode::UmulOverflow, t, {t, t});
        OpEval uadd(Opcode::UaddOverflow, t, {t, t});
        OpEval ishl(Opcode::Ishl, t, {t, I32}), ushr(Opcode::Ushr, t, {t, I32}), sshr(Opcode::Sshr, t, {t, I32});
        OpEval rotl(Opcode::Rotl, t, {t, I32}), rotr(Opcode::Rotr, t, {t, I32});
        for (int iter = 0; iter < 20000; ++iter) {
            uint64_t x = rng.edgy(bits), y = rng.edgy(bits);
            I128 a = sx(x, bits), b = sx(y, bits);
            unsigned __int128 ux = x, uy = y;
            SCOPED_TRACE("bits " + std::to_string(bits) + " x " + std::to_string(x) + " y " + std::to_string(y));
            ASSERT_EQ(add({x, y}), (x + y) & M);
            ASSERT_EQ(sub({x, y}), (x - y) & M);
            ASSERT_EQ(mul({x, y}), uint64_t(ux * uy) & M);
            ASSERT_EQ(umulhi({x, y}), uint64_t((ux * uy) >> bits) & M);
            ASSERT_EQ(smulhi({x, y}), uint64_t(static_cast<unsigned __int128>(a * b) >> bits) & M);
            ASSERT_EQ(uadd.two({x, y}), P((x + y) & M, uint64_t(ux + uy > M)));
            ASSERT_EQ(sadd.two({x, y}), P((x + y) & M, uint64_t(!fits(a + b, bits))));
            ASSERT_EQ(ssub.two({x, y}), P((x - y) & M, uint64_t(!fits(a - b, bits))));
            ASSERT_EQ(smul.two({x, y}), P(uint64_t(ux * uy) & M, uint64_t(!fits(a * b, bits))));
            ASSERT_EQ(umul.two({x, y}), P(uint64_t(ux * uy) & M, uint64_t(ux * uy > M)));
            if (y == 0) {
                ASSERT_EQ(udiv.trap({x, y}), kDivz);
                ASSERT_EQ(srem.trap({x, y}), kDivz);
            } else {
                ASSERT_EQ(udiv({x, y}), x / y);
                ASSERT_EQ(urem({x, y}), x % y);
                if (b == -1 && a == -(I128(1) << (bits - 1))) {
                    ASSERT_EQ(sdiv.trap({x, y}), kOvf);
                } else {
                    ASSERT_EQ(sdiv({x, y}), uint64_t(a / b) & M);
                }
                ASSERT_EQ(srem({x, y}), uint64_t(a % b) & M);
            }
            uint64_t k = rng.next() & 0xffff'ffff;  // any 32-bit amount, incl. >= width and negative
            unsigned kk = static_cast<unsigned>(k % bits);
            ASSERT_EQ(ishl({x, k}), uint64_t(ux << kk) & M);
            ASSERT_EQ(ushr({x, k}), x >> kk);
            ASSERT_EQ(sshr({x, k}), uint64_t(a >> kk) & M);
            uint64_t rl = kk == 0 ? x : (uint64_t(ux << kk) | (x >> (bits - kk))) & M;
            uint64_t rr = kk == 0 ? x : ((x >> kk) | uint64_t(ux << (bits - kk))) & M;
            ASSERT_EQ(rotl({x, k}), rl);
            ASSERT_EQ(rotr({x, k}), rr);
        }
    }
}

TEST(InterpInt, RandomWideCarryChainsAndCompares) {
    Rng rng(7);
    for (unsigned bits : {16u, 32u, 64u}) {
        Type t = itype(bits);
        const uint64_t M = m(bits);
        OpEval uadd(Opcode::UaddOverflowCin, t, {t, t, I8}), sadd(Opcode::SaddOverflowCin, t, {t, t, I8});
        OpEval usub(Opcode::UsubOverflowBin, t, {t, t, I8}), ssub(Opcode::SsubOverflowBin, t, {t, t, I8});
        OpEval slt(Opcode::Icmp, t, {t, t}, uint8_t(IntCC::Slt)), ule(Opcode::Icmp, t, {t, t}, uint8_t(IntCC::Ule));
        OpEval smin(Opcode::Smin, t, {t, t}), umax(Opcode::Umax, t, {t, t});
        for (int iter = 0; iter < 20000; ++iter) {
            uint64_t x = rng.edgy(bits), y = rng.edgy(bits), cin = rng.next() % 4 == 0 ? 0 : rng.next() & 0xff;
            I128 a = sx(x, bits), b = sx(y, bits), c = cin != 0;
            unsigned __int128 ux = x, uy = y;
            SCOPED_TRACE("bits " + std::to_string(bits) + " x " + std::to_string(x) + " y " + std::to_string(y));
            ASSERT_EQ(uadd.two({x, y, cin}), P(uint64_t(ux + uy + c) & M, uint64_t(ux + uy + c > M)));
            ASSERT_EQ(sadd.two({x, y, cin}), P(uint64_t(ux + uy + c) & M, uint64_t(!fits(a + b + c, bits))));
            ASSERT_EQ(usub.two({x, y, cin}), P(uint64_t(ux - uy - c) & M, uint64_t(I128(x) - I128(y) - c < 0)));
            ASSERT_EQ(ssub.two({x, y, cin}), P(uint64_t(ux - uy - c) & M, uint64_t(!fits(a - b - c, bits))));
            ASSERT_EQ(slt({x, y}), uint64_t(a < b));
            ASSERT_EQ(ule({x, y}), uint64_t(x <= y));
            ASSERT_EQ(smin({x, y}), a < b ? x : y);
            ASSERT_EQ(umax({x, y}), x > y ? x : y);
        }
    }
}

}  // namespace
}  // namespace heron
