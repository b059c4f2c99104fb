// The fast paths under the frontend's building throughput (issue #3): the
// definition table's dense part, appended blocks numbered directly, and a
// function whose variables and blocks straddle the definition table's
// dense/hashed boundary, checked in the interpreter.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/function.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "tests/unit/frontend_test_util.h"

namespace heron {
namespace {

// Random sets and gets on both sides of both limits of the dense part
// (variable kDenseVars, block kDenseBlocks), value 0 included (its dense
// word is all ones), against a std::map; clear() between rounds must
// forget everything in either part.
TEST(FrontendTablesTest, DefTableMatchesAMapAcrossItsDenseLimit) {
    constexpr uint32_t kVars = DefTable::kDenseVars, kBlocks = DefTable::kDenseBlocks;
    const uint32_t vars[] = {0, 1, kVars - 2, kVars - 1, kVars, kVars + 1, 1000};
    const uint32_t blocks[] = {0, 1, 12, 13, 64, 65, kBlocks - 1, kBlocks, kBlocks + 1, 300000};
    DefTable table;
    std::mt19937 rng(3);
    for (int round = 0; round < 4; ++round) {
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> ref;
        for (int i = 0; i < 4000; ++i) {
            const uint32_t var = vars[rng() % std::size(vars)], block = blocks[rng() % std::size(blocks)];
            if (rng() % 3 != 0) {
                const uint32_t value = rng() % 4 == 0 ? 0 : rng() % 100000;
                table.set(Variable(var), Block(block), Value(value));
                ref[{var, block}] = value;
            }
            PackedOption<Value> got = table.get(Variable(var), Block(block));
            auto it = ref.find({var, block});
            if (it == ref.end()) {
                EXPECT_FALSE(got) << "var " << var << " block " << block << " round " << round;
            } else {
                ASSERT_TRUE(got) << "var " << var << " block " << block << " round " << round;
                EXPECT_EQ((*got).index(), it->second) << "var " << var << " block " << block;
            }
        }
        // Every pair, not only those just touched.
        for (uint32_t var : vars) {
            for (uint32_t block : blocks) {
                auto it = ref.find({var, block});
                PackedOption<Value> got = table.get(Variable(var), Block(block));
                ASSERT_EQ(got.has_value(), it != ref.end()) << "var " << var << " block " << block;
                if (got) {
                    EXPECT_EQ((*got).index(), it->second);
                }
            }
        }
        table.clear();
        for (uint32_t var : vars) {
            for (uint32_t block : blocks) {
                EXPECT_FALSE(table.get(Variable(var), Block(block))) << "after clear: var " << var << " block " << block;
            }
        }
    }
    // Past the highest block given a definition a dense variable reads none.
    table.set(Variable(2), Block(5), Value(9));
    EXPECT_FALSE(table.get(Variable(2), Block(kBlocks - 1)));
    EXPECT_FALSE(table.get(Variable(3), Block(5)));
    EXPECT_EQ(*table.get(Variable(2), Block(5)), Value(9));
}

// Appended blocks are numbered one stride after the last; inserting
// between them afterwards must still order everything.
TEST(FrontendTablesTest, AppendedBlocksStayOrderedWithInsertions) {
    Function f;
    std::vector<Block> blocks;
    for (int i = 0; i < 20; ++i) {
        blocks.push_back(f.dfg.make_block());
        f.layout.append_block(blocks.back());
    }
    for (int i = 0; i < 40; ++i) {
        Block b = f.dfg.make_block();
        f.layout.insert_block(b, blocks[10]);
    }
    Block tail = f.dfg.make_block();
    f.layout.append_block(tail);
    std::vector<Block> order;
    for (Block b : f.layout.blocks()) order.push_back(b);
    ASSERT_EQ(order.size(), 61u);
    for (size_t i = 1; i < order.size(); ++i) {
        EXPECT_TRUE(f.layout.block_before(order[i - 1], order[i])) << i;
        EXPECT_FALSE(f.layout.block_before(order[i], order[i - 1])) << i;
    }
    EXPECT_EQ(order.back(), tail);
    EXPECT_EQ(*f.layout.entry_block(), blocks[0]);
}

// Variables on both sides of kDenseVars, read across diamonds
// in a function of more than kDenseBlocks blocks (so definitions land in
// the dense part, the hashed part, and both for one variable), built
// twice with one context: the result must be what the same computation
// gives in C++.
TEST(FrontendTablesTest, FunctionAcrossTheDenseLimitComputesTheSame) {
    constexpr uint32_t kVars = DefTable::kDenseVars + 8;
    constexpr uint32_t kDiamonds = DefTable::kDenseBlocks / 3 + 200;
    FunctionBuilderContext ctx;
    for (int build = 0; build < 2; ++build) {
        Function f(ExternalName::testcase("dense"), fe_test::i32_signature(1));
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        Value x = b.block_params(entry)[0];
        std::vector<Variable> v;
        for (uint32_t i = 0; i < kVars; ++i) {
            v.push_back(b.declare_var(types::I32));
            b.def_var(v[i], b.ins().iadd_imm(x, i));
        }
        // The reference, for x = 5.
        std::vector<uint32_t> ref(kVars);
        for (uint32_t i = 0; i < kVars; ++i) ref[i] = 5 + i;
        for (uint32_t d = 0; d < kDiamonds; ++d) {
            // Variables near the limit get most of the traffic.
            const uint32_t a = (DefTable::kDenseVars - 4 + d) % kVars, c = (d * 7) % kVars;
            Block then = b.create_block(), orelse = b.create_block(), merge = b.create_block();
            b.ins().brif(b.ins().icmp_imm(IntCC::Slt, x, 0), then, orelse);
            b.seal_block(then);
            b.seal_block(orelse);
            b.switch_to_block(then);
            b.def_var(v[a], b.ins().iconst(types::I32, 0));
            b.ins().jump(merge);
            b.switch_to_block(orelse);
            b.def_var(v[a], b.ins().iadd(b.use_var(v[a]), b.use_var(v[c])));
            b.ins().jump(merge);
            b.seal_block(merge);
            b.switch_to_block(merge);
            ref[a] += ref[c];  // x = 5 takes the else arm
        }
        Value sum = b.use_var(v[0]);
        uint32_t expect = ref[0];
        for (uint32_t i = 1; i < kVars; ++i) {
            sum = b.ins().bxor(sum, b.use_var(v[i]));
            expect ^= ref[i];
        }
        b.ins().return_({sum});
        ASSERT_TRUE(b.finalize().ok());
        ASSERT_GT(f.dfg.num_blocks(), DefTable::kDenseBlocks);
        VerifierErrors errors;
        ASSERT_TRUE(verify_function(f, errors)) << format_verifier_errors(errors);
        Interpreter interp;
        DataValue args[] = {DataValue::i32(5)};
        InterpOutcome out = interp.call(f, args);
        ASSERT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
        EXPECT_EQ(static_cast<uint32_t>(out.values[0].as_unsigned()), expect) << "build " << build;
    }
}

// clear() keeps the dense arrays and only forgets how far they are in
// use: a block defined in an earlier function must read as undefined in
// the next one, also when a definition further on has put the words
// around it back in use.
TEST(FrontendTablesTest, DenseWordsFromTheLastFunctionAreNotSeenAfterClear) {
    DefTable table;
    table.set(Variable(0), Block(100), Value(7));
    table.set(Variable(0), Block(3000), Value(8));
    table.set(Variable(1), Block(5), Value(9));
    table.clear();
    table.set(Variable(0), Block(10), Value(1));
    EXPECT_FALSE(table.get(Variable(0), Block(100)));
    table.set(Variable(0), Block(200), Value(2));  // back in use past 100
    EXPECT_FALSE(table.get(Variable(0), Block(100)));
    EXPECT_FALSE(table.get(Variable(0), Block(3000)));
    table.set(Variable(0), Block(5000), Value(3));  // past 3000
    EXPECT_FALSE(table.get(Variable(0), Block(3000)));
    EXPECT_FALSE(table.get(Variable(1), Block(5)));
    ASSERT_TRUE(table.get(Variable(0), Block(10)));
    EXPECT_EQ((*table.get(Variable(0), Block(200))).index(), 2u);
    EXPECT_EQ((*table.get(Variable(0), Block(5000))).index(), 3u);
}

// The same through the builder: one context, the first function defines
// x in block 4, the second only reads it there (after defining it in a
// later block, so the table is in use past block 4): the read must be an
// undefined read (a zero), not the first function's value.
TEST(FrontendTablesTest, SecondFunctionDoesNotSeeTheFirstFunctionsDefinitions) {
    FunctionBuilderContext ctx;
    for (int build = 0; build < 2; ++build) {
        Function f(ExternalName::testcase("f"), fe_test::i32_signature(1));
        FunctionBuilder b(f, ctx);
        Block entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        Variable x = b.declare_var(types::I32);
        // Blocks 1..4 in a chain; block 4 is a fresh entry-less block in
        // the second build.
        Block prev = entry;
        for (int i = 1; i <= 3; ++i) {
            Block next = b.create_block();
            b.ins().jump(next);
            b.seal_block(next);
            b.switch_to_block(next);
            prev = next;
        }
        (void)prev;
        Block four = b.create_block();
        if (build == 0) {
            b.def_var(x, b.block_params(entry)[0]);
            b.ins().jump(four);
            b.seal_block(four);
            b.switch_to_block(four);
            b.def_var(x, b.ins().iconst(types::I32, 77));
            b.ins().return_({b.use_var(x)});
        } else {
            // Block four has no predecessors: reading x there finds nothing.
            b.ins().return_({b.ins().iconst(types::I32, 1)});
            Block late = b.create_block();
            b.seal_block(four);
            b.switch_to_block(late);
            b.seal_block(late);
            b.def_var(x, b.ins().iconst(types::I32, 5));  // in use past block 4 again
            b.ins().return_({b.use_var(x)});
            b.switch_to_block(four);
            Value v = b.use_var(x);
            b.ins().return_({v});
            ASSERT_EQ(b.undefined_reads().size(), 1u);
            EXPECT_EQ(b.undefined_reads()[0].block, four);
            EXPECT_EQ(b.undefined_reads()[0].zero, v);
        }
        ASSERT_TRUE(b.finalize().ok()) << "build " << build;
        VerifierErrors errors;
        ASSERT_TRUE(verify_function(f, errors)) << format_verifier_errors(errors);
    }
}

// A merge of five predecessors, each bringing its own value of x (the
// first two predecessors live in the block's data, the others in the
// pools): the parameter's arguments must follow the edges, whichever
// path is taken, and a variable none of them defines needs no parameter.
TEST(FrontendTablesTest, MergeOfFivePredecessorsGetsEachEdgesValue) {
    constexpr int kArms = 5;
    FunctionBuilderContext ctx;
    Function f(ExternalName::testcase("five"), fe_test::i32_signature(1));
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    Value sel = b.block_params(entry)[0];
    Variable x = b.declare_var(types::I32), y = b.declare_var(types::I32);
    b.def_var(y, b.ins().iconst(types::I32, 1000));
    Block merge = b.create_block();
    Block test = entry;
    for (int i = 0; i < kArms; ++i) {
        Block arm = b.create_block(), next = b.create_block();
        b.switch_to_block(test);
        b.ins().brif(b.ins().icmp_imm(IntCC::Eq, sel, i), arm, next);
        b.seal_block(arm);
        b.seal_block(next);
        b.switch_to_block(arm);
        b.def_var(x, b.ins().iconst(types::I32, 10 * (i + 1)));
        b.ins().jump(merge);
        test = next;
    }
    b.switch_to_block(test);
    b.ins().return_({b.ins().iconst(types::I32, 0)});
    b.seal_block(merge);
    b.switch_to_block(merge);
    b.ins().return_({b.ins().iadd(b.use_var(x), b.use_var(y))});
    ASSERT_TRUE(b.finalize().ok());
    EXPECT_EQ(b.ssa().num_predecessors(merge), static_cast<uint32_t>(kArms));
    EXPECT_EQ(f.dfg.block_params(merge).size(), 1u);  // x only; y is the entry's
    VerifierErrors errors;
    ASSERT_TRUE(verify_function(f, errors)) << format_verifier_errors(errors);
    Interpreter interp;
    for (int i = 0; i <= kArms; ++i) {
        DataValue args[] = {DataValue::i32(static_cast<uint32_t>(i))};
        InterpOutcome out = interp.call(f, args);
        ASSERT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
        EXPECT_EQ(static_cast<uint32_t>(out.values[0].as_unsigned()), i < kArms ? 10u * (i + 1) + 1000 : 0u);
    }
}

}  // namespace
}  // namespace heron
