// Cost of the loop analyses and passes per block, on two shapes from 1k to
// 100k blocks (issue #5, "Measures"):
//
//   nest(d)   d loops nested in each other, 2d + 2 blocks: header h(i)
//             branches on to h(i+1) or to its latch t(i); t(i) loops back
//             or falls to t(i-1). No header has a preheader and every latch
//             block is also the exit of the next inner loop, so LoopForm has
//             work on every level.
//   chain(k)  k loops one after the other, 3k + 2 blocks: each header has
//             two latches and is entered by a brif.
//
// Every loop body holds one invariant `iadd n, n` for LICM. The counter
// "per_block" is the time per block of the function (shown as e.g. 40n =
// 40 ns). Passes run on a fresh copy each iteration; the copy is not timed.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/time_pipeline.h"
#include "codegen/analysis/cfg.h"
#include "codegen/analysis/counted_loops.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/cursor.h"
#include "codegen/opt/licm.h"
#include "codegen/opt/loop_form.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/verifier/verifier.h"

namespace {

using namespace heron;

using Args = std::vector<Value>;

Function make_function() {
    Function f;
    f.signature.params = {AbiParam(types::I32)};
    f.signature.returns = {AbiParam(types::I32)};
    return f;
}

Function nest(uint32_t d) {
    Function f = make_function();
    FuncCursor cur(f);
    const Block entry = cur.insert_block();
    const Value n = f.dfg.append_block_param(entry, types::I32);
    std::vector<Block> h(d), t(d);
    for (uint32_t i = 0; i < d; ++i) h[i] = cur.insert_block();
    for (uint32_t i = d; i-- > 0;) t[i] = cur.insert_block();
    const Block exit = cur.insert_block();
    cur.at_bottom(entry);
    cur.ins().jump(h[0], {n});
    for (uint32_t i = 0; i < d; ++i) {
        cur.at_bottom(h[i]);
        const Value x = f.dfg.append_block_param(h[i], types::I32);
        const Value y = cur.ins().iadd_imm(x, 1);
        cur.ins().iadd(n, n);
        const Block next = i + 1 < d ? h[i + 1] : t[d - 1];
        cur.ins().brif(y, next, Args{y}, t[i], Args{y});
    }
    for (uint32_t i = 0; i < d; ++i) {
        cur.at_bottom(t[i]);
        const Value z = f.dfg.append_block_param(t[i], types::I32);
        cur.ins().brif(z, h[i], Args{z}, i > 0 ? t[i - 1] : exit, Args{z});
    }
    cur.at_bottom(exit);
    cur.ins().return_({f.dfg.append_block_param(exit, types::I32)});
    return f;
}

Function chain(uint32_t k) {
    Function f = make_function();
    FuncCursor cur(f);
    const Block entry = cur.insert_block();
    const Value n = f.dfg.append_block_param(entry, types::I32);
    std::vector<Block> h(k), b(k), c(k);
    for (uint32_t i = 0; i < k; ++i) {
        h[i] = cur.insert_block();
        b[i] = cur.insert_block();
        c[i] = cur.insert_block();
    }
    const Block exit = cur.insert_block();
    cur.at_bottom(entry);
    cur.ins().jump(h[0], {n});
    for (uint32_t i = 0; i < k; ++i) {
        cur.at_bottom(h[i]);
        const Value x = f.dfg.append_block_param(h[i], types::I32);
        const Value y = cur.ins().iadd_imm(x, 1);
        const Value go = cur.ins().icmp(IntCC::Slt, y, n);
        cur.ins().brif(go, b[i], Args{}, i + 1 < k ? h[i + 1] : exit, Args{y});
        cur.at_bottom(b[i]);
        cur.ins().iadd(n, n);
        cur.ins().brif(y, h[i], Args{y}, c[i], Args{});
        cur.at_bottom(c[i]);
        cur.ins().jump(h[i], {y});
    }
    cur.at_bottom(exit);
    cur.ins().return_({f.dfg.append_block_param(exit, types::I32)});
    return f;
}

Function shape(benchmark::State& state) {
    const auto blocks = static_cast<uint32_t>(state.range(1));
    Function f = state.range(0) == 0 ? nest((blocks - 2) / 2) : chain((blocks - 2) / 3);
    VerifierErrors errors;
    if (!verify_function(f, errors)) state.SkipWithError(format_verifier_errors(errors).c_str());
    return f;
}

void report(benchmark::State& state, const Function& f) {
    state.counters["per_block"] = benchmark::Counter(static_cast<double>(f.dfg.num_blocks()) * state.iterations(),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(state.range(0) == 0 ? "nest" : "chain");
}

void BM_Analyses(benchmark::State& state) {
    const Function f = shape(state);
    ControlFlowGraph cfg;
    DominatorTree dt;
    LoopAnalysis loops;
    for (auto _ : state) {
        cfg.compute(f);
        dt.compute(f, cfg);
        benchmark::DoNotOptimize(loops.compute(f, cfg, dt));
    }
    report(state, f);
}

void BM_LoopAnalysisOnly(benchmark::State& state) {
    const Function f = shape(state);
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    for (auto _ : state) benchmark::DoNotOptimize(loops.compute(f, cfg, dt));
    report(state, f);
}

void BM_CountedLoops(benchmark::State& state) {
    const Function f = shape(state);
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    loops.compute(f, cfg, dt);
    CountedLoops counted;
    for (auto _ : state) {
        counted.compute(f, loops);
        benchmark::DoNotOptimize(counted.all().size());
    }
    report(state, f);
}

/// `pipeline` on a fresh copy of the shape per iteration (time_pipeline.h).
void run_pipeline(benchmark::State& state, const char* pipeline) {
    const Function original = shape(state);
    time_pipeline(state, original, pipeline);
    report(state, original);
}

void BM_LoopForm(benchmark::State& state) { run_pipeline(state, "loop-form"); }
void BM_LoopFormLicm(benchmark::State& state) { run_pipeline(state, "loop-form,licm"); }

void shapes(benchmark::internal::Benchmark* b) {
    for (int s : {0, 1}) {
        for (int n : {1000, 10000, 100000}) b->Args({s, n});
    }
    b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Analyses)->Apply(shapes);
BENCHMARK(BM_LoopAnalysisOnly)->Apply(shapes);
BENCHMARK(BM_CountedLoops)->Apply(shapes);
BENCHMARK(BM_LoopForm)->Apply(shapes);
// LICM moves each instruction straight to the outermost preheader it may
// reach (licm.cpp), so the nest, whose every level hoists an invariant out
// of all levels, costs near-linear time like the chain.
BENCHMARK(BM_LoopFormLicm)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
