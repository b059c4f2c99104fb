// tail-accumulate (codegen/opt/tail_accumulate.h): which functions the pass
// needs (pass_needs::kSelfCall, found from the declarations), and a sweep
// of generated self-recursive shapes (the fuzzers' generator makes no
// self-calls): for each, whether the pass must turn the last call into a
// jump is predicted from the shape, and the function at opt_level=speed
// must give the interpreter's results of the original, interpreted after
// the pipeline and JIT-compiled.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "codegen/opt/tail_accumulate.h"
#include "jit/jit_module.h"

namespace heron {
namespace {

Function parse_one(const std::string& text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].message) << "\n" << text;
    return fs.empty() ? Function() : std::move(*fs[0]);
}

/// bench/kernels/fib.clif, the kernel the pass was written for.
Function fib_kernel() {
    std::ifstream in(std::string(HERON_SOURCE_DIR) + "/bench/kernels/fib.clif");
    std::stringstream text;
    text << in.rdbuf();
    return parse_one(text.str());
}

TEST(TailAccumulateTest, SelfCallNeedIsFoundFromTheDeclarations) {
    const Function fib = fib_kernel();
    EXPECT_TRUE(declares_self(fib));
    EXPECT_EQ(scan_pass_needs(fib), pass_needs::kSelfCall | pass_needs::kEntryBrif);
    // Same name, another signature: not the function itself.
    const Function other_sig = parse_one(R"(
function %f(i64) -> i64 {
    fn0 = %f(i32) -> i64
block0(v0: i64):
    v1 = ireduce.i32 v0
    v2 = call fn0(v1)
    return v2
}
)");
    EXPECT_FALSE(declares_self(other_sig));
    EXPECT_EQ(scan_pass_needs(other_sig), 0u);
    // A user name calling itself is found; another index is not.
    const Function user = parse_one(R"(
function u0:7(i32) -> i32 {
    fn0 = u0:7(i32) -> i32
    fn1 = u0:8(i32) -> i32
block0(v0: i32):
    brif v0, block1, block2
block1:
    v1 = iconst.i32 1
    v2 = isub v0, v1
    v3 = call fn0(v2)
    v4 = iadd v3, v0
    return v4
block2:
    v5 = call fn1(v0)
    return v5
}
)");
    EXPECT_TRUE(declares_self(user));
    const Function callee_only = parse_one(R"(
function u0:9(i32) -> i32 {
    fn1 = u0:8(i32) -> i32
block0(v0: i32):
    v1 = call fn1(v0)
    return v1
}
)");
    EXPECT_FALSE(declares_self(callee_only));

    // Through the loop passes an acyclic function with a self-call may
    // change (so the JIT would copy it); one without is left alone. (At
    // speed gvn, dce and simplify-cfg may change any function.)
    PassManager loop_passes;
    ASSERT_FALSE(loop_passes.add_pipeline("tail-accumulate,loop-form,licm,forward-blocks,split-entry"));
    EXPECT_TRUE(loop_passes.may_change(fib));
    EXPECT_FALSE(loop_passes.may_change(callee_only));
    Optimizer speed(OptLevel::Speed, true);
    EXPECT_TRUE(speed.may_change(callee_only));
    Function f = user;
    ASSERT_FALSE(speed.run(f));
    const std::string out = print_function(f);
    EXPECT_EQ(out.find("call fn0"), std::string::npos) << out;
    EXPECT_NE(out.find("call fn1"), std::string::npos) << out;
}

