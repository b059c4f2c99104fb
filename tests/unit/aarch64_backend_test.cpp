// The AArch64 backend on any host: compile IR for aarch64 (register
// allocation checker on) and compare the Capstone disassembly of the code
// with what AAPCS64 and the lowering's fusions call for; check the trap
// table, relocations and the frame; every function of the run file tests
// compiles. Running the code is `make test-aarch64`'s job (qemu-user).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/isa/aarch64/logical_imm.h"
#include "codegen/machinst/isa.h"
#include "tools/disasm_aarch64.h"

namespace heron {
namespace {

struct Compiled {
    std::string error;
    CompiledCode code;
    std::string listing;
};

Compiled compile(std::string_view text) {
    Compiled c;
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].format("text"));
    if (fs.size() != 1) {
        c.error = "expected one function";
        return c;
    }
    auto isa = isa_by_name("aarch64");
    EXPECT_NE(isa, nullptr);
    EXPECT_EQ(isa->name(), "aarch64");
    CompileOptions opts;
    opts.check_regalloc = true;
    Context ctx(std::move(isa), opts);
    c.error = error_text(ctx.compile(*fs[0], c.code));
    if (!c.error.empty()) return c;
    std::map<uint64_t, std::string> labels;
    for (const auto& [off, name] : c.code.labels) labels[off] = name;
    c.listing = tools::disassemble_aarch64(c.code.bytes.data(), c.code.bytes.size(), 0, labels);
    return c;
}

/// The listing without offsets and bytes: one "mnemonic operands" per line,
/// labels kept.
std::string text_of(const std::string& listing) {
    std::istringstream in(listing);
    std::string line, out;
    while (std::getline(in, line)) {
        if (line.rfind("  ", 0) == 0) {
            // "  0000:  fd 7b bf a9   stp ..." -> "stp ..."
            size_t at = line.find_first_not_of(' ', 8 + 12);
            out += "  " + line.substr(at) + "\n";
        } else {
            out += line + "\n";
        }
    }
    return out;
}

/// The listing (text_of) of function `name` of a run file test.
std::string listing_of(const std::string& file, const std::string& name) {
    std::ifstream in(std::string(HERON_SOURCE_DIR) + "/tests/filetests/run/" + file);
    std::stringstream ss;
    ss << in.rdbuf();
    ParseOutcome parsed = parse_test_file(ss.str());
    EXPECT_TRUE(parsed.ok()) << file;
    for (const ParsedFunction& pf : parsed.file.functions) {
        if (pf.func->name.to_string() != "%" + name) continue;
        CompileOptions opts;
        opts.check_regalloc = true;
        Context ctx(isa_by_name("aarch64"), opts);
        CompiledCode code;
        std::string err = error_text(ctx.compile(*pf.func, code));
        EXPECT_EQ(err, "") << name;
        std::map<uint64_t, std::string> labels;
        for (const auto& [off, label] : code.labels) labels[off] = label;
        return text_of(tools::disassemble_aarch64(code.bytes.data(), code.bytes.size(), 0, labels));
    }
    ADD_FAILURE() << "no function %" << name << " in " << file;
    return {};
}

/// The instructions of `name` (folded-operands.clif) between the frame
/// record's setup and its restore.
std::string body_of(const std::string& name) {
    std::string t = listing_of("folded-operands.clif", name);
    size_t begin = t.find("block0:\n");
    size_t end = t.find("  ldp x29, x30");
    if (begin == std::string::npos || end == std::string::npos) return t;
    begin += 8;
    return t.substr(begin, end - begin);
}

uint32_t word_at(const CompiledCode& c, uint32_t off) {
    return uint32_t{c.bytes[off]} | uint32_t{c.bytes[off + 1]} << 8 | uint32_t{c.bytes[off + 2]} << 16 |
           uint32_t{c.bytes[off + 3]} << 24;
}

