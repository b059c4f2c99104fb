// Lowering of verified IR to AArch64 VCode: machine instructions over
// virtual registers, blocks in emission order without critical edges, and
// the allocator's view of them (ra::Function). The block order, the
// back-to-front instruction buffer and the allocator's block arrays are
// shared with the x86-64 lowering (codegen/machinst/lower_common.h): a pure
// instruction that every user folded is never emitted.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/isa/aarch64/inst.h"
#include "codegen/machinst/lower_common.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::aarch64 {

struct VCode : VCodeBase<MInst> {
    /// Text form for tests and `heron compile --vcode`.
    std::string to_string() const;
};

/// Lowers `func` (which must verify). Returns an empty string on success,
/// else "unsupported on aarch64: <what> in blockN". `ctx` is kept between
/// functions (its memory is reused); the overload without it uses a fresh
/// one.
std::string lower_function(const Function& func, VCode& out, LowerContext& ctx);
std::string lower_function(const Function& func, VCode& out);

/// The calling-convention facts lowering classifies signatures with
/// (codegen/machinst/abi.h): Heron's convention on AAPCS64.
const AbiFacts& abi_facts();

/// The allocator's register environment for AAPCS64.
const ra::MachineEnv& machine_env();

}  // namespace heron::aarch64
