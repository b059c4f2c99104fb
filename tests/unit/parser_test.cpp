// Unit tests of the CLIF parser: round trips of every instruction format,
// literal edges, integer ranges, each class of error with its location,
// recovery, forward references, sparse numbering, the file header and
// comments, every .clif file of the tree, the annotated error files, and a
// robustness sweep over truncated and mutated inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"

namespace heron {
namespace {

namespace fs = std::filesystem;

std::string print_all(const TestFile& file) {
    std::string out;
    for (const ParsedFunction& pf : file.functions) write_function(out, *pf.func);
    return out;
}

std::string errors_text(const Diagnostics& errors) {
    std::string out;
    for (const Diagnostic& d : errors) out += d.format("") + "\n";
    return out;
}

/// Parses text that must be free of errors.
TestFile parse_ok(std::string_view text) {
    ParseOutcome out = parse_test_file(text);
    EXPECT_TRUE(out.ok()) << errors_text(out.errors) << "in:\n" << text;
    return std::move(out.file);
}

Diagnostics parse_errors(std::string_view text) { return parse_test_file(text).errors; }

/// The message of the only error `text` produces.
std::string only_error(std::string_view text) {
    Diagnostics errs = parse_errors(text);
    EXPECT_EQ(errs.size(), 1u) << errors_text(errs) << "in:\n" << text;
    return errs.empty() ? "" : errs[0].message;
}

/// A function whose entry block holds `body` (one line per instruction).
std::string wrap(std::string_view params, std::string_view rets, std::string_view body) {
    std::string out = "function %t(" + std::string(params) + ")";
    if (!rets.empty()) out += " -> " + std::string(rets);
    out += " {\nblock0";
    if (!params.empty()) {
        out += "(";
        std::string p(params);
        size_t n = 0, start = 0;
        for (;;) {
            size_t comma = p.find(',', start);
            std::string ty = p.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            while (!ty.empty() && ty.front() == ' ') ty.erase(ty.begin());
            if (n) out += ", ";
            out += "v" + std::to_string(n++) + ": " + ty;
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        out += ")";
    }
    out += ":\n" + std::string(body) + "}\n";
    return out;
}

/// The immediate of the first instruction of a function.
uint64_t first_imm(const TestFile& file) {
    const Function& f = *file.functions.at(0).func;
    Inst i = *f.layout.first_inst(*f.layout.entry_block());
    return f.dfg[i].imm;
}

uint64_t f32_bits_of(std::string_view lit) {
    TestFile file = parse_ok(wrap("", "f32", "    v0 = f32const " + std::string(lit) + "\n    return v0\n"));
    return file.functions.empty() ? ~uint64_t{0} : first_imm(file);
}

uint64_t f64_bits_of(std::string_view lit) {
    TestFile file = parse_ok(wrap("", "f64", "    v0 = f64const " + std::string(lit) + "\n    return v0\n"));
    return file.functions.empty() ? ~uint64_t{0} : first_imm(file);
}

std::string f32_error(std::string_view lit) {
    return only_error(wrap("", "f32", "    v0 = f32const " + std::string(lit) + "\n    return v0\n"));
}

std::string f64_error(std::string_view lit) {
    return only_error(wrap("", "f64", "    v0 = f64const " + std::string(lit) + "\n    return v0\n"));
}

// --- round trips -------------------------------------------------------------------------

// Canonical text using every instruction format; it must print back
// byte for byte.
constexpr std::string_view kAllFormats = R"(function %formats(i64, i32, f32, f64) -> i32 system_v {
    ss0 = explicit_slot 16, align = 8, key = 7
    ss1 = explicit_slot 0
    sig0 = (i64, i32 sext) -> i32 uext tail
    sig1 = ()
    fn0 = colocated %callee sig0
    fn1 = u1:7 sig1
block0(v0: i64, v1: i32, v2: f32, v3: f64):
    nop
    v4 = iconst.i32 -5
    v5 = f32const 0x1.8p1
    v6 = f64const -NaN:0x1
    v7 = ineg v1
    v8 = bitcast.i32 big v2
    v9 = iadd v1, v4
    v10 = select v1, v9, v4
    v11 = icmp slt v1, v9
    v12, v13 = uadd_overflow_cin v1, v9, v11
    v14 = uadd_overflow_trap v1, v9, user7
    v15 = fcmp uno v2, v5
    v16 = load.i64 notrap aligned v0+8
    v17 = sload16.i32 int_divz readonly v0-4
    store v1, v0
    istore8 user3 little v1, v0+16
    v18 = stack_addr.i64 ss0+8
    v19 = func_addr.i64 fn0
    v20 = call fn0(v0, v1)
    call fn1()
    v21 = call_indirect sig0, v19(v0, v1)
    trapz v1, user2
    trapnz v11, int_divz
    brif v1, block1(v9), block2
block1(v22: i32):
    jump block3(v22)
block2 cold:
    br_table v1, block3(v4), [block3(v9), block4, block3(v4)]
block3(v23: i32):
    return v23
block4:
    trap heap_oob
}
function %tailer(i64) -> i32 tail {
    sig0 = (i64) -> i32 tail
    fn0 = %callee sig0
block0(v0: i64):
    v1 = func_addr.i64 fn0
    brif v0, block1, block2
block1:
    return_call fn0(v0)
block2:
    return_call_indirect sig0, v1(v0)
}
)";

TEST(ParserRoundTrip, EveryInstructionFormatPrintsBackIdentically) {
    TestFile file = parse_ok(kAllFormats);
    ASSERT_EQ(file.functions.size(), 2u);
    EXPECT_EQ(print_all(file), kAllFormats);

    // The text above must keep covering every format in opcodes.def.
    std::set<InstructionFormat> seen;
    for (const ParsedFunction& pf : file.functions) {
        for (Block b : pf.func->layout.blocks()) {
            for (Inst i : pf.func->layout.block_insts(b)) seen.insert(pf.func->dfg[i].format());
        }
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(InstructionFormat::CallIndirect) + 1);
}

TEST(ParserRoundTrip, ParsedDataMatchesTheText) {
    TestFile file = parse_ok(kAllFormats);
    const Function& f = *file.functions.at(0).func;
    EXPECT_EQ(f.name, ExternalName::testcase("formats"));
    EXPECT_EQ(f.signature.call_conv, CallConv::SystemV);
    ASSERT_EQ(f.stack_slots.size(), 2u);
    EXPECT_EQ(f.stack_slots[StackSlot(0)].size, 16u);
    EXPECT_EQ(f.stack_slots[StackSlot(0)].align, 8u);
    EXPECT_EQ(f.stack_slots[StackSlot(0)].key, std::optional<uint64_t>(7));
    const Signature& sig0 = f.dfg.signatures[SigRef(0)];
    EXPECT_EQ(sig0.call_conv, CallConv::Tail);
    EXPECT_EQ(sig0.params.at(1), AbiParam(types::I32, ArgExt::Sext));
    EXPECT_EQ(sig0.returns.at(0), AbiParam(types::I32, ArgExt::Uext));
    EXPECT_TRUE(f.dfg.ext_funcs[FuncRef(0)].colocated);
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(1)].name, ExternalName::user(1, 7));
    EXPECT_TRUE(f.layout.is_cold(Block(2)));
    EXPECT_FALSE(f.layout.is_cold(Block(1)));
    // Result types follow the opcode's typing rule.
    EXPECT_EQ(f.dfg.value_type(Value(11)), types::I8);   // icmp
    EXPECT_EQ(f.dfg.value_type(Value(12)), types::I32);  // uadd_overflow_cin: sum
    EXPECT_EQ(f.dfg.value_type(Value(13)), types::I8);   // ... and flag
    EXPECT_EQ(f.dfg.value_type(Value(16)), types::I64);  // load.i64
    EXPECT_EQ(f.dfg.value_type(Value(20)), types::I32);  // call: from sig0's returns
    EXPECT_EQ(f.dfg.value_type(Value(5)), types::F32);
    // Memory flags and offsets.
    Inst istore = f.dfg.value_def(Value(18)).inst();  // stack_addr; istore8 is the one before
    Inst store8 = *f.layout.prev_inst(istore);
    EXPECT_EQ(f.dfg[store8].opcode, Opcode::Istore8);
    EXPECT_EQ(f.dfg[store8].offset, 16);
    EXPECT_EQ(f.dfg[store8].flags.trap_code()->byte, 3);
    EXPECT_TRUE(f.dfg[store8].flags.has(MemFlags::Little));
    EXPECT_EQ(f.dfg[f.dfg.value_def(Value(17)).inst()].offset, -4);
}

