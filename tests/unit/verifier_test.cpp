// Unit tests for the IR verifier. Functions are built directly with
// FuncCursor / DataFlowGraph (not parsed), so broken shapes the parser would
// refuse (undefined values, values defined twice, alias cycles, dangling
// references) can be tested too. Each error test asserts the exact list of
// messages, so a cascade of follow-up errors would fail it as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/ir/cursor.h"
#include "codegen/ir/function.h"
#include "codegen/ir/parser.h"
#include "codegen/verifier/verifier.h"

namespace heron {
namespace detail {
void set_verifier_quick_paths(bool on);  // codegen/verifier/verifier.cpp, for tests
}  // namespace detail
namespace {

using types::F32;
using types::F64;
using types::I16;
using types::I32;
using types::I64;
using types::I8;

using Messages = std::vector<std::string>;

class VerifierTest : public ::testing::Test {
protected:
    /// Declares the signature and creates the entry block block0 with
    /// matching parameters; the cursor is left at its bottom.
    std::vector<Value> begin(std::initializer_list<Type> params, std::initializer_list<Type> returns = {},
                             CallConv cc = CallConv::Fast) {
        f.signature.call_conv = cc;
        for (Type t : params) f.signature.params.push_back(t);
        for (Type t : returns) f.signature.returns.push_back(t);
        b0 = cur.insert_block();
        std::vector<Value> vals;
        for (Type t : params) vals.push_back(f.dfg.append_block_param(b0, t));
        cur.at_bottom(b0);
        return vals;
    }

    Messages verify() {
        errs.clear();
        verify_function(f, errs);
        Messages out;
        for (const VerifierError& e : errs) out.push_back(e.message);
        return out;
    }
    void expect_valid() {
        Messages m = verify();
        EXPECT_TRUE(m.empty()) << format_verifier_errors(errs);
    }
    void expect_errors(const Messages& want) { EXPECT_EQ(verify(), want) << format_verifier_errors(errs); }
    void expect_error(const std::string& want) { expect_errors({want}); }

    InstructionData& data(Value result) { return f.dfg[f.dfg.value_def(result).inst()]; }
    Inst inst_of(Value result) const { return f.dfg.value_def(result).inst(); }
    FuncRef declare(const Signature& sig, const char* name) {
        SigRef s = f.import_signature(sig);
        return f.import_function(ExtFuncData{ExternalName::testcase(name), s, false});
    }

    Function f;
    FuncCursor cur{f};
    Block b0;
    VerifierErrors errs;
};

Signature sig_of(std::initializer_list<Type> params, std::initializer_list<Type> returns,
                 CallConv cc = CallConv::Fast) {
    Signature s(cc);
    for (Type t : params) s.params.push_back(t);
    for (Type t : returns) s.returns.push_back(t);
    return s;
}

// ---------------------------------------------------------------------------------
// Valid functions: every opcode family, built through the InstBuilder methods.

TEST_F(VerifierTest, ValidIntegerArithmetic) {
    auto p = begin({I32, I32}, {I32});
    Value x = p[0], y = p[1];
    Value acc = cur.ins().iadd(x, y);
    for (Value v : {cur.ins().isub(x, y), cur.ins().imul(x, y), cur.ins().ineg(x), cur.ins().iabs(x),
                    cur.ins().umulhi(x, y), cur.ins().smulhi(x, y), cur.ins().udiv(x, y), cur.ins().sdiv(x, y),
                    cur.ins().urem(x, y), cur.ins().srem(x, y), cur.ins().smin(x, y), cur.ins().smax(x, y),
                    cur.ins().umin(x, y), cur.ins().umax(x, y)}) {
        acc = cur.ins().bxor(acc, v);
    }
    auto [s1, c1] = cur.ins().uadd_overflow(x, y);
    cur.ins().sadd_overflow(x, y);
    cur.ins().usub_overflow(x, y);
    cur.ins().ssub_overflow(x, y);
    cur.ins().umul_overflow(x, y);
    cur.ins().smul_overflow(x, y);
    auto [s2, c2] = cur.ins().uadd_overflow_cin(s1, y, c1);
    cur.ins().sadd_overflow_cin(x, y, c2);
    cur.ins().usub_overflow_bin(x, y, c2);
    cur.ins().ssub_overflow_bin(x, s2, c2);
    Value t = cur.ins().uadd_overflow_trap(acc, x, TrapCode::heap_out_of_bounds());
    Value k = cur.ins().iconst(I32, -1);
    Value small = cur.ins().iconst(I8, 255);
    cur.ins().iadd_imm(small, -128);
    cur.ins().return_({cur.ins().iadd(t, k)});
    expect_valid();
}

TEST_F(VerifierTest, ValidBitwiseShiftsAndCounts) {
    auto p = begin({I16, I64, F32}, {I16});
    Value x = p[0], amount = p[1], fl = p[2];
    Value b = cur.ins().band(x, cur.ins().bor(x, cur.ins().bnot(x)));
    cur.ins().band(fl, cur.ins().bxor(fl, fl));  // float bit logic is allowed
    cur.ins().bitselect(fl, fl, fl);
    cur.ins().bitselect(x, b, x);
    for (Value v : {cur.ins().ishl(x, amount), cur.ins().ushr(x, amount), cur.ins().sshr(x, amount),
                    cur.ins().rotl(x, amount), cur.ins().rotr(x, x), cur.ins().clz(x), cur.ins().cls(x),
                    cur.ins().ctz(x), cur.ins().popcnt(x), cur.ins().bitrev(x), cur.ins().bswap(x)}) {
        b = cur.ins().bxor(b, v);
    }
    cur.ins().return_({b});
    expect_valid();
}

TEST_F(VerifierTest, ValidComparisonsAndSelect) {
    auto p = begin({I64, F64, I8}, {F64});
    Value i = p[0], d = p[1], c = p[2];
    Value lt = cur.ins().icmp(IntCC::Slt, i, i);
    Value un = cur.ins().fcmp(FloatCC::Uno, d, d);
    Value sel = cur.ins().select(i, d, d);  // an i64 condition picking f64 arms
    cur.ins().select(lt, un, c);
    cur.ins().select_spectre_guard(c, i, i);
    cur.ins().bmask(I32, i);
    cur.ins().bmask(I8, un);
    cur.ins().return_({sel});
    expect_valid();
}

TEST_F(VerifierTest, ValidConversions) {
    auto p = begin({I8, I64, F32, F64}, {I64});
    Value b = p[0], q = p[1], s = p[2], d = p[3];
    Value w = cur.ins().uextend(I64, b);
    cur.ins().sextend(I16, b);
    cur.ins().ireduce(I32, q);
    cur.ins().bitcast(I32, s);
    cur.ins().bitcast(F64, q);
    MemFlags little;
    little.set(MemFlags::Little);
    cur.ins().bitcast(I64, q, little);
    cur.ins().fpromote(F64, s);
    cur.ins().fdemote(F32, d);
    cur.ins().fcvt_to_uint(I8, d);
    cur.ins().fcvt_to_sint(I64, s);
    cur.ins().fcvt_to_uint_sat(I16, s);
    cur.ins().fcvt_to_sint_sat(I32, d);
    cur.ins().fcvt_from_uint(F32, b);
    cur.ins().fcvt_from_sint(F64, q);
    cur.ins().return_({w});
    expect_valid();
}

TEST_F(VerifierTest, ValidFloatArithmetic) {
    auto p = begin({F32, F32}, {F32});
    Value x = p[0], y = p[1];
    Value acc = cur.ins().fadd(x, y);
    for (Value v : {cur.ins().fsub(x, y), cur.ins().fmul(x, y), cur.ins().fdiv(x, y), cur.ins().sqrt(x),
                    cur.ins().fma(x, y, x), cur.ins().fneg(x), cur.ins().fabs(x), cur.ins().fcopysign(x, y),
                    cur.ins().fmin(x, y), cur.ins().fmax(x, y), cur.ins().ceil(x), cur.ins().floor(x),
                    cur.ins().trunc(x), cur.ins().nearest(x), cur.ins().f32const(1.5f)}) {
        acc = cur.ins().fadd(acc, v);
    }
    cur.ins().f64const(-0.0);
    cur.ins().return_({acc});
    expect_valid();
}

TEST_F(VerifierTest, ValidMemoryAndStackSlots) {
    auto p = begin({I64, F64});
    StackSlot ss = f.create_stack_slot(StackSlotData{16, 16, {}});
    f.create_stack_slot(StackSlotData{0, 1, {}});  // never addressed: fine
    Value addr = cur.ins().stack_addr(I64, ss, 15);
    MemFlags flags = MemFlags::trusted();
    flags.set(MemFlags::Big);
    Value v = cur.ins().load(I64, flags, addr);
    MemFlags ro;
    ro.set(MemFlags::Readonly);
    cur.ins().load(F32, ro, p[0], -8);
    cur.ins().uload8(I16, {}, addr);
    cur.ins().sload8(I64, {}, addr);
    cur.ins().uload16(I32, {}, addr);
    cur.ins().sload16(I64, {}, addr);
    cur.ins().uload32(I64, {}, addr);
    cur.ins().sload32(I64, {}, addr);
    cur.ins().store(MemFlags::trusted(), v, addr, 4);
    cur.ins().store({}, p[1], p[0]);
    cur.ins().istore8({}, cur.ins().iconst(I16, 3), addr);
    cur.ins().istore16({}, v, addr);
    cur.ins().istore32({}, v, addr);
    cur.ins().nop();
    cur.ins().return_({});
    expect_valid();
}

TEST_F(VerifierTest, ValidControlFlow) {
    // block0(v0) -> brif to block1 twice with different arguments;
    // block1 loops through br_table to block2/block1; block2 traps or returns.
    auto p = begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Value a = f.dfg.append_block_param(b1, I32);
    Value c = f.dfg.append_block_param(b2, I64);
    cur.at_bottom(b0);
    Value one = cur.ins().iconst(I32, 1);
    Value t_args[] = {one};
    Value e_args[] = {p[0]};
    cur.ins().brif(p[0], b1, t_args, b1, e_args);
    cur.at_bottom(b1);
    Value wide = cur.ins().uextend(I64, a);
    Value next = cur.ins().iadd(a, one);
    JumpTableData jt;
    Value d_args[] = {wide};
    Value l_args[] = {next};
    jt.all.push_back(f.dfg.block_call(b2, d_args));
    jt.all.push_back(f.dfg.block_call(b1, l_args));
    jt.all.push_back(f.dfg.block_call(b2, d_args));
    cur.ins().br_table(a, f.create_jump_table(std::move(jt)));
    cur.at_bottom(b2);
    cur.ins().trapz(c, TrapCode::user(7));
    cur.ins().trapnz(a, TrapCode::integer_overflow());
    Block b3 = cur.insert_block();
    Block b4 = cur.insert_block();
    cur.at_bottom(b2);
    cur.ins().brif(c, b3, b4);
    cur.at_bottom(b3);
    cur.ins().trap(TrapCode::user(1));
    cur.at_bottom(b4);
    cur.ins().return_({a});
    expect_valid();
}

TEST_F(VerifierTest, ValidCallsAndTailCalls) {
    auto p = begin({I64, I32}, {I32}, CallConv::Tail);
    FuncRef callee = declare(sig_of({I64}, {I64, I32}, CallConv::SystemV), "callee");
    FuncRef tail_callee = declare(sig_of({I32}, {I32}, CallConv::Tail), "tail_callee");
    SigRef isig = f.import_signature(sig_of({I32}, {I32}, CallConv::Tail));
    Value call_args[] = {p[0]};
    Inst call = cur.ins().call(callee, call_args);
    EXPECT_EQ(f.dfg.inst_results(call).size(), 2u);
    Value fp = cur.ins().func_addr(I64, tail_callee);
    Value ind_args[] = {p[1]};
    Inst ind = cur.ins().call_indirect(isig, fp, ind_args);
    Value r = f.dfg.first_result(ind);
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().brif(r, b1, b2);
    cur.at_bottom(b1);
    Value tc_args[] = {r};
    cur.ins().return_call(tail_callee, tc_args);
    cur.at_bottom(b2);
    cur.ins().return_call_indirect(isig, fp, tc_args);
    expect_valid();
}

TEST_F(VerifierTest, ValidAliasesAndUnreachableCode) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    cur.ins().return_({f.dfg.make_value_alias(x, I32)});
    // Unreachable blocks are verified, but their uses need no dominance:
    // block1 uses y although y's block2 does not dominate it.
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b2);
    Value y = cur.ins().iconst(I32, 5);
    cur.ins().return_({y});
    cur.at_bottom(b1);
    cur.ins().return_({y});
    expect_valid();
}

