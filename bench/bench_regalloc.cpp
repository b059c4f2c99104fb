// Register allocation time per instruction on random machine functions of
// 1k, 10k, 100k and 1M instructions (x86-64 environment: 13 int + 15 float
// registers, calls, fixed operands, loops with block parameters). The
// allocator is meant to be near-linear: ns/inst should stay roughly flat
// across sizes. The checker's cost is measured too, as it runs in tests and
// under fuzzing.
#include <benchmark/benchmark.h>

#include <map>

#include "codegen/regalloc/regalloc.h"
#include "codegen/regalloc/testing/random_function.h"

namespace heron::ra {
namespace {

// One function per size, built once.
const Function& function_of_size(int64_t insts) {
    static std::map<int64_t, Function> cache;
    auto it = cache.find(insts);
    if (it != cache.end()) return it->second;
    testing::RandomSource rng(static_cast<uint64_t>(insts));
    testing::GenOptions opt;
    opt.min_insts = 4;
    opt.max_insts = 10;
    opt.edge_window = 16;  // local edges and properly nested loops, as in real code
    opt.far_use_percent = 5;
    opt.far_use_max_steps = 16;
    // About 8 instructions per block, plus the blocks on split critical edges.
    opt.min_blocks = opt.max_blocks = static_cast<uint32_t>(std::max<int64_t>(1, insts * 10 / 105));
    return cache.emplace(insts, testing::random_function(rng, testing::x64_env(), opt)).first->second;
}

void BM_Allocate(benchmark::State& state) {
    const Function& f = function_of_size(state.range(0));
    const MachineEnv env = testing::x64_env();
    Context ctx;
    Output out;
    allocate(f, env, out, ctx);  // contexts are reused: measure with its memory in place
    for (auto _ : state) {
        std::string err = allocate(f, env, out, ctx);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(out.edits.data());
    }
    state.counters["insts"] = f.num_insts();
    // Seconds per instruction (printed with an SI prefix: 1.5u = 1.5 us).
    state.counters["time/inst"] = benchmark::Counter(static_cast<double>(f.num_insts()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
    state.counters["edits/inst"] = static_cast<double>(out.edits.size()) / f.num_insts();
    state.counters["slots"] = out.num_spill_slots;
}
BENCHMARK(BM_Allocate)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_Check(benchmark::State& state) {
    const Function& f = function_of_size(state.range(0));
    const MachineEnv env = testing::x64_env();
    Context ctx;
    Output out;
    if (!allocate(f, env, out, ctx).empty()) state.SkipWithError("allocation failed");
    for (auto _ : state) {
        std::string err = check(f, env, out);
        if (!err.empty()) state.SkipWithError(err.c_str());
    }
    // Seconds per instruction (printed with an SI prefix: 1.5u = 1.5 us).
    state.counters["time/inst"] = benchmark::Counter(static_cast<double>(f.num_insts()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}
BENCHMARK(BM_Check)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace heron::ra

BENCHMARK_MAIN();
