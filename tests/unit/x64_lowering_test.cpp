// x86-64 lowering and emission: expected VCode (the allocator's input, as
// `heron compile --vcode` prints it) and expected machine code for the
// fusions and code-quality rules of docs/backend-x64.md. Each test names
// the rule it pins down; the run-time behaviour of the same code is covered
// by the file tests and the JIT differential test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/isa/x64/encoder.h"
#include "codegen/isa/x64/lower.h"
#include "codegen/opt/pipeline.h"
#include "codegen/machinst/isa.h"
#include "codegen/verifier/verifier.h"
#include "jit/jit_module.h"
#include "tools/cli.h"
#include "tools/disasm_x64.h"

namespace heron {
namespace {

std::unique_ptr<Function> parse_one(const std::string& text) {
    Diagnostics errs;
    auto funcs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << text;
    EXPECT_EQ(funcs.size(), 1u);
    VerifierErrors verrs;
    EXPECT_TRUE(verify_function(*funcs.at(0), verrs)) << format_verifier_errors(verrs);
    return std::move(funcs.at(0));
}

std::string vcode_of(const std::string& text, x64::Settings settings = x64::Settings::host()) {
    auto f = parse_one(text);
    x64::VCode vc;
    std::string err = x64::lower_function(*f, settings, vc);
    EXPECT_EQ(err, "");
    return vc.to_string();
}

/// The full disassembly (offsets, bytes, text, block labels), after the IR
/// pipeline of `level`.
std::string full_asm_of(const std::string& text, OptLevel level = OptLevel::None) {
    auto f = parse_one(text);
    CompiledCode code;
    CompileOptions opts;
    opts.opt_level = level;
    opts.verify_passes = true;
    opts.check_regalloc = true;
    std::string err = error_text(Context(host_isa(), opts).compile(*f, code));
    EXPECT_EQ(err, "");
    std::map<uint64_t, std::string> labels;
    for (const auto& [off, name] : code.labels) labels[off] = name;
    return tools::disassemble_x64(code.bytes.data(), code.bytes.size(), 0, labels);
}

/// The disassembly, without offsets and bytes: one "text" line per
/// instruction, labels as "blockN:".
std::string asm_of(const std::string& text, OptLevel level = OptLevel::None) {
    std::string full = full_asm_of(text, level);
    // "  0000:  48 89 d8              mov rax, rbx" -> "mov rax, rbx"
    std::string out;
    size_t pos = 0;
    while (pos < full.size()) {
        size_t end = full.find('\n', pos);
        if (end == std::string::npos) end = full.size();
        std::string line = full.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == ':') {
            out += line + "\n";
            continue;
        }
        if (line.size() > 30) out += line.substr(30) + "\n";
    }
    return out;
}

TEST(X64LoweringTest, InstructionsComeOutInProgramOrderWithArgsBeforeStackLoads) {
    // Lowering runs backwards and builds the arrays back to front: the
    // group of an IR instruction (iabs: neg then cmov) keeps its order, and
    // the Args pseudo-instruction precedes the loads of stack arguments.
    // Each value lowers into the vreg of its own number (v9 -> r9) and
    // temporaries number after the values (iabs's r10), so the listing is
    // the same whichever compiler built Heron (g++ and clang evaluate call
    // arguments in different orders).
    EXPECT_EQ(vcode_of(R"(
function %f(i64, i64, i64, i64, i64, i64, i64, i64) -> i64 {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64):
    v8 = iabs v7
    v9 = iadd v8, v6
    return v9
}
)"),
              "vblock0 (block0):\n"
              "  0: args -> r0:p7, r1:p6, r2:p2, r3:p1, r4:p8, r5:p9\n"
              "  1: load -> r6\n"
              "  2: load -> r7\n"
              "  3: unary r7 -> r10:reuse0\n"
              "  4: cmov r7, r10 -> r8:reuse1\n"
              "  5: alu r8, r6 -> r9:reuse0\n"
              "  6: ret r9:p0\n");
}

TEST(X64LoweringTest, BlocksAndEdgesKeepTheirInstructions) {
    // Two blocks and a split critical edge: each block's instructions stay
    // within its range, the edge block holds only its jump.
    EXPECT_EQ(vcode_of(R"(
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 10
    v2 = icmp ult v0, v1
    brif v2, block1(v0), block2
block2:
    v3 = iadd v0, v0
    jump block1(v3)
block1(v4: i64):
    return v4
}
)"),
              "vblock0 (block0):\n"
              "  0: args -> r0:p7\n"
              "  1: cmp r0\n"
              "  2: j b vblock1, vblock2\n"
              "vblock1:\n"
              "  3: jmp vblock3\n"
              "    ; to vblock3: r0\n"
              "vblock2 (block2):\n"
              "  4: alu r0, r0 -> r3:reuse0\n"
              "  5: jmp vblock3\n"
              "    ; to vblock3: r3\n"
              "vblock3 (block1): r4\n"
              "  6: ret r4:p0\n");
}

TEST(X64LoweringTest, OperandsBeyondTheFirstEstimateGrowTheBuffer) {
    // Lowering writes operands into a buffer of the context sized from the
    // IR's counts (about three per instruction); calls with many arguments
    // need far more, so a fresh context grows it in the middle of the
    // function. The VCode must be the same as from a context whose buffer
    // is already large enough, and the allocator must accept it.
    constexpr int kArgs = 40, kCalls = 6;
    std::string params, args;
    for (int k = 0; k < kArgs; ++k) {
        params += std::string(k ? ", " : "") + "i64";
        args += std::string(k ? ", " : "") + (k % 2 ? "v1" : "v0");
    }
    std::string text = "function %f(i64, i64) -> i64 {\n    fn0 = %g(" + params + ") -> i64\nblock0(v0: i64, v1: i64):\n";
    std::string sum = "v0";
    for (int c = 0; c < kCalls; ++c) {
        std::string r = "v" + std::to_string(10 + 2 * c), s = "v" + std::to_string(11 + 2 * c);
        text += "    " + r + " = call fn0(" + args + ")\n    " + s + " = iadd " + sum + ", " + r + "\n";
        sum = s;
    }
    text += "    return " + sum + "\n}\n";
    auto f = parse_one(text);
    LowerContext ctx;
    x64::VCode fresh, again;
    ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), fresh, ctx), "");
    // Far more operands than the first estimate (3 per IR instruction,
    // vblock and spare): the buffer grew.
    EXPECT_GT(fresh.ra.operands.size(), 3u * (f->dfg.num_insts() + 2 + 8));
    ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), again, ctx), "");
    EXPECT_EQ(fresh.to_string(), again.to_string());
    EXPECT_EQ(fresh.ra.operands_begin.back(), fresh.ra.operands.size());
    ra::Output out;
    ra::Context rctx;
    ASSERT_EQ(ra::allocate(fresh.ra, x64::machine_env(), out, rctx), "");
    EXPECT_EQ(ra::check(fresh.ra, x64::machine_env(), out), "");
    // Each call passes 6 arguments in registers and stores the other 34.
    size_t stores = 0;
    for (const x64::MInst& m : fresh.insts) stores += m.op == x64::Op::Store;
    EXPECT_EQ(stores, size_t{kCalls} * (kArgs - 6));
}