TEST(ParserRoundTrip, OptionalSpellingsBecomeCanonical) {
    // Redundant suffixes, `cold` convention, unsorted flags, explicit
    // heap_oob, +0 offsets, hex immediates and empty parentheses.
    TestFile file = parse_ok(R"(function %f(i64) -> i32 cold {
block0(v0: i64):
    v1 = iconst.i32 0x10
    v2 = iadd.i32 v1, v1
    v3 = load.i32 little can_move readonly aligned notrap v0+0
    v4 = load.i32 heap_oob v0
    v5 = load.i32 notrap user9 v0
    v6 = load.i32 user9 notrap v0
    store.i32 aligned v2, v0-0
    jump block1()
block1:
    v7 = iconst.i64 100_000
    return v2
}
)");
    EXPECT_EQ(print_all(file), R"(function %f(i64) -> i32 {
block0(v0: i64):
    v1 = iconst.i32 16
    v2 = iadd v1, v1
    v3 = load.i32 notrap aligned readonly can_move little v0
    v4 = load.i32 v0
    v5 = load.i32 user9 v0
    v6 = load.i32 notrap v0
    store aligned v2, v0
    jump block1
block1:
    v7 = iconst.i64 0x1_86a0
    return v2
}
)");
}

TEST(ParserRoundTrip, AliasesArePrintedAtTheEntryAndSurviveAReparse) {
    TestFile file = parse_ok(R"(function %f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    jump block1
block1:
    v5 -> v2
    v2 = iadd v0, v1
    v3 -> v5
    return v3
}
)");
    const Function& f = *file.functions.at(0).func;
    EXPECT_TRUE(f.dfg.value_is_alias(Value(3)));
    EXPECT_EQ(f.dfg.resolve_aliases(Value(3)), Value(2));
    EXPECT_EQ(f.dfg.value_type(Value(3)), types::I32) << "an alias takes its target's type";
    EXPECT_EQ(f.dfg.resolve_aliases(Value(4)), Value(4)) << "v4 is an unused placeholder (a self-alias)";
    constexpr std::string_view kPrinted = R"(function %f(i32) -> i32 {
block0(v0: i32):
    v3 -> v5
    v5 -> v2
    v1 = iconst.i32 1
    jump block1
block1:
    v2 = iadd v0, v1
    return v3
}
)";
    std::string printed = print_all(file);
    EXPECT_EQ(printed, kPrinted);
    EXPECT_EQ(print_all(parse_ok(printed)), kPrinted);
}

TEST(ParserRoundTrip, SparseAndOutOfOrderNumbersAreKept) {
    TestFile file = parse_ok(R"(function %f(i32) -> i32 {
    ss3 = explicit_slot 4
    sig5 = (i32) -> i32
    fn2 = %g sig5
block7(v10: i32):
    v30 = call fn2(v10)
    jump block2(v30)
block2(v20: i32):
    return v20
}
)");
    const Function& f = *file.functions.at(0).func;
    EXPECT_EQ(*f.layout.entry_block(), Block(7));
    EXPECT_EQ(f.dfg.block_params(Block(7))[0], Value(10));
    EXPECT_EQ(f.dfg.block_params(Block(2))[0], Value(20));
    EXPECT_EQ(f.dfg.value_def(Value(30)).kind, ValueDef::Kind::Result);
    EXPECT_EQ(f.stack_slots.size(), 4u);
    EXPECT_EQ(f.stack_slots[StackSlot(3)].size, 4u);
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(2)].signature, SigRef(5));
    std::string printed = print_all(file);
    // Gaps in ss/sig numbering print as empty declarations; fn gaps are
    // skipped. Either way the text is stable from the first print on.
    EXPECT_NE(printed.find("block7(v10: i32):\n    v30 = call fn2(v10)\n    jump block2(v30)\nblock2(v20: i32):"),
              std::string::npos)
        << printed;
    EXPECT_NE(printed.find("    sig5 = (i32) -> i32\n    fn2 = %g sig5\n"), std::string::npos) << printed;
    EXPECT_EQ(printed.find("fn0"), std::string::npos) << printed;
    EXPECT_EQ(print_all(parse_ok(printed)), printed);
}

