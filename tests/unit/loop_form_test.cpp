// LoopForm and the pass manager: random functions (the project's generator
// and random reducible CFGs with carried values) keep their results under
// the interpreter, come out in loop form, and a second run changes nothing;
// the pass manager caches analyses, enforces requirements, verifies after
// passes and dumps by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/cursor.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/opt/effects.h"
#include "codegen/opt/loop_form.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/verifier/verifier.h"
#include "fuzz/gen/generator.h"

namespace heron {
namespace {

// --- checking the shape -----------------------------------------------------------

/// Empty when every loop of `f` has a jumping preheader, one latch, and
/// dedicated exits; else what is wrong.
std::string loop_form_violations(const Function& f) {
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    if (auto err = loops.compute(f, cfg, dt)) return err->message;
    std::string out;
    for (Loop l : loops.loops()) {
        const std::string h = loops.header(l).to_string();
        auto pre = loops.preheader(l);
        if (!pre || f.dfg[*f.layout.last_inst(*pre)].opcode != Opcode::Jump) out += h + ": no preheader\n";
        if (loops.latches(l).size() != 1) out += h + ": " + std::to_string(loops.latches(l).size()) + " latches\n";
        for (Block e : loops.exit_blocks(l)) {
            for (const BlockPredecessor& p : cfg.predecessors(e)) {
                if (!loops.contains(l, p.block)) out += h + ": exit " + e.to_string() + " not dedicated\n";
            }
        }
    }
    return out;
}

struct Outcome {
    InterpOutcome::Kind kind;
    std::vector<DataValue> values;
    uint8_t trap;
    bool operator==(const Outcome& o) const { return kind == o.kind && values == o.values && trap == o.trap; }
};

Outcome outcome(const InterpOutcome& r) {
    return {r.kind, r.kind == InterpOutcome::Kind::Return ? r.values : std::vector<DataValue>{}, r.trap.byte};
}

bool run_loop_form(Function& f, LoopFormStats& stats, std::string& error) {
    PassContext ctx;
    ctx.bind(f);
    return form_loops(f, ctx, stats, error);
}

/// Runs LoopForm on `f`, checks validity, shape and idempotence.
void form_and_check(Function& f, const std::string& what, LoopFormStats& total) {
    LoopFormStats stats;
    std::string error;
    ASSERT_TRUE(run_loop_form(f, stats, error)) << what << ": " << error;
    VerifierErrors errs;
    ASSERT_TRUE(verify_function(f, errs)) << what << ":\n" << format_verifier_errors(errs) << print_function(f);
    EXPECT_EQ(loop_form_violations(f), "") << what << ":\n" << print_function(f);
    const std::string once = print_function(f);
    LoopFormStats again;
    ASSERT_TRUE(run_loop_form(f, again, error));
    EXPECT_FALSE(again.changed()) << what << ": second run changed\n" << once;
    EXPECT_EQ(print_function(f), once) << what;
    total.preheaders += stats.preheaders;
    total.latches += stats.latches;
    total.exits += stats.exits;
    total.invariant_params += stats.invariant_params;
}

TEST(LoopFormTest, GeneratedModulesKeepTheirResults) {
    LoopFormStats total;
    uint32_t compared = 0, loops_seen = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
        gen::Entropy entropy(seed);
        gen::GenOptions options;
        options.canonicalize_nans = true;
        gen::Module m = gen::generate_module(entropy, options);
        std::vector<std::vector<Outcome>> before(m.functions.size());
        {
            Interpreter interp;
            for (const auto& f : m.functions) interp.add_function(*f);
            for (size_t k = 0; k < m.functions.size(); ++k) {
                for (const auto& args : m.inputs[k]) before[k].push_back(outcome(interp.call(*m.functions[k], args)));
            }
        }
        for (size_t k = 0; k < m.functions.size(); ++k) {
            ControlFlowGraph cfg(*m.functions[k]);
            DominatorTree dt(*m.functions[k], cfg);
            LoopAnalysis la;
            if (!la.compute(*m.functions[k], cfg, dt)) loops_seen += la.num_loops();
            form_and_check(*m.functions[k], "seed " + std::to_string(seed) + " f" + std::to_string(k), total);
        }
        Interpreter interp;
        for (const auto& f : m.functions) interp.add_function(*f);
        for (size_t k = 0; k < m.functions.size(); ++k) {
            for (size_t i = 0; i < m.inputs[k].size(); ++i) {
                EXPECT_EQ(outcome(interp.call(*m.functions[k], m.inputs[k][i])), before[k][i])
                    << "seed " << seed << " f" << k << " input " << i << "\n"
                    << print_function(*m.functions[k]);
                ++compared;
            }
        }
    }
    EXPECT_GT(compared, 1000u);
    EXPECT_GT(loops_seen, 50u);
    // The generator's loops are mostly canonical already.
    EXPECT_GT(total.preheaders + total.exits + total.invariant_params, 0u);
    std::printf("generated: %u comparisons, %u loops, %u preheaders, %u latches, %u exits, %u invariants\n", compared,
                loops_seen, total.preheaders, total.latches, total.exits, total.invariant_params);
}

TEST(LicmTest, GeneratedModulesKeepTheirResults) {
    uint32_t compared = 0, moved = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
        gen::Entropy entropy(seed);
        gen::GenOptions options;
        options.canonicalize_nans = true;
        gen::Module m = gen::generate_module(entropy, options);
        std::vector<std::vector<Outcome>> before(m.functions.size());
        {
            Interpreter interp;
            for (const auto& f : m.functions) interp.add_function(*f);
            for (size_t k = 0; k < m.functions.size(); ++k) {
                for (const auto& args : m.inputs[k]) before[k].push_back(outcome(interp.call(*m.functions[k], args)));
            }
        }
        for (auto& f : m.functions) {
            const uint32_t insts_before = static_cast<uint32_t>(print_function(*f).size());
            PassManagerOptions o;
            o.verify_each = true;
            PassManager pm(o);
            ASSERT_FALSE(pm.add_pipeline("loop-form,licm"));
            auto err = pm.run(*f);
            ASSERT_FALSE(err) << *err;
            // Count hoisted instructions: an instruction now in a block of
            // lower loop depth than before is not tracked; compare the
            // printed text instead to know something moved.
            moved += print_function(*f).size() != insts_before;
        }
        Interpreter interp;
        for (const auto& f : m.functions) interp.add_function(*f);
        for (size_t k = 0; k < m.functions.size(); ++k) {
            for (size_t i = 0; i < m.inputs[k].size(); ++i) {
                EXPECT_EQ(outcome(interp.call(*m.functions[k], m.inputs[k][i])), before[k][i])
                    << "seed " << seed << " f" << k << " input " << i << "\n"
                    << print_function(*m.functions[k]);
                ++compared;
            }
        }
    }
    EXPECT_GT(compared, 1000u);
    EXPECT_GT(moved, 20u);
}