// ---------------------------------------------------------------------------------
// Entry block and block structure.

TEST_F(VerifierTest, FunctionWithoutBlocks) { expect_error("function has no entry block"); }

TEST_F(VerifierTest, EntryParameterCount) {
    begin({I32});
    f.signature.params.push_back(I64);
    cur.ins().return_({});
    expect_error("entry block has 1 parameter, signature has 2");
}

TEST_F(VerifierTest, EntryParameterType) {
    begin({I64});
    f.signature.params[0] = I32;
    cur.ins().return_({});
    expect_error("entry block parameter 0 (v0) has type i64, signature has i32");
}

TEST_F(VerifierTest, BranchToEntryBlock) {
    begin({});
    cur.ins().jump(b0);
    expect_error("branch to the entry block block0");
}

TEST_F(VerifierTest, EmptyBlock) {
    begin({});
    Block b1 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().jump(b1);
    expect_error("block1 is empty");
}

TEST_F(VerifierTest, MissingTerminator) {
    begin({});
    cur.ins().iconst(I32, 1);
    expect_error("block0 does not end with a terminator");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].inst, Inst(0)) << "reported on the last instruction";
    EXPECT_EQ(errs[0].block, b0);
}

TEST_F(VerifierTest, TerminatorInTheMiddle) {
    begin({});
    cur.ins().return_({});
    cur.ins().return_({});
    expect_error("terminator return is not at the end of block0");
}

// ---------------------------------------------------------------------------------
// SSA: definedness, single definition, dominance.

TEST_F(VerifierTest, UndefinedPlaceholder) {
    begin({}, {I32});
    Value ghost = f.dfg.make_value_placeholder(I32);
    cur.ins().return_({ghost});
    expect_error("v0 is used but never defined");
}

TEST_F(VerifierTest, UndefinedThroughAlias) {
    begin({}, {I32});
    Value ghost = f.dfg.make_value_placeholder(I32);
    Value alias = f.dfg.make_value_alias(ghost, I32);
    cur.ins().return_({alias});
    expect_error("v1 (an alias of v0) is used but never defined");
}

TEST_F(VerifierTest, InvalidValueAndMissingOperand) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    data(x).args[1] = Value(99);
    Value y = cur.ins().iadd(p[0], p[0]);
    data(y).args[0] = Value();
    cur.ins().return_({x});
    expect_errors({"use of invalid value v99", "iadd has a missing operand"});
}

TEST_F(VerifierTest, DefinitionNotInLayout) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    cur.ins().return_({x});
    f.layout.remove_inst(inst_of(x));
    expect_error("v1 is defined by inst0, which is not in the layout");
}

TEST_F(VerifierTest, ParameterOfBlockNotInLayout) {
    begin({}, {I32});
    Block stray = f.dfg.make_block();
    Value v = f.dfg.append_block_param(stray, I32);
    cur.ins().return_({v});
    expect_error("v0 is a parameter of block1, which is not in the layout");
}

TEST_F(VerifierTest, UseNotDominatedAcrossBlocks) {
    // block0 -> block1 | block2; v defined in block1, used in block2.
    auto p = begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().brif(p[0], b1, b2);
    cur.at_bottom(b1);
    Value v = cur.ins().iconst(I32, 1);
    cur.ins().return_({v});
    cur.at_bottom(b2);
    cur.ins().return_({v});
    expect_error("v1 used in block2 is not dominated by its definition in block1");
}

TEST_F(VerifierTest, UseBeforeDefinitionInTheSameBlock) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    Inst ret = cur.ins().return_({x});
    cur.at_inst(inst_of(x));
    Value y = cur.ins().iconst(I32, 2);  // inserted before x's definition...
    data(x).args[1] = y;                 // ...fine
    cur.at_inst(ret);
    Value z = cur.ins().iconst(I32, 3);  // after x
    data(x).args[0] = z;                 // x uses z before z is defined
    expect_error("v3 used in block0 is not dominated by its definition in block0");
}

