// FunctionBuilder: building, the contract checks (every misuse is an error
// naming the block and the variable), sticky errors, context reuse,
// undefined reads.
#include <gtest/gtest.h>

#include "frontend/function_builder.h"
#include "tests/unit/frontend_test_util.h"

namespace heron {
namespace {

using K = FrontendError::Kind;
using fe_test::incoming;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(FrontendBuilderTest, BuildsStraightLineFunction) {
    fe_test::EntryBuilder t("f", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    Block entry = t.entry;
    EXPECT_TRUE(b.is_pristine());
    Variable x = b.declare_var(types::I32);
    EXPECT_EQ(x.to_string(), "var0");
    b.def_var(x, b.block_params(entry)[0]);
    Value one = b.ins().iconst(types::I32, 1);
    b.def_var(x, b.ins().iadd(b.use_var(x), one));
    EXPECT_FALSE(b.is_filled());
    b.ins().return_({b.use_var(x)});
    EXPECT_TRUE(b.is_filled());
    ASSERT_TRUE(b.finalize().ok());
    EXPECT_EQ(f.dfg.num_block_params(entry), 1u);
    int n = 0;
    for (Inst i : f.layout.block_insts(entry)) {
        (void)i;
        ++n;
    }
    EXPECT_EQ(n, 3);
}

TEST(FrontendBuilderTest, InstructionAfterTerminatorIsStickyError) {
    fe_test::EntryBuilder t("f", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    Block entry = t.entry;
    b.ins().return_({b.block_params(entry)[0]});
    Value v = b.ins().iconst(types::I32, 3);  // after the terminator
    EXPECT_TRUE(f.dfg.value_is_valid(v)) << "a stand-in value, not a crash";
    ASSERT_NE(b.error(), nullptr);
    EXPECT_EQ(b.error()->kind, K::InstAfterTerminator);
    EXPECT_EQ(b.error()->block, std::optional<Block>(entry));
    EXPECT_TRUE(contains(b.error()->message, "block0")) << b.error()->message;
    EXPECT_TRUE(contains(b.error()->message, "iconst")) << b.error()->message;
    // Only the first error sticks.
    b.seal_block(entry);
    EXPECT_EQ(b.error()->kind, K::InstAfterTerminator);
    auto r = b.finalize();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, K::InstAfterTerminator);
}

TEST(FrontendBuilderTest, VariableErrorsNameVariableAndBlock) {
    Function f(ExternalName::testcase("f"), fe_test::i32_signature(1));
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    b.switch_to_block(entry);
    Variable x = b.declare_var(types::I32);
    Value wide = b.ins().iconst(types::I64, 7);

    auto r1 = b.try_def_var(x, wide);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().kind, K::WrongVariableType);
    EXPECT_EQ(r1.error().var, std::optional<Variable>(x));
    EXPECT_EQ(r1.error().block, std::optional<Block>(entry));
    EXPECT_TRUE(contains(r1.error().message, "var0")) << r1.error().message;
    EXPECT_TRUE(contains(r1.error().message, "i64")) << r1.error().message;
    EXPECT_TRUE(contains(r1.error().message, "block0")) << r1.error().message;

    Variable ghost(5);
    auto r2 = b.try_use_var(ghost);
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().kind, K::UndeclaredVariable);
    EXPECT_TRUE(contains(r2.error().message, "var5")) << r2.error().message;
    EXPECT_TRUE(contains(r2.error().message, "block0")) << r2.error().message;

    auto r3 = b.try_def_var(ghost, wide);
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.error().kind, K::UndeclaredVariable);

    auto r4 = b.try_declare_var(Type());
    ASSERT_FALSE(r4.ok());
    EXPECT_EQ(r4.error().kind, K::InvalidType);

    EXPECT_EQ(b.error(), nullptr) << "try_ forms leave no sticky error";

    // The plain forms record the error and hand back a usable stand-in.
    Value u = b.use_var(ghost);
    EXPECT_TRUE(f.dfg.value_is_valid(u));
    ASSERT_NE(b.error(), nullptr);
    EXPECT_EQ(b.error()->kind, K::UndeclaredVariable);
    EXPECT_EQ(b.error()->var, std::optional<Variable>(ghost));
}

TEST(FrontendBuilderTest, SealingTwiceIsAnError) {
    Function f(ExternalName::testcase("f"), Signature());
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    b.switch_to_block(entry);
    ASSERT_TRUE(b.try_seal_block(entry).ok());
    auto r = b.try_seal_block(entry);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, K::SealedTwice);
    EXPECT_EQ(r.error().block, std::optional<Block>(entry));
    EXPECT_TRUE(contains(r.error().message, "block0"));
    b.seal_block(entry);
    ASSERT_NE(b.error(), nullptr);
    EXPECT_EQ(b.error()->kind, K::SealedTwice);
}

