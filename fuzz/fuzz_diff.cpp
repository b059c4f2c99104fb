// fuzz_diff: bytes -> the shared generator (fuzz/gen/) builds a valid
// module of several functions -> every function runs on its generated
// inputs in the reference interpreter and in the x86-64 JIT (with the
// register-allocation checker on). Results and trap codes must agree bit
// for bit (the generator canonicalizes arithmetic NaNs). Half of the inputs
// may contain loops whose exit depends on data: the interpreter runs first
// with fuel, and a pair that runs out is skipped before the JIT sees it.
// Then the same pairs run on the JIT after the optimizer (the pipeline of
// opt_level speed: loop-form, licm), against the interpreter again:
// unoptimized vs optimized; and on the JIT with the single-pass register
// allocator (opt_level none).
//
// The first input byte picks the generator's features and sizes, the rest
// drives its choices, so the fuzzer can explore small feature subsets
// (floats only, no calls, ...) as well as the whole mix.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "codegen/ir/printer.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
#include "fuzz/gen/diff.h"
#include "fuzz/gen/generator.h"
#include "fuzz/gen/jit_engine.h"

namespace {

using namespace heron;
using namespace heron::gen;

GenOptions options_from(uint8_t b) {
    GenOptions o;
    o.canonicalize_nans = true;
    // A byte of 0 (the usual mutation result near the start) keeps everything on.
    o.floats = (b & 1) == 0;
    o.calls = (b & 2) == 0;
    o.memory = (b & 4) == 0;
    o.traps = (b & 8) == 0;
    o.br_table = (b & 16) == 0;
    o.unbounded_loops = (b & 32) != 0;
    // Up to 16 parameters: stack arguments on both targets, and tail calls
    // with them (the `tail` callee pops its area).
    o.max_params = (b & 64) ? 16 : 4;
    o.max_insts = (b & 128) ? 60 : 160;
    o.inputs_per_function = 4;
    return o;
}

std::string module_text(const Module& m) {
    std::string text;
    for (const auto& f : m.functions) text += print_function(*f);
    return text;
}

/// With HERON_FUZZ_STATS set in the environment, the target counts what
/// the optimizer did and prints it at exit: proof that the optimized side
/// of the comparison runs changed code, not a copy of the input.
struct OptStats {
    bool on = std::getenv("HERON_FUZZ_STATS") != nullptr;
    uint64_t functions = 0, changed = 0, loops = 0, hoisted = 0;
    ~OptStats() {
        if (on)
            std::fprintf(stderr, "fuzz_diff stats: %llu functions optimized, %llu with loops, %llu changed by the pipeline, "
                         "%llu changed by licm\n",
                         static_cast<unsigned long long>(functions), static_cast<unsigned long long>(loops),
                         static_cast<unsigned long long>(changed), static_cast<unsigned long long>(hoisted));
    }
};
OptStats opt_stats;

/// The JIT after the optimizer: each function is copied, run through
/// the pipeline of opt_level speed (codegen/opt/pipeline.h; verified after
/// every pass that changes it) and compiled: what JITBuilder::opt_level
/// does, spelled out here so the stats can look between the passes.
class OptimizedJitEngine : public Engine {
public:
    static constexpr std::string_view kPipeline = opt_pipeline(OptLevel::Speed);

    std::string name() const override { return "jit-opt"; }
    bool load(const Module& m, std::string& error) override {
        optimized_.functions.clear();
        copies_.clear();
        for (const auto& f : m.functions) {
            auto copy = std::make_unique<Function>(*f);
            PassManagerOptions options;
            options.verify_each = true;
            std::string after_loop_form, after_licm;
            if (opt_stats.on) {
                options.dump_after = {"loop-form", "licm"};
                options.dump = [&](std::string_view pass, const Function& func) {
                    (pass == "licm" ? after_licm : after_loop_form) = print_function(func);
                };
            }
            PassManager pm(options);
            if (auto e = pm.add_pipeline(kPipeline)) {
                error = *e;
                return false;
            }
            if (auto e = pm.run(*copy)) {
                error = "%" + f->name.name + ": " + *e;
                return false;
            }
            if (opt_stats.on) {
                ++opt_stats.functions;
                opt_stats.changed += print_function(*f) != print_function(*copy);
                opt_stats.hoisted += after_loop_form != after_licm;
                const LoopAnalysis* loops = pm.context().loops();
                opt_stats.loops += loops && loops->num_loops() > 0;
            }
            copies_[f.get()] = copy.get();
            optimized_.functions.push_back(std::move(copy));
        }
        return jit_.load(optimized_, error);
    }
    InterpOutcome call(const Function& func, std::span<const DataValue> args) override {
        return jit_.call(*copies_.at(&func), args);
    }

private:
    Module optimized_;
    std::unordered_map<const Function*, const Function*> copies_;
    JitEngine jit_;
};

[[noreturn]] void fail(const char* what, const Module& m, const std::string& detail) {
    std::fprintf(stderr, "fuzz_diff: %s\n%s\n--- module ---\n%s\n", what, detail.c_str(), module_text(m).c_str());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const GenOptions opts = options_from(data[0]);
    Entropy entropy(std::span<const uint8_t>(data + 1, size - 1));
    Module m = generate_module(entropy, opts);

    // The generator promises valid IR; a module that does not verify is a
    // generator bug and would only show up as engine errors below.
    for (const auto& f : m.functions) {
        VerifierErrors errs;
        if (!verify_function(*f, errs)) fail("generated function does not verify", m, format_verifier_errors(errs));
    }

    // 20k instructions of fuel: generated bounded code stays below
    // (GenOptions::max_dynamic_insts is 4000, soft), and runaway loops stop
    // quickly; they would otherwise take most of the fuzzer's time.
    static InterpreterEngine interp(20'000);
    static JitEngine jit;
    DiffResult r = run_differential(m, interp, jit);
    if (!r.ok()) fail("interpreter and JIT disagree", m, r.summary());
    // Unoptimized vs optimized: the interpreter (with fuel) stands for the
    // unoptimized code, which the JIT just matched.
    static OptimizedJitEngine opt_jit;
    DiffResult o = run_differential(m, interp, opt_jit);
    if (!o.ok()) fail("interpreter and optimized JIT disagree", m, o.summary());
    static JitEngine single_pass_jit(OptLevel::None, RegallocAlgorithm::SinglePass);
    DiffResult sp = run_differential(m, interp, single_pass_jit);
    if (!sp.ok()) fail("interpreter and JIT with the single-pass allocator disagree", m, sp.summary());
    return 0;
}