TEST(ParserRoundTrip, InlineSignaturesTakeNumbersAfterTheHighestDeclared) {
    TestFile file = parse_ok(R"(function %f(i64) {
    fn0 = %a(i64) -> i64
    sig3 = (i32)
    fn1 = colocated %b(f32) system_v
    fn2 = %c sig3
block0(v0: i64):
    v1 = call fn0(v0)
    v2 = call_indirect sig4, v0(v0)
    return
}
)");
    const Function& f = *file.functions.at(0).func;
    ASSERT_EQ(f.dfg.signatures.size(), 6u);
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(0)].signature, SigRef(4));
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(1)].signature, SigRef(5));
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(2)].signature, SigRef(3));
    EXPECT_EQ(f.dfg.signatures[SigRef(5)].call_conv, CallConv::SystemV);
    EXPECT_EQ(f.dfg.signatures[SigRef(4)].returns.at(0).type, types::I64);
}

TEST(ParserRoundTrip, RuntestIdiomSigZeroFromAnInlineSignature) {
    // Runtests write `; sig0 = ...` as a comment and use the anonymous
    // signature of fn0 as sig0.
    TestFile file = parse_ok(R"(function %f(i64) -> i64 {
    ; sig0 = (i64) -> i64
    fn0 = %callee(i64) -> i64
block0(v0: i64):
    v1 = func_addr.i64 fn0
    v2 = call_indirect sig0, v1(v0)
    return v2
}
)");
    const Function& f = *file.functions.at(0).func;
    EXPECT_EQ(f.dfg.ext_funcs[FuncRef(0)].signature, SigRef(0));
    EXPECT_EQ(f.dfg.value_type(Value(2)), types::I64);
}

TEST(ParserForwardRefs, ValuesDefinedInLaterBlocksTypeTheirUsers) {
    TestFile file = parse_ok(R"(function %f(i32) -> i64 {
block0(v0: i32):
    jump block2
block1:
    v5 = iadd v4, v4
    v6 = icmp eq v5, v4
    v7, v8 = uadd_overflow v5, v4
    v9 = select v6, v3, v3
    return v9
block2:
    v3 = iconst.i64 1
    v4 = iadd v3, v3
    jump block1
}
)");
    const Function& f = *file.functions.at(0).func;
    EXPECT_EQ(f.dfg.value_type(Value(5)), types::I64);
    EXPECT_EQ(f.dfg.value_type(Value(6)), types::I8);
    EXPECT_EQ(f.dfg.value_type(Value(7)), types::I64);
    EXPECT_EQ(f.dfg.value_type(Value(8)), types::I8);
    EXPECT_EQ(f.dfg.value_type(Value(9)), types::I64);
    std::string printed = print_all(file);
    EXPECT_NE(printed.find("    v5 = iadd v4, v4\n"), std::string::npos) << "valid forward refs need no suffix\n"
                                                                         << printed;
    EXPECT_EQ(print_all(parse_ok(printed)), printed);
}

TEST(ParserForwardRefs, TypeCycleKeepsItsSuffixSoThePrintParsesBack) {
    // Not verifiable (v1 and v2 use each other), but accepted: the written
    // suffix is the only source of the type, so the printer keeps it.
    std::string text = wrap("", "i64", "    v1 = imul.i16 v2, v2\n    v2 = isub v1, v1\n    v3 = iadd.i16 v2, v1\n"
                                       "    return v1\n");
    TestFile file = parse_ok(text);
    EXPECT_EQ(file.functions.at(0).func->dfg.value_type(Value(2)), types::I16);
    std::string printed = print_all(file);
    EXPECT_NE(printed.find("    v1 = imul.i16 v2, v2\n    v2 = isub v1, v1\n    v3 = iadd v2, v1\n"),
              std::string::npos)
        << printed;
    EXPECT_EQ(print_all(parse_ok(printed)), printed);
}

TEST(ParserForwardRefs, ChainsWrittenBackwardsResolve) {
    // Each use comes before its operand's definition.
    std::string body = "    v1 = iadd v2, v2\n    v2 = iadd v3, v3\n    v3 = iadd v4, v4\n"
                       "    jump block1\nblock1:\n    v4 = iconst.i16 3\n    return v1\n";
    TestFile file = parse_ok(wrap("", "i16", body));
    const Function& f = *file.functions.at(0).func;
    for (uint32_t v = 1; v <= 4; ++v) EXPECT_EQ(f.dfg.value_type(Value(v)), types::I16) << "v" << v;
}

TEST(ParserForwardRefs, SuffixIsCheckedAgainstAForwardOperandAtTheEnd) {
    std::string ok = "    v1 = iadd.i64 v2, v2\n    jump block1\nblock1:\n    v2 = iconst.i64 1\n    return v1\n";
    TestFile file = parse_ok(wrap("", "i64", ok));
    EXPECT_EQ(file.functions.at(0).func->dfg.value_type(Value(1)), types::I64);

    std::string bad = "    v1 = iadd.i32 v2, v2\n    jump block1\nblock1:\n    v2 = iconst.i64 1\n    return v1\n";
    Diagnostics errs = parse_errors(wrap("", "i64", bad));
    ASSERT_EQ(errs.size(), 1u) << errors_text(errs);
    EXPECT_EQ(errs[0].message, "type suffix .i32 does not match the type of v2 (i64)");
    EXPECT_EQ(errs[0].loc.line, 3u);
    EXPECT_EQ(errs[0].loc.col, 15u);
}

TEST(ParserForwardRefs, UnresolvableTypeCycleIsAnError) {
    std::string body = "    v1 = iadd v2, v2\n    v2 = iadd v1, v1\n    return v1\n";
    Diagnostics errs = parse_errors(wrap("", "i32", body));
    ASSERT_EQ(errs.size(), 2u) << errors_text(errs);
    for (const Diagnostic& d : errs) EXPECT_NE(d.message.find("cannot determine the type of iadd"), std::string::npos);
    EXPECT_EQ(errs[0].loc.line, 3u);
    EXPECT_EQ(errs[1].loc.line, 4u);
}

// --- literals ---------------------------------------------------------------------------------

