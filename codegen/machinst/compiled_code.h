// The result of compiling one function: machine code bytes plus everything a
// loader needs to place and link them (relocations), and what a trap handler
// and a disassembler need (trap sites, block offsets, IR locations).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/instructions.h"
#include "codegen/ir/signature.h"

namespace heron {

/// A place in the code that must receive, as an 8-byte little-endian value,
/// the address of an 8-byte cell that holds the entry address of `target`
/// (a GOT entry). Calls load the cell's address from the slot and call
/// through the cell, so a function redefined in the JIT module only needs
/// its cell rewritten.
struct Relocation {
    uint32_t offset = 0;  // of the 8-byte slot
    ExternalName target;
    int64_t addend = 0;
};

/// An instruction that may trap: a fault (or ud2) at `offset` reports `code`.
struct CodeTrapSite {
    uint32_t offset = 0;
    TrapCode code;
    uint32_t ir_inst = ~0u;  // the IR instruction, for messages
};

struct CompiledCode {
    std::vector<uint8_t> bytes;
    std::vector<Relocation> relocations;
    std::vector<CodeTrapSite> trap_sites;           // sorted by offset
    std::vector<std::pair<uint32_t, std::string>> labels;  // offset -> "block3" (for disassembly)
    std::vector<std::pair<uint32_t, uint32_t>> ir_insts;   // offset -> IR inst (start of its code)
    // Where the code refers to a relocation slot PC-relatively, in code
    // order: on x86-64 the rel32 field of the `mov`, on AArch64 the `ldr`
    // (literal). An object file (jit/object_module.h) moves the slots out of
    // the code and relocates these references instead.
    std::vector<uint32_t> slot_refs;
    uint32_t frame_size = 0;
    uint32_t spill_slots = 0;

    void clear() {
        bytes.clear();
        relocations.clear();
        trap_sites.clear();
        labels.clear();
        ir_insts.clear();
        slot_refs.clear();
        frame_size = spill_slots = 0;
    }
};

}  // namespace heron
