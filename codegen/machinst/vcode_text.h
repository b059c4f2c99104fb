// Text form of VCode for tests and `heron compile --vcode`, shared by the
// ISAs: one instruction a line with its register operands as vregs and
// their constraints ("r3:p0" fixed to hardware register 0, ":any" register
// or stack, ":reuseK" the register of use K, ":early" an early def), uses
// before "->" and defs after, then what the ISA adds (branch targets); each
// block's outgoing block arguments after it.
#pragma once

#include <string>

#include "codegen/regalloc/regalloc.h"

namespace heron {

std::string vcode_operand_text(const ra::Operand& op);

/// `vcode` is a VCodeBase<MInst>; `mnemonic(m)` gives an instruction's
/// name, `targets(m, out)` appends what follows its operands.
template <class VCode, class Mnemonic, class Targets>
std::string vcode_text(const VCode& vcode, Mnemonic mnemonic, Targets targets) {
    const ra::Function& ra = vcode.ra;
    std::string out;
    for (uint32_t b = 0; b < ra.num_blocks(); ++b) {
        out += "vblock" + std::to_string(b);
        if (vcode.block_ir[b] != ~0u) out += " (block" + std::to_string(vcode.block_ir[b]) + ")";
        out += ":";
        for (uint32_t p = ra.params_begin[b]; p < ra.params_begin[b + 1]; ++p) {
            out += " r" + std::to_string(ra.params[p].index());
        }
        out += "\n";
        for (uint32_t i = ra.block_insts_begin[b]; i < ra.block_insts_begin[b + 1]; ++i) {
            out += "  " + std::to_string(i) + ": ";
            out += mnemonic(vcode.insts[i]);
            std::string uses, defs;
            for (uint32_t k = ra.operands_begin[i]; k < ra.operands_begin[i + 1]; ++k) {
                const ra::Operand& op = ra.operands[k];
                std::string& into = op.kind == ra::OperandKind::Use ? uses : defs;
                into += (into.empty() ? " " : ", ") + vcode_operand_text(op);
            }
            out += uses;
            if (!defs.empty()) out += " ->" + defs;
            targets(vcode.insts[i], out);
            out += "\n";
        }
        for (uint32_t e = ra.succs_begin[b]; e < ra.succs_begin[b + 1]; ++e) {
            if (ra.branch_args_begin[e] == ra.branch_args_begin[e + 1]) continue;
            out += "    ; to vblock" + std::to_string(ra.succs[e]) + ":";
            for (uint32_t a = ra.branch_args_begin[e]; a < ra.branch_args_begin[e + 1]; ++a) {
                out += " r" + std::to_string(ra.branch_args[a].index());
            }
            out += "\n";
        }
    }
    return out;
}

}  // namespace heron
