// The reference interpreter: the semantics of ir-reference.md, bit for bit,
// including NaN rules and traps. It is the oracle of every differential
// test. Stack slots are real byte arrays; loads and stores check that the
// address lies inside a live slot (or a registered host buffer).
//
// Execution model (interpreter.cpp, decoded.h): each function is decoded
// once into a flat array and run by one switch loop over an explicit frame
// stack, so IR recursion never recurses on the host stack. Addresses:
// `stack_addr` hands out tagged addresses in a range no host pointer uses
// (0x5000_0000_0000_0000 upwards, never reused, so an access through a
// returned activation's slot is detected); `func_addr` hands out tagged
// addresses (0x6000_0000_0000_0000 + 16 * id) that only call_indirect
// accepts; host buffers registered with add_host_memory keep their real
// addresses.
//
// Defaults: fuel 1,000,000,000 instructions per call (0 = unlimited), call
// depth 100,000 frames, stack memory (8 bytes per IR value per frame plus
// the stack slots) 256 MiB; exceeding depth or stack memory traps `stk_ovf`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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
        Trap,       // `trap` holds the code; `function` and `inst` say where
        Error,      // not a trap: UB detected, missing callee, bad input; `message` says what
        OutOfFuel,  // the fuel limit ran out (a runaway loop)
    };
    Kind kind = Kind::Return;
    std::vector<DataValue> values;
    TrapCode trap;
    std::string message;  // for Trap: "int_divz in %f at inst5 in block2 (v3 = udiv v1, v2)"
    std::string function;     // Trap/Error/OutOfFuel: the function it stopped in ("%f"), if any
    std::optional<Inst> inst;  // ... and the instruction, if any
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
    /// must outlive the interpreter and be verified (unverified IR gives
    /// Kind::Error where the interpreter notices, never a crash). Its
    /// decoded form is cached; adding a function again re-decodes it.
    void add_function(const Function& func);
    /// `name` with or without '%' (or a user name "u1:7"). Host functions
    /// must not call back into this interpreter.
    void add_host_function(std::string name, Signature sig, HostFunction fn);
    /// Maximum number of instructions one `call` may execute (0 = unlimited).
    void set_fuel(uint64_t fuel);
    /// Maximum call depth before the run stops with a stk_ovf trap.
    void set_max_depth(uint32_t depth);
    /// Maximum bytes of register files plus stack slots of all live frames
    /// before the run stops with a stk_ovf trap.
    void set_max_stack_bytes(uint64_t bytes);

    /// Lets loads and stores reach [base, base + size) at its real address.
    /// The buffer must stay valid until clear_host_memory or destruction.
    void add_host_memory(void* base, size_t size);
    void clear_host_memory();
    /// Copies bytes from / to interpreter memory (live stack slots while a
    /// call runs, e.g. from a host function; host buffers). False if any
    /// byte is not accessible.
    bool read_memory(uint64_t addr, void* out, size_t size) const;
    bool write_memory(uint64_t addr, const void* in, size_t size);

    /// Drops the cached decoded form of `func` (call it after changing a
    /// function that was already run).
    void invalidate(const Function& func);

    /// Calls a function by name (without '%'). Argument count and types
    /// must match its signature (else Kind::Error).
    InterpOutcome call(std::string_view name, std::span<const DataValue> args);
    /// Calls `func` directly. If it is not the function registered under its
    /// name, it is decoded for this call only (and its own name resolves to
    /// it, for recursion).
    InterpOutcome call(const Function& func, std::span<const DataValue> args);

    /// Instructions executed by the last call (for benchmarks).
    uint64_t executed() const;

private:
    struct Impl;
    Impl* impl_;
};

}  // namespace heron
