// Unit tests for the control-flow graph and the dominator tree: small shapes
// checked by hand (diamond, loop, nested loops, unreachable blocks, repeated
// destinations), random graphs checked against a naive dataflow solution,
// and a million-block chain that would overflow any recursive walk.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/ir/cursor.h"
#include "codegen/ir/function.h"

namespace heron {
namespace {

// Builds a function whose block i branches to succs[i] (in order): no
// successor returns, one jumps, two use brif, more use br_table with the
// first as the default. Block 0 is the entry; all blocks are laid out in
// index order.
class GraphFunction {
public:
    explicit GraphFunction(const std::vector<std::vector<uint32_t>>& succs) {
        for (size_t i = 0; i < succs.size(); ++i) blocks.push_back(cur_.insert_block());
        cur_.at_bottom(blocks[0]);
        cond_ = cur_.ins().iconst(types::I32, 1);
        for (size_t i = 0; i < succs.size(); ++i) terminate(blocks[i], succs[i]);
    }

    Function func;
    std::vector<Block> blocks;

private:
    void terminate(Block b, const std::vector<uint32_t>& to) {
        cur_.at_bottom(b);
        if (to.empty()) {
            cur_.ins().return_({});
            return;
        }
        if (to.size() == 1) {
            cur_.ins().jump(blocks[to[0]]);
            return;
        }
        if (to.size() == 2) {
            cur_.ins().brif(cond_, blocks[to[0]], blocks[to[1]]);
            return;
        }
        JumpTableData jt;
        for (uint32_t t : to) jt.all.push_back(func.dfg.block_call(blocks[t], {}));
        cur_.ins().br_table(cond_, func.create_jump_table(std::move(jt)));
    }

