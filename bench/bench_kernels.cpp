// Runtime of JIT-compiled code: eight kernels written in CLIF
// (bench/kernels/*.clif) against the same kernels in C++ compiled by the
// host compiler at -O2 -fno-inline (bench/kernels/kernels_c.cpp), in one
// binary. Each kernel is compiled twice, at opt_level none and at
// opt_level speed (the IR pipeline of codegen/opt/pipeline.h first).
// Prints, per kernel, the best-of-N time of C and of both JIT versions, the
// ratios none / C, speed / C and speed / none, then the geomean of each
// ratio. Each kernel's result (its return value and the memory it writes)
// must equal the C result at both levels, else the benchmark fails with
// exit status 1.
//
// Direction from issue #4: geomean <= 1.6x gcc -O2 with no optimizer,
// <= 1.1x once the optimizer lands.
//
//   bench_kernels [--reps=N] [--filter=NAME] [--once] [--level=none|speed]
//                 [--regalloc=linear-scan|single-pass]   (other --flags are ignored)
//
// --regalloc picks the register allocator of both levels (default
// linear-scan), to measure what the single-pass allocator costs at run time.
//
// --once checks the results and runs nothing else: for instruction counts
// of the JIT code, run it under
//   valgrind --tool=callgrind --toggle-collect='*run_jit_side*' bench_kernels --once [--level=none|speed]
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/ir/parser.h"
#include "codegen/opt/pipeline.h"
#include "jit/jit_module.h"
#include "kernels/kernels_c.h"

namespace {

using namespace heron;
using namespace heron::bench;

/// FNV-1a over bytes: a digest of a kernel's result and output memory.
struct Digest {
    uint64_t h = 0xcbf29ce484222325ull;
    Digest& add(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
        return *this;
    }
    template <typename T>
    Digest& add(T v) {
        return add(&v, sizeof v);
    }
};

constexpr int kLevels = 2;  // OptLevel::None, OptLevel::Speed
constexpr OptLevel kLevel[kLevels] = {OptLevel::None, OptLevel::Speed};

struct Kernel {
    std::string name;
    std::function<void()> reset;  // restores the inputs (not timed)
    std::function<uint64_t()> run_c;  // digest of the result
    std::function<uint64_t()> run_jit[kLevels];
};

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Compiles every function of bench/kernels/NAME.clif into `jit`; returns
/// the id of the function called NAME.
FuncId load_kernel(JITModule& jit, const std::string& name) {
    std::string path = std::string(HERON_SOURCE_DIR) + "/bench/kernels/" + name + ".clif";
    ParseOutcome p = parse_test_file(read_file(path));
    if (!p.ok() || p.file.functions.empty()) {
        std::fprintf(stderr, "%s: does not parse\n", path.c_str());
        std::exit(1);
    }
    std::optional<FuncId> wanted;
    std::vector<std::pair<FuncId, const Function*>> defs;
    for (const ParsedFunction& pf : p.file.functions) {
        const Function& f = *pf.func;
        std::string fname = f.name.to_string();
        if (!fname.empty() && fname[0] == '%') fname.erase(0, 1);
        FuncId id = jit.declare_function(fname, Linkage::Export, f.signature).value();
        if (fname == name) wanted = id;
        if (auto e = jit.define_function(id, f)) {
            std::fprintf(stderr, "%s: %s\n", path.c_str(), e->message.c_str());
            std::exit(1);
        }
    }
    if (auto e = jit.finalize_definitions()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), e->message.c_str());
        std::exit(1);
    }
    if (!wanted) {
        std::fprintf(stderr, "%s: no function %%%s\n", path.c_str(), name.c_str());
        std::exit(1);
    }
    return *wanted;
}

/// The kernel NAME of each level's module.
template <typename Fn>
std::array<Fn*, kLevels> jit_fn(std::array<JITModule*, kLevels> jits, const std::string& name) {
    std::array<Fn*, kLevels> fns{};
    for (int l = 0; l < kLevels; ++l) fns[l] = jits[l]->get_function<Fn>(load_kernel(*jits[l], name));
    return fns;
}

/// A Kernel with a JIT side per level: `run(f)` makes the closure for one
/// level's function pointer.
template <typename Fn, typename MakeRun>
Kernel kernel(std::string name, std::function<void()> reset, std::function<uint64_t()> run_c,
              const std::array<Fn*, kLevels>& fns, MakeRun run) {
    Kernel k{std::move(name), std::move(reset), std::move(run_c), {}};
    for (int l = 0; l < kLevels; ++l) k.run_jit[l] = run(fns[l]);
    return k;
}

