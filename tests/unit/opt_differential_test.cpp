// Differential test of the optimizer at opt_level=speed (gvn, dce,
// simplify-cfg and the loop passes): on random modules from the shared
// generator the optimized JIT, the unoptimized JIT and the interpreter
// agree on results and trap codes.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "codegen/ir/printer.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "fuzz/gen/diff.h"
#include "fuzz/gen/generator.h"
#include "fuzz/gen/jit_engine.h"

namespace heron::gen {
namespace {

// --- differential: optimized JIT, unoptimized JIT, interpreter ------------

TEST(OptDifferential, OptimizedJitUnoptimizedJitAndInterpreterAgree) {
    GenOptions opts;
    opts.canonicalize_nans = true;
    DiffResult vs_interp, vs_jit;
    InterpreterEngine interp;
    JitEngine jit(OptLevel::None), jit_opt(OptLevel::Speed);
    PassManager midend;
    ASSERT_FALSE(midend.add_pipeline("gvn,dce,simplify-cfg"));
    uint64_t seed = 100'001, functions = 0, rewritten = 0;
    for (; vs_interp.pairs < 20'000 && seed < 140'000; ++seed) {
        Entropy e(seed);
        Module m = generate_module(e, opts);
        // How many functions the mid-end changes: the comparison must be
        // of code it rewrote.
        for (const auto& f : m.functions) {
            Function g = *f;
            ASSERT_FALSE(midend.run(g));
            ++functions;
            rewritten += print_function(g) != print_function(*f);
        }
        DiffResult r1 = run_differential(m, interp, jit_opt);
        DiffResult r2 = run_differential(m, jit, jit_opt);
        if (!r1.ok() || !r2.ok()) {
            std::string text;
            for (const auto& f : m.functions) text += print_function(*f);
            ADD_FAILURE() << "seed " << seed << ": " << r1.summary() << " / " << r2.summary() << "\n" << text;
        }
        vs_interp.merge(r1);
        vs_jit.merge(r2);
        if (vs_interp.mismatches + vs_jit.mismatches > 0) break;
    }
    EXPECT_GE(vs_interp.pairs, 20'000u);
    EXPECT_EQ(vs_interp.mismatches, 0u) << vs_interp.summary();
    EXPECT_EQ(vs_jit.mismatches, 0u) << vs_jit.summary();
    EXPECT_GT(vs_interp.trapped, 0u) << "the generator must exercise traps";
    EXPECT_GT(rewritten, functions / 2) << "the mid-end must change most generated functions";
    std::printf("vs interp: %s; vs jit-O0: %s; %llu of %llu functions rewritten\n", vs_interp.summary().c_str(),
                vs_jit.summary().c_str(), static_cast<unsigned long long>(rewritten),
                static_cast<unsigned long long>(functions));
}

}  // namespace
}  // namespace heron::gen
