// Unit tests of the printer: functions built with the cursor print in the
// canonical text form; float and integer immediates, memory flags, offsets,
// declarations, cold blocks, aliases and gaps print as text-format.md says;
// DataValue formats like the printer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "codegen/ir/cursor.h"
#include "codegen/ir/data_value.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"

namespace heron {
namespace {

Signature sig_of(std::initializer_list<AbiParam> params, std::initializer_list<AbiParam> returns,
                 CallConv cc = CallConv::Fast) {
    Signature s(cc);
    s.params = params;
    s.returns = returns;
    return s;
}

/// Parses `text` and prints it again; the caller compares with the print
/// of the built function.
std::string reprint(const std::string& text) {
    Diagnostics errs;
    auto funcs = parse_functions(text, errs);
    std::string out;
    for (const Diagnostic& d : errs) out += "error: " + d.format("") + "\n";
    for (const auto& f : funcs) out += print_function(*f);
    return out;
}

TEST(PrinterFunction, HeaderPreambleAndBlocks) {
    Function f(ExternalName::testcase("name"),
               sig_of({types::I32, AbiParam(types::I64, ArgExt::Sext)}, {types::I32, types::I8}, CallConv::SystemV));
    f.create_stack_slot(StackSlotData{16, 8, std::nullopt});
    f.create_stack_slot(StackSlotData{11, 1, 42});
    SigRef sig0 = f.import_signature(sig_of({types::I64}, {types::I64}, CallConv::Tail));
    f.import_function(ExtFuncData{ExternalName::testcase("callee"), sig0, true});
    f.import_function(ExtFuncData{ExternalName::user(1, 7), sig0, false});

    FuncCursor cur(f);
    Block b0 = cur.insert_block();
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    f.layout.set_cold(b2);
    Value v0 = f.dfg.append_block_param(b0, types::I32);
    f.dfg.append_block_param(b0, types::I64);
    cur.at_bottom(b0);
    Value v2 = cur.ins().iconst(types::I32, 7);
    Value v3 = cur.ins().iadd(v0, v2);
    cur.ins().brif(v3, b1, std::span<const Value>(&v3, 1), b2, {});
    Value v4 = f.dfg.append_block_param(b1, types::I32);
    cur.at_bottom(b1);
    Value v5 = cur.ins().iconst(types::I8, 1);
    cur.ins().return_({v4, v5});
    cur.at_bottom(b2);
    cur.ins().trap(TrapCode::user(1));

    constexpr std::string_view kExpected = R"(function %name(i32, i64 sext) -> i32, i8 system_v {
    ss0 = explicit_slot 16, align = 8
    ss1 = explicit_slot 11, key = 42
    sig0 = (i64) -> i64 tail
    fn0 = colocated %callee sig0
    fn1 = u1:7 sig0
block0(v0: i32, v1: i64):
    v2 = iconst.i32 7
    v3 = iadd v0, v2
    brif v3, block1(v3), block2
block1(v4: i32):
    v5 = iconst.i8 1
    return v4, v5
block2 cold:
    trap user1
}
)";
    std::string text = print_function(f);
    EXPECT_EQ(text, kExpected);
    EXPECT_EQ(f.to_string(), text);
    EXPECT_EQ(reprint(text), text);
}

TEST(PrinterFunction, FastConventionAndColdAreNeverPrinted) {
    Function f(ExternalName::testcase("f"), sig_of({}, {}));
    f.import_signature(sig_of({types::F32}, {}, CallConv::Fast));
    EXPECT_EQ(print_function(f), "function %f() {\n    sig0 = (f32)\n}\n");
    // `cold` is read as fast, so no convention at all comes back.
    EXPECT_EQ(reprint("function %f() cold {\n    sig0 = (f32) cold\n}\n"), "function %f() {\n    sig0 = (f32)\n}\n");
    EXPECT_EQ(print_signature(sig_of({types::I8}, {types::F64}, CallConv::Tail)), "(i8) -> f64 tail");
    EXPECT_EQ(print_signature(sig_of({}, {AbiParam(types::I16, ArgExt::Uext)})), "() -> i16 uext");
}