TEST(X64LoweringTest, InstructionsBeyondTheFirstEstimateGrowTheBuffer) {
    // Machine instructions are written back to front into a buffer of the
    // context sized from the IR (about one per IR instruction); an integer
    // bitselect is three (xor, and, xor), so a fresh context grows the
    // buffer in the middle of the function. The VCode must be in program
    // order (each group xor/and/xor, IR instructions ascending) and the
    // same as from a context that is already large enough.
    constexpr int kSelects = 120;
    std::string text = "function %f(i64, i64, i64) -> i64 {\nblock0(v0: i64, v1: i64, v2: i64):\n";
    std::string last = "v2";
    for (int k = 0; k < kSelects; ++k) {
        std::string r = "v" + std::to_string(3 + k);
        text += "    " + r + " = bitselect v0, v1, " + last + "\n";
        last = r;
    }
    text += "    return " + last + "\n}\n";
    auto f = parse_one(text);
    LowerContext ctx;
    x64::VCode fresh, again;
    ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), fresh, ctx), "");
    EXPECT_GT(fresh.insts.size(), f->dfg.num_insts() + 2u + 8u);
    ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), again, ctx), "");
    EXPECT_EQ(fresh.to_string(), again.to_string());
    ASSERT_EQ(fresh.ra.operands_begin.size(), fresh.insts.size() + 1);
    EXPECT_EQ(fresh.ra.operands_begin.back(), fresh.ra.operands.size());
    // Args, then the selects in IR order, then the return.
    ASSERT_EQ(fresh.insts.size(), 3u * kSelects + 2);
    EXPECT_EQ(fresh.insts.front().op, x64::Op::Args);
    EXPECT_EQ(fresh.insts.back().op, x64::Op::Ret);
    const x64::AluOp pattern[] = {x64::AluOp::Xor, x64::AluOp::And, x64::AluOp::Xor};
    for (size_t i = 1; i + 1 < fresh.insts.size(); ++i) {
        const x64::MInst& m = fresh.insts[i];
        ASSERT_EQ(m.op, x64::Op::Alu) << i;
        EXPECT_EQ(static_cast<x64::AluOp>(m.sub), pattern[(i - 1) % 3]) << i;
        EXPECT_EQ(m.ir_inst, (i - 1) / 3) << i;
        EXPECT_EQ(fresh.ra.operands_begin[i + 1] - fresh.ra.operands_begin[i], 3u) << i;
    }
    ra::Output out;
    ra::Context rctx;
    ASSERT_EQ(ra::allocate(fresh.ra, x64::machine_env(), out, rctx), "");
    EXPECT_EQ(ra::check(fresh.ra, x64::machine_env(), out), "");
}

TEST(X64LoweringTest, AnInstructionThatCannotBeLoweredStopsWithItsMessage) {
    // A call whose `tail` callee would pop more than `ret imm16` can: the
    // instruction's error ends lowering with its message, and the context
    // then lowers the next function as a fresh one does.
    std::string params, args;
    for (int k = 0; k < 8200; ++k) {
        params += k ? ", i64" : "i64";
        args += k ? ", v0" : "v0";
    }
    auto bad = parse_one("function %f(i64) -> i64 {\n    fn0 = %g(" + params + ") -> i64 tail\nblock0(v0: i64):\n"
                         "    v1 = iadd v0, v0\n    v2 = call fn0(" + args + ")\n    v3 = iadd v1, v2\n    return v3\n}\n");
    auto good = parse_one(R"(
function %h(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = imul v0, v1
    brif v2, block1, block2
block1:
    v3 = iadd v2, v0
    return v3
block2:
    return v1
}
)");
    LowerContext ctx;
    x64::VCode vc, fresh;
    EXPECT_EQ(x64::lower_function(*bad, x64::Settings::host(), vc, ctx),
              "call to a tail-convention function with 65552 bytes of stack arguments (at most 65520)");
    ASSERT_EQ(x64::lower_function(*good, x64::Settings::host(), vc, ctx), "");
    ASSERT_EQ(x64::lower_function(*good, x64::Settings::host(), fresh), "");
    EXPECT_EQ(vc.to_string(), fresh.to_string());
}

TEST(X64LoweringTest, LoadsFoldIntoAluCompareAndFloatOperands) {
    // Each load has one use, in its block, with nothing in between that
    // stores, calls or may trap: it becomes the memory operand of its user
    // (commutative users take it on either side) and is not emitted alone.
    std::string vc = vcode_of(R"(
function %f(i64, i64, f64) -> i64, f64 {
block0(v0: i64, v1: i64, v2: f64):
    v3 = load.i64 v0
    v4 = iadd v3, v1
    v5 = load.i64 notrap v0+8
    v6 = isub v4, v5
    v7 = load.f64 notrap v0+16
    v8 = fmul v2, v7
    v9 = load.i64 notrap v0+24
    v10 = icmp ult v6, v9
    brif v10, block1, block2
block1:
    return v6, v8
block2:
    return v4, v8
}
)");
    EXPECT_EQ(vc.find("load"), std::string::npos) << vc;
    EXPECT_EQ(std::count(vc.begin(), vc.end(), '\n') > 0, true);
    size_t n_alu = 0, pos = 0;
    while ((pos = vc.find("alu_mem", pos)) != std::string::npos) ++n_alu, ++pos;
    EXPECT_EQ(n_alu, 3u) << vc;  // iadd, isub, fmul (falu_mem)
    EXPECT_NE(vc.find("falu_mem"), std::string::npos) << vc;
    EXPECT_NE(vc.find("cmp_mem"), std::string::npos) << vc;
}

TEST(X64LoweringTest, LoadsDoNotFoldAcrossStoresCallsTrapsOrSecondUses) {
    struct Case {
        const char* why;
        const char* body;
    };
    const Case cases[] = {
        {"a store between", "    v2 = load.i64 notrap v0\n    store notrap v1, v0+8\n    v3 = iadd v1, v2\n"},
        {"a trapping division between",
         "    v2 = load.i64 v0\n    v9 = udiv v1, v1\n    v3 = iadd v9, v2\n"},
        {"a second use", "    v2 = load.i64 notrap v0\n    v3 = iadd v1, v2\n    v4 = iadd v3, v2\n"},
        {"the same use twice", "    v2 = load.i64 notrap v0\n    v3 = iadd v2, v2\n"},
        {"another block", "    v2 = load.i64 notrap v0\n    jump block1\nblock1:\n    v3 = iadd v1, v2\n"},
    };
    for (const Case& c : cases) {
        std::string text = std::string("function %f(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n") + c.body;
        text += c.body == cases[2].body ? "    return v4\n}\n" : "    return v3\n}\n";
        std::string vc = vcode_of(text);
        EXPECT_EQ(vc.find("_mem"), std::string::npos) << c.why << "\n" << vc;
        EXPECT_NE(vc.find("load"), std::string::npos) << c.why << "\n" << vc;
    }
}

