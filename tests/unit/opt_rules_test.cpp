// The mid-end's rules against the reference interpreter (docs/optimizer.md):
//   - constant folding (fold.def) gives what the interpreter computes for
//     every integer opcode on every pair of i8 operands, on random operands
//     at i16..i64, and bit for bit on floats (NaN payloads, signed zeros,
//     rounding);
//   - every rewrite rule (rules.def), on functions built to trigger it,
//     leaves a function the interpreter runs to the same results as the
//     unoptimized one: exhaustively at i8, at random at i16..i64, and each
//     rule must actually fire somewhere;
//   - random modules: the optimized JIT, the unoptimized JIT and the
//     interpreter agree, traps included.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/opt/fold.h"
#include "codegen/opt/pass_manager.h"
#include "interp_test_util.h"

namespace heron::test {
namespace {

constexpr unsigned kWidths[] = {8, 16, 32, 64};

struct OpCase {
    Opcode op;
    unsigned arity;     // value operands
    uint8_t code = 0;   // icmp condition
};

/// Integer opcodes with 1..3 operands of the controlling type.
std::vector<OpCase> integer_cases() {
    std::vector<OpCase> v;
    for (Opcode op : {Opcode::Iadd, Opcode::Isub, Opcode::Imul, Opcode::Umulhi, Opcode::Smulhi, Opcode::Udiv,
                      Opcode::Sdiv, Opcode::Urem, Opcode::Srem, Opcode::Smin, Opcode::Smax, Opcode::Umin,
                      Opcode::Umax, Opcode::Band, Opcode::Bor, Opcode::Bxor, Opcode::Ishl, Opcode::Ushr,
                      Opcode::Sshr, Opcode::Rotl, Opcode::Rotr, Opcode::UaddOverflow, Opcode::SaddOverflow,
                      Opcode::UsubOverflow, Opcode::SsubOverflow, Opcode::UmulOverflow, Opcode::SmulOverflow})
        v.push_back({op, 2});
    for (unsigned cc = 0; cc < kNumIntCC; ++cc) v.push_back({Opcode::Icmp, 2, static_cast<uint8_t>(cc)});
    for (Opcode op : {Opcode::Ineg, Opcode::Iabs, Opcode::Bnot, Opcode::Clz, Opcode::Cls, Opcode::Ctz,
                      Opcode::Popcnt, Opcode::Bitrev})
        v.push_back({op, 1});
    for (Opcode op : {Opcode::Select, Opcode::Bitselect, Opcode::UaddOverflowCin, Opcode::SaddOverflowCin,
                      Opcode::UsubOverflowBin, Opcode::SsubOverflowBin})
        v.push_back({op, 3});
    return v;
}

/// fold_constants on `k` against the interpreter running `op` on `k`:
/// the same results, or no fold where the interpreter traps.
void expect_fold_matches(OpEval& eval, const OpCase& c, unsigned bits, const std::vector<uint64_t>& k) {
    FoldInput in{c.op, c.code, bits, bits, {}};
    for (size_t i = 0; i < k.size(); ++i) in.k[i] = k[i];
    uint64_t out[2] = {};
    const unsigned n = fold_constants(in, out);
    InterpOutcome r = eval.run(k);
    if (r.kind == InterpOutcome::Kind::Trap) {
        EXPECT_EQ(n, 0u) << opcode_name(c.op) << " folded a trapping case";
        return;
    }
    ASSERT_EQ(r.kind, InterpOutcome::Kind::Return) << r.message;
    ASSERT_EQ(n, r.values.size()) << opcode_name(c.op);
    for (unsigned i = 0; i < n; ++i) {
        if (out[i] != r.values[i].bits) {
            ADD_FAILURE() << opcode_name(c.op) << "." << bits << " cc " << int(c.code) << " on " << k[0] << ", "
                          << (k.size() > 1 ? k[1] : 0) << ": fold " << out[i] << ", interpreter " << r.values[i].bits;
            return;
        }
    }
}

TEST(OptFold, IntegerFoldsMatchTheInterpreter) {
    Rng rng(7);
    for (const OpCase& c : integer_cases()) {
        for (unsigned bits : kWidths) {
            const Type t = Type::int_with_bits(bits);
            std::vector<Type> params(c.arity, t);
            OpEval eval(c.op, t, params, c.code);
            if (bits == 8 && c.arity <= 2) {
                // Every operand (pair) at i8.
                for (uint64_t a = 0; a < 256; ++a) {
                    if (c.arity == 1) {
                        expect_fold_matches(eval, c, bits, {a});
                        continue;
                    }
                    for (uint64_t b = 0; b < 256; ++b) expect_fold_matches(eval, c, bits, {a, b});
                }
                continue;
            }
            const int n = bits == 8 ? 20000 : 2000;
            for (int i = 0; i < n; ++i) {
                std::vector<uint64_t> k;
                for (unsigned j = 0; j < c.arity; ++j) k.push_back(rng.edgy(bits));
                if (c.arity == 3 && c.op != Opcode::Select && c.op != Opcode::Bitselect) k[2] &= 1;
                expect_fold_matches(eval, c, bits, k);
            }
        }
    }
    // Bit counting, bmask and extensions between every pair of widths.
    for (unsigned bits : {16u, 32u, 64u}) {
        const Type t = Type::int_with_bits(bits);
        OpEval eval(Opcode::Bswap, t, {t});
        for (int i = 0; i < 2000; ++i) expect_fold_matches(eval, {Opcode::Bswap, 1}, bits, {rng.edgy(bits)});
    }
    for (unsigned from : kWidths) {
        for (unsigned to : kWidths) {
            const Type ft = Type::int_with_bits(from), tt = Type::int_with_bits(to);
            std::vector<Opcode> ops = {Opcode::Bmask};
            if (to > from) ops.insert(ops.end(), {Opcode::Uextend, Opcode::Sextend});
            if (to < from) ops.push_back(Opcode::Ireduce);
            for (Opcode op : ops) {
                OpEval eval(op, tt, {ft});
                for (int i = 0; i < (from == 8 ? 256 : 2000); ++i) {
                    const uint64_t a = from == 8 ? static_cast<uint64_t>(i) : rng.edgy(from);
                    FoldInput in{op, 0, to, from, {a}};
                    uint64_t out[2];
                    ASSERT_EQ(fold_constants(in, out), 1u);
                    ASSERT_EQ(out[0], eval({a})) << opcode_name(op) << " " << from << "->" << to << " of " << a;
                }
            }
        }
    }
}

/// Float bit patterns that matter: NaNs with payloads and both signs, both
/// zeros, infinities, subnormals, halfway cases, and random ones.
uint64_t edgy_float(Rng& rng, bool f64) {
    static const uint64_t k32[] = {0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa5a5a5, 0x80000000, 0,
                                   0x7f800000, 0xff800000, 0x00000001, 0x807fffff, 0x3f000000, 0x3fc00000,
                                   0x4b000001, 0x3f800001, 0x4f000000, 0xcf000001};
    static const uint64_t k64[] = {0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001,
                                   0x7ff4a5a5a5a5a5a5, 0x8000000000000000, 0, 0x7ff0000000000000,
                                   0xfff0000000000000, 1, 0x800fffffffffffff, 0x3fe0000000000000,
                                   0x3ff8000000000000, 0x4330000000000001, 0x43e0000000000000,
                                   0xc3e0000000000001, 0x41dfffffffc00000};
    const uint64_t r = rng.next();
    if (r % 3 == 0) return f64 ? k64[(r >> 8) % 16] : k32[(r >> 8) % 16];
    return f64 ? rng.next() : rng.next() & 0xffffffff;
}

TEST(OptFold, FloatFoldsMatchTheInterpreterBitForBit) {
    Rng rng(11);
    for (bool f64 : {false, true}) {
        const Type t = f64 ? types::F64 : types::F32;
        const unsigned fb = t.bits();
        struct F {
            Opcode op;
            unsigned arity;
            uint8_t code;
        };
        std::vector<F> cases;
        for (Opcode op : {Opcode::Fadd, Opcode::Fsub, Opcode::Fmul, Opcode::Fdiv, Opcode::Fcopysign, Opcode::Fmin,
                          Opcode::Fmax})
            cases.push_back({op, 2, 0});
        for (Opcode op : {Opcode::Sqrt, Opcode::Fneg, Opcode::Fabs, Opcode::Ceil, Opcode::Floor, Opcode::Trunc,
                          Opcode::Nearest})
            cases.push_back({op, 1, 0});
        cases.push_back({Opcode::Fma, 3, 0});
        for (unsigned cc = 0; cc < kNumFloatCC; ++cc) cases.push_back({Opcode::Fcmp, 2, static_cast<uint8_t>(cc)});
        for (const F& c : cases) {
            OpEval eval(c.op, t, std::vector<Type>(c.arity, t), c.code);
            for (int i = 0; i < 3000; ++i) {
                std::vector<uint64_t> k;
                for (unsigned j = 0; j < c.arity; ++j) k.push_back(edgy_float(rng, f64));
                FoldInput in{c.op, c.code, fb, fb, {}};
                for (unsigned j = 0; j < c.arity; ++j) in.k[j] = k[j];
                uint64_t out[2];
                ASSERT_EQ(fold_constants(in, out), 1u);
                ASSERT_EQ(out[0], eval(k)) << opcode_name(c.op) << "." << t.name() << " on " << std::hex << k[0];
            }
        }
        // Conversions to and from every integer width, and between floats.
        for (unsigned bits : kWidths) {
            const Type it = Type::int_with_bits(bits);
            for (Opcode op : {Opcode::FcvtToUint, Opcode::FcvtToSint, Opcode::FcvtToUintSat, Opcode::FcvtToSintSat}) {
                OpEval eval(op, it, {t});
                for (int i = 0; i < 2000; ++i) {
                    const uint64_t a = edgy_float(rng, f64);
                    FoldInput in{op, 0, bits, fb, {a}};
                    uint64_t out[2];
                    const unsigned n = fold_constants(in, out);
                    const uint8_t trap = eval.trap({a});
                    if (trap) {
                        EXPECT_EQ(n, 0u);
                        continue;
                    }
                    ASSERT_EQ(n, 1u);
                    ASSERT_EQ(out[0], eval({a})) << opcode_name(op) << " " << std::hex << a;
                }
            }
            for (Opcode op : {Opcode::FcvtFromUint, Opcode::FcvtFromSint}) {
                OpEval eval(op, t, {it});
                for (int i = 0; i < 2000; ++i) {
                    const uint64_t a = rng.edgy(bits);
                    FoldInput in{op, 0, fb, bits, {a}};
                    uint64_t out[2];
                    ASSERT_EQ(fold_constants(in, out), 1u);
                    ASSERT_EQ(out[0], eval({a})) << opcode_name(op) << " " << a;
                }
            }
        }
        const Opcode conv = f64 ? Opcode::Fdemote : Opcode::Fpromote;
        OpEval eval(conv, f64 ? types::F32 : types::F64, {t});
        for (int i = 0; i < 3000; ++i) {
            const uint64_t a = edgy_float(rng, f64);
            FoldInput in{conv, 0, f64 ? 32u : 64u, fb, {a}};
            uint64_t out[2];
            ASSERT_EQ(fold_constants(in, out), 1u);
            ASSERT_EQ(out[0], eval({a})) << opcode_name(conv) << " " << std::hex << a;
        }
    }
}

// --- the rules -----------------------------------------------------------

/// Builds a function of two parameters x, y of type t from constants c1, c2.
using Template = std::function<std::vector<Value>(FuncCursor&, Type t, Value x, Value y, uint64_t c1, uint64_t c2)>;

struct RuleCase {
    std::string name;
    Template body;
    bool uses_y = false;   // results depend on y: y takes every value too at i8
    bool uses_c2 = false;  // a second constant (chains): sampled, not exhaustive
    bool uses_c1 = true;   // false: no constant, one function
    unsigned max_bits = 64;
};

Value k(FuncCursor& c, Type t, uint64_t v) { return c.ins().iconst(t, static_cast<int64_t>(v & t.mask())); }
Value op2(FuncCursor& c, Opcode op, Type t, Value a, Value b, uint8_t code = 0) { return emit(c, op, t, {a, b}, code)[0]; }
Value op1(FuncCursor& c, Opcode op, Type t, Value a) { return emit(c, op, t, {a})[0]; }

std::vector<RuleCase> rule_cases() {
    std::vector<RuleCase> v;
    // Each form with the opcodes that have a rule for it (every case must fire).
    const Opcode with_constant[] = {Opcode::Iadd, Opcode::Isub, Opcode::Imul, Opcode::Udiv, Opcode::Sdiv,
                                    Opcode::Urem, Opcode::Srem, Opcode::Band, Opcode::Bor, Opcode::Bxor,
                                    Opcode::Ishl, Opcode::Ushr, Opcode::Sshr, Opcode::Rotl, Opcode::Rotr,
                                    Opcode::Umin, Opcode::Umax};
    const Opcode constant_first[] = {Opcode::Iadd, Opcode::Isub, Opcode::Imul, Opcode::Band, Opcode::Bor,
                                     Opcode::Bxor, Opcode::Ishl, Opcode::Ushr, Opcode::Sshr, Opcode::Rotl,
                                     Opcode::Rotr, Opcode::Umin, Opcode::Umax, Opcode::Smin, Opcode::Smax};
    const Opcode self[] = {Opcode::Isub, Opcode::Band, Opcode::Bor, Opcode::Bxor,
                           Opcode::Smin, Opcode::Smax, Opcode::Umin, Opcode::Umax};
    // x op c: identities with a constant, strength reduction, shift amounts.
    for (Opcode op : with_constant) {
        v.push_back({std::string(opcode_name(op)) + " x, c",
                     [op](FuncCursor& c, Type t, Value x, Value, uint64_t c1, uint64_t) {
                         return std::vector<Value>{op2(c, op, t, x, k(c, t, c1))};
                     }});
    }
    // c op x: constants move last (commutative ops), 0 - y, 0 << y, ...
    for (Opcode op : constant_first) {
        v.push_back({std::string(opcode_name(op)) + " c, x",
                     [op](FuncCursor& c, Type t, Value x, Value, uint64_t c1, uint64_t) {
                         return std::vector<Value>{op2(c, op, t, k(c, t, c1), x)};
                     }});
    }
    for (Opcode op : self) {
        v.push_back({std::string(opcode_name(op)) + " x, x",
                     [op](FuncCursor& c, Type t, Value x, Value, uint64_t, uint64_t) {
                         return std::vector<Value>{op2(c, op, t, x, x)};
                     },
                     false, false, false});
    }
    for (unsigned cc = 0; cc < kNumIntCC; ++cc) {
        const std::string n = "icmp " + std::string(intcc_name(static_cast<IntCC>(cc)));
        const uint8_t code = static_cast<uint8_t>(cc);
        v.push_back({n + " x, x",
                     [code](FuncCursor& c, Type t, Value x, Value, uint64_t, uint64_t) {
                         return std::vector<Value>{op2(c, Opcode::Icmp, t, x, x, code)};
                     },
                     false, false, false});
        v.push_back({n + " c, x", [code](FuncCursor& c, Type t, Value x, Value, uint64_t c1, uint64_t) {
                         return std::vector<Value>{op2(c, Opcode::Icmp, t, k(c, t, c1), x, code)};
                     }});
    }
    // Constant chains: (x op c1) op c2, and x - c1 - c2.
    for (Opcode op : {Opcode::Iadd, Opcode::Isub, Opcode::Imul, Opcode::Band, Opcode::Bor, Opcode::Bxor}) {
        v.push_back({std::string(opcode_name(op)) + " chain",
                     [op](FuncCursor& c, Type t, Value x, Value, uint64_t c1, uint64_t c2) {
                         Value a = op2(c, op, t, x, k(c, t, c1));
                         return std::vector<Value>{op2(c, op, t, a, k(c, t, c2))};
                     },
                     false, true});
    }
    // (x - y) == 0 and != 0 compare x and y.
    for (IntCC cc : {IntCC::Eq, IntCC::Ne}) {
        const uint8_t code = static_cast<uint8_t>(cc);
        v.push_back({"icmp " + std::string(intcc_name(cc)) + " (x - y), 0",
                     [code](FuncCursor& c, Type t, Value x, Value y, uint64_t, uint64_t) {
                         Value d = op2(c, Opcode::Isub, t, x, y);
                         return std::vector<Value>{op2(c, Opcode::Icmp, t, d, k(c, t, 0), code)};
                     },
                     true, false, false});
    }
    v.push_back({"ineg ineg", [](FuncCursor& c, Type t, Value x, Value, uint64_t, uint64_t) {
                     return std::vector<Value>{op1(c, Opcode::Ineg, t, op1(c, Opcode::Ineg, t, x))};
                 },
                 false, false, false});
    v.push_back({"bnot bnot", [](FuncCursor& c, Type t, Value x, Value, uint64_t, uint64_t) {
                     return std::vector<Value>{op1(c, Opcode::Bnot, t, op1(c, Opcode::Bnot, t, x))};
                 },
                 false, false, false});
    v.push_back({"x + -y, x - -y",
                 [](FuncCursor& c, Type t, Value x, Value y, uint64_t, uint64_t) {
                     Value n = op1(c, Opcode::Ineg, t, y);
                     return std::vector<Value>{op2(c, Opcode::Iadd, t, x, n), op2(c, Opcode::Isub, t, x, n)};
                 },
                 true, false, false});
    v.push_back({"select c", [](FuncCursor& c, Type t, Value x, Value y, uint64_t c1, uint64_t) {
                     return std::vector<Value>{emit(c, Opcode::Select, t, {k(c, t, c1), x, y})[0]};
                 }, true});
    v.push_back({"select y, x, x", [](FuncCursor& c, Type t, Value x, Value y, uint64_t, uint64_t) {
                     return std::vector<Value>{emit(c, Opcode::Select, t, {y, x, x})[0]};
                 }, true, false, false});
    v.push_back({"bitselect c", [](FuncCursor& c, Type t, Value x, Value y, uint64_t c1, uint64_t) {
                     return std::vector<Value>{emit(c, Opcode::Bitselect, t, {k(c, t, c1), x, y})[0],
                                               emit(c, Opcode::Bitselect, t, {y, x, x})[0]};
                 }, true});
    v.push_back({"ireduce ext", [](FuncCursor& c, Type t, Value x, Value, uint64_t, uint64_t) {
                     std::vector<Value> r;
                     for (unsigned w : kWidths) {
                         const Type wide = Type::int_with_bits(w);
                         if (w <= t.bits()) continue;
                         r.push_back(emit(c, Opcode::Ireduce, t, {emit(c, Opcode::Uextend, wide, {x})[0]})[0]);
                         r.push_back(emit(c, Opcode::Ireduce, t, {emit(c, Opcode::Sextend, wide, {x})[0]})[0]);
                     }
                     return r;
                 },
                 false, false, false, 32});
    return v;
}

class RuleChecker {
public:
    RuleChecker() { EXPECT_FALSE(pm_.add_pipeline("gvn,dce,simplify-cfg")); }

