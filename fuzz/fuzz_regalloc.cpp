// fuzz_regalloc: bytes -> a random machine function (the generator of
// codegen/regalloc/testing/, valid by the allocator's contract) -> register
// allocation -> the symbolic checker. The allocator must accept every such
// function and the checker must accept every allocation.
//
// The first bytes pick the machine environment (x86-64's 13+15 registers
// down to two per class) and the generator's shape (block and instruction
// counts, edge density and locality, shares of floats, fixed registers,
// calls and memory operands); the rest drives the generator. One allocator
// Context per algorithm serves every input, as in the backend, so state left
// behind by one function would show up in the next.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/regalloc/regalloc.h"
#include "codegen/regalloc/testing/dump.h"
#include "codegen/regalloc/testing/random_function.h"

using namespace heron::ra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Twelve bytes of shape (RandomSource reads three bytes per draw, with
    // zeros past the end), the rest for the function itself.
    constexpr size_t kShapeBytes = 12 * 3 + 3;
    const size_t shape_size = size < kShapeBytes ? size : kShapeBytes;
    testing::RandomSource meta(data, shape_size);
    static const std::vector<testing::NamedEnv> envs = testing::test_envs();
    const MachineEnv& env = envs[meta.below(static_cast<uint32_t>(envs.size()))].env;
    const testing::GenOptions opt = testing::varied_options(meta);
    testing::RandomSource rng(data + shape_size, size - shape_size);
    const Function f = testing::random_function(rng, env, opt);

    static Context ctx[2];
    static Output out;
    for (Algorithm algo : {Algorithm::LinearScan, Algorithm::SinglePass}) {
        std::string err = allocate(f, env, out, ctx[static_cast<int>(algo)], algo);
        if (err.empty()) err = check(f, env, out);
        if (err.empty()) continue;
        std::fprintf(stderr, "fuzz_regalloc (%s): %s\n%s\n", algo == Algorithm::LinearScan ? "linear scan" : "single pass",
                     err.c_str(), testing::dump(f, &out).c_str());
        std::abort();
    }
    return 0;
}
