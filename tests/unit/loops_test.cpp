// Unit tests for LoopAnalysis: random graphs checked against a naive
// computation from the definitions (dominator sets by fixpoint, back edges,
// reducibility as "acyclic without back edges", natural loops by backward
// search), plus deep nests and long chains that would overflow any
// recursive walk.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/cursor.h"
#include "codegen/ir/function.h"

namespace heron {
namespace {

using Succs = std::vector<std::vector<uint32_t>>;

// Block i branches to succs[i]: return, jump, brif, or br_table.
Function graph_function(const Succs& succs, std::vector<Block>& blocks) {
    Function func;
    FuncCursor cur(func);
    blocks.clear();
    for (size_t i = 0; i < succs.size(); ++i) blocks.push_back(cur.insert_block());
    cur.at_bottom(blocks[0]);
    Value cond = cur.ins().iconst(types::I32, 1);
    for (size_t i = 0; i < succs.size(); ++i) {
        cur.at_bottom(blocks[i]);
        const auto& to = succs[i];
        if (to.empty()) {
            cur.ins().return_({});
        } else if (to.size() == 1) {
            cur.ins().jump(blocks[to[0]]);
        } else if (to.size() == 2) {
            cur.ins().brif(cond, blocks[to[0]], blocks[to[1]]);
        } else {
            JumpTableData jt;
            for (uint32_t t : to) jt.all.push_back(func.dfg.block_call(blocks[t], {}));
            cur.ins().br_table(cond, func.create_jump_table(std::move(jt)));
        }
    }
    return func;
}

struct Analyses {
    ControlFlowGraph cfg;
    DominatorTree dt;
    LoopAnalysis loops;
    std::optional<LoopError> error;

    explicit Analyses(const Function& f) {
        cfg.compute(f);
        dt.compute(f, cfg);
        error = loops.compute(f, cfg, dt);
    }
};

// --- the naive reference ------------------------------------------------------

struct Naive {
    uint32_t n;
    const Succs& succs;
    std::vector<bool> reachable;
    std::vector<std::vector<bool>> dom;  // dom[a][b]: a dominates b
    bool reducible = true;
    // header -> body
    std::vector<std::pair<uint32_t, std::set<uint32_t>>> loops;

    explicit Naive(const Succs& s) : n(static_cast<uint32_t>(s.size())), succs(s) {
        reach();
        dominators();
        check_reducible();
        if (reducible) natural_loops();
    }

