// Frontend building throughput, in IR instructions built per second, with
// the FunctionBuilderContext reused across iterations as an embedder would:
//
//   straight_line       one block of arithmetic, no variables (ins() alone);
//                       straight_line_cursor builds it with a bare FuncCursor,
//                       the IR core's own ceiling
//   straight_line_vars  one block, every operand through use_var / def_var
//   variable_heavy      diamonds and loops over 32 variables: use_var across
//                       many blocks, parameters, sealing
//   chain_lookup/N      a chain of N sealed single-predecessor blocks, each
//                       reading two variables (one defined in the entry
//                       only): the cost per lookup must stay flat from 1k to
//                       1M blocks (a walk that checked the whole chain for
//                       cycles on every lookup would grow with N);
//                       chain_no_lookup/N is the same chain without the
//                       lookups, so the difference per block / 2 is the
//                       cost of one lookup
//   stress_100k         100k variables over 100k blocks (diamonds), each
//                       block using variables of a sliding window plus a few
//                       used everywhere
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <utility>
#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/ir/printer.h"
#include "frontend/function_builder.h"
#include "frontend/loops.h"

// Every heap allocation of this program is counted, so each benchmark can
// report how many one build makes once the context is warm (the goal: none
// in the frontend; what is left comes from the IR's own tables).
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t al) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    std::size_t a = static_cast<std::size_t>(al);
    if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) { return operator new(n, al); }
// The replacement deletes pair with the replacement news above; GCC cannot
// see that and warns about free() on memory from operator new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace heron {
namespace {

/// Allocations per iteration after the first (warm-up) one.
class AllocationMeter {
public:
    void iteration_done() {
        if (++iterations_ == 1) start_ = g_allocations.load();
    }
    void report(benchmark::State& state) const {
        if (iterations_ < 2) return;
        state.counters["allocs/build"] =
            static_cast<double>(g_allocations.load() - start_) / static_cast<double>(iterations_ - 1);
    }

private:
    uint64_t iterations_ = 0, start_ = 0;
};

Signature sig_i64(int params) {
    Signature sig;
    for (int i = 0; i < params; ++i) sig.params.push_back(AbiParam(types::I64));
    sig.returns.push_back(AbiParam(types::I64));
    return sig;
}

uint32_t count_insts(const Function& f) { return f.dfg.num_insts(); }

/// What every frontend benchmark shares: one context and one function
/// reused across iterations, an entry block with the function's
/// parameters, finalize, and the instruction and allocation counts.
class Harness {
public:
    explicit Harness(int params) : sig_(sig_i64(params)) {}

    /// One build: `body(b, entry)` fills the function after the entry
    /// block is made, switched to and sealed; `after(b)` sees the builder
    /// once it is finalized.
    template <typename Body, typename After>
    void build(benchmark::State& state, Body&& body, After&& after) {
        f_.clear();
        f_.signature = sig_;
        FunctionBuilder b(f_, ctx_);
        Block entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        body(b, entry);
        if (!b.finalize().ok()) state.SkipWithError("finalize failed");
        after(b);
        if (dump_ && !dumped_) {
            // HERON_FRONTEND_DUMP=FILE: the first build's text, to show
            // that a change to the builder builds the same IR.
            dumped_ = true;
            if (std::FILE* out = std::fopen(dump_, "a")) {
                std::fputs(print_function(f_).c_str(), out);
                std::fclose(out);
            }
        }
        insts_ += count_insts(f_);
        meter_.iteration_done();
    }
    template <typename Body>
    void build(benchmark::State& state, Body&& body) {
        build(state, std::forward<Body>(body), [](FunctionBuilder&) {});
    }

    const Function& function() const { return f_; }

