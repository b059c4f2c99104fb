// Analyses that passes update instead of recomputing: forward-blocks keeps
// the CFG, dominator tree and loops current (PassContext::
// bypass_removed_blocks), loop-form and count-down keep the loop nest and
// refresh the rest (PassContext::keep_loop_nest), and the block order uses
// the pipeline's loops.
// Each updated analysis must equal a fresh computation: the pass manager's
// verify_each recomputes and compares (PassContext::stale_analysis), and
// the tests below compare once more themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/machinst/block_order.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
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

/// Copies of the functions of the generated modules of seeds 1..last_seed,
/// in order.
std::vector<std::unique_ptr<Function>> generated_functions(uint64_t last_seed) {
    std::vector<std::unique_ptr<Function>> funcs;
    for (uint64_t seed = 1; seed <= last_seed; ++seed) {
        gen::Entropy entropy(seed);
        gen::GenOptions options;
        gen::Module m = gen::generate_module(entropy, options);
        for (auto& f : m.functions) funcs.push_back(std::make_unique<Function>(*f));
    }
    return funcs;
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
            ASSERT_TRUE(own.reducible());
            EXPECT_EQ(given.num_loops(), own.num_loops());
            for (Block b : own.rpo()) EXPECT_EQ(given.loop_depth(b), own.loop_depth(b));
        }
    }
    std::printf("speed pipeline: %u functions, %u with the pipeline's loops current, %u of them with loops\n",
                functions, kept, with_loops);
    EXPECT_GT(with_loops, 20u);
}

TEST(AnalysisUpdateTest, SkippingLoopFormWhileItHoldsChangesNothing) {
    // The speed pipeline skips its second loop-form while loop form still
    // holds (Pass::only_produces): the same functions come out as from a
    // pipeline whose loop-form always runs, over 120 generated modules and
    // the kernels' shapes (verify_each on).
    PassManager with(verifying()), without(verifying());
    ASSERT_FALSE(with.add_pipeline(opt_pipeline(OptLevel::Speed)));
    std::vector<Pass> copies;
    for (const Pass* p : with.pipeline()) copies.push_back(*p);
    for (Pass& p : copies) {
        p.only_produces = false;
        without.add(p);
    }
    const auto funcs = generated_functions(120);
    uint32_t skips = 0;
    for (const auto& original : funcs) {
        SCOPED_TRACE(print_function(*original));
        Function a = *original, b = *original;
        ASSERT_FALSE(with.run(a));
        ASSERT_FALSE(without.run(b));
        EXPECT_EQ(print_function(a), print_function(b));
        skips += with.repeats_skipped() - without.repeats_skipped();
    }
    std::printf("loop-form skipped while it held: %u times in %zu functions\n", skips, funcs.size());
    EXPECT_GT(skips, 20u);
}

TEST(AnalysisUpdateTest, OptimizerTakesTheVerifiersGraphAndTree) {
    // As the JIT compiles: the verifier builds the CFG and dominator tree in
    // the optimizer's pass context, and the pipeline runs on a copy taking
    // them as current. Same result as an optimizer that computes its own
    // (verify_each on: kept analyses are compared with fresh ones after
    // each pass that changed the function), with fewer computations.
    uint32_t taken = 0, saved = 0;
    Optimizer with(OptLevel::Speed, /*verify_each=*/true), without(OptLevel::Speed, /*verify_each=*/true);
    VerifierContext vc;
    const auto computed = [](const PassContext& c) {
        return c.computations(Property::CfgValid) + c.computations(Property::DomTreeValid);
    };
    for (const auto& original : generated_functions(60)) {
        SCOPED_TRACE(print_function(*original));
        VerifierErrors errs;
        VerifierAnalyses built{&with.cfg_storage(), &with.domtree_storage()};
        ASSERT_TRUE(verify_function(*original, errs, vc, built)) << format_verifier_errors(errs);
        Function a = *original, b = *original;
        ASSERT_FALSE(with.run(a, scan_pass_needs(a), built.computed));
        ASSERT_FALSE(without.run(b));
        EXPECT_EQ(print_function(a), print_function(b));
        taken += built.computed;
        EXPECT_LE(computed(with.context()), computed(without.context()));
        saved += computed(without.context()) - computed(with.context());
    }
    std::printf("verifier's analyses: taken for %u functions, %u computations saved\n", taken, saved);
    EXPECT_GT(taken, 50u);
    EXPECT_GT(saved, 50u);
}

