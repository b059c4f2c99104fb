// The differential harness: run every function of a generated module on
// every one of its inputs in two engines and compare the outcomes.
//
// An `Engine` is anything that can execute IR: the reference interpreter
// (`InterpreterEngine`, here), the JIT (supplied by the backend), the JIT
// after optimization. Outcomes must agree exactly: the same kind (return or
// trap), the same trap code, and the same returned bits. Arithmetic NaNs
// may legitimately differ between engines (ir-reference.md 1.4), so the
// generator's `canonicalize_nans` option removes them at the source and the
// harness compares bit for bit; `NanCompare::AnyNan` is the looser rule for
// modules generated without it (floats that are NaN on both sides match).
// A run that hits the fuel limit on either side is skipped and counted; an
// engine error (UB detected, load failure) is always a mismatch.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "fuzz/gen/generator.h"

namespace heron::gen {

class Engine {
public:
    virtual ~Engine() = default;
    /// A short name for reports ("interp", "jit-O0", ...).
    virtual std::string name() const = 0;
    /// Makes every function of `m` callable by name, forgetting any module
    /// loaded before. False (with `error` set) if the engine cannot.
    virtual bool load(const Module& m, std::string& error) = 0;
    /// Calls one function of the loaded module.
    virtual InterpOutcome call(const Function& func, std::span<const DataValue> args) = 0;
};

/// The reference interpreter as an engine.
class InterpreterEngine : public Engine {
public:
    static constexpr uint64_t kDefaultFuel = 1'000'000;

    explicit InterpreterEngine(uint64_t fuel = kDefaultFuel, uint32_t max_depth = 64)
        : fuel_(fuel), max_depth_(max_depth) {}

    std::string name() const override { return "interp"; }
    bool load(const Module& m, std::string& error) override;
    InterpOutcome call(const Function& func, std::span<const DataValue> args) override;

    Interpreter* interpreter() { return interp_.get(); }

private:
    uint64_t fuel_;
    uint32_t max_depth_;
    std::unique_ptr<Interpreter> interp_;
};

enum class NanCompare {
    Exact,   // every bit counts
    AnyNan,  // float values that are NaN on both sides match
};

struct DiffOptions {
    NanCompare nans = NanCompare::Exact;
    /// How many mismatches keep a full description.
    size_t max_reports = 8;
};

struct Mismatch {
    std::string function;           // "%f2"
    std::vector<DataValue> args;
    std::string description;        // what each engine did
};

struct DiffResult {
    uint64_t pairs = 0;         // function x input pairs run
    uint64_t returned = 0;      // both returned, results equal
    uint64_t trapped = 0;       // both trapped with the same code
    uint64_t skipped_fuel = 0;  // out of fuel on either side
    uint64_t mismatches = 0;    // disagreements, engine errors and load failures
    std::vector<Mismatch> reports;

    bool ok() const { return mismatches == 0; }
    /// Adds another run's counts (and reports, up to `max_reports`).
    void merge(const DiffResult& other, size_t max_reports = 8);
    /// "pairs 10000: returned 6000, trapped 3990, skipped 10, mismatches 0"
    /// followed by the kept reports.
    std::string summary() const;
};

/// Runs every (function, input) pair of `m` in both engines and compares.
/// `a` runs first; when it runs out of fuel the pair is skipped without
/// calling `b`, so put the engine with fuel (the interpreter) first when the
/// module may loop forever (`GenOptions::unbounded_loops`).
DiffResult run_differential(const Module& m, Engine& a, Engine& b, const DiffOptions& options = {});

/// True if the two outcomes agree; otherwise `why` says how they differ.
bool outcomes_match(const InterpOutcome& a, const InterpOutcome& b, NanCompare nans, std::string& why);

/// "return [i32 5, f64 0x7ff8000000000000]", "trap int_divz", ...
std::string describe_outcome(const InterpOutcome& o);
/// "i32 -5", "f32 0x7fc00000": the type and, for floats, the raw bits.
std::string describe_value(const DataValue& v);

}  // namespace heron::gen