TEST(LicmTest, HoistsOnlyMovableInstructions) {
    // The opcode table decides: pure arithmetic moves; loads, stores,
    // trapping division, calls and branches do not.
    EXPECT_TRUE(effects_of(Opcode::Iadd).movable());
    EXPECT_TRUE(effects_of(Opcode::Iconst).movable());
    EXPECT_TRUE(effects_of(Opcode::StackAddr).movable());
    EXPECT_FALSE(effects_of(Opcode::Udiv).movable());
    EXPECT_FALSE(effects_of(Opcode::Load).movable());
    EXPECT_FALSE(effects_of(Opcode::Store).movable());
    EXPECT_FALSE(effects_of(Opcode::Call).movable());
    EXPECT_FALSE(effects_of(Opcode::Brif).movable());
    EXPECT_FALSE(effects_of(Opcode::Trapnz).movable());
    EXPECT_FALSE(effects_of(Opcode::FcvtToSint).movable());
    EXPECT_TRUE(effects_of(Opcode::FcvtToSintSat).movable());
}

// Random reducible or irreducible CFGs whose blocks carry (counter, acc,
// inv): every block counts down, so each run ends within 64 blocks; block i
// mixes its index into acc and picks a successor from acc, or the shared
// return block when the counter hits zero.
struct RandomCfg {
    Function func;
    uint32_t n;
};