TEST(Aarch64Backend, AddOfTwoArgumentsIsOneInstructionInAFrame) {
    Compiled c = compile(R"(
function %add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
)");
    ASSERT_EQ(c.error, "");
    EXPECT_EQ(text_of(c.listing),
              "  stp x29, x30, [sp, #-0x10]!\n"
              "  mov x29, sp\n"
              "block0:\n"
              "  add x0, x0, x1\n"
              "  ldp x29, x30, [sp], #0x10\n"
              "  ret\n");
    EXPECT_EQ(c.code.frame_size, 16u);
    EXPECT_TRUE(c.code.trap_sites.empty());
}

TEST(Aarch64Backend, CompareFusesIntoTheBranchAndImmediates) {
    Compiled c = compile(R"(
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 -7
    v3 = icmp slt v0, v2
    brif v3, block1, block2
block1:
    v4 = iconst.i32 100
    v5 = iadd v1, v4
    return v5
block2:
    brif v1, block1, block3
block3:
    v6 = imul v0, v1
    v7 = isub v0, v6
    return v7
}
)");
    ASSERT_EQ(c.error, "");
    std::string t = text_of(c.listing);
    // icmp + brif -> cmn (negative imm12) + b.lt; the edge blocks of the
    // critical edges to block1 need no moves and are not emitted.
    EXPECT_NE(t.find("  cmn w0, #7\n  b.lt block1\nblock2:\n"), std::string::npos) << t;
    // brif of a plain i32 -> cbnz.
    EXPECT_NE(t.find("cbnz w1, block1"), std::string::npos) << t;
    // iadd of a constant -> add #imm; isub of a product -> msub.
    EXPECT_NE(t.find("add w0, w1, #0x64"), std::string::npos) << t;
    EXPECT_NE(t.find("msub w0, w0, w1, w0"), std::string::npos) << t;
    EXPECT_EQ(t.find("mul w"), std::string::npos) << "the product folds into msub\n" << t;
}

TEST(Aarch64Backend, ZeroTestsAndBitTestsBranchDirectly) {
    Compiled c = compile(R"(
function %f(i64, i32) -> i32 {
block0(v0: i64, v1: i32):
    v2 = iconst.i64 0
    v3 = icmp eq v0, v2
    brif v3, block1, block2
block1:
    v4 = iconst.i32 1
    return v4
block2:
    v5 = iconst.i32 0x100
    v6 = band v1, v5
    brif v6, block3, block1
block3:
    v7 = iconst.i32 3
    return v7
}
)");
    ASSERT_EQ(c.error, "");
    std::string t = text_of(c.listing);
    EXPECT_NE(t.find("cbz x0, block1"), std::string::npos) << t;
    EXPECT_NE(t.find("tbz w1, #8, block1\nblock3:"), std::string::npos) << t;
    EXPECT_EQ(t.find("cmp"), std::string::npos) << t;
    EXPECT_EQ(t.find("and"), std::string::npos) << "the mask folds into the bit test\n" << t;
}

TEST(Aarch64Backend, DivisionTrapsThroughTheTrapTable) {
    Compiled c = compile(R"(
function %f(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = sdiv v0, v1
    return v2
}
)");
    ASSERT_EQ(c.error, "");
    std::string t = text_of(c.listing);
    EXPECT_NE(t.find("cbz w1, "), std::string::npos) << t;
    EXPECT_NE(t.find("cmn w1, #1"), std::string::npos) << t;
    EXPECT_NE(t.find("sdiv w0, w0, w1"), std::string::npos) << t;
    // Two out-of-line udf stubs: division by zero, then overflow (MIN / -1).
    ASSERT_EQ(c.code.trap_sites.size(), 2u);
    EXPECT_EQ(c.code.trap_sites[0].code, TrapCode::integer_division_by_zero());
    EXPECT_EQ(c.code.trap_sites[1].code, TrapCode::integer_overflow());
    for (const CodeTrapSite& s : c.code.trap_sites) EXPECT_EQ(word_at(c.code, s.offset), 0u) << "udf #0";
}