/// Compiles `text` (one function %g) in a JIT module and checks that its
/// code has exactly one trap site, that `ok` returns `want` and that `bad`
/// traps with heap_oob.
void expect_one_load_trap(const std::string& text, const std::vector<DataValue>& ok, int64_t want,
                          const std::vector<DataValue>& bad) {
    auto f = parse_one(text);
    JITModule jit;
    FuncId id = jit.declare_function("g", Linkage::Export, f->signature).value();
    ASSERT_FALSE(jit.define_function(id, *f).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    ASSERT_NE(jit.compiled_code(id), nullptr);
    EXPECT_EQ(jit.compiled_code(id)->trap_sites.size(), 1u) << text;
    JitCallOutcome r = jit.call(id, ok);
    ASSERT_EQ(r.kind, JitCallOutcome::Kind::Return) << r.message;
    EXPECT_EQ(r.values.at(0), DataValue::i64(want)) << text;
    JitCallOutcome t = jit.call(id, bad);
    ASSERT_EQ(t.kind, JitCallOutcome::Kind::Trap) << t.message;
    EXPECT_EQ(t.trap.code, TrapCode{TrapCode::kHeapOutOfBounds}) << text;
}

TEST(X64EmitTest, AFoldedLoadThatFaultsReportsItsTrap) {
    // The fault happens in the add that absorbed the load: its offset must
    // be a trap site, or the trap handler would not recognize it.
    int64_t cell = 40;
    expect_one_load_trap(R"(
function %g(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = load.i64 v0
    v3 = iadd v1, v2
    return v3
}
)",
                         {DataValue::i64(reinterpret_cast<int64_t>(&cell)), DataValue::i64(2)}, 42,
                         {DataValue::i64(0), DataValue::i64(2)});
    // The same with an indexed address, [v0 + v1*8 + 8].
    int64_t cells[4] = {1, 2, 40, 3};
    expect_one_load_trap(R"(
function %g(i64, i64, i64) -> i64 {
block0(v0: i64, v1: i64, v2: i64):
    v3 = iconst.i64 3
    v4 = ishl v1, v3
    v5 = iadd v0, v4
    v6 = load.i64 v5+8
    v7 = iadd v2, v6
    return v7
}
)",
                         {DataValue::i64(reinterpret_cast<int64_t>(cells)), DataValue::i64(1), DataValue::i64(2)}, 42,
                         {DataValue::i64(0), DataValue::i64(1), DataValue::i64(2)});
}

TEST(X64EmitTest, AddressesFoldBaseIndexScaleAndDisplacement) {
    // iadd base, (ishl i, 3) [+ const] is one x86 address, [base+i*8+disp],
    // for plain and extending loads, stores and a load folded into an add;
    // neither the shift nor the sums are computed on their own. A shift by
    // 4 has no x86 scale: it stays, and its sum is the index (scale 1).
    std::string a = asm_of(R"(
function %f(i64, i64, i64) -> i64 {
block0(v0: i64, v1: i64, v2: i64):
    v3 = iconst.i64 3
    v4 = ishl v1, v3
    v5 = iadd v0, v4
    v6 = load.i32 notrap v5
    v7 = sload32.i64 notrap v5+4
    v8 = uextend.i64 v6
    v9 = iadd v8, v7
    v10 = iconst.i64 16
    v11 = iadd v5, v10
    store notrap v9, v11
    v12 = load.i64 notrap v5+24
    v13 = iadd v9, v12
    v14 = iconst.i64 4
    v15 = ishl v2, v14
    v16 = iadd v15, v0
    v17 = uload8.i64 notrap v16
    v18 = iadd v13, v17
    return v18
}
)");
    // (The registers of the arguments are fixed; the others are the
    // allocator's choice.)
    EXPECT_NE(a.find(", [rdi+rsi*8]\n"), std::string::npos) << a;
    EXPECT_NE(a.find("movsxd "), std::string::npos) << a;
    EXPECT_NE(a.find("dword ptr [rdi+rsi*8+0x04]\n"), std::string::npos) << a;
    EXPECT_NE(a.find("mov [rdi+rsi*8+0x10], "), std::string::npos) << a;
    EXPECT_NE(a.find(", [rdi+rsi*8+0x18]\n"), std::string::npos) << a;
    EXPECT_NE(a.find("shl rdx, 0x04\n"), std::string::npos) << a;
    EXPECT_NE(a.find("byte ptr [rdx+rdi*1]\n"), std::string::npos) << a;
    size_t shifts = 0, adds = 0;
    for (size_t pos = 0; (pos = a.find("\n shl ", pos)) != std::string::npos; ++pos) ++shifts;
    for (size_t pos = 0; (pos = a.find("\n add ", pos)) != std::string::npos; ++pos) ++adds;
    EXPECT_EQ(shifts, 1u) << a;  // only the shift by 4
    EXPECT_EQ(adds, 3u) << a;    // v9, v13 (its load folded), v18
}

TEST(X64EmitTest, AddOfAConstantToAValueThatLivesOnIsOneLea) {
    // v0 - 1 while v0 is still needed: lea into another register instead
    // of a copy and a sub. v0 + 3 is its last use, but it is returned in
    // rdx: a lea too. v0 + 3 stored (not returned) is an add.
    std::string a = asm_of(R"(
function %f(i64) -> i64, i64 {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = isub v0, v1
    v3 = imul v2, v0
    v4 = iconst.i64 3
    v5 = iadd v0, v4
    return v3, v5
}
)");
    EXPECT_NE(a.find("lea "), std::string::npos) << a;
    EXPECT_NE(a.find(", [rdi-0x01]\n"), std::string::npos) << a;
    EXPECT_EQ(a.find(" sub "), std::string::npos) << a;
    EXPECT_NE(a.find("lea rdx, [rdi+0x03]\n"), std::string::npos) << a;
    a = asm_of(R"(
function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 1
    v3 = isub v0, v2
    v4 = imul v3, v0
    v5 = iconst.i64 3
    v6 = iadd v0, v5
    store v6, v1
    return v4
}
)");
    EXPECT_TRUE(std::regex_search(a, std::regex(R"( add \w+, 0x03\n)"))) << a;
}

TEST(X64EmitTest, ByteMasksAreMovzxAndTheirZeroExtensionIsFree) {
    // The CRC-32 loop: `band x, 0xff` is a movzx, the uextend.i64 of that
    // i32 (whose register has bits 32-63 clear) is a move the allocator
    // coalesces, and the bxor whose second operand dies takes that
    // operand's register instead of copying the crc, which lives on. The
    // loop is 6 instructions with no register-to-register move.
    std::string a = asm_of(R"(
function %crc32(i64, i64, i64) -> i32 {
block0(v0: i64, v1: i64, v2: i64):
    v3 = iconst.i32 0xffff_ffff
    v4 = iconst.i64 0
    v5 = iconst.i64 1
    v6 = iconst.i32 8
    v7 = iconst.i32 0xff
    v8 = iconst.i64 2
    jump block1(v4, v3)
block1(v9: i64, v10: i32):
    v11 = icmp ult v9, v1
    brif v11, block2, block3
block2:
    v12 = iadd v0, v9
    v13 = uload8.i32 notrap v12
    v14 = bxor v10, v13
    v15 = band v14, v7
    v16 = uextend.i64 v15
    v17 = ishl v16, v8
    v18 = iadd v2, v17
    v19 = load.i32 notrap v18
    v20 = ushr v10, v6
    v21 = bxor v19, v20
    v22 = iadd v9, v5
    jump block1(v22, v21)
block3:
    v23 = bnot v10
    return v23
}
)");
    size_t from = a.find("block2:\n"), to = a.find("block1:\n");
    ASSERT_NE(from, std::string::npos) << a;
    ASSERT_NE(to, std::string::npos) << a;
    ASSERT_LT(from, to) << a;
    std::string body = a.substr(from + 8, to - from - 8);
    EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), 6) << body;
    EXPECT_EQ(body.find(" and "), std::string::npos) << body;
    EXPECT_NE(body.find(" movzx "), std::string::npos) << body;
    EXPECT_FALSE(std::regex_search(body, std::regex(R"( mov [a-z0-9]+, [a-z0-9]+\n)"))) << body;
}

TEST(X64EmitTest, BrTableIndexFromA32BitLoadIsNotExtendedAgain) {
    // mov r32, [m] clears bits 32-63: the table index needs no mov r32, r32.
    // A big-endian load (bswap) is still extended (its value is tested by
    // the file tests; here only that the plain one has no self-move).
    std::string a = asm_of(R"(
function %t(i64) -> i64 {
block0(v0: i64):
    v1 = load.i32 notrap v0
    br_table v1, block1, [block2, block3]
block1:
    v2 = iconst.i64 1
    return v2
block2:
    v3 = iconst.i64 2
    return v3
block3:
    v4 = iconst.i64 3
    return v4
}
)");
    static const std::regex self_move(R"( mov (\w+), \1\n)");
    EXPECT_FALSE(std::regex_search(a, self_move)) << a;
}

