// Loop scopes (seed 003, LoopForm): the canonical shape (preheader, one
// latch, dedicated exit), which variables get header and exit parameters,
// nesting, misuse, and the results under the interpreter.
#include <gtest/gtest.h>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/loops.h"
#include "tests/unit/frontend_test_util.h"

namespace heron {
namespace {

int64_t run(const Function& f, int32_t arg) {
    Interpreter interp;
    DataValue a = DataValue::i32(arg);
    InterpOutcome out = interp.call(f, std::span<const DataValue>(&a, 1));
    EXPECT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
    return out.values.empty() ? -1 : out.values[0].as_signed();
}

std::string verify(const Function& f) {
    VerifierErrors errors;
    if (verify_function(f, errors)) return "";
    return format_verifier_errors(errors) + "\n" + print_function(f);
}

// The predecessors of `b` in the finished function, as blocks.
std::vector<Block> preds(const Function& f, Block target) {
    std::vector<Block> out;
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) {
            bool hit = false;
            for (const BlockCall& bc : f.dfg.branch_destinations(i)) hit |= bc.block(f.dfg.value_lists) == target;
            if (hit) out.push_back(b);
        }
    }
    return out;
}

std::vector<Block> succs(const Function& f, Block b) {
    std::vector<Block> out;
    Inst last = *f.layout.last_inst(b);
    for (const BlockCall& bc : f.dfg.branch_destinations(last)) out.push_back(bc.block(f.dfg.value_lists));
    return out;
}

