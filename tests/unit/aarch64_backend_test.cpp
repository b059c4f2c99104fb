// The AArch64 backend on any host, what file tests cannot say: the trap
// table, relocations, jump-table entries and frame sizes of compiled code,
// functions generated too large to write out, the logical-immediate
// encoder, and that every function of the run file tests compiles with one
// ISA as with a fresh one. The expected code of the fusions and
// conventions is in tests/filetests/compile/aarch64-*.clif (`test
// compile`); running the code is `make test-aarch64`'s job (qemu-user).
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

uint32_t word_at(const CompiledCode& c, uint32_t off) {
    return uint32_t{c.bytes[off]} | uint32_t{c.bytes[off + 1]} << 8 | uint32_t{c.bytes[off + 2]} << 16 |
           uint32_t{c.bytes[off + 3]} << 24;
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
    // Two out-of-line udf stubs: division by zero, then overflow (MIN / -1).
    ASSERT_EQ(c.code.trap_sites.size(), 2u);
    EXPECT_EQ(c.code.trap_sites[0].code, TrapCode::integer_division_by_zero());
    EXPECT_EQ(c.code.trap_sites[1].code, TrapCode::integer_overflow());
    for (const CodeTrapSite& s : c.code.trap_sites) EXPECT_EQ(word_at(c.code, s.offset), 0u) << "udf #0";
}

TEST(Aarch64Backend, CallsHaveOneRelocatedSlotAndAFrameForTheSavedRegister) {
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
    ASSERT_EQ(c.code.relocations.size(), 1u);
    EXPECT_EQ(c.code.relocations[0].target.name, "g");
    EXPECT_EQ(c.code.relocations[0].offset % 8, 0u);
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

TEST(Aarch64Backend, LargeFramesAreTheirSlotsRoundedUp) {
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
    EXPECT_EQ(c.code.frame_size, 16u + 20000u + (16 - 20000 % 16) % 16);
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
