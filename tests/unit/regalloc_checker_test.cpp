// The checker must catch wrong allocations: correct outputs are corrupted
// (two allocations swapped, an edit dropped or redirected, a constraint
// broken, a value left in a clobbered register, a stack-to-stack move, an
// edge move missing) and each must be reported. Also, the parallel-move
// sequencer is checked against a simulation of parallel semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "codegen/regalloc/moves.h"
#include "codegen/regalloc/regalloc.h"
#include "codegen/regalloc/testing/dump.h"
#include "codegen/regalloc/testing/function_builder.h"
#include "codegen/regalloc/testing/random_function.h"

namespace heron::ra {
namespace {

using testing::FunctionBuilder;

constexpr PReg kRax(0, RegClass::Int), kRdx(2, RegClass::Int), kRbx(3, RegClass::Int), kRdi(7, RegClass::Int);

struct Allocated {
    Function f;
    Output out;
};

Allocated allocated(const Function& f, const MachineEnv& env) {
    Context ctx;
    Allocated a{f, {}};
    EXPECT_EQ(allocate(a.f, env, a.out, ctx), "");
    EXPECT_EQ(check(a.f, env, a.out), "") << testing::dump(a.f, &a.out);
    return a;
}

// a, h, d; (q, r) = div a:h / d, with a live afterwards; t = q + a + r.
Function division_function() {
    FunctionBuilder fb;
    const uint32_t b = fb.block();
    const VReg a = fb.int_vreg(), h = fb.int_vreg(), d = fb.int_vreg(), q = fb.int_vreg(), r = fb.int_vreg(),
               s = fb.int_vreg(), t = fb.int_vreg();
    fb.inst(b, {Operand::def(a)});
    fb.inst(b, {Operand::def(h)});
    fb.inst(b, {Operand::def(d)});
    fb.inst(b, {Operand::use_fixed(a, kRax), Operand::use_fixed(h, kRdx), Operand::use(d), Operand::def_fixed(q, kRax),
                Operand::def_fixed(r, kRdx)});
    fb.inst(b, {Operand::use(q), Operand::use(a), Operand::def_reuse(s, 0)});
    fb.inst(b, {Operand::use(s), Operand::use(r), Operand::def_reuse(t, 0)});
    fb.ret(b, {Operand::use_fixed(t, kRax)});
    return fb.finish();
}

uint32_t op(const Function& f, uint32_t inst, uint32_t k) { return f.operands_begin[inst] + k; }

TEST(RegallocChecker, AcceptsTheAllocatorsOutput) {
    const MachineEnv env = testing::x64_env();
    Allocated a = allocated(division_function(), env);
    EXPECT_EQ(check(a.f, env, a.out), "");
}

TEST(RegallocChecker, SwappedUseAllocations) {
    const MachineEnv env = testing::x64_env();
    Allocated a = allocated(division_function(), env);
    // inst5 reads s and r from two different registers.
    std::swap(a.out.allocs[op(a.f, 5, 0)], a.out.allocs[op(a.f, 5, 1)]);
    a.out.allocs[op(a.f, 5, 2)] = a.out.allocs[op(a.f, 5, 0)];  // keep the Reuse constraint itself intact
    const std::string err = check(a.f, env, a.out);
    EXPECT_NE(err.find("inst5"), std::string::npos) << err;
}

TEST(RegallocChecker, DroppedEdit) {
    const MachineEnv env = testing::x64_env();
    const Allocated good = allocated(division_function(), env);
    ASSERT_FALSE(good.out.edits.empty());
    // Every edit here is needed: a is copied into rax (and kept elsewhere),
    // the results leave rax/rdx... dropping any one must be caught.
    for (size_t k = 0; k < good.out.edits.size(); ++k) {
        Allocated a = good;
        a.out.edits.erase(a.out.edits.begin() + static_cast<long>(k));
        EXPECT_NE(check(a.f, env, a.out), "") << "edit " << k << " dropped\n" << testing::dump(a.f, &a.out);
    }
}

TEST(RegallocChecker, RedirectedEdit) {
    const MachineEnv env = testing::x64_env();
    const Allocated good = allocated(division_function(), env);
    for (size_t k = 0; k < good.out.edits.size(); ++k) {
        Allocated a = good;
        Edit& e = a.out.edits[k];
        if (!e.to.is_reg()) continue;
        e.to = Allocation::reg(e.to.as_reg() == kRbx ? kRdi : kRbx);
        EXPECT_NE(check(a.f, env, a.out), "") << "edit " << k << " redirected\n" << testing::dump(a.f, &a.out);
    }
}

TEST(RegallocChecker, BrokenConstraints) {
    const MachineEnv env = testing::x64_env();
    const Allocated good = allocated(division_function(), env);
    {  // a Fixed operand elsewhere
        Allocated a = good;
        a.out.allocs[op(a.f, 3, 0)] = Allocation::reg(kRbx);
        EXPECT_NE(check(a.f, env, a.out).find("Fixed"), std::string::npos);
    }
    {  // a Reuse def not in its input's register
        Allocated a = good;
        Allocation& d = a.out.allocs[op(a.f, 4, 2)];
        d = Allocation::reg(d.as_reg() == kRbx ? kRdi : kRbx);
        EXPECT_NE(check(a.f, env, a.out).find("Reuse"), std::string::npos);
    }
    {  // a Reg operand on the stack
        Allocated a = good;
        a.out.num_spill_slots = std::max(a.out.num_spill_slots, 1u);
        a.out.allocs[op(a.f, 3, 2)] = Allocation::stack(0);
        EXPECT_NE(check(a.f, env, a.out).find("Reg operand"), std::string::npos);
    }
    {  // the scratch register as an operand
        Allocated a = good;
        a.out.allocs[op(a.f, 3, 2)] = Allocation::reg(env.scratch[0]);
        EXPECT_NE(check(a.f, env, a.out), "");
    }
    {  // a stack-to-stack edit
        Allocated a = good;
        a.out.num_spill_slots = std::max(a.out.num_spill_slots, 2u);
        a.out.edits.insert(a.out.edits.begin(), Edit{ProgPoint::before(0), Allocation::stack(0), Allocation::stack(1),
                                                      RegClass::Int});
        EXPECT_NE(check(a.f, env, a.out).find("stack-to-stack"), std::string::npos);
    }
}

TEST(RegallocChecker, EarlyDefSharingWithAUse) {
    const MachineEnv env = testing::x64_env();
    FunctionBuilder fb;
    const uint32_t b = fb.block();
    const VReg x = fb.int_vreg(), y = fb.int_vreg(), w = fb.int_vreg();
    fb.inst(b, {Operand::def(x)});
    fb.inst(b, {Operand::def(y)});
    fb.inst(b, {Operand::use(x), Operand::use(y), Operand::def_early(w)});
    fb.ret(b, {Operand::use_fixed(w, kRax)});
    Allocated a = allocated(fb.finish(), env);
    a.out.allocs[op(a.f, 2, 2)] = a.out.allocs[op(a.f, 2, 0)];
    EXPECT_NE(check(a.f, env, a.out).find("Early def shares"), std::string::npos);
}

TEST(RegallocChecker, ValueLeftInAClobberedRegister) {
    const MachineEnv env = testing::x64_env();
    FunctionBuilder fb;
    const uint32_t b = fb.block();
    const VReg x = fb.int_vreg(), r = fb.int_vreg(), s = fb.int_vreg();
    fb.inst(b, {Operand::def(x)});
    fb.inst(b, {Operand::def_fixed(r, kRax)}, 0, testing::caller_saved(env));
    fb.inst(b, {Operand::use(r), Operand::use(x), Operand::def_reuse(s, 0)});
    fb.ret(b, {Operand::use_fixed(s, kRax)});
    const Function f = fb.finish();
    // Hand-made output: x stays in rdx across the call, which clobbers rdx.
    Output out;
    out.allocs = {Allocation::reg(kRdx), Allocation::reg(kRax), Allocation::reg(kRax), Allocation::reg(kRdx),
                  Allocation::reg(kRax), Allocation::reg(kRax)};
    const std::string err = check(f, env, out);
    EXPECT_NE(err.find("holds no known value"), std::string::npos) << err;
    // Moving x to rbx (callee-saved) around the call makes it right.
    out.edits = {{ProgPoint::before(1), Allocation::reg(kRdx), Allocation::reg(kRbx), RegClass::Int}};
    out.allocs[3] = Allocation::reg(kRbx);
    EXPECT_EQ(check(f, env, out), "");
}

TEST(RegallocChecker, MissingEdgeMoves) {
    // A loop whose back edge swaps its two parameters: dropping the moves on
    // the back edge must be caught, though the first iteration is fine.
    const MachineEnv env = testing::x64_env();
    FunctionBuilder fb;
    const uint32_t b0 = fb.block(), b1 = fb.block(1), b2 = fb.block(1), b3 = fb.block();
    const VReg a = fb.int_vreg(), c = fb.int_vreg(), x = fb.param(b1), y = fb.param(b1), cond = fb.int_vreg(),
               r = fb.int_vreg();
    fb.inst(b0, {Operand::def(a)});
    fb.inst(b0, {Operand::def(c)});
    fb.jump(b0, b1, {a, c});
    fb.inst(b1, {Operand::def(cond)});
    fb.branch(b1, cond, b2, {}, b3, {});
    const uint32_t latch = fb.inst_index(b2, 0);
    fb.jump(b2, b1, {y, x});
    fb.inst(b3, {Operand::use(x), Operand::use(y), Operand::def_reuse(r, 0)});
    fb.ret(b3, {Operand::use_fixed(r, kRax)});
    const Allocated good = allocated(fb.finish(), env);
    Allocated bad = good;
    std::erase_if(bad.out.edits, [&](const Edit& e) { return e.point.inst() == latch; });
    ASSERT_LT(bad.out.edits.size(), good.out.edits.size()) << testing::dump(good.f, &good.out);
    EXPECT_NE(check(bad.f, env, bad.out), "");
}

TEST(RegallocChecker, RandomCorruptionsAreMostlyCaught) {
    // Corrupting a random operand allocation of a random function: a use
    // moved to another register that does not hold its value must be caught.
    const MachineEnv env = testing::tiny_env(4, 3);
    Context ctx;
    int caught = 0, tried = 0;
    for (uint64_t seed = 1; seed <= 300; ++seed) {
        testing::RandomSource rng(seed);
        const Function f = testing::random_function(rng, env);
        Output out;
        ASSERT_EQ(allocate(f, env, out, ctx), "");
        ASSERT_EQ(check(f, env, out), "");
        for (int k = 0; k < 5; ++k) {
            const uint32_t o = rng.below(static_cast<uint32_t>(f.operands.size()));
            const Operand& opd = f.operands[o];
            if (opd.kind != OperandKind::Use || !out.allocs[o].is_reg()) continue;
            const auto& regs = env.allocatable[static_cast<unsigned>(opd.vreg.cls())];
            Output bad = out;
            bad.allocs[o] = Allocation::reg(regs[(rng.below(static_cast<uint32_t>(regs.size() - 1)) + 1 +
                                                  std::find(regs.begin(), regs.end(), out.allocs[o].as_reg()) -
                                                  regs.begin()) %
                                                 regs.size()]);
            ++tried;
            caught += check(f, env, bad) != "";
        }
    }
    // Not every corruption is wrong (another register may hold the same
    // value), but nearly all are.
    EXPECT_GT(caught * 10, tried * 9) << caught << " of " << tried;
}

// --- Parallel moves ------------------------------------------------------------

uint64_t key(Allocation a) { return uint64_t{static_cast<uint8_t>(a.kind)} << 32 | a.index; }

TEST(RegallocMoves, SequencesMatchParallelSemantics) {
    const MachineEnv env = testing::tiny_env(6, 4);
    testing::RandomSource rng(7);
    uint32_t emergency_uses = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        // Random locations: registers of both classes and shared stack slots.
        std::vector<std::pair<Allocation, RegClass>> pool;
        for (PReg r : env.allocatable[0]) pool.push_back({Allocation::reg(r), RegClass::Int});
        for (PReg r : env.allocatable[1]) pool.push_back({Allocation::reg(r), RegClass::Float});
        const uint32_t slots = 6;
        for (uint32_t s = 0; s < slots; ++s) pool.push_back({Allocation::stack(s), RegClass::Int});
        // A random partial map dest <- src, each dest once, classes matching for registers.
        ParallelMoves pm;
        std::map<uint64_t, uint64_t> expect;  // dest key -> src key
        std::vector<bool> used(pool.size(), false);
        const uint32_t n = rng.between(1, 10);
        for (uint32_t k = 0; k < n; ++k) {
            const uint32_t d = rng.below(static_cast<uint32_t>(pool.size()));
            if (used[d]) continue;
            const RegClass cls = pool[d].first.is_stack() ? static_cast<RegClass>(rng.below(2)) : pool[d].second;
            std::vector<uint32_t> srcs;
            for (uint32_t s = 0; s < pool.size(); ++s)
                if (pool[s].first.is_stack() || pool[s].second == cls) srcs.push_back(s);
            const uint32_t s = srcs[rng.below(static_cast<uint32_t>(srcs.size()))];
            used[d] = true;
            pm.add(pool[s].first, pool[d].first, cls);
            if (s != d) expect[key(pool[d].first)] = key(pool[s].first);
        }
        std::vector<Edit> edits;
        uint32_t emergency = kNoSlot, num_slots = slots;
        pm.resolve(env, ProgPoint::before(0), emergency, num_slots, edits);
        emergency_uses += emergency != kNoSlot;
        // Simulate: every location starts holding its own name.
        std::map<uint64_t, uint64_t> val;
        auto get = [&](Allocation a) {
            auto it = val.find(key(a));
            return it == val.end() ? key(a) : it->second;
        };
        for (const Edit& e : edits) {
            ASSERT_FALSE(e.from.is_stack() && e.to.is_stack());
            if (e.from.is_reg()) {
                ASSERT_EQ(e.from.as_reg().cls, e.cls);
            }
            if (e.to.is_reg()) {
                ASSERT_EQ(e.to.as_reg().cls, e.cls);
            }
            val[key(e.to)] = get(e.from);
        }
        for (auto [d, s] : expect) ASSERT_EQ(get(Allocation{static_cast<Allocation::Kind>(d >> 32), static_cast<uint32_t>(d)}), s)
            << "trial " << trial;
        // Locations that are neither written by the parallel move nor
        // scratch/emergency keep their values.
        for (auto& [loc, cls] : pool)
            if (!expect.count(key(loc))) {
                ASSERT_EQ(get(loc), key(loc)) << "trial " << trial;
            }
    }
    EXPECT_GT(emergency_uses, 0u) << "some stack cycles need the extra slot";
}

TEST(RegallocMoves, SwapOfTwoSlotsUsesScratchAndOneExtraSlot) {
    const MachineEnv env = testing::tiny_env(2, 1);
    ParallelMoves pm;
    pm.add(Allocation::stack(0), Allocation::stack(1), RegClass::Int);
    pm.add(Allocation::stack(1), Allocation::stack(0), RegClass::Int);
    std::vector<Edit> edits;
    uint32_t emergency = kNoSlot, num_slots = 2;
    pm.resolve(env, ProgPoint::before(3), emergency, num_slots, edits);
    EXPECT_EQ(emergency, 2u);
    EXPECT_EQ(num_slots, 3u);
    EXPECT_EQ(edits.size(), 6u);  // save, move, restore: each through the scratch register
}

// c = const (kRemat); an instruction clobbering every register; use c.
// c cannot stay in a register: it is rematerialized, never stored.
Function remat_function() {
    FunctionBuilder fb;
    const uint32_t b = fb.block();
    const VReg c = fb.int_vreg(), t = fb.int_vreg();
    fb.inst(b, {Operand::def(c)}, inst_flags::kRemat);
    PRegSet all;
    for (uint8_t r = 0; r < 16; ++r) all.add(PReg(r, RegClass::Int));
    fb.inst(b, {}, 0, all);
    fb.inst(b, {Operand::use(c), Operand::def_reuse(t, 0)});
    fb.ret(b, {Operand::use_fixed(t, kRax)});
    return fb.finish();
}

TEST(RegallocChecker, RematerializedConstants) {
    const MachineEnv env = testing::x64_env();
    const Allocated good = allocated(remat_function(), env);
    size_t remat = 0;
    for (const Edit& e : good.out.edits) {
        remat += e.from.is_remat();
        EXPECT_FALSE(e.to.is_stack()) << "a rematerializable value is never stored\n" << testing::dump(good.f, &good.out);
    }
    ASSERT_EQ(remat, 1u) << testing::dump(good.f, &good.out);
    const size_t k = static_cast<size_t>(std::find_if(good.out.edits.begin(), good.out.edits.end(),
                                                      [](const Edit& e) { return e.from.is_remat(); }) -
                                         good.out.edits.begin());
    {
        // Rematerialized from an instruction that is not kRemat.
        Allocated a = good;
        a.out.edits[k].from = Allocation::remat(2);
        EXPECT_NE(check(a.f, env, a.out).find("bad rematerialization"), std::string::npos);
    }
    {
        // Into another register than the one the use reads.
        Allocated a = good;
        PReg other = a.out.edits[k].to.as_reg() == kRbx ? kRdi : kRbx;
        a.out.edits[k].to = Allocation::reg(other);
        EXPECT_NE(check(a.f, env, a.out).find("inst2"), std::string::npos) << testing::dump(a.f, &a.out);
    }
}

TEST(RegallocMoves, KeyedIndicesSortByKeyKeepingTheOrderAdded) {
    // Against std::stable_sort by key, for the comparison sort (short
    // lists) and the radix sort, with keys of one to four 11-bit digits
    // (a key range of 4 needs one pass, 2^32 - 1 three), many equal keys.
    testing::RandomSource rng(11);
    std::vector<uint64_t> order, tmp;
    for (uint32_t max_key : {3u, 2047u, 2048u, 5000u, 1u << 22, 0xffffffffu}) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{700}, size_t{5000}}) {
            for (size_t radix_from : {size_t{1}, size_t{1024}}) {
                std::vector<uint32_t> keys(n);
                for (auto& k : keys) k = rng.chance(30) ? max_key : rng.below(max_key < 4096 ? max_key + 1 : 4096) * (max_key / 4096 + 1);
                order.resize(n);
                for (size_t i = 0; i < n; ++i) order[i] = uint64_t{keys[i]} << 32 | i;
                std::vector<uint32_t> expect(n);
                for (uint32_t i = 0; i < n; ++i) expect[i] = i;
                std::stable_sort(expect.begin(), expect.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
                sort_keyed_indices(order, tmp, radix_from);
                ASSERT_EQ(order.size(), n);
                for (size_t i = 0; i < n; ++i) {
                    ASSERT_EQ(static_cast<uint32_t>(order[i]), expect[i]) << "entry " << i << " of " << n << ", keys up to " << max_key;
                    ASSERT_EQ(order[i] >> 32, keys[expect[i]]);
                }
            }
        }
    }
}