TEST(TailAccumulateTest, RunsAlone) {
    Function f = fib_kernel();
    PassContext ctx;
    ctx.bind(f);
    EXPECT_EQ(accumulate_tail_calls(f, ctx), 1u);
    const std::string out = print_function(f);
    // One call left; a new entry making the first test, returning n from
    // a block of its own or entering the body with acc = 0; the loop's
    // return adding acc.
    EXPECT_EQ(out.find("call fn0"), out.rfind("call fn0")) << out;
    EXPECT_NE(out.find("block3(v11: i64):\n    v12 = iconst.i64 0\n    v15 = iconst.i64 2\n"
                       "    v16 = icmp slt v11, v15\n    brif v16, block4(v11), block1(v11, v12)\n"
                       "block4(v17: i64):\n    return v17\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("brif v2, block2(v0), block1(v0, v13)\nblock1(v18: i64, v19: i64):"), std::string::npos) << out;
    EXPECT_NE(out.find("v9 = iadd v5, v19\n    jump block0(v7, v9)"), std::string::npos) << out;
    EXPECT_NE(out.find("v14 = iadd v13, v10\n    return v14"), std::string::npos) << out;
    // Running it again finds the remaining call not in tail position.
    ctx.bind(f);
    EXPECT_EQ(accumulate_tail_calls(f, ctx), 0u);
}

// --- generated shapes ------------------------------------------------------------

struct Shape {
    std::string op;      // the operation combining the last call's result
    bool call_left;      // the call's result is the first operand
    bool first_call;     // the other operand is an earlier self-call (fib)
    bool via_block;      // the result reaches the return through a block parameter
    bool pure_between;   // a pure instruction between the call and the return
    bool store_between;  // a store there (forbids)
    bool trap_between;   // an sdiv there, by n - step (forbids)
    bool reuse;          // the call's result read again (forbids)
    bool plain;          // no operation: the call's result is returned itself
    int base;            // 0: return n, 1: return k, 2: return n * k + 3
    int step;            // 1 or 2
};

bool accumulates(const std::string& op) {
    return op == "iadd" || op == "imul" || op == "band" || op == "bor" || op == "bxor";
}

bool expect_rewrite(const Shape& s) {
    if (s.store_between || s.trap_between || s.reuse) return false;
    return s.plain || accumulates(s.op);
}

/// %r(n, k, p): p is a pointer for the store shapes (unused otherwise).
std::string render(const Shape& s) {
    std::string t = "function %r(i64, i64, i64) -> i64 {\n    fn0 = %r(i64, i64, i64) -> i64\n";
    t += "block0(v0: i64, v1: i64, v2: i64):\n";
    t += "    v3 = iconst.i64 " + std::to_string(s.step) + "\n";
    t += "    v4 = icmp slt v0, v3\n    brif v4, block1, block2\nblock1:\n";
    switch (s.base) {
    case 0: t += "    jump block3(v0)\n"; break;
    case 1: t += "    return v1\n"; break;
    default: t += "    v5 = imul v0, v1\n    v6 = iconst.i64 3\n    v7 = iadd v5, v6\n    jump block3(v7)\n"; break;
    }
    t += "block2:\n    v8 = isub v0, v3\n    v9 = bxor v1, v0\n";
    std::string other = "v9";
    if (s.first_call) {
        t += "    v10 = iconst.i64 1\n    v11 = isub v0, v10\n    v12 = call fn0(v11, v1, v2)\n";
        other = "v12";
    }
    t += "    v13 = call fn0(v8, v9, v2)\n";
    if (s.pure_between) t += "    v14 = imul v0, v9\n";
    if (s.store_between) t += "    store v0, v2\n";
    std::string result = "v13";
    if (s.trap_between) {
        t += "    v15 = sdiv v1, v8\n";  // traps when n == step
        other = "v15";
    }
    if (!s.plain) {
        t += "    v16 = " + s.op + " " + (s.call_left ? "v13, " + other : other + ", v13") + "\n";
        result = "v16";
    }
    if (s.reuse) {
        t += "    v17 = iadd " + result + ", v13\n";
        result = "v17";
    }
    t += s.via_block ? "    jump block3(" + result + ")\n" : "    return " + result + "\n";
    t += "block3(v18: i64):\n    return v18\n}\n";
    return t;
}

TEST(TailAccumulateTest, GeneratedShapesKeepTheirResults) {
    static const char* const kOps[] = {"iadd", "imul", "band", "bor", "bxor", "isub", "smax", "ishl"};
    std::mt19937 rng(2026);
    auto coin = [&](unsigned n) { return rng() % n == 0; };
    uint64_t cell = 0;  // the store shapes write here
    uint32_t rewritten = 0, kept = 0, traps = 0, rotations = 0;
    for (int i = 0; i < 160; ++i) {
        Shape s;
        s.op = kOps[rng() % 8];
        s.call_left = coin(2);
        s.first_call = coin(3);
        s.via_block = coin(2);
        s.pure_between = coin(3);
        s.store_between = coin(8);
        s.trap_between = coin(8);
        s.reuse = coin(8);
        s.plain = !s.first_call && !s.trap_between && coin(5);
        s.base = static_cast<int>(rng() % 3);
        s.step = 1 + static_cast<int>(rng() % 2);
        const std::string text = render(s);
        SCOPED_TRACE(text);
        const Function f = parse_one(text);

        Function alone = f;
        PassContext ctx;
        ctx.bind(alone);
        const uint32_t n = accumulate_tail_calls(alone, ctx);
        EXPECT_EQ(n, expect_rewrite(s) ? 1u : 0u) << print_function(alone);
        (n ? rewritten : kept) += 1;
        // The entry's test is copied when the base case is a lone return
        // (block1 `return k`); the other bases jump to block3 first.
        const Inst first_test = *alone.layout.last_inst(*alone.layout.entry_block());
        const bool rotated = n == 1 && alone.dfg[first_test].opcode == Opcode::Brif;
        EXPECT_EQ(rotated, n == 1 && s.base == 1) << print_function(alone);
        rotations += rotated;

        Function opt = f;
        Optimizer speed(OptLevel::Speed, true);
        ASSERT_FALSE(speed.run(opt));

        JITBuilder b;
        b.check_regalloc(true).opt_level(OptLevel::Speed).verify_passes(true);
        JITModule jit(std::move(b));
        auto id = jit.declare_function("r", Linkage::Export, f.signature);
        ASSERT_TRUE(id.ok());
        ASSERT_FALSE(jit.define_function(id.value(), f).has_value());
        ASSERT_FALSE(jit.finalize_definitions().has_value());

        Interpreter interp;
        interp.add_host_memory(&cell, sizeof cell);
        const int64_t top = s.first_call ? 14 : 40;
        for (int64_t n0 : {int64_t{-3}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, top}) {
            for (int64_t k : {int64_t{0}, int64_t{5}, int64_t{-9}}) {
                const DataValue args[] = {DataValue::i64(n0), DataValue::i64(k),
                                          DataValue::i64(static_cast<int64_t>(reinterpret_cast<uintptr_t>(&cell)))};
                const InterpOutcome want = interp.call(f, args);
                const InterpOutcome got = interp.call(opt, args);
                ASSERT_EQ(want.kind, got.kind) << "n=" << n0 << " k=" << k << "\n" << print_function(opt);
                const InterpOutcome jitted = to_interp_outcome(jit.call(id.value(), args));
                ASSERT_EQ(want.kind, jitted.kind) << "n=" << n0 << " k=" << k << " " << jitted.message;
                if (want.kind == InterpOutcome::Kind::Return) {
                    EXPECT_EQ(want.values, got.values) << "n=" << n0 << " k=" << k << "\n" << print_function(opt);
                    EXPECT_EQ(want.values, jitted.values) << "n=" << n0 << " k=" << k;
                } else if (want.kind == InterpOutcome::Kind::Trap) {
                    ++traps;
                    EXPECT_EQ(want.trap.byte, got.trap.byte);
                    EXPECT_EQ(want.trap.byte, jitted.trap.byte);
                }
            }
        }
    }
    // Both kinds are well represented.
    EXPECT_GT(rewritten, 50u);
    EXPECT_GT(kept, 30u);
    EXPECT_GT(rotations, 15u);
    EXPECT_GT(traps, 20u);  // the sdiv shapes at n == step
    std::printf("%u rewritten (%u rotated), %u kept, %u trapping runs\n", rewritten, rotations, kept, traps);
}

// The JIT withholds kSelfCall when a function's declared name is not its IR
// name (a call to the IR name is then another function). A pass that
// changes the function before tail-accumulate makes the manager scan the
// needs again; the scan must not give kSelfCall back.
TEST(TailAccumulateTest, AWithheldSelfCallNeedStaysWithheldAfterAnEarlierPass) {
    auto calls_in = [](const Function& f) {
        const std::string text = print_function(f);
        size_t n = 0;
        for (size_t at = text.find("= call fn"); at != std::string::npos; at = text.find("= call fn", at + 1)) ++n;
        return n;
    };
    for (bool withheld : {false, true}) {
        Function fib = fib_kernel();
        ASSERT_EQ(calls_in(fib), 2u);
        PassManagerOptions o;
        o.verify_each = true;
        PassManager pm(o);
        ASSERT_FALSE(pm.add_pipeline("split-entry,tail-accumulate").has_value());
        uint8_t present = scan_pass_needs(fib);
        if (withheld) present &= ~pass_needs::kSelfCall;
        const auto err = pm.run(fib, present);
        ASSERT_FALSE(err.has_value()) << *err;
        EXPECT_EQ(calls_in(fib), withheld ? 2u : 1u) << print_function(fib);
    }
}

}  // namespace
}  // namespace heron