TEST(X64EmitTest, BrTableBranchesToTheDefaultAndJumpsThroughR11) {
    // An index not below the table length branches to the default (no cmov
    // clamp); the table entry is added to the table address in r11, so the
    // dispatch takes no allocated register besides the index.
    std::string a = asm_of(R"(
function %t(i32, i64) -> i64 {
block0(v0: i32, v1: i64):
    br_table v0, block1, [block2, block3, block2]
block1:
    return v1
block2:
    v3 = iconst.i64 2
    return v3
block3:
    v4 = iadd v1, v1
    return v4
}
)");
    EXPECT_EQ(a.find("cmov"), std::string::npos) << a;
    EXPECT_NE(a.find("cmp rax, 0x03\n"), std::string::npos) << a;
    EXPECT_NE(a.find(" jnb "), std::string::npos) << a;
    EXPECT_NE(a.find("add r11, [r11+rax*8]\n"), std::string::npos) << a;
    EXPECT_NE(a.find("jmp r11\n"), std::string::npos) << a;
}

TEST(X64EmitTest, ShrinkWrappedBaseCaseReturnsBeforeThePrologue) {
    // fib as split-entry leaves it: the base case runs before the prologue
    // (no push, v0 still in rdi) and returns with a plain ret; the prologue
    // is at the top of the block with the calls. A leaf whose blocks need
    // no frame has no prologue at all.
    std::string fib = asm_of(R"(
function %fib(i64) -> i64 {
    fn0 = %fib(i64) -> i64
block0(v0: i64):
    v1 = iconst.i64 2
    v2 = icmp slt v0, v1
    brif v2, block2(v0), block1(v0)
block1(v20: i64):
    v3 = iconst.i64 1
    v4 = isub v20, v3
    v5 = call fn0(v4)
    v6 = iconst.i64 2
    v7 = isub v20, v6
    v8 = call fn0(v7)
    v9 = iadd v5, v8
    jump block2(v9)
block2(v10: i64):
    return v10
}
)");
    const size_t base = fib.find("cmp rdi, 0x02\n jnl ");
    ASSERT_NE(base, std::string::npos) << fib;
    const size_t ret = fib.find("mov rax, rdi\n ret\n", base);
    const size_t push = fib.find("push rbp\n mov rbp, rsp\n push rbx\n push r12\n");
    EXPECT_NE(ret, std::string::npos) << fib;
    EXPECT_NE(push, std::string::npos) << fib;
    EXPECT_LT(ret, push) << fib;
    EXPECT_EQ(fib.find("push rbp"), push) << fib;
    // The sum overwrites the second call's result in rax: no move after it.
    EXPECT_NE(fib.find("add rax, r12\n"), std::string::npos) << fib;
    EXPECT_NE(fib.find("lea rdi, [rbx-0x02]\n"), std::string::npos) << fib;
    std::string leaf = asm_of(R"(
function %sum_to(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v0, v1)
block1(v2: i64, v3: i64):
    brif v2, block2, block3(v3)
block2:
    v4 = iadd v3, v2
    v9 = iconst.i64 -1
    v5 = iadd v2, v9
    jump block1(v5, v4)
block3(v6: i64):
    return v6
}
)");
    EXPECT_EQ(leaf.find("rbp"), std::string::npos) << leaf;
    EXPECT_NE(leaf.find(" ret\n"), std::string::npos) << leaf;
}

TEST(X64EmitTest, OneBlockThatNeedsTheFrameKeepsItsPrologue) {
    // Shrink-wrapping's quick answers: a one-block function with no call
    // whose operands need the frame only through the allocation (16 values
    // live at once: callee-saved registers and spill slots) keeps its
    // prologue, and so does one whose only frame use is a stack slot's
    // address; a one-block function that needs nothing has none. Each runs
    // (a missing prologue would return through a clobbered rbx or stack).
    const std::string pressure = R"(
function %g(i64) -> i64 {
block0(v0: i64):
    v1 = iadd v0, v0
    v2 = iadd v1, v0
    v3 = iadd v2, v0
    v4 = iadd v3, v0
    v5 = iadd v4, v0
    v6 = iadd v5, v0
    v7 = iadd v6, v0
    v8 = iadd v7, v0
    v9 = iadd v8, v0
    v10 = iadd v9, v0
    v11 = iadd v10, v0
    v12 = iadd v11, v0
    v13 = iadd v12, v0
    v14 = iadd v13, v0
    v15 = iadd v14, v0
    v16 = iadd v15, v0
    v17 = iadd v1, v2
    v18 = iadd v17, v3
    v19 = iadd v18, v4
    v20 = iadd v19, v5
    v21 = iadd v20, v6
    v22 = iadd v21, v7
    v23 = iadd v22, v8
    v24 = iadd v23, v9
    v25 = iadd v24, v10
    v26 = iadd v25, v11
    v27 = iadd v26, v12
    v28 = iadd v27, v13
    v29 = iadd v28, v14
    v30 = iadd v29, v15
    v31 = iadd v30, v16
    return v31
}
)";
    std::string a = asm_of(pressure);
    const size_t push = a.find("push rbp\n mov rbp, rsp\n push rbx\n");
    ASSERT_NE(push, std::string::npos) << a;
    EXPECT_EQ(a.substr(0, push).find(", "), std::string::npos) << a;  // the prologue comes first
    EXPECT_NE(a.find("[rsp"), std::string::npos) << a;  // a spill slot
    const std::string slot = R"(
function %g(i64) -> i64 {
    ss0 = explicit_slot 8
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store.i64 notrap v0, v1
    v2 = load.i64 notrap v1
    return v2
}
)";
    std::string b = asm_of(slot);
    EXPECT_NE(b.find("push rbp\n mov rbp, rsp\n"), std::string::npos) << b;
    std::string c = asm_of("function %g(i64) -> i64 {\nblock0(v0: i64):\n    v1 = iadd v0, v0\n    return v1\n}\n");
    EXPECT_EQ(c.find("rbp"), std::string::npos) << c;
    for (const auto& [text, arg, want] : {std::tuple{pressure, int64_t{3}, int64_t{3 * 152}},
                                          std::tuple{slot, int64_t{-9}, int64_t{-9}}}) {
        auto f = parse_one(text);
        JITModule jit;
        FuncId id = jit.declare_function("g", Linkage::Export, f->signature).value();
        ASSERT_FALSE(jit.define_function(id, *f).has_value());
        ASSERT_FALSE(jit.finalize_definitions().has_value());
        const std::vector<DataValue> args{DataValue::i64(arg)};
        JitCallOutcome r = jit.call(id, args);
        ASSERT_EQ(r.kind, JitCallOutcome::Kind::Return) << r.message;
        EXPECT_EQ(r.values.at(0), DataValue::i64(want)) << text;
    }
}

TEST(X64EmitTest, CollatzStepIsLeaAndTestImmediate) {
    // x * 3 + 1 is one lea; select on x & 1 tests x with an immediate (no
    // and, no imul). A narrow mask is tested at the byte width.
    std::string a = asm_of(R"(
function %step(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 1
    v2 = iconst.i64 3
    v3 = band v0, v1
    v4 = imul v0, v2
    v5 = iadd v4, v1
    v6 = ushr v0, v1
    v7 = select v3, v5, v6
    return v7
}
)");
    EXPECT_TRUE(std::regex_search(a, std::regex(R"(lea \w+, \[rdi\+rdi\*2\+0x01\]\n)"))) << a;
    EXPECT_NE(a.find("test dil, 0x01\n"), std::string::npos) << a;
    EXPECT_EQ(a.find("imul"), std::string::npos) << a;
    EXPECT_EQ(a.find(" and "), std::string::npos) << a;
}