// sum = 0; i = 0; while (i < n) { sum += i; i += 1 } return sum
TEST(FrontendLoopsTest, CountingLoopShapeAndParameters) {
    fe_test::EntryBuilder t("sum", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    LoopScopes loops;
    Block entry = t.entry;
    Variable n = b.declare_var(types::I32), sum = b.declare_var(types::I32), i = b.declare_var(types::I32);
    b.def_var(n, b.block_params(entry)[0]);
    b.def_var(sum, b.ins().iconst(types::I32, 0));
    b.def_var(i, b.ins().iconst(types::I32, 0));
    auto l = loops.begin_loop(b);
    ASSERT_TRUE(l.ok());
    ASSERT_TRUE(loops.loop_while(b, b.ins().icmp(IntCC::Slt, b.use_var(i), b.use_var(n))).ok());
    b.def_var(sum, b.ins().iadd(b.use_var(sum), b.use_var(i)));
    b.def_var(i, b.ins().iadd_imm(b.use_var(i), 1));
    ASSERT_TRUE(loops.end_loop(b).ok());
    EXPECT_EQ(loops.depth(), 0u);
    b.ins().return_({b.use_var(sum)});
    ASSERT_TRUE(b.finalize().ok());
    ASSERT_EQ(verify(f), "");

    const LoopBlocks& lb = *l;
    EXPECT_EQ(lb.preheader, entry);
    EXPECT_EQ(succs(f, lb.preheader), std::vector<Block>{lb.header}) << "a preheader has one successor";
    EXPECT_EQ(preds(f, lb.header), (std::vector<Block>{lb.preheader, lb.latch})) << "one latch";
    EXPECT_EQ(preds(f, lb.exit), std::vector<Block>{lb.header}) << "a dedicated exit";
    EXPECT_EQ(f.dfg.num_block_params(lb.header), 2u) << "sum and i carried, n invariant\n" << print_function(f);
    EXPECT_EQ(f.dfg.num_block_params(lb.exit), 0u) << "one path reaches the exit";
    EXPECT_EQ(fe_test::trivial_params(f), "");
    EXPECT_EQ(run(f, 10), 45);
    EXPECT_EQ(run(f, 0), 0);
}

// i = 0; sum = 0
// while (i < n) { i += 1; if (i % 2 == 0) continue; if (i == stop) break; sum += i }
// return sum * 1000 + i
//
// The break happens before `sum` changes in the iteration: at the exit
// only `i` differs between the paths (the test, the break).
TEST(FrontendLoopsTest, BreakAndContinueRouteThroughLatchAndExit) {
    fe_test::EntryBuilder t("odd", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    LoopScopes loops;
    Block entry = t.entry;
    Variable n = b.declare_var(types::I32), sum = b.declare_var(types::I32), i = b.declare_var(types::I32);
    b.def_var(n, b.block_params(entry)[0]);
    b.def_var(sum, b.ins().iconst(types::I32, 0));
    b.def_var(i, b.ins().iconst(types::I32, 0));
    auto l = loops.begin_loop(b);
    ASSERT_TRUE(l.ok());
    ASSERT_TRUE(loops.loop_while(b, b.ins().icmp(IntCC::Slt, b.use_var(i), b.use_var(n))).ok());
    b.def_var(i, b.ins().iadd_imm(b.use_var(i), 1));
    Value even = b.ins().icmp_imm(IntCC::Eq, b.ins().band(b.use_var(i), b.ins().iconst(types::I32, 1)), 0);
    ASSERT_TRUE(loops.continue_if(b, even).ok());
    ASSERT_TRUE(loops.break_if(b, b.ins().icmp_imm(IntCC::Eq, b.use_var(i), 7)).ok());
    b.def_var(sum, b.ins().iadd(b.use_var(sum), b.use_var(i)));
    ASSERT_TRUE(loops.end_loop(b).ok());
    Value r = b.ins().iadd(b.ins().imul(b.use_var(sum), b.ins().iconst(types::I32, 1000)), b.use_var(i));
    b.ins().return_({r});
    ASSERT_TRUE(b.finalize().ok());
    ASSERT_EQ(verify(f), "");

    const LoopBlocks& lb = *l;
    EXPECT_EQ(preds(f, lb.header), (std::vector<Block>{lb.preheader, lb.latch}));
    EXPECT_EQ(preds(f, lb.latch).size(), 2u) << "the continue and the fall-through meet in the latch";
    EXPECT_EQ(preds(f, lb.exit).size(), 2u) << "the test and the break";
    EXPECT_EQ(f.dfg.num_block_params(lb.header), 2u);
    EXPECT_EQ(f.dfg.num_block_params(lb.exit), 1u) << "only i differs at the exit\n" << print_function(f);
    EXPECT_EQ(fe_test::trivial_params(f), "");
    EXPECT_EQ(run(f, 5), (1 + 3 + 5) * 1000 + 5);
    EXPECT_EQ(run(f, 6), (1 + 3 + 5) * 1000 + 6);
    EXPECT_EQ(run(f, 20), (1 + 3 + 5) * 1000 + 7);
}

// for (i = 0; i < n; i++) for (j = 0; ; j++) { if (j == i) break; if (i * j == 12) break outer; count++ }
TEST(FrontendLoopsTest, NestedLoopsWithBreakOutOfBoth) {
    fe_test::EntryBuilder t("nest", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    LoopScopes loops;
    Block entry = t.entry;
    Variable n = b.declare_var(types::I32), i = b.declare_var(types::I32);
    Variable j = b.declare_var(types::I32), count = b.declare_var(types::I32);
    b.def_var(n, b.block_params(entry)[0]);
    b.def_var(i, b.ins().iconst(types::I32, 0));
    b.def_var(count, b.ins().iconst(types::I32, 0));
    auto outer = loops.begin_loop(b);
    ASSERT_TRUE(outer.ok());
    ASSERT_TRUE(loops.loop_while(b, b.ins().icmp(IntCC::Slt, b.use_var(i), b.use_var(n))).ok());
    b.def_var(j, b.ins().iconst(types::I32, 0));
    auto inner = loops.begin_loop(b);
    ASSERT_TRUE(inner.ok());
    ASSERT_TRUE(loops.enter_body(b).ok());
    EXPECT_EQ(loops.depth(), 2u);
    ASSERT_TRUE(loops.break_if(b, b.ins().icmp(IntCC::Eq, b.use_var(j), b.use_var(i))).ok());
    Value prod = b.ins().imul(b.use_var(i), b.use_var(j));
    ASSERT_TRUE(loops.break_if(b, b.ins().icmp_imm(IntCC::Eq, prod, 12), 1).ok());
    b.def_var(count, b.ins().iadd_imm(b.use_var(count), 1));
    b.def_var(j, b.ins().iadd_imm(b.use_var(j), 1));
    ASSERT_TRUE(loops.end_loop(b).ok());  // inner
    b.def_var(i, b.ins().iadd_imm(b.use_var(i), 1));
    ASSERT_TRUE(loops.end_loop(b).ok());  // outer
    b.ins().return_({b.ins().iadd(b.ins().imul(b.use_var(count), b.ins().iconst(types::I32, 100)), b.use_var(i))});
    ASSERT_TRUE(b.finalize().ok());
    ASSERT_EQ(verify(f), "");

    EXPECT_EQ(preds(f, inner->header), (std::vector<Block>{inner->preheader, inner->latch}));
    EXPECT_EQ(preds(f, outer->header), (std::vector<Block>{outer->preheader, outer->latch}));
    EXPECT_EQ(preds(f, inner->exit).size(), 1u) << "the inner loop has no test: only its own break";
    EXPECT_EQ(preds(f, outer->exit).size(), 2u) << "the outer test and the break from the inner loop";
    EXPECT_EQ(fe_test::trivial_params(f), "");
    auto reference = [](int n) {
        int count = 0, i = 0;
        for (; i < n; ++i) {
            for (int j = 0;; ++j) {
                if (j == i) break;
                if (i * j == 12) return count * 100 + i;
                ++count;
            }
        }
        return count * 100 + i;
    };
    for (int arg : {0, 1, 3, 4, 5, 8}) EXPECT_EQ(run(f, arg), reference(arg)) << "n = " << arg;
}

TEST(FrontendLoopsTest, Misuse) {
    using K = FrontendError::Kind;
    fe_test::EntryBuilder t("m", fe_test::i32_signature(1));
    Function& f = t.f;
    FunctionBuilder& b = t.b;
    LoopScopes loops;
    Block entry = t.entry;
    auto r1 = loops.break_loop(b);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().kind, K::LoopMisuse);
    auto r2 = loops.end_loop(b);
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().kind, K::LoopMisuse);

    auto l = loops.begin_loop(b);
    ASSERT_TRUE(l.ok());
    auto r3 = loops.end_loop(b);
    ASSERT_FALSE(r3.ok()) << "the body was never entered";
    EXPECT_EQ(r3.error().kind, K::LoopMisuse);
    EXPECT_NE(r3.error().message.find(l->header.to_string()), std::string::npos) << r3.error().message;
    auto r4 = loops.continue_loop(b);
    ASSERT_FALSE(r4.ok());
    ASSERT_TRUE(loops.enter_body(b).ok());
    auto r5 = loops.loop_while(b, b.block_params(entry)[0]);
    ASSERT_FALSE(r5.ok()) << "not in the header any more";
    auto r6 = loops.break_loop(b, 3);
    ASSERT_FALSE(r6.ok());
    EXPECT_EQ(r6.error().kind, K::LoopMisuse);
    ASSERT_TRUE(loops.break_loop(b).ok());
    auto r7 = loops.break_loop(b);
    ASSERT_FALSE(r7.ok()) << "the block is filled";
    EXPECT_EQ(r7.error().kind, K::InstAfterTerminator);
    ASSERT_TRUE(loops.end_loop(b).ok());
    b.ins().return_({b.block_params(entry)[0]});
    EXPECT_TRUE(b.finalize().ok());
    EXPECT_EQ(run(f, 3), 3);
}

}  // namespace
}  // namespace heron