    /// Allocations per build and IR instructions per second.
    void report(benchmark::State& state) const {
        meter_.report(state);
        state.counters["insts/s"] = benchmark::Counter(static_cast<double>(insts_), benchmark::Counter::kIsRate);
    }

private:
    Signature sig_;
    FunctionBuilderContext ctx_;
    Function f_;
    AllocationMeter meter_;
    uint64_t insts_ = 0;
    const char* dump_ = std::getenv("HERON_FRONTEND_DUMP");
    bool dumped_ = false;
};

// The straight-line code: n instructions of arithmetic over x and y, each
// built through `ins()` (a FunctionBuilder's or a bare cursor's); returns
// the last value.
template <typename Ins>
Value arithmetic(Ins&& ins, Value x, Value y, int n) {
    for (int i = 0; i < n; i += 4) {
        x = ins().iadd(x, y);
        y = ins().imul(y, x);
        x = ins().bxor(x, y);
        y = ins().isub(y, x);
    }
    return x;
}

void straight_line(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Harness h(2);
    for (auto _ : state) {
        h.build(state, [&](FunctionBuilder& b, Block entry) {
            Value x = arithmetic([&] { return b.ins(); }, b.block_params(entry)[0], b.block_params(entry)[1], n);
            b.ins().return_({x});
        });
    }
    h.report(state);
}
BENCHMARK(straight_line)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The same code through a bare FuncCursor (no frontend): the ceiling the IR
// core's DataFlowGraph and Layout set for any builder.
void straight_line_cursor(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Function f;
    uint64_t insts = 0;
    const Signature sig = sig_i64(2);
    AllocationMeter meter;
    for (auto _ : state) {
        f.clear();
        f.signature = sig;
        FuncCursor cur(f);
        Block entry = cur.insert_block();
        Value x = f.dfg.append_block_param(entry, types::I64), y = f.dfg.append_block_param(entry, types::I64);
        cur.at_bottom(entry);
        x = arithmetic([&]() -> FuncCursor& { return cur.ins(); }, x, y, n);
        cur.ins().return_({x});
        insts += count_insts(f);
        meter.iteration_done();
    }
    meter.report(state);
    state.counters["insts/s"] = benchmark::Counter(static_cast<double>(insts), benchmark::Counter::kIsRate);
}
BENCHMARK(straight_line_cursor)->Arg(10000)->Unit(benchmark::kMicrosecond);

void straight_line_vars(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    constexpr int kVars = 8;
    Harness h(1);
    for (auto _ : state) {
        h.build(state, [&](FunctionBuilder& b, Block entry) {
            Variable v[kVars];
            for (int i = 0; i < kVars; ++i) {
                v[i] = b.declare_var(types::I64);
                b.def_var(v[i], b.block_params(entry)[0]);
            }
            for (int i = 0; i < n; ++i) {
                Value s = b.ins().iadd(b.use_var(v[i % kVars]), b.use_var(v[(i + 3) % kVars]));
                b.def_var(v[(i + 5) % kVars], s);
            }
            b.ins().return_({b.use_var(v[0])});
        });
    }
    h.report(state);
}
BENCHMARK(straight_line_vars)->Arg(10000)->Unit(benchmark::kMicrosecond);

// A program of `units` units over 32 variables; each unit is a diamond
// (3 new blocks) or, every eighth, a loop (loop scopes) around one. Every
// block reads two variables and writes one. The choices are drawn once.

void variable_heavy(benchmark::State& state) {
    const int units = static_cast<int>(state.range(0));
    const int kVars = static_cast<int>(state.range(1));
    std::mt19937 rng(7);
    std::vector<uint8_t> pick(static_cast<size_t>(units) * 16);
    for (auto& p : pick) p = static_cast<uint8_t>(rng() % kVars);
    LoopScopes loops;
    uint64_t blocks = 0;
    Harness h(1);
    for (auto _ : state) {
        h.build(state, [&](FunctionBuilder& b, Block entry) {
            Variable v[64];
            for (int i = 0; i < kVars; ++i) {
                v[i] = b.declare_var(types::I64);
                b.def_var(v[i], b.ins().iadd_imm(b.block_params(entry)[0], i));
            }
            size_t k = 0;
            auto work = [&] {
                Value s = b.ins().iadd(b.use_var(v[pick[k]]), b.use_var(v[pick[k + 1]]));
                b.def_var(v[pick[k + 2]], s);
                k += 3;
            };
            auto diamond = [&] {
                Block then = b.create_block(), orelse = b.create_block(), merge = b.create_block();
                Value c = b.ins().icmp(IntCC::Slt, b.use_var(v[pick[k]]), b.use_var(v[pick[k + 1]]));
                k += 2;
                b.ins().brif(c, then, orelse);
                b.seal_block(then);
                b.seal_block(orelse);
                b.switch_to_block(then);
                work();
                b.ins().jump(merge);
                b.switch_to_block(orelse);
                work();
                b.ins().jump(merge);
                b.seal_block(merge);
                b.switch_to_block(merge);
                work();
            };
            for (int u = 0; u < units; ++u) {
                if (u % 8 == 7) {
                    Variable i = v[pick[k++]];
                    (void)loops.begin_loop(b);
                    (void)loops.loop_while(b, b.ins().icmp_imm(IntCC::Slt, b.use_var(i), 100));
                    diamond();
                    b.def_var(i, b.ins().iadd_imm(b.use_var(i), 1));
                    (void)loops.end_loop(b);
                } else {
                    diamond();
                }
            }
            b.ins().return_({b.use_var(v[0])});
        });
        blocks += h.function().dfg.num_blocks();
    }
    h.report(state);
    state.counters["blocks/s"] = benchmark::Counter(static_cast<double>(blocks), benchmark::Counter::kIsRate);
}
BENCHMARK(variable_heavy)->Args({2000, 4})->Args({2000, 8})->Args({2000, 16})->Args({2000, 32})->Unit(benchmark::kMicrosecond);

// `lookups` false builds the same chain with the entry's value used
// directly: the difference is the cost of the lookups alone.
template <bool lookups>
void chain(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    uint64_t count = 0;
    Harness h(1);
    for (auto _ : state) {
        h.build(state, [&](FunctionBuilder& b, Block entry) {
            Value p = b.block_params(entry)[0];
            Variable x = b.declare_var(types::I64), acc = b.declare_var(types::I64);
            b.def_var(x, p);
            b.def_var(acc, p);
            Value last = p;
            for (int i = 0; i < n; ++i) {
                Block next = b.create_block();
                b.ins().jump(next);
                b.switch_to_block(next);
                b.seal_block(next);
                // x: defined only in the entry; acc: redefined every 16 blocks.
                if (lookups) {
                    Value s = b.ins().iadd(b.use_var(x), b.use_var(acc));
                    if (i % 16 == 0) b.def_var(acc, s);
                } else {
                    Value s = b.ins().iadd(p, last);
                    if (i % 16 == 0) last = s;
                }
            }
            b.ins().return_({lookups ? b.use_var(acc) : last});
        });
        count += 2 * static_cast<uint64_t>(n);
    }
    h.report(state);
    state.counters["ns/block"] = benchmark::Counter(static_cast<double>(count) / 2,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
void chain_lookup(benchmark::State& state) { chain<true>(state); }
void chain_no_lookup(benchmark::State& state) { chain<false>(state); }
BENCHMARK(chain_lookup)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->MinTime(2);
BENCHMARK(chain_no_lookup)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->MinTime(2);

void stress_100k(benchmark::State& state) {
    // 33,334 diamonds (3 blocks each) = 100k blocks; 100k window variables
    // plus 8 hot ones. Diamond d works on window variables [3d, 3d + 64)
    // and defines the three entering the window at its top, so every read
    // has a definition at most a window behind it.
    constexpr int kWindowVars = 100000, kDiamonds = 33334, kHot = 8, kWindow = 64;
    std::mt19937 rng(11);
    std::vector<int> pick(static_cast<size_t>(kDiamonds) * 16);
    for (auto& p : pick) p = static_cast<int>(rng() % kWindow);
    std::vector<Variable> w(kWindowVars), hot(kHot);
    Harness h(1);
    for (auto _ : state) {
        auto body = [&](FunctionBuilder& b, Block entry) {
            Value p = b.block_params(entry)[0];
            for (auto& x : hot) {
                x = b.declare_var(types::I64);
                b.def_var(x, p);
            }
            for (int i = 0; i < kWindowVars; ++i) {
                w[i] = b.declare_var(types::I64);
                if (i < kWindow) b.def_var(w[i], p);
            }
            size_t k = 0;
            auto local = [&](int d) { return w[std::min(3 * d + pick[k++], kWindowVars - 1)]; };
            auto work = [&](int d) {
                Value s = b.ins().iadd(b.use_var(local(d)), b.use_var(hot[pick[k++] % kHot]));
                b.def_var(local(d), s);
            };
            for (int d = 0; d < kDiamonds; ++d) {
                for (int j = 3 * d + kWindow; j < 3 * d + kWindow + 3 && j < kWindowVars; ++j) {
                    b.def_var(w[j], b.ins().iadd_imm(b.use_var(hot[j % kHot]), j));
                }
                Block then = b.create_block(), orelse = b.create_block(), merge = b.create_block();
                Value c = b.ins().icmp(IntCC::Slt, b.use_var(local(d)), b.use_var(hot[d % kHot]));
                b.ins().brif(c, then, orelse);
                b.seal_block(then);
                b.seal_block(orelse);
                b.switch_to_block(then);
                work(d);
                b.ins().jump(merge);
                b.switch_to_block(orelse);
                work(d);
                b.ins().jump(merge);
                b.seal_block(merge);
                b.switch_to_block(merge);
                work(d);
            }
            b.ins().return_({b.use_var(hot[0])});
        };
        h.build(state, body, [&](FunctionBuilder& b) {
            state.counters["blocks"] = h.function().dfg.num_blocks();
            state.counters["vars"] = kWindowVars + kHot;
            state.counters["undefined_reads"] = static_cast<double>(b.undefined_reads().size());
        });
    }
    h.report(state);
}
BENCHMARK(stress_100k)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace heron

BENCHMARK_MAIN();