TEST(X64EmitTest, ByteFillLoopStoresSixteenBytesPerIterationAtSpeed) {
    // sieve's fill loop (widen-fill, codegen/opt/widen_fill.h): at
    // opt_level=speed the byte 1 replicated into a register is stored twice
    // per iteration, at [base+i] and [base+i+8], i += 16; the byte loop
    // stays for the rest. A trapping store is left byte by byte.
    const char* fill = R"(
function %fill(i64, i64) {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    v3 = iconst.i8 1
    v4 = iconst.i64 1
    jump block1(v2)
block1(v5: i64):
    v6 = icmp ult v5, v1
    brif v6, block2, block3
block2:
    v7 = iadd v0, v5
    store FLAGS v3, v7
    v8 = iadd v5, v4
    jump block1(v8)
block3:
    return
}
)";
    auto with_flags = [&](const std::string& flags) {
        std::string t = fill;
        t.replace(t.find("FLAGS"), 5, flags);
        return t;
    };
    const std::string a = asm_of(with_flags("notrap"), OptLevel::Speed);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(a, m, std::regex(R"(mov (r\w+), 0x101010101010101\n)"))) << a;
    const std::string splat = m[1];
    EXPECT_TRUE(std::regex_search(
        a, std::regex(R"(mov \[rdi\+(\w+)\*1\], )" + splat + R"(\n mov \[rdi\+\1\*1\+0x08\], )" + splat +
                      R"(\n add \1, 0x10\n)")))
        << a;
    EXPECT_TRUE(std::regex_search(a, std::regex(R"(mov \[rdi\+\w+\*1\], (\w+l|r\d+b)\n)"))) << a;  // the byte loop
    const std::string trapping = asm_of(with_flags(""), OptLevel::Speed);
    EXPECT_EQ(trapping.find("0x101010101010101"), std::string::npos) << trapping;
    EXPECT_EQ(trapping.find("0x08]"), std::string::npos) << trapping;
}

TEST(X64LoweringTest, AvxFloatArithmeticHasThreeOperandsAndNoCopy) {
    // With AVX, fadd/fsub/fmul/fdiv define a fresh register (vfalu ... -> fN,
    // not reuse0): a squared value read again needs no copy. Without
    // it, the two-address form reuses its first operand.
    const char* text = R"(
function %f(f64, f64) -> f64 {
block0(v0: f64, v1: f64):
    v2 = fmul v0, v0
    v3 = fsub v2, v0
    v4 = fdiv v3, v1
    v5 = fadd v4, v1
    return v5
}
)";
    x64::Settings avx = x64::Settings::baseline();
    avx.has_avx = true;
    const std::string with = vcode_of(text, avx);
    EXPECT_NE(with.find("vfalu f0, f0 -> f2\n"), std::string::npos) << with;
    EXPECT_NE(with.find("vfalu f2, f0 -> f3\n"), std::string::npos) << with;
    EXPECT_EQ(with.find("reuse0"), std::string::npos) << with;
    const std::string without = vcode_of(text, x64::Settings::baseline());
    EXPECT_EQ(without.find("vfalu"), std::string::npos) << without;
    EXPECT_NE(without.find("falu f0, f0 -> f2:reuse0\n"), std::string::npos) << without;
}

TEST(X64EncoderTest, VexThreeOperandScalarFormsDecodeAsWritten) {
    // enc::vex_rrr against the disassembler, for every operation and width
    // and registers on both sides of 8 in each position (two-byte VEX when
    // src2 < 8, three-byte otherwise).
    const char* names[] = {"add", "sub", "mul", "div"};
    const uint8_t ops[] = {0x58, 0x5C, 0x59, 0x5E};
    const uint8_t regs[] = {0, 3, 7, 8, 12, 15};
    for (int size : {4, 8}) {
        for (int k = 0; k < 4; ++k) {
            for (uint8_t d : regs) {
                for (uint8_t a : regs) {
                    for (uint8_t b : regs) {
                        uint8_t buf[8];
                        const uint8_t* end = x64::enc::vex_rrr(buf, size == 4 ? 2 : 3, ops[k], d, a, b);
                        EXPECT_EQ(static_cast<size_t>(end - buf), b < 8 ? 4u : 5u);
                        std::string text = tools::disassemble_x64(buf, static_cast<size_t>(end - buf), 0);
                        const std::string want = std::string("v") + names[k] + (size == 4 ? "ss" : "sd") + " xmm" +
                                                 std::to_string(d) + ", xmm" + std::to_string(a) + ", xmm" +
                                                 std::to_string(b);
                        EXPECT_NE(text.find(want + "\n"), std::string::npos) << want << "\n" << text;
                    }
                }
            }
        }
    }
}

TEST(X64EmitTest, AJumpToALoneReturnReturnsInPlaceAndNoFrameMeansNoRspRestore) {
    // fib's base case jumps to the return block: it gets its own epilogue
    // instead of the jump. Without a frame below the callee-saved pushes
    // rsp is already in place: the epilogue only pops.
    auto count = [](const std::string& a, const std::string& what) {
        size_t n = 0;
        for (size_t pos = 0; (pos = a.find(what, pos)) != std::string::npos; ++pos) ++n;
        return n;
    };
    std::string fib = asm_of(R"(
function %fib(i64) -> i64 {
    fn0 = %fib(i64) -> i64
block0(v0: i64):
    v1 = iconst.i64 2
    v2 = icmp slt v0, v1
    brif v2, block2(v0), block1
block1:
    v3 = iconst.i64 1
    v4 = isub v0, v3
    v5 = call fn0(v4)
    v6 = iconst.i64 2
    v7 = isub v0, v6
    v8 = call fn0(v7)
    v9 = iadd v5, v8
    jump block2(v9)
block2(v10: i64):
    return v10
}
)");
    EXPECT_EQ(count(fib, " ret\n"), 2u) << fib;
    EXPECT_EQ(count(fib, " jmp "), 0u) << fib;
    EXPECT_EQ(count(fib, " pop rbx\n"), 2u) << fib;
    EXPECT_EQ(count(fib, "rsp, "), 0u) << fib;  // no mov rsp, rbp or lea rsp
    // With an explicit slot the frame is taken down on each of the paths.
    std::string slot = asm_of(R"(
function %s(i64) -> i64 {
    ss0 = explicit_slot 16
block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store v0, v1
    brif v0, block1, block2
block1:
    v2 = load.i64 v1
    jump block3(v2)
block2:
    v3 = iconst.i64 5
    jump block3(v3)
block3(v4: i64):
    return v4
}
)");
    EXPECT_EQ(count(slot, " ret\n"), count(slot, " mov rsp, rbp\n")) << slot;
    EXPECT_GE(count(slot, " ret\n"), 2u) << slot;
}

