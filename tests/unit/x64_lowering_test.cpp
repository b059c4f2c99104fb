// x86-64 lowering and emission: what file tests cannot say. The expected
// VCode and machine code of the fusions and code-quality rules are in
// tests/filetests/compile/x64-*.clif (`test compile`); here are the
// properties of the lowering context (buffers that grow, one context
// across functions), functions generated too large to write out, trap
// sites checked through the JIT with real pointers, the VEX encoder
// against the disassembler, the allocator's edits, and `heron compile`.
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