TEST_F(VerifierTest, InstructionUsingItsOwnResult) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    data(x).args[1] = x;
    cur.ins().return_({x});
    expect_error("v1 is used by the instruction that defines it");
}

TEST_F(VerifierTest, UnreachableUsesAreStillCheckedForDefinedness) {
    begin({});
    cur.ins().return_({});
    Block dead = cur.insert_block();
    cur.at_bottom(dead);
    Value ghost = f.dfg.make_value_placeholder(I32);
    cur.ins().trapz(ghost, TrapCode::user(1));
    cur.ins().return_({});
    expect_error("v0 is used but never defined");
}

TEST_F(VerifierTest, ResultListedByTwoInstructions) {
    begin({}, {I32});
    Value x = cur.ins().iconst(I32, 1);
    InstructionData d;
    d.opcode = Opcode::Iconst;
    d.type = I32;
    Inst second = f.dfg.make_inst(d);
    f.layout.append_inst(second, b0);
    f.dfg.attach_result(second, x);  // x's definition now says inst1
    cur.ins().return_({x});
    expect_error("value v0 defined twice (result 0 of inst0 and result 0 of inst1)");
}

TEST_F(VerifierTest, ParameterListedByTwoBlocks) {
    begin({});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Value shared = f.dfg.make_value_placeholder(I32);
    f.dfg.attach_block_param(b1, shared);
    f.dfg.attach_block_param(b2, shared);
    cur.at_bottom(b0);
    cur.ins().return_({});
    cur.at_bottom(b1);
    cur.ins().return_({});
    cur.at_bottom(b2);
    cur.ins().return_({});
    expect_error("value v0 defined twice (parameter 0 of block1 and parameter 0 of block2)");
}

TEST_F(VerifierTest, AliasCycle) {
    begin({}, {I32});
    Value a = f.dfg.make_value_placeholder(I32);
    Value b = f.dfg.make_value_alias(a, I32);
    f.dfg.change_to_alias(a, b);
    Value c = f.dfg.make_value_alias(b, I32);
    cur.ins().return_({c});
    expect_error("alias cycle: v0 -> v1 -> v0");
}

TEST_F(VerifierTest, AliasOfInvalidValue) {
    begin({}, {I32});
    Value a = f.dfg.make_value_alias(Value(77), I32);
    cur.ins().return_({a});
    expect_error("v0 is an alias of invalid value v77");
}

// ---------------------------------------------------------------------------------
// Results and the type suffix.

TEST_F(VerifierTest, ResultCountMismatch) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    f.dfg.append_result(inst_of(x), I8);
    cur.ins().return_({x});
    expect_error("iadd has 2 results, expected 1");
}

TEST_F(VerifierTest, ResultTypeMismatch) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    auto [s, flag] = cur.ins().uadd_overflow(x, x);
    f.dfg.set_value_type(flag, I32);
    cur.ins().return_({s});
    expect_error("result 1 (v3) has type i32, expected i8");
}

TEST_F(VerifierTest, TypeSuffixMustMatchTheControllingOperand) {
    auto p = begin({I32}, {I32});
    Value x = cur.ins().iadd(p[0], p[0]);
    data(x).type = I64;
    cur.ins().return_({x});
    expect_error("type suffix .i64 does not match the controlling type i32");
}

TEST_F(VerifierTest, MissingTypeSuffix) {
    auto p = begin({I32});
    Value w = cur.ins().uextend(I64, p[0]);
    data(w).type = Type();
    cur.ins().return_({});
    expect_error("uextend requires a type suffix");
}

// ---------------------------------------------------------------------------------
// Operand typing, one test per Typing class.

TEST_F(VerifierTest, IntConstBitsAboveWidth) {
    begin({});
    Value k = cur.ins().iconst(I8, 1);
    data(k).imm = 0x1ff;
    Value fk = cur.ins().iconst(F32, 0);
    cur.ins().return_({});
    (void)fk;
    expect_errors({"iconst.i8 immediate has bits set above bit 7",
                   "iconst type .f32 is not allowed, expected an integer type"});
}

TEST_F(VerifierTest, IntegerOperandsMustMatch) {
    auto p = begin({I32, I64, F32});
    cur.ins().iadd(p[0], p[1]);
    cur.ins().imul(p[2], p[2]);
    cur.ins().ineg(p[2]);
    cur.ins().return_({});
    expect_errors({"iadd operand 1 (v1) has type i64, expected i32 like operand 0",
                   "imul operand 0 (v2) has type f32, expected an integer type",
                   "ineg operand 0 (v2) has type f32, expected an integer type"});
}

TEST_F(VerifierTest, OverflowAndCarryOperands) {
    auto p = begin({I32, I32, I16, I8});
    cur.ins().uadd_overflow(p[0], p[2]);
    cur.ins().uadd_overflow_cin(p[0], p[1], p[0]);
    cur.ins().usub_overflow_bin(p[0], p[1], p[3]);
    cur.ins().uadd_overflow_trap(p[2], p[2], TrapCode::heap_out_of_bounds());
    cur.ins().return_({});
    expect_errors({"uadd_overflow operand 1 (v2) has type i16, expected i32 like operand 0",
                   "uadd_overflow_cin operand 2 (v0) has type i32, expected i8",
                   "uadd_overflow_trap operand 0 (v2) has type i16, expected i32 or i64"});
}

TEST_F(VerifierTest, BitwiseShiftAndBswap) {
    auto p = begin({I8, F32, F64, I32});
    cur.ins().band(p[1], p[2]);
    cur.ins().bitselect(p[3], p[1], p[1]);
    cur.ins().ishl(p[0], p[1]);
    cur.ins().rotr(p[1], p[0]);
    cur.ins().bswap(p[0]);
    cur.ins().return_({});
    expect_errors({"band operand 1 (v2) has type f64, expected f32 like operand 0",
                   "bitselect operand 0 (v3) has type i32, expected f32 like operand 1",
                   "ishl operand 1 (v1) has type f32, expected an integer type",
                   "rotr operand 0 (v1) has type f32, expected an integer type",
                   "bswap operand 0 (v0) has type i8, expected i16, i32 or i64"});
}

TEST_F(VerifierTest, Comparisons) {
    auto p = begin({I32, F64});
    cur.ins().icmp(IntCC::Eq, p[1], p[1]);
    cur.ins().fcmp(FloatCC::Lt, p[0], p[0]);
    Value c = cur.ins().icmp(IntCC::Ne, p[0], p[0]);
    data(c).code = 200;
    cur.ins().return_({});
    expect_errors({"icmp operand 0 (v1) has type f64, expected an integer type",
                   "fcmp operand 0 (v0) has type i32, expected a float type",
                   "invalid integer condition code 200"});
    EXPECT_EQ(errs[2].context.rfind("inst2", 0), 0u) << "no printing of a bad condition code: " << errs[2].context;
}

TEST_F(VerifierTest, SelectAndBmask) {
    auto p = begin({F32, I32, I64});
    cur.ins().select(p[0], p[1], p[1]);
    cur.ins().select(p[1], p[1], p[2]);
    cur.ins().bmask(F32, p[1]);
    cur.ins().bmask(I8, p[0]);
    cur.ins().return_({});
    expect_errors({"select operand 0 (v0) has type f32, expected an integer type",
                   "select operand 2 (v2) has type i64, expected i32 like operand 1",
                   "bmask type .f32 is not allowed, expected an integer type",
                   "bmask operand 0 (v0) has type f32, expected an integer type"});
}

TEST_F(VerifierTest, ExtendAndReduceWidths) {
    auto p = begin({I32});
    cur.ins().uextend(I32, p[0]);
    cur.ins().sextend(I16, p[0]);
    cur.ins().ireduce(I64, p[0]);
    cur.ins().ireduce(F32, p[0]);
    cur.ins().return_({});
    expect_errors({"uextend operand 0 (v0) has type i32, expected an integer type narrower than i32",
                   "sextend operand 0 (v0) has type i32, expected an integer type narrower than i16",
                   "ireduce operand 0 (v0) has type i32, expected an integer type wider than i64",
                   "ireduce type .f32 is not allowed, expected an integer type"});
}