TEST(PrinterFunction, FunctionReferenceGapsAreSkipped) {
    Function f(ExternalName::testcase("f"), sig_of({}, {}));
    SigRef s = f.import_signature(sig_of({}, {}));
    f.import_function(ExtFuncData{});  // a gap left by the parser: no signature
    f.import_function(ExtFuncData{ExternalName::testcase("g"), s, false});
    EXPECT_EQ(print_function(f), "function %f() {\n    sig0 = ()\n    fn1 = %g sig0\n}\n");
}

// One function per printed instruction form, built through the cursor.
class PrinterInst : public ::testing::Test {
protected:
    PrinterInst() : f(ExternalName::testcase("t"), sig_of({types::I64, types::I32, types::F32}, {})), cur(f) {
        b0 = cur.insert_block();
        p = f.dfg.append_block_param(b0, types::I64);
        x = f.dfg.append_block_param(b0, types::I32);
        fl = f.dfg.append_block_param(b0, types::F32);
        cur.at_bottom(b0);
    }
    std::string last() { return print_inst(f, *f.layout.last_inst(b0)); }

    Function f;
    FuncCursor cur;
    Block b0;
    Value p, x, fl;
};

TEST_F(PrinterInst, IconstIsSignExtendedDecimalBelowTenThousandElseGroupedHex) {
    struct Case {
        Type t;
        int64_t imm;
        const char* text;
    };
    const Case cases[] = {
        {types::I8, 255, "-1"},
        {types::I8, 127, "127"},
        {types::I8, 128, "-128"},
        {types::I16, 9999, "9999"},
        {types::I16, 10000, "0x2710"},
        {types::I16, 0x8000, "-32768"},
        {types::I32, 0x10000, "0x1_0000"},
        {types::I32, 0x7fffffff, "0x7fff_ffff"},
        {types::I32, 0x80000000, "-2147483648"},
        {types::I32, 0x444500ff, "0x4445_00ff"},
        {types::I64, 0x123456789, "0x1_2345_6789"},
        {types::I64, INT64_MAX, "0x7fff_ffff_ffff_ffff"},
        {types::I64, INT64_MIN, "-9223372036854775808"},
        {types::I64, -10000, "-10000"},
    };
    for (const Case& c : cases) {
        cur.ins().iconst(c.t, c.imm);
        EXPECT_EQ(last(), "v" + std::to_string(f.dfg.num_values() - 1) + " = iconst." + std::string(c.t.name()) + " " + c.text);
    }
}

TEST_F(PrinterInst, MemoryFlagsPrintInCanonicalOrder) {
    MemFlags all;
    all.set(MemFlags::Little);
    all.set(MemFlags::CanMove);
    all.set(MemFlags::Readonly);
    all.set(MemFlags::Aligned);
    all.set(MemFlags::Notrap);
    cur.ins().load(types::I32, all, p, 8);
    EXPECT_EQ(last(), "v3 = load.i32 notrap aligned readonly can_move little v0+8");

    MemFlags coded;
    coded.set(MemFlags::Big);
    coded.set_trap_code(TrapCode::user(9));
    cur.ins().store(coded, x, p, -4);
    EXPECT_EQ(last(), "store user9 big v1, v0-4");

    MemFlags oob;
    oob.set_trap_code(TrapCode::heap_out_of_bounds());
    cur.ins().uload8(types::I64, oob, p, 0);
    EXPECT_EQ(last(), "v4 = uload8.i64 v0") << "heap_oob is the default and not printed";

    MemFlags back;
    back.set_trap_code(TrapCode::integer_division_by_zero());
    back.set(MemFlags::Notrap);
    cur.ins().istore16(back, x, p, INT32_MIN);
    EXPECT_EQ(last(), "istore16 notrap v1, v0-2147483648");

    MemFlags big;
    big.set(MemFlags::Big);
    cur.ins().bitcast(types::I32, fl, big);
    EXPECT_EQ(last(), "v5 = bitcast.i32 big v2");
}