TEST(FrontendBuilderTest, FinalizeReportsUnsealedAndUnterminatedBlocks) {
    Function f(ExternalName::testcase("f"), Signature());
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    Block next = b.create_block();
    Block unused = b.create_block();
    (void)unused;
    b.switch_to_block(entry);
    b.seal_block(entry);
    b.ins().jump(next);
    auto r1 = b.finalize();
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().kind, K::UnsealedBlock);
    EXPECT_EQ(r1.error().block, std::optional<Block>(next));
    EXPECT_TRUE(contains(r1.error().message, "block1")) << r1.error().message;

    b.seal_block(next);
    auto r2 = b.finalize();
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().kind, K::UnterminatedBlock);
    EXPECT_TRUE(contains(r2.error().message, "never built")) << r2.error().message;

    b.switch_to_block(next);
    b.ins().iconst(types::I32, 0);
    auto r3 = b.finalize();
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.error().kind, K::UnterminatedBlock);
    EXPECT_TRUE(contains(r3.error().message, "terminator")) << r3.error().message;

    b.ins().return_({});
    EXPECT_TRUE(b.finalize().ok()) << "an untouched block is fine";
    auto r4 = b.finalize();
    ASSERT_FALSE(r4.ok());
    EXPECT_EQ(r4.error().kind, K::AlreadyFinalized);
}

TEST(FrontendBuilderTest, MiscellaneousMisuse) {
    Function f(ExternalName::testcase("f"), Signature());
    FunctionBuilderContext ctx;
    {
        FunctionBuilder b(f, ctx);
        b.ins().iconst(types::I32, 1);
        ASSERT_NE(b.error(), nullptr);
        EXPECT_EQ(b.error()->kind, K::NoCurrentBlock);
    }
    f.clear();
    {
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        Block target = b.create_block();
        b.switch_to_block(entry);
        b.seal_block(entry);
        b.seal_block(target);
        b.ins().jump(target);
        ASSERT_NE(b.error(), nullptr);
        EXPECT_EQ(b.error()->kind, K::BranchToSealedBlock);
        EXPECT_EQ(b.error()->block, std::optional<Block>(target));
        auto r = b.try_switch_to_block(entry);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().kind, K::SwitchToFilledBlock);
        auto p = b.try_append_block_param(entry, types::I32);
        ASSERT_FALSE(p.ok());
        EXPECT_EQ(p.error().kind, K::BlockNotPristine);
        auto q = b.try_switch_to_block(Block(40));
        ASSERT_FALSE(q.ok());
        EXPECT_EQ(q.error().kind, K::InvalidBlock);
    }
    f.clear();
    {
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        Block loop = b.create_block();
        b.switch_to_block(entry);
        b.seal_block(entry);
        Variable x = b.declare_var(types::I32);
        b.def_var(x, b.ins().iconst(types::I32, 0));
        b.ins().jump(loop);
        b.switch_to_block(loop);
        b.use_var(x);  // unsealed: makes a parameter
        auto p = b.try_append_block_param(loop, types::I32);
        ASSERT_FALSE(p.ok());
        EXPECT_EQ(p.error().kind, K::BlockNotPristine);
        EXPECT_TRUE(contains(p.error().message, "variables")) << p.error().message;
    }
    f.clear();
    {
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        Block a = b.create_block();
        Block c = b.create_block();
        b.append_block_param(entry, types::I32);
        b.switch_to_block(entry);
        b.seal_block(entry);
        JumpTable jt = b.create_jump_table(a, std::vector<Block>{c});
        b.ins().br_table(b.block_params(entry)[0], jt);
        b.switch_to_block(a);
        b.ins().br_table(b.ins().iconst(types::I32, 0), jt);
        ASSERT_NE(b.error(), nullptr);
        EXPECT_EQ(b.error()->kind, K::JumpTableReused);
    }
}