// Every function with a cycle of the file tests (those that verify and are
// reducible) and of 120 generated modules goes through the speed pipeline with
// verify_each on, which compares each kept analysis with a fresh one after
// every pass that changed something. After loop-form and count-down the
// loops must still be current and agree with a fresh computation (rows
// included), and the loops are found once per run: the passes update them.
/// The functions of the file tests that parse and verify (the kernels
/// of bench/kernels included), then those of 120 generated modules.
std::vector<std::unique_ptr<Function>> file_and_generated_functions() {
    std::vector<std::unique_ptr<Function>> funcs;
    namespace fs = std::filesystem;
    std::vector<std::string> paths;
    for (const auto& entry : fs::recursive_directory_iterator(std::string(HERON_SOURCE_DIR) + "/tests/filetests")) {
        if (entry.path().extension() == ".clif") paths.push_back(entry.path().string());
    }
    for (const auto& entry : fs::directory_iterator(std::string(HERON_SOURCE_DIR) + "/bench/kernels")) {
        if (entry.path().extension() == ".clif") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    EXPECT_GT(paths.size(), 50u);
    for (const std::string& path : paths) {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        Diagnostics errs;
        auto parsed = parse_functions(text.str(), errs);
        if (!errs.empty()) continue;  // parser error tests
        for (auto& f : parsed) {
            VerifierErrors verr;
            if (verify_function(*f, verr)) funcs.push_back(std::move(f));
        }
    }
    for (auto& f : generated_functions(120)) funcs.push_back(std::move(f));
    return funcs;
}

TEST(AnalysisUpdateTest, LoopFormAndCountDownKeepTheLoopNestOnEveryFunction) {
    const std::vector<std::unique_ptr<Function>> funcs = file_and_generated_functions();
    uint32_t checked = 0, changed_cfg = 0;
    for (const auto& original : funcs) {
        Function f = *original;
        {
            const ControlFlowGraph cfg(f);
            const DominatorTree dt(f, cfg);
            LoopAnalysis loops;
            if (loops.compute(f, cfg, dt)) continue;  // irreducible: the pipeline stops at once
        }
        // Without a cycle the loop passes are skipped: nothing is computed.
        if (!(scan_pass_needs(f) & pass_needs::kCycle)) continue;
        SCOPED_TRACE(print_function(*original));
        PassManagerOptions o = verifying();
        PassManager* pm_ptr = nullptr;
        std::string failures;
        o.dump_after = {"loop-form", "count-down"};
        o.dump = [&](std::string_view pass, const Function& g) {
            PassContext& ctx = pm_ptr->context();
            // simplify-cfg may have removed every cycle: the pass was skipped.
            if (!(scan_pass_needs(g, pass_needs::kCycle) & pass_needs::kCycle)) return;
            if (!ctx.valid().contains(Property::LoopsValid)) {
                failures += std::string(pass) + ": loops dropped; ";
                return;
            }
            const std::string d = differences(g, ctx);
            if (!d.empty()) failures += std::string(pass) + ": " + d;
        };
        PassManager pm(o);
        pm_ptr = &pm;
        ASSERT_FALSE(pm.add_pipeline(opt_pipeline(OptLevel::Speed)));
        const uint32_t blocks_before = f.dfg.num_blocks();
        auto err = pm.run(f);
        ASSERT_FALSE(err) << *err;
        EXPECT_EQ(failures, "");
        // widen-fill adds a loop (the wide one in front of a byte-fill
        // loop): the loop tree changes, so the loops are found once more
        // after it, and only then.
        auto after = [&](std::string_view passes) {
            Function g = *original;
            PassManager p(verifying());
            EXPECT_FALSE(p.add_pipeline(passes));
            EXPECT_FALSE(p.run(g));
            return print_function(g);
        };
        const bool widened = after("loop-form,widen-fill") != after("loop-form");
        EXPECT_LE(pm.context().computations(Property::LoopsValid), widened ? 2u : 1u);
        ++checked;
        changed_cfg += f.dfg.num_blocks() != blocks_before;
    }
    std::printf("loop nest kept: %u functions, %u with new blocks\n", checked, changed_cfg);
    EXPECT_GT(checked, 100u);
    EXPECT_GE(changed_cfg, 40u);
}

// BlockOrder finds the loops of a function itself (from its reverse
// postorder, no CFG or dominator tree): on every file-test and generated
// function, unoptimized, it gives the layout, reducibility, loop count and
// block depths that a LoopAnalysis of the function gives it.
TEST(AnalysisUpdateTest, BlockOrderFindsTheLoopsALoopAnalysisFinds) {
    const std::vector<std::unique_ptr<Function>> funcs = file_and_generated_functions();
    uint32_t with_loops = 0, irreducible = 0, nested = 0, one_latch_tops = 0;
    BlockOrder own, given;
    for (const auto& fp : funcs) {
        const Function& f = *fp;
        SCOPED_TRACE(print_function(f));
        own.compute(f);
        const ControlFlowGraph cfg(f);
        const DominatorTree dt(f, cfg);
        LoopAnalysis loops;
        if (loops.compute(f, cfg, dt)) {
            ++irreducible;
            EXPECT_FALSE(own.reducible());
            EXPECT_EQ(own.num_loops(), 0u);
            for (uint32_t vb = 0; vb < own.num_vblocks(); ++vb) ASSERT_EQ(own.layout()[vb], vb);
            for (Block b : own.rpo()) EXPECT_EQ(own.loop_depth(b), 0u);
            continue;
        }
        given.compute(f, &loops);
        ASSERT_TRUE(own.reducible());
        EXPECT_EQ(own.layout(), given.layout());
        EXPECT_EQ(own.num_loops(), loops.num_loops());
        for (Block b : own.rpo()) EXPECT_EQ(own.loop_depth(b), loops.depth(b)) << b.to_string();
        with_loops += loops.num_loops() > 0;
        for (Loop l : loops.loops()) {
            nested += loops.loop_depth(l) > 1;
            one_latch_tops += loops.latches(l).size() == 1;
        }
    }
    std::printf("block order loops: %zu functions, %u with loops, %u irreducible, %u nested loops\n", funcs.size(),
                with_loops, irreducible, nested);
    EXPECT_GT(with_loops, 100u);
    EXPECT_GT(irreducible, 0u);
    EXPECT_GT(nested, 10u);
    EXPECT_GT(one_latch_tops, 10u);
}

// A pass that splits a back edge into a new block and keeps the loop nest
// without noting the block in it: the check after the pass catches the
// stale loops (the new block is in the loop); noting it makes it right.
const char* kSelfLoop = R"(
function %f(i32) -> i32 {
block0(v0: i32):
    jump block1
block1:
    v1 = iconst.i32 1
    v2 = isub v0, v1
    brif v2, block1, block2
block2:
    return v2
}
)";