TEST_F(PrinterInst, OperandFormsAndSuffixes) {
    Value c = cur.ins().icmp(IntCC::Uge, x, x);
    EXPECT_EQ(last(), "v3 = icmp uge v1, v1");
    cur.ins().fcmp(FloatCC::Ueq, fl, fl);
    EXPECT_EQ(last(), "v4 = fcmp ueq v2, v2");
    cur.ins().select(c, x, x);
    EXPECT_EQ(last(), "v5 = select v3, v1, v1") << "ctrl from an operand: no suffix";
    cur.ins().uextend(types::I64, x);
    EXPECT_EQ(last(), "v6 = uextend.i64 v1") << "ctrl from the result: suffix";
    cur.ins().bmask(types::I16, x);
    EXPECT_EQ(last(), "v7 = bmask.i16 v1");
    cur.ins().uadd_overflow(x, x);
    EXPECT_EQ(last(), "v8, v9 = uadd_overflow v1, v1");
    cur.ins().uadd_overflow_trap(x, x, TrapCode::heap_out_of_bounds());
    EXPECT_EQ(last(), "v10 = uadd_overflow_trap v1, v1, heap_oob");
    cur.ins().trapz(x, TrapCode::user(2));
    EXPECT_EQ(last(), "trapz v1, user2");
    cur.ins().trapnz(c, TrapCode::integer_overflow());
    EXPECT_EQ(last(), "trapnz v3, int_ovf");
    cur.ins().nop();
    EXPECT_EQ(last(), "nop");
    cur.ins().return_({});
    EXPECT_EQ(last(), "return");
}

TEST_F(PrinterInst, FloatConstantsUseHexFloats) {
    cur.ins().f32const(Ieee32{0x40400000});
    EXPECT_EQ(last(), "v3 = f32const 0x1.8p1");
    cur.ins().f64const(Ieee64{0xfff8000000000001});
    EXPECT_EQ(last(), "v4 = f64const -NaN:0x1");
    cur.ins().f32const(Ieee32{0x7f800001});
    EXPECT_EQ(last(), "v5 = f32const +sNaN:0x1");
}

TEST_F(PrinterInst, StackFunctionAndCallForms) {
    StackSlot ss = f.create_stack_slot(StackSlotData{32, 1, std::nullopt});
    SigRef sig = f.import_signature(sig_of({types::I32}, {types::I32, types::I8}));
    FuncRef fn = f.import_function(ExtFuncData{ExternalName::testcase("g"), sig, false});
    cur.ins().stack_addr(types::I64, ss, 8);
    EXPECT_EQ(last(), "v3 = stack_addr.i64 ss0+8");
    cur.ins().stack_addr(types::I64, ss, 0);
    EXPECT_EQ(last(), "v4 = stack_addr.i64 ss0");
    Value fa = cur.ins().func_addr(types::I64, fn);
    EXPECT_EQ(last(), "v5 = func_addr.i64 fn0");
    Value args[] = {x};
    cur.ins().call(fn, args);
    EXPECT_EQ(last(), "v6, v7 = call fn0(v1)");
    cur.ins().call_indirect(sig, fa, args);
    EXPECT_EQ(last(), "v8, v9 = call_indirect sig0, v5(v1)");
    cur.ins().return_call(fn, {});
    EXPECT_EQ(last(), "return_call fn0()");
}

