// Lowering of verified IR to x86-64 VCode: machine instructions over
// virtual registers, blocks in emission order without critical edges, and
// the allocator's view of them (ra::Function).
//
// Instructions are lowered block by block in reverse emission order and
// backwards within a block, so every use is seen before its definition: a
// pure instruction whose results no emitted instruction reads (because each
// user folded it — an iconst into an immediate, an icmp into a branch) is
// not emitted at all.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/isa/x64/inst.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::x64 {

struct VCode {
    ra::Function ra;
    std::vector<MInst> insts;
    std::vector<uint32_t> block_ir;                   // IR block per VCode block; ~0u for edge blocks
    std::vector<std::vector<uint32_t>> jump_tables;   // BrTable targets (VCode blocks), by MInst::aux
    std::vector<ExternalName> symbols;                // Call / FuncAddr targets, by MInst::aux
    uint32_t outgoing_args_size = 0;                  // bytes of stack arguments of the largest call

    void clear();
    uint32_t num_blocks() const { return ra.num_blocks(); }
    /// Text form for tests and `heron compile --vcode`.
    std::string to_string() const;
};

/// Lowers `func` (which must verify). Returns an empty string on success,
/// else a message naming what this backend cannot compile yet.
std::string lower_function(const Function& func, const Settings& settings, VCode& out);

/// The allocator's register environment for x86-64 System V.
const ra::MachineEnv& machine_env();

}  // namespace heron::x64