std::vector<Kernel> make_kernels(std::array<JITModule*, kLevels> jit) {
    std::vector<Kernel> ks;
    // Inputs come from the command line's world (not constants the C
    // compiler could see): they are read through volatile.
    static volatile int64_t fib_n = 32;
    {
        auto f = jit_fn<int64_t(int64_t)>(jit, "fib");
        ks.push_back(kernel("fib", [] {}, [] { return Digest().add(k_fib(fib_n)).h; }, f,
                            [](auto* f) { return [f] { return Digest().add(f(fib_n)).h; }; }));
    }
    {
        static volatile uint64_t n = 4'000'000;
        static std::vector<uint8_t> buf(n);
        auto f = jit_fn<int64_t(uint8_t*, uint64_t)>(jit, "sieve");
        auto reset = [] { std::memset(buf.data(), 0x55, buf.size()); };
        ks.push_back(kernel("sieve", reset,
                      [] { return Digest().add(k_sieve(buf.data(), n)).add(buf.data(), buf.size()).h; },
                      f, [](auto* f) {
                          return [f] { return Digest().add(f(buf.data(), n)).add(buf.data(), buf.size()).h; };
                      }));
    }
    {
        static volatile uint64_t n = 160;
        static std::vector<double> a(n * n), b(n * n), c(n * n);
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = static_cast<double>((i * 7) % 13) - 6.5;
            b[i] = static_cast<double>((i * 5) % 11) * 0.25;
        }
        auto f = jit_fn<void(const double*, const double*, double*, uint64_t)>(jit, "matmul");
        auto reset = [] { std::fill(c.begin(), c.end(), -1.0); };
        ks.push_back(kernel("matmul", reset,
                      [] {
                          k_matmul(a.data(), b.data(), c.data(), n);
                          return Digest().add(c.data(), c.size() * 8).h;
                      },
                      f, [](auto* f) { return [f] {
                          f(a.data(), b.data(), c.data(), n);
                          return Digest().add(c.data(), c.size() * 8).h;
                      }; }));
    }
    {
        static volatile int64_t w = 320, h = 240, maxiter = 200;
        auto f = jit_fn<int64_t(int64_t, int64_t, int64_t)>(jit, "mandelbrot");
        ks.push_back(kernel("mandelbrot", [] {}, [] { return Digest().add(k_mandelbrot(w, h, maxiter)).h; },
                      f, [](auto* f) { return [f] { return Digest().add(f(w, h, maxiter)).h; }; }));
    }
    {
        static volatile uint64_t len = 4'000'000;
        static std::vector<uint8_t> buf(len);
        static uint32_t table[256];
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        uint64_t x = 88172645463325252ull;
        for (uint8_t& byte : buf) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            byte = static_cast<uint8_t>(x);
        }
        auto f = jit_fn<uint32_t(const uint8_t*, uint64_t, const uint32_t*)>(jit, "crc32");
        ks.push_back(kernel("crc32", [] {}, [] { return Digest().add(k_crc32(buf.data(), len, table)).h; },
                      f, [](auto* f) { return [f] { return Digest().add(f(buf.data(), len, table)).h; }; }));
    }
    {
        static volatile uint64_t limit = 300'000;
        auto f = jit_fn<int64_t(uint64_t)>(jit, "collatz");
        ks.push_back(kernel("collatz", [] {}, [] { return Digest().add(k_collatz(limit)).h; },
                      f, [](auto* f) { return [f] { return Digest().add(f(limit)).h; }; }));
    }
    {
        static volatile int32_t count = 3'000'000;
        // cnt = count; loop: acc += 7; acc *= 31; acc ^= acc >> 13;
        // acc ^= 0x5bd1e995; cnt -= 1; if cnt goto loop; halt.
        static std::vector<int32_t> code = {7, count, 1, 7, 2, 31, 6, 13, 3, 0x5bd1e995, 4, 0, 5, 1, 0, 0};
        auto f = jit_fn<int64_t(const int32_t*)>(jit, "bytecode");
        ks.push_back(kernel("bytecode", [] {}, [] { return Digest().add(k_bytecode(code.data())).h; },
                      f, [](auto* f) { return [f] { return Digest().add(f(code.data())).h; }; }));
    }
    {
        static volatile uint64_t steps = 400'000;
        static constexpr uint64_t kBodies = 5;
        static double bodies[kBodies * 7];
        auto reset = [] {
            for (uint64_t i = 0; i < kBodies; ++i) {
                double* b = bodies + 7 * i;
                double t = static_cast<double>(i);
                b[0] = 4.0 * std::cos(t), b[1] = 3.0 * std::sin(t), b[2] = 0.1 * t;
                b[3] = -0.3 * std::sin(t), b[4] = 0.4 * std::cos(t), b[5] = 0.01 * t;
                b[6] = i == 0 ? 39.47 : 0.01 * (t + 1.0);
            }
        };
        auto f = jit_fn<void(double*, uint64_t, uint64_t)>(jit, "nbody");
        ks.push_back(kernel("nbody", reset,
                      [] {
                          k_nbody(bodies, kBodies, steps);
                          return Digest().add(bodies, sizeof bodies).h;
                      },
                      f, [](auto* f) { return [f] {
                          f(bodies, kBodies, steps);
                          return Digest().add(bodies, sizeof bodies).h;
                      }; }));
    }
    return ks;
}

