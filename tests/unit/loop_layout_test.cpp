// The loop-aware block layout (codegen/machinst/block_order.h), checked on
// the machine code of both ISAs: a loop's blocks are contiguous, a `while`
// loop's exit test sits at the bottom, and one iteration of a simple loop
// runs exactly one conditional branch and no unconditional jump.
//
// The code is disassembled (tools/disasm_*) and cut at the block labels;
// branches are counted by mnemonic.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/context.h"
#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/parser.h"
#include "codegen/machinst/block_order.h"
#include "codegen/machinst/isa.h"
#include "disasm_test_util.h"

namespace heron {
namespace {

using Line = testing::AsmLine;
using Listing = testing::AsmListing;

Listing compile(const std::string& isa_name, std::string_view text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].format("text"));
    if (fs.size() != 1) return {};
    CompileOptions opts;
    opts.check_regalloc = true;
    Context ctx(isa_by_name(isa_name), opts);
    CompiledCode code;
    const std::string err = error_text(ctx.compile(*fs[0], code));
    EXPECT_EQ(err, "");
    return testing::disassemble_listing(isa_name, code);
}

bool is_unconditional_jump(const std::string& isa, const std::string& t) {
    return isa == "aarch64" ? t.rfind("b ", 0) == 0 : t.rfind("jmp ", 0) == 0;
}

bool is_conditional_branch(const std::string& isa, const std::string& t) {
    if (isa == "aarch64") {
        for (const char* m : {"b.", "cbz ", "cbnz ", "tbz ", "tbnz "}) {
            if (t.rfind(m, 0) == 0) return true;
        }
        return false;
    }
    return t.size() > 1 && t[0] == 'j' && t.rfind("jmp ", 0) != 0;
}

struct LoopCode {
    uint32_t conditional = 0, unconditional = 0;
};

/// Checks that the blocks `loop` are contiguous in the code with `last`
/// at the bottom, and counts the branches in their code.
LoopCode check_loop(const std::string& isa, const Listing& l, const std::set<std::string>& loop,
                    const std::string& last) {
    LoopCode c;
    std::vector<std::string> seen;
    for (const std::string& b : l.block_order) {
        if (loop.count(b)) {
            seen.push_back(b);
        } else if (!seen.empty() && seen.size() < loop.size()) {
            ADD_FAILURE() << isa << ": " << b << " splits the loop";
        }
    }
    EXPECT_EQ(seen.size(), loop.size()) << isa;
    if (!seen.empty()) {
        EXPECT_EQ(seen.back(), last) << isa << ": the exit test is not at the bottom";
    }
    for (const Line& line : l.lines) {
        if (!loop.count(line.block)) continue;
        c.conditional += is_conditional_branch(isa, line.text);
        c.unconditional += is_unconditional_jump(isa, line.text);
    }
    return c;
}

const char* const kIsas[] = {"x86_64", "aarch64"};

// A `while` loop: header block1 tests and exits, block2 is the body and
// latch. Rotated: block2, then block1 (compare, branch back to block2).
constexpr const char* kWhile = R"(
function %sum(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1, v1)
block1(v2: i64, v3: i64):
    v4 = icmp slt v2, v0
    brif v4, block2, block3
block2:
    v5 = iadd v3, v2
    v7 = iconst.i64 1
    v6 = iadd v2, v7
    jump block1(v6, v5)
block3:
    return v3
})";

TEST(LoopLayout, WhileLoopRunsOneConditionalBranchPerIteration) {
    for (const char* isa : kIsas) {
        Listing l = compile(isa, kWhile);
        LoopCode c = check_loop(isa, l, {"block1", "block2"}, "block1");
        EXPECT_EQ(c.conditional, 1u) << isa;
        EXPECT_EQ(c.unconditional, 0u) << isa;
        // The entry jumps into the test at the bottom: the one jump left.
        uint32_t jumps = 0;
        for (const Line& line : l.lines) jumps += is_unconditional_jump(isa, line.text);
        EXPECT_EQ(jumps, 1u) << isa;
    }
}

// The same loop with the branch the other way round (exit when true).
TEST(LoopLayout, ExitOnTrueIsRotatedToo) {
    std::string text = kWhile;
    text.replace(text.find("icmp slt v2, v0"), 15, "icmp sge v2, v0");
    text.replace(text.find("brif v4, block2, block3"), 23, "brif v4, block3, block2");
    for (const char* isa : kIsas) {
        LoopCode c = check_loop(isa, compile(isa, text), {"block1", "block2"}, "block1");
        EXPECT_EQ(c.conditional, 1u) << isa;
        EXPECT_EQ(c.unconditional, 0u) << isa;
    }
}