TEST(ParserFloats, F32LiteralEdges) {
    EXPECT_EQ(f32_bits_of("0x1.8p1"), 0x40400000u);
    EXPECT_EQ(f32_bits_of("0x1p0"), 0x3f800000u);
    EXPECT_EQ(f32_bits_of("0x10.0"), 0x41800000u);
    EXPECT_EQ(f32_bits_of("0x.8p1"), 0x3f800000u);
    EXPECT_EQ(f32_bits_of("0.0"), 0u);
    EXPECT_EQ(f32_bits_of("-0.0"), 0x80000000u);
    EXPECT_EQ(f32_bits_of("0x0.0"), 0u);
    EXPECT_EQ(f32_bits_of("-0x0.0"), 0x80000000u);
    EXPECT_EQ(f32_bits_of("+Inf"), 0x7f800000u);
    EXPECT_EQ(f32_bits_of("Inf"), 0x7f800000u);
    EXPECT_EQ(f32_bits_of("-Inf"), 0xff800000u);
    EXPECT_EQ(f32_bits_of("+NaN"), 0x7fc00000u);
    EXPECT_EQ(f32_bits_of("NaN"), 0x7fc00000u);
    EXPECT_EQ(f32_bits_of("-NaN"), 0xffc00000u);
    EXPECT_EQ(f32_bits_of("+NaN:0x1"), 0x7fc00001u);
    EXPECT_EQ(f32_bits_of("-NaN:0x3fffff"), 0xffffffffu);
    EXPECT_EQ(f32_bits_of("+sNaN:0x1"), 0x7f800001u);
    EXPECT_EQ(f32_bits_of("-sNaN:0x200000"), 0xffa00000u);
    EXPECT_EQ(f32_bits_of("0x0.000002p-126"), 1u);
    EXPECT_EQ(f32_bits_of("-0x0.000002p-126"), 0x80000001u);
    EXPECT_EQ(f32_bits_of("0x1.0p-149"), 1u);
    EXPECT_EQ(f32_bits_of("0x0.fffffep-126"), 0x7fffffu);
    EXPECT_EQ(f32_bits_of("0x1.0p-126"), 0x00800000u);
    EXPECT_EQ(f32_bits_of("0x1.fffffep127"), 0x7f7fffffu);
    EXPECT_EQ(f32_bits_of("0x1.0000000000000000000000p0"), 0x3f800000u) << "trailing zeros beyond 64 bits";
    EXPECT_EQ(f32_bits_of("0x0.00000000000000000000000001p0"), 0x0b800000u) << "2^-104, leading zeros";
}

TEST(ParserFloats, F64LiteralEdges) {
    EXPECT_EQ(f64_bits_of("0x1.0p0"), 0x3ff0000000000000u);
    EXPECT_EQ(f64_bits_of("0x1.0000000000001p0"), 0x3ff0000000000001u);
    EXPECT_EQ(f64_bits_of("0x0.0000000000001p-1022"), 1u);
    EXPECT_EQ(f64_bits_of("0x1.0p-1074"), 1u);
    EXPECT_EQ(f64_bits_of("0x1.fffffffffffffp1023"), 0x7fefffffffffffffu);
    EXPECT_EQ(f64_bits_of("-NaN:0x1"), 0xfff8000000000001u);
    EXPECT_EQ(f64_bits_of("+sNaN:0x1"), 0x7ff0000000000001u);
    EXPECT_EQ(f64_bits_of("-0.0"), 0x8000000000000000u);
    EXPECT_EQ(f64_bits_of("-Inf"), 0xfff0000000000000u);
    EXPECT_EQ(f64_bits_of("0xB2D05E00.0"), 0x41e65a0bc0000000u);
}

TEST(ParserFloats, InexactOrMalformedLiteralsAreRejected) {
    EXPECT_NE(f32_error("0x1.000001p0").find("not exactly representable"), std::string::npos);
    EXPECT_NE(f32_error("0x1.0p-150").find("not exactly representable"), std::string::npos);
    EXPECT_NE(f32_error("0x3.0p-150").find("not exactly representable"), std::string::npos);
    EXPECT_NE(f32_error("0x1.0p128").find("too large"), std::string::npos);
    EXPECT_NE(f64_error("0x1.00000000000008p0").find("not exactly representable"), std::string::npos);
    EXPECT_NE(f64_error("0x1.0p-1075").find("not exactly representable"), std::string::npos);
    EXPECT_NE(f64_error("0x1.0p1024").find("too large"), std::string::npos);
    EXPECT_NE(f64_error("0x1.00000000000000001p0").find("not exactly representable"), std::string::npos)
        << "a nonzero digit beyond 16 significant digits";
    EXPECT_NE(f32_error("0x10").find("expected float literal, found integer '0x10'"), std::string::npos);
    EXPECT_NE(f32_error("1.5").find("must be hexadecimal"), std::string::npos);
    EXPECT_NE(f32_error("sNaN").find("nonzero payload"), std::string::npos);
    EXPECT_NE(f32_error("+sNaN:0x0").find("nonzero payload"), std::string::npos);
    EXPECT_NE(f32_error("+NaN:0x400000").find("does not fit"), std::string::npos);
    EXPECT_NE(f32_error("+NaN:1").find("hexadecimal"), std::string::npos);
    EXPECT_NE(f32_error("0x1.0p").find("no exponent digits"), std::string::npos);
    EXPECT_NE(f32_error("0x1..0").find("two '.'"), std::string::npos);
    EXPECT_NE(f32_error("0x1.0q3").find("invalid character 'q'"), std::string::npos);
}

