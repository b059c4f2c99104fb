// Emission of allocated x86-64 VCode through asmjit's x86::Assembler:
// frame layout (System V: rbp frame, callee-saved pushes, spill slots and
// explicit stack slots below, outgoing stack arguments at rsp), the
// allocator's edits as moves, out-of-line trap stubs, jump tables and
// 8-byte literal slots for call targets (patched by the loader through
// relocations).
#pragma once

#include <memory>
#include <string>

#include "codegen/ir/function.h"
#include "codegen/isa/x64/lower.h"
#include "codegen/machinst/compiled_code.h"

namespace heron::x64 {

/// What emission keeps from one function to the next (the TargetIsa holds
/// one): asmjit's CodeHolder (reset per function, its memory reused) and
/// the emitter's tables. Defined in emit.cpp.
class EmitContext {
public:
    EmitContext();
    ~EmitContext();
    EmitContext(const EmitContext&) = delete;
    EmitContext& operator=(const EmitContext&) = delete;
    struct State;
    State& state() { return *state_; }

private:
    std::unique_ptr<State> state_;
};

/// Emits `vcode` with the allocation `alloc`. Returns an empty string on
/// success. The overload without a context uses a fresh one.
std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc,
                          const Settings& settings, CompiledCode& out, EmitContext& ctx);
std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc,
                          const Settings& settings, CompiledCode& out);

}  // namespace heron::x64
