// Unit tests for the IR core: entity tables, list pool, DFG, layout, builder.

// GCC 12 reports a false -Warray-bounds inside std::vector::push_back when
// it inlines SecondaryMap's growth into a test that has just constructed
// the map empty (the push_back branch is not taken there). Maps that live in
// objects, as everywhere outside this test, are not affected.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/ir/cursor.h"
#include "codegen/ir/function.h"

namespace heron {
namespace {

TEST(EntityTest, PrimaryMapHandsOutDenseKeys) {
    PrimaryMap<Block, int> m;
    Block a = m.push(10);
    Block b = m.push(20);
    EXPECT_EQ(a.index(), 0u);
    EXPECT_EQ(b.index(), 1u);
    EXPECT_EQ(m[b], 20);
    EXPECT_EQ(m.next_key().index(), 2u);
    EXPECT_EQ(b.to_string(), "block1");
}

TEST(EntityTest, SecondaryMapDefaultsAndGrows) {
    SecondaryMap<Value, int> m(-1);
    const auto& cm = m;
    EXPECT_EQ(cm[Value(1000)], -1);
    EXPECT_EQ(cm.size(), 0u) << "reading through const must not grow";
    m[Value(5)] = 7;
    EXPECT_EQ(m[Value(5)], 7);
    EXPECT_EQ(m[Value(4)], -1);
}

TEST(EntityTest, PackedOptionUsesReservedIndex) {
    PackedOption<Inst> none;
    EXPECT_FALSE(none.has_value());
    PackedOption<Inst> some = Inst(0);
    EXPECT_TRUE(some.has_value());
    EXPECT_EQ(some.value(), Inst(0));
    static_assert(sizeof(PackedOption<Inst>) == 4);
}

// The layout and the analyses return PackedOption; call sites that keep a
// std::optional convert, and the two agree on none and on the key.
TEST(EntityTest, PackedOptionConvertsToStdOptional) {
    const PackedOption<Block> none;
    const PackedOption<Block> some = Block(7);
    const std::optional<Block> from_none = none;
    const std::optional<Block> from_some = some;
    EXPECT_EQ(from_none, std::nullopt);
    EXPECT_EQ(from_some, std::optional<Block>(Block(7)));
    EXPECT_EQ(none.value_or(Block(3)), Block(3));
    EXPECT_EQ(some.value_or(Block(3)), Block(7));
    EXPECT_EQ(some->index(), 7u);
    EXPECT_TRUE(none == std::nullopt);
    EXPECT_TRUE(some == Block(7));
    EXPECT_FALSE(some == none);
}

TEST(LayoutTest, AccessorsReturnNoneAtTheEnds) {
    Layout layout;
    EXPECT_FALSE(layout.entry_block());
    const Block b0(0), b1(1);
    layout.append_block(b0);
    layout.append_block(b1);
    EXPECT_EQ(layout.entry_block(), b0);
    EXPECT_EQ(layout.last_block(), b1);
    EXPECT_EQ(layout.next_block(b0), b1);
    EXPECT_FALSE(layout.next_block(b1));
    EXPECT_FALSE(layout.prev_block(b0));
    EXPECT_FALSE(layout.first_inst(b0)) << "an empty block has no instructions";
    layout.append_inst(Inst(4), b0);
    EXPECT_EQ(layout.inst_block(Inst(4)), b0);
    EXPECT_EQ(layout.first_inst(b0), layout.last_inst(b0));
    EXPECT_FALSE(layout.next_inst(Inst(4)));
}

TEST(EntityTest, ListPoolGrowsRemovesAndRecycles) {
    ListPool<Value> pool;
    EntityList<Value> a, b;
    for (uint32_t i = 0; i < 100; ++i) a.push(Value(i), pool);
    for (uint32_t i = 0; i < 3; ++i) b.push(Value(1000 + i), pool);
    ASSERT_EQ(a.size(pool), 100u);
    for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(a.get(i, pool), Value(i));
    EXPECT_EQ(b.get(2, pool), Value(1002)) << "growing a must not clobber b";
    a.remove(0, pool);
    EXPECT_EQ(a.size(pool), 99u);
    EXPECT_EQ(a.get(0, pool), Value(1));
    size_t words = pool.memory_words();
    a.clear(pool);
    EntityList<Value> c;
    for (uint32_t i = 0; i < 100; ++i) c.push(Value(i), pool);
    // Only the smallest size class (taken by b meanwhile) needs new memory.
    EXPECT_LE(pool.memory_words(), words + 4) << "a freed list's memory is reused";
}

// Growth by one key (push_back) and by a gap (resize) both leave every key
// not written at the default, and the written ones as written.
TEST(EntityTest, SecondaryMapGrowsByOneAndByGaps) {
    SecondaryMap<Inst, int> m(-3);
    for (uint32_t i = 0; i < 100; ++i) m[Inst(i)] = static_cast<int>(i);
    m[Inst(250)] = 250;
    m[Inst(251)] = 251;
    EXPECT_EQ(m.size(), 252u);
    const auto& cm = m;
    for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(cm[Inst(i)], static_cast<int>(i));
    for (uint32_t i = 100; i < 250; ++i) EXPECT_EQ(cm[Inst(i)], -3) << i;
    EXPECT_EQ(cm.get_unchecked(Inst(251)), 251);
    EXPECT_EQ(cm[Inst(252)], -3);
    m.clear();
    EXPECT_EQ(cm[Inst(5)], -3) << "clear forgets the entries";
    m[Inst(0)] = 1;
    EXPECT_EQ(cm[Inst(1)], -3) << "growing again after clear writes defaults";
}

// A cleared pool hands out the words it kept, from the start, and lists
// made after the clear read back exactly (no stale words in them); a copy
// takes only the words in use and stays independent.
TEST(EntityTest, ListPoolKeepsItsWordsAndCopiesTheUsedOnes) {
    ListPool<Value> pool;
    std::vector<EntityList<Value>> lists(50);
    for (uint32_t k = 0; k < lists.size(); ++k) {
        for (uint32_t i = 0; i <= k % 9; ++i) lists[k].push(Value(k * 100 + i), pool);
    }
    const size_t words = pool.memory_words();
    EXPECT_GT(words, 0u);
    pool.clear();
    EXPECT_EQ(pool.memory_words(), 0u);
    EntityList<Value> a, b;
    const Value vals[] = {Value(7), Value(8), Value(9), Value(10), Value(11)};
    a.extend(vals, pool);
    b = EntityList<Value>::from(std::begin(vals), std::begin(vals) + 2, pool);
    ASSERT_EQ(a.size(pool), 5u);
    ASSERT_EQ(b.size(pool), 2u);
    for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(a.get(i, pool), vals[i]);
    EXPECT_EQ(b.as_span(pool)[1], Value(8));
    EXPECT_EQ(pool.memory_words(), 8u + 4u) << "a 5-list takes the 7-class (8 words), a 2-list the 3-class (4)";
    ListPool<Value> copy = pool;
    EXPECT_EQ(copy.memory_words(), pool.memory_words());
    a.set(0, Value(70), pool);
    EXPECT_EQ(a.get(0, copy), Value(7)) << "the copy does not share words";
    a.push(Value(12), copy);
    a.push(Value(13), copy);
    a.push(Value(14), copy);  // the 8th element: a new class in the copy only
    EXPECT_EQ(a.size(copy), 8u);
    EXPECT_EQ(a.get(7, copy), Value(14));
    EXPECT_EQ(b.get(1, copy), Value(8));
    ListPool<Value> assigned;
    assigned = pool;
    EXPECT_EQ(b.get(0, assigned), Value(7));
    EXPECT_TRUE(EntityList<Value>().as_span(pool).empty());
}

TEST(LayoutTest, OrderAndComesBefore) {
    Function f;
    Block b0 = f.dfg.make_block();
    Block b1 = f.dfg.make_block();
    Block b2 = f.dfg.make_block();
    f.layout.append_block(b0);
    f.layout.append_block(b2);
    f.layout.insert_block(b1, b2);
    std::vector<Block> order;
    for (Block b : f.layout.blocks()) order.push_back(b);
    EXPECT_EQ(order, (std::vector<Block>{b0, b1, b2}));
    EXPECT_TRUE(f.layout.block_before(b1, b2));

    FuncCursor cur(f);
    cur.at_bottom(b0);
    Value x = cur.ins().iconst(types::I32, 1);
    Value y = cur.ins().iconst(types::I32, 2);
    Inst ix = f.dfg.value_def(x).inst();
    Inst iy = f.dfg.value_def(y).inst();
    // Insert many instructions before iy: sequence numbers must stay ordered.
    std::vector<Inst> inserted;
    for (int i = 0; i < 200; ++i) {
        cur.at_inst(iy);
        Value v = cur.ins().iconst(types::I32, i);
        inserted.push_back(f.dfg.value_def(v).inst());
    }
    EXPECT_TRUE(f.layout.inst_before(ix, iy));
    for (size_t i = 1; i < inserted.size(); ++i) {
        ASSERT_TRUE(f.layout.inst_before(inserted[i - 1], inserted[i])) << i;
        ASSERT_TRUE(f.layout.inst_before(inserted[i], iy));
    }
    cur.at_bottom(b2);
    Value z = cur.ins().iconst(types::I32, 3);
    EXPECT_TRUE(f.layout.inst_before(iy, f.dfg.value_def(z).inst())) << "across blocks";
    f.layout.remove_inst(ix);
    EXPECT_EQ(f.layout.first_inst(b0), inserted.empty() ? iy : inserted[0]);
}

// block_insts_reversed walks a block from its last instruction to its
// first, after insertions in the middle and a removal, and an empty block
// gives nothing.
TEST(LayoutTest, BlockInstsReversedIsTheForwardOrderBackwards) {
    Function f;
    Block b0 = f.dfg.make_block();
    Block empty = f.dfg.make_block();
    f.layout.append_block(b0);
    f.layout.append_block(empty);
    FuncCursor cur(f);
    cur.at_bottom(b0);
    Value first = cur.ins().iconst(types::I32, 1);
    Value last = cur.ins().iconst(types::I32, 2);
    cur.at_inst(f.dfg.value_def(last).inst());
    for (int i = 0; i < 5; ++i) cur.ins().iconst(types::I32, 10 + i);
    f.layout.remove_inst(f.dfg.value_def(first).inst());
    std::vector<Inst> forward, backward;
    for (Inst i : f.layout.block_insts(b0)) forward.push_back(i);
    for (Inst i : f.layout.block_insts_reversed(b0)) backward.push_back(i);
    ASSERT_EQ(forward.size(), 6u);
    std::reverse(forward.begin(), forward.end());
    EXPECT_EQ(backward, forward);
    EXPECT_EQ(backward.front(), f.dfg.value_def(last).inst());
    for (Inst i : f.layout.block_insts_reversed(empty)) ADD_FAILURE() << "an empty block has no " << i.to_string();
    // insts_before(i): from i's predecessor back to the block's first;
    // insts_after(i): from i's successor on to the block's last.
    const Inst mid = backward[2];
    std::vector<Inst> before, after;
    for (Inst i : f.layout.insts_before(mid)) before.push_back(i);
    for (Inst i : f.layout.insts_after(mid)) after.push_back(i);
    EXPECT_EQ(before, std::vector<Inst>(backward.begin() + 3, backward.end()));
    EXPECT_EQ(after, (std::vector<Inst>{backward[1], backward[0]}));
    for (Inst i : f.layout.insts_after(backward[0])) ADD_FAILURE() << "nothing follows the last, not " << i.to_string();
}

TEST(DfgTest, ResultsParamsAndAliases) {
    Function f;
    f.signature.params.push_back(types::I32);
    Block b0 = f.dfg.make_block();
    f.layout.append_block(b0);
    Value p = f.dfg.append_block_param(b0, types::I32);
    FuncCursor cur(f);
    cur.at_bottom(b0);
    auto [sum, flag] = cur.ins().uadd_overflow(p, p);
    EXPECT_EQ(f.dfg.value_type(sum), types::I32);
    EXPECT_EQ(f.dfg.value_type(flag), types::I8);
    Value c = cur.ins().icmp(IntCC::Slt, p, sum);
    EXPECT_EQ(f.dfg.value_type(c), types::I8);
    Value w = cur.ins().uextend(types::I64, p);
    EXPECT_EQ(f.dfg.value_type(w), types::I64);
    EXPECT_TRUE(f.dfg.value_def(p).is_param());
    EXPECT_EQ(f.dfg.value_def(flag).num, 1u);
    f.dfg.change_to_alias(c, flag);
    EXPECT_EQ(f.dfg.resolve_aliases(c), flag);
    Inst ret = cur.ins().return_({sum});
    EXPECT_TRUE(is_terminator(f.dfg[ret].opcode));
    EXPECT_EQ(f.dfg.inst_variable_args(ret).size(), 1u);
}

// One result lives beside the instruction, two or more in the value-list
// pool; both read back the same way, and the results' definitions name
// their positions.
TEST(DfgTest, SingleAndMultipleResults) {
    Function f;
    DataFlowGraph& dfg = f.dfg;
    InstructionData d;
    d.opcode = Opcode::Iadd;
    Inst none = dfg.make_inst(d);
    EXPECT_TRUE(dfg.inst_results(none).empty());
    EXPECT_FALSE(dfg.has_results(none));
    EXPECT_EQ(dfg.num_results(none), 0u);
    Inst one = dfg.make_inst(d);
    const size_t words = dfg.value_lists.memory_words();
    ASSERT_EQ(dfg.make_inst_results(one, types::I32), 1u);
    EXPECT_EQ(dfg.value_lists.memory_words(), words) << "a single result takes no pool words";
    const Value r = dfg.first_result(one);
    ASSERT_EQ(dfg.inst_results(one).size(), 1u);
    EXPECT_EQ(dfg.inst_results(one)[0], r);
    EXPECT_EQ(dfg.value_type(r), types::I32);
    EXPECT_EQ(dfg.value_def(r).inst(), one);
    EXPECT_TRUE(dfg.inst_results(none).empty()) << "results do not leak to other instructions";
    // A second and third result move them all into the pool, in order.
    Value s = dfg.append_result(one, types::I8);
    Value t = dfg.make_value_placeholder(types::I64);
    dfg.attach_result(one, t);
    auto all = dfg.inst_results(one);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0], r);
    EXPECT_EQ(all[1], s);
    EXPECT_EQ(all[2], t);
    EXPECT_EQ(dfg.first_result(one), r);
    EXPECT_EQ(dfg.value_def(s).num, 1u);
    EXPECT_EQ(dfg.value_def(t).num, 2u);
    EXPECT_EQ(dfg.value_def(t).inst(), one);
    // Cleared, the instruction takes results again from position 0.
    dfg.clear_results(one);
    EXPECT_FALSE(dfg.has_results(one));
    Value u = dfg.append_result(one, types::I16);
    EXPECT_EQ(dfg.value_def(u).num, 0u);
    EXPECT_EQ(dfg.first_result(one), u);
    EXPECT_EQ(dfg.num_results(one), 1u);
    // A copy of the function reads the same results.
    Function g = f;
    EXPECT_EQ(g.dfg.first_result(one), u);
    EXPECT_TRUE(g.dfg.inst_results(none).empty());
}

