// Emission of allocated AArch64 VCode through asmjit's a64::Assembler:
// AAPCS64 frame (frame record, callee-saved pairs, spill slots and explicit
// stack slots above the outgoing arguments at sp), stack probes, the
// allocator's edits as moves, out-of-line `udf` trap stubs, jump tables of
// 32-bit offsets, and 8-byte literal slots for call targets (patched by the
// loader through relocations, as on x86-64).
#pragma once

#include <memory>
#include <string>

#include "codegen/ir/function.h"
#include "codegen/isa/aarch64/lower.h"
#include "codegen/machinst/compiled_code.h"

namespace heron::aarch64 {

/// What emission keeps from one function to the next (the TargetIsa holds
/// one): asmjit's CodeHolder and assembler (the CodeHolder is emptied per
/// function, its memory reused) and the emitter's tables. Defined in
/// emit.cpp.
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
std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc, CompiledCode& out,
                          EmitContext& ctx);
std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc, CompiledCode& out);

}  // namespace heron::aarch64
