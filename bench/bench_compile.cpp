// Compile speed of the x86-64 backend (and of the AArch64 backend on the
// same host, BM_*_aarch64 and BM_Compile_*), end to end (IR -> installed code in
// a JITModule) and stage by stage: verify, lower, regalloc, emit, install
// (carve pooled code pages, copy, seal, register trap sites; the old
// version released as a redefinition does). BM_EndToEnd is opt_level none;
// BM_EndToEndOpt is opt_level speed (the IR pipeline of
// codegen/opt/pipeline.h first).
//
// Inputs: a trivial function (one iadd) for the per-function fixed cost,
// and generated functions of ~1K, 10K, 100K and 1M IR instructions (blocks
// of integer ALU work on a window of live values, immediates, shifts, a
// stack slot store/load, float adds, a compare and a conditional branch
// passing block arguments) for the per-instruction cost.
//
// Directions from issue #4: >= 10 M IR inst/s end to end at opt_level
// none, <= 2 us for the trivial function, time/inst at 1M within 2x of 1K.
// Counters: `inst/s` (IR instructions per second), `time/inst`, and for
// BM_EndToEnd and BM_EndToEndOpt `allocs/func`: calls of operator new per compiled function
// (this binary replaces the global operator new to count them; asmjit's own
// malloc calls for its zone memory are not included), and `syscalls/func`:
// mmap/mprotect calls of the code memory per function. BM_EndToEndBatch/N:
// the trivial function's cost when N functions share one finalize (one seal).
// BM_EndToEndKernels/L: bench_kernels' eight CLIF kernels (loops) at opt
// level L (0 none, 1 speed), one finalize per round; `allocs/func` per
// kernel compiled, as above.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>

#include "bench/time_pipeline.h"
#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/isa/aarch64/emit.h"
#include "codegen/isa/aarch64/lower.h"
#include "codegen/isa/x64/emit.h"
#include "codegen/isa/x64/lower.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
#include "jit/code_memory.h"
#include "jit/jit_module.h"
#include "jit/trap_registry.h"

// The replacement operator new/delete below are malloc/free; GCC flags the
// pairing it sees after inlining them into new-expressions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

/// Calls of the global operator new in this process (the benchmarks run on
/// one thread).
static uint64_t g_allocations = 0;

