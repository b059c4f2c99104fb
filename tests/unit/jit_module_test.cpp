// End-to-end tests of the JIT module on x86-64: compile text IR, call the
// code directly and through the trampoline, link to host symbols, redefine
// and free functions, report traps.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pipeline.h"
#include "jit/jit_module.h"
#include "jit/trap_registry.h"
#include "tools/filetest.h"

namespace heron {
namespace {

std::unique_ptr<Function> parse_one(std::string_view text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].format("text"));
    EXPECT_EQ(fs.size(), 1u);
    return fs.empty() ? nullptr : std::move(fs[0]);
}

FuncId define(JITModule& jit, const Function& f) {
    auto id = jit.declare_function(f.name.name, Linkage::Export, f.signature);
    EXPECT_TRUE(id.ok());
    auto err = jit.define_function(id.value(), f);
    EXPECT_FALSE(err.has_value()) << err->message;
    return id.value();
}

JITBuilder checked() {
    JITBuilder b;
    b.check_regalloc(true);
    return b;
}

TEST(JitModuleTest, CallsCompiledCodeDirectly) {
    auto f = parse_one(R"(
function %add3(i64, i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64, v2: i64):
    v3 = iadd v0, v1
    v4 = iadd v3, v2
    return v4
})");
    JITModule jit(checked());
    FuncId id = define(jit, *f);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(int64_t, int64_t, int64_t)>(id);
    ASSERT_NE(fn, nullptr);
    EXPECT_EQ(fn(1, 2, 3), 6);
    EXPECT_EQ(fn(-10, 4, 1), -5);
}

TEST(JitModuleTest, RecursionAndLoops) {
    auto f = parse_one(R"(
function %fib(i64) -> i64 system_v {
    fn0 = %fib(i64) -> i64 system_v
block0(v0: i64):
    v1 = iconst.i64 2
    v2 = icmp ult v0, v1
    brif v2, block1, block2
block1:
    return v0
block2:
    v3 = iconst.i64 1
    v4 = isub v0, v3
    v5 = call fn0(v4)
    v6 = isub v4, v3
    v7 = call fn0(v6)
    v8 = iadd v5, v7
    return v8
})");
    JITModule jit(checked());
    FuncId id = define(jit, *f);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fib = jit.get_function<int64_t(int64_t)>(id);
    EXPECT_EQ(fib(20), 6765);
    DataValue arg = DataValue::i64(10);
    JitCallOutcome r = jit.call(id, std::span(&arg, 1));
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Return) << r.message;
    EXPECT_EQ(r.values[0], DataValue::i64(55));
}

/// Where the code of IR instruction `inst` starts; ~0u when it has none.
uint32_t code_offset(const CompiledCode& code, uint32_t inst) {
    for (const auto& [offset, i] : code.ir_insts) {
        if (i == inst) return offset;
    }
    return ~0u;
}

// opt_level speed runs loop-form and licm before lowering: the loop
// invariant (inst 4 below: v5 = bxor v1, v0; not an imul, which AArch64
// would fuse with the add into a madd) is then computed in the preheader,
// before the code of the loop body (block2); at none inside it. Both give
// the same results, and the caller's function is not edited.
TEST(JitModuleTest, OptLevelSpeedRunsThePipelineOnACopy) {
    auto f = parse_one(R"(
function %sumxor(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v2, v2)
block1(v3: i64, v4: i64):
    v6 = icmp ult v3, v0
    brif v6, block2, block3
block2:
    v5 = bxor v1, v0
    v7 = iadd v4, v5
    v8 = iconst.i64 1
    v9 = iadd v3, v8
    jump block1(v9, v7)
block3:
    return v4
})");
    const std::string before = print_function(*f);
    const uint32_t kInvariant = 4;
    ASSERT_EQ(print_inst(*f, Inst(kInvariant)), "v5 = bxor v1, v0");
    for (OptLevel level : {OptLevel::None, OptLevel::Speed}) {
        JITBuilder b = checked();
        b.opt_level(level).verify_passes(true);
        JITModule jit(std::move(b));
        EXPECT_EQ(jit.opt_level(), level);
        FuncId id = define(jit, *f);
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        auto* fn = jit.get_function<int64_t(int64_t, int64_t)>(id);
        EXPECT_EQ(fn(5, 3), 5 * (3 ^ 5));
        EXPECT_EQ(fn(0, 3), 0);
        const CompiledCode* code = jit.compiled_code(id);
        ASSERT_NE(code, nullptr);
        const uint32_t inv = code_offset(*code, kInvariant);
        uint32_t body = ~0u;
        for (const auto& [offset, name] : code->labels) {
            if (name == "block2") body = offset;
        }
        ASSERT_NE(inv, ~0u);
        ASSERT_NE(body, ~0u);
        if (level == OptLevel::Speed) {
            EXPECT_LT(inv, body) << "hoisted into the preheader";
        } else {
            EXPECT_GE(inv, body) << "lowered where it was written";
        }
    }
    EXPECT_EQ(print_function(*f), before);
}