RandomCfg random_cfg(std::mt19937& rng) {
    RandomCfg r;
    Function& f = r.func;
    r.n = 2 + rng() % 14;
    f.signature.params = {AbiParam(types::I32), AbiParam(types::I32)};
    f.signature.returns = {AbiParam(types::I32)};
    FuncCursor cur(f);
    std::vector<Block> blocks;
    for (uint32_t i = 0; i < r.n; ++i) blocks.push_back(cur.insert_block());
    const Block ret = cur.insert_block();
    const Value ret_v = f.dfg.append_block_param(ret, types::I32);
    cur.at_bottom(ret);
    cur.ins().return_({ret_v});
    const Value n = f.dfg.append_block_param(blocks[0], types::I32);
    const Value x = f.dfg.append_block_param(blocks[0], types::I32);
    for (uint32_t i = 1; i < r.n; ++i) {
        for (int k = 0; k < 3; ++k) f.dfg.append_block_param(blocks[i], types::I32);
    }
    cur.at_bottom(blocks[0]);
    Value ctr0 = cur.ins().iadd_imm(cur.ins().band(n, cur.ins().iconst(types::I32, 63)), 1);
    Value inv0 = cur.ins().bxor(x, cur.ins().iconst(types::I32, 7));
    cur.ins().jump(blocks[1], {ctr0, x, inv0});
    for (uint32_t i = 1; i < r.n; ++i) {
        cur.at_bottom(blocks[i]);
        auto p = f.dfg.block_params(blocks[i]);
        const Value ctr = p[0], acc = p[1], inv = p[2];
        Value acc2 = cur.ins().iadd(cur.ins().imul(acc, cur.ins().iconst(types::I32, 3)), inv);
        acc2 = cur.ins().iadd_imm(acc2, i);
        const Value ctr2 = cur.ins().iadd_imm(ctr, -1);
        uint32_t k = 1 + rng() % 3;
        std::vector<uint32_t> to;
        for (uint32_t j = 0; j < k; ++j) {
            uint32_t t = (rng() % 3 == 0) ? 1 + rng() % i : i + 1 + rng() % (r.n - i + 1);
            if (t >= r.n) t = rng() % 2 ? r.n - 1 : 1 + rng() % i;
            to.push_back(t);
        }
        const Value z = cur.ins().icmp_imm(IntCC::Eq, ctr2, 0);
        const Value pick = cur.ins().urem(cur.ins().band(acc2, cur.ins().iconst(types::I32, 0xffff)),
                                          cur.ins().iconst(types::I32, k));
        // Index k is past the table: the default, the return block.
        const Value idx = cur.ins().select(z, cur.ins().iconst(types::I32, k), pick);
        JumpTableData jt;
        jt.all.push_back(f.dfg.block_call(ret, std::vector<Value>{acc2}));
        for (uint32_t t : to) {
            // Sometimes pass inv through unchanged (an invariant candidate),
            // sometimes pass acc in its place.
            const Value third = rng() % 4 ? inv : acc;
            jt.all.push_back(f.dfg.block_call(blocks[t], std::vector<Value>{ctr2, acc2, third}));
        }
        cur.ins().br_table(idx, f.create_jump_table(std::move(jt)));
    }
    return r;
}