TEST(ParserIntegers, IconstAcceptsExactlyTheRangeOfEachWidth) {
    struct Case {
        const char* type;
        const char* lit;
        uint64_t bits;
    };
    const Case ok[] = {
        {"i8", "-128", 0x80}, {"i8", "255", 0xff}, {"i8", "-1", 0xff}, {"i8", "0x7f", 0x7f},
        {"i16", "-32768", 0x8000}, {"i16", "65535", 0xffff}, {"i16", "0xff_ff", 0xffff},
        {"i32", "-2147483648", 0x80000000}, {"i32", "4294967295", 0xffffffff}, {"i32", "-0x1", 0xffffffff},
        {"i64", "-9223372036854775808", 0x8000000000000000}, {"i64", "18446744073709551615", ~uint64_t{0}},
        {"i64", "0xffff_ffff_ffff_ffff", ~uint64_t{0}}, {"i64", "+5", 5}, {"i64", "1_000_000", 1000000},
    };
    for (const Case& c : ok) {
        std::string text = wrap("", c.type, std::string("    v0 = iconst.") + c.type + " " + c.lit + "\n    return v0\n");
        TestFile file = parse_ok(text);
        if (file.functions.empty()) continue;
        EXPECT_EQ(first_imm(file), c.bits) << c.type << " " << c.lit;
    }
    const Case bad[] = {
        {"i8", "-129", 0}, {"i8", "256", 0}, {"i16", "-32769", 0}, {"i16", "65536", 0},
        {"i32", "-2147483649", 0}, {"i32", "0x1_0000_0000", 0},
        {"i64", "-9223372036854775809", 0}, {"i64", "18446744073709551616", 0},
    };
    for (const Case& c : bad) {
        std::string text = wrap("", c.type, std::string("    v0 = iconst.") + c.type + " " + c.lit + "\n    return v0\n");
        std::string msg = only_error(text);
        EXPECT_TRUE(msg.find("out of range") != std::string::npos || msg.find("does not fit") != std::string::npos)
            << c.type << " " << c.lit << ": " << msg;
    }
    EXPECT_NE(only_error(wrap("", "i32", "    v0 = iconst.i32 0x\n    return v0\n")).find("no digits"),
              std::string::npos);
    EXPECT_NE(only_error(wrap("", "i32", "    v0 = iconst.i32 12a\n    return v0\n")).find("invalid digit"),
              std::string::npos);
    EXPECT_NE(only_error(wrap("", "i32", "    v0 = iconst.i32 0x1.0\n    return v0\n")).find("expected integer"),
              std::string::npos);
}

TEST(ParserIntegers, OffsetsAreSigned32Bit) {
    auto offset_of = [](std::string_view off) {
        TestFile file = parse_ok(wrap("i64", "i8", "    v1 = load.i8 v0" + std::string(off) + "\n    return v1\n"));
        return file.functions.empty() ? 0 : file.functions[0].func->dfg[Inst(0)].offset;
    };
    EXPECT_EQ(offset_of("+2147483647"), INT32_MAX);
    EXPECT_EQ(offset_of("-2147483648"), INT32_MIN);
    EXPECT_EQ(offset_of("-0x10"), -16);
    EXPECT_NE(only_error(wrap("i64", "i8", "    v1 = load.i8 v0+2147483648\n    return v1\n")).find("out of range"),
              std::string::npos);
    EXPECT_NE(only_error(wrap("i64", "i8", "    v1 = load.i8 v0 8\n    return v1\n")).find("explicit sign"),
              std::string::npos);
}

// --- errors -------------------------------------------------------------------------------------

TEST(ParserErrors, RemovedAndUnsupportedOpcodesGetHints) {
    auto msg = [](std::string_view inst) { return only_error(wrap("i32", "", "    " + std::string(inst) + "\n    return\n")); };
    EXPECT_EQ(msg("v1 = iadd_imm v0, 1"), "iadd_imm is not an opcode: use iconst + iadd");
    EXPECT_EQ(msg("v1 = irsub_imm v0, 1"), "irsub_imm is not an opcode: use iconst + isub");
    EXPECT_EQ(msg("v1 = icmp_imm eq v0, 1"), "icmp_imm is not an opcode: use iconst + icmp");
    EXPECT_EQ(msg("brz v0, block1"), "brz was removed: use brif");
    EXPECT_EQ(msg("v1 = stack_load.i32 ss0"), "stack_load was removed: use stack_addr + load");
    EXPECT_EQ(msg("v1 = band_not v0, v0"), "band_not was removed: use bnot + band");
    EXPECT_EQ(msg("v1 = splat.i32x4 v0"), "splat is not supported yet");
    EXPECT_EQ(msg("v1 = uadd_sat v0, v0"), "uadd_sat is not supported yet");
    EXPECT_EQ(msg("v1 = atomic_rmw.i32 add v0, v0"), "atomic_rmw is not supported yet");
    EXPECT_EQ(msg("v1 = frobnicate v0"), "unknown opcode frobnicate");
}

TEST(ParserErrors, TypesOutsideCoreAreNamed) {
    EXPECT_EQ(only_error("function %f(i128) {\nblock0(v0: i128):\n    return\n}\n"), "unsupported type i128");
    EXPECT_EQ(only_error("function %f(i32x4) {\nblock0:\n    return\n}\n"),
              "unsupported type i32x4 (vector types are not in Heron core)");
    EXPECT_EQ(only_error("function %f(b1) {\nblock0:\n    return\n}\n"),
              "unsupported type b1: boolean types were removed; use i8");
    EXPECT_EQ(only_error("function %f(foo) {\nblock0:\n    return\n}\n"), "expected type, found 'foo'");
}

TEST(ParserErrors, TypeSuffixRules) {
    EXPECT_EQ(only_error(wrap("", "i32", "    v0 = iconst 5\n    return v0\n")),
              "opcode iconst needs a type suffix (e.g. iconst.i32)");
    EXPECT_EQ(only_error(wrap("", "", "    jump.i32 block1\nblock1:\n    return\n")),
              "opcode jump does not take a type suffix");
    Diagnostics errs = parse_errors(wrap("i32, i32", "i64", "    v2 = iadd.i64 v0, v1\n    return v2\n"));
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].message, "type suffix .i64 does not match the type of v0 (i32)");
    EXPECT_EQ(errs[0].loc.line, 3u);
    EXPECT_EQ(errs[0].loc.col, 15u);
}

TEST(ParserErrors, DefinitionsAndUsesAreChecked) {
    Diagnostics twice = parse_errors(wrap("i32", "i32", "    v1 = iconst.i32 1\n    v1 = iconst.i32 2\n    return v1\n"));
    ASSERT_EQ(twice.size(), 1u);
    EXPECT_EQ(twice[0].message, "value v1 defined twice");
    EXPECT_EQ(twice[0].loc.line, 4u) << "reported at the second definition";
    EXPECT_EQ(twice[0].loc.col, 5u);

    EXPECT_EQ(only_error(wrap("i32", "i32", "    v1 = iconst.i32 1\n    v0 = iconst.i32 2\n    return v1\n")),
              "value v0 defined twice");

    Diagnostics undef = parse_errors(wrap("i32", "i32", "    v1 = iadd v0, v9\n    v2 = iadd v8, v9\n    return v2\n"));
    ASSERT_EQ(undef.size(), 2u) << errors_text(undef);
    EXPECT_EQ(undef[0].message, "undefined value v9");
    EXPECT_EQ(undef[0].loc.line, 3u);
    EXPECT_EQ(undef[0].loc.col, 19u) << "the first use";
    EXPECT_EQ(undef[1].message, "undefined value v8");

    EXPECT_EQ(only_error(wrap("", "", "    jump block5\n")), "undefined block block5");
    EXPECT_EQ(only_error(wrap("", "", "    return\nblock0:\n    return\n")), "block0 defined twice");
    EXPECT_EQ(only_error(wrap("i32", "", "    v1 -> v2\n    v2 -> v1\n    return\n")), "alias cycle through v1");
    EXPECT_EQ(only_error(wrap("i32", "", "    v1 -> v1\n    return\n")), "alias cycle through v1");
}