volatile uint64_t g_sink = 0;

/// One run of the JIT side (a named frame for callgrind's --toggle-collect).
[[gnu::noinline]] uint64_t run_jit_side(const Kernel& k, int level) { return k.run_jit[level](); }

double seconds(const std::function<void()>& reset, const std::function<uint64_t()>& run) {
    reset();
    auto t0 = std::chrono::steady_clock::now();
    uint64_t d = run();
    auto t1 = std::chrono::steady_clock::now();
    g_sink = g_sink + d;
    return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 7;
    std::string filter;
    bool levels_on[kLevels] = {true, true};
    RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--reps=", 0) == 0) reps = std::max(1, std::atoi(a.c_str() + 7));
        if (a.rfind("--filter=", 0) == 0) filter = a.substr(9);
        if (a == "--once") reps = 0;
        if (a.rfind("--regalloc=", 0) == 0) {
            auto algo = parse_regalloc(a.substr(11));
            if (!algo) {
                std::fprintf(stderr, "bench_kernels: unknown register allocator '%s' (linear-scan, single-pass)\n",
                             a.c_str() + 11);
                return 2;
            }
            regalloc = *algo;
        }
        if (a.rfind("--level=", 0) == 0) {
            auto only = parse_opt_level(a.substr(8));
            if (!only) {
                std::fprintf(stderr, "bench_kernels: unknown level '%s' (none, speed)\n", a.c_str() + 8);
                return 2;
            }
            for (int l = 0; l < kLevels; ++l) levels_on[l] = kLevel[l] == *only;
        }
    }
    std::array<std::unique_ptr<JITModule>, kLevels> modules;
    std::array<JITModule*, kLevels> jits{};
    for (int l = 0; l < kLevels; ++l) {
        JITBuilder b;
        b.opt_level(kLevel[l]);
        b.regalloc(regalloc);
        modules[l] = std::make_unique<JITModule>(std::move(b));
        jits[l] = modules[l].get();
    }
    std::vector<Kernel> kernels = make_kernels(jits);
    std::printf("%-12s %11s %11s %11s %8s %8s %10s\n", "kernel", "C -O2 (ms)", "none (ms)", "speed (ms)", "none/C",
                "speed/C", "speed/none");
    // Geomeans of none/C, speed/C, speed/none.
    double log_sum[3] = {0, 0, 0};
    int n = 0;
    bool ok = true;
    for (const Kernel& k : kernels) {
        if (!filter.empty() && k.name.find(filter) == std::string::npos) continue;
        k.reset();
        uint64_t want = k.run_c();
        bool same = true;
        for (int l = 0; l < kLevels; ++l) {
            if (!levels_on[l]) continue;
            k.reset();
            if (run_jit_side(k, l) == want) continue;
            std::printf("%-12s MISMATCH: the JIT result at opt_level %s differs from the C result\n", k.name.c_str(),
                        std::string(opt_level_name(kLevel[l])).c_str());
            same = false;
        }
        if (!same) {
            ok = false;
            continue;
        }
        if (reps == 0) {
            std::printf("%-12s ok\n", k.name.c_str());
            continue;
        }
        double best_c = 1e30, best[kLevels] = {1e30, 1e30};
        for (int r = 0; r < reps; ++r) {  // interleaved, so drift hits all
            best_c = std::min(best_c, seconds(k.reset, k.run_c));
            for (int l = 0; l < kLevels; ++l) {
                if (levels_on[l]) best[l] = std::min(best[l], seconds(k.reset, k.run_jit[l]));
            }
        }
        if (!levels_on[0] || !levels_on[1]) {
            const int l = levels_on[0] ? 0 : 1;
            std::printf("%-12s %11.2f %11s %11s %7.2fx\n", k.name.c_str(), best_c * 1e3,
                        std::string(opt_level_name(kLevel[l])).c_str(), "", best[l] / best_c);
            continue;
        }
        const double ratio[3] = {best[0] / best_c, best[1] / best_c, best[1] / best[0]};
        std::printf("%-12s %11.2f %11.2f %11.2f %7.2fx %7.2fx %9.2fx\n", k.name.c_str(), best_c * 1e3, best[0] * 1e3,
                    best[1] * 1e3, ratio[0], ratio[1], ratio[2]);
        for (int q = 0; q < 3; ++q) log_sum[q] += std::log(ratio[q]);
        ++n;
    }
    if (n > 0) {
        std::printf("%-12s %11s %11s %11s %7.2fx %7.2fx %9.2fx\n", "geomean", "", "", "", std::exp(log_sum[0] / n),
                    std::exp(log_sum[1] / n), std::exp(log_sum[2] / n));
    }
    return ok ? 0 : 1;
}