TEST(X64RegallocTest, SpilledConstantsAreRematerializedNotStored) {
    // Twelve constants live across a call (which clobbers every
    // caller-saved register) and then used as stored values: more than the
    // callee-saved registers hold, so some spill. Spilled constants are
    // never stored; their reloads are `mov reg, imm` edits.
    std::string text = "function %f(i64, i64) -> i64 {\n    fn0 = %g(i64) -> i64\nblock0(v0: i64, v1: i64):\n";
    for (int k = 0; k < 12; ++k) text += "    v" + std::to_string(10 + k) + " = iconst.i64 " + std::to_string(1000 + k) + "\n";
    text += "    v2 = call fn0(v0)\n";
    for (int k = 0; k < 12; ++k) text += "    store notrap v" + std::to_string(10 + k) + ", v2+" + std::to_string(8 * k) + "\n";
    text += "    return v2\n}\n";
    auto f = parse_one(text);
    x64::VCode vc;
    ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), vc), "");
    ra::Context ctx;
    ra::Output out;
    ASSERT_EQ(ra::allocate(vc.ra, x64::machine_env(), out, ctx), "");
    EXPECT_EQ(ra::check(vc.ra, x64::machine_env(), out), "");
    size_t remats = 0, stores = 0;
    for (const ra::Edit& e : out.edits) {
        remats += e.from.is_remat();
        stores += e.from.is_reg() && e.to.is_stack();
    }
    EXPECT_GE(remats, 1u);
    EXPECT_EQ(stores, 0u);

    // And the code does what the IR says: g returns a pointer to 12 cells
    // that receive 1000..1011.
    static int64_t cells[12];
    auto g = +[](int64_t) -> int64_t { return reinterpret_cast<int64_t>(cells); };
    JITModule jit(JITBuilder().symbol("g", reinterpret_cast<const void*>(g)).check_regalloc(true));
    FuncId id = jit.declare_function("f", Linkage::Export, f->signature).value();
    ASSERT_FALSE(jit.define_function(id, *f).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(int64_t, int64_t)>(id);
    EXPECT_EQ(fn(1, 2), reinterpret_cast<int64_t>(cells));
    for (int k = 0; k < 12; ++k) EXPECT_EQ(cells[k], 1000 + k);
}

// Tail calls with stack arguments (docs/backend-x64.md, "Tail calls"): a
// callee with a larger area than the caller's gets its arguments copied up
// from the outgoing area after rbp, the callee-saved registers and the
// return address are read; the return address is written last, just below
// them. A smaller area has the arguments stored straight into the caller's
// incoming area and the return address moved up to meet them.
TEST(X64EmitTest, TailCallsMoveStackArgumentsAndTheReturnAddress) {
    // asm_of's lines, without their leading blank.
    auto lines = [](const std::string& text) {
        std::string out;
        std::istringstream in(asm_of(text));
        for (std::string line; std::getline(in, line);) out += line.substr(line.find_first_not_of(' ')) + "\n";
        return out;
    };
    std::string grow = lines(R"(
function %f(i64) -> i64 tail {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64):
    return_call fn0(v0, v0, v0, v0, v0, v0, v0)
}
)");
    // A = 0, B = 16 (one stack argument, padded): the return address goes
    // to rbp + 8 - 16.
    EXPECT_NE(grow.find("mov [rsp], rdi\n"), std::string::npos) << grow;
    EXPECT_NE(grow.find("lea r10, [rbp-0x08]\nmov rax, [rbp+0x08]\nmov rbp, [rbp]\nmovups xmm15, [rsp]\n"
                        "movups [r10+0x08], xmm15\nmov [r10], rax\nmov rsp, r10\njmp r11\n"),
              std::string::npos)
        << grow;

    std::string shrink = lines(R"(
function %f(i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64):
    return_call fn0(v1, v2, v3, v4, v5, v6, v8)
}
)");
    // A = 32 (three incoming stack arguments), B = 16: v8 (at [rbp+0x20])
    // goes to [rbp + 16 + 32 - 16]; the return address moves up by 16.
    EXPECT_NE(shrink.find("[rbp+0x20]\n"), std::string::npos) << shrink;
    EXPECT_NE(shrink.find("pop rbp\nmov rax, [rsp]\nadd rsp, 0x10\nmov [rsp], rax\njmp r11\n"), std::string::npos)
        << shrink;

    // The callee pops its own area; a caller lowers rsp again after the call.
    std::string callee = lines(R"(
function %g(i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64):
    return v6
}
)");
    EXPECT_NE(callee.find("ret 0x10\n"), std::string::npos) << callee;
    std::string caller = lines(R"(
function %h(i64) -> i64 system_v {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64):
    v1 = call fn0(v0, v0, v0, v0, v0, v0, v0)
    return v1
}
)");
    EXPECT_NE(caller.find("call [r11]\nsub rsp, 0x10\n"), std::string::npos) << caller;
}

TEST(X64EmitTest, TailConventionStackAreasOver64KiBAreCleanErrors) {
    std::string params, names;
    for (int k = 0; k < 8200; ++k) {
        params += k ? ", i64" : "i64";
        names += (k ? ", v" : "v") + std::to_string(k) + ": i64";
    }
    auto f = parse_one("function %f(" + params + ") -> i64 tail {\nblock0(" + names + "):\n    return v0\n}\n");
    x64::VCode vc;
    EXPECT_EQ(x64::lower_function(*f, x64::Settings::host(), vc),
              "tail-convention function with 65552 bytes of stack arguments (at most 65520)");
}

TEST(X64EmitTest, JumpToTheNextBlockFallsThrough) {
    std::string code = asm_of(R"(
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iadd v0, v0
    jump block1
block1:
    v2 = iadd v1, v0
    return v2
}
)");
    EXPECT_EQ(code.find("jmp"), std::string::npos) << code;
}

/// Encoded length (bytes) of each jump to a block, in order: from lines
/// like "  000e:  72 08                 jb block2".
std::vector<size_t> block_jump_lengths(const std::string& full) {
    std::vector<size_t> lengths;
    size_t pos = 0;
    while (pos < full.size()) {
        size_t end = full.find('\n', pos);
        if (end == std::string::npos) end = full.size();
        std::string line = full.substr(pos, end - pos);
        pos = end + 1;
        size_t colon = line.find(':');
        if (line.empty() || line[0] != ' ' || colon == std::string::npos) continue;
        // Byte pairs, then the mnemonic.
        std::istringstream words(line.substr(colon + 1));
        std::string w;
        size_t n = 0;
        while (words >> w && w.size() == 2 && std::isxdigit(static_cast<unsigned char>(w[0])) &&
               std::isxdigit(static_cast<unsigned char>(w[1])))
            ++n;
        if (w.empty() || w[0] != 'j' || line.find(" block") == std::string::npos) continue;
        lengths.push_back(n);
    }
    return lengths;
}

TEST(X64EmitTest, NearForwardBlockJumpsUseTheShortForm) {
    // brif over a small block, and that block's jump over another: both
    // forward, both within rel8 reach.
    std::string full = full_asm_of(R"(
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 7
    v2 = icmp ult v0, v1
    brif v2, block1, block2
block2:
    v3 = imul v0, v0
    brif v3, block3(v3), block4
block4:
    v4 = iadd v0, v0
    jump block3(v4)
block1:
    return v0
block3(v5: i64):
    return v5
}
)");
    std::vector<size_t> lengths = block_jump_lengths(full);
    ASSERT_GE(lengths.size(), 2u) << full;
    for (size_t n : lengths) EXPECT_EQ(n, 2u) << full;
}