TEST(ParserErrors, ResultCountMustMatchTheOpcode) {
    EXPECT_EQ(only_error(wrap("i32", "", "    v1, v2 = iadd v0, v0\n    return\n")),
              "iadd produces 1 result, but 2 are named");
    EXPECT_EQ(only_error(wrap("i32", "", "    v1 = uadd_overflow v0, v0\n    return\n")),
              "uadd_overflow produces 2 results, but 1 are named");
    EXPECT_EQ(only_error(wrap("i32", "", "    v1 = store v0, v0\n    return\n")),
              "store produces 0 results, but 1 are named");
    std::string call = "function %f(i64) {\n    fn0 = %g(i64) -> i64, i8\nblock0(v0: i64):\n"
                       "    v1 = call fn0(v0)\n    return\n}\n";
    EXPECT_EQ(only_error(call), "call produces 2 results, but 1 are named");
}

TEST(ParserErrors, ImmediateOperandsAreValidated) {
    EXPECT_EQ(only_error(wrap("", "", "    trap user0\n")), "invalid trap code user0 (user codes are user1 .. user250)");
    EXPECT_EQ(only_error(wrap("", "", "    trap user251\n")), "invalid trap code user251 (user codes are user1 .. user250)");
    EXPECT_EQ(only_error(wrap("i32", "", "    trapz v0, oops\n    return\n")), "invalid trap code oops");
    EXPECT_EQ(only_error(wrap("i64", "", "    v1 = load.i32 big little v0\n    return\n")),
              "memory flags 'big' and 'little' exclude each other");
    EXPECT_EQ(only_error(wrap("i64", "", "    v1 = load.i32 heap v0\n    return\n")), "memory flag heap is not supported");
    EXPECT_EQ(only_error(wrap("i32", "", "    v1 = icmp lt v0, v0\n    return\n")),
              "expected integer condition code (eq ne slt sge sgt sle ult uge ugt ule), found 'lt'");
    EXPECT_EQ(only_error(wrap("", "", "    v0 = stack_addr.i64 ss0\n    return\n")), "undefined stack slot ss0");
    EXPECT_EQ(only_error(wrap("", "", "    call fn0()\n    return\n")), "undefined function reference fn0");
    EXPECT_EQ(only_error(wrap("i64", "", "    call_indirect sig1, v0()\n    return\n")), "undefined signature sig1");
    EXPECT_EQ(only_error("function %f() {\n    fn0 = %g sig0\nblock0:\n    return\n}\n"), "undefined signature sig0");
}

TEST(ParserErrors, CallingConventions) {
    EXPECT_EQ(only_error("function %f() windows_fastcall {\nblock0:\n    return\n}\n"),
              "unsupported calling convention windows_fastcall");
    EXPECT_EQ(only_error("function %f() apple_aarch64 {\nblock0:\n    return\n}\n"),
              "unsupported calling convention apple_aarch64");
    EXPECT_EQ(only_error("function %f() -> i32 sysv {\nblock0:\n    return\n}\n"), "unknown calling convention sysv");
    TestFile file = parse_ok("function %f() cold {\nblock0:\n    return\n}\n");
    ASSERT_EQ(file.functions.size(), 1u);
    EXPECT_EQ(file.functions[0].func->signature.call_conv, CallConv::Fast);
}

TEST(ParserErrors, PreambleForms) {
    EXPECT_NE(only_error("function %f() {\n    jt0 = jump_table [block1]\nblock0:\n    return\n}\n")
                  .find("jump table declarations were removed"),
              std::string::npos);
    EXPECT_NE(only_error("function %f() {\n    gv0 = vmctx\nblock0:\n    return\n}\n").find("global value"),
              std::string::npos);
    EXPECT_EQ(only_error("function %f() {\n    ss0 = explicit_slot 8, align = 3\nblock0:\n    return\n}\n"),
              "alignment must be a power of two");
    EXPECT_EQ(only_error("function %f() {\n    ss0 = spill_slot 8\nblock0:\n    return\n}\n"),
              "unsupported stack slot kind 'spill_slot'");
    EXPECT_EQ(only_error("function %f() {\n    ss0 = explicit_slot 8\n    ss0 = explicit_slot 4\nblock0:\n    return\n}\n"),
              "ss0 declared twice");
    EXPECT_EQ(only_error("function %f() {\n    ss0 = explicit_slot 4294967296\nblock0:\n    return\n}\n"),
              "stack slot size: integer 4294967296 is out of range (0 .. 4294967295)");
}

TEST(ParserErrors, SyntaxErrorsSayWhatWasExpectedAndWhere) {
    Diagnostics errs = parse_errors("function %f(i32) {\nblock0(v0: i32):\n    v1 = iadd v0 v0\n    return\n}\n");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].message, "expected ',', found 'v0'");
    EXPECT_EQ(errs[0].loc.line, 3u);
    EXPECT_EQ(errs[0].loc.col, 18u);

    errs = parse_errors("function %f() {\nblock0:\n    v1 = iconst.i32 1 2\n    return\n}\n");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].message, "expected end of line, found '2'");

    errs = parse_errors("function %f() {\nblock0:\n    return\n");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].message, "expected instruction, block header or '}', found end of file");
    EXPECT_EQ(errs[0].loc.line, 4u);

    EXPECT_EQ(only_error("func %f() {}\n"), "expected 'function', found 'func'");
    EXPECT_EQ(only_error("function f() {}\n"), "expected function name (%name or uN:M), found 'f'");
}