TEST(LoopFormTest, RandomCfgsKeepTheirResults) {
    std::mt19937 rng(77);
    LoopFormStats total;
    uint32_t formed = 0, irreducible = 0;
    for (int iter = 0; iter < 1500; ++iter) {
        RandomCfg r = random_cfg(rng);
        VerifierErrors errs;
        ASSERT_TRUE(verify_function(r.func, errs)) << format_verifier_errors(errs) << print_function(r.func);
        std::vector<std::vector<DataValue>> inputs;
        for (int i = 0; i < 6; ++i) inputs.push_back({DataValue::i32(rng()), DataValue::i32(rng())});
        std::vector<Outcome> before;
        Interpreter interp;
        interp.set_fuel(100000);
        for (const auto& args : inputs) {
            before.push_back(outcome(interp.call(r.func, args)));
            ASSERT_EQ(before.back().kind, InterpOutcome::Kind::Return) << print_function(r.func);
        }
        {
            Function copy = r.func;
            LoopFormStats s;
            std::string error;
            if (!run_loop_form(copy, s, error)) {
                ++irreducible;
                EXPECT_NE(error.find("irreducible control flow: edge block"), std::string::npos);
                EXPECT_EQ(print_function(copy), print_function(r.func)) << "an irreducible function is unchanged";
                continue;
            }
        }
        form_and_check(r.func, "iteration " + std::to_string(iter), total);
        ++formed;
        Interpreter after;
        after.set_fuel(100000);
        for (size_t i = 0; i < inputs.size(); ++i) {
            EXPECT_EQ(outcome(after.call(r.func, inputs[i])), before[i]) << "iteration " << iter << "\n"
                                                                           << print_function(r.func);
        }
    }
    std::printf("random CFGs: %u formed, %u irreducible, %u preheaders, %u latches, %u exits, %u invariants\n", formed,
                irreducible, total.preheaders, total.latches, total.exits, total.invariant_params);
    EXPECT_GT(formed, 400u);
    EXPECT_GT(irreducible, 100u);
    EXPECT_GT(total.preheaders, 200u);
    EXPECT_GT(total.latches, 100u);
    EXPECT_GT(total.exits, 200u);
    EXPECT_GT(total.invariant_params, 50u);
}

// --- the pass manager ---------------------------------------------------------------

Function parse_one(const char* text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].message);
    return fs.empty() ? Function() : std::move(*fs[0]);
}

const char* kTwoEntries = R"(
function %f(i32) -> i32 {
block0(v0: i32):
    brif v0, block1(v0), block2
block2:
    v1 = iconst.i32 3
    jump block1(v1)
block1(v2: i32):
    v3 = iconst.i32 1
    v4 = isub v2, v3
    brif v4, block1(v4), block3
block3:
    return v4
}
)";

TEST(PassManagerTest, AnalysesAreComputedOnceUntilInvalidated) {
    Function f = parse_one(kTwoEntries);
    PassManager pm;
    ASSERT_FALSE(pm.add_pipeline("loops,loops,verify"));
    ASSERT_FALSE(pm.run(f));
    EXPECT_EQ(pm.context().computations(Property::LoopsValid), 1u);
    EXPECT_EQ(pm.context().computations(Property::CfgValid), 1u);
    EXPECT_TRUE(pm.properties().contains(Property::LoopsValid));

    PassManager pm2;
    ASSERT_FALSE(pm2.add_pipeline("loops,loop-form,loops,loop-form,loops"));
    ASSERT_FALSE(pm2.run(f));
    // The first loop-form changes the CFG (a preheader): the split patches
    // the CFG's edges (PassContext::note_split), which are laid out again
    // instead of recomputed (the new block is noted in the loops it has);
    // at its end the dominator tree is recomputed and the loops' rows are
    // refreshed, so the loops are never found again and the CFG is read
    // from the function once; the second loop-form changes nothing and
    // invalidates nothing.
    EXPECT_EQ(pm2.context().computations(Property::LoopsValid), 1u);
    EXPECT_EQ(pm2.context().computations(Property::DomTreeValid), 2u);
    EXPECT_EQ(pm2.context().computations(Property::CfgValid), 1u);
    EXPECT_TRUE(pm2.context().valid().contains(Property::LoopsValid));
    EXPECT_TRUE(pm2.properties().contains(Property::LoopForm));
    EXPECT_TRUE(pm2.properties().contains(Property::Verified));
}

