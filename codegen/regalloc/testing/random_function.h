// Random machine functions for testing the register allocator: the property
// tests, the benchmark and fuzz/fuzz_regalloc.cpp all draw from here.
//
// A function is valid by the contract of regalloc.h: a random CFG (forward
// edges, back edges forming loops, self loops) with critical edges split,
// strict SSA (every operand is a value of a dominating definition), block
// parameters with branch arguments, and instructions whose constraints mimic
// x86-64: two-address ALU ops (Reuse), three-address ops, Early defs, Late
// uses, Any operands (memory forms), plain moves, division with both inputs
// and outputs in fixed registers, shifts with a fixed count register, calls
// with fixed arguments and results and a clobber set (sometimes every
// register), and a vreg named twice with two fixed registers. No instruction
// needs more registers of a class at once than the environment has, counting
// every Reg use as possibly live after the instruction (its register is then
// taken through the Late point too, as no interval is split inside an
// instruction).
//
// Decisions come from a RandomSource: a seeded generator for tests, or a
// fuzzer's input bytes (exhausted input reads as zeros, which yields small,
// simple functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/regalloc/regalloc.h"

namespace heron::ra::testing {

class RandomSource {
public:
    explicit RandomSource(uint64_t seed) : state_(seed) {}
    RandomSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    /// A number in [0, n); n > 0.
    uint32_t below(uint32_t n);
    /// True with probability percent/100.
    bool chance(uint32_t percent) { return below(100) < percent; }
    /// A number in [lo, hi].
    uint32_t between(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }

private:
    uint64_t next64();
    uint64_t state_ = 0;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0, pos_ = 0;
};

struct GenOptions {
    uint32_t min_blocks = 1, max_blocks = 12;
    uint32_t min_insts = 1, max_insts = 10;  // per block, before the terminator
    uint32_t extra_edge_percent = 35;        // a block gets a second (third) successor
    /// Extra edges reach at most this many blocks away, and loops (back
    /// edges) nest properly; 0: edges go anywhere and loops may overlap.
    uint32_t edge_window = 0;
    uint32_t max_params = 3;
    uint32_t float_percent = 25;  // values of the float class
    uint32_t fixed_percent = 12;  // div, shifts, twice-fixed operands
    uint32_t call_percent = 6;
    uint32_t call_clobbers_all_percent = 30;  // a call clobbers every allocatable register
    uint32_t far_use_percent = 15;            // an operand from far up the dominator tree
    uint32_t far_use_max_steps = 64;          // how far, in dominators with values
    uint32_t any_percent = 20;                // Any instead of Reg where the form allows
};

/// Generator settings drawn from `meta`: block and instruction counts
/// (blocks with only their jump included), edge density and locality,
/// parameters, and the shares of floats, fixed registers, calls and memory
/// operands. The property tests draw them per seed, fuzz_regalloc from its
/// input's first bytes.
GenOptions varied_options(RandomSource& meta);

/// A random function valid for `env` (whose classes each need at least one
/// allocatable register; instructions that need more are left out).
Function random_function(RandomSource& rng, const MachineEnv& env, const GenOptions& options = {});

/// x86-64 as the backend uses it: rax rcx rdx rsi rdi r8 r9 r10 rbx r12-r15
/// (caller-saved first), scratch r11; xmm0-xmm14, scratch xmm15.
MachineEnv x64_env();
/// A small environment: the first `int_regs` / `float_regs` registers of
/// each class, scratch the next one.
MachineEnv tiny_env(unsigned int_regs, unsigned float_regs);
/// The environments the property tests and fuzz_regalloc run in, from
/// x86-64 down to two registers per class.
struct NamedEnv {
    const char* name;
    MachineEnv env;
};
std::vector<NamedEnv> test_envs();

/// The registers a call clobbers in `env`: for x64_env() the System V
/// caller-saved ones, else the first half of each class.
PRegSet caller_saved(const MachineEnv& env);

}  // namespace heron::ra::testing