void* operator new(std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace heron;

constexpr const char* kTrivial = R"(
function %trivial(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
)";

/// Generates the text of a function of about `target_insts` IR instructions.
class Generator {
public:
    std::string text;
    int insts = 0;

    explicit Generator(int target_insts) {
        text = "function %big(i64, i64, f64) -> i64 {\n    ss0 = explicit_slot 64\n";
        text += "block0(v0: i64, v1: i64, v2: f64):\n";
        int slot = value();  // v3
        text += "    v" + std::to_string(slot) + " = stack_addr.i64 ss0\n";
        ++insts;
        slot_ = slot;
        text += "    jump block1(v0, v1, v2)\n";
        ++insts;
        int block = 1;
        while (true) {
            bool last = insts + 30 >= target_insts;
            block_(block, last);
            if (last) break;
            ++block;
        }
        text += "}\n";
    }

private:
    int next_ = 3;
    int slot_ = 0;
    uint64_t rng_ = 0x9e3779b97f4a7c15ull;

    int value() { return next_++; }
    unsigned rand(unsigned n) {
        rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<unsigned>(rng_ >> 33) % n;
    }
    static std::string v(int k) { return "v" + std::to_string(k); }
    void line(const std::string& s) {
        text += "    " + s + "\n";
        ++insts;
    }

    void block_(int b, bool last) {
        int a = value(), c = value(), f = value();
        text += "block" + std::to_string(b) + "(" + v(a) + ": i64, " + v(c) + ": i64, " + v(f) + ": f64):\n";
        int window[8] = {a, c, a, c, a, c, a, c};
        int wn = 2;
        auto pick = [&] { return window[rand(wn < 8 ? wn : 8)]; };
        auto push = [&](int r) { window[(wn++) % 8] = r; };
        static const char* kOps[] = {"iadd", "isub", "imul", "bxor", "band", "bor", "iadd", "isub"};
        for (int k = 0; k < 14; ++k) {
            int r = value();
            switch (rand(6)) {
            case 0: {  // an immediate operand
                int kc = value();
                line(v(kc) + " = iconst.i64 " + std::to_string(rand(1000)));
                line(v(r) + " = " + kOps[rand(8)] + " " + v(pick()) + ", " + v(kc));
                break;
            }
            case 1: {  // a shift by a constant
                int kc = value();
                line(v(kc) + " = iconst.i64 " + std::to_string(1 + rand(7)));
                line(v(r) + " = " + (rand(2) ? "ishl " : "ushr ") + v(pick()) + ", " + v(kc));
                break;
            }
            default: line(v(r) + " = " + kOps[rand(8)] + " " + v(pick()) + ", " + v(pick())); break;
            }
            push(r);
        }
        // A stack slot round trip.
        line("store " + v(pick()) + ", " + v(slot_) + "+" + std::to_string(8 * rand(8)));
        int ld = value();
        line(v(ld) + " = load.i64 " + v(slot_) + "+" + std::to_string(8 * rand(8)));
        push(ld);
        int g = value();
        line(v(g) + " = fadd " + v(f) + ", " + v(f));
        int x = pick(), y = pick();
        if (last) {
            int s = value();
            line(v(s) + " = iadd " + v(x) + ", " + v(y));
            line("return " + v(s));
            return;
        }
        int cond = value();
        line(v(cond) + " = icmp ult " + v(x) + ", " + v(y));
        std::string next = "block" + std::to_string(b + 1);
        line("brif " + v(cond) + ", " + next + "(" + v(x) + ", " + v(y) + ", " + v(g) + "), " + next + "(" + v(y) +
             ", " + v(x) + ", " + v(f) + ")");
    }
};

struct Input {
    std::unique_ptr<Function> func;
    int insts = 0;
};

/// One parsed function per size (0: the trivial function), built once.
const Input& input(int64_t size) {
    static std::map<int64_t, Input> cache;
    auto it = cache.find(size);
    if (it != cache.end()) return it->second;
    Input in;
    std::string text;
    if (size == 0) {
        text = kTrivial;
        in.insts = 2;
    } else {
        Generator g(static_cast<int>(size));
        text = std::move(g.text);
        in.insts = g.insts;
    }
    Diagnostics errs;
    auto funcs = parse_functions(text, errs);
    if (!errs.empty() || funcs.size() != 1) std::abort();
    in.func = std::move(funcs[0]);
    VerifierErrors verrs;
    if (!verify_function(*in.func, verrs)) std::abort();
    return cache.emplace(size, std::move(in)).first->second;
}

void set_counters(benchmark::State& state, int insts) {
    state.counters["insts"] = insts;
    state.counters["inst/s"] = benchmark::Counter(double(insts) * state.iterations(), benchmark::Counter::kIsRate);
    // Seconds per IR instruction (printed with an SI prefix: 80n = 80 ns).
    state.counters["time/inst"] = benchmark::Counter(
        double(insts), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// End to end: verify + compile in define_function, then install in
/// finalize_definitions (redefining the same function each iteration, so
/// the previous code is released as it would be in a long-running JIT).
void end_to_end(benchmark::State& state, RegallocAlgorithm regalloc) {
    const Input& in = input(state.range(0));
    JITBuilder b;
    b.regalloc(regalloc);
    JITModule jit(std::move(b));
    FuncId id = jit.declare_function("f", Linkage::Export, in.func->signature).value();
    // One compile first, so the counters show the steady state (contexts
    // and code pages reused) rather than the first function's setup.
    if (jit.define_function(id, *in.func) || jit.finalize_definitions()) state.SkipWithError("compile failed");
    const uint64_t allocs0 = g_allocations;
    const uint64_t sys0 = jit.code_memory_syscalls();
    for (auto _ : state) {
        if (auto e = jit.define_function(id, *in.func)) state.SkipWithError(e->message.c_str());
        if (auto e = jit.finalize_definitions()) state.SkipWithError(e->message.c_str());
        benchmark::DoNotOptimize(jit.get_finalized_function(id));
    }
    set_counters(state, in.insts);
    const double n = double(state.iterations());
    state.counters["allocs/func"] = double(g_allocations - allocs0) / n;
    state.counters["syscalls/func"] = double(jit.code_memory_syscalls() - sys0) / n;
}
void BM_EndToEnd(benchmark::State& state) { end_to_end(state, RegallocAlgorithm::LinearScan); }
/// BM_EndToEnd with the single-pass register allocator.
void BM_EndToEndSinglePass(benchmark::State& state) { end_to_end(state, RegallocAlgorithm::SinglePass); }

/// The same at opt_level speed: the JIT module copies the function and runs
/// the IR pipeline of codegen/opt/pipeline.h on it (verifier between passes
/// off, as in release), then compiles the copy. BM_CopyFunction is the
/// copy's share. `allocs/func` as for BM_EndToEnd (steady state).
void BM_EndToEndOpt(benchmark::State& state) {
    const Input& in = input(state.range(0));
    JITBuilder b;
    b.opt_level(OptLevel::Speed);
    JITModule jit(std::move(b));
    FuncId id = jit.declare_function("f", Linkage::Export, in.func->signature).value();
    if (jit.define_function(id, *in.func) || jit.finalize_definitions()) state.SkipWithError("compile failed");
    const uint64_t allocs0 = g_allocations;
    for (auto _ : state) {
        if (auto e = jit.define_function(id, *in.func)) state.SkipWithError(e->message.c_str());
        if (auto e = jit.finalize_definitions()) state.SkipWithError(e->message.c_str());
        benchmark::DoNotOptimize(jit.get_finalized_function(id));
    }
    set_counters(state, in.insts);
    state.counters["allocs/func"] = double(g_allocations - allocs0) / double(state.iterations());
}

/// Declares `n` functions f0, f1, ... in `jit`, each defined as `func`, and
/// installs them with one finalize.
std::vector<FuncId> install_copies(benchmark::State& state, JITModule& jit, const Function& func, int64_t n) {
    std::vector<FuncId> ids;
    for (int64_t k = 0; k < n; ++k) {
        ids.push_back(jit.declare_function("f" + std::to_string(k), Linkage::Export, func.signature).value());
        if (jit.define_function(ids.back(), func)) state.SkipWithError("compile failed");
    }
    if (jit.finalize_definitions()) state.SkipWithError("install failed");
    return ids;
}

/// One function redefined and finalized in a module that already holds
/// arg 0 installed trivial functions (a long-running JIT that compiles
/// lazily, one finalize per function). Its `time/func` should not grow with
/// the module: installing one function must not cost work proportional to
/// all the code installed before it.
void BM_EndToEndInModule(benchmark::State& state) {
    const Input& in = input(0);
    const int64_t n = state.range(0);
    JITModule jit;
    const std::vector<FuncId> ids = install_copies(state, jit, *in.func, n);
    size_t next = 0;
    for (auto _ : state) {
        FuncId id = ids[next];
        next = next + 1 == ids.size() ? 0 : next + 1;
        if (auto e = jit.define_function(id, *in.func)) state.SkipWithError(e->message.c_str());
        if (auto e = jit.finalize_definitions()) state.SkipWithError(e->message.c_str());
        benchmark::DoNotOptimize(jit.get_finalized_function(id));
    }
    state.counters["time/func"] = benchmark::Counter(
        1.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

/// The per-function fixed cost when a module installs its functions in
/// batches: arg 0 trivial functions are (re)defined, then one
/// finalize_definitions installs them all, so the seal (one mprotect, a
/// system call of 1-3 us on this machine) is shared. `time/func` is the time
/// per function; arg 1 is BM_EndToEnd/0 (one seal per function).
void BM_EndToEndBatch(benchmark::State& state) {
    const Input& in = input(0);
    const int64_t n = state.range(0);
    JITModule jit;
    const std::vector<FuncId> ids = install_copies(state, jit, *in.func, n);
    const uint64_t allocs0 = g_allocations;
    const uint64_t sys0 = jit.code_memory_syscalls();
    for (auto _ : state) {
        for (FuncId id : ids) {
            if (auto e = jit.define_function(id, *in.func)) state.SkipWithError(e->message.c_str());
        }
        if (auto e = jit.finalize_definitions()) state.SkipWithError(e->message.c_str());
        benchmark::DoNotOptimize(jit.get_finalized_function(ids[0]));
    }
    const double funcs = double(n) * double(state.iterations());
    state.counters["time/func"] = benchmark::Counter(
        double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["allocs/func"] = double(g_allocations - allocs0) / funcs;
    state.counters["syscalls/func"] = double(jit.code_memory_syscalls() - sys0) / funcs;
}

/// The eight kernels of bench_kernels (bench/kernels/*.clif: small
/// functions with loops, 27-102 lines each) compiled into one module per
/// iteration and installed with one finalize: arg 0 at opt_level none,
/// arg 1 at speed. Unlike the generated inputs above, these have loops, so
/// at speed the loop passes run. `inst/s` counts their IR instructions.
/// Arg 2: opt_level none with the single-pass register allocator.
void BM_EndToEndKernels(benchmark::State& state) {
    static const char* kNames[] = {"bytecode", "collatz", "crc32", "fib", "mandelbrot", "matmul", "nbody", "sieve"};
    static std::vector<std::unique_ptr<Function>> funcs;
    static int insts = 0;
    if (funcs.empty()) {
        for (const char* name : kNames) {
            std::ifstream in(std::string(HERON_SOURCE_DIR) + "/bench/kernels/" + name + ".clif");
            std::stringstream text;
            text << in.rdbuf();
            Diagnostics errs;
            for (auto& f : parse_functions(text.str(), errs)) funcs.push_back(std::move(f));
            if (!errs.empty()) std::abort();
        }
        for (const auto& f : funcs)
            for (Block b : f->layout.blocks())
                for (Inst i : f->layout.block_insts(b)) (void)i, ++insts;
    }
    JITBuilder b;
    b.opt_level(state.range(0) == 1 ? OptLevel::Speed : OptLevel::None);
    if (state.range(0) == 2) b.regalloc(RegallocAlgorithm::SinglePass);
    JITModule jit(std::move(b));
    std::vector<FuncId> ids;
    for (const auto& f : funcs) ids.push_back(jit.declare_function(f->name.name, Linkage::Export, f->signature).value());
    auto compile_all = [&] {
        for (size_t k = 0; k < funcs.size(); ++k) {
            if (auto e = jit.define_function(ids[k], *funcs[k])) state.SkipWithError(e->message.c_str());
        }
        if (auto e = jit.finalize_definitions()) state.SkipWithError(e->message.c_str());
    };
    compile_all();
    const uint64_t allocs0 = g_allocations;
    for (auto _ : state) compile_all();
    set_counters(state, insts);
    state.counters["allocs/func"] =
        double(g_allocations - allocs0) / (double(state.iterations()) * double(funcs.size()));
}

void BM_CopyFunction(benchmark::State& state) {
    const Input& in = input(state.range(0));
    for (auto _ : state) {
        Function f = *in.func;
        benchmark::DoNotOptimize(&f);
    }
    set_counters(state, in.insts);
}

/// The mid-end passes on copies of the generated function
/// (time_pipeline.h): ns per instruction at 1K..1M instructions shows
/// whether a pass is linear in the function's size.
void mid_end(benchmark::State& state, const char* passes) {
    const Input& in = input(state.range(0));
    time_pipeline(state, *in.func, passes);
    set_counters(state, in.insts);
}
void BM_Gvn(benchmark::State& state) { mid_end(state, "gvn"); }
void BM_GvnDce(benchmark::State& state) { mid_end(state, "gvn,dce"); }
void BM_GvnDceSimplifyCfg(benchmark::State& state) { mid_end(state, "gvn,dce,simplify-cfg"); }
void BM_Mem2reg(benchmark::State& state) { mid_end(state, "mem2reg"); }
void BM_GvnLoadElim(benchmark::State& state) { mid_end(state, "gvn,load-elim"); }

/// With a kept VerifierContext, as the JIT module verifies.
void BM_Verify(benchmark::State& state) {
    const Input& in = input(state.range(0));
    VerifierErrors errs;
    VerifierContext ctx;
    for (auto _ : state) {
        errs.clear();
        if (!verify_function(*in.func, errs, ctx)) state.SkipWithError("does not verify");
    }
    set_counters(state, in.insts);
}

void BM_Lower(benchmark::State& state) {
    const Input& in = input(state.range(0));
    x64::Settings settings = x64::Settings::host();
    x64::VCode vcode;
    LowerContext ctx;  // kept between functions, as the ISA keeps it
    for (auto _ : state) {
        vcode.clear();
        std::string err = x64::lower_function(*in.func, settings, vcode, ctx);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(vcode.insts.data());
    }
    set_counters(state, in.insts);
}

/// ra::allocate on the lowered function, over and over with one Context.
/// `edits` and `slots`: what the allocation adds to the code.
void regalloc(benchmark::State& state, const ra::Function& func, const ra::MachineEnv& env, ra::Algorithm algo,
              int insts) {
    ra::Context ctx;
    ra::Output out;
    for (auto _ : state) {
        out.clear();
        std::string err = ra::allocate(func, env, out, ctx, algo);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(out.allocs.data());
    }
    set_counters(state, insts);
    state.counters["edits"] = double(out.edits.size());
    state.counters["slots"] = double(out.num_spill_slots);
}

x64::VCode& x64_vcode(const Input& in) {
    static std::map<const Input*, x64::VCode> cache;
    auto it = cache.find(&in);
    if (it != cache.end()) return it->second;
    x64::VCode& vcode = cache[&in];
    if (!x64::lower_function(*in.func, x64::Settings::host(), vcode).empty()) std::abort();
    return vcode;
}

void BM_Regalloc(benchmark::State& state) {
    const Input& in = input(state.range(0));
    regalloc(state, x64_vcode(in).ra, x64::machine_env(), ra::Algorithm::LinearScan, in.insts);
}
/// The single-pass allocator on the same input.
void BM_RegallocSinglePass(benchmark::State& state) {
    const Input& in = input(state.range(0));
    regalloc(state, x64_vcode(in).ra, x64::machine_env(), ra::Algorithm::SinglePass, in.insts);
}

void BM_Emit(benchmark::State& state) {
    const Input& in = input(state.range(0));
    x64::Settings settings = x64::Settings::host();
    x64::VCode vcode;
    if (!x64::lower_function(*in.func, settings, vcode).empty()) std::abort();
    ra::Context ctx;
    ra::Output alloc;
    if (!ra::allocate(vcode.ra, x64::machine_env(), alloc, ctx).empty()) std::abort();
    CompiledCode code;
    x64::EmitContext ectx;  // kept between functions, as the ISA keeps it
    for (auto _ : state) {
        code.clear();
        std::string err = x64::emit_function(*in.func, vcode, alloc, settings, code, ectx);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(code.bytes.data());
    }
    set_counters(state, in.insts);
}

/// What finalize_definitions does per function: map, copy, protect,
/// register the trap sites; then release the previous version.
void BM_Install(benchmark::State& state) {
    const Input& in = input(state.range(0));
    CompiledCode code;
    if (Context(host_isa()).compile(*in.func, code)) std::abort();
    CodeMemory memory;
    for (auto _ : state) {
        JitResult<CodeRegion> region = memory.allocate(code.bytes.size());
        if (!region) {
            state.SkipWithError("allocate failed");
            break;
        }
        memory.copy_code(region.value(), 0, code.bytes);
        memory.finalize(region.value());
        std::vector<TrapSite> sites;
        sites.reserve(code.trap_sites.size());
        for (const CodeTrapSite& s : code.trap_sites) sites.push_back(TrapSite{s.offset, s.code, {}});
        TrapRegistry::global().register_range(region.value().code, code.bytes.size(), "f", std::move(sites));
        TrapRegistry::global().unregister_range(region.value().code);
        memory.release(region.value());
    }
    set_counters(state, in.insts);
}

// --- x86-64 against AArch64, on this host ------------------------------------
// The same inputs compiled by the driver (verify, lower, allocate, emit into
// CompiledCode; no install) for each ISA, and the AArch64 stages one by one
// as above.

void compile_with(benchmark::State& state, const char* isa_name) {
    const Input& in = input(state.range(0));
    Context ctx(isa_by_name(isa_name));
    CompiledCode code;
    for (auto _ : state) {
        if (auto err = ctx.compile(*in.func, code)) state.SkipWithError(err->message.c_str());
        benchmark::DoNotOptimize(code.bytes.data());
    }
    set_counters(state, in.insts);
}
void BM_Compile_x64(benchmark::State& state) { compile_with(state, "x86_64"); }
void BM_Compile_aarch64(benchmark::State& state) { compile_with(state, "aarch64"); }

void BM_Lower_aarch64(benchmark::State& state) {
    const Input& in = input(state.range(0));
    aarch64::VCode vcode;
    LowerContext ctx;
    for (auto _ : state) {
        vcode.clear();
        std::string err = aarch64::lower_function(*in.func, vcode, ctx);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(vcode.insts.data());
    }
    set_counters(state, in.insts);
}

void regalloc_aarch64(benchmark::State& state, ra::Algorithm algo) {
    const Input& in = input(state.range(0));
    aarch64::VCode vcode;
    if (!aarch64::lower_function(*in.func, vcode).empty()) std::abort();
    regalloc(state, vcode.ra, aarch64::machine_env(), algo, in.insts);
}
void BM_Regalloc_aarch64(benchmark::State& state) { regalloc_aarch64(state, ra::Algorithm::LinearScan); }
void BM_RegallocSinglePass_aarch64(benchmark::State& state) { regalloc_aarch64(state, ra::Algorithm::SinglePass); }

void BM_Emit_aarch64(benchmark::State& state) {
    const Input& in = input(state.range(0));
    aarch64::VCode vcode;
    if (!aarch64::lower_function(*in.func, vcode).empty()) std::abort();
    ra::Context ctx;
    ra::Output alloc;
    if (!ra::allocate(vcode.ra, aarch64::machine_env(), alloc, ctx).empty()) std::abort();
    CompiledCode code;
    aarch64::EmitContext emit_ctx;  // kept, as the TargetIsa keeps it
    for (auto _ : state) {
        code.clear();
        std::string err = aarch64::emit_function(*in.func, vcode, alloc, code, emit_ctx);
        if (!err.empty()) state.SkipWithError(err.c_str());
        benchmark::DoNotOptimize(code.bytes.data());
    }
    set_counters(state, in.insts);
}

// Arg 0 is the trivial function.
#define HERON_SIZES ->Arg(0)->Arg(1000)->Arg(10000)->Arg(100000)->Arg(1000000)
BENCHMARK(BM_EndToEnd) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndSinglePass) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndOpt) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndBatch)->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndInModule)->Arg(1)->Arg(64)->Arg(4096)->Arg(16384)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndKernels)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CopyFunction) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gvn) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GvnDce) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GvnDceSimplifyCfg) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Mem2reg) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GvnLoadElim) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Verify) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Lower) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Regalloc) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RegallocSinglePass) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Emit) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Install) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Compile_x64) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Compile_aarch64) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Lower_aarch64) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Regalloc_aarch64) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RegallocSinglePass_aarch64) HERON_SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Emit_aarch64) HERON_SIZES->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
