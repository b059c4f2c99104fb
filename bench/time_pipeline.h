// Shared by the benchmarks: a pass pipeline timed on fresh copies of one
// function.
#pragma once

#include <benchmark/benchmark.h>

#include "codegen/ir/function.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

/// Runs `pipeline` through one pass manager kept across iterations
/// (verifier off: it is measured elsewhere) on a fresh copy of `original`
/// per iteration; the copy is not timed.
inline void time_pipeline(benchmark::State& state, const Function& original, const char* pipeline) {
    PassManagerOptions o;
    o.verify_each = false;
    PassManager pm(o);
    if (pm.add_pipeline(pipeline)) state.SkipWithError("bad pipeline");
    for (auto _ : state) {
        state.PauseTiming();
        Function f = original;
        state.ResumeTiming();
        if (pm.run(f)) state.SkipWithError("pipeline failed");
        benchmark::DoNotOptimize(f.dfg.num_blocks());
    }
}

}  // namespace heron