PassManagerOptions verifying() {
    PassManagerOptions o;
    o.verify_each = true;
    return o;
}

// A pass that swaps the targets of the entry block's brif (the CFG's
// successor order changes) but keeps every analysis.
PassResult swap_entry_targets(Function& f, PassContext&) {
    InstructionData& d = f.dfg[*f.layout.last_inst(*f.layout.entry_block())];
    std::swap(d.dests[0], d.dests[1]);
    return {true, ""};
}

// A pass that edits an instruction no analysis reads (the operands of
// the accumulator's iadd) and keeps every analysis: rightly.
PassResult swap_accumulator_operands(Function& f, PassContext&) {
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) {
            InstructionData& d = f.dfg[i];
            if (d.opcode == Opcode::Iadd && f.dfg.first_result(i) == Value(8)) std::swap(d.args[0], d.args[1]);
        }
    }
    return {true, ""};
}

// A counted loop whose bound is computed in the loop: licm hoists it, and
// only then is the loop counted.
constexpr const char* kBoundInLoop = R"(
function %bound_in_loop(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v2, v2)
block1(v3: i64, v4: i64):
    v5 = iadd v0, v1
    v6 = icmp slt v3, v5
    brif v6, block2, block3
block2:
    v8 = iadd v4, v3
    v9 = iconst.i64 1
    v10 = iadd v3, v9
    jump block1(v10, v8)
block3:
    return v4
}
)";

TEST(PassManagerTest, VerifyEachChecksTheAnalysesAChangedPassKept) {
    const Pass lying{"lying", "", {Property::LoopsValid}, {}, {}, swap_entry_targets, pass_needs::kAnything};
    const Pass honest{"honest", "", {Property::CountedLoopsKnown}, {}, {}, swap_accumulator_operands,
                      pass_needs::kAnything};
    Function f = parse_one(kTwoEntries);
    {
        PassManager pm(verifying());
        pm.add(lying);
        auto err = pm.run(f);
        ASSERT_TRUE(err);
        EXPECT_EQ(*err, "pass lying changed the function but kept CfgValid (the successors of block0 differ)");
    }
    {
        // Without verify_each nothing is recomputed: the claim is trusted.
        PassManagerOptions o;
        o.verify_each = false;
        PassManager pm(o);
        pm.add(lying);
        EXPECT_FALSE(pm.run(f));
        EXPECT_EQ(pm.context().computations(Property::CfgValid), 1u);
    }
    {
        Function g = parse_one(kBoundInLoop);
        PassManager pm(verifying());
        pm.add(honest);
        ASSERT_FALSE(pm.run(g));
        EXPECT_NE(print_function(g).find("v8 = iadd v3, v4"), std::string::npos) << print_function(g);
        EXPECT_EQ(pm.context().computations(Property::LoopsValid), 1u);
        EXPECT_TRUE(pm.properties().contains(Property::CountedLoopsKnown));
    }
}