// Calls link by the declared name. A function declared as %sum whose IR
// is named %fib calls the module's %fib, not itself: at opt_level speed
// tail-accumulate must not turn those calls into its own loop.
TEST(JitModuleTest, OptLevelSpeedKeepsCallsToTheIrNameWhenDeclaredUnderAnother) {
    auto callee = parse_one(R"(
function %fib(i64) -> i64 system_v {
block0(v0: i64):
    v1 = iconst.i64 100
    v2 = iadd v0, v1
    return v2
})");
    auto caller = parse_one(R"(
function %fib(i64) -> i64 system_v {
    fn0 = %fib(i64) -> i64 system_v
block0(v0: i64):
    v1 = iconst.i64 2
    v2 = icmp slt v0, v1
    brif v2, block2(v0), block1
block1:
    v3 = iconst.i64 1
    v4 = isub v0, v3
    v5 = call fn0(v4)
    v6 = isub v0, v1
    v7 = call fn0(v6)
    v8 = iadd v5, v7
    jump block2(v8)
block2(v9: i64):
    return v9
})");
    for (OptLevel level : {OptLevel::None, OptLevel::Speed}) {
        JITBuilder b = checked();
        b.opt_level(level).verify_passes(true);
        JITModule jit(std::move(b));
        define(jit, *callee);
        auto sum = jit.declare_function("sum", Linkage::Export, caller->signature);
        ASSERT_TRUE(sum.ok());
        auto err = jit.define_function(sum.value(), *caller);
        ASSERT_FALSE(err.has_value()) << err->message;
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        auto* fn = jit.get_function<int64_t(int64_t)>(sum.value());
        EXPECT_EQ(fn(5), 104 + 103) << opt_level_name(level);
        EXPECT_EQ(fn(1), 1) << opt_level_name(level);
        EXPECT_EQ(fn(10), 109 + 108) << opt_level_name(level);
    }
}

// An irreducible function has no natural loops for the pipeline: at
// opt_level speed it is compiled as written, not rejected.
TEST(JitModuleTest, OptLevelSpeedCompilesIrreducibleFunctions) {
    auto f = parse_one(R"(
function %irr(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    brif v0, block1(v1), block2(v1)
block1(v2: i64):
    v3 = iconst.i64 3
    v4 = isub v2, v3
    v5 = icmp sgt v4, v3
    brif v5, block2(v4), block3(v4)
block2(v6: i64):
    v7 = iconst.i64 1
    v8 = isub v6, v7
    v9 = icmp sgt v8, v7
    brif v9, block1(v8), block3(v8)
block3(v10: i64):
    return v10
})");
    JITBuilder b = checked();
    b.opt_level(OptLevel::Speed).verify_passes(true);
    JITModule jit(std::move(b));
    FuncId id = define(jit, *f);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    Interpreter interp;
    interp.add_function(*f);
    for (int64_t entry : {0, 1}) {
        for (int64_t x : {0, 5, 20, 101}) {
            const DataValue args[] = {DataValue::i64(entry), DataValue::i64(x)};
            InterpOutcome want = interp.call(*f, args);
            ASSERT_EQ(want.kind, InterpOutcome::Kind::Return);
            JitCallOutcome got = jit.call(id, args);
            ASSERT_EQ(got.kind, JitCallOutcome::Kind::Return) << got.message;
            EXPECT_EQ(got.values[0], want.values[0]) << "irr(" << entry << ", " << x << ")";
        }
    }
}

