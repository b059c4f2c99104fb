// Structurizer throughput, in ns per block (the `ns_per_block` counter), over
// functions of 1k to 100k blocks. Each iteration runs the whole pipeline a
// consumer runs: CFG, dominator tree, loop analysis and region tree, with a
// Structurizer and a RegionTree reused across iterations.
//
//   units/N     a chain of loops, each holding a diamond and leaving to the
//               next loop or to its own return block (two exit targets, so
//               an exit variable and a dispatch per loop): wide and shallow
//   nest/N      loop nests up to 5,000 levels deep one after the other
//               (each level a header and a latch that exits to the level
//               above): narrow and deep
//   no_break/N  units/N, then remove_break_continue
//
// Near-linear means ns_per_block (thread CPU time) stays about flat from 1k
// to 100k. remove_break_continue nests the rest of a body under each break,
// so no_break stops at kMaxNesting levels (an error, reported as such).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/opt/structurize.h"

namespace heron {
namespace {

struct Built {
    std::unique_ptr<Function> func;
    Value cond;
    std::vector<Block> blocks;
};

Built start(uint32_t n) {
    Signature sig(CallConv::SystemV);
    sig.params = {AbiParam(types::I32)};
    sig.returns = {AbiParam(types::I32)};
    Built b{std::make_unique<Function>(ExternalName::testcase("bench"), sig), Value(), {}};
    for (uint32_t i = 0; i < n; ++i) {
        b.blocks.push_back(b.func->dfg.make_block());
        b.func->layout.append_block(b.blocks.back());
    }
    b.cond = b.func->dfg.append_block_param(b.blocks[0], types::I32);
    return b;
}

/// Entry, then units of six blocks: header h -> (top | next header);
/// top -> a | b -> m; m -> (h | ret); ret returns. The last header's exit
/// returns.
std::unique_ptr<Function> units(uint32_t blocks) {
    const uint32_t count = std::max<uint32_t>(1, (blocks - 2) / 6);
    Built b = start(2 + 6 * count);
    FuncCursor cur(*b.func);
    cur.at_bottom(b.blocks[0]);
    cur.ins().jump(b.blocks[1]);
    for (uint32_t u = 0; u < count; ++u) {
        Block h = b.blocks[1 + 6 * u], top = b.blocks[2 + 6 * u], a = b.blocks[3 + 6 * u],
              c = b.blocks[4 + 6 * u], m = b.blocks[5 + 6 * u], ret = b.blocks[6 + 6 * u];
        Block next = b.blocks[7 + 6 * u < b.blocks.size() ? 7 + 6 * u : b.blocks.size() - 1];
        cur.at_bottom(h);
        cur.ins().brif(b.cond, top, next);
        cur.at_bottom(top);
        cur.ins().brif(b.cond, a, c);
        cur.at_bottom(a);
        cur.ins().jump(m);
        cur.at_bottom(c);
        cur.ins().jump(m);
        cur.at_bottom(m);
        cur.ins().brif(b.cond, h, ret);
        cur.at_bottom(ret);
        cur.ins().return_({b.cond});
    }
    cur.at_bottom(b.blocks.back());
    cur.ins().return_({b.cond});
    return std::move(b.func);
}

/// Entry, then nests of `depth` loops one after the other, a return block.
/// A nest: headers h1..hk, latches tk..t1; hi -> h(i+1), hk -> (hk | tk),
/// ti -> (hi | t(i-1)), t1 -> (h1 | the next nest).
std::unique_ptr<Function> nest(uint32_t blocks, uint32_t depth) {
    const uint32_t k = std::max<uint32_t>(1, std::min(depth, (blocks - 2) / 2));
    const uint32_t nests = std::max<uint32_t>(1, (blocks - 2) / (2 * k));
    Built b = start(2 * k * nests + 2);
    const Block exit = b.blocks.back();
    FuncCursor cur(*b.func);
    cur.at_bottom(b.blocks[0]);
    cur.ins().jump(b.blocks[1]);
    for (uint32_t n = 0; n < nests; ++n) {
        const uint32_t base = 1 + 2 * k * n;
        auto h = [&](uint32_t i) { return b.blocks[base + i - 1]; };      // 1..k
        auto t = [&](uint32_t i) { return b.blocks[base + k + i - 1]; };  // 1..k
        const Block next = n + 1 < nests ? b.blocks[base + 2 * k] : exit;
        for (uint32_t i = 1; i < k; ++i) {
            cur.at_bottom(h(i));
            cur.ins().jump(h(i + 1));
        }
        cur.at_bottom(h(k));
        cur.ins().brif(b.cond, h(k), t(k));
        for (uint32_t i = 1; i <= k; ++i) {
            cur.at_bottom(t(i));
            cur.ins().brif(b.cond, h(i), i == 1 ? next : t(i - 1));
        }
    }
    cur.at_bottom(exit);
    cur.ins().return_({b.cond});
    return std::move(b.func);
}

/// CPU time of this thread: the machine is shared, wall time is noise.
double thread_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

void run(benchmark::State& state, const Function& f, bool no_break) {
    Structurizer s;
    RegionTree tree;
    double ns = 0;
    for (auto _ : state) {
        const double t0 = thread_ns();
        auto err = s.run(f, tree);
        if (!err && no_break) err = remove_break_continue(tree);
        ns += thread_ns() - t0;
        if (err) {
            state.SkipWithError(err->message.c_str());
            break;
        }
        benchmark::DoNotOptimize(tree.stmts.data());
    }
    const double blocks = f.dfg.num_blocks();
    state.counters["blocks"] = blocks;
    state.counters["ns_per_block"] = ns / (blocks * static_cast<double>(std::max<int64_t>(1, state.iterations())));
}

void BM_Units(benchmark::State& state) {
    auto f = units(static_cast<uint32_t>(state.range(0)));
    run(state, *f, false);
}
void BM_Nest(benchmark::State& state) {
    auto f = nest(static_cast<uint32_t>(state.range(0)), 5000);
    run(state, *f, false);
}
void BM_NoBreak(benchmark::State& state) {
    auto f = units(static_cast<uint32_t>(state.range(0)));
    run(state, *f, true);
}

}  // namespace
}  // namespace heron

BENCHMARK(heron::BM_Units)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(heron::BM_Nest)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(heron::BM_NoBreak)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
