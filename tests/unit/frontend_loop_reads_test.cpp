// Reads after loops whose body defines the variable (SSABuilder's
// loop_value shortcut, docs/frontend.md): loops nested in loops, a read
// after an inner loop while the outer header is unsealed, variables
// defined only on some paths (or nowhere on some), chains and nests of
// loops deeper than the shortcut's limit, and several seal orders. Each
// build must verify, have no trivial parameter, the same number of
// parameters whatever the seal order, and compute what the C++ reference
// computes, under the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "tests/unit/frontend_test_util.h"

namespace heron {
namespace {

enum class Seal { Early, AtEnd, Shuffled };

// Builds loops by hand (header, body, latch, exit; the header tests the
// condition), sealing each block when all its predecessors are known
// (Early), all at the end (AtEnd), or at the end in a shuffled order.
class Builder {
public:
    Builder(FunctionBuilder& b, Seal seal, uint64_t seed) : b_(b), seal_(seal), rng_(seed) {}

    FunctionBuilder& fb() { return b_; }

    void sealable(Block blk) {
        if (seal_ == Seal::Early) {
            b_.seal_block(blk);
        } else {
            deferred_.push_back(blk);
        }
    }
    void seal_rest() {
        if (seal_ == Seal::Shuffled) std::shuffle(deferred_.begin(), deferred_.end(), rng_);
        for (Block blk : deferred_) b_.seal_block(blk);
        deferred_.clear();
    }

    // while (var < limit) { body(); var += 1 }, with `var` set to 0 first.
    void counted_loop(Variable var, Value limit, const std::function<void()>& body) {
        b_.def_var(var, b_.ins().iconst(types::I32, 0));
        Block header = b_.create_block(), inner = b_.create_block(), latch = b_.create_block(),
              exit = b_.create_block();
        b_.ins().jump(header);
        b_.switch_to_block(header);
        b_.ins().brif(b_.ins().icmp(IntCC::Slt, b_.use_var(var), limit), inner, exit);
        sealable(inner);
        b_.switch_to_block(inner);
        body();
        b_.def_var(var, b_.ins().iadd_imm(b_.use_var(var), 1));
        fe_test::close_loop(b_, latch, header, exit, [this](Block blk) { sealable(blk); });
    }