int64_t host_triple(int64_t x) { return 3 * x; }

TEST(JitModuleTest, CallsHostSymbols) {
    auto f = parse_one(R"(
function %use_host(i64) -> i64 system_v {
    fn0 = %host_triple(i64) -> i64 system_v
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iconst.i64 1
    v3 = iadd v1, v2
    return v3
})");
    JITBuilder b = checked();
    b.symbol("host_triple", reinterpret_cast<const void*>(&host_triple));
    JITModule jit(b);
    FuncId id = define(jit, *f);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    EXPECT_EQ(jit.get_function<int64_t(int64_t)>(id)(5), 16);
}

TEST(JitModuleTest, UnresolvedSymbolIsAnErrorAndInstallsNothing) {
    auto f = parse_one(R"(
function %broken() -> i64 system_v {
    fn0 = %no_such_symbol_anywhere_42() -> i64 system_v
block0:
    v0 = call fn0()
    return v0
})");
    JITModule jit(checked());
    FuncId id = define(jit, *f);
    auto err = jit.finalize_definitions();
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->message.find("no_such_symbol_anywhere_42"), std::string::npos) << err->message;
    EXPECT_EQ(jit.get_finalized_function(id), nullptr);
}

// A call declared with another signature than the callee's is refused at
// finalize, naming the caller and both signatures, and nothing of the
// batch is installed; the callee defined in an earlier batch counts too.
TEST(JitModuleTest, CallSignatureMismatchIsALinkErrorNamingBoth) {
    auto g = parse_one(R"(
function %g(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
})");
    auto caller = parse_one(R"(
function %caller(i64) -> i64 system_v {
    fn0 = %g(i64) -> i64 system_v
block0(v0: i64):
    v1 = call fn0(v0)
    return v1
})");
    const std::string want =
        "%caller calls %g as (i64) -> i64 system_v but %g is declared as (i64, i64) -> i64 system_v";
    {
        JITModule jit(checked());
        FuncId gid = define(jit, *g);
        FuncId cid = define(jit, *caller);
        auto err = jit.finalize_definitions();
        ASSERT_TRUE(err.has_value());
        EXPECT_EQ(err->message, want);
        EXPECT_EQ(jit.get_finalized_function(gid), nullptr);
        EXPECT_EQ(jit.get_finalized_function(cid), nullptr);
    }
    {
        // The callee installed first, the caller in a later batch.
        JITModule jit(checked());
        FuncId gid = define(jit, *g);
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        FuncId cid = define(jit, *caller);
        auto err = jit.finalize_definitions();
        ASSERT_TRUE(err.has_value());
        EXPECT_EQ(err->message, want);
        EXPECT_EQ(jit.get_finalized_function(cid), nullptr);
        EXPECT_NE(jit.get_finalized_function(gid), nullptr) << "earlier code stays";
        EXPECT_EQ(jit.get_function<int64_t(int64_t, int64_t)>(gid)(2, 3), 5);
        // The failed definition stays pending until it is replaced.
        auto fixed = parse_one(R"(
function %caller(i64) -> i64 system_v {
    fn0 = %g(i64, i64) -> i64 system_v
block0(v0: i64):
    v1 = call fn0(v0, v0)
    return v1
})");
        ASSERT_FALSE(jit.define_function(cid, *fixed).has_value());
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        EXPECT_EQ(jit.get_function<int64_t(int64_t)>(cid)(4), 8);
    }
    {
        // A matching declaration links; a host symbol of the same shape is
        // not checked (it has no signature).
        auto good = parse_one(R"(
function %caller(i64) -> i64 system_v {
    fn0 = %g(i64, i64) -> i64 system_v
    fn1 = %host_triple(i64, i64, i64) -> i64 system_v
block0(v0: i64):
    v1 = call fn0(v0, v0)
    v2 = call fn1(v1, v0, v0)
    return v2
})");
        JITBuilder b = checked();
        b.symbol("host_triple", reinterpret_cast<const void*>(&host_triple));
        JITModule jit(b);
        define(jit, *g);
        FuncId cid = define(jit, *good);
        auto err = jit.finalize_definitions();
        ASSERT_FALSE(err.has_value()) << err->message;
        EXPECT_EQ(jit.get_function<int64_t(int64_t)>(cid)(7), 42);
    }
}