TEST(Aarch64Backend, CallsLoadTheTargetFromARelocatedSlot) {
    Compiled c = compile(R"(
function %f(i64) -> i64 {
    fn0 = %g(i64) -> i64
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iadd v1, v0
    return v2
}
)");
    ASSERT_EQ(c.error, "");
    std::string t = text_of(c.listing);
    ASSERT_EQ(c.code.relocations.size(), 1u);
    EXPECT_EQ(c.code.relocations[0].target.name, "g");
    EXPECT_EQ(c.code.relocations[0].offset % 8, 0u);
    EXPECT_NE(t.find("  ldr x16, [x16]\n  blr x16\n"), std::string::npos) << t;
    // v0 lives across the call in a callee-saved register, saved and restored.
    EXPECT_NE(t.find("str x19, [sp, #-0x10]!"), std::string::npos) << t;
    EXPECT_NE(t.find("ldr x19, [sp], #0x10"), std::string::npos) << t;
    EXPECT_EQ(c.code.frame_size, 32u);
}

TEST(Aarch64Backend, BrTableIsATableOfOffsets) {
    Compiled c = compile(R"(
function %f(i32) -> i32 {
block0(v0: i32):
    br_table v0, block3, [block1, block2]
block1:
    v1 = iconst.i32 10
    return v1
block2:
    v2 = iconst.i32 20
    return v2
block3:
    v3 = iconst.i32 30
    return v3
}
)");
    ASSERT_EQ(c.error, "");
    std::map<std::string, uint32_t> label;
    for (const auto& [off, name] : c.code.labels) label[name] = off;
    std::string t = text_of(c.listing);
    size_t adr = c.listing.find("adr x16, #0x");
    ASSERT_NE(adr, std::string::npos) << c.listing;
    uint32_t table = static_cast<uint32_t>(std::stoul(c.listing.substr(adr + 12), nullptr, 16));
    auto entry = [&](int k) { return static_cast<uint32_t>(table + static_cast<int32_t>(word_at(c.code, table + 4 * k))); };
    EXPECT_EQ(entry(0), label["block1"]);
    EXPECT_EQ(entry(1), label["block2"]);
    EXPECT_EQ(entry(2), label["block3"]) << "the default is the last entry";
    EXPECT_NE(t.find("csel x17, x0, x17, lo"), std::string::npos) << "index clamped to the default\n" << t;
}

TEST(Aarch64Backend, LargeFramesProbeEveryPage) {
    Compiled c = compile(R"(
function %f() -> i64 {
    ss0 = explicit_slot 20000
block0:
    v0 = stack_addr.i64 ss0+16000
    v1 = iconst.i64 5
    store v1, v0
    v2 = load.i64 v0
    return v2
}
)");
    ASSERT_EQ(c.error, "");
    std::string t = text_of(c.listing);
    EXPECT_NE(t.find("movz x16, #0x4\n"), std::string::npos) << "four pages\n" << t;
    EXPECT_NE(t.find("  str xzr, [sp]\n  subs x16, x16, #1\n  b.ne"), std::string::npos) << t;
    EXPECT_EQ(c.code.frame_size, 16u + 20000u + (16 - 20000 % 16) % 16);
}

