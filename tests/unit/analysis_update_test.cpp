// Analyses that passes update instead of recomputing: forward-blocks keeps
// the CFG, dominator tree and loops current (PassContext::
// bypass_removed_blocks), and the block order uses the pipeline's loops.
// Each updated analysis must equal a fresh computation: the pass manager's
// verify_each recomputes and compares (PassContext::stale_analysis), and
// the tests below compare once more themselves.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/machinst/block_order.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "fuzz/gen/generator.h"

namespace heron {
namespace {

Function parse_one(const std::string& text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].message);
    return fs.empty() ? Function() : std::move(*fs[0]);
}

PassManagerOptions verifying() {
    PassManagerOptions o;
    o.verify_each = true;
    return o;
}

/// Fresh analyses of `f` against those `ctx` holds as current: "" when
/// they agree (the loops also on blocks, latches, entries, exits and
/// preheaders, read through the public interface).
std::string differences(const Function& f, PassContext& ctx) {
    if (auto stale = ctx.stale_analysis()) return *stale;
    std::string out;
    const ControlFlowGraph cfg(f);
    const DominatorTree dt(f, cfg);
    LoopAnalysis fresh;
    if (fresh.compute(f, cfg, dt)) return "irreducible";
    const LoopAnalysis* kept = ctx.current_loops();
    if (!kept) return "no current loops";
    if (kept->num_loops() != fresh.num_loops()) return "loop count";
    for (Loop l : fresh.loops()) {
        const auto a = kept->blocks(l), b = fresh.blocks(l);
        if (std::vector<Block>(a.begin(), a.end()) != std::vector<Block>(b.begin(), b.end()))
            out += l.to_string() + " blocks; ";
        const auto la = kept->latches(l), lb = fresh.latches(l);
        if (std::vector<Block>(la.begin(), la.end()) != std::vector<Block>(lb.begin(), lb.end()))
            out += l.to_string() + " latches; ";
        if (kept->preheader(l) != fresh.preheader(l)) out += l.to_string() + " preheader; ";
        const auto ea = kept->exit_blocks(l), eb = fresh.exit_blocks(l);
        if (std::vector<Block>(ea.begin(), ea.end()) != std::vector<Block>(eb.begin(), eb.end()))
            out += l.to_string() + " exit blocks; ";
    }
    for (uint32_t i = 0; i < f.dfg.num_blocks(); ++i) {
        if (kept->innermost_loop(Block(i)) != fresh.innermost_loop(Block(i))) out += Block(i).to_string() + " loop; ";
        if (dt.idom(Block(i)) != ctx.domtree().idom(Block(i))) out += Block(i).to_string() + " idom; ";
    }
    return out;
}

struct Shape {
    const char* name;
    const char* text;
    bool header_removed;  // the loops are then recomputed, not updated
};

// Each shape has its forwarder in a different place of a loop.
const Shape kShapes[] = {
    {"merged latch", R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    brif v3, block2, block3
block2:
    brif v1, block4(v3), block5
block5:
    jump block4(v1)
block4(v4: i32):
    jump block1(v4)
block3:
    return v3
}
)",
     false},
    {"preheader with parameters", R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block5(v0)
block5(v9: i32):
    jump block1(v9)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    brif v3, block1(v3), block3
block3:
    return v3
}
)",
     false},
    {"dedicated exit of an inner loop that is the outer latch", R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    brif v3, block2(v3), block9
block2(v4: i32):
    v5 = isub v4, v2
    brif v5, block2(v5), block6
block6:
    jump block1(v5)
block9:
    return v3
}
)",
     false},
    {"exit forwarder shared by two loops", R"(
function %f(i32) -> i32 {
block0(v0: i32):
    brif v0, block1(v0), block2(v0)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    brif v3, block1(v3), block7(v3)
block2(v4: i32):
    v5 = iconst.i32 2
    v6 = isub v4, v5
    brif v6, block2(v6), block7(v6)
block7(v7: i32):
    jump block8(v7)
block8(v8: i32):
    return v8
}
)",
     false},
    {"forwarder header", R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    jump block2(v1)
block2(v2: i32):
    v3 = iconst.i32 1
    v4 = isub v2, v3
    brif v4, block1(v4), block3
block3:
    return v4
}
)",
     true},
};