TEST(FrontendBuilderTest, UndefinedReadsBecomeZeroAndAreReported) {
    fe_test::EntryBuilder t("f", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    Block entry = t.entry;
    Block dead = b.create_block();
    Variable x = b.declare_var(types::I32);
    Variable d = b.declare_var(types::F64);
    Value xv = b.use_var(x);  // never defined
    ASSERT_EQ(b.undefined_reads().size(), 1u);
    const UndefinedRead& r = b.undefined_reads()[0];
    EXPECT_EQ(r.var, x);
    EXPECT_EQ(r.block, entry);
    EXPECT_FALSE(r.unreachable);
    EXPECT_EQ(r.zero, xv);
    Inst def = f.dfg.value_def(xv).inst();
    EXPECT_EQ(f.dfg[def].opcode, Opcode::Iconst);
    EXPECT_EQ(f.dfg[def].imm, 0u);
    b.ins().return_({xv});

    b.switch_to_block(dead);
    b.seal_block(dead);
    EXPECT_TRUE(b.is_unreachable());
    Value dv = b.use_var(d);
    ASSERT_EQ(b.undefined_reads().size(), 2u);
    EXPECT_TRUE(b.undefined_reads()[1].unreachable);
    EXPECT_EQ(b.undefined_reads()[1].var, d);
    EXPECT_EQ(f.dfg.value_type(dv), types::F64);
    EXPECT_EQ(f.dfg[f.dfg.value_def(dv).inst()].opcode, Opcode::F64const);
    b.ins().return_({b.ins().iconst(types::I32, 0)});
    EXPECT_TRUE(b.finalize().ok());
}

TEST(FrontendBuilderTest, BranchToSameBlockTwiceGetsArgumentsOnEveryEdge) {
    // entry: x = p; brif p, join, join   -- both edges of one branch
    // other: x = 5; jump join
    fe_test::EntryBuilder t("f", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    Block entry = t.entry;
    Block other = b.create_block();
    Block join = b.create_block();
    Variable x = b.declare_var(types::I32);
    Value p = b.block_params(entry)[0];
    b.def_var(x, p);
    Value c = b.ins().icmp_imm(IntCC::Eq, p, 3);
    b.ins().brif(c, join, other);
    b.switch_to_block(other);
    b.seal_block(other);
    b.def_var(x, b.ins().iconst(types::I32, 5));
    b.ins().jump(join);
    b.switch_to_block(join);
    b.seal_block(join);
    b.ins().return_({b.use_var(x)});
    ASSERT_TRUE(b.finalize().ok());
    ASSERT_EQ(f.dfg.num_block_params(join), 1u);
    EXPECT_EQ(b.ssa().num_predecessors(join), 2u);
    auto in = incoming(f, join, 0);
    ASSERT_EQ(in.size(), 2u);
}

TEST(FrontendBuilderTest, BrTableWithRepeatedTargetsIsOnePredecessor) {
    fe_test::EntryBuilder t("f", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    Block entry = t.entry;
    Block a = b.create_block();
    Block join = b.create_block();
    Variable x = b.declare_var(types::I32);
    b.def_var(x, b.ins().iconst(types::I32, 10));
    Block entries[] = {join, a, join, join};
    JumpTable jt = b.create_jump_table(join, entries);
    b.ins().br_table(b.block_params(entry)[0], jt);
    b.switch_to_block(a);
    b.seal_block(a);
    b.def_var(x, b.ins().iconst(types::I32, 20));
    b.ins().jump(join);
    b.switch_to_block(join);
    b.seal_block(join);
    b.ins().return_({b.use_var(x)});
    ASSERT_TRUE(b.finalize().ok());
    EXPECT_EQ(b.ssa().num_predecessors(join), 2u);
    ASSERT_EQ(f.dfg.num_block_params(join), 1u);
    auto in = incoming(f, join, 0);
    EXPECT_EQ(in.size(), 5u) << "default + 3 table entries + the jump";
}

TEST(FrontendBuilderTest, ContextIsReusable) {
    FunctionBuilderContext ctx;
    std::string first;
    for (int round = 0; round < 3; ++round) {
        Function f(ExternalName::testcase("f"), fe_test::i32_signature(1));
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        Block loop = b.create_block();
        Block exit = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        Variable i = b.declare_var(types::I32);
        b.def_var(i, b.block_params(entry)[0]);
        b.ins().jump(loop);
        b.switch_to_block(loop);
        Value iv = b.use_var(i);
        b.def_var(i, b.ins().iadd_imm(iv, -1));
        b.ins().brif(b.use_var(i), loop, exit);
        b.seal_block(loop);
        b.switch_to_block(exit);
        b.seal_block(exit);
        b.ins().return_({b.use_var(i)});
        ASSERT_TRUE(b.finalize().ok());
        EXPECT_EQ(f.dfg.num_block_params(loop), 1u);
        std::string shape = std::to_string(f.dfg.num_values()) + "/" + std::to_string(f.dfg.num_insts());
        if (round == 0) first = shape;
        EXPECT_EQ(shape, first) << "the same function every time";
    }
}

TEST(FrontendBuilderTest, ColdBlocksAndDeclarations) {
    Function f(ExternalName::testcase("f"), Signature());
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    Block slow = b.create_block();
    b.set_cold_block(slow);
    EXPECT_TRUE(f.layout.is_cold(slow));
    StackSlot ss = b.create_sized_stack_slot(StackSlotData{16, 8, std::nullopt});
    Signature callee;
    callee.params.push_back(AbiParam(types::I64));
    SigRef sig = b.import_signature(callee);
    FuncRef fn = b.import_function(ExtFuncData{ExternalName::testcase("g"), sig, false});
    b.switch_to_block(entry);
    b.seal_block(entry);
    Value addr = b.ins().stack_addr(types::I64, ss, 0);
    b.ins().call(fn, std::vector<Value>{addr});
    b.ins().jump(slow);
    b.switch_to_block(slow);
    b.seal_block(slow);
    b.ins().return_({});
    EXPECT_TRUE(b.finalize().ok());
    EXPECT_EQ(f.stack_slots.size(), 1u);
    EXPECT_EQ(f.dfg.ext_funcs.size(), 1u);
}

}  // namespace
}  // namespace heron