PassResult split_back_edge(Function& f, PassContext& ctx, bool note) {
    const LoopAnalysis* loops = ctx.loops();
    const Loop l(0);
    const Block h = loops->header(l);
    const Block latch = loops->latches(l)[0];
    const Inst term = *f.layout.last_inst(latch);
    const Block fresh = f.dfg.make_block();
    f.layout.insert_block_after(fresh, latch);
    for (BlockCall& d : f.dfg.branch_destinations_mut(term)) {
        if (d.block(f.dfg.value_lists) != h) continue;
        d.clear(f.dfg.value_lists);
        d = f.dfg.block_call(fresh, {});
    }
    FuncCursor cur(f);
    cur.at_bottom(fresh);
    cur.ins().jump(h, std::span<const Value>());
    if (note) ctx.loops_to_patch().note_new_block(fresh, l);
    ctx.keep_loop_nest();
    PassResult r;
    r.changed = true;
    return r;
}

TEST(AnalysisUpdateTest, KeepingTheLoopNestWithoutNotingANewBlockIsCaught) {
    const Pass forgets{"forgets", "", {Property::LoopsValid}, {}, {Property::CountedLoopsKnown},
                       [](Function& f, PassContext& ctx) { return split_back_edge(f, ctx, false); },
                       pass_needs::kAnything};
    const Pass notes{"notes", "", {Property::LoopsValid}, {}, {Property::CountedLoopsKnown},
                     [](Function& f, PassContext& ctx) { return split_back_edge(f, ctx, true); },
                     pass_needs::kAnything};
    {
        Function f = parse_one(kSelfLoop);
        PassManager pm(verifying());
        pm.add(forgets);
        auto err = pm.run(f);
        ASSERT_TRUE(err);
        EXPECT_EQ(*err, "pass forgets changed the function but kept LoopsValid (the blocks of loop0 differ)");
    }
    Function f = parse_one(kSelfLoop);
    PassManager pm(verifying());
    pm.add(notes);
    ASSERT_FALSE(pm.run(f));
    EXPECT_EQ(differences(f, pm.context()), "");
    EXPECT_EQ(pm.context().computations(Property::LoopsValid), 1u);
    const LoopAnalysis* loops = pm.context().current_loops();
    ASSERT_NE(loops, nullptr);
    ASSERT_EQ(loops->latches(Loop(0)).size(), 1u);
    EXPECT_EQ(loops->latches(Loop(0))[0], Block(3));
    EXPECT_EQ(loops->blocks(Loop(0)).size(), 2u);
}

TEST(AnalysisUpdateTest, PassScratchOutlivesTheFunction) {
    // The passes' scratch is part of the context and kept across bind():
    // the next function reuses its memory. Each pass has its own member.
    Function f = parse_one(kShapes[0].text);
    Function g = parse_one(kShapes[1].text);
    PassContext ctx;
    ctx.bind(f);
    std::vector<uint32_t>& a = ctx.scratch().licm.by_depth;
    a.assign(100, 7);
    const uint32_t* data = a.data();
    ctx.bind(g);
    std::vector<uint32_t>& b = ctx.scratch().licm.by_depth;
    EXPECT_EQ(&a, &b);
    EXPECT_EQ(b.size(), 100u);
    EXPECT_EQ(b.data(), data);
    EXPECT_NE(static_cast<const void*>(&ctx.scratch().count_down.uses), static_cast<const void*>(&b));
}

}  // namespace
}  // namespace heron