TEST(X64EmitTest, FarForwardBlockJumpsStayLongAndLand) {
    // A brif over ~50 multiplies (more than 127 bytes) keeps the rel32 form
    // and still reaches its target.
    std::string text = "function %far(i64) -> i64 {\nblock0(v0: i64):\n"
                       "    v1 = iconst.i64 7\n    v2 = icmp ult v0, v1\n"
                       "    brif v2, block2(v0), block1\nblock1:\n";
    std::string prev = "v0";
    for (int k = 0; k < 50; ++k) {
        std::string v = "v" + std::to_string(10 + k);
        text += "    " + v + " = imul " + prev + ", v0\n";
        prev = v;
    }
    // (block2 is more than a return, or the jumps to it would return in
    // place.)
    text += "    jump block2(" + prev + ")\nblock2(v3: i64):\n    v4 = iadd v3, v0\n    return v4\n}\n";
    std::string full = full_asm_of(text);
    std::vector<size_t> lengths = block_jump_lengths(full);
    // The jump across the multiplies is rel32 (jmp 5 bytes, jcc 6).
    EXPECT_TRUE(std::any_of(lengths.begin(), lengths.end(), [](size_t n) { return n >= 5; })) << full;

    auto f = parse_one(text);
    JITModule jit;
    FuncId id = jit.declare_function("far", Linkage::Export, f->signature).value();
    ASSERT_FALSE(jit.define_function(id, *f).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(int64_t)>(id);
    EXPECT_EQ(fn(3), 6);
    uint64_t want = 9;
    for (int k = 0; k < 50; ++k) want *= 9;
    EXPECT_EQ(static_cast<uint64_t>(fn(9)), want + 9);
}

TEST(X64EmitTest, RelaxedJumpsKeepFloatBranchesTablesAndTrapsInPlace) {
    // Emission is one pass: block jumps go out long and are shortened at
    // the end of the code, which then closes up. A float equality branch
    // (jp over je), a jump table (rip-relative lea, entries relative to the
    // table) and a division's trap stub all come after or between shortened
    // jumps and must still land.
    const std::string text = R"(
function %f(f64, f64, i32, i64) -> i64 {
block0(v0: f64, v1: f64, v2: i32, v3: i64):
    v4 = fcmp eq v0, v1
    brif v4, block1, block2
block1:
    v5 = iconst.i64 100
    jump block6(v5)
block2:
    br_table v2, block5, [block3, block4]
block3:
    v6 = iconst.i64 7
    v7 = udiv v6, v3
    jump block6(v7)
block4:
    v8 = iconst.i64 40
    jump block6(v8)
block5:
    v9 = iconst.i64 50
    jump block6(v9)
block6(v10: i64):
    v11 = iadd v10, v3
    return v11
}
)";
    std::string full = full_asm_of(text);
    std::vector<size_t> lengths = block_jump_lengths(full);
    ASSERT_GE(lengths.size(), 4u) << full;
    for (size_t n : lengths) EXPECT_EQ(n, 2u) << full;
    EXPECT_NE(full.find("ud2"), std::string::npos) << full;

    auto f = parse_one(text);
    CompiledCode code;
    ASSERT_EQ(error_text(Context(host_isa()).compile(*f, code)), "");
    ASSERT_EQ(code.trap_sites.size(), 1u);
    EXPECT_EQ(code.bytes.at(code.trap_sites[0].offset), 0x0F) << "ud2 is 0f 0b";
    EXPECT_EQ(code.bytes.at(code.trap_sites[0].offset + 1), 0x0B);

    JITModule jit;
    FuncId id = jit.declare_function("f", Linkage::Export, f->signature).value();
    ASSERT_FALSE(jit.define_function(id, *f).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(double, double, int32_t, int64_t)>(id);
    // (block6 adds v3, so that it is more than a return.)
    EXPECT_EQ(fn(1.5, 1.5, 0, 1), 101);
    EXPECT_EQ(fn(1.5, 2.5, 0, 2), 5);   // block3: 7 / 2
    EXPECT_EQ(fn(1.5, 2.5, 1, 1), 41);  // block4
    EXPECT_EQ(fn(1.5, 2.5, 5, 1), 51);  // the default
    EXPECT_EQ(fn(std::nan(""), std::nan(""), 1, 1), 41) << "unordered is not equal";
}

TEST(X64EmitTest, JumpsThroughEmptyBlocksAreThreaded) {
    // block1 holds only a jump to block2, which follows it: neither the
    // brif's edge into block1 nor block1 itself needs a jump.
    std::string code = asm_of(R"(
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 7
    v2 = icmp ult v0, v1
    brif v2, block1, block2
block1:
    jump block2
block2:
    return v0
}
)");
    EXPECT_EQ(code.find("jmp"), std::string::npos) << code;
    EXPECT_EQ(code.find("jb"), std::string::npos) << code;
}

TEST(HeronCompileTest, DisasmInterleavesIrInstructions) {
    // Each IR instruction precedes its code; folded ones (the iconst in the
    // immediate, the icmp in the branch) come with the instruction that
    // absorbed them; a fall-through jump's comment ends its block.
    std::string path = ::testing::TempDir() + "heron_disasm_comments.clif";
    std::ofstream(path) << R"(
function %f(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 7
    v2 = icmp ult v0, v1
    brif v2, block1, block2(v0)
block1:
    v3 = imul v0, v0
    jump block2(v3)
block2(v4: i64):
    return v4
}
)";
    const char* argv[] = {"heron", "compile", path.c_str(), "--disasm"};
    ::testing::internal::CaptureStdout();
    int status = tools::main(4, const_cast<char**>(argv));
    std::fflush(stdout);
    std::string out = ::testing::internal::GetCapturedStdout();
    std::remove(path.c_str());
    EXPECT_EQ(status, 0);
    auto at = [&](const std::string& s) {
        size_t p = out.find(s);
        EXPECT_NE(p, std::string::npos) << "missing: " << s << "\n" << out;
        return p;
    };
    size_t cmp = at("    ; v1 = iconst.i64 7\n    ; v2 = icmp ult v0, v1\n    ; brif v2, block1, block2(v0)\n");
    size_t cmp_code = at("cmp rdi, 0x07");
    EXPECT_LT(at("block0:\n"), cmp);
    EXPECT_LT(cmp, cmp_code);
    // block1 falls through into block2: its jump is listed before the label.
    EXPECT_LT(at("block1:\n"), at("    ; v3 = imul v0, v0\n"));
    EXPECT_LT(at("    ; v3 = imul v0, v0\n"), at("    ; jump block2(v3)\n"));
    EXPECT_LT(at("    ; jump block2(v3)\n"), at("block2:\n"));
    EXPECT_LT(at("block2:\n"), at("    ; return v4\n"));
}