TEST(DfgTest, BranchDestinationsCarryArguments) {
    Function f;
    Block b0 = f.dfg.make_block();
    Block b1 = f.dfg.make_block();
    f.layout.append_block(b0);
    f.layout.append_block(b1);
    Value a = f.dfg.append_block_param(b0, types::I64);
    f.dfg.append_block_param(b1, types::I64);
    FuncCursor cur(f);
    cur.at_bottom(b0);
    Value k = cur.ins().iconst(types::I64, 5);
    Value args[] = {k};
    Value args2[] = {a};
    Inst br = cur.ins().brif(a, b1, args, b1, args2);
    auto dests = f.dfg.branch_destinations(br);
    ASSERT_EQ(dests.size(), 2u);
    EXPECT_EQ(dests[0].block(f.dfg.value_lists), b1);
    EXPECT_EQ(dests[0].args(f.dfg.value_lists)[0], k);
    EXPECT_EQ(dests[1].args(f.dfg.value_lists)[0], a);
    std::vector<Value> seen;
    f.dfg.for_each_inst_value(br, [&](Value v) { seen.push_back(v); });
    EXPECT_EQ(seen, (std::vector<Value>{a, k, a}));
}

TEST(OpcodeTest, TableDrivesNamesAndFlags) {
    EXPECT_EQ(opcode_name(Opcode::UaddOverflowCin), "uadd_overflow_cin");
    EXPECT_EQ(opcode_from_name("br_table"), Opcode::BrTable);
    EXPECT_FALSE(opcode_from_name("iadd_imm").has_value());
    EXPECT_TRUE(is_terminator(Opcode::ReturnCall));
    EXPECT_FALSE(is_terminator(Opcode::Trapz));
    EXPECT_TRUE(can_trap(Opcode::Udiv));
    EXPECT_FALSE(can_trap(Opcode::Iadd));
    for (unsigned i = 0; i < kNumOpcodes; ++i) {
        auto op = static_cast<Opcode>(i);
        EXPECT_EQ(opcode_from_name(opcode_name(op)), op) << opcode_name(op);
    }
}