TEST_F(VerifierTest, BitcastWidthAndFlags) {
    auto p = begin({I32, F64});
    cur.ins().bitcast(F64, p[0]);
    MemFlags bad = MemFlags::trusted();
    cur.ins().bitcast(I64, p[1], bad);
    MemFlags both;
    both.set(MemFlags::Big);
    both.set(MemFlags::Little);
    cur.ins().bitcast(F64, p[1], both);
    cur.ins().return_({});
    expect_errors({"bitcast operand 0 (v0) has type i32, expected a 64-bit type like f64",
                   "bitcast accepts only the flags little and big", "flags little and big are exclusive"});
}

TEST_F(VerifierTest, FloatConversions) {
    auto p = begin({F32, F64, I32});
    cur.ins().fpromote(F64, p[1]);
    cur.ins().fdemote(F64, p[1]);
    cur.ins().fcvt_to_sint(F32, p[0]);
    cur.ins().fcvt_to_uint_sat(I32, p[2]);
    cur.ins().fcvt_from_sint(I32, p[2]);
    cur.ins().fcvt_from_uint(F64, p[0]);
    cur.ins().return_({});
    expect_errors({"fpromote operand 0 (v1) has type f64, expected f32",
                   "fdemote type .f64 is not allowed, expected f32",
                   "fcvt_to_sint type .f32 is not allowed, expected an integer type",
                   "fcvt_to_uint_sat operand 0 (v2) has type i32, expected a float type",
                   "fcvt_from_sint type .i32 is not allowed, expected a float type",
                   "fcvt_from_uint operand 0 (v0) has type f32, expected an integer type"});
}

TEST_F(VerifierTest, FloatArithmeticOperands) {
    auto p = begin({F32, F64, I32});
    cur.ins().fadd(p[0], p[1]);
    cur.ins().sqrt(p[2]);
    cur.ins().fma(p[0], p[1], p[1]);
    cur.ins().return_({});
    expect_errors({"fadd operand 1 (v1) has type f64, expected f32 like operand 0",
                   "sqrt operand 0 (v2) has type i32, expected a float type",
                   "fma operand 0 (v0) has type f32, expected f64 like operand 1"});
}

TEST_F(VerifierTest, LoadTypes) {
    auto p = begin({I64, I32});
    cur.ins().load(I32, {}, p[1]);
    cur.ins().uload8(I8, {}, p[0]);
    cur.ins().sload16(I16, {}, p[0]);
    cur.ins().uload32(I32, {}, p[0]);
    cur.ins().return_({});
    expect_errors({"load operand 0 (v1) has type i32, expected i64",
                   "uload8 type .i8 is not allowed, expected i16, i32 or i64",
                   "sload16 type .i16 is not allowed, expected i32 or i64",
                   "uload32 type .i32 is not allowed, expected i64"});
}

TEST_F(VerifierTest, StoreTypesAndFlags) {
    auto p = begin({I64, I8, I32});
    MemFlags ro;
    ro.set(MemFlags::Readonly);
    cur.ins().store(ro, p[0], p[0]);
    cur.ins().store({}, p[0], p[2]);
    cur.ins().istore8({}, p[1], p[0]);
    cur.ins().istore32({}, p[2], p[0]);
    cur.ins().return_({});
    expect_errors({"a store cannot have the readonly flag", "store operand 1 (v2) has type i32, expected i64",
                   "istore8 operand 0 (v1) has type i8, expected i16, i32 or i64",
                   "istore32 operand 0 (v2) has type i32, expected i64"});
}

TEST_F(VerifierTest, ConditionAndBranchTableIndex) {
    auto p = begin({F32, I64});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().trapnz(p[0], TrapCode::user(3));
    cur.ins().brif(p[0], b1, b2);
    cur.at_bottom(b1);
    JumpTableData jt;
    jt.all.push_back(f.dfg.block_call(b2, {}));
    cur.ins().br_table(p[1], f.create_jump_table(std::move(jt)));
    cur.at_bottom(b2);
    cur.ins().br_table(p[1], JumpTable(9));
    expect_errors({"trapnz operand 0 (v0) has type f32, expected an integer type",
                   "brif operand 0 (v0) has type f32, expected an integer type",
                   "br_table operand 0 (v1) has type i64, expected i32",
                   "br_table operand 0 (v1) has type i64, expected i32", "invalid jump table jt9"});
}

TEST_F(VerifierTest, BranchTableWithoutDefault) {
    begin({});
    Value i = cur.ins().iconst(I32, 0);
    cur.ins().br_table(i, f.create_jump_table(JumpTableData{}));
    expect_error("br_table has no default block");
}

// ---------------------------------------------------------------------------------
// Block arguments, returns, calls.

TEST_F(VerifierTest, BlockArgumentCountAndTypes) {
    auto p = begin({I32, I64});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    f.dfg.append_block_param(b1, I32);
    f.dfg.append_block_param(b1, I32);
    f.dfg.append_block_param(b2, I32);
    cur.at_bottom(b0);
    Value one_arg[] = {p[0]};
    Value wrong[] = {p[1]};
    cur.ins().brif(p[0], b1, one_arg, b2, wrong);
    cur.at_bottom(b1);
    cur.ins().return_({});
    cur.at_bottom(b2);
    cur.ins().return_({});
    expect_errors({"block1 expects 2 arguments, got 1", "argument 0 (v1) to block2 has type i64, expected i32"});
}

TEST_F(VerifierTest, BranchToMissingBlocks) {
    begin({});
    Block stray = f.dfg.make_block();
    Block b1 = cur.insert_block();
    cur.at_bottom(b0);
    Value c = cur.ins().iconst(I32, 0);
    Inst br = cur.ins().brif(c, stray, b1);
    f.dfg[br].dests[1] = f.dfg.block_call(Block(50), {});
    cur.at_bottom(b1);
    cur.ins().return_({});
    expect_errors({"branch to block1, which is not in the layout", "branch to invalid block block50"});
}

