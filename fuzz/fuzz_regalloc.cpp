// fuzz_regalloc: bytes -> a random machine function (the generator of
// codegen/regalloc/testing/, valid by the allocator's contract) -> register
// allocation -> the symbolic checker. The allocator must accept every such
// function and the checker must accept every allocation.
//
// The first bytes pick the machine environment (x86-64's 13+15 registers
// down to two per class) and the generator's shape (block and instruction
// counts, edge density and locality, shares of floats, fixed registers,
// calls and memory operands); the rest drives the generator. One allocator
// Context serves every input, as in the backend, so state left behind by
// one function would show up in the next.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/regalloc/regalloc.h"
#include "codegen/regalloc/testing/dump.h"
#include "codegen/regalloc/testing/random_function.h"

namespace {

using namespace heron::ra;

MachineEnv env_from(uint32_t pick) {
    switch (pick) {
    case 0: return testing::x64_env();
    case 1: return testing::tiny_env(4, 4);
    case 2: return testing::tiny_env(3, 3);
    case 3: return testing::tiny_env(2, 2);
    case 4: return testing::tiny_env(3, 2);
    default: return testing::tiny_env(6, 3);
    }
}

testing::GenOptions shape_from(testing::RandomSource& meta) {
    testing::GenOptions opt;
    opt.max_blocks = meta.between(1, 40);
    opt.min_blocks = meta.between(1, opt.max_blocks);
    opt.max_insts = meta.between(1, 20);
    opt.min_insts = meta.between(0, opt.max_insts);
    opt.extra_edge_percent = meta.below(90);
    opt.max_params = meta.below(7);
    opt.float_percent = meta.below(60);
    opt.fixed_percent = meta.below(40);
    opt.call_percent = meta.below(25);
    opt.call_clobbers_all_percent = meta.below(100);
    opt.far_use_percent = meta.below(50);
    opt.any_percent = meta.below(60);
    opt.edge_window = meta.chance(50) ? meta.between(1, 10) : 0;
    return opt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Twelve bytes of shape (RandomSource reads three bytes per draw, with
    // zeros past the end), the rest for the function itself.
    constexpr size_t kShapeBytes = 12 * 3 + 3;
    const size_t shape_size = size < kShapeBytes ? size : kShapeBytes;
    testing::RandomSource meta(data, shape_size);
    const MachineEnv env = env_from(meta.below(6));
    const testing::GenOptions opt = shape_from(meta);
    testing::RandomSource rng(data + shape_size, size - shape_size);
    const Function f = testing::random_function(rng, env, opt);

    static Context ctx;
    static Output out;
    std::string err = allocate(f, env, out, ctx);
    if (err.empty()) err = check(f, env, out);
    if (err.empty()) return 0;
    std::fprintf(stderr, "fuzz_regalloc: %s\n%s\n", err.c_str(), testing::dump(f, &out).c_str());
    std::abort();
}
