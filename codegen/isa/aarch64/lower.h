// Lowering of verified IR to AArch64 VCode: machine instructions over
// virtual registers, blocks in emission order without critical edges, and
// the allocator's view of them (ra::Function). Same shape as the x86-64
// lowering (isa/x64/lower.h): blocks in reverse emission order, each
// backwards, so a pure instruction that every user folded is never emitted.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/isa/aarch64/inst.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::aarch64 {

struct VCode {
    ra::Function ra;
    std::vector<MInst> insts;
    std::vector<uint32_t> block_ir;                   // IR block per VCode block; ~0u for edge blocks
    std::vector<std::vector<uint32_t>> jump_tables;   // BrTable targets (VCode blocks), default first
    std::vector<ExternalName> symbols;                // Call / FuncAddr targets, by MInst::aux
    uint32_t outgoing_args_size = 0;                  // bytes of stack arguments of the largest call

    void clear();
    uint32_t num_blocks() const { return ra.num_blocks(); }
};

/// Lowers `func` (which must verify). Returns an empty string on success,
/// else "unsupported on aarch64: <what> in blockN".
std::string lower_function(const Function& func, VCode& out);

/// The allocator's register environment for AAPCS64.
const ra::MachineEnv& machine_env();

}  // namespace heron::aarch64