TEST_F(VerifierTest, ReturnCountAndTypes) {
    auto p = begin({I32, F32}, {I32, I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().brif(p[0], b1, b2);
    cur.at_bottom(b1);
    cur.ins().return_({p[0], p[1]});
    cur.at_bottom(b2);
    cur.ins().return_({p[0]});
    expect_errors({"return value 1 (v1) has type f32, expected i32", "return has 1 value, signature has 2"});
}

TEST_F(VerifierTest, CallArgumentsAndResults) {
    auto p = begin({I32, I64});
    FuncRef fn = declare(sig_of({I64, I64}, {I64}), "g");
    Value two[] = {p[0], p[1]};
    Value good[] = {p[1], p[1]};
    Value one[] = {p[1]};
    cur.ins().call(fn, two);
    cur.ins().call(fn, one);
    Inst extra = cur.ins().call(fn, good);
    f.dfg.append_result(extra, I8);
    cur.ins().call(FuncRef(5), one);
    cur.ins().return_({});
    expect_errors({"argument 0 (v0) to fn0 has type i32, expected i64", "call to fn0 has 1 argument, signature has 2",
                   "call has 2 results, expected 1", "invalid function reference fn5"});
}

TEST_F(VerifierTest, CallIndirectCalleeAndSignature) {
    auto p = begin({I32, I64});
    SigRef sig = f.import_signature(sig_of({I32}, {}));
    Value args[] = {p[0]};
    cur.ins().call_indirect(sig, p[0], args);
    cur.ins().call_indirect(SigRef(4), p[1], args);
    Value bad[] = {p[1]};
    cur.ins().call_indirect(sig, p[1], bad);
    cur.ins().return_({});
    expect_errors({"call_indirect callee (v0) has type i32, expected i64", "invalid signature reference sig4",
                   "argument 0 (v1) to sig0 has type i64, expected i32"});
}

TEST_F(VerifierTest, TailCallRules) {
    auto p = begin({I32}, {I32});  // fast, not tail
    FuncRef sysv = declare(sig_of({I32}, {I64}, CallConv::SystemV), "sysv");
    Value args[] = {p[0]};
    cur.ins().return_call(sysv, args);
    expect_errors({"return_call requires the caller's calling convention to be tail, not fast",
                   "return_call requires fn0 to use the tail calling convention, not system_v",
                   "return_call: fn0 returns (i64), but the caller returns (i32)"});
}

TEST_F(VerifierTest, TailCallIndirectReturnTypes) {
    auto p = begin({I64}, {I32, I32}, CallConv::Tail);
    SigRef sig = f.import_signature(sig_of({}, {I32}, CallConv::Tail));
    cur.ins().return_call_indirect(sig, p[0], {});
    expect_error("return_call_indirect: sig0 returns (i32), but the caller returns (i32, i32)");
}

// ---------------------------------------------------------------------------------
// Declarations: stack slots, signatures, function references.

TEST_F(VerifierTest, StackAddrOffsets) {
    begin({});
    StackSlot ss = f.create_stack_slot(StackSlotData{8, 1, {}});
    StackSlot empty = f.create_stack_slot(StackSlotData{0, 1, {}});
    cur.ins().stack_addr(I64, ss, 7);
    cur.ins().stack_addr(I64, ss, 8);
    cur.ins().stack_addr(I64, ss, -1);
    cur.ins().stack_addr(I64, empty, 0);
    cur.ins().stack_addr(I64, StackSlot(9), 0);
    cur.ins().stack_addr(I32, ss, 0);
    cur.ins().return_({});
    expect_errors({"stack_addr offset 8 is outside ss0 (size 8)", "stack_addr offset -1 is outside ss0 (size 8)",
                   "ss1 has size 0 and cannot be addressed", "invalid stack slot ss9",
                   "stack_addr type .i32 is not allowed, expected i64"});
}

TEST_F(VerifierTest, StackSlotAlignment) {
    begin({});
    f.create_stack_slot(StackSlotData{8, 16, {}});
    f.create_stack_slot(StackSlotData{8, 32, {}});
    f.create_stack_slot(StackSlotData{8, 12, {}});
    cur.ins().return_({});
    expect_errors({"ss1: stack slot alignment above 16 is not supported yet (align = 32)",
                   "ss2 alignment 12 is not a power of two"});
    EXPECT_EQ(errs[0].context, "") << "the message names the slot";
}

TEST_F(VerifierTest, SignatureExtensionsAndTypes) {
    begin({});
    f.signature.params.push_back(AbiParam(F32, ArgExt::Uext));
    f.signature.params.push_back(AbiParam(I8, ArgExt::Sext));
    f.dfg.append_block_param(b0, F32);
    f.dfg.append_block_param(b0, I8);
    Signature s = sig_of({}, {});
    s.returns.push_back(AbiParam(F64, ArgExt::Sext));
    s.returns.push_back(AbiParam(Type(), ArgExt::None));
    f.import_signature(s);
    f.import_function(ExtFuncData{ExternalName::testcase("h"), SigRef(3), false});
    f.import_function(ExtFuncData{});  // a gap in the fnN numbering: fine
    cur.ins().return_({});
    expect_errors({"function signature parameter 0: uext is only allowed on integer types, not f32",
                   "sig0 return 0: sext is only allowed on integer types, not f64",
                   "sig0 return 1 has unsupported type invalid", "fn0 refers to undeclared signature sig3"});
}

TEST_F(VerifierTest, FuncAddrReference) {
    begin({});
    FuncRef gap = f.import_function(ExtFuncData{});
    cur.ins().func_addr(I64, gap);
    cur.ins().func_addr(I64, FuncRef(3));
    cur.ins().return_({});
    expect_errors({"invalid function reference fn0", "invalid function reference fn3"});
}

// ---------------------------------------------------------------------------------
// Reporting.

TEST_F(VerifierTest, ReportsEveryErrorWithContext) {
    auto p = begin({I32, I64}, {I32});
    Value x = cur.ins().iadd(p[0], p[1]);
    cur.ins().return_({p[1]});
    Block b1 = cur.insert_block();
    (void)x;
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 3u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "iadd operand 1 (v1) has type i64, expected i32 like operand 0");
    EXPECT_EQ(errs[0].inst, inst_of(x));
    EXPECT_EQ(errs[0].block, b0);
    EXPECT_EQ(errs[0].context, "inst0 (v2 = iadd v0, v1) in block0");
    EXPECT_EQ(errs[1].message, "return value 0 (v1) has type i64, expected i32");
    EXPECT_EQ(errs[2].message, "block1 is empty");
    EXPECT_EQ(errs[2].context, "block1");
    EXPECT_FALSE(errs[2].inst.has_value());
    EXPECT_EQ(errs[2].block, b1);
    std::string text = format_verifier_errors(errs);
    EXPECT_NE(text.find("inst0 (v2 = iadd v0, v1) in block0: iadd operand 1"), std::string::npos) << text;
    EXPECT_NE(text.find("\nblock1: block1 is empty\n"), std::string::npos) << text;
}

// The per-value table that answers most uses is filled by walking the
// layout (each instruction's result list, each block's parameters), and an
// instruction whose results are all its own and of the expected type skips
// the result checks. These functions have several blocks (so dominance
// comes from the dominator tree, not the single-block shortcut) and put the
// fault where only those shortcuts could miss it; each error must name its
// instruction and block.
TEST_F(VerifierTest, FaultsInLaterBlocksNameTheirPlace) {
    // block0 -> block1 | block2. In block1 an iadd whose result has the
    // wrong type; block2 uses block1's result and block1's parameter.
    auto p = begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Value q = f.dfg.append_block_param(b1, I32);
    cur.at_bottom(b0);
    Value args[] = {p[0]};
    cur.ins().brif(p[0], b1, args, b2, {});
    cur.at_bottom(b1);
    Value x = cur.ins().iadd(q, p[0]);
    f.dfg.set_value_type(x, I64);
    cur.ins().return_({p[0]});
    cur.at_bottom(b2);
    Value y = cur.ins().isub(p[0], q);
    cur.ins().return_({x});
    (void)y;
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 4u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "result 0 (v2) has type i64, expected i32");
    EXPECT_EQ(errs[0].context, "inst1 (v2 = iadd v1, v0) in block1");
    EXPECT_EQ(errs[0].block, b1);
    EXPECT_EQ(errs[1].message, "v1 used in block2 is not dominated by its definition in block1");
    EXPECT_EQ(errs[1].context, "inst3 (v3 = isub v0, v1) in block2");
    EXPECT_EQ(errs[2].message, "v2 used in block2 is not dominated by its definition in block1");
    EXPECT_EQ(errs[2].context, "inst4 (return v2) in block2");
    EXPECT_EQ(errs[3].message, "return value 0 (v2) has type i64, expected i32");
    EXPECT_EQ(errs[3].inst, Inst(4));
}

TEST_F(VerifierTest, OwnershipFaultsAcrossBlocksNameTheirPlace) {
    // x is iconst's result in block0, but a second instruction in block1
    // also lists it (x's definition now names that one); block2, which
    // block1 does not dominate, uses x. A value defined by an instruction
    // that was taken out of the layout is used in block1 too.
    begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    cur.at_bottom(b0);
    Value x = cur.ins().iconst(I32, 1);
    Value gone = cur.ins().iconst(I32, 2);
    cur.ins().brif(x, b1, b2);
    cur.at_bottom(b1);
    InstructionData d;
    d.opcode = Opcode::Iconst;
    d.type = I32;
    Inst second = f.dfg.make_inst(d);
    f.layout.append_inst(second, b1);
    f.dfg.attach_result(second, x);
    cur.ins().return_({gone});
    cur.at_bottom(b2);
    cur.ins().return_({x});
    f.layout.remove_inst(inst_of(gone));
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 4u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "value v1 defined twice (result 0 of inst0 and result 0 of inst3)");
    EXPECT_EQ(errs[0].context, "inst0 (v1 = iconst.i32 1) in block0");
    EXPECT_EQ(errs[1].message, "v1 used in block0 is not dominated by its definition in block1");
    EXPECT_EQ(errs[1].context, "inst2 (brif v1, block1, block2) in block0");
    EXPECT_EQ(errs[2].message, "v2 is defined by inst1, which is not in the layout");
    EXPECT_EQ(errs[2].context, "inst4 (return v2) in block1");
    EXPECT_EQ(errs[3].message, "v1 used in block2 is not dominated by its definition in block1");
    EXPECT_EQ(errs[3].block, b2);
}

TEST_F(VerifierTest, AliasesAcrossBlocksTakeTheirTargetsDefinition) {
    // a is an alias of block1's result, used in block2 (not dominated by
    // block1) and in block3 (dominated): one error, naming the alias.
    auto p = begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Block b3 = cur.insert_block();
    cur.at_bottom(b0);
    cur.ins().brif(p[0], b1, b2);
    cur.at_bottom(b1);
    Value x = cur.ins().iadd(p[0], p[0]);
    Value a = f.dfg.make_value_alias(x, I32);
    cur.ins().jump(b3, {});
    cur.at_bottom(b2);
    cur.ins().return_({a});
    cur.at_bottom(b3);
    cur.ins().return_({a});
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 1u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "v2 used in block2 is not dominated by its definition in block1");
    EXPECT_EQ(errs[0].context, "inst3 (return v2) in block2");
}