TEST(JitModuleTest, RedefinitionUpdatesCallers) {
    auto callee1 = parse_one(R"(
function %k() -> i64 system_v {
block0:
    v0 = iconst.i64 1
    return v0
})");
    auto callee2 = parse_one(R"(
function %k() -> i64 system_v {
block0:
    v0 = iconst.i64 2
    return v0
})");
    auto caller = parse_one(R"(
function %caller() -> i64 system_v {
    fn0 = %k() -> i64 system_v
block0:
    v0 = call fn0()
    v1 = iconst.i64 100
    v2 = iadd v0, v1
    return v2
})");
    JITModule jit(checked());
    FuncId k = define(jit, *callee1);
    FuncId c = define(jit, *caller);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    EXPECT_EQ(jit.get_function<int64_t()>(c)(), 101);
    ASSERT_FALSE(jit.define_function(k, *callee2).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    EXPECT_EQ(jit.get_function<int64_t()>(k)(), 2);
    EXPECT_EQ(jit.get_function<int64_t()>(c)(), 102) << "the caller must reach the new definition";
    ASSERT_FALSE(jit.free_function(k).has_value());
    EXPECT_EQ(jit.get_finalized_function(k), nullptr);
}

// Redefining one function over and over (as BM_EndToEnd does) reuses the
// module's buffers, code pages and trap-registry entries: each version
// still runs and traps as itself, exactly one trap range stays registered
// for the function, the kept CompiledCode is the version's own, and a
// failed or replaced definition leaves the installed version alone.
TEST(JitModuleTest, RepeatedRedefinitionKeepsCodeAndTrapsRight) {
    auto divider = parse_one(R"(
function %f(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    v2 = sdiv v0, v1
    v3 = iconst.i64 1000
    v4 = iadd v2, v3
    return v4
})");
    constexpr std::string_view kAdder = R"(
function %f(i64, i64) -> i64 system_v {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
})";
    auto adder = parse_one(kAdder);
    auto broken = parse_one(kAdder);
    // A third entry block parameter, which the signature does not have.
    broken->dfg.append_block_param(broken->layout.entry_block().value(), types::I32);
    JITModule jit(checked());
    FuncId id = define(jit, *adder);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    // The call trampoline of this signature is made (and registered) once.
    DataValue args[] = {DataValue::i64(1), DataValue::i64(2)};
    ASSERT_EQ(jit.call(id, args).values.at(0), DataValue::i64(3));
    const size_t ranges = TrapRegistry::global().num_ranges();
    const std::vector<uint8_t> adder_bytes = jit.compiled_code(id)->bytes;
    std::vector<uint8_t> divider_bytes;
    // More versions than a code chunk has pages, so pages are reused too.
    for (int round = 0; round < 600; ++round) {
        const bool divides = round % 2 == 0;
        if (round % 7 == 3) {
            // A definition replaced before it is installed.
            ASSERT_FALSE(jit.define_function(id, divides ? *adder : *divider).has_value());
        }
        if (round % 5 == 1) {
            auto e = jit.define_function(id, *broken);
            ASSERT_TRUE(e.has_value()) << "round " << round;
            EXPECT_NE(e->message.find("does not verify"), std::string::npos) << e->message;
        }
        ASSERT_FALSE(jit.define_function(id, divides ? *divider : *adder).has_value());
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        ASSERT_EQ(TrapRegistry::global().num_ranges(), ranges) << "round " << round;
        auto* fn = jit.get_function<int64_t(int64_t, int64_t)>(id);
        if (divides) {
            if (divider_bytes.empty()) divider_bytes = jit.compiled_code(id)->bytes;
            ASSERT_EQ(jit.compiled_code(id)->bytes, divider_bytes) << "round " << round;
            EXPECT_FALSE(jit.compiled_code(id)->trap_sites.empty()) << "the division's trap sites";
            ASSERT_EQ(fn(84, 2), 1042) << "round " << round;
            if (round % 50 == 0) {
                DataValue zero[] = {DataValue::i64(5), DataValue::i64(0)};
                JitCallOutcome r = jit.call(id, zero);
                ASSERT_EQ(r.kind, JitCallOutcome::Kind::Trap) << r.message;
                EXPECT_EQ(r.trap.code, TrapCode::integer_division_by_zero());
                EXPECT_EQ(r.trap.function, "f");
            }
        } else {
            ASSERT_EQ(jit.compiled_code(id)->bytes, adder_bytes) << "round " << round;
            EXPECT_TRUE(jit.compiled_code(id)->trap_sites.empty());
            ASSERT_EQ(fn(84, 2), 86) << "round " << round;
        }
    }
    ASSERT_FALSE(jit.free_function(id).has_value());
    EXPECT_EQ(TrapRegistry::global().num_ranges(), ranges - 1);
}