// Tail calls with stack arguments (docs/backend-aarch64.md, "Tail calls"):
// a callee with a larger area than the caller's gets its arguments copied
// up from the outgoing area after the frame record and callee-saved
// registers are read back; a smaller or equal one has them stored straight
// into the caller's incoming area, and sp moves up to them.
TEST(Aarch64Backend, TailCallsMoveStackArgumentsIntoPlace) {
    Compiled grow = compile(R"(
function %f(i64) -> i64 tail {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64):
    return_call fn0(v0, v0, v0, v0, v0, v0, v0, v0, v0, v0, v0)
}
)");
    ASSERT_EQ(grow.error, "");
    std::string t = text_of(grow.listing);
    // A = 0, B = 32 (3 stack arguments padded to 16 bytes): the new sp is
    // x29 + 16 - 32.
    EXPECT_NE(t.find("sub x17, x29, #0x10\n  ldp x29, x30, [x29]\n  ldr q31, [sp, #0x10]\n  str q31, [x17, #0x10]\n"
                     "  ldr q31, [sp]\n  str q31, [x17]\n  mov sp, x17\n  br x16\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("str x0, [sp, #0x10]\n"), std::string::npos) << "third stack argument\n" << t;

    Compiled shrink = compile(R"(
function %f(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64, v10: i64):
    return_call fn0(v1, v2, v3, v4, v5, v6, v7, v8, v10)
}
)");
    ASSERT_EQ(shrink.error, "");
    t = text_of(shrink.listing);
    // A = 32, B = 16: v10 (incoming at [x29 + 32]) goes to the top 16 bytes
    // of the incoming area, [x29 + 16 + 32 - 16]; sp then moves up by 16.
    EXPECT_NE(t.find("ldr x0, [x29, #0x20]\n"), std::string::npos) << t;
    EXPECT_NE(t.find("str x0, [x29, #0x20]\n"), std::string::npos) << t;
    EXPECT_NE(t.find("ldp x29, x30, [sp], #0x10\n  add sp, sp, #0x10\n  br x16\n"), std::string::npos) << t;

    // The callee pops its own area on return; a caller lowers sp again.
    Compiled callee = compile(R"(
function %g(i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64):
    return v8
}
)");
    ASSERT_EQ(callee.error, "");
    EXPECT_NE(text_of(callee.listing).find("add sp, sp, #0x10\n  ret\n"), std::string::npos) << callee.listing;
    Compiled caller = compile(R"(
function %h(i64) -> i64 system_v {
    fn0 = %g(i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 tail
block0(v0: i64):
    v1 = call fn0(v0, v0, v0, v0, v0, v0, v0, v0, v0)
    return v1
}
)");
    ASSERT_EQ(caller.error, "");
    EXPECT_NE(text_of(caller.listing).find("blr x16\n  sub sp, sp, #0x10\n"), std::string::npos) << caller.listing;
}

TEST(Aarch64Backend, UnsupportedFormsAreCleanErrors) {
    // Over 64 KiB of tail-convention stack arguments (8200 of them).
    std::string params;
    for (int k = 0; k < 8200; ++k) params += k ? ", i64" : "i64";
    Compiled c = compile("function %f(" + params + ") -> i64 tail {\nblock0(v0: i64" +
                         [] {
                             std::string s;
                             for (int k = 1; k < 8200; ++k) s += ", v" + std::to_string(k) + ": i64";
                             return s;
                         }() +
                         "):\n    return v0\n}\n");
    EXPECT_EQ(c.error, "unsupported on aarch64: tail-convention function with 65536 bytes of stack arguments (at most 65520)");
}

// The functions below are in tests/filetests/run/folded-operands.clif, which
// runs them (on AArch64 under qemu) at their edge cases.

TEST(Aarch64Backend, ConstantShiftsFoldIntoTheSecondOperand) {
    EXPECT_EQ(body_of("add_lsl"), "  add x0, x0, x1, lsl #3\n");
    EXPECT_EQ(body_of("sub_lsr"), "  sub x0, x0, x1, lsr #63\n");
    EXPECT_EQ(body_of("and_asr"), "  and w0, w0, w1, asr #5\n");
    EXPECT_EQ(body_of("orr_lsl33"), "  orr w0, w0, w1, lsl #1\n") << "the amount is taken mod 32";
    EXPECT_EQ(body_of("eor_lsr71"), "  eor x0, x0, x1, lsr #7\n");
    // A narrow left shift folds (the garbage above stays above).
    EXPECT_EQ(body_of("add_shl_i8"), "  add w1, w1, w2\n  add w0, w0, w1, lsl #3\n");
    // isub folds only its second operand.
    EXPECT_EQ(body_of("shl_minus"), "  lsl w1, w1, #2\n  sub w0, w1, w0\n");
    EXPECT_EQ(body_of("cmp_lsr"), "  cmp x0, x1, lsr #4\n  cset w0, lo\n");
    // A shifted first operand swaps the compare: (a << 2) > b is b < (a << 2).
    std::string t = body_of("cmp_shl_swapped");
    EXPECT_NE(t.find("  cmp w1, w0, lsl #2\n  csel w0, w2, w3, lt\n"), std::string::npos) << t;
}

TEST(Aarch64Backend, ExtensionsFoldIntoAddSubAndCompare) {
    EXPECT_EQ(body_of("add_uxtw"), "  add x0, x0, w1, uxtw\n");
    EXPECT_EQ(body_of("sub_sxth"), "  add w1, w1, w2\n  sub x0, x0, w1, sxth\n");
    EXPECT_EQ(body_of("add_uxtb_i32"), "  add w1, w1, w2\n  add w0, w0, w1, uxtb\n");
    EXPECT_EQ(body_of("add_sxtw_lsl3"), "  add x0, x0, w1, sxtw #3\n");
    EXPECT_EQ(body_of("add_i16_uxtb"), "  add w1, w1, w2\n  add w0, w0, w1, uxtb\n");
    EXPECT_EQ(body_of("cmp_sxtw"), "  cmp x0, w1, sxtw\n  cset w0, lt\n");
    // uext(b + c) < a is a > uext(b + c).
    EXPECT_EQ(body_of("cmp_uxth_swapped"), "  add w1, w1, w2\n  cmp w0, w1, uxth\n  cset w0, hi\n");
}

TEST(Aarch64Backend, ShiftAndMaskPatternsAreBitfieldMoves) {
    EXPECT_EQ(body_of("ubfx_and"), "  ubfx x0, x0, #0xc, #8\n");
    // ubfx w0, w0, #28, #4 prints as its alias lsr.
    EXPECT_EQ(body_of("ubfx_sshr_top"), "  lsr w0, w0, #0x1c\n");
    EXPECT_EQ(body_of("sshr_mask_wide"), "  asr w0, w0, #0x1e\n  and w0, w0, #0xf\n")
        << "the mask reaches into the sign copies: no single field";
    EXPECT_EQ(body_of("ushr_i8"), "  add w0, w0, w1\n  ubfx w0, w0, #3, #5\n") << "no extension first";
    EXPECT_EQ(body_of("sshr_i16"), "  add w0, w0, w1\n  sbfx w0, w0, #5, #0xb\n");
    EXPECT_EQ(body_of("shl_ushr"), "  ubfx w0, w0, #0xc, #0xc\n");
    EXPECT_EQ(body_of("shl_sshr_less"), "  sbfiz x0, x0, #0x20, #0x18\n");
    EXPECT_EQ(body_of("shl_sshr_i8"), "  add w0, w0, w1\n  sbfx w0, w0, #2, #3\n");
    EXPECT_EQ(body_of("ubfiz_and"), "  ubfiz x0, x0, #0x28, #0x10\n");
    EXPECT_EQ(body_of("ubfiz_uext"), "  ubfiz x0, x0, #0x14, #0x20\n");
    EXPECT_EQ(body_of("sbfiz_sext"), "  sbfiz x0, x0, #0x32, #0xe\n") << "the field cut to the 14 bits left";
    EXPECT_EQ(body_of("uext_ushr_i8"), "  add w0, w0, w1\n  ubfx x0, x0, #3, #5\n");
    EXPECT_EQ(body_of("sext_sshr_i16"), "  sbfx w0, w0, #4, #0xc\n");
    EXPECT_EQ(body_of("sext_ushr_i16"), "  ubfx x0, x0, #1, #0xf\n");
    EXPECT_EQ(body_of("uext_reduce"), "  ubfx x0, x0, #0x14, #8\n");
    // sbfx x0, x0, #48, #16 prints as its alias asr.
    EXPECT_EQ(body_of("sext_reduce"), "  asr x0, x0, #0x30\n");
    EXPECT_EQ(body_of("uext_reduce_high"), "  ubfx x0, x0, #0x1c, #8\n");
    EXPECT_EQ(body_of("bfi_mid"), "  bfi w0, w1, #8, #8\n");
    EXPECT_EQ(body_of("bfi_top"), "  bfi x0, x1, #0x3c, #4\n");
    EXPECT_EQ(body_of("bfi_low_i8"), "  add w0, w0, w2\n  bfxil w0, w1, #0, #4\n");
    EXPECT_EQ(body_of("bfi_shl"), "  bfi x0, x1, #0x30, #0x10\n");
}

TEST(Aarch64Backend, LogicalImmediatesAndTst) {
    EXPECT_EQ(body_of("and_imm"), "  and x0, x0, #0xff00ff00ff00ff00\n");
    EXPECT_EQ(body_of("orr_imm"), "  orr w0, w0, #0xff0\n");
    EXPECT_EQ(body_of("eor_imm"), "  eor x0, x0, #0x5555555555555555\n");
    // i8 0x81 sign-extended is a run of ones; zero-extended it is not.
    EXPECT_EQ(body_of("and_imm_i8"), "  add w0, w0, w1\n  and w0, w0, #0xffffff81\n");
    EXPECT_EQ(body_of("eor_imm_i16"), "  eor w0, w0, #0xffff8000\n");
    EXPECT_EQ(body_of("and_not_encodable"), "  movz x1, #0x1234\n  and x0, x0, x1\n");
    EXPECT_EQ(body_of("tst_select"), "  tst w0, #0xff0\n  csel w0, w1, w2, ne\n");
    std::string t = body_of("tst_i8_branch");
    EXPECT_NE(t.find("  add w0, w0, w1\n  tst w0, #0xc\n  b.ne block1\n"), std::string::npos) << t;
    EXPECT_EQ(body_of("tst_reg"), "  tst x0, x1\n  cset w0, eq\n");
}

TEST(Aarch64Backend, CalleeSavedRegistersAreSavedInPairs) {
    // tests/filetests/run/callee-saved.clif runs these. Three x and one d
    // live across the call: x19/x20 with stp, x21 and d8 sharing a slot.
    std::string k = listing_of("callee-saved.clif", "k");
    EXPECT_EQ(k.substr(0, k.find("block0:")),
              "  stp x29, x30, [sp, #-0x10]!\n"
              "  mov x29, sp\n"
              "  stp x19, x20, [sp, #-0x10]!\n"
              "  str x21, [sp, #-0x10]!\n"
              "  str d8, [sp, #8]\n");
    EXPECT_NE(k.find("  ldr d8, [sp, #8]\n"
                     "  ldr x21, [sp], #0x10\n"
                     "  ldp x19, x20, [sp], #0x10\n"
                     "  ldp x29, x30, [sp], #0x10\n"
                     "  ret\n"),
              std::string::npos)
        << k;
    // Five x and three d: two x pairs, a d pair, then x23 with d10.
    std::string m = listing_of("callee-saved.clif", "m");
    EXPECT_EQ(m.substr(0, m.find("block0:")),
              "  stp x29, x30, [sp, #-0x10]!\n"
              "  mov x29, sp\n"
              "  stp x19, x20, [sp, #-0x10]!\n"
              "  stp x21, x22, [sp, #-0x10]!\n"
              "  stp d8, d9, [sp, #-0x10]!\n"
              "  str x23, [sp, #-0x10]!\n"
              "  str d10, [sp, #8]\n");
    EXPECT_NE(m.find("  ldr d10, [sp, #8]\n"
                     "  ldr x23, [sp], #0x10\n"
                     "  ldp d8, d9, [sp], #0x10\n"
                     "  ldp x21, x22, [sp], #0x10\n"
                     "  ldp x19, x20, [sp], #0x10\n"
                     "  ldp x29, x30, [sp], #0x10\n"),
              std::string::npos)
        << m;
    // A tail call to a callee with a larger stack-argument area restores
    // them fp-relative, the shared slot included, before the copy.
    std::string g = listing_of("callee-saved.clif", "grow");
    EXPECT_NE(g.find("  ldp x19, x20, [x29, #-0x10]\n"
                     "  ldur x21, [x29, #-0x20]\n"
                     "  ldur d8, [x29, #-0x18]\n"
                     "  ldp x29, x30, [x29]\n"),
              std::string::npos)
        << g;
}

TEST(Aarch64LogicalImm, EncoderAgreesWithTheArchitecturalDecoding) {
    for (unsigned bits : {32u, 64u}) {
        std::set<uint64_t> valid;
        for (uint32_t field = 0; field < (1u << 13); ++field) {
            auto v = aarch64::decode_logical_imm(field, bits);
            if (!v) continue;
            valid.insert(*v);
            auto enc = aarch64::encode_logical_imm(*v, bits);
            ASSERT_TRUE(enc.has_value()) << std::hex << *v;
            EXPECT_EQ(aarch64::decode_logical_imm(*enc, bits), v) << std::hex << *v;
        }
        EXPECT_EQ(valid.size(), bits == 64 ? 5334u : 1302u);
        // Every other value is refused: random ones and each value next to a valid one.
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (int k = 0; k < 200000; ++k) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = bits == 32 ? x >> 32 : x;
            EXPECT_EQ(aarch64::encode_logical_imm(v, bits).has_value(), valid.count(v) == 1) << std::hex << v;
        }
        for (uint64_t v : valid) {
            for (uint64_t w : {v + 1, v - 1, v ^ 0x10}) {
                if (bits == 32) w &= 0xffffffffu;
                EXPECT_EQ(aarch64::encode_logical_imm(w, bits).has_value(), valid.count(w) == 1) << std::hex << w;
            }
        }
    }
    EXPECT_FALSE(aarch64::encode_logical_imm(0, 64));
    EXPECT_FALSE(aarch64::encode_logical_imm(~uint64_t{0}, 64));
    EXPECT_FALSE(aarch64::encode_logical_imm(0xffffffff, 32));
    EXPECT_TRUE(aarch64::encode_logical_imm(0xffffffff, 64));
}