// The walk takes the common instruction (fixed operands and results, a
// jump or brif, the usual typing rules) through one quick check that says
// only yes or no; on no, the full checks run and report. Each fault here
// sits where that quick check must say no, in one function, and must come
// out in order with the full checks' words and places.
TEST_F(VerifierTest, FaultsInCommonInstructionsReportAsBefore) {
    auto p = begin({F64, I64});
    Block b1 = cur.insert_block();
    Value q = f.dfg.append_block_param(b1, I32);
    f.dfg.set_value_type(q, Type());
    cur.at_bottom(b0);
    Value c = cur.ins().fcmp(FloatCC::Eq, p[0], p[0]);
    data(c).code = kNumFloatCC;
    Value l = cur.ins().load(I64, MemFlags{}, p[1]);
    data(l).flags.set(MemFlags::Big);
    data(l).flags.set(MemFlags::Little);
    Inst j = cur.ins().jump(b1, {});
    f.dfg[j].dests[0] = BlockCall();
    cur.at_bottom(b1);
    Inst t = cur.ins().trap(TrapCode::user(1));
    f.dfg[t].code = 0;
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 5u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "invalid float condition code 14");
    EXPECT_EQ(errs[0].inst, inst_of(c));
    EXPECT_EQ(errs[1].message, "flags little and big are exclusive");
    EXPECT_EQ(errs[1].inst, inst_of(l));
    EXPECT_EQ(errs[2].message, "jump has a missing destination");
    EXPECT_EQ(errs[2].context, "inst2 (jump <no block>) in block0");
    EXPECT_EQ(errs[3].message, "parameter 0 (v2) of block1 has unsupported type invalid");
    EXPECT_EQ(errs[3].context, "block1");
    EXPECT_EQ(errs[4].message, "trap has no trap code");
    EXPECT_EQ(errs[4].inst, t);
    EXPECT_EQ(errs[4].block, b1);
}

// A value defined in unreachable code serves uses in unreachable code
// (checked for definedness only) but not in reachable code.
TEST_F(VerifierTest, UnreachableDefinitionsServeOnlyUnreachableUses) {
    auto p = begin({I32}, {I32});
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Block b3 = cur.insert_block();
    cur.ins().jump(b3);
    cur.at_bottom(b1);
    Value x = cur.ins().iadd(p[0], p[0]);
    cur.ins().jump(b2);
    cur.at_bottom(b2);
    Value y = cur.ins().imul(x, x);
    cur.ins().return_({y});
    cur.at_bottom(b3);
    Value z = cur.ins().isub(x, p[0]);
    cur.ins().return_({z});
    ASSERT_FALSE(verify_function(f, errs));
    ASSERT_EQ(errs.size(), 1u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "v1 used in block3 is not dominated by its definition in block1");
    EXPECT_EQ(errs[0].inst, inst_of(z));
}

// ---------------------------------------------------------------------------------
// The quick paths (common instructions, returns, block parameters, the entry
// block and signatures in one test each; dominance from the verifier's own
// tree; marks and definitions kept between calls) against the full checks
// (detail::set_verifier_quick_paths(false): every check in full, dominance
// from the analyses' ControlFlowGraph and DominatorTree).

// Valid functions with the common instructions, a loop, a br_table, a call,
// an irreducible cycle (block2 and block3 enter each other), an
// unreachable block, and (%memory) the quick kinds for icmp, narrow and
// flagged loads and stores, brif and jump with arguments.
constexpr const char* kQuickPathFunctions = R"(
function %loop(i64, i64, f64) -> i64 {
    ss0 = explicit_slot 16
    fn0 = %callee(i64) -> i64
block0(v0: i64, v1: i64, v2: f64):
    v3 = stack_addr.i64 ss0
    v4 = iconst.i64 0
    jump block1(v4, v0)
block1(v5: i64, v6: i64):
    v7 = iconst.i64 3
    v8 = ishl v6, v7
    v9 = iadd v8, v5
    v10 = band v9, v1
    store v10, v3+8
    v11 = load.i64 v3+8
    v12 = fadd v2, v2
    v13 = icmp ult v11, v1
    v14 = call fn0(v11)
    brif v13, block1(v14, v11), block2(v9)
block2(v15: i64):
    v16 = ireduce.i32 v15
    br_table v16, block3(v15), [block4(v15), block3(v1)]
block3(v17: i64):
    v18 = imul v17, v17
    return v18
block4(v19: i64):
    v20 = isub v19, v0
    return v20
block5:
    v21 = iconst.i64 7
    v22 = iadd v21, v21
    return v22
}

function %irreducible(i32, i64) -> i64 {
block0(v0: i32, v1: i64):
    brif v0, block1(v1), block2(v1)
block1(v2: i64):
    v3 = iadd v2, v1
    jump block2(v3)
block2(v4: i64):
    v5 = isub v4, v1
    brif v0, block1(v5), block3
block3:
    v6 = iconst.i32 7
    v7 = uextend.i64 v6
    v8 = iadd v5, v7
    return v8
}

function %trivial(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}

function %memory(i64, i32, i32) -> i32 {
    ss0 = explicit_slot 16
block0(v0: i64, v1: i32, v2: i32):
    v3 = stack_addr.i64 ss0
    istore8 v0, v3
    istore16 v1, v3+2
    store notrap aligned v2, v3+4
    store little v0, v3+8
    v4 = uload8.i32 v3
    v5 = sload16.i64 readonly v3+2
    v6 = load.i32 notrap aligned v3+4
    v7 = load.f64 big v3+8
    v8 = icmp sge v4, v1
    v9 = icmp eq v5, v0
    brif v8, block1(v6, v7), block2(v2)
block1(v10: i32, v11: f64):
    brif v9, block2(v10), block3
block2(v12: i32):
    jump block3
block3:
    return v2
}
)";

/// What differs between the graph and tree VerifierAnalyses built for `g`
/// and ones computed afresh ("" when nothing).
std::string built_analyses_difference(const Function& g, const ControlFlowGraph& cfg, const DominatorTree& dt) {
    ControlFlowGraph fresh_cfg;
    fresh_cfg.compute(g);
    DominatorTree fresh_dt(g, fresh_cfg);
    auto same = [](auto a, auto b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); };
    if (!same(dt.reverse_postorder(), fresh_dt.reverse_postorder())) return "reverse postorder";
    for (uint32_t i = 0; i < g.dfg.num_blocks(); ++i) {
        const Block b(i);
        if (!same(cfg.successors(b), fresh_cfg.successors(b))) return "successors of " + b.to_string();
        if (cfg.predecessors(b).size() != fresh_cfg.predecessors(b).size()) return "predecessors of " + b.to_string();
        if (dt.idom(b) != fresh_dt.idom(b)) return "idom of " + b.to_string();
        if (dt.is_reachable(b) && (dt.dom_preorder(b) != fresh_dt.dom_preorder(b) ||
                                   dt.dom_postorder(b) != fresh_dt.dom_postorder(b)))
            return "tree numbers of " + b.to_string();
    }
    return "";
}

/// Both verdicts on `g`, compared error by error (text, place, instruction,
/// block); and a third, the quick paths with dominance from the graph and
/// tree built in VerifierAnalyses (as the JIT verifies), whose analyses
/// must be those of `g` when it says it built them. Returns whether it was
/// rejected.
bool same_as_full_checks(const Function& g, VerifierContext& quick, VerifierContext& full, const std::string& what) {
    VerifierErrors q, a, t;
    const bool ok_q = verify_function(g, q, quick);
    detail::set_verifier_quick_paths(false);
    const bool ok_a = verify_function(g, a, full);
    detail::set_verifier_quick_paths(true);
    static VerifierContext with_tree;
    static ControlFlowGraph cfg;
    static DominatorTree dt;
    VerifierAnalyses built{&cfg, &dt};
    const bool ok_t = verify_function(g, t, with_tree, built);
    EXPECT_EQ(ok_q, ok_a) << what;
    EXPECT_EQ(ok_t, ok_a) << what;
    EXPECT_EQ(format_verifier_errors(q), format_verifier_errors(a)) << what;
    EXPECT_EQ(format_verifier_errors(t), format_verifier_errors(a)) << what;
    EXPECT_EQ(q.size(), a.size()) << what;
    for (size_t i = 0; i < std::min(q.size(), a.size()); ++i) {
        EXPECT_EQ(q[i].inst, a[i].inst) << what;
        EXPECT_EQ(q[i].block, a[i].block) << what;
    }
    const bool one_block = g.layout.entry_block() && g.layout.entry_block() == g.layout.last_block();
    EXPECT_EQ(built.computed, ok_t && !one_block) << what;
    if (built.computed) {
        EXPECT_EQ(built_analyses_difference(g, cfg, dt), "") << what;
    }
    return !ok_a;
}