/// `%g{i}(a) = a * 3 + k`, with `extra` pairs of `+ a - a` (longer code).
std::string batch_body(int i, int64_t k, int extra) {
    std::string t = "function %g" + std::to_string(i) + "(i64) -> i64 system_v {\nblock0(v0: i64):\n";
    t += "    v1 = iconst.i64 3\n    v2 = imul v0, v1\n";
    t += "    v3 = iconst.i64 " + std::to_string(k) + "\n    v4 = iadd v2, v3\n";
    int last = 4;
    for (int e = 0; e < extra; ++e) {
        t += "    v" + std::to_string(last + 1) + " = iadd v" + std::to_string(last) + ", v0\n";
        t += "    v" + std::to_string(last + 2) + " = isub v" + std::to_string(last + 1) + ", v0\n";
        last += 2;
    }
    return t + "    return v" + std::to_string(last) + "\n}\n";
}

TEST(JitModuleTest, BatchesOfRedefinitionsReuseBuffersCorrectly) {
    // More functions per finalize than the module keeps spare buffers of
    // any size, with bodies of changing lengths: every recycled buffer
    // held another function's (longer or shorter) code before.
    constexpr int kFuncs = 24;
    Context ctx(host_isa());
    JITModule jit(checked());
    std::vector<FuncId> ids;
    for (int i = 0; i < kFuncs; ++i) {
        auto f = parse_one(batch_body(i, i, 0));
        ids.push_back(define(jit, *f));
    }
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    for (int round = 1; round <= 6; ++round) {
        std::vector<std::vector<uint8_t>> fresh(kFuncs);
        for (int i = 0; i < kFuncs; ++i) {
            const int extra = (i + round) % 4 * 3;
            auto f = parse_one(batch_body(i, 100 * round + i, extra));
            ASSERT_FALSE(jit.define_function(ids[i], *f).has_value());
            // The bytes of a compile into a new buffer.
            CompiledCode code;
            ASSERT_EQ(error_text(ctx.compile(*f, code)), "");
            fresh[i] = code.bytes;
        }
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        for (int i = 0; i < kFuncs; ++i) {
            ASSERT_EQ(jit.compiled_code(ids[i])->bytes, fresh[i]) << "round " << round << ", g" << i;
            auto* fn = jit.get_function<int64_t(int64_t)>(ids[i]);
            ASSERT_EQ(fn(5), 15 + 100 * round + i) << "round " << round << ", g" << i;
        }
    }
}

