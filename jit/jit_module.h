// JITModule: compiles IR functions for the host, links them to each other
// and to host symbols, maps them W^X and hands out function pointers.
//
//   JITModule jit(JITBuilder().symbol("print_i64", &print_i64));
//   FuncId f = jit.declare_function("fib", Linkage::Export, sig).value();
//   jit.define_function(f, func);            // verified and compiled here
//   jit.finalize_definitions();              // placed, linked, made executable
//   auto* fib = jit.get_function<int64_t(int64_t)>(f);
//
// Calls between functions go through a table of 8-byte cells (one per
// declared function or host symbol), so a function can be freed or
// redefined on its own: only its cell changes. Traps inside JIT code are
// reported through `call` (or call_with_traps around a direct call).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/data_value.h"
#include "codegen/ir/function.h"
#include "codegen/machinst/compiled_code.h"
#include "codegen/machinst/isa.h"
#include "jit/jit_error.h"
#include "jit/symbols.h"
#include "jit/trap_registry.h"

namespace heron {

enum class Linkage : uint8_t { Local, Export, Import };

struct FuncId {
    uint32_t index = ~0u;
    friend bool operator==(FuncId a, FuncId b) { return a.index == b.index; }
};
struct DataId {
    uint32_t index = ~0u;
};

class JITBuilder {
public:
    JITBuilder();
    JITBuilder& symbol(std::string name, const void* address);
    JITBuilder& symbol_lookup(SymbolResolver::LookupFn fn);
    JITBuilder& isa(std::unique_ptr<TargetIsa> isa);
    /// Run the register allocation checker on every function (tests).
    JITBuilder& check_regalloc(bool on);
    /// OptLevel::Speed runs the IR pipeline (codegen/opt/pipeline.h) on a
    /// copy of each defined function before compiling it; None (the
    /// default) compiles the function as given.
    JITBuilder& opt_level(OptLevel level);
    /// Verify the function after every pass of the pipeline (tests).
    JITBuilder& verify_passes(bool on);
    /// The register allocator (default LinearScan; SinglePass compiles
    /// faster, the code is slower).
    JITBuilder& regalloc(RegallocAlgorithm algorithm);

private:
    friend class JITModule;
    SymbolResolver symbols_;
    std::shared_ptr<TargetIsa> isa_;
    CompileOptions options_;
};

/// The result of calling a JIT function through `JITModule::call`.
struct JitCallOutcome {
    enum class Kind { Return, Trap, Error };
    Kind kind = Kind::Return;
    std::vector<DataValue> values;
    TrapInfo trap;
    std::string message;
};

/// The same outcome in the interpreter's terms, so tools and tests compare
/// the two engines with one type.
InterpOutcome to_interp_outcome(JitCallOutcome j);

class JITModule {
public:
    explicit JITModule(JITBuilder builder = JITBuilder());
    ~JITModule();
    JITModule(const JITModule&) = delete;
    JITModule& operator=(const JITModule&) = delete;

    /// Declares a function. Declaring a name again with the same signature
    /// returns the same id; with another signature it is an error.
    JitResult<FuncId> declare_function(std::string_view name, Linkage linkage, const Signature& sig);
    std::optional<FuncId> find_function(std::string_view name) const;
    /// Verifies, optimizes (at the builder's opt_level, on a copy) and
    /// compiles `func` for `id`; it becomes callable after the next
    /// finalize_definitions. Defining an already defined function replaces
    /// it then (redefinition).
    std::optional<JitError> define_function(FuncId id, const Function& func);
    /// Places, links and protects everything defined since the last call.
    /// On error nothing of this batch is installed and earlier code stays.
    std::optional<JitError> finalize_definitions();
    /// Releases a function's code (its pages are reused by later
    /// definitions); its cell is cleared, so calls through it fault.
    std::optional<JitError> free_function(FuncId id);

    const void* get_finalized_function(FuncId id) const;
    template <typename Fn>
    Fn* get_function(FuncId id) const {
        return reinterpret_cast<Fn*>(const_cast<void*>(get_finalized_function(id)));
    }
    const CompiledCode* compiled_code(FuncId id) const;
    const Signature* signature(FuncId id) const;

    JitResult<DataId> declare_data(std::string_view name, bool writable);
    std::optional<JitError> define_data(DataId id, std::span<const uint8_t> bytes);
    void* get_finalized_data(DataId id) const;

    /// Calls a finalized function with typed arguments through a generated
    /// trampoline, turning a trap into Kind::Trap.
    JitCallOutcome call(FuncId id, std::span<const DataValue> args);

    TargetIsa& isa() { return *isa_; }
    OptLevel opt_level() const;
    /// mmap/mprotect calls the module's code memory has made (benchmarks).
    uint64_t code_memory_syscalls() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    TargetIsa* isa_;
};

}  // namespace heron