// Every one-field change of the functions above (each operand, branch
// argument, return value and branch target replaced by every value or
// block, each `.T`, opcode, value type, condition code and immediate, each
// result list dropped or lengthened, each signature item retyped or
// extended, each memory flag bit flipped and both byte orders set): the
// quick paths must give exactly the full checks' errors. A
// quick path that accepted a fault would make the lists differ.
TEST(VerifierQuickPaths, AgreeWithTheFullChecksOnEveryOneFieldChange) {
    Diagnostics diags;
    auto funcs = parse_functions(kQuickPathFunctions, diags);
    ASSERT_TRUE(diags.empty());
    ASSERT_EQ(funcs.size(), 4u);
    VerifierContext quick, full;
    size_t changes = 0, rejected = 0;
    auto check = [&](const Function& g, const std::string& what) {
        ++changes;
        rejected += same_as_full_checks(g, quick, full, what);
    };
    for (const auto& fp : funcs) {
        const Function& f = *fp;
        VerifierErrors none;
        ASSERT_TRUE(verify_function(f, none, quick)) << format_verifier_errors(none);
        const uint32_t nv = f.dfg.num_values(), ni = f.dfg.num_insts(), nb = f.dfg.num_blocks();
        const ValueListPool& pool = f.dfg.value_lists;
        std::vector<Value> values;
        for (uint32_t v = 0; v < nv + 2; ++v) values.push_back(Value(v));
        values.push_back(Value());
        for (uint32_t i = 0; i < ni; ++i) {
            const Inst inst(i);
            const InstructionData& d = f.dfg[inst];
            const std::string at = f.name.to_string() + " inst" + std::to_string(i);
            for (unsigned k = 0; k < 3; ++k) {
                for (Value v : values) {
                    Function g = f;
                    g.dfg[inst].args[k] = v;
                    check(g, at + " arg" + std::to_string(k) + " = " + v.to_string());
                }
            }
            for (uint32_t k = 0; k < d.vargs.size(pool); ++k) {
                for (Value v : values) {
                    Function g = f;
                    g.dfg[inst].vargs.set(k, v, g.dfg.value_lists);
                    check(g, at + " varg" + std::to_string(k) + " = " + v.to_string());
                }
            }
            for (unsigned j = 0; j < 2; ++j) {
                if (!d.dests[j].is_valid()) continue;
                for (uint32_t k = 0; k < d.dests[j].num_args(pool); ++k) {
                    for (Value v : values) {
                        Function g = f;
                        g.dfg[inst].dests[j].set_arg(k, v, g.dfg.value_lists);
                        check(g, at + " dest" + std::to_string(j) + " arg" + std::to_string(k));
                    }
                }
                for (uint32_t b = 0; b < nb + 1; ++b) {
                    Function g = f;
                    g.dfg[inst].dests[j].set_block(Block(b), g.dfg.value_lists);
                    check(g, at + " dest" + std::to_string(j) + " -> block" + std::to_string(b));
                }
            }
            for (unsigned t = 0; t < 8; ++t) {
                Function g = f;
                g.dfg[inst].type = Type(static_cast<Type::Code>(t));
                check(g, at + " type " + std::to_string(t));
            }
            for (unsigned op = 0; op < kNumOpcodes; ++op) {
                Function g = f;
                g.dfg[inst].opcode = static_cast<Opcode>(op);
                check(g, at + " opcode " + std::to_string(op));
            }
            for (unsigned code : {0u, 1u, 9u, 10u, 13u, 14u, 255u}) {
                Function g = f;
                g.dfg[inst].code = static_cast<uint8_t>(code);
                check(g, at + " code " + std::to_string(code));
            }
            for (uint64_t imm : {uint64_t{0x100}, uint64_t{1} << 40, ~uint64_t{0}}) {
                Function g = f;
                g.dfg[inst].imm = imm;
                check(g, at + " imm");
            }
            // Memory flags (loads and stores read them): each bit set and
            // cleared, and both byte orders at once.
            for (unsigned bit = 1; bit <= MemFlags::Little; bit <<= 1) {
                Function g = f;
                g.dfg[inst].flags.bits ^= static_cast<uint8_t>(bit);
                check(g, at + " flag bit " + std::to_string(bit));
            }
            {
                Function g = f;
                g.dfg[inst].flags.set(MemFlags::Big);
                g.dfg[inst].flags.set(MemFlags::Little);
                check(g, at + " big and little");
            }
            {
                Function g = f;
                g.dfg.clear_results(inst);
                check(g, at + " results cleared");
            }
            {
                Function g = f;
                g.dfg.append_result(inst, types::I64);
                check(g, at + " a result more");
            }
        }
        for (uint32_t v = 0; v < nv; ++v) {
            for (unsigned t = 0; t < 8; ++t) {
                Function g = f;
                g.dfg.set_value_type(Value(v), Type(static_cast<Type::Code>(t)));
                check(g, f.name.to_string() + " v" + std::to_string(v) + " type " + std::to_string(t));
            }
        }
        for (int which = 0; which < 2; ++which) {
            const size_t n = which ? f.signature.returns.size() : f.signature.params.size();
            for (size_t k = 0; k < n; ++k) {
                for (unsigned t = 0; t < 8; ++t) {
                    Function g = f;
                    (which ? g.signature.returns : g.signature.params)[k].type = Type(static_cast<Type::Code>(t));
                    check(g, f.name.to_string() + " signature item retyped");
                }
                for (ArgExt ext : {ArgExt::Uext, ArgExt::Sext}) {
                    Function g = f;
                    (which ? g.signature.returns : g.signature.params)[k].ext = ext;
                    check(g, f.name.to_string() + " signature item extended");
                }
            }
        }
    }
    // The changes reach both answers.
    RecordProperty("changes", static_cast<int>(changes));
    RecordProperty("rejected", static_cast<int>(rejected));
    EXPECT_GT(changes, 9000u);
    EXPECT_GT(rejected, changes / 2);
    EXPECT_LT(rejected, changes);
}

// Definitions entered in one call must not serve the next function: the
// context keeps its use table between calls and tells this call's entries
// by their numbers. Here a function that defines v0..v12 is verified
// before each of two that use some of those numbers before (or without) a
// definition.
TEST(VerifierQuickPaths, KeptContextForgetsEarlierFunctions) {
    Diagnostics diags;
    auto funcs = parse_functions(kQuickPathFunctions, diags);
    ASSERT_TRUE(diags.empty());
    const Function& big = *funcs[0];
    Function g;
    {
        FuncCursor c(g);
        g.signature.params = {types::I64};
        g.signature.returns = {types::I64};
        Block b0 = c.insert_block();
        Value p = g.dfg.append_block_param(b0, types::I64);
        c.at_bottom(b0);
        Value x = c.ins().iadd(p, p);       // v1
        Value y = c.ins().imul(x, x);       // v2
        c.ins().return_({y});
        // v2 used before its definition: swap the two instructions.
        g.layout.remove_inst(g.dfg.value_def(x).inst());
        g.layout.insert_inst(g.dfg.value_def(x).inst(), *g.layout.last_inst(b0));
    }
    VerifierErrors fresh;
    ASSERT_FALSE(verify_function(g, fresh));
    VerifierContext kept;
    for (int round = 0; round < 3; ++round) {
        VerifierErrors errs;
        ASSERT_TRUE(verify_function(big, errs, kept)) << format_verifier_errors(errs);
        errs.clear();
        EXPECT_FALSE(verify_function(g, errs, kept));
        EXPECT_EQ(format_verifier_errors(errs), format_verifier_errors(fresh));
    }
    EXPECT_NE(format_verifier_errors(fresh).find("v1 used in block0 is not dominated"), std::string::npos)
        << format_verifier_errors(fresh);
}