TEST(ParserErrors, NumbersAreCapped) {
    EXPECT_EQ(only_error(wrap("", "", "    v10000001 = iconst.i32 1\n    return\n")), "value number too large: v10000001");
    EXPECT_EQ(only_error(wrap("", "", "    jump block99999999999999999999\n")),
              "block number too large: block99999999999999999999");
    TestFile file = parse_ok(wrap("", "", "    v10000000 = iconst.i8 1\n    return\n"));
    ASSERT_EQ(file.functions.size(), 1u);
    EXPECT_EQ(file.functions[0].func->dfg.num_values(), 10'000'001u);
}

TEST(ParserErrors, BadBytesAreErrorsNotCrashes) {
    std::string nul = wrap("", "", "    return\n");
    nul.insert(nul.find("return"), std::string(1, '\0'));
    Diagnostics errs = parse_errors(nul);
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_NE(errs[0].message.find("NUL byte"), std::string::npos) << errs[0].message;
    EXPECT_EQ(errs[0].loc.line, 3u);
    EXPECT_EQ(errs[0].loc.col, 5u);

    std::string utf8 = wrap("", "", "    return \xc3\xa9\n");
    EXPECT_NE(only_error(utf8).find("non-ASCII byte (byte 0xc3)"), std::string::npos);
    // UTF-8 inside a comment is fine.
    parse_ok(wrap("", "", "    return ; caf\xc3\xa9\n"));
}

TEST(ParserRecovery, SeveralErrorsAndTheGoodFunctionsSurvive) {
    constexpr std::string_view kText = R"(function %a() {
block0:
    v0 = iadd_imm v1, 1
    return
}
function %b() -> i32 {
block0:
    v0 = iconst.i32 3
    return v0
}
function %c() {
block0:
    return
function %d() {
block0:
    v0 = iconst.i8 300
    return
}
function %e() {
block0:
    return
}
)";
    ParseOutcome out = parse_test_file(kText);
    ASSERT_EQ(out.errors.size(), 3u) << errors_text(out.errors);
    EXPECT_EQ(out.errors[0].loc.line, 3u);
    EXPECT_EQ(out.errors[1].loc.line, 14u);
    EXPECT_EQ(out.errors[1].message, "expected '}', found 'function'");
    EXPECT_EQ(out.errors[2].loc.line, 16u);
    std::vector<std::string> names;
    for (const ParsedFunction& pf : out.file.functions) names.push_back(pf.func->name.to_string());
    EXPECT_EQ(names, (std::vector<std::string>{"%b", "%e"}));
}

TEST(ParserRecovery, ASecondFunctionOfTheSameNameIsAnErrorNamingTheFirst) {
    constexpr std::string_view kText = R"(function %f() -> i32 {
block0:
    v0 = iconst.i32 1
    return v0
}
function %g() {
block0:
    return
}
function %f() -> i32 {
block0:
    v0 = iconst.i32 2
    return v0
}
function u0:3() {
block0:
    return
}
function u0:3() {
block0:
    return
}
)";
    ParseOutcome out = parse_test_file(kText);
    ASSERT_EQ(out.errors.size(), 2u) << errors_text(out.errors);
    EXPECT_EQ(out.errors[0].loc.line, 10u);
    EXPECT_EQ(out.errors[0].message, "function %f is defined twice (first at line 1)");
    EXPECT_EQ(out.errors[1].loc.line, 19u);
    EXPECT_EQ(out.errors[1].message, "function u0:3 is defined twice (first at line 15)");
    // The first definition is kept, the second dropped.
    std::vector<std::string> names;
    for (const ParsedFunction& pf : out.file.functions) names.push_back(pf.func->name.to_string());
    EXPECT_EQ(names, (std::vector<std::string>{"%f", "%g", "u0:3"}));
    EXPECT_NE(print_all(out.file).find("iconst.i32 1"), std::string::npos);
}

TEST(ParserErrors, AFunctionReferenceDeclaredTwiceIsNamedAtTheSecond) {
    Diagnostics errs = parse_errors(
        "function %f() {\n    fn0 = %g()\n    fn1 = %h()\n    fn0 = %k()\nblock0:\n    return\n}\n");
    ASSERT_EQ(errs.size(), 1u) << errors_text(errs);
    EXPECT_EQ(errs[0].message, "fn0 declared twice");
    EXPECT_EQ(errs[0].loc.line, 4u);
}

TEST(ParserRecovery, GarbageBetweenFunctionsIsReportedOnce) {
    ParseOutcome out = parse_test_file("function %a() {\nblock0:\n    return\n}\n} ] ) garbage\nfunction %b() {\nblock0:\n    return\n}\n");
    ASSERT_EQ(out.errors.size(), 1u) << errors_text(out.errors);
    EXPECT_EQ(out.errors[0].message, "expected 'function', found '}'");
    EXPECT_EQ(out.file.functions.size(), 2u);
}

// --- file structure -----------------------------------------------------------------------------

TEST(ParserFile, HeaderCommentsAndSourceMap) {
    constexpr std::string_view kText = R"(; A file comment.
test interpret
test run
set opt_level=speed
set enable_verifier
target x86_64 has_avx
target aarch64

; About %f.
function %f(i32) -> i32 {   ; on the function line
block0(v0: i32):
    v1 = iconst.i32 1       ; inline
    jump block1
block1:
    v2 = iadd v0, v1
    return v2
}
; run: %f(1) == 2

function %g() {
block0:
    return
}
; run: %g() == []
)";
    TestFile file = parse_ok(kText);
    EXPECT_EQ(file.tests, (std::vector<std::string>{"interpret", "run"}));
    ASSERT_EQ(file.settings.size(), 2u);
    EXPECT_EQ(file.settings[0], std::make_pair(std::string("opt_level"), std::string("speed")));
    EXPECT_EQ(file.settings[1], std::make_pair(std::string("enable_verifier"), std::string("true")));
    EXPECT_EQ(file.targets, (std::vector<std::string>{"x86_64 has_avx", "aarch64"}));
    ASSERT_EQ(file.preamble_comments.size(), 2u);
    EXPECT_EQ(file.preamble_comments[0].line, 1u);
    EXPECT_EQ(file.preamble_comments[0].text, " A file comment.");
    EXPECT_EQ(file.preamble_comments[1].text, " About %f.");

    ASSERT_EQ(file.functions.size(), 2u);
    const ParsedFunction& f = file.functions[0];
    ASSERT_EQ(f.comments.size(), 3u);
    EXPECT_EQ(f.comments[0].line, 10u);
    EXPECT_EQ(f.comments[1].text, " inline");
    EXPECT_EQ(f.comments[2].line, 18u);
    EXPECT_EQ(f.comments[2].text, " run: %f(1) == 2");
    ASSERT_EQ(file.functions[1].comments.size(), 1u);
    EXPECT_EQ(file.functions[1].comments[0].text, " run: %g() == []");

    EXPECT_EQ(f.srcmap.function.line, 10u);
    EXPECT_EQ(f.srcmap.function.col, 1u);
    EXPECT_EQ(f.srcmap.end_line, 17u);
    EXPECT_EQ(f.srcmap.block_line[Block(0)], 11u);
    EXPECT_EQ(f.srcmap.block_line[Block(1)], 14u);
    EXPECT_EQ(f.srcmap.inst_line[Inst(0)], 12u);
    EXPECT_EQ(f.srcmap.inst_line[Inst(1)], 13u);
    EXPECT_EQ(f.srcmap.inst_line[Inst(3)], 16u);
}

