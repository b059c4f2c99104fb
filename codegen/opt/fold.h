// Constant folding of one pure opcode (fold.def): the values the reference
// interpreter computes for constant operands, through the same functions.
#pragma once

#include <cstdint>

#include "codegen/ir/instructions.h"

namespace heron {

/// The operands of a fold: `op` with condition code `cc` (icmp, fcmp), the
/// controlling type's width `bits`, the first operand's width `arg_bits`
/// and the operands' canonical bits `k[0..2]`.
struct FoldInput {
    Opcode op;
    uint8_t cc;
    unsigned bits;
    unsigned arg_bits;
    uint64_t k[3];
};

/// How many results `in` folds to (0: the opcode has no fold, or it would
/// trap); their bits go to out[0], out[1].
unsigned fold_constants(const FoldInput& in, uint64_t out[2]);

}  // namespace heron
