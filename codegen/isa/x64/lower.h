// Lowering of verified IR to x86-64 VCode: machine instructions over
// virtual registers, blocks in emission order without critical edges, and
// the allocator's view of them (ra::Function). The block order, the
// back-to-front instruction buffer and the allocator's block arrays are
// shared with the other backends (codegen/machinst/lower_common.h): a pure
// instruction that every user folded is never emitted.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/isa/x64/inst.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/machinst/lower_common.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::x64 {

struct VCode : VCodeBase<MInst> {
    /// Text form for tests and `heron compile --vcode`.
    std::string to_string() const;
};

/// Lowers `func` (which must verify). Returns an empty string on success,
/// else a message naming what this backend cannot compile yet. `ctx` is
/// kept between functions (its memory is reused); the overload without it
/// uses a fresh one.
std::string lower_function(const Function& func, const Settings& settings, VCode& out, LowerContext& ctx);
std::string lower_function(const Function& func, const Settings& settings, VCode& out);

/// The calling-convention facts lowering classifies signatures with
/// (codegen/machinst/abi.h): Heron's convention on System V x86-64.
const AbiFacts& abi_facts();

/// The allocator's register environment for x86-64 System V.
const ra::MachineEnv& machine_env();

}  // namespace heron::x64