TEST(ParserFile, ParseFunctionsReturnsTheGoodOnesAndTheErrors) {
    Diagnostics errs;
    auto funcs = parse_functions("function %a() {\nblock0:\n    return\n}\nfunction %b() {\nblock0:\n    oops\n}\n", errs);
    ASSERT_EQ(funcs.size(), 1u);
    EXPECT_EQ(funcs[0]->name.to_string(), "%a");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].message, "unknown opcode oops");
}

TEST(ParserFile, UserNamesAndEmptyFunctions) {
    TestFile file = parse_ok("function u0:42() {\n}\nfunction %0() {\n}\n");
    ASSERT_EQ(file.functions.size(), 2u);
    EXPECT_EQ(file.functions[0].func->name, ExternalName::user(0, 42));
    EXPECT_EQ(print_all(file), "function u0:42() {\n}\nfunction %0() {\n}\n");
}

// --- every file of the tree -------------------------------------------------------------------

fs::path source_dir() {
    if (const char* env = std::getenv("HERON_SOURCE_DIR")) return env;
    return HERON_SOURCE_DIR;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool is_error_file(const fs::path& p) { return p.parent_path().filename() == "errors"; }

std::vector<fs::path> clif_files() {
    std::vector<fs::path> out;
    fs::path root = source_dir() / "tests" / "filetests";
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (it->is_regular_file() && it->path().extension() == ".clif") out.push_back(it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(ParserFiles, EveryClifFileParsesAndRoundTripsStably) {
    std::vector<fs::path> files = clif_files();
    ASSERT_FALSE(files.empty()) << "no .clif files under " << source_dir();
    size_t functions = 0;
    for (const fs::path& p : files) {
        if (is_error_file(p)) continue;
        SCOPED_TRACE(p.string());
        ParseOutcome first = parse_test_file(read_file(p));
        EXPECT_TRUE(first.ok()) << errors_text(first.errors);
        std::string printed = print_all(first.file);
        ParseOutcome second = parse_test_file(printed);
        EXPECT_TRUE(second.ok()) << errors_text(second.errors) << printed;
        EXPECT_EQ(print_all(second.file), printed);
        functions += first.file.functions.size();
    }
    EXPECT_GT(functions, 0u);
}

/// `; error: TEXT` at the end of a line: that line must get a diagnostic
/// containing TEXT, and no other line may get one.
TEST(ParserFiles, AnnotatedErrorFilesReportExactlyTheAnnotatedLines) {
    size_t checked = 0;
    for (const fs::path& p : clif_files()) {
        if (!is_error_file(p)) continue;
        SCOPED_TRACE(p.string());
        std::string text = read_file(p);
        std::map<uint32_t, std::string> expected;
        std::istringstream lines(text);
        std::string line;
        for (uint32_t n = 1; std::getline(lines, line); ++n) {
            size_t at = line.find("; error: ");
            if (at == std::string::npos) continue;
            std::string want = line.substr(at + 9);
            while (!want.empty() && (want.back() == ' ' || want.back() == '\r')) want.pop_back();
            expected[n] = want;
        }
        ASSERT_FALSE(expected.empty()) << "an error file without annotations";
        Diagnostics errs = parse_errors(text);
        for (const auto& entry : expected) {
            uint32_t n = entry.first;
            const std::string& want = entry.second;
            bool found = std::any_of(errs.begin(), errs.end(), [&](const Diagnostic& d) {
                return d.loc.line == n && d.message.find(want) != std::string::npos;
            });
            EXPECT_TRUE(found) << "line " << n << ": no error containing \"" << want << "\"; got:\n" << errors_text(errs);
        }
        for (const Diagnostic& d : errs) {
            EXPECT_TRUE(expected.count(d.loc.line)) << "unexpected error " << d.format(p.filename().string());
        }
        checked += expected.size();
    }
    EXPECT_GE(checked, 20u);
}

// Truncations and random byte edits of every file: the parser must return
// (ASan/UBSan in CI catch the rest), and whatever it accepts must print to
// text that parses back to the same print.
TEST(ParserRobustness, TruncatedAndMutatedFilesNeverCrash) {
    std::mt19937 rng(20260821);
    size_t runs = 0;
    auto check = [&](const std::string& text) {
        ParseOutcome out = parse_test_file(text);
        ++runs;
        if (out.file.functions.empty()) return;
        std::string printed = print_all(out.file);
        ParseOutcome again = parse_test_file(printed);
        ASSERT_TRUE(again.ok()) << errors_text(again.errors) << "printed:\n" << printed << "\nfrom:\n" << text;
        ASSERT_EQ(print_all(again.file), printed);
    };
    for (const fs::path& p : clif_files()) {
        SCOPED_TRACE(p.string());
        std::string text = read_file(p);
        if (text.empty()) continue;
        for (size_t i = 1; i <= 50; ++i) check(text.substr(0, text.size() * i / 51));
        for (int i = 0; i < 50; ++i) {
            std::string m = text;
            int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits && !m.empty(); ++e) {
                size_t at = rng() % m.size();
                switch (rng() % 4) {
                case 0: m[at] = static_cast<char>(rng() % 256); break;
                case 1: m.erase(at, 1 + rng() % 8); break;
                case 2: m.insert(at, 1, " \n;:,()[]{}=.+-%v0123456789abcdefpx_"[rng() % 37]); break;
                default: m.insert(at, m.substr(rng() % m.size(), rng() % 16)); break;
                }
            }
            check(m);
        }
    }
    EXPECT_GT(runs, 100u);
}

}  // namespace
}  // namespace heron