// compiled_code() points at an object that stays where it is while other
// functions are defined and installed (the module keeps every function's
// code in a slot of its own), and shows the installed version until a
// pending redefinition is installed.
TEST(JitModuleTest, CompiledCodeStaysPutAcrossOtherDefinitions) {
    JITModule jit(checked());
    auto first = parse_one(batch_body(0, 1, 0));
    const FuncId id = define(jit, *first);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    const CompiledCode* code = jit.compiled_code(id);
    ASSERT_NE(code, nullptr);
    const std::vector<uint8_t> bytes = code->bytes;
    for (int round = 0; round < 3; ++round) {
        for (int i = 1; i < 40; ++i) {
            auto f = parse_one(batch_body(i, i, i % 3));
            define(jit, *f);
        }
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        ASSERT_EQ(jit.compiled_code(id), code) << round;
        ASSERT_EQ(code->bytes, bytes) << round;
    }
    auto second = parse_one(batch_body(0, 7, 6));
    ASSERT_FALSE(jit.define_function(id, *second).has_value());
    EXPECT_EQ(jit.compiled_code(id)->bytes, bytes) << "pending, not installed yet";
    EXPECT_EQ(jit.get_function<int64_t(int64_t)>(id)(5), 16);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    EXPECT_NE(jit.compiled_code(id)->bytes, bytes);
    EXPECT_EQ(jit.get_function<int64_t(int64_t)>(id)(5), 22);
}

TEST(JitModuleTest, TrapsAreReportedWithCodeAndFunction) {
    auto f = parse_one(R"(
function %div(i32, i32) -> i32 system_v {
block0(v0: i32, v1: i32):
    v2 = sdiv v0, v1
    return v2
})");
    JITModule jit(checked());
    FuncId id = define(jit, *f);
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    DataValue args[] = {DataValue::i32(7), DataValue::i32(0)};
    JitCallOutcome r = jit.call(id, args);
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Trap) << r.message;
    EXPECT_EQ(r.trap.code, TrapCode::integer_division_by_zero());
    EXPECT_EQ(r.trap.function, "div");
    DataValue ovf[] = {DataValue::i32(INT32_MIN), DataValue::i32(-1)};
    r = jit.call(id, ovf);
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Trap) << r.message;
    EXPECT_EQ(r.trap.code, TrapCode::integer_overflow());
    DataValue ok[] = {DataValue::i32(-7), DataValue::i32(2)};
    r = jit.call(id, ok);
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Return) << r.message;
    EXPECT_EQ(r.values[0], DataValue::i32(-3));
}

// Where each activation of %sp_ping / %sp_pong put its stack slot.
struct SlotAddresses {
    int64_t first = 0;
    int64_t calls = 0;
    int64_t moved = 0;  // activations whose slot was elsewhere than the first's
    void record(int64_t addr) {
        if (calls++ == 0) first = addr;
        else if (addr != first) ++moved;
    }
};
SlotAddresses g_ping_slots, g_pong_slots;
int64_t record_ping_sp(int64_t addr) {
    g_ping_slots.record(addr);
    return 0;
}
int64_t record_pong_sp(int64_t addr) {
    g_pong_slots.record(addr);
    return 0;
}