// A do-while loop (the latch tests, the header does not exit) already has
// its test at the bottom: it stays in order, with one conditional branch.
TEST(LoopLayout, DoWhileLoopStaysInOrder) {
    constexpr const char* kDoWhile = R"(
function %count(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1)
block1(v2: i64):
    v3 = iconst.i64 1
    v4 = iadd v2, v3
    jump block2
block2:
    v5 = icmp slt v4, v0
    brif v5, block1(v4), block3
block3:
    return v4
})";
    for (const char* isa : kIsas) {
        LoopCode c = check_loop(isa, compile(isa, kDoWhile), {"block1", "block2"}, "block2");
        EXPECT_EQ(c.conditional, 1u) << isa;
        EXPECT_EQ(c.unconditional, 0u) << isa;
    }
}

// Two nested loops: each is contiguous with its test at the bottom, the
// inner one inside the outer one; the inner loop's iteration is one
// conditional branch.
TEST(LoopLayout, NestedLoopsAreContiguousAndRotated) {
    constexpr const char* kNest = R"(
function %nest(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v1, v1)
block1(v2: i64, v3: i64):
    v4 = icmp slt v2, v0
    brif v4, block2, block5
block2:
    jump block3(v1, v3)
block3(v5: i64, v6: i64):
    v7 = icmp slt v5, v2
    brif v7, block4, block6
block4:
    v8 = iadd v6, v5
    v9 = iconst.i64 1
    v10 = iadd v5, v9
    jump block3(v10, v8)
block6:
    v11 = iconst.i64 1
    v12 = iadd v2, v11
    jump block1(v12, v6)
block5:
    return v3
})";
    for (const char* isa : kIsas) {
        Listing l = compile(isa, kNest);
        LoopCode inner = check_loop(isa, l, {"block3", "block4"}, "block3");
        EXPECT_EQ(inner.conditional, 1u) << isa;
        EXPECT_EQ(inner.unconditional, 0u) << isa;
        LoopCode outer = check_loop(isa, l, {"block1", "block2", "block3", "block4", "block6"}, "block1");
        EXPECT_EQ(outer.conditional, 2u) << isa;
        EXPECT_EQ(outer.unconditional, 1u) << isa << ": only the jump into the inner loop's test";
    }
}

