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

}  // namespace heron