// A million tail calls between two functions with stack arguments (13 and
// 21 integers: the area grows on every ping -> pong and shrinks back on
// every pong -> ping) run in constant stack space: each function's frame,
// seen through the address of its stack slot, is at the same place in every
// activation. With calls instead of tail calls the frames would pile up (and
// a million of them overflow the stack).
TEST(JitModuleTest, TailCallsWithStackArgumentsKeepTheStackPointer) {
    Diagnostics errs;
    auto fs = parse_functions(R"(
function %sp_ping(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    ss0 = explicit_slot 8
    fn0 = %record_ping_sp(i64) -> i64 system_v
    fn1 = %sp_pong(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64, v10: i64, v11: i64, v12: i64):
    v13 = stack_addr.i64 ss0
    v14 = call fn0(v13)
    brif v0, block1, block2
block1:
    v15 = iconst.i64 1
    v16 = isub v0, v15
    v17 = iadd v1, v12
    return_call fn1(v16, v17, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v1, v2, v3, v4, v5, v6, v7, v8)
block2:
    return v1
}
function %sp_pong(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    ss0 = explicit_slot 8
    fn0 = %record_pong_sp(i64) -> i64 system_v
    fn1 = %sp_ping(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64, v10: i64, v11: i64, v12: i64, v13: i64, v14: i64, v15: i64, v16: i64, v17: i64, v18: i64, v19: i64, v20: i64):
    v21 = stack_addr.i64 ss0
    v22 = call fn0(v21)
    brif v0, block1, block2
block1:
    v23 = iconst.i64 1
    v24 = isub v0, v23
    v25 = iadd v1, v20
    return_call fn1(v24, v25, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12)
block2:
    return v1
}
)", errs);
    ASSERT_TRUE(errs.empty()) << errs[0].format("text");
    ASSERT_EQ(fs.size(), 2u);
    JITBuilder b = checked();
    b.symbol("record_ping_sp", reinterpret_cast<const void*>(&record_ping_sp));
    b.symbol("record_pong_sp", reinterpret_cast<const void*>(&record_pong_sp));
    JITModule jit(b);
    FuncId ping = define(jit, *fs[0]);
    define(jit, *fs[1]);
    ASSERT_FALSE(jit.finalize_definitions().has_value());

    // The same hops in C++ (wrapping arithmetic).
    constexpr int64_t kHops = 1000000;
    std::vector<uint64_t> a(13);
    a[0] = kHops;
    for (size_t k = 1; k < 13; ++k) a[k] = k * 1000003 + (k << 40);
    std::vector<DataValue> args;
    for (uint64_t x : a) args.push_back(DataValue::i64(static_cast<int64_t>(x)));
    uint64_t expected = 0;
    for (std::vector<uint64_t> cur = a;;) {
        if (cur[0] == 0) {
            expected = cur[1];
            break;
        }
        std::vector<uint64_t> next{cur[0] - 1, cur[1] + cur.back()};
        if (cur.size() == 13) {  // ping -> pong
            next.insert(next.end(), cur.begin() + 2, cur.begin() + 13);
            next.insert(next.end(), cur.begin() + 1, cur.begin() + 9);
        } else {  // pong -> ping
            next.insert(next.end(), cur.begin() + 2, cur.begin() + 13);
        }
        cur = std::move(next);
    }

    g_ping_slots = {};
    g_pong_slots = {};
    JitCallOutcome r = jit.call(ping, args);
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Return) << r.message;
    ASSERT_EQ(r.values.size(), 1u);
    EXPECT_EQ(static_cast<uint64_t>(r.values[0].bits), expected);
    EXPECT_EQ(g_ping_slots.calls, kHops / 2 + 1);
    EXPECT_EQ(g_pong_slots.calls, kHops / 2);
    EXPECT_EQ(g_ping_slots.moved, 0) << "ping's frame moved";
    EXPECT_EQ(g_pong_slots.moved, 0) << "pong's frame moved";
    // pong's frame replaces ping's, so the two are close: apart by the
    // difference in their argument areas, not by piled-up frames.
    EXPECT_LT(std::abs(g_ping_slots.first - g_pong_slots.first), 1024);
}

TEST(JitModuleTest, InvalidIrIsRejectedWithVerifierMessage) {
    auto f = parse_one(R"(
function %bad(i32) -> i64 system_v {
block0(v0: i32):
    return v0
})");
    JITModule jit(checked());
    auto id = jit.declare_function("bad", Linkage::Export, f->signature);
    ASSERT_TRUE(id.ok());
    auto err = jit.define_function(id.value(), *f);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->message.find("does not verify"), std::string::npos) << err->message;
}

#if defined(__x86_64__)
// The fallbacks for CPUs without LZCNT/BMI1/POPCNT/SSE4.1/FMA: the run
// directives of the affected opcode families pass on a baseline x86-64.
TEST(JitModuleTest, BaselineCpuFallbacksPassTheRunTests) {
    const char* files[] = {"clz-cls-ctz.clif", "popcnt.clif", "rounding.clif", "sqrt-fma.clif"};
    for (const char* name : files) {
        std::string path = std::string(HERON_SOURCE_DIR) + "/tests/filetests/run/" + name;
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        ASSERT_FALSE(ss.str().empty()) << path;
        tools::FileTestOptions opts;
        opts.isa = "x86_64-baseline";
        std::string out;
        tools::FileTestStats s = tools::run_file_test(path, ss.str(), opts, out);
        EXPECT_EQ(s.failed, 0u) << out;
        EXPECT_GT(s.passed, 100u) << name;
    }
}
#endif  // __x86_64__

}  // namespace
}  // namespace heron