// The TargetIsa keeps its lowering context (block order, CFG, dominator
// tree, loop analysis, per-value tables) from one function to the next and
// only clears it. Functions of different shapes, compiled in turn by one
// ISA object (bigger after smaller and the other way round), must give
// exactly the code a fresh ISA object gives: nothing of the last function
// may leak into the next.
TEST(BlockOrderTest, ASingleBlockFunctionAfterABranchyOneHasOnlyItsBlock) {
    // A function whose entry returns takes the single-block path of
    // BlockOrder::compute; the rows of the function computed before it
    // (edges, edge blocks, arguments, a loop) must all be gone.
    auto parse = [](const char* text) {
        Diagnostics errs;
        auto fs = parse_functions(text, errs);
        EXPECT_TRUE(errs.empty() && fs.size() == 1);
        return std::move(fs.at(0));
    };
    auto branchy = parse(R"(
function %b(i64) -> i64 {
block0(v0: i64):
    jump block1(v0)
block1(v1: i64):
    v2 = iconst.i64 1
    v3 = isub v1, v2
    brif v3, block1(v3), block2(v3)
block2(v4: i64):
    return v4
})");
    auto single = parse(R"(
function %s(i64, i64) -> i64 {
block3(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
})");
    BlockOrder order;
    order.compute(*branchy);
    ASSERT_GT(order.num_edges(), 0u);
    ASSERT_TRUE(order.reducible());
    ASSERT_EQ(order.num_loops(), 1u);
    order.compute(*single);
    const Block entry = *single->layout.entry_block();
    ASSERT_EQ(order.rpo().size(), 1u);
    EXPECT_EQ(order.rpo()[0], entry);
    EXPECT_EQ(order.num_vblocks(), 1u);
    EXPECT_EQ(order.ir_block(0), entry.index());
    EXPECT_EQ(order.vblock_of(entry), 0u);
    EXPECT_EQ(order.num_edges(), 0u);
    EXPECT_TRUE(order.succs(0).empty());
    EXPECT_EQ(order.all_succ_begins().size(), 2u);
    ASSERT_EQ(order.all_arg_begins().size(), 1u);
    EXPECT_EQ(order.all_arg_begins()[0], 0u);
    EXPECT_TRUE(order.all_args().empty());
    EXPECT_EQ(order.layout(), std::vector<uint32_t>{0});
    EXPECT_TRUE(order.reducible());
    EXPECT_EQ(order.num_loops(), 0u);
    EXPECT_EQ(order.loop_depth(entry), 0u);
    // And back: the branchy function gets its full order again.
    order.compute(*branchy);
    EXPECT_EQ(order.num_vblocks(), 4u);  // block0, block1, its back-edge block, block2
}

// From 1,024 blocks BlockOrder gathers the destinations with prefetching
// in layout order before its search. A function of 1,500 blocks: a loop
// per unit, whose body is a diamond with critical edges passing arguments,
// and an unreachable block. Every reachable block is ordered once, every
// destination of every terminator is its successor (directly or through
// the edge block), with the terminator's arguments, and the loops are the
// loop analysis's.
TEST(BlockOrderTest, ALargeFunctionHasEveryEdgeOfItsTerminators) {
    constexpr int kUnits = 300;
    std::string text = "function %large(i64) -> i64 {\nblock0(v0: i64):\n    jump block1(v0)\n";
    auto b = [](int u, int k) { return "block" + std::to_string(1 + 5 * u + k); };
    auto v = [](int u, int k) { return "v" + std::to_string(1 + 5 * u + k); };
    for (int u = 0; u < kUnits; ++u) {
        // k = 0 header(x), 1 then, 2 join(y), 3 unreachable, 4 exit(z)
        text += b(u, 0) + "(" + v(u, 0) + ": i64):\n    brif " + v(u, 0) + ", " + b(u, 1) + ", " + b(u, 2) + "(" + v(u, 0) + ")\n";
        text += b(u, 1) + ":\n    brif " + v(u, 0) + ", " + b(u, 2) + "(" + v(u, 0) + "), " + b(u, 4) + "(" + v(u, 0) + ")\n";
        text += b(u, 2) + "(" + v(u, 2) + ": i64):\n    brif " + v(u, 2) + ", " + b(u, 0) + "(" + v(u, 2) + "), " + b(u, 4) + "(" + v(u, 2) + ")\n";
        text += b(u, 3) + ":\n    jump " + b(u, 2) + "(v0)\n";
        const std::string next = u + 1 < kUnits ? b(u + 1, 0) + "(" + v(u, 4) + ")" : "block9999";
        text += b(u, 4) + "(" + v(u, 4) + ": i64):\n    jump " + next + "\n";
    }
    text += "block9999:\n    return v0\n}\n";
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    ASSERT_TRUE(errs.empty()) << errs[0].format("text");
    ASSERT_EQ(fs.size(), 1u);
    const Function& f = *fs[0];
    ASSERT_GE(f.dfg.num_blocks(), 1024u);
    BlockOrder order;
    order.compute(f);
    std::set<uint32_t> ordered;
    for (Block blk : order.rpo()) EXPECT_TRUE(ordered.insert(blk.index()).second) << blk.to_string();
    EXPECT_EQ(ordered.size(), 2u + 4u * kUnits);  // block0, block9999 and 4 of each unit's 5
    const ValueListPool& pool = f.dfg.value_lists;
    for (Block blk : order.rpo()) {
        const auto dests = f.dfg.branch_destinations(*f.layout.last_inst(blk));
        const auto targets = order.targets_of(blk);
        ASSERT_EQ(targets.size(), dests.size()) << blk.to_string();
        const uint32_t vb = order.vblock_of(blk);
        for (size_t k = 0; k < dests.size(); ++k) {
            const Block want = dests[k].block(pool);
            uint32_t t = targets[k], edge = order.succ_begin(vb) + static_cast<uint32_t>(k);
            if (order.ir_block(t) == BlockOrder::kNone) {  // through the edge block
                ASSERT_EQ(order.succs(t).size(), 1u);
                edge = order.succ_begin(t);
                t = order.succs(t)[0];
            }
            EXPECT_EQ(order.ir_block(t), want.index()) << blk.to_string() << " destination " << k;
            const auto args = order.edge_args(edge);
            const auto want_args = dests[k].args(pool);
            EXPECT_TRUE(std::equal(args.begin(), args.end(), want_args.begin(), want_args.end()))
                << blk.to_string() << " destination " << k;
        }
    }
    const ControlFlowGraph cfg(f);
    const DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    ASSERT_FALSE(loops.compute(f, cfg, dt).has_value());
    EXPECT_EQ(order.num_loops(), static_cast<uint32_t>(kUnits));
    EXPECT_EQ(loops.num_loops(), static_cast<uint32_t>(kUnits));
    for (Block blk : order.rpo()) EXPECT_EQ(order.loop_depth(blk), loops.depth(blk)) << blk.to_string();
}

// An acyclic function with several blocks gets no loop search in
// BlockOrder, but its answers are those of a loop analysis: no loops,
// every block at depth 0. After a function with a loop nothing of that
// loop may be left.
TEST(BlockOrderTest, AnAcyclicFunctionHasAValidLoopAnalysisWithoutLoops) {
    Diagnostics errs;
    auto fs = parse_functions(R"(
function %nest(i64) -> i64 {
block0(v0: i64):
    jump block1(v0)
block1(v1: i64):
    jump block2(v1)
block2(v2: i64):
    v3 = iconst.i64 1
    v4 = isub v2, v3
    brif v4, block2(v4), block3
block3:
    brif v1, block1(v4), block4
block4:
    return v4
}
function %diamond(i64) -> i64 {
block0(v0: i64):
    brif v0, block1, block2
block1:
    jump block3(v0)
block2:
    v1 = iconst.i64 7
    jump block3(v1)
block3(v2: i64):
    return v2
})", errs);
    ASSERT_TRUE(errs.empty() && fs.size() == 2);
    BlockOrder order;
    order.compute(*fs[0]);
    ASSERT_TRUE(order.reducible());
    ASSERT_EQ(order.num_loops(), 2u);
    EXPECT_EQ(order.loop_depth(Block(2)), 2u);
    order.compute(*fs[1]);
    EXPECT_TRUE(order.reducible());
    EXPECT_EQ(order.num_loops(), 0u);
    for (Block b : fs[1]->layout.blocks()) EXPECT_EQ(order.loop_depth(b), 0u) << b.to_string();
    // The same answers as a full loop analysis of the function.
    ControlFlowGraph cfg(*fs[1]);
    DominatorTree dt(*fs[1], cfg);
    LoopAnalysis full;
    ASSERT_FALSE(full.compute(*fs[1], cfg, dt));
    EXPECT_EQ(full.num_loops(), order.num_loops());
}

TEST(LoopLayout, ReusedContextsGiveTheCodeOfAFreshCompile) {
    constexpr const char* kDiamond = R"(
function %diamond(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = icmp slt v0, v1
    brif v2, block1(v0), block2(v1)
block1(v3: i64):
    v4 = iadd v3, v1
    brif v4, block2(v4), block3
block2(v5: i64):
    return v5
block3:
    v6 = iconst.i64 7
    return v6
})";
    constexpr const char* kIrreducible = R"(
function %irr(i64) -> i64 {
block0(v0: i64):
    brif v0, block1(v0), block2(v0)
block1(v1: i64):
    v2 = iconst.i64 1
    v3 = isub v1, v2
    brif v3, block2(v3), block3
block2(v4: i64):
    v5 = iconst.i64 2
    v6 = isub v4, v5
    brif v6, block1(v6), block3
block3:
    return v0
})";
    constexpr const char* kTrivial = R"(