    void reach() {
        reachable.assign(n, false);
        std::vector<uint32_t> work{0};
        reachable[0] = true;
        while (!work.empty()) {
            uint32_t b = work.back();
            work.pop_back();
            for (uint32_t s : succs[b]) {
                if (!reachable[s]) {
                    reachable[s] = true;
                    work.push_back(s);
                }
            }
        }
    }
    void dominators() {
        // dom[a][b] by the fixpoint Dom(b) = {b} + intersection over preds.
        std::vector<std::vector<bool>> d(n, std::vector<bool>(n, true));  // d[b][a]: a in Dom(b)
        d[0].assign(n, false);
        d[0][0] = true;
        for (bool changed = true; changed;) {
            changed = false;
            for (uint32_t b = 1; b < n; ++b) {
                if (!reachable[b]) continue;
                std::vector<bool> meet(n, true);
                for (uint32_t p = 0; p < n; ++p) {
                    if (!reachable[p]) continue;
                    if (std::find(succs[p].begin(), succs[p].end(), b) == succs[p].end()) continue;
                    for (uint32_t a = 0; a < n; ++a) meet[a] = meet[a] && d[p][a];
                }
                meet[b] = true;
                if (meet != d[b]) {
                    d[b] = meet;
                    changed = true;
                }
            }
        }
        dom.assign(n, std::vector<bool>(n, false));
        for (uint32_t b = 0; b < n; ++b) {
            for (uint32_t a = 0; a < n; ++a) dom[a][b] = reachable[a] && reachable[b] && d[b][a];
        }
    }
    bool is_back_edge(uint32_t t, uint32_t h) const { return dom[h][t]; }
    void check_reducible() {
        // Kahn's algorithm on the reachable graph without back edges.
        std::vector<uint32_t> indeg(n, 0);
        for (uint32_t b = 0; b < n; ++b) {
            if (!reachable[b]) continue;
            for (uint32_t s : std::set<uint32_t>(succs[b].begin(), succs[b].end()))
                if (!is_back_edge(b, s)) ++indeg[s];
        }
        std::vector<uint32_t> work;
        uint32_t seen = 0, total = 0;
        for (uint32_t b = 0; b < n; ++b) {
            if (!reachable[b]) continue;
            ++total;
            if (indeg[b] == 0) work.push_back(b);
        }
        while (!work.empty()) {
            uint32_t b = work.back();
            work.pop_back();
            ++seen;
            for (uint32_t s : std::set<uint32_t>(succs[b].begin(), succs[b].end())) {
                if (!is_back_edge(b, s) && --indeg[s] == 0) work.push_back(s);
            }
        }
        reducible = seen == total;
    }
    void natural_loops() {
        for (uint32_t h = 0; h < n; ++h) {
            std::set<uint32_t> body{h};
            std::vector<uint32_t> work;
            for (uint32_t t = 0; t < n; ++t) {
                if (!reachable[t]) continue;
                if (std::find(succs[t].begin(), succs[t].end(), h) != succs[t].end() && is_back_edge(t, h))
                    work.push_back(t);
            }
            if (work.empty()) continue;
            while (!work.empty()) {
                uint32_t x = work.back();
                work.pop_back();
                if (!body.insert(x).second) continue;
                for (uint32_t p = 0; p < n; ++p) {
                    if (reachable[p] && std::find(succs[p].begin(), succs[p].end(), x) != succs[p].end())
                        work.push_back(p);
                }
            }
            loops.push_back({h, body});
        }
    }
};

std::set<uint32_t> index_set(std::span<const Block> blocks) {
    std::set<uint32_t> out;
    for (Block b : blocks) out.insert(b.index());
    return out;
}

// Random graph: mostly forward edges, some backward ones; block 0 is the
// entry and is never a target.
Succs random_graph(std::mt19937& rng, uint32_t n) {
    Succs succs(n);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t k = rng() % 4;
        if (i + 1 == n) k = std::min<uint32_t>(k, 1);
        for (uint32_t j = 0; j < k; ++j) {
            uint32_t to;
            if (rng() % 4 == 0 || i + 1 >= n) {
                to = 1 + rng() % std::max<uint32_t>(i, 1);  // backward (or self)
                if (to >= n) to = n - 1;
            } else {
                to = i + 1 + rng() % (n - i - 1);
            }
            succs[i].push_back(to);
        }
    }
    return succs;
}

TEST(LoopAnalysisTest, RandomGraphsMatchTheDefinitions) {
    std::mt19937 rng(20261129);
    uint32_t reducible = 0, irreducible = 0, with_loops = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        const uint32_t n = 2 + rng() % 18;
        Succs succs = random_graph(rng, n);
        std::vector<Block> blocks;
        Function f = graph_function(succs, blocks);
        Analyses a(f);
        Naive naive(succs);
        ASSERT_EQ(naive.reducible, !a.error) << "iteration " << iter;
        if (a.error) {
            ++irreducible;
            // The named edge exists, retreats, and its target does not
            // dominate its source.
            const uint32_t t = a.error->from.index(), h = a.error->to.index();
            ASSERT_NE(std::find(succs[t].begin(), succs[t].end(), h), succs[t].end());
            EXPECT_FALSE(naive.dom[h][t]);
            EXPECT_LE(a.dt.rpo_number(a.error->to), a.dt.rpo_number(a.error->from));
            EXPECT_EQ(a.error->message, "irreducible control flow: edge " + a.error->from.to_string() + " -> " +
                                            a.error->to.to_string());
            EXPECT_FALSE(a.loops.is_valid());
            continue;
        }
        ++reducible;
        ASSERT_EQ(a.loops.num_loops(), naive.loops.size()) << "iteration " << iter;
        with_loops += !naive.loops.empty();
        for (const auto& [h, body] : naive.loops) {
            auto l = a.loops.loop_of_header(blocks[h]);
            ASSERT_TRUE(l.has_value()) << "iteration " << iter << " header " << h;
            EXPECT_EQ(index_set(a.loops.blocks(*l)), body) << "iteration " << iter;
            EXPECT_EQ(a.loops.blocks(*l).size(), body.size());
            EXPECT_EQ(a.loops.blocks(*l)[0], blocks[h]);
            // Parent: the smallest other natural loop containing this one.
            std::optional<uint32_t> parent;
            size_t parent_size = SIZE_MAX;
            uint32_t depth = 1;
            for (const auto& [h2, body2] : naive.loops) {
                if (h2 == h || !body2.count(h)) continue;
                ++depth;
                if (body2.size() < parent_size) {
                    parent = h2;
                    parent_size = body2.size();
                }
            }
            auto p = a.loops.parent(*l);
            ASSERT_EQ(p.has_value(), parent.has_value());
            if (p) {
                EXPECT_EQ(a.loops.header(*p).index(), *parent);
            }
            EXPECT_EQ(a.loops.loop_depth(*l), depth);
            // Latches, exits, entries.
            std::set<uint32_t> latches, exits, entries;
            for (uint32_t b = 0; b < n; ++b) {
                if (!naive.reachable[b]) continue;
                for (uint32_t s : succs[b]) {
                    if (s == h && body.count(b)) latches.insert(b);
                    if (s == h && !body.count(b)) entries.insert(b);
                    if (body.count(b) && !body.count(s)) exits.insert(s);
                }
            }
            EXPECT_EQ(index_set(a.loops.latches(*l)), latches);
            EXPECT_EQ(index_set(a.loops.exit_blocks(*l)), exits);
            std::set<uint32_t> entry_set;
            for (const LoopEdge& e : a.loops.entries(*l)) entry_set.insert(e.from.index());
            EXPECT_EQ(entry_set, entries);
            for (const LoopEdge& e : a.loops.exit_edges(*l)) {
                EXPECT_TRUE(body.count(e.from.index()));
                EXPECT_FALSE(body.count(e.to.index()));
                EXPECT_EQ(e.inst, *f.layout.last_inst(e.from));
            }
            for (uint32_t b = 0; b < n; ++b) EXPECT_EQ(a.loops.contains(*l, blocks[b]), body.count(b) > 0);
            std::set<uint32_t> own;
            for (uint32_t b = 0; b < n; ++b) {
                if (a.loops.innermost_loop(blocks[b]) == l) own.insert(b);
            }
            EXPECT_EQ(index_set(a.loops.own_blocks(*l)), own);
            EXPECT_EQ(a.loops.own_blocks(*l)[0], blocks[h]);
        }
        // Depth per block: how many natural loops contain it.
        for (uint32_t b = 0; b < n; ++b) {
            uint32_t depth = 0;
            for (const auto& lp : naive.loops) depth += lp.second.count(b) ? 1 : 0;
            EXPECT_EQ(a.loops.depth(blocks[b]), depth) << "iteration " << iter << " block " << b;
        }
        // Preorder numbering: a parent comes before its children, and
        // children() agrees with parent().
        for (Loop l : a.loops.loops()) {
            if (auto p = a.loops.parent(l)) {
                EXPECT_LT(p->index(), l.index());
            }
            for (Loop c : a.loops.children(l)) EXPECT_EQ(a.loops.parent(c), std::optional<Loop>(l));
        }
    }
    // The generator must exercise both outcomes and real nests.
    EXPECT_GT(reducible, 500u);
    EXPECT_GT(irreducible, 300u);
    EXPECT_GT(with_loops, 300u);
}