// The verifier's own dominator tree iterates until nothing changes only
// when the graph has a loop: here block2 is entered from block1 and (back)
// from block3, which block0 also enters, and reverse postorder reaches
// block2 before block3. The first pass sees only block1 as block2's
// predecessor and takes it for block2's dominator; only the second,
// which sees block3, finds block0, and the use of block1's v1 in block2 is
// an error. (A tree from the first pass alone would accept it.)
TEST(VerifierDominance, LoopEnteredTwiceNeedsTheSecondPass) {
    constexpr const char* kText = R"(
function %second_pass(i32) -> i32 {
block0(v0: i32):
    brif v0, block3, block1
block1:
    v1 = iconst.i32 1
    jump block2
block2:
    v2 = iadd v1, v0
    brif v2, block3, block4
block3:
    jump block2
block4:
    return v2
}
)";
    Diagnostics diags;
    auto funcs = parse_functions(kText, diags);
    ASSERT_TRUE(diags.empty());
    ASSERT_EQ(funcs.size(), 1u);
    VerifierContext quick, full;
    VerifierErrors errs;
    EXPECT_FALSE(verify_function(*funcs[0], errs, quick));
    ASSERT_EQ(errs.size(), 1u) << format_verifier_errors(errs);
    EXPECT_EQ(errs[0].message, "v1 used in block2 is not dominated by its definition in block1");
    EXPECT_EQ(errs[0].context, "inst3 (v2 = iadd v1, v0) in block2");
    same_as_full_checks(*funcs[0], quick, full, "second_pass");
}

// The same graph inside a function of over a thousand blocks, where the
// verifier gathers every block's successors before its search (and
// prefetches the terminators): a chain of blocks in front, an unreachable
// block that branches into the chain and into the loop, and one block
// laid out far from its number. The error and the rest must not change.
TEST(VerifierDominance, LargeFunctionsGatherTheSameGraph) {
    auto text = [](bool broken) {
        std::string t = "function %large(i32) -> i32 {\nblock0(v0: i32):\n    jump block10\n";
        const int chain = 1200;
        for (int i = 0; i < chain; ++i) t += "block" + std::to_string(10 + i) + ":\n    jump block" + std::to_string(11 + i) + "\n";
        const std::string head = "block" + std::to_string(10 + chain);
        t += head + ":\n    brif v0, block3, block1\n";
        t += "block1:\n    v1 = iconst.i32 1\n    jump block2\n";
        t += std::string("block2:\n    v2 = iadd ") + (broken ? "v1" : "v0") + ", v0\n    brif v2, block3, block4\n";
        t += "block5:\n    brif v0, block2, block600\n";  // unreachable
        t += "block3:\n    jump block2\nblock4:\n    return v2\n}\n";
        return t;
    };
    for (bool broken : {false, true}) {
        Diagnostics diags;
        auto funcs = parse_functions(text(broken), diags);
        ASSERT_TRUE(diags.empty());
        ASSERT_EQ(funcs.size(), 1u);
        ASSERT_GE(funcs[0]->dfg.num_blocks(), 1024u);
        VerifierContext quick, full;
        VerifierErrors errs;
        EXPECT_EQ(verify_function(*funcs[0], errs, quick), !broken) << format_verifier_errors(errs);
        if (broken) {
            ASSERT_EQ(errs.size(), 1u) << format_verifier_errors(errs);
            EXPECT_EQ(errs[0].message, "v1 used in block2 is not dominated by its definition in block1");
        }
        same_as_full_checks(*funcs[0], quick, full, broken ? "large, broken" : "large");
    }
}

TEST_F(VerifierTest, ErrorsAreAppended) {
    begin({});
    cur.ins().iconst(I32, 0);
    VerifierErrors list(1);
    EXPECT_FALSE(verify_function(f, list));
    EXPECT_EQ(list.size(), 2u);
}

// Random damage to a valid function: whatever the verifier says, it must not
// crash, hang or report nothing for a function it was handed broken.
TEST_F(VerifierTest, SurvivesRandomDamage) {
    std::mt19937 rng(2024);
    // A larger valid function (a chain of 40 blocks passing a value on),
    // verified now and then with the shared context between damaged ones.
    Function big;
    {
        FuncCursor c(big);
        big.signature.params = {I64};
        big.signature.returns = {I64};
        Block b = c.insert_block();
        Value v = big.dfg.append_block_param(b, I64);
        for (int k = 0; k < 40; ++k) {
            c.at_bottom(b);
            Value w = c.ins().iadd(v, v);
            Block next = c.insert_block();
            Value args[] = {w};
            c.at_bottom(b);
            c.ins().jump(next, args);
            b = next;
            v = big.dfg.append_block_param(b, I64);
        }
        c.at_bottom(b);
        c.ins().return_({v});
    }
    VerifierContext shared;
    for (int round = 0; round < 2000; ++round) {
        Function g;
        FuncCursor c(g);
        g.signature.params = {I32, I64};
        g.signature.returns = {I32};
        Block e = c.insert_block();
        Block b1 = c.insert_block();
        Block b2 = c.insert_block();
        Value a = g.dfg.append_block_param(e, I32);
        Value q = g.dfg.append_block_param(e, I64);
        Value bp = g.dfg.append_block_param(b1, I32);
        StackSlot ss = g.create_stack_slot(StackSlotData{16, 8, {}});
        FuncRef fn = g.import_function(
            ExtFuncData{ExternalName::testcase("k"), g.import_signature(sig_of({I32}, {I32})), false});
        c.at_bottom(e);
        Value s = c.ins().iadd(a, a);
        Value addr = c.ins().stack_addr(I64, ss, 0);
        c.ins().store({}, s, addr);
        Value args[] = {s};
        Value r = g.dfg.first_result(c.ins().call(fn, args));
        c.ins().brif(r, b1, args, b2, {});
        c.at_bottom(b1);
        Value l = c.ins().load(I32, {}, addr);
        c.ins().return_({c.ins().iadd(l, bp)});
        c.at_bottom(b2);
        JumpTableData jt;
        jt.all.push_back(g.dfg.block_call(b1, args));
        c.ins().br_table(a, g.create_jump_table(std::move(jt)));
        (void)q;

        // Damage: a few random fields of random instructions.
        const uint32_t n_insts = g.dfg.num_insts();
        const uint32_t n_vals = g.dfg.num_values();
        auto any_value = [&] { return Value(rng() % (n_vals + 3)); };
        for (int k = 0; k < 3; ++k) {
            const Inst inst(rng() % n_insts);
            InstructionData& d = g.dfg[inst];
            switch (rng() % 10) {
            case 0: d.opcode = static_cast<Opcode>(rng() % kNumOpcodes); break;
            case 1: d.args[rng() % 3] = any_value(); break;
            case 2: d.entity = rng() % 4; break;
            case 3: d.type = Type(static_cast<Type::Code>(rng() % 7)); break;
            case 4: d.code = static_cast<uint8_t>(rng()); break;
            case 5: d.dests[rng() % 2] = g.dfg.block_call(Block(rng() % 5), args); break;
            case 6:
                if (g.layout.inst_block(inst)) g.layout.remove_inst(inst);
                break;
            case 7: g.dfg.clear_results(inst); break;
            case 8: {
                Value v = any_value();
                if (g.dfg.value_is_valid(v)) g.dfg.change_to_alias(v, any_value());
                break;
            }
            case 9:
                if (!d.vargs.empty()) d.vargs.set(rng() % d.vargs.size(g.dfg.value_lists), any_value(), g.dfg.value_lists);
                break;
            }
        }
        VerifierErrors out;
        const bool ok = verify_function(g, out);
        // A context kept across functions of different sizes (as the JIT
        // module keeps one) must give exactly what fresh tables give.
        VerifierErrors reused;
        EXPECT_EQ(verify_function(g, reused, shared), ok) << "round " << round;
        ASSERT_EQ(format_verifier_errors(reused), format_verifier_errors(out)) << "round " << round;
        if (round % 10 == 0) {
            reused.clear();
            ASSERT_TRUE(verify_function(big, reused, shared)) << format_verifier_errors(reused);
        }
    }
}

}  // namespace
}  // namespace heron