TEST(AnalysisUpdateTest, ForwardBlocksUpdatesTheLoopsItRemovesBlocksFrom) {
    for (const Shape& s : kShapes) {
        SCOPED_TRACE(s.name);
        Function f = parse_one(s.text);
        PassManager pm(verifying());
        ASSERT_FALSE(pm.add_pipeline("loops,forward-blocks"));
        ASSERT_FALSE(pm.run(f));
        PassContext& ctx = pm.context();
        // Something was forwarded: fewer blocks in the layout.
        uint32_t in_layout = 0;
        for (Block b : f.layout.blocks()) in_layout += b.index() < f.dfg.num_blocks();
        EXPECT_LT(in_layout, f.dfg.num_blocks()) << print_function(f);
        EXPECT_EQ(ctx.computations(Property::CfgValid), 1u);
        EXPECT_EQ(ctx.computations(Property::DomTreeValid), 1u);
        EXPECT_TRUE(ctx.valid().contains(Property::DomTreeValid));
        EXPECT_EQ(ctx.valid().contains(Property::LoopsValid), !s.header_removed);
        if (s.header_removed) {
            ASSERT_TRUE(ctx.loops());  // recomputed
        }
        EXPECT_EQ(differences(f, ctx), "") << print_function(f);
        EXPECT_EQ(ctx.computations(Property::LoopsValid), s.header_removed ? 2u : 1u);
    }
}

TEST(AnalysisUpdateTest, ForwarderKeptByABrTableDropsTheAnalyses) {
    // block4 forwards, but a br_table names it: it stays, so the update
    // does not apply and the CFG is dropped.
    Function f = parse_one(R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    brif v3, block4, block3
block2:
    br_table v1, block3, [block4]
block4:
    jump block1(v3)
block3:
    return v3
}
)");
    PassManager pm(verifying());
    ASSERT_FALSE(pm.add_pipeline("loops,forward-blocks"));
    ASSERT_FALSE(pm.run(f));
    EXPECT_FALSE(pm.context().valid().contains(Property::CfgValid));
    EXPECT_NE(print_function(f).find("block4:"), std::string::npos) << print_function(f);
    EXPECT_NE(print_function(f).find("brif v3, block1(v3), block3"), std::string::npos) << print_function(f);
}

TEST(AnalysisUpdateTest, SpeedPipelineLeavesCurrentLoopsForTheBlockOrder) {
    // Every generated function at opt_level speed, verify_each on: a wrong
    // update is an error naming forward-blocks. The loops the pipeline
    // leaves give the block order the layout its own computation gives.
    uint32_t functions = 0, kept = 0, with_loops = 0;
    Optimizer opt(OptLevel::Speed, /*verify_each=*/true);
    for (uint64_t seed = 1; seed <= 120; ++seed) {
        gen::Entropy entropy(seed);
        gen::GenOptions options;
        gen::Module m = gen::generate_module(entropy, options);
        for (size_t k = 0; k < m.functions.size(); ++k) {
            Function f = *m.functions[k];
            SCOPED_TRACE("seed " + std::to_string(seed) + " f" + std::to_string(k));
            ASSERT_FALSE(opt.run(f));
            ++functions;
            const LoopAnalysis* loops = opt.loops();
            if (!loops) continue;
            ++kept;
            with_loops += loops->num_loops() > 0;
            BlockOrder given, own;
            given.compute(f, loops);
            own.compute(f);
            EXPECT_EQ(given.layout(), own.layout()) << print_function(f);
            ASSERT_EQ(given.num_vblocks(), own.num_vblocks());
            ASSERT_TRUE(own.loops());
            for (Block b : own.rpo()) EXPECT_EQ(given.loops()->depth(b), own.loops()->depth(b));
        }
    }
    std::printf("speed pipeline: %u functions, %u with the pipeline's loops current, %u of them with loops\n",
                functions, kept, with_loops);
    EXPECT_GT(with_loops, 20u);
}

TEST(AnalysisUpdateTest, PassScratchOutlivesTheFunction) {
    // A pass's scratch is made once per context and kept across bind(): the
    // next function reuses its memory. Each slot is its own object.
    Function f = parse_one(kShapes[0].text);
    Function g = parse_one(kShapes[1].text);
    PassContext ctx;
    ctx.bind(f);
    auto& a = ctx.scratch<std::vector<uint32_t>>(PassContext::Scratch::Licm);
    a.assign(100, 7);
    ctx.bind(g);
    auto& b = ctx.scratch<std::vector<uint32_t>>(PassContext::Scratch::Licm);
    EXPECT_EQ(&a, &b);
    EXPECT_EQ(b.size(), 100u);
    EXPECT_NE(&ctx.scratch<std::vector<uint32_t>>(PassContext::Scratch::CountDown), &b);
}

}  // namespace
}  // namespace heron