function %trivial(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    v3 = imul v0, v1
    return v2
})";
    // (v3 of %trivial is dead: its imul must not be emitted just because
    // the function before had a v3 that was used.)
    const char* const kFunctions[] = {kTrivial, kWhile, kDiamond, kIrreducible, kTrivial, kDiamond, kWhile, kTrivial};
    for (const char* isa_name : kIsas) {
        CompileOptions opts;
        opts.check_regalloc = true;
        Context reused(isa_by_name(isa_name), opts);
        for (const char* text : kFunctions) {
            Diagnostics errs;
            auto fs = parse_functions(text, errs);
            ASSERT_TRUE(errs.empty() && fs.size() == 1);
            CompiledCode again, fresh;
            ASSERT_EQ(error_text(reused.compile(*fs[0], again)), "") << isa_name;
            ASSERT_EQ(error_text(Context(isa_by_name(isa_name), opts).compile(*fs[0], fresh)), "") << isa_name;
            EXPECT_EQ(again.bytes, fresh.bytes) << isa_name << ": " << fs[0]->name.to_string();
            EXPECT_EQ(again.labels, fresh.labels) << isa_name;
            EXPECT_EQ(again.ir_insts, fresh.ir_insts) << isa_name;
        }
    }
}

}  // namespace
}  // namespace heron