TEST(OpcodeTest, TrapCodeNames) {
    EXPECT_EQ(trapcode_name(TrapCode::integer_division_by_zero()), "int_divz");
    EXPECT_EQ(trapcode_from_name("user250")->byte, 250);
    EXPECT_FALSE(trapcode_from_name("user0"));
    EXPECT_FALSE(trapcode_from_name("user251"));
    EXPECT_FALSE(trapcode_from_name("user01"));
    EXPECT_EQ(trapcode_from_name("bad_toint")->byte, 255);
}

TEST(OpcodeTest, CondCodeInverseAndSwap) {
    for (unsigned i = 0; i < kNumIntCC; ++i) {
        auto cc = static_cast<IntCC>(i);
        EXPECT_EQ(intcc_inverse(intcc_inverse(cc)), cc);
        EXPECT_EQ(intcc_swap(intcc_swap(cc)), cc);
        EXPECT_EQ(intcc_from_name(intcc_name(cc)), cc);
    }
    for (unsigned i = 0; i < kNumFloatCC; ++i) {
        auto cc = static_cast<FloatCC>(i);
        EXPECT_EQ(floatcc_inverse(floatcc_inverse(cc)), cc);
        EXPECT_EQ(floatcc_from_name(floatcc_name(cc)), cc);
    }
    EXPECT_EQ(floatcc_inverse(FloatCC::Lt), FloatCC::Uge);
}

}  // namespace
}  // namespace heron
