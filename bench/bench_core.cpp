// Throughput of the IR core: parse, print, verify (IR instructions per
// second, on a generated function of ~100k instructions) and the
// interpreter (executed instructions per second on a hot loop).
// Directions from issue #2: parse >= 3 M inst/s, verify >= 10 M inst/s,
// interpret >= 30 M executed inst/s (Release build).
#include <benchmark/benchmark.h>

#include <string>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"

namespace {

using namespace heron;

/// A function of `blocks` blocks of ~20 instructions each: integer and float
/// arithmetic, a conditional branch per block passing block arguments.
std::string generate_function(int blocks, int* num_insts) {
    std::string t = "function %big(i64, i64, f64) -> i64 {\nblock0(v0: i64, v1: i64, v2: f64):\n    jump block1(v0, v1)\n";
    int v = 3, insts = 1;
    for (int b = 1; b <= blocks; ++b) {
        int a = v++, c = v++;
        t += "block" + std::to_string(b) + "(v" + std::to_string(a) + ": i64, v" + std::to_string(c) + ": i64):\n";
        int x = a, y = c;
        static const char* ops[] = {"iadd", "isub", "imul", "bxor", "band", "bor", "ishl", "ushr"};
        for (int k = 0; k < 16; ++k) {
            int r = v++;
            t += "    v" + std::to_string(r) + " = " + ops[k % 8] + " v" + std::to_string(x) + ", v" + std::to_string(y) + "\n";
            x = y;
            y = r;
            ++insts;
        }
        int f = v++;
        t += "    v" + std::to_string(f) + " = fadd v2, v2\n";
        int cond = v++;
        t += "    v" + std::to_string(cond) + " = icmp ult v" + std::to_string(x) + ", v" + std::to_string(y) + "\n";
        insts += 3;
        if (b == blocks) {
            t += "    return v" + std::to_string(y) + "\n";
        } else {
            std::string next = "block" + std::to_string(b + 1);
            t += "    brif v" + std::to_string(cond) + ", " + next + "(v" + std::to_string(x) + ", v" + std::to_string(y) +
                 "), " + next + "(v" + std::to_string(y) + ", v" + std::to_string(x) + ")\n";
        }
    }
    t += "}\n";
    *num_insts = insts;
    return t;
}

constexpr int kBlocks = 5000;  // ~100k instructions

void BM_Parse(benchmark::State& state) {
    int n = 0;
    std::string text = generate_function(kBlocks, &n);
    for (auto _ : state) {
        Diagnostics errs;
        auto funcs = parse_functions(text, errs);
        if (!errs.empty() || funcs.size() != 1) state.SkipWithError("generated text did not parse");
        benchmark::DoNotOptimize(funcs);
    }
    state.counters["inst/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

void BM_Print(benchmark::State& state) {
    int n = 0;
    Diagnostics errs;
    auto funcs = parse_functions(generate_function(kBlocks, &n), errs);
    for (auto _ : state) {
        std::string out;
        write_function(out, *funcs.at(0));
        benchmark::DoNotOptimize(out);
    }
    state.counters["inst/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond);

void BM_Verify(benchmark::State& state) {
    int n = 0;
    Diagnostics errs;
    auto funcs = parse_functions(generate_function(kBlocks, &n), errs);
    for (auto _ : state) {
        VerifierErrors verrs;
        if (!verify_function(*funcs.at(0), verrs)) state.SkipWithError("generated function does not verify");
    }
    state.counters["inst/s"] = benchmark::Counter(double(n) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Verify)->Unit(benchmark::kMillisecond);

/// A counted loop whose body is 24 integer instructions.
constexpr const char* kHotLoop = R"(
function %hot(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    v2 = iconst.i64 1
    jump block1(v1, v2)
block1(v3: i64, v4: i64):
    v5 = iadd v4, v3
    v6 = imul v5, v4
    v7 = bxor v6, v3
    v8 = ushr v7, v2
    v9 = iadd v8, v5
    v10 = isub v9, v6
    v11 = bor v10, v2
    v12 = band v11, v9
    v13 = iadd v12, v7
    v14 = imul v13, v2
    v15 = bxor v14, v8
    v16 = iadd v15, v4
    v17 = ishl v16, v2
    v18 = isub v17, v16
    v19 = iadd v18, v3
    v20 = bxor v19, v5
    v21 = iadd v20, v10
    v22 = band v21, v11
    v23 = bor v22, v12
    v24 = iadd v23, v13
    v25 = iadd v3, v2
    v26 = icmp ult v25, v0
    brif v26, block1(v25, v24), block2(v24)
block2(v27: i64):
    return v27
}
)";

// Executed instructions are the interpreter's own count (one per
// instruction dispatched; branch-argument copies are part of the branch).
// The count must be what the loop's shape says: per iteration v5..v26 (22)
// and the brif, plus iconst, iconst, jump and return once. The loop is
// a best case for an interpreter (straight integer code, perfectly
// predictable dispatch, no memory or calls).
constexpr uint64_t kHotIterations = 100000;
constexpr uint64_t kHotExecuted = 23 * kHotIterations + 4;

void BM_Interpret(benchmark::State& state) {
    Diagnostics errs;
    auto funcs = parse_functions(kHotLoop, errs);
    Interpreter interp;
    interp.add_function(*funcs.at(0));
    uint64_t executed = 0;
    DataValue arg = DataValue::i64(kHotIterations);
    for (auto _ : state) {
        InterpOutcome r = interp.call("hot", std::span(&arg, 1));
        if (r.kind != InterpOutcome::Kind::Return) state.SkipWithError("interpreter did not return");
        if (interp.executed() != kHotExecuted) state.SkipWithError("executed-instruction count is off");
        executed += interp.executed();
    }
    state.counters["inst/call"] = double(interp.executed());
    state.counters["inst/s"] = benchmark::Counter(double(executed), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Interpret)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