TEST_F(PrinterInst, BranchForms) {
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().jump(b1, {x, p});
    EXPECT_EQ(last(), "jump block1(v1, v0)");
    f.layout.remove_inst(*f.layout.last_inst(b0));
    cur.ins().brif(x, b1, {}, b2, std::span<const Value>(&x, 1));
    EXPECT_EQ(last(), "brif v1, block1, block2(v1)");
    f.layout.remove_inst(*f.layout.last_inst(b0));
    JumpTableData jt;
    jt.all.push_back(f.dfg.block_call(b2, std::span<const Value>(&x, 1)));
    jt.all.push_back(f.dfg.block_call(b1, {}));
    jt.all.push_back(f.dfg.block_call(b2, std::span<const Value>(&p, 1)));
    cur.ins().br_table(x, f.create_jump_table(std::move(jt)));
    EXPECT_EQ(last(), "br_table v1, block2(v1), [block1, block2(v0)]");
    f.layout.remove_inst(*f.layout.last_inst(b0));
    JumpTableData empty;
    empty.all.push_back(f.dfg.block_call(b1, {}));
    cur.ins().br_table(x, f.create_jump_table(std::move(empty)));
    EXPECT_EQ(last(), "br_table v1, block1, []");
}

TEST(PrinterFunction, AliasesAppearAfterTheEntryHeaderAndPlaceholdersDoNot) {
    Function f(ExternalName::testcase("f"), sig_of({types::I32}, {types::I32}));
    FuncCursor cur(f);
    Block b0 = cur.insert_block();
    Value v0 = f.dfg.append_block_param(b0, types::I32);
    cur.at_bottom(b0);
    Value v1 = cur.ins().iadd(v0, v0);
    f.dfg.make_value_placeholder(Type());       // v2: never defined, not printed
    Value v3 = f.dfg.make_value_alias(v1, types::I32);
    cur.ins().return_({v3});
    std::string text = print_function(f);
    EXPECT_EQ(text, "function %f(i32) -> i32 {\nblock0(v0: i32):\n    v3 -> v1\n    v1 = iadd v0, v0\n    return v3\n}\n");
    EXPECT_EQ(reprint(text), text);
}

// --- hex floats ---------------------------------------------------------------------------

TEST(PrinterFloat, Ieee32EveryClass) {
    EXPECT_EQ(format_ieee32(0x00000000), "0.0");
    EXPECT_EQ(format_ieee32(0x80000000), "-0.0");
    EXPECT_EQ(format_ieee32(0x3f800000), "0x1.0p0");
    EXPECT_EQ(format_ieee32(0xbf800000), "-0x1.0p0");
    EXPECT_EQ(format_ieee32(0x40400000), "0x1.8p1");
    EXPECT_EQ(format_ieee32(0x3e800000), "0x1.0p-2");
    EXPECT_EQ(format_ieee32(0x7f7fffff), "0x1.fffffep127");
    EXPECT_EQ(format_ieee32(0x00800000), "0x1.0p-126");
    EXPECT_EQ(format_ieee32(0x00000001), "0x0.000002p-126");
    EXPECT_EQ(format_ieee32(0x80000001), "-0x0.000002p-126");
    EXPECT_EQ(format_ieee32(0x007fffff), "0x0.fffffep-126");
    EXPECT_EQ(format_ieee32(0x00400000), "0x0.8p-126");
    EXPECT_EQ(format_ieee32(0x7f800000), "+Inf");
    EXPECT_EQ(format_ieee32(0xff800000), "-Inf");
    EXPECT_EQ(format_ieee32(0x7fc00000), "+NaN");
    EXPECT_EQ(format_ieee32(0xffc00000), "-NaN");
    EXPECT_EQ(format_ieee32(0x7fc00001), "+NaN:0x1");
    EXPECT_EQ(format_ieee32(0xffffffff), "-NaN:0x3fffff");
    EXPECT_EQ(format_ieee32(0x7f800001), "+sNaN:0x1");
    EXPECT_EQ(format_ieee32(0xffa00000), "-sNaN:0x200000");
}

