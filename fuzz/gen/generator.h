// The seeded random IR generator shared by the unit tests and the fuzzers.
//
// A byte source (`Entropy`: libFuzzer bytes, or a seeded mt19937_64 for
// tests) drives every choice, so the same bytes or seed always give the same
// module. `generate_module` builds several functions %f0, %f1, ... where
// function k may call functions j < k (directly and through `func_addr` +
// `call_indirect`, and by `return_call` between `tail` functions); the
// absence of recursion plus loops with bounded trip counts makes every
// program terminate, and a running estimate of the dynamic instruction count
// keeps each call cheap. Bodies are structured (sequences, if/else diamonds,
// block-argument selects, counted loops with breaks, `br_table` switches), so
// dominance holds by construction: a region only sees values of the regions
// that enclose it, and merge blocks receive arm values as block parameters.
//
// Only valid IR with defined behaviour is produced (ir-reference.md):
// memory accesses stay inside stack slots that are fully initialized at entry
// (`notrap`/`aligned` only where true), addresses never flow into results,
// trapping ops are guarded or left to trap with the documented codes. With
// `canonicalize_nans` every NaN an arithmetic float op makes is replaced by
// the canonical NaN right away, so results are bit-exact across engines
// (ir-reference.md 1.4 lets engines differ in such NaNs' sign and payload).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "codegen/ir/data_value.h"
#include "codegen/ir/function.h"

namespace heron::gen {

/// Where choices come from: a byte span (fuzzers) or a seeded generator
/// (tests). When the bytes run out every draw returns zero, which always
/// means "the smallest / first option", so generation still ends.
class Entropy {
public:
    explicit Entropy(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    explicit Entropy(uint64_t seed) : rng_(std::mt19937_64(seed)) {}

    uint8_t byte();
    uint64_t u64();
    /// A number in [0, n); n must be nonzero.
    uint32_t below(uint32_t n);
    /// A number in [lo, hi].
    uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }
    /// True with about `percent`% probability; always false on zero bytes.
    bool chance(uint32_t percent) { return below(100) >= 100 - percent; }
    template <typename T>
    const T& pick(std::span<const T> items) {
        return items[below(static_cast<uint32_t>(items.size()))];
    }
    template <typename T, size_t N>
    const T& pick(const T (&items)[N]) {
        return items[below(static_cast<uint32_t>(N))];
    }

    /// Byte mode only: true once every byte was used.
    bool exhausted() const { return !rng_ && pos_ >= bytes_.size(); }

private:
    std::span<const uint8_t> bytes_;
    size_t pos_ = 0;
    std::optional<std::mt19937_64> rng_;
};

/// Which features the generator may use, and how big things get.
struct GenOptions {
    bool ints = true;        // integer arithmetic, bit ops, shifts, conversions
    bool floats = true;      // float types and float ops
    bool memory = true;      // stack slots, stack_addr, loads and stores
    bool calls = true;       // call, call_indirect, func_addr, return_call
    bool loops = true;       // counted loops with block parameters
    bool br_table = true;    // switches
    bool traps = true;       // unguarded trapping ops, trap/trapz/trapnz
    /// Loops whose exit depends on arbitrary data; only fuel ends them.
    bool unbounded_loops = false;
    /// Replace every NaN produced by an arithmetic float op with the
    /// canonical NaN (fcmp uno + select), making results bit-exact.
    bool canonicalize_nans = false;

    uint32_t min_functions = 1;
    uint32_t max_functions = 4;
    uint32_t max_params = 4;
    uint32_t max_returns = 3;
    uint32_t max_blocks = 28;       // per function
    uint32_t max_insts = 160;       // per function (soft: checked before each item)
    uint32_t max_depth = 3;         // nesting of diamonds / loops / switches
    uint32_t max_stack_slots = 3;
    uint32_t max_loop_trips = 6;
    /// Soft bound of instructions one call of a function executes, callees
    /// included (bounded loops only).
    uint64_t max_dynamic_insts = 4000;
    uint32_t inputs_per_function = 8;
};

/// A generated module: functions[k] is %fk and may call %f0..%f(k-1);
/// inputs[k] holds argument lists for functions[k], typed by its signature.
struct Module {
    std::vector<std::unique_ptr<Function>> functions;
    std::vector<std::vector<std::vector<DataValue>>> inputs;

    /// The function whose name is %fN, or null.
    const Function* find(std::string_view name) const;
};

class IrGenerator {
public:
    IrGenerator(Entropy& entropy, const GenOptions& options) : entropy_(entropy), options_(options) {}

    Module generate_module();

    /// One argument list for `sig`, mixing edge values (0, +-1, MIN, MAX,
    /// NaNs with payloads, -0.0, +-Inf, subnormals) with random bits.
    std::vector<DataValue> generate_inputs(const Signature& sig);
    /// One value of type `t` drawn the same way.
    DataValue interesting_value(Type t);

private:
    Entropy& entropy_;
    const GenOptions& options_;
};

/// Convenience for `IrGenerator(entropy, options).generate_module()`.
Module generate_module(Entropy& entropy, const GenOptions& options);

}  // namespace heron::gen