    // if (cond) { then() }
    void if_then(Value cond, const std::function<void()>& then) {
        Block yes = b_.create_block(), merge = b_.create_block();
        b_.ins().brif(cond, yes, merge);
        sealable(yes);
        b_.switch_to_block(yes);
        then();
        b_.ins().jump(merge);
        sealable(merge);
        b_.switch_to_block(merge);
    }

private:
    FunctionBuilder& b_;
    Seal seal_;
    std::mt19937_64 rng_;
    std::vector<Block> deferred_;
};

// Builds `program` once per seal order (Early, AtEnd, and shuffled orders)
// and checks every build against `reference` for each argument.
void check(const std::function<Value(Builder&, Value)>& program, const std::function<int32_t(int32_t)>& reference,
           std::span<const int32_t> args) {
    FunctionBuilderContext ctx;
    Interpreter interp;
    std::vector<uint32_t> params;
    const Seal seals[] = {Seal::Early, Seal::AtEnd, Seal::Shuffled, Seal::Shuffled, Seal::Shuffled};
    for (size_t o = 0; o < std::size(seals); ++o) {
        Function f(ExternalName::testcase("loops"), fe_test::i32_signature(1));
        FunctionBuilder b(f, ctx);
        Builder lb(b, seals[o], 1000 + o);
        Block entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        lb.sealable(entry);
        Value result = program(lb, b.block_params(entry)[0]);
        b.ins().return_({result});
        lb.seal_rest();
        auto r = b.finalize();
        ASSERT_TRUE(r.ok()) << "order " << o << ": " << r.error().message;
        VerifierErrors errors;
        ASSERT_TRUE(verify_function(f, errors)) << "order " << o << "\n"
                                                << format_verifier_errors(errors) << print_function(f);
        ASSERT_EQ(fe_test::trivial_params(f), "") << "order " << o << "\n" << print_function(f);
        params.push_back(fe_test::count_params(f));
        ASSERT_EQ(params.back(), params[0]) << "order " << o << " against sealing early\n" << print_function(f);
        for (int32_t a : args) {
            DataValue v = DataValue::i32(a);
            InterpOutcome out = interp.call(f, std::span<const DataValue>(&v, 1));
            ASSERT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
            ASSERT_EQ(out.values[0].as_signed(), reference(a)) << "a = " << a << ", order " << o << "\n"
                                                               << print_function(f);
        }
    }
}

Value mul_k(FunctionBuilder& b, Value x, int64_t k) { return b.ins().imul(x, b.ins().iconst(types::I32, k)); }

const int32_t kArgs[] = {0, 1, 2, 3, 5, 6, -1, -4};

// x = a; z = a ^ 5; w = a * 2 only if a > 0; acc = 0
// for i in 0..3 {
//     for j in 0..4 {
//         if (j == (a & 3)) x = j + 100     // x: defined on some paths of the inner body, never read there
//         if (i == 1) z = j * 5 + a         // z: likewise, only in the inner body
//     }
//     acc = acc * 3 + x                     // after the inner loop; the outer header is not sealed yet
// }
// return acc + x * 7 + z * 13 + w           // after the outer loop
TEST(FrontendLoopReadsTest, ReadsAfterNestedLoopsDefiningOnSomePaths) {
    auto program = [](Builder& lb, Value a) {
        FunctionBuilder& b = lb.fb();
        Variable x = b.declare_var(types::I32), z = b.declare_var(types::I32), w = b.declare_var(types::I32);
        Variable acc = b.declare_var(types::I32), i = b.declare_var(types::I32), j = b.declare_var(types::I32);
        b.def_var(x, a);
        b.def_var(z, b.ins().bxor(a, b.ins().iconst(types::I32, 5)));
        lb.if_then(b.ins().icmp_imm(IntCC::Sgt, a, 0), [&] { b.def_var(w, mul_k(b, a, 2)); });
        b.def_var(acc, b.ins().iconst(types::I32, 0));
        Value three = b.ins().iconst(types::I32, 3), four = b.ins().iconst(types::I32, 4);
        lb.counted_loop(i, three, [&] {
            lb.counted_loop(j, four, [&] {
                Value low = b.ins().band(a, b.ins().iconst(types::I32, 3));
                lb.if_then(b.ins().icmp(IntCC::Eq, b.use_var(j), low),
                           [&] { b.def_var(x, b.ins().iadd_imm(b.use_var(j), 100)); });
                lb.if_then(b.ins().icmp_imm(IntCC::Eq, b.use_var(i), 1), [&] {
                    b.def_var(z, b.ins().iadd(mul_k(b, b.use_var(j), 5), a));
                });
            });
            b.def_var(acc, b.ins().iadd(mul_k(b, b.use_var(acc), 3), b.use_var(x)));
        });
        Value r = b.ins().iadd(b.use_var(acc), mul_k(b, b.use_var(x), 7));
        r = b.ins().iadd(r, mul_k(b, b.use_var(z), 13));
        return b.ins().iadd(r, b.use_var(w));
    };
    auto reference = [](int32_t a) {
        int32_t x = a, z = a ^ 5, w = a > 0 ? a * 2 : 0, acc = 0;
        for (int32_t i = 0; i < 3; ++i) {
            for (int32_t j = 0; j < 4; ++j) {
                if (j == (a & 3)) x = j + 100;
                if (i == 1) z = j * 5 + a;
            }
            acc = acc * 3 + x;
        }
        return acc + x * 7 + z * 13 + w;
    };
    check(program, reference, kArgs);
}

// Variables defined in a loop's body and then again after the loop, in
// another block (the builder passes a loop header without looking into
// the body only when no block of the body can define the variable: the
// definition before the last one, in another block, must still count),
// and variables read in the body but defined only before it (their header
// parameters made while the header was unsealed are trivial and go at
// seal_block without walking the body).
//
// x = a; y = a * 3; z = a ^ 5; acc = 0
// for i in 0..4 {
//     acc = acc + y                     // y: never defined in the body
//     if (i == (a & 3)) x = i + 100     // x, z: defined on some paths of the body
//     if (i == 2) z = i * 7 + a
// }
// if (a > 2) y = y + 7                  // y: last defined after the loop
// if (a > 1) z = 9                      // z: last defined after the loop, not read in between
// return acc + x * 3 + z * 5 + y * 7    // z and x: the walks pass the loop header
TEST(FrontendLoopReadsTest, DefinitionsInTheBodyAndAgainAfterTheLoop) {
    auto program = [](Builder& lb, Value a) {
        FunctionBuilder& b = lb.fb();
        Variable x = b.declare_var(types::I32), y = b.declare_var(types::I32), z = b.declare_var(types::I32);
        Variable acc = b.declare_var(types::I32), i = b.declare_var(types::I32);
        b.def_var(x, a);
        b.def_var(y, mul_k(b, a, 3));
        b.def_var(z, b.ins().bxor(a, b.ins().iconst(types::I32, 5)));
        b.def_var(acc, b.ins().iconst(types::I32, 0));
        lb.counted_loop(i, b.ins().iconst(types::I32, 4), [&] {
            b.def_var(acc, b.ins().iadd(b.use_var(acc), b.use_var(y)));
            Value low = b.ins().band(a, b.ins().iconst(types::I32, 3));
            lb.if_then(b.ins().icmp(IntCC::Eq, b.use_var(i), low),
                       [&] { b.def_var(x, b.ins().iadd_imm(b.use_var(i), 100)); });
            lb.if_then(b.ins().icmp_imm(IntCC::Eq, b.use_var(i), 2),
                       [&] { b.def_var(z, b.ins().iadd(mul_k(b, b.use_var(i), 7), a)); });
        });
        lb.if_then(b.ins().icmp_imm(IntCC::Sgt, a, 2), [&] { b.def_var(y, b.ins().iadd_imm(b.use_var(y), 7)); });
        lb.if_then(b.ins().icmp_imm(IntCC::Sgt, a, 1), [&] { b.def_var(z, b.ins().iconst(types::I32, 9)); });
        Value r = b.ins().iadd(b.use_var(acc), mul_k(b, b.use_var(x), 3));
        r = b.ins().iadd(r, mul_k(b, b.use_var(z), 5));
        return b.ins().iadd(r, mul_k(b, b.use_var(y), 7));
    };
    auto reference = [](int32_t a) {
        int32_t x = a, y = a * 3, z = a ^ 5, acc = 0;
        for (int32_t i = 0; i < 4; ++i) {
            acc = acc + y;
            if (i == (a & 3)) x = i + 100;
            if (i == 2) z = i * 7 + a;
        }
        if (a > 2) y = y + 7;
        if (a > 1) z = 9;
        return acc + x * 3 + z * 5 + y * 7;
    };
    check(program, reference, kArgs);
}

// A loop header that reads w (a parameter, made while the header is
// unsealed) and then defines w itself; the body never defines w. The
// parameter looks trivial from the body (no block of it defines w) but
// the back edge brings the header's own definition: it must stay.
//
// w = a; k = 0
// loop { w = w + 3; if (k >= 3) break; k = k + 1 }   // the header: w = w + 3, then the test
// return w * 5 + k
TEST(FrontendLoopReadsTest, HeaderDefinesTheVariableAfterReadingIt) {
    auto program = [](Builder& lb, Value a) {
        FunctionBuilder& b = lb.fb();
        Variable w = b.declare_var(types::I32), k = b.declare_var(types::I32);
        b.def_var(w, a);
        b.def_var(k, b.ins().iconst(types::I32, 0));
        Block header = b.create_block(), body = b.create_block(), exit = b.create_block();
        b.ins().jump(header);
        b.switch_to_block(header);
        b.def_var(w, b.ins().iadd_imm(b.use_var(w), 3));
        b.ins().brif(b.ins().icmp_imm(IntCC::Slt, b.use_var(k), 3), body, exit);
        lb.sealable(body);
        lb.sealable(exit);
        b.switch_to_block(body);
        b.def_var(k, b.ins().iadd_imm(b.use_var(k), 1));
        b.ins().jump(header);
        lb.sealable(header);
        b.switch_to_block(exit);
        return b.ins().iadd(mul_k(b, b.use_var(w), 5), b.use_var(k));
    };
    auto reference = [](int32_t a) {
        int32_t w = a, k = 0;
        for (;;) {
            w = w + 3;
            if (!(k < 3)) break;
            k = k + 1;
        }
        return w * 5 + k;
    };
    check(program, reference, kArgs);
}

// Eight loops in a row, each running (a + k) % 3 times and defining v in
// its body (read nowhere in it); v is read once, after the last: the
// lookups from there meet every header in turn, more than the shortcut
// takes at once. u is defined before the loops on one path only and read
// after them; s is read after every loop.
TEST(FrontendLoopReadsTest, ChainOfLoopsLongerThanTheShortcutsDepth) {
    constexpr int kLoops = 8;
    auto program = [](Builder& lb, Value a) {
        FunctionBuilder& b = lb.fb();
        Variable v = b.declare_var(types::I32), u = b.declare_var(types::I32), s = b.declare_var(types::I32);
        b.def_var(v, b.ins().iconst(types::I32, -1));
        b.def_var(s, a);
        lb.if_then(b.ins().icmp_imm(IntCC::Eq, a, 2), [&] { b.def_var(u, b.ins().iconst(types::I32, 77)); });
        for (int k = 0; k < kLoops; ++k) {
            Variable j = b.declare_var(types::I32);
            Value limit = b.ins().urem(b.ins().iadd_imm(a, k), b.ins().iconst(types::I32, 3));
            lb.counted_loop(j, limit, [&] {
                b.def_var(v, b.ins().iadd_imm(mul_k(b, b.use_var(j), 10), k));
                if (k % 3 == 0) b.def_var(s, b.ins().iadd_imm(b.use_var(s), 1));
            });
            if (k % 2 == 1) b.def_var(s, mul_k(b, b.use_var(s), 3));
        }
        Value r = b.ins().iadd(mul_k(b, b.use_var(v), 1000), b.use_var(u));
        return b.ins().iadd(r, mul_k(b, b.use_var(s), 100000));
    };
    auto reference = [](int32_t a) {
        int32_t v = -1, u = a == 2 ? 77 : 0, s = a;
        for (int k = 0; k < kLoops; ++k) {
            const int32_t limit = static_cast<int32_t>(static_cast<uint32_t>(a + k) % 3u);
            for (int32_t j = 0; j < limit; ++j) {
                v = j * 10 + k;
                if (k % 3 == 0) s += 1;
            }
            if (k % 2 == 1) s *= 3;
        }
        return v * 1000 + u + s * 100000;
    };
    check(program, reference, kArgs);
}

// Loops nested six deep; v is defined only in the innermost body, on the
// path where every counter is 1, and read after each loop of the nest on
// the way out (the first read meets six headers whose bodies define it).
TEST(FrontendLoopReadsTest, NestDeeperThanTheShortcutsDepth) {
    constexpr int kDepth = 6;
    auto program = [](Builder& lb, Value a) {
        FunctionBuilder& b = lb.fb();
        Variable v = b.declare_var(types::I32), sum = b.declare_var(types::I32);
        Variable counters[kDepth];
        for (Variable& c : counters) c = b.declare_var(types::I32);
        b.def_var(v, a);
        b.def_var(sum, b.ins().iconst(types::I32, 0));
        Value two = b.ins().iconst(types::I32, 2);
        std::function<void(int)> nest = [&](int d) {
            if (d == kDepth) {
                Value all_one = b.ins().iconst(types::I32, 1);
                for (Variable c : counters) all_one = b.ins().band(all_one, b.use_var(c));
                lb.if_then(all_one, [&] { b.def_var(v, b.ins().iadd_imm(a, 1000)); });
                return;
            }
            lb.counted_loop(counters[d], two, [&] { nest(d + 1); });
            b.def_var(sum, b.ins().iadd(mul_k(b, b.use_var(sum), 3), b.use_var(v)));
        };
        nest(0);
        return b.ins().iadd(b.use_var(sum), b.use_var(v));
    };
    auto reference = [](int32_t a) {
        // Unsigned: the sum wraps, as the IR's arithmetic does.
        uint32_t v = static_cast<uint32_t>(a), sum = 0;
        std::function<void(int, bool)> nest = [&](int d, bool all_one) {
            if (d == kDepth) {
                if (all_one) v = static_cast<uint32_t>(a) + 1000;
                return;
            }
            for (int32_t c = 0; c < 2; ++c) nest(d + 1, all_one && c == 1);
            sum = sum * 3 + v;
        };
        nest(0, true);
        return static_cast<int32_t>(sum + v);
    };
    check(program, reference, kArgs);
}

}  // namespace
}  // namespace heron
