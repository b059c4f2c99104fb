// The reference interpreter: the semantics of ir-reference.md, bit for bit,
// including NaN rules and traps. It is the oracle of every differential
// test. Stack slots are real byte arrays; loads and stores check that the
// address lies inside a live slot (or a registered host buffer).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/data_value.h"
#include "codegen/ir/function.h"

namespace heron {

struct InterpOutcome {
    enum class Kind {
        Return,     // `values` holds the results
        Trap,       // `trap` holds the code; `where` the function and instruction
        Error,      // not a trap: UB detected, missing callee, bad input; `message` says what
        OutOfFuel,  // the fuel limit ran out (a runaway loop)
    };
    Kind kind = Kind::Return;
    std::vector<DataValue> values;
    TrapCode trap;
    std::string message;  // for Trap: "int_divz in %f at inst5 (v3 = udiv v1, v2)"
};

/// Host function callable from interpreted code through `call` of a name
/// that no interpreted function has.
using HostFunction = std::function<std::vector<DataValue>(std::span<const DataValue>)>;

class Interpreter {
public:
    Interpreter();
    ~Interpreter();
    Interpreter(const Interpreter&) = delete;
    Interpreter& operator=(const Interpreter&) = delete;

    /// Makes `func` callable by its name (`%name` or `uN:M`). The function
    /// must outlive the interpreter and be verified.
    void add_function(const Function& func);
    void add_host_function(std::string name, Signature sig, HostFunction fn);
    /// Maximum number of instructions one `call` may execute (0 = unlimited).
    void set_fuel(uint64_t fuel);
    /// Maximum call depth before the run stops with a stk_ovf trap.
    void set_max_depth(uint32_t depth);

    /// Calls a function by name (without '%'). Argument count and types
    /// must match its signature (else Kind::Error).
    InterpOutcome call(std::string_view name, std::span<const DataValue> args);
    InterpOutcome call(const Function& func, std::span<const DataValue> args);

    /// Instructions executed by the last call (for benchmarks).
    uint64_t executed() const;

private:
    struct Impl;
    Impl* impl_;
};

}  // namespace heron