    /// Builds the case at width `bits` with constants c1, c2, optimizes a
    /// copy and runs both on every (x, y) of `inputs`: results must agree
    /// (a trap on both sides with the same code agrees). True if the
    /// optimized function differs from the original.
    bool check(const RuleCase& rc, unsigned bits, uint64_t c1, uint64_t c2,
               const std::vector<std::pair<uint64_t, uint64_t>>& inputs) {
        const Type t = Type::int_with_bits(bits);
        auto build = [&] {
            return build_function("f", {t, t}, [&](FuncCursor& c, const std::vector<Value>& ps) {
                return rc.body(c, t, ps[0], ps[1], c1, c2);
            });
        };
        std::unique_ptr<Function> orig = build(), opt = build();
        if (auto err = pm_.run(*opt)) {
            ADD_FAILURE() << rc.name << ": " << *err;
            return false;
        }
        Interpreter a, b;
        a.add_function(*orig);
        b.add_function(*opt);
        for (auto [x, y] : inputs) {
            const DataValue args[2] = {DataValue(t, x), DataValue(t, y)};
            InterpOutcome ra = a.call(*orig, args), rb = b.call(*opt, args);
            bool same = ra.kind == rb.kind;
            if (same && ra.kind == InterpOutcome::Kind::Return) {
                same = ra.values.size() == rb.values.size();
                for (size_t i = 0; same && i < ra.values.size(); ++i) same = ra.values[i].bits == rb.values[i].bits;
            }
            if (same && ra.kind == InterpOutcome::Kind::Trap) same = ra.trap == rb.trap;
            if (!same) {
                ADD_FAILURE() << rc.name << " at i" << bits << " c1=" << c1 << " c2=" << c2 << " x=" << x
                              << " y=" << y << ":\n"
                              << print_function(*orig) << print_function(*opt);
                return false;
            }
        }
        return print_function(*orig) != print_function(*opt);
    }

private:
    PassManager pm_;
};

TEST(OptRules, EveryRuleAgreesWithTheInterpreterExhaustivelyAtI8) {
    RuleChecker checker;
    Rng rng(3);
    std::vector<std::pair<uint64_t, uint64_t>> all_x, all_xy;
    for (uint64_t x = 0; x < 256; ++x) {
        all_x.push_back({x, rng.next() & 0xff});
        for (uint64_t y = 0; y < 256; ++y) all_xy.push_back({x, y});
    }
    uint64_t fired_cases = 0;
    for (const RuleCase& rc : rule_cases()) {
        uint32_t fired = 0;
        const auto& inputs = rc.uses_y ? all_xy : all_x;
        // Every constant c1, with every x (and every y where it matters);
        // c2 (chains) in 16 samples; c1 for the cases that use y in 16
        // samples too (0 and -1 among them), each with all 65536 (x, y).
        const unsigned c2_count = rc.uses_c2 ? 16 : 1;
        const uint64_t c1_count = !rc.uses_c1 ? 1 : rc.uses_y ? 16 : 256;
        for (uint64_t i = 0; i < c1_count; ++i) {
            const uint64_t c1 = c1_count == 16 ? (i < 2 ? i * 0xff : rng.next() & 0xff) : i;
            for (unsigned j = 0; j < c2_count; ++j) {
                const uint64_t c2 = j == 0 ? 0 : rng.next() & 0xff;
                fired += checker.check(rc, 8, c1, c2, inputs);
                if (::testing::Test::HasFailure()) return;
            }
        }
        EXPECT_GT(fired, 0u) << rc.name << " never rewrote anything";
        fired_cases += fired > 0;
    }
    std::printf("%llu rule cases fired\n", static_cast<unsigned long long>(fired_cases));
}

TEST(OptRules, EveryRuleAgreesWithTheInterpreterAtRandomOnWiderTypes) {
    RuleChecker checker;
    Rng rng(5);
    for (const RuleCase& rc : rule_cases()) {
        for (unsigned bits : {16u, 32u, 64u}) {
            if (bits > rc.max_bits) continue;
            uint32_t fired = 0;
            for (int i = 0; i < 40; ++i) {
                // Constants that trigger rules (0, 1, -1, powers of two,
                // amounts >= B) as often as random ones.
                auto constant = [&] {
                    const uint64_t r = rng.next();
                    switch (r % 6) {
                    case 0: return uint64_t{0};
                    case 1: return uint64_t{1};
                    case 2: return ~uint64_t{0};
                    case 3: return uint64_t{1} << ((r >> 8) % bits);
                    case 4: return (r >> 8) % (2 * bits);
                    default: return rng.edgy(bits);
                    }
                };
                std::vector<std::pair<uint64_t, uint64_t>> inputs;
                for (int j = 0; j < 24; ++j) inputs.push_back({rng.edgy(bits), rng.edgy(bits)});
                fired += checker.check(rc, bits, constant(), constant(), inputs);
                if (::testing::Test::HasFailure()) return;
            }
            EXPECT_GT(fired, 0u) << rc.name << " at i" << bits << " never rewrote anything";
        }
    }
}

// Division by a constant through magic numbers, densely at the wider
// types: divisors near powers of two, near MIN and MAX and at random, each
// against dividends at the edges and at random.
TEST(OptRules, DivisionByConstantsAgreesWithTheInterpreter) {
    RuleChecker checker;
    Rng rng(17);
    std::vector<RuleCase> cases;
    for (RuleCase& rc : rule_cases()) {
        for (const char* n : {"udiv x, c", "sdiv x, c", "urem x, c", "srem x, c"})
            if (rc.name == n) cases.push_back(rc);
    }
    ASSERT_EQ(cases.size(), 4u);
    for (unsigned bits : {16u, 32u, 64u}) {
        const uint64_t mask = Type::int_with_bits(bits).mask();
        std::vector<uint64_t> divisors;
        for (unsigned k = 1; k < bits; ++k) {
            for (int64_t delta : {-1, 1, 3}) divisors.push_back(((uint64_t{1} << k) + delta) & mask);
            divisors.push_back((0 - (uint64_t{1} << k) + 1) & mask);  // negative, near -2^k
        }
        for (int i = 0; i < 100; ++i) divisors.push_back(rng.edgy(bits));
        std::vector<std::pair<uint64_t, uint64_t>> inputs;
        for (uint64_t x : {uint64_t{0}, uint64_t{1}, mask, mask >> 1, (mask >> 1) + 1, mask - 1})
            inputs.push_back({x, 0});
        for (int j = 0; j < 200; ++j) inputs.push_back({rng.edgy(bits), 0});
        for (const RuleCase& rc : cases) {
            uint32_t fired = 0;
            for (uint64_t d : divisors) {
                fired += checker.check(rc, bits, d, 0, inputs);
                if (::testing::Test::HasFailure()) return;
            }
            EXPECT_GT(fired, divisors.size() / 2) << rc.name << " at i" << bits;
        }
    }
}

// Float rules are bit-exact: -(-x) and |(|x|)| keep a NaN's payload.
TEST(OptRules, FloatRulesKeepNanPayloadsAndSignedZeros) {
    PassManager pm;
    ASSERT_FALSE(pm.add_pipeline("gvn,dce"));
    Rng rng(13);
    for (Type t : {types::F32, types::F64}) {
        auto build = [&] {
            return build_function("f", {t}, [&](FuncCursor& c, const std::vector<Value>& ps) {
                Value n = op1(c, Opcode::Fneg, t, op1(c, Opcode::Fneg, t, ps[0]));
                Value a = op1(c, Opcode::Fabs, t, op1(c, Opcode::Fabs, t, ps[0]));
                return std::vector<Value>{n, a};
            });
        };
        auto orig = build(), opt = build();
        ASSERT_FALSE(pm.run(*opt));
        EXPECT_EQ(print_function(*opt).find("fneg"), std::string::npos) << print_function(*opt);
        Interpreter a, b;
        a.add_function(*orig);
        b.add_function(*opt);
        for (int i = 0; i < 2000; ++i) {
            const DataValue arg(t, edgy_float(rng, t == types::F64));
            InterpOutcome ra = a.call(*orig, {&arg, 1}), rb = b.call(*opt, {&arg, 1});
            ASSERT_EQ(ra.values.size(), 2u);
            ASSERT_EQ(rb.values.size(), 2u);
            EXPECT_EQ(ra.values[0].bits, rb.values[0].bits);
            EXPECT_EQ(ra.values[1].bits, rb.values[1].bits);
        }
    }
}

}  // namespace
}  // namespace heron::test