TEST(LoopAnalysisTest, PreheaderOnlyForASingleJumpingEntry) {
    std::vector<Block> b;
    // 0 -> 1 -> 2 <-> 3, 2 -> 4: block1 is the preheader of the loop at 2.
    Function f = graph_function({{1}, {2}, {3, 4}, {2}, {}}, b);
    Analyses a(f);
    ASSERT_FALSE(a.error);
    ASSERT_EQ(a.loops.num_loops(), 1u);
    EXPECT_EQ(a.loops.preheader(Loop(0)), std::optional<Block>(b[1]));
    // 0 -> {1, 2}: the entering block also branches elsewhere.
    Function g = graph_function({{1, 2}, {1, 2}, {}}, b);
    Analyses c(g);
    ASSERT_FALSE(c.error);
    ASSERT_EQ(c.loops.num_loops(), 1u);
    EXPECT_EQ(c.loops.preheader(Loop(0)), std::nullopt);
}

TEST(LoopAnalysisTest, DeepNestNeedsNoRecursion) {
    // h0 -> h1 -> ... -> h(d-1) -> t(d-1) -> ... -> t0 -> exit, and each
    // t(i) also branches back to h(i).
    const uint32_t d = 50000;
    Succs succs(2 * d + 1);
    for (uint32_t i = 0; i + 1 < d; ++i) succs[i] = {i + 1};
    succs[d - 1] = {d + d - 1};  // h(d-1) -> t(d-1)
    for (uint32_t i = 0; i < d; ++i) {
        const uint32_t t = d + i;
        succs[t] = {i, i == 0 ? 2 * d : t - 1};
    }
    // Block 0 is the entry and may not be a branch target: shift everything
    // by one behind a fresh entry block.
    Succs shifted(succs.size() + 1);
    shifted[0] = {1};
    for (size_t i = 0; i < succs.size(); ++i) {
        for (uint32_t s : succs[i]) shifted[i + 1].push_back(s + 1);
    }
    std::vector<Block> b;
    Function f = graph_function(shifted, b);
    Analyses a(f);
    ASSERT_FALSE(a.error);
    ASSERT_EQ(a.loops.num_loops(), d);
    EXPECT_EQ(a.loops.depth(b[d]), d);        // h(d-1)
    EXPECT_EQ(a.loops.depth(b[2 * d]), d);    // t(d-1)
    EXPECT_EQ(a.loops.depth(b[d + 1]), 1u);   // t0
    EXPECT_EQ(a.loops.depth(b[2 * d + 1]), 0u);
    EXPECT_EQ(a.loops.top_level().size(), 1u);
    Loop outer = a.loops.top_level()[0];
    EXPECT_EQ(a.loops.blocks(outer).size(), 2 * d);
    EXPECT_EQ(a.loops.exit_blocks(outer).size(), 1u);
}

TEST(LoopAnalysisTest, RecomputeAndClear) {
    std::vector<Block> b;
    Function f = graph_function({{1}, {1, 2}, {}}, b);
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    ASSERT_FALSE(loops.compute(f, cfg, dt));
    EXPECT_EQ(loops.num_loops(), 1u);
    ASSERT_FALSE(loops.compute(f, cfg, dt));
    EXPECT_EQ(loops.num_loops(), 1u);
    EXPECT_EQ(loops.depth(b[1]), 1u);
    loops.clear();
    EXPECT_FALSE(loops.is_valid());
    EXPECT_EQ(loops.num_loops(), 0u);
    EXPECT_EQ(loops.depth(b[1]), 0u);
}

}  // namespace
}  // namespace heron
