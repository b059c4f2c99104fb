// What an instruction may do besides computing its results, summarized
// from the opcode table's flags (opcodes.def) — B3's `Effects` idea. Code
// motion asks `movable()`: an instruction that only reads its operands and
// writes its results may be computed anywhere its operands are available,
// even on a path that would not have computed it.
#pragma once

#include "codegen/ir/instructions.h"

namespace heron {

struct Effects {
    bool control = false;       // terminator or branch: ends or steers a block
    bool calls = false;         // may run arbitrary code
    bool reads_memory = false;
    bool writes_memory = false;
    bool may_trap = false;

    /// Pure: no control, calls, memory access or trap.
    bool movable() const { return !control && !calls && !reads_memory && !writes_memory && !may_trap; }
};

inline Effects effects_of(Opcode op) {
    Effects e;
    e.control = is_terminator(op) || is_branch(op);
    e.calls = is_call(op);
    e.reads_memory = can_load(op);
    e.writes_memory = can_store(op);
    e.may_trap = can_trap(op);
    return e;
}

inline bool is_load_format(Opcode op) { return opcode_format(op) == InstructionFormat::Load; }
inline bool is_store_format(Opcode op) { return opcode_format(op) == InstructionFormat::Store; }

/// The bytes a load or store moves: the value's for plain `load` / `store`
/// (`value`: the loaded type or the stored value's), the opcode's for the
/// narrow forms.
inline unsigned access_bytes(Opcode op, Type value) {
    switch (op) {
    case Opcode::Uload8: case Opcode::Sload8: case Opcode::Istore8: return 1;
    case Opcode::Uload16: case Opcode::Sload16: case Opcode::Istore16: return 2;
    case Opcode::Uload32: case Opcode::Sload32: case Opcode::Istore32: return 4;
    default: return value.bytes();
    }
}

}  // namespace heron