TEST(X64LoweringTest, OneContextAcrossShapesGivesTheVCodeOfFreshOnes) {
    // The lowering buffers fill from their ends and are kept between
    // functions: a context that lowered larger or differently shaped
    // functions before (and grew in the middle of a group, a call's
    // operands) must give exactly what a fresh context gives.
    std::string big = "function %big(i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 {\n"
                      "    fn0 = %g(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64\n"
                      "block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64):\n";
    std::string last = "v8";
    for (int k = 0; k < 60; ++k) {
        std::string r = "v" + std::to_string(20 + k);
        big += "    " + r + " = bitselect v0, v7, " + last + "\n";
        last = r;
    }
    big += "    v100 = call fn0(" + last + ", v1, v2, v3, v4, v5, v6, v7, v8, v0, v1, v2)\n";
    big += "    brif v100, block1(v100), block2(" + last + ", v100)\nblock1(v101: i64):\n"
           "    v102 = iconst.i64 1000\n    v103 = iadd v101, v102\n    return v103\n"
           "block2(v104: i64, v105: i64):\n    v106 = isub v104, v105\n    return v106\n}\n";
    const std::string trivial = "function %t(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n"
                                "    v2 = iadd v0, v1\n    v3 = imul v0, v1\n    return v2\n}\n";
    const std::string floats = R"(
function %fl(f64, f64, i64) -> f64, i64, i64, f64 {
block0(v0: f64, v1: f64, v2: i64):
    v3 = fmul v0, v1
    v4 = fadd v3, v0
    v5 = load.i64 v2+8
    v6 = iadd v5, v2
    brif v6, block1(v4), block1(v3)
block1(v7: f64):
    v8 = fsub v7, v1
    return v8, v6, v5, v7
})";
    const std::string* order[] = {&big, &trivial, &floats, &big, &floats, &trivial, &trivial, &big};
    // One context and one VCode for all (the VCode keeps the allocator's
    // arrays between lowerings, see VCodeBase::clear_for_lowering).
    LowerContext kept;
    x64::VCode again;
    for (const std::string* text : order) {
        auto f = parse_one(*text);
        x64::VCode fresh;
        ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), again, kept), "");
        ASSERT_EQ(x64::lower_function(*f, x64::Settings::host(), fresh), "");
        const std::string name = f->name.to_string();
        EXPECT_EQ(again.to_string(), fresh.to_string()) << name;
        EXPECT_EQ(again.ra.operands_begin, fresh.ra.operands_begin) << name;
        EXPECT_EQ(again.ra.flags, fresh.ra.flags) << name;
        EXPECT_EQ(again.ra.block_insts_begin, fresh.ra.block_insts_begin) << name;
        EXPECT_EQ(again.ra.succs_begin, fresh.ra.succs_begin) << name;
        EXPECT_EQ(again.ra.succs, fresh.ra.succs) << name;
        EXPECT_EQ(again.ra.preds_begin, fresh.ra.preds_begin) << name;
        EXPECT_EQ(again.ra.preds, fresh.ra.preds) << name;
        EXPECT_EQ(again.ra.params_begin, fresh.ra.params_begin) << name;
        EXPECT_EQ(again.ra.branch_args_begin, fresh.ra.branch_args_begin) << name;
        EXPECT_EQ(again.ra.loop_depth, fresh.ra.loop_depth) << name;
        EXPECT_EQ(again.block_ir, fresh.block_ir) << name;
        EXPECT_EQ(again.ra.num_vregs, fresh.ra.num_vregs) << name;
        EXPECT_EQ(again.ra.clobbers.size(), fresh.ra.clobbers.size()) << name;
        auto bits = [](const std::vector<ra::VReg>& v) {
            std::vector<uint32_t> b;
            for (ra::VReg r : v) b.push_back(r.bits);
            return b;
        };
        EXPECT_EQ(bits(again.ra.params), bits(fresh.ra.params)) << name;
        EXPECT_EQ(bits(again.ra.branch_args), bits(fresh.ra.branch_args)) << name;
        ASSERT_EQ(again.ra.operands.size(), fresh.ra.operands.size()) << name;
        for (size_t k = 0; k < fresh.ra.operands.size(); ++k) {
            const ra::Operand &a = again.ra.operands[k], &b = fresh.ra.operands[k];
            EXPECT_TRUE(a.vreg == b.vreg && a.kind == b.kind && a.pos == b.pos && a.constraint == b.constraint &&
                        a.aux == b.aux)
                << name << " operand " << k;
        }
        ASSERT_EQ(again.insts.size(), fresh.insts.size()) << name;
        for (size_t i = 0; i < fresh.insts.size(); ++i) {
            EXPECT_EQ(std::memcmp(&again.insts[i], &fresh.insts[i], sizeof(x64::MInst)), 0) << name << " inst " << i;
        }
        ra::Output out;
        ra::Context rctx;
        ASSERT_EQ(ra::allocate(again.ra, x64::machine_env(), out, rctx), "") << name;
        EXPECT_EQ(ra::check(again.ra, x64::machine_env(), out), "") << name;
    }
}

TEST(X64EmitTest, OnlyIntegerCalleeSavedRegistersInUseArePushed) {
    // The prologue pushes rbx/r12-r15 only when an allocation or an edit
    // puts a value there. Floats in xmm3 or xmm12 (whose numbers match
    // rbx and r12) must not count.
    std::string fl = "function %fl(f64, f64, f64, f64, f64, f64, f64, f64) -> f64 {\n"
                     "block0(v0: f64, v1: f64, v2: f64, v3: f64, v4: f64, v5: f64, v6: f64, v7: f64):\n";
    for (int k = 0; k < 14; ++k) fl += "    v" + std::to_string(10 + k) + " = fmul v" + std::to_string(k % 8) + ", v" +
                                      std::to_string((k + 3) % 8) + "\n";
    std::string acc = "v10";
    for (int k = 1; k < 14; ++k) {
        fl += "    v" + std::to_string(30 + k) + " = fadd " + acc + ", v" + std::to_string(10 + k) + "\n";
        acc = "v" + std::to_string(30 + k);
    }
    fl += "    return " + acc + "\n}\n";
    std::string in = "function %in(i64, i64) -> i64 {\nblock0(v0: i64, v1: i64):\n";
    for (int k = 0; k < 16; ++k) in += "    v" + std::to_string(10 + k) + " = imul v0, v" + std::to_string(k % 2) + "\n";
    // Keep all 16 products live across the sums below.
    acc = "v25";
    for (int k = 14; k >= 0; --k) {
        in += "    v" + std::to_string(30 + k) + " = iadd " + acc + ", v" + std::to_string(10 + k) + "\n";
        acc = "v" + std::to_string(30 + k);
    }
    in += "    return " + acc + "\n}\n";
    auto pushes_after_frame = [](const CompiledCode& c) {
        // push rbp; mov rbp, rsp (55 48 89 e5), then the callee-saved pushes.
        size_t k = 4, n = 0;
        while (k < c.bytes.size()) {
            if (c.bytes[k] == 0x53) k += 1;  // push rbx
            else if (c.bytes[k] == 0x41 && k + 1 < c.bytes.size() && c.bytes[k + 1] >= 0x54 && c.bytes[k + 1] <= 0x57) k += 2;
            else break;
            ++n;
        }
        return n;
    };
    CompileOptions opts;
    opts.check_regalloc = true;
    Context ctx(isa_by_name("x86_64"), opts);
    for (int round = 0; round < 2; ++round) {
        auto f = parse_one(fl);
        CompiledCode code;
        ASSERT_EQ(error_text(ctx.compile(*f, code)), "");
        ASSERT_GE(code.bytes.size(), 4u);
        EXPECT_EQ(pushes_after_frame(code), 0u);
        auto g = parse_one(in);
        ASSERT_EQ(error_text(ctx.compile(*g, code)), "");
        EXPECT_GE(pushes_after_frame(code), 1u);
    }
    // And the integer one still computes the right value.
    auto g = parse_one(in);
    JITModule jit;
    FuncId id = jit.declare_function("in", Linkage::Export, g->signature).value();
    ASSERT_FALSE(jit.define_function(id, *g).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(int64_t, int64_t)>(id);
    const int64_t a = 7, b = -3;
    int64_t want = 0;
    for (int k = 0; k < 16; ++k) want += a * (k % 2 ? b : a);
    EXPECT_EQ(fn(a, b), want);
}

TEST(X64EmitTest, EdgeBlocksWithMovesAreNotThreaded) {
    // Both edges of the brif go to block1 with the arguments swapped: the
    // edge blocks hold the allocator's moves and must keep their code.
    auto f = parse_one(R"(
function %swap(i64, i64, i64) -> i64 {
block0(v0: i64, v1: i64, v2: i64):
    brif v0, block1(v1, v2), block1(v2, v1)
block1(v3: i64, v4: i64):
    v5 = isub v3, v4
    return v5
})");
    JITModule jit;
    FuncId id = jit.declare_function("swap", Linkage::Export, f->signature).value();
    ASSERT_FALSE(jit.define_function(id, *f).has_value());
    ASSERT_FALSE(jit.finalize_definitions().has_value());
    auto* fn = jit.get_function<int64_t(int64_t, int64_t, int64_t)>(id);
    EXPECT_EQ(fn(1, 10, 4), 6);
    EXPECT_EQ(fn(0, 10, 4), -6);
}

}  // namespace
}  // namespace heron