TEST(Aarch64Backend, EveryRunFileTestFunctionCompilesAsWithAFreshIsa) {
    namespace fs = std::filesystem;
    CompileOptions opts;
    opts.check_regalloc = true;
    Context ctx(isa_by_name("aarch64"), opts);
    unsigned compiled = 0;
    for (const auto& entry : fs::directory_iterator(std::string(HERON_SOURCE_DIR) + "/tests/filetests/run")) {
        if (entry.path().extension() != ".clif") continue;
        std::ifstream in(entry.path());
        std::stringstream ss;
        ss << in.rdbuf();
        ParseOutcome parsed = parse_test_file(ss.str());
        ASSERT_TRUE(parsed.ok()) << entry.path();
        for (const ParsedFunction& pf : parsed.file.functions) {
            CompiledCode code;
            std::string err = error_text(ctx.compile(*pf.func, code));
            EXPECT_EQ(err, "") << entry.path() << ": " << pf.func->name.to_string();
            EXPECT_EQ(code.bytes.size() % 4, 0u);
            // The driver and ISA keep their lowering, allocator and
            // emitter state from one function to the next: the result
            // equals a fresh one's.
            CompiledCode fresh;
            ASSERT_EQ(error_text(Context(isa_by_name("aarch64"), opts).compile(*pf.func, fresh)), err);
            const std::string where = entry.path().string() + ": " + pf.func->name.to_string();
            EXPECT_EQ(code.bytes, fresh.bytes) << where;
            EXPECT_EQ(code.frame_size, fresh.frame_size) << where;
            EXPECT_EQ(code.labels, fresh.labels) << where;
            ASSERT_EQ(code.trap_sites.size(), fresh.trap_sites.size()) << where;
            for (size_t k = 0; k < code.trap_sites.size(); ++k) {
                EXPECT_EQ(code.trap_sites[k].offset, fresh.trap_sites[k].offset) << where;
                EXPECT_EQ(code.trap_sites[k].ir_inst, fresh.trap_sites[k].ir_inst) << where;
            }
            ASSERT_EQ(code.relocations.size(), fresh.relocations.size()) << where;
            for (size_t k = 0; k < code.relocations.size(); ++k)
                EXPECT_EQ(code.relocations[k].offset, fresh.relocations[k].offset) << where;
            ++compiled;
        }
    }
    EXPECT_GT(compiled, 200u);
}

}  // namespace
}  // namespace heron
