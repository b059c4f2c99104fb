// Property tests of the register allocators (both algorithms, each test runs
// once per algorithm): random machine functions (random CFGs with loops,
// block parameters and every constraint kind) are allocated in several
// machine environments, from x86-64's 13+15 registers down to two per class,
// and every result must pass the checker. Also: a reused Context gives the
// same result as a fresh one, and a million-instruction function allocates
// (and checks) in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "codegen/regalloc/regalloc.h"
#include "codegen/regalloc/testing/dump.h"
#include "codegen/regalloc/testing/random_function.h"

namespace heron::ra {
namespace {

using testing::GenOptions;
using testing::RandomSource;

// Generator settings drawn per seed (testing::varied_options).
GenOptions varied_options(uint64_t seed) {
    RandomSource meta(seed * 7919 + 13);
    return testing::varied_options(meta);
}

class RegallocRandom : public ::testing::TestWithParam<Algorithm> {};

std::string algo_name(const ::testing::TestParamInfo<Algorithm>& info) {
    return info.param == Algorithm::LinearScan ? "LinearScan" : "SinglePass";
}

std::string describe(const Function& f) {
    return std::to_string(f.num_blocks()) + " blocks, " + std::to_string(f.num_insts()) + " insts, " +
           std::to_string(f.num_vregs) + " vregs";
}

TEST_P(RegallocRandom, FiveThousandFunctionsPassTheChecker) {
    const auto envs = testing::test_envs();
    Context ctx;
    Output out;
    uint64_t spills = 0, edits = 0, insts = 0;
    for (uint64_t seed = 1; seed <= 5000; ++seed) {
        const testing::NamedEnv& e = envs[seed % envs.size()];
        RandomSource rng(seed);
        GenOptions opt;
        if (seed % 7 == 0) {  // a few bigger ones
            opt.max_blocks = 40;
            opt.max_insts = 20;
        }
        if (seed % 2 == 0) opt = varied_options(seed);
        const Function f = testing::random_function(rng, e.env, opt);
        const std::string err = allocate(f, e.env, out, ctx, GetParam());
        ASSERT_EQ(err, "") << "seed " << seed << " env " << e.name << ": " << describe(f);
        const std::string bad = check(f, e.env, out);
        ASSERT_EQ(bad, "") << "seed " << seed << " env " << e.name << ": " << describe(f) << testing::dump(f, &out);
        spills += out.num_spill_slots;
        edits += out.edits.size();
        insts += f.num_insts();
    }
    RecordProperty("instructions", std::to_string(insts));
    RecordProperty("edits", std::to_string(edits));
    RecordProperty("spill_slots", std::to_string(spills));
    EXPECT_GT(spills, 0u) << "the tiny environments should force spills";
}

TEST_P(RegallocRandom, FuzzerBytesMakeValidFunctions) {
    const MachineEnv env = testing::tiny_env(3, 2);
    Context ctx;
    Output out;
    RandomSource seeds(99);
    for (int n = 0; n < 500; ++n) {
        std::vector<uint8_t> bytes(seeds.below(600));
        for (auto& b : bytes) b = static_cast<uint8_t>(seeds.below(256));
        RandomSource rng(bytes.data(), bytes.size());
        const Function f = testing::random_function(rng, env);
        ASSERT_EQ(allocate(f, env, out, ctx, GetParam()), "") << "input " << n;
        ASSERT_EQ(check(f, env, out), "") << "input " << n;
    }
}

TEST_P(RegallocRandom, ReusedContextGivesTheSameResult) {
    const MachineEnv env = testing::tiny_env(4, 3);
    Context shared;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
        RandomSource rng(seed);
        const Function f = testing::random_function(rng, env);
        Output a, b;
        Context fresh;
        ASSERT_EQ(allocate(f, env, a, shared, GetParam()), "");
        ASSERT_EQ(allocate(f, env, b, fresh, GetParam()), "");
        ASSERT_EQ(a.allocs.size(), b.allocs.size());
        for (size_t k = 0; k < a.allocs.size(); ++k) ASSERT_TRUE(a.allocs[k] == b.allocs[k]) << "seed " << seed;
        ASSERT_EQ(a.edits.size(), b.edits.size()) << "seed " << seed;
        ASSERT_EQ(a.num_spill_slots, b.num_spill_slots);
    }
}

TEST_P(RegallocRandom, MillionInstructionFunction) {
    const MachineEnv env = testing::x64_env();
    RandomSource rng(2024);
    GenOptions opt;
    opt.min_blocks = opt.max_blocks = 100000;
    opt.min_insts = 4;
    opt.max_insts = 10;
    opt.edge_window = 16;
    opt.far_use_percent = 5;
    opt.far_use_max_steps = 16;
    const Function f = testing::random_function(rng, env, opt);
    ASSERT_GE(f.num_insts(), 1000000u);
    Context ctx;
    Output out;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(allocate(f, env, out, ctx, GetParam()), "");
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_EQ(check(f, env, out), "");
    const auto t2 = std::chrono::steady_clock::now();
    const double alloc_s = std::chrono::duration<double>(t1 - t0).count();
    const double check_s = std::chrono::duration<double>(t2 - t1).count();
    RecordProperty("allocate_seconds", std::to_string(alloc_s));
    RecordProperty("check_seconds", std::to_string(check_s));
    // Informational only: speed is bench_regalloc's business (near-linear
    // from 1k to 1M instructions), not a time bound in a unit test.
    std::printf("%s: allocate %.2fs, check %.2fs, %u edits, %u spill slots\n", describe(f).c_str(), alloc_s, check_s,
                out.stats.edits, out.num_spill_slots);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, RegallocRandom, ::testing::Values(Algorithm::LinearScan, Algorithm::SinglePass),
                         algo_name);

}  // namespace
}  // namespace heron::ra
