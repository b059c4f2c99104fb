// Differential test: random modules from the shared generator run on the
// reference interpreter and on the x86-64 JIT; results and trap codes must
// agree bit for bit (arithmetic NaNs are canonicalized by the generator).
#include <gtest/gtest.h>

#include "codegen/ir/printer.h"
#include "fuzz/gen/diff.h"
#include "fuzz/gen/generator.h"
#include "fuzz/gen/jit_engine.h"

namespace heron::gen {
namespace {

/// Random modules until `min_pairs` function x input pairs ran on the
/// interpreter and on the JIT at `level`; every pair must agree.
void run_random_modules(OptLevel level, uint64_t min_pairs,
                        RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan) {
    GenOptions opts;
    opts.canonicalize_nans = true;
    DiffResult total;
    InterpreterEngine interp;
    JitEngine jit(level, regalloc);
    uint64_t seed = 1;
    for (; total.pairs < min_pairs && seed < 20'000; ++seed) {
        Entropy e(seed);
        Module m = generate_module(e, opts);
        DiffResult r = run_differential(m, interp, jit);
        if (!r.ok()) {
            std::string text;
            for (const auto& f : m.functions) text += print_function(*f);
            ADD_FAILURE() << "seed " << seed << ": " << r.summary() << "\n" << text;
        }
        total.merge(r);
        if (total.mismatches > 0) break;
    }
    EXPECT_GE(total.pairs, min_pairs);
    EXPECT_EQ(total.mismatches, 0u) << total.summary();
    EXPECT_GT(total.trapped, 0u) << "the generator must exercise traps";
    EXPECT_GT(total.returned, total.pairs / 4) << total.summary();
    std::printf("%s (seeds 1..%llu)\n", total.summary().c_str(), static_cast<unsigned long long>(seed - 1));
}

// At least 10,000 function x input pairs (issue #4).
TEST(JitDifferential, InterpreterAndJitAgreeOnRandomModules) { run_random_modules(OptLevel::None, 10'000); }

// The same modules with the single-pass register allocator (checker on).
TEST(JitDifferential, InterpreterAndSinglePassJitAgreeOnRandomModules) {
    run_random_modules(OptLevel::None, 10'000, RegallocAlgorithm::SinglePass);
}

// The same modules through the optimizer (issue #5): loop-form and licm
// run on each function, verified after every pass, before lowering.
TEST(JitDifferential, InterpreterAndOptimizedJitAgreeOnRandomModules) {
    run_random_modules(OptLevel::Speed, 10'000);
}

// Signatures of up to 16 parameters: calls and tail calls with stack
// arguments (more than the 6 or 8 integer / 8 float argument registers) of
// every convention, `tail` callees popping their own area, and tail calls
// whose callee's area is larger or smaller than the caller's.
TEST(JitDifferential, StackArgumentsAndTailCallsAgree) {
    GenOptions opts;
    opts.canonicalize_nans = true;
    opts.max_params = 16;
    opts.max_functions = 8;
    opts.inputs_per_function = 3;
    DiffResult total;
    InterpreterEngine interp;
    JitEngine jit;
    uint64_t seed = 1, tail_calls_with_stack_args = 0;
    for (; (total.pairs < 3'000 || tail_calls_with_stack_args < 30) && seed < 20'000; ++seed) {
        Entropy e(seed);
        Module m = generate_module(e, opts);
        for (const auto& f : m.functions) {
            for (Block b : f->layout.blocks()) {
                for (Inst i : f->layout.block_insts(b)) {
                    Opcode op = f->dfg[i].opcode;
                    if (op != Opcode::ReturnCall && op != Opcode::ReturnCallIndirect) continue;
                    // More than 8 parameters: stack arguments on both targets.
                    if (f->dfg.signatures[*f->dfg.call_signature(i)].params.size() > 8) ++tail_calls_with_stack_args;
                }
            }
        }
        DiffResult r = run_differential(m, interp, jit);
        if (!r.ok()) {
            std::string text;
            for (const auto& f : m.functions) text += print_function(*f);
            ADD_FAILURE() << "seed " << seed << ": " << r.summary() << "\n" << text;
        }
        total.merge(r);
        if (total.mismatches > 0) break;
    }
    EXPECT_GE(total.pairs, 3'000u);
    EXPECT_EQ(total.mismatches, 0u) << total.summary();
    EXPECT_GE(tail_calls_with_stack_args, 30u) << "the modules must contain tail calls with stack arguments";
    std::printf("%s (seeds 1..%llu, %llu tail calls with stack arguments)\n", total.summary().c_str(),
                static_cast<unsigned long long>(seed - 1), static_cast<unsigned long long>(tail_calls_with_stack_args));
}

}  // namespace
}  // namespace heron::gen
