// The AArch64 backend on any host: compile IR for aarch64 (register
// allocation checker on) and compare the Capstone disassembly of the code
// with what AAPCS64 and the lowering's fusions call for; check the trap
// table, relocations and the frame; every function of the run file tests
// compiles. Running the code is `make test-aarch64`'s job (qemu-user).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "codegen/ir/parser.h"
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
    c.error = isa->compile(*fs[0], opts, c.code);
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

TEST(Aarch64Backend, EveryRunFileTestFunctionCompiles) {
    namespace fs = std::filesystem;
    auto isa = isa_by_name("aarch64");
    CompileOptions opts;
    opts.check_regalloc = true;
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
            std::string err = isa->compile(*pf.func, opts, code);
            EXPECT_EQ(err, "") << entry.path() << ": " << pf.func->name.to_string();
            EXPECT_EQ(code.bytes.size() % 4, 0u);
            ++compiled;
        }
    }
    EXPECT_GT(compiled, 200u);
}

}  // namespace
}  // namespace heron