// Moves come in a few ascending runs, which are merged (from 32 entries,
// one to eight runs; from nine, the sorts above): against std::stable_sort
// by key, with equal keys in different runs, short runs and long ones.
TEST(RegallocMoves, KeyedIndicesMergeAFewAscendingRuns) {
    testing::RandomSource rng(12);
    std::vector<uint64_t> order, tmp;
    for (size_t runs : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{8}, size_t{9}, size_t{40}}) {
        for (size_t run_len : {size_t{1}, size_t{3}, size_t{5}, size_t{250}}) {
            std::vector<uint32_t> keys;
            for (size_t r = 0; r < runs; ++r) {
                std::vector<uint32_t> run(run_len);
                for (auto& k : run) k = rng.below(run_len * 2);
                std::sort(run.begin(), run.end());
                keys.insert(keys.end(), run.begin(), run.end());
            }
            const size_t n = keys.size();
            order.resize(n);
            for (size_t i = 0; i < n; ++i) order[i] = uint64_t{keys[i]} << 32 | i;
            std::vector<uint32_t> expect(n);
            for (uint32_t i = 0; i < n; ++i) expect[i] = i;
            std::stable_sort(expect.begin(), expect.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
            sort_keyed_indices(order, tmp);
            ASSERT_EQ(order.size(), n);
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(static_cast<uint32_t>(order[i]), expect[i]) << runs << " runs of " << run_len << ", entry " << i;
        }
    }
}

}  // namespace
}  // namespace heron::ra
