// Runtime of code written the way a naive frontend writes it: the kernels
// of bench/naive/kernels.hn (the small language, docs/lang.md) lowered with
// every variable in a stack slot of its own (stored at each definition,
// loaded at each use), next to the same program lowered through the
// frontend's SSA variables and next to C twins at -O2 -fno-inline
// (bench/naive/naive_c.cpp), in one binary. Each lowering is JIT-compiled
// at opt_level none and speed.
//
// Prints, per kernel, the best-of-N time of C and the ratio of each
// variant to it, then the geomean of each ratio. Every variant's result
// must equal C's, else exit status 1.
//
//   bench_naive [--reps=N] [--filter=NAME]   (other --flags are ignored)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "jit/jit_module.h"
#include "naive/naive_c.h"
#include "tools/lang/codegen.h"
#include "tools/lang/host.h"
#include "tools/lang/parser.h"

namespace {

using namespace heron;
using namespace heron::bench;

using KernelFn = int64_t (*)(int64_t);

struct Kernel {
    const char* name;
    KernelFn c;
    int64_t size;
};

const Kernel kKernels[] = {
    {"collatz", c_collatz, 300000}, {"gcd_sum", c_gcd_sum, 700}, {"primes", c_primes, 200000},
    {"mandel", c_mandel, 300},      {"mix", c_mix, 20000000},    {"fib", c_fib, 30},
};

struct Variant {
    const char* name;
    bool slots;
    OptLevel level;
};

const Variant kVariants[] = {
    {"ssa/none", false, OptLevel::None},
    {"ssa/speed", false, OptLevel::Speed},
    {"slots/none", true, OptLevel::None},
    {"slots/speed", true, OptLevel::Speed},
};

/// The program compiled with one variant's lowering and opt level.
struct Compiled {
    std::unique_ptr<JITModule> jit;
    std::vector<KernelFn> fns;  // by kernel
};

bool compile_variant(const lang::Program& prog, const Variant& v, Compiled& out) {
    lang::CodegenOptions options;
    options.locals_in_slots = v.slots;
    lang::CodegenResult code = lang::compile(prog, {}, "__bench", options);
    if (code.error) {
        std::fprintf(stderr, "kernels.hn: %s\n", code.error->message.c_str());
        return false;
    }
    JITBuilder jb;
    jb.opt_level(v.level);
    lang::add_host_symbols(jb);
    out.jit = std::make_unique<JITModule>(std::move(jb));
    for (const lang::CompiledFunction& cf : code.fns) {
        auto id = out.jit->declare_function(cf.func->name.name, Linkage::Export, cf.func->signature);
        if (!id) {
            std::fprintf(stderr, "%s\n", id.error().message.c_str());
            return false;
        }
    }
    for (const lang::CompiledFunction& cf : code.fns) {
        if (auto e = out.jit->define_function(*out.jit->find_function(cf.func->name.name), *cf.func)) {
            std::fprintf(stderr, "%s: %s\n", cf.func->name.name.c_str(), e->message.c_str());
            return false;
        }
    }
    if (auto e = out.jit->finalize_definitions()) {
        std::fprintf(stderr, "%s\n", e->message.c_str());
        return false;
    }
    for (const Kernel& k : kKernels) {
        auto id = out.jit->find_function(k.name);
        if (!id) {
            std::fprintf(stderr, "kernels.hn has no function %s\n", k.name);
            return false;
        }
        out.fns.push_back(out.jit->get_function<int64_t(int64_t)>(*id));
    }
    return true;
}

/// Best of `reps` runs, in microseconds; the result in `result`.
double best_us(KernelFn f, int64_t n, int reps, int64_t& result) {
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        result = f(n);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (us < best) best = us;
    }
    return best;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    std::string filter;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
        if (std::strncmp(argv[i], "--filter=", 9) == 0) filter = argv[i] + 9;
    }
    if (reps < 1) reps = 1;
    const std::string path = std::string(HERON_SOURCE_DIR) + "/bench/naive/kernels.hn";
    const std::string src = read_file(path);
    lang::ParseResult parsed = lang::parse_program(src);
    if (parsed.error) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), parsed.error->message.c_str());
        return 1;
    }
    constexpr size_t kNumVariants = sizeof kVariants / sizeof kVariants[0];
    std::vector<Compiled> compiled(kNumVariants);
    for (size_t v = 0; v < kNumVariants; ++v) {
        if (!compile_variant(parsed.program, kVariants[v], compiled[v])) return 1;
    }
    std::printf("%-10s %12s", "kernel", "C us");
    for (const Variant& v : kVariants) std::printf(" %12s", v.name);
    std::printf("   (time / C)\n");
    double log_sum[kNumVariants] = {};
    int counted = 0;
    bool ok = true;
    for (size_t k = 0; k < sizeof kKernels / sizeof kKernels[0]; ++k) {
        const Kernel& kn = kKernels[k];
        if (!filter.empty() && filter != kn.name) continue;
        int64_t expect = 0;
        const double c_us = best_us(kn.c, kn.size, reps, expect);
        std::printf("%-10s %12.1f", kn.name, c_us);
        for (size_t v = 0; v < kNumVariants; ++v) {
            int64_t got = 0;
            const double us = best_us(compiled[v].fns[k], kn.size, reps, got);
            if (got != expect) {
                std::printf("\n%s %s: result %lld, C gives %lld\n", kn.name, kVariants[v].name,
                            static_cast<long long>(got), static_cast<long long>(expect));
                ok = false;
            }
            std::printf(" %12.3f", us / c_us);
            log_sum[v] += std::log(us / c_us);
        }
        std::printf("\n");
        ++counted;
    }
    if (counted > 0) {
        std::printf("%-10s %12s", "geomean", "");
        for (size_t v = 0; v < kNumVariants; ++v) std::printf(" %12.3f", std::exp(log_sum[v] / counted));
        std::printf("\n");
    }
    return ok ? 0 : 1;
}