TEST(PrinterFloat, Ieee64EveryClass) {
    EXPECT_EQ(format_ieee64(0), "0.0");
    EXPECT_EQ(format_ieee64(0x8000000000000000), "-0.0");
    EXPECT_EQ(format_ieee64(0x3ff0000000000000), "0x1.0p0");
    EXPECT_EQ(format_ieee64(0x3ff0000000000001), "0x1.0000000000001p0");
    EXPECT_EQ(format_ieee64(0x7fefffffffffffff), "0x1.fffffffffffffp1023");
    EXPECT_EQ(format_ieee64(0x0000000000000001), "0x0.0000000000001p-1022");
    EXPECT_EQ(format_ieee64(0x000fffffffffffff), "0x0.fffffffffffffp-1022");
    EXPECT_EQ(format_ieee64(0x41e65a0bc0000000), "0x1.65a0bcp31");
    EXPECT_EQ(format_ieee64(0x7ff0000000000000), "+Inf");
    EXPECT_EQ(format_ieee64(0xfff0000000000000), "-Inf");
    EXPECT_EQ(format_ieee64(0x7ff8000000000000), "+NaN");
    EXPECT_EQ(format_ieee64(0xfff8000000000001), "-NaN:0x1");
    EXPECT_EQ(format_ieee64(0x7ff0000000000001), "+sNaN:0x1");
    EXPECT_EQ(format_ieee64(0x7ff7ffffffffffff), "+sNaN:0x7ffffffffffff");
}

TEST(PrinterFloat, EveryPrintedF32ParsesBackToTheSameBits) {
    // A spread of patterns over every class, through the parser.
    for (uint64_t i = 0; i < 4096; ++i) {
        uint32_t bits = static_cast<uint32_t>(i * 0x9e3779b97f4a7c15ull >> 32);
        std::string text = "function %f() -> f32 {\nblock0:\n    v0 = f32const " + format_ieee32(bits) +
                           "\n    return v0\n}\n";
        Diagnostics errs;
        auto funcs = parse_functions(text, errs);
        ASSERT_TRUE(errs.empty()) << format_ieee32(bits) << ": " << errs[0].message;
        ASSERT_EQ(funcs[0]->dfg[Inst(0)].imm, bits) << format_ieee32(bits);
    }
}

// --- DataValue ---------------------------------------------------------------------------

TEST(PrinterDataValue, IntegersAreSignedDecimalAndFloatsHex) {
    EXPECT_EQ(DataValue::i8(-1).to_string(), "-1");
    EXPECT_EQ(DataValue(types::I8, 0xff).to_string(), "-1");
    EXPECT_EQ(DataValue::i16(0x8000).to_string(), "-32768");
    EXPECT_EQ(DataValue::i32(123).to_string(), "123");
    EXPECT_EQ(DataValue::i64(INT64_MIN).to_string(), "-9223372036854775808");
    EXPECT_EQ(DataValue::f32(1.5f).to_string(), "0x1.8p0");
    EXPECT_EQ(DataValue::f64(-0.0).to_string(), "-0.0");
    EXPECT_EQ(DataValue::f32_bits(0x7f800001).to_string(), "+sNaN:0x1");
}

TEST(PrinterDataValue, WidthsSignsAndHostFloats) {
    EXPECT_EQ(DataValue::i8(-128).as_signed(), -128);
    EXPECT_EQ(DataValue::i8(-128).as_unsigned(), 0x80u);
    EXPECT_EQ(DataValue::i16(-2).as_signed(), -2);
    EXPECT_EQ(DataValue::i32(0x80000000).as_signed(), INT32_MIN);
    EXPECT_EQ(DataValue::i64(-1).as_unsigned(), ~uint64_t{0});
    EXPECT_EQ(DataValue::i8(300).bits, 44u) << "stored in the type's width";
    EXPECT_EQ(DataValue::f32(-2.5f).as_f32(), -2.5f);
    EXPECT_EQ(DataValue::f64(0.1).as_f64(), 0.1);
    EXPECT_EQ(DataValue::f32(-0.0f).bits, 0x80000000u);
    EXPECT_TRUE(std::isnan(DataValue::f32_bits(0x7fc00001).as_f32()));
    EXPECT_NE(DataValue::f32_bits(0x7fc00001), DataValue::f32_bits(0x7fc00000)) << "NaN payloads count";
}

}  // namespace
}  // namespace heron