TEST(PassManagerTest, LicmDropsTheCountedLoopsItCanChange) {
    // The hoist makes the loop counted: a licm that kept CountedLoopsKnown
    // would leave "conditional" cached, and the check says so.
    Pass keeps_all = *find_pass("licm");
    keeps_all.name = "licm-keeping-all";
    keeps_all.invalidated = {};
    {
        Function f = parse_one(kBoundInLoop);
        PassManager pm(verifying());
        ASSERT_FALSE(pm.add_pipeline("loop-form,counted-loops"));
        pm.add(keeps_all);
        auto err = pm.run(f);
        ASSERT_TRUE(err);
        EXPECT_EQ(*err, "pass licm-keeping-all changed the function but kept CountedLoopsKnown (which loops are "
                        "counted differ)");
    }
    Function f = parse_one(kBoundInLoop);
    PassManager pm(verifying());
    ASSERT_FALSE(pm.add_pipeline("loop-form,counted-loops,licm,counted-loops"));
    ASSERT_FALSE(pm.run(f));
    const CountedLoops* counted = pm.context().counted_loops();
    ASSERT_NE(counted, nullptr);
    ASSERT_EQ(counted->all().size(), 1u);
    EXPECT_EQ(pm.context().computations(Property::CountedLoopsKnown), 2u);
    EXPECT_EQ(pm.context().computations(Property::LoopsValid), 1u);
}

PassResult break_the_function(Function& f, PassContext&) {
    // Drop the terminator of the last block.
    f.layout.remove_inst(*f.layout.last_inst(*f.layout.last_block()));
    return {true, ""};
}

PassResult needs_nothing(Function&, PassContext&) { return {}; }

TEST(PassManagerTest, VerifiesAfterEveryPass) {
    const Pass breaker{"breaker", "", {}, {}, {Property::CfgValid}, break_the_function, pass_needs::kAnything};
    Function f = parse_one(kTwoEntries);
    PassManager pm(verifying());
    pm.add(breaker);
    auto err = pm.run(f);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->rfind("after pass breaker: ", 0), 0u) << *err;

    Function g = parse_one(kTwoEntries);
    PassManagerOptions o;
    o.verify_each = false;
    PassManager quiet(o);
    quiet.add(breaker);
    EXPECT_FALSE(quiet.run(g));
}

TEST(PassManagerTest, ShapePropertiesMustBeProducedFirst) {
    const Pass wants_form{"wants-form", "", {Property::LoopForm}, {}, {}, needs_nothing, pass_needs::kAnything};
    Function f = parse_one(kTwoEntries);
    PassManager pm;
    pm.add(wants_form);
    auto err = pm.run(f);
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "pass wants-form requires LoopForm, which no earlier pass produced");

    PassManager ok;
    ASSERT_FALSE(ok.add_pipeline("loop-form"));
    ok.add(wants_form);
    EXPECT_FALSE(ok.run(f));

    // A pass that changes the CFG loses LoopForm for the passes after it.
    const Pass cfg_editor{"cfg-editor", "", {}, {}, {Property::CfgValid}, [](Function&, PassContext&) {
                              return PassResult{true, ""};
                          },
                          pass_needs::kAnything};
    PassManager lost;
    ASSERT_FALSE(lost.add_pipeline("loop-form"));
    lost.add(cfg_editor);
    lost.add(wants_form);
    err = lost.run(f);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("requires LoopForm"), std::string::npos);
}

TEST(PassManagerTest, UnknownPassAndDumps) {
    PassManager pm;
    auto err = pm.add_pipeline("loop-form,no-such-pass");
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("unknown pass 'no-such-pass'"), std::string::npos);
    EXPECT_TRUE(pm.pipeline().empty());

    std::vector<std::string> dumped;
    PassManagerOptions o;
    o.dump_after = {"loop-form"};
    o.dump = [&](std::string_view pass, const Function& f) { dumped.push_back(std::string(pass) + "\n" + print_function(f)); };
    PassManager dumping(o);
    ASSERT_FALSE(dumping.add_pipeline("loops,loop-form,verify"));
    Function f = parse_one(kTwoEntries);
    ASSERT_FALSE(dumping.run(f));
    ASSERT_EQ(dumped.size(), 1u);
    EXPECT_EQ(dumped[0].rfind("loop-form\n", 0), 0u);
    EXPECT_NE(dumped[0].find("block4(v5: i32):"), std::string::npos) << dumped[0];
}