    FuncCursor cur_{func};
    Value cond_;
};

std::vector<Block> succ_list(const ControlFlowGraph& cfg, Block b) {
    auto s = cfg.successors(b);
    return {s.begin(), s.end()};
}

std::vector<Block> pred_blocks(const ControlFlowGraph& cfg, Block b) {
    std::vector<Block> out;
    for (const BlockPredecessor& p : cfg.predecessors(b)) out.push_back(p.block);
    return out;
}

TEST(CfgTest, DiamondSuccessorsAndPredecessors) {
    // 0 -> 1, 2 -> 3
    GraphFunction g({{1, 2}, {3}, {3}, {}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    ASSERT_TRUE(cfg.is_valid());
    EXPECT_EQ(succ_list(cfg, b[0]), (std::vector<Block>{b[1], b[2]}));
    EXPECT_EQ(succ_list(cfg, b[3]), std::vector<Block>{});
    EXPECT_EQ(pred_blocks(cfg, b[3]), (std::vector<Block>{b[1], b[2]}));
    EXPECT_EQ(cfg.predecessors(b[1])[0].inst, *g.func.layout.last_inst(b[0]));
    EXPECT_EQ(cfg.num_predecessors(b[0]), 0u);
    cfg.clear();
    EXPECT_FALSE(cfg.is_valid());
    EXPECT_TRUE(cfg.successors(b[0]).empty());
}

TEST(CfgTest, RepeatedDestinationsCollapse) {
    // brif to block1 twice, br_table naming block2 three times.
    GraphFunction g({{1, 1}, {2, 3, 2, 2}, {}, {}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    EXPECT_EQ(succ_list(cfg, b[0]), std::vector<Block>{b[1]});
    EXPECT_EQ(cfg.num_predecessors(b[1]), 1u);
    EXPECT_EQ(succ_list(cfg, b[1]), (std::vector<Block>{b[2], b[3]})) << "first appearance order";
    EXPECT_EQ(pred_blocks(cfg, b[2]), std::vector<Block>{b[1]});
}

TEST(CfgTest, RecomputeReusesTheObject) {
    GraphFunction a({{1}, {}});
    GraphFunction b({{2}, {0}, {1}});
    ControlFlowGraph cfg(a.func);
    cfg.compute(b.func);
    EXPECT_EQ(succ_list(cfg, b.blocks[0]), std::vector<Block>{b.blocks[2]});
    EXPECT_EQ(pred_blocks(cfg, b.blocks[0]), std::vector<Block>{b.blocks[1]});
    EXPECT_TRUE(cfg.successors(Block(1000)).empty()) << "unknown blocks have no edges";
}

TEST(CfgTest, DestinationOutsideTheLayoutIsLeftOut) {
    Function f;
    FuncCursor cur(f);
    Block b0 = cur.insert_block();
    Block stray = f.dfg.make_block();  // never inserted
    cur.at_bottom(b0);
    cur.ins().jump(stray);
    ControlFlowGraph cfg(f);
    EXPECT_TRUE(cfg.successors(b0).empty());
    EXPECT_TRUE(cfg.predecessors(stray).empty());
}

TEST(DomTreeTest, Diamond) {
    GraphFunction g({{1, 2}, {3}, {3}, {}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    DominatorTree dt(g.func, cfg);
    ASSERT_TRUE(dt.is_valid());
    EXPECT_EQ(dt.idom(b[0]), std::nullopt);
    EXPECT_EQ(dt.idom(b[1]), b[0]);
    EXPECT_EQ(dt.idom(b[2]), b[0]);
    EXPECT_EQ(dt.idom(b[3]), b[0]);
    EXPECT_TRUE(dt.dominates(b[0], b[3]));
    EXPECT_TRUE(dt.dominates(b[3], b[3]));
    EXPECT_FALSE(dt.dominates(b[1], b[3]));
    EXPECT_FALSE(dt.dominates(b[3], b[0]));
    EXPECT_FALSE(dt.strictly_dominates(b[3], b[3]));
    auto rpo = dt.reverse_postorder();
    ASSERT_EQ(rpo.size(), 4u);
    EXPECT_EQ(rpo[0], b[0]);
    EXPECT_EQ(rpo[3], b[3]);
    EXPECT_EQ(dt.rpo_number(b[3]), 3u);
    auto kids = dt.children(b[0]);
    EXPECT_EQ(std::vector<Block>(kids.begin(), kids.end()), (std::vector<Block>{b[1], b[3], b[2]}))
        << "children in CFG depth-first preorder";
}

TEST(DomTreeTest, LoopWithExit) {
    // 0 -> 1 (header) -> 2 (body) -> 1; 1 -> 3 (exit)
    GraphFunction g({{1}, {2, 3}, {1}, {}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    DominatorTree dt(g.func, cfg);
    EXPECT_EQ(dt.idom(b[1]), b[0]);
    EXPECT_EQ(dt.idom(b[2]), b[1]);
    EXPECT_EQ(dt.idom(b[3]), b[1]);
    EXPECT_TRUE(dt.dominates(b[1], b[2]));
    EXPECT_FALSE(dt.dominates(b[2], b[1])) << "the back edge source does not dominate the header";
    EXPECT_EQ(pred_blocks(cfg, b[1]), (std::vector<Block>{b[0], b[2]}));
}

TEST(DomTreeTest, NestedLoops) {
    // 0 -> 1 (outer header) -> 2 (inner header) -> 3 (inner body) -> 2
    // 2 -> 4 (inner exit) -> 1 ; 1 -> 5 (outer exit)
    GraphFunction g({{1}, {2, 5}, {3, 4}, {2}, {1}, {}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    DominatorTree dt(g.func, cfg);
    EXPECT_EQ(dt.idom(b[2]), b[1]);
    EXPECT_EQ(dt.idom(b[3]), b[2]);
    EXPECT_EQ(dt.idom(b[4]), b[2]);
    EXPECT_EQ(dt.idom(b[5]), b[1]);
    EXPECT_TRUE(dt.dominates(b[1], b[4]));
    EXPECT_FALSE(dt.dominates(b[3], b[4]));
}

TEST(DomTreeTest, IrreducibleEntriesMeetAtTheBranch) {
    // 0 branches into both 1 and 2, which jump to each other.
    GraphFunction g({{1, 2}, {2}, {1}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    DominatorTree dt(g.func, cfg);
    EXPECT_EQ(dt.idom(b[1]), b[0]);
    EXPECT_EQ(dt.idom(b[2]), b[0]);
}

TEST(DomTreeTest, UnreachableBlocksAreOutsideTheTree) {
    // 2 and 3 are unreachable; 3 jumps into reachable 1, 2 into 3.
    GraphFunction g({{1}, {}, {3}, {1}});
    const auto& b = g.blocks;
    ControlFlowGraph cfg(g.func);
    DominatorTree dt(g.func, cfg);
    EXPECT_TRUE(dt.is_reachable(b[1]));
    EXPECT_FALSE(dt.is_reachable(b[2]));
    EXPECT_FALSE(dt.is_reachable(b[3]));
    EXPECT_EQ(dt.idom(b[1]), b[0]) << "the unreachable predecessor does not count";
    EXPECT_EQ(dt.idom(b[3]), std::nullopt);
    EXPECT_FALSE(dt.dominates(b[3], b[3]));
    EXPECT_FALSE(dt.dominates(b[0], b[3]));
    EXPECT_FALSE(dt.dominates(b[3], b[1]));
    EXPECT_EQ(dt.reverse_postorder().size(), 2u);
    EXPECT_FALSE(dt.is_reachable(Block(12345)));
}

TEST(DomTreeTest, EmptyFunction) {
    Function f;
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    EXPECT_TRUE(dt.is_valid());
    EXPECT_TRUE(dt.reverse_postorder().empty());
}

TEST(DomTreeTest, InstructionAndValueDominance) {
    Function f;
    FuncCursor cur(f);
    Block b0 = cur.insert_block();
    Block b1 = cur.insert_block();
    Block b2 = cur.insert_block();
    Value p = f.dfg.append_block_param(b0, types::I32);
    Value q = f.dfg.append_block_param(b1, types::I32);
    cur.at_bottom(b0);
    Value x = cur.ins().iadd(p, p);
    Value y = cur.ins().iadd(x, p);
    Value args[] = {y};
    Inst br = cur.ins().jump(b1, args);
    cur.at_bottom(b1);
    Value z = cur.ins().iadd(q, q);
    Inst ret = cur.ins().return_({z});
    cur.at_bottom(b2);
    Inst dead = cur.ins().return_({});

    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    const Layout& l = f.layout;
    const DataFlowGraph& dfg = f.dfg;
    Inst ix = dfg.value_def(x).inst();
    Inst iy = dfg.value_def(y).inst();
    Inst iz = dfg.value_def(z).inst();
    EXPECT_TRUE(dt.dominates(ix, iy, l));
    EXPECT_TRUE(dt.dominates(ix, ix, l)) << "reflexive";
    EXPECT_FALSE(dt.dominates(iy, ix, l));
    EXPECT_TRUE(dt.dominates(iy, ret, l)) << "across blocks";
    EXPECT_FALSE(dt.dominates(ret, br, l));
    EXPECT_FALSE(dt.dominates(ix, dead, l)) << "unreachable";
    EXPECT_FALSE(dt.dominates(dead, dead, l)) << "unreachable, not even itself";

    EXPECT_TRUE(dt.dominates(dfg.value_def(x), iy, l));
    EXPECT_FALSE(dt.dominates(dfg.value_def(y), iy, l)) << "a result is not available to its own instruction";
    EXPECT_FALSE(dt.dominates(dfg.value_def(y), ix, l));
    EXPECT_TRUE(dt.dominates(dfg.value_def(q), iz, l)) << "a parameter is available in its own block";
    EXPECT_FALSE(dt.dominates(dfg.value_def(q), br, l));
    EXPECT_TRUE(dt.dominates(dfg.value_def(p), ret, l));
}

// Dominator sets by the textbook dataflow fixpoint, for cross-checking.
std::vector<std::vector<bool>> naive_dominators(const std::vector<std::vector<uint32_t>>& succs) {
    const size_t n = succs.size();
    std::vector<std::vector<uint32_t>> preds(n);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t s : succs[i]) preds[s].push_back(i);
    std::vector<bool> reach(n, false);
    std::vector<uint32_t> work{0};
    reach[0] = true;
    while (!work.empty()) {
        uint32_t b = work.back();
        work.pop_back();
        for (uint32_t s : succs[b])
            if (!reach[s]) reach[s] = true, work.push_back(s);
    }
    std::vector<std::vector<bool>> dom(n, std::vector<bool>(n, true));
    dom[0].assign(n, false);
    dom[0][0] = true;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t b = 1; b < n; ++b) {
            if (!reach[b]) continue;
            std::vector<bool> d(n, true);
            for (uint32_t p : preds[b]) {
                if (!reach[p]) continue;
                for (size_t k = 0; k < n; ++k) d[k] = d[k] && dom[p][k];
            }
            d[b] = true;
            if (d != dom[b]) dom[b] = d, changed = true;
        }
    }
    for (uint32_t b = 0; b < n; ++b)
        if (!reach[b]) dom[b].assign(n, false);
    return dom;  // dom[b][a]: a dominates b
}

// A tree computed again and again (it keeps its arrays between functions,
// growing and shrinking) gives what a fresh one gives.
void expect_same_tree(const GraphFunction& g, const DominatorTree& reused, const DominatorTree& fresh, int round) {
    ASSERT_TRUE(std::equal(reused.reverse_postorder().begin(), reused.reverse_postorder().end(),
                           fresh.reverse_postorder().begin(), fresh.reverse_postorder().end()))
        << "round " << round;
    for (Block b : g.blocks) {
        ASSERT_EQ(reused.is_reachable(b), fresh.is_reachable(b)) << "round " << round;
        ASSERT_EQ(reused.idom(b), fresh.idom(b)) << "round " << round;
        const auto kr = reused.children(b), kf = fresh.children(b);
        ASSERT_TRUE(std::equal(kr.begin(), kr.end(), kf.begin(), kf.end())) << "round " << round;
        if (!fresh.is_reachable(b)) continue;
        ASSERT_EQ(reused.rpo_number(b), fresh.rpo_number(b)) << "round " << round;
        ASSERT_EQ(reused.dom_preorder(b), fresh.dom_preorder(b)) << "round " << round;
        ASSERT_EQ(reused.dom_postorder(b), fresh.dom_postorder(b)) << "round " << round;
    }
}

TEST(DomTreeTest, RandomGraphsMatchTheNaiveFixpoint) {
    std::mt19937 rng(12345);
    DominatorTree reused;
    for (int round = 0; round < 400; ++round) {
        if (round % 50 == 25) {  // no blocks at all in between
            Function empty;
            ControlFlowGraph ecfg(empty);
            reused.compute(empty, ecfg);
            ASSERT_TRUE(reused.reverse_postorder().empty());
        }
        // Mostly small graphs; every tenth one large enough for long
        // path compressions.
        const uint32_t n = 1 + rng() % (round % 10 == 0 ? 120 : 24);
        std::vector<std::vector<uint32_t>> succs(n);
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t k = rng() % 4;
            for (uint32_t j = 0; j < k; ++j) succs[i].push_back(rng() % n);
        }
        GraphFunction g(succs);
        ControlFlowGraph cfg(g.func);
        DominatorTree dt(g.func, cfg);
        reused.compute(g.func, cfg);
        expect_same_tree(g, reused, dt, round);
        auto dom = naive_dominators(succs);
        for (uint32_t a = 0; a < n; ++a) {
            for (uint32_t b = 0; b < n; ++b) {
                ASSERT_EQ(dt.dominates(g.blocks[a], g.blocks[b]), dom[b][a])
                    << "round " << round << ": block" << a << " dom block" << b;
            }
            // idom(b) is the strict dominator that every other strict
            // dominator dominates.
            auto id = dt.idom(g.blocks[a]);
            if (!id) {
                EXPECT_TRUE(a == 0 || !dt.is_reachable(g.blocks[a]));
                continue;
            }
            EXPECT_TRUE(dt.strictly_dominates(*id, g.blocks[a]));
            for (uint32_t c = 0; c < n; ++c) {
                if (c == a || !dom[a][c]) continue;
                EXPECT_TRUE(dt.dominates(g.blocks[c], *id));
            }
        }
    }
}

TEST(DomTreeTest, MillionBlockChainNeedsNoRecursion) {
    constexpr uint32_t kBlocks = 1'000'000;
    Function f;
    FuncCursor cur(f);
    std::vector<Block> blocks;
    blocks.reserve(kBlocks);
    for (uint32_t i = 0; i < kBlocks; ++i) blocks.push_back(cur.insert_block());
    for (uint32_t i = 0; i + 1 < kBlocks; ++i) cur.at_bottom(blocks[i]).ins().jump(blocks[i + 1]);
    cur.at_bottom(blocks.back()).ins().return_({});

    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    EXPECT_EQ(dt.reverse_postorder().size(), kBlocks);
    EXPECT_EQ(dt.idom(blocks.back()), blocks[kBlocks - 2]);
    EXPECT_TRUE(dt.dominates(blocks[0], blocks.back()));
    EXPECT_TRUE(dt.dominates(blocks[kBlocks / 2], blocks[kBlocks / 2 + 7]));
    EXPECT_FALSE(dt.dominates(blocks.back(), blocks[0]));

    // And a recompute over the same memory, reversed into a long loop.
    cur.at_bottom(blocks.back());
    f.layout.remove_inst(*f.layout.last_inst(blocks.back()));
    cur.ins().jump(blocks[1]);
    cfg.compute(f);
    dt.compute(f, cfg);
    EXPECT_EQ(dt.idom(blocks[1]), blocks[0]);
    EXPECT_TRUE(dt.dominates(blocks[1], blocks.back()));
}

}  // namespace
}  // namespace heron