TEST(PassManagerTest, IrreducibleInputIsAnErrorNotACrash) {
    Function f = parse_one(R"(
function %g(i32) {
block0(v0: i32):
    brif v0, block1, block2
block1:
    brif v0, block2, block3
block2:
    jump block1
block3:
    return
}
)");
    PassManager pm;
    ASSERT_FALSE(pm.add_pipeline("loop-form"));
    auto err = pm.run(f);
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "pass loop-form: irreducible control flow: edge block2 -> block1");
}

const char* kStraight = R"(
function %s(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
)";

const char* kDiamondWithForwarder = R"(
function %d(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    v1 = iconst.i32 7
    jump block3(v1)
block2:
    jump block3(v0)
block3(v2: i32):
    return v2
}
)";

/// A loop laid out with its header last: the back edge is the only branch
/// to an earlier block, so the scan must look at every block.
const char* kLoopHeaderLast = R"(
function %l(i32) -> i32 {
block0(v0: i32):
    jump block2(v0)
block1(v1: i32):
    v2 = iconst.i32 1
    v3 = isub v1, v2
    jump block2(v3)
block2(v4: i32):
    brif v4, block1(v4), block3
block3:
    return v4
}
)";

TEST(PassNeedsTest, ScanFindsCyclesAndForwarders) {
    EXPECT_EQ(scan_pass_needs(parse_one(kStraight)), 0u);
    // kEntryBrif: the entry ends in a brif (split-entry).
    EXPECT_EQ(scan_pass_needs(parse_one(kDiamondWithForwarder)), pass_needs::kForwarder | pass_needs::kEntryBrif);
    EXPECT_EQ(scan_pass_needs(parse_one(kTwoEntries)), pass_needs::kCycle | pass_needs::kEntryBrif);
    EXPECT_EQ(scan_pass_needs(parse_one(kLoopHeaderLast)), pass_needs::kCycle | pass_needs::kForwarder);
    // Only the needs asked for (what the pass manager does after a change).
    EXPECT_EQ(scan_pass_needs(parse_one(kLoopHeaderLast), pass_needs::kCycle), pass_needs::kCycle);
    EXPECT_EQ(scan_pass_needs(parse_one(kLoopHeaderLast), pass_needs::kForwarder), pass_needs::kForwarder);
    EXPECT_EQ(scan_pass_needs(parse_one(kDiamondWithForwarder), pass_needs::kCycle | pass_needs::kEntryBrif),
              pass_needs::kEntryBrif);
    // A branch to its own block is a cycle.
    EXPECT_EQ(scan_pass_needs(parse_one(R"(
function %self(i32) {
block0(v0: i32):
    brif v0, block0(v0), block1
block1:
    return
}
)")),
              pass_needs::kCycle | pass_needs::kEntryBrif);
    // Conservative: a branch to an earlier block counts even where the
    // layout, not the CFG, makes it backward.
    EXPECT_EQ(scan_pass_needs(parse_one(R"(
function %back(i32) -> i32 {
block0(v0: i32):
    jump block2
block1:
    return v0
block2:
    jump block1
}
)")),
              pass_needs::kCycle | pass_needs::kForwarder);
}

TEST(PassManagerTest, LoopPassesSkipAcyclicFunctionsWithoutAnalyses) {
    PassManager pm(verifying());
    ASSERT_FALSE(pm.add_pipeline("loop-form,count-down,loop-form,licm,forward-blocks"));
    Function f = parse_one(kStraight);
    const std::string before = print_function(f);
    EXPECT_FALSE(pm.may_change(f));
    ASSERT_FALSE(pm.run(f));
    EXPECT_EQ(pm.skipped(), 5u);
    EXPECT_EQ(pm.context().computations(Property::CfgValid), 0u);
    EXPECT_EQ(pm.context().computations(Property::LoopsValid), 0u);
    // Vacuously in loop form, and unchanged.
    EXPECT_TRUE(pm.properties().contains(Property::LoopForm));
    EXPECT_EQ(print_function(f), before);

    // An acyclic function with a forwarder still gets forward-blocks.
    Function d = parse_one(kDiamondWithForwarder);
    EXPECT_TRUE(pm.may_change(d));
    ASSERT_FALSE(pm.run(d));
    EXPECT_EQ(pm.skipped(), 4u);
    EXPECT_EQ(pm.context().computations(Property::LoopsValid), 0u);
    EXPECT_EQ(print_function(d).find("block2:"), std::string::npos) << print_function(d);

    // A loop runs every loop pass. The preheader loop-form adds gets the
    // hoisted `iconst 1` from licm, so no forwarder is left for the last
    // pass: the rescan after each change sees that.
    Function l = parse_one(kTwoEntries);
    EXPECT_TRUE(pm.may_change(l));
    ASSERT_FALSE(pm.run(l));
    EXPECT_EQ(pm.skipped(), 1u);
    EXPECT_NE(print_function(l).find("iconst.i32 1\n    jump block1"), std::string::npos) << print_function(l);
    EXPECT_GE(pm.context().computations(Property::LoopsValid), 1u);
}

TEST(PassManagerTest, RepeatOfAPassThatChangedNothingIsSkipped) {
    PassManager pm(verifying());
    ASSERT_FALSE(pm.add_pipeline("loop-form,licm,loop-form"));
    // The first loop-form adds a preheader, and licm, which changes the
    // function, keeps loop form: the second loop-form, whose only work is
    // loop form (Pass::only_produces), is skipped too.
    Function l = parse_one(kTwoEntries);
    ASSERT_FALSE(pm.run(l));
    EXPECT_EQ(pm.repeats_skipped(), 1u);
    // On that output loop-form and licm change nothing: the second
    // loop-form meets the function the first one left alone.
    const std::string formed = print_function(l);
    ASSERT_FALSE(pm.run(l));
    EXPECT_EQ(pm.repeats_skipped(), 1u);
    EXPECT_EQ(pm.skipped(), 0u);
    EXPECT_EQ(print_function(l), formed);
    // Still in loop form, with the loops current for the block order.
    EXPECT_TRUE(pm.properties().contains(Property::LoopForm));
    EXPECT_NE(pm.context().current_loops(), nullptr);

    // A pass that drops loop form (count-down, when it rewrites a loop)
    // makes the next loop-form run.
    PassManager cd(verifying());
    ASSERT_FALSE(cd.add_pipeline("loop-form,count-down,loop-form"));
    Function c = parse_one(R"(
function %sum(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    v2 = iconst.i64 1
    jump block1(v1, v1)
block1(v3: i64, v4: i64):
    v5 = icmp slt v3, v0
    brif v5, block2, block3
block2:
    v6 = iadd v4, v0
    v7 = iadd v3, v2
    jump block1(v7, v6)
block3:
    return v4
}
)");
    ASSERT_FALSE(cd.run(c));
    EXPECT_NE(print_function(c).find("isub"), std::string::npos) << print_function(c);  // rewritten
    EXPECT_EQ(cd.repeats_skipped(), 0u);

    // The structurizer's passes edit the region tree, not the IR: the
    // second `structure` rebuilds what remove-break rewrote.
    PassManager st(verifying());
    ASSERT_FALSE(st.add_pipeline("structure,remove-break,structure"));
    ASSERT_FALSE(st.run(l));
    EXPECT_EQ(st.repeats_skipped(), 0u);
}

TEST(PassManagerTest, SkippedPassStillNeedsItsShapeProperties) {
    // licm without loop-form is a wrong pipeline for every function, the
    // acyclic ones included.
    PassManager pm;
    ASSERT_FALSE(pm.add_pipeline("licm"));
    Function f = parse_one(kStraight);
    auto err = pm.run(f);
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "pass licm requires LoopForm, which no earlier pass produced");
}

}  // namespace
}  // namespace heron
