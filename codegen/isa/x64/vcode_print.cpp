// Text form of x86-64 VCode, for tests and debugging: one instruction per
// line with its operands as vregs and their constraints.
#include <string>

#include "codegen/isa/x64/lower.h"

namespace heron::x64 {

namespace {
std::string operand_text(const ra::Operand& op) {
    std::string s = op.vreg.cls() == ra::RegClass::Float ? "f" : "r";
    s += std::to_string(op.vreg.index());
    switch (op.constraint) {
    case ra::Constraint::Any: s += ":any"; break;
    case ra::Constraint::Reg: break;
    case ra::Constraint::Fixed: s += ":p" + std::to_string(op.aux); break;
    case ra::Constraint::Reuse: s += ":reuse" + std::to_string(op.aux); break;
    }
    if (op.kind == ra::OperandKind::Def && op.pos == ra::OperandPos::Early) s += ":early";
    return s;
}
}  // namespace

std::string VCode::to_string() const {
    std::string out;
    for (uint32_t b = 0; b < ra.num_blocks(); ++b) {
        out += "vblock" + std::to_string(b);
        if (block_ir[b] != ~0u) out += " (block" + std::to_string(block_ir[b]) + ")";
        out += ":";
        for (uint32_t p = ra.params_begin[b]; p < ra.params_begin[b + 1]; ++p) {
            out += " r" + std::to_string(ra.params[p].index());
        }
        out += "\n";
        for (uint32_t i = ra.block_insts_begin[b]; i < ra.block_insts_begin[b + 1]; ++i) {
            const MInst& m = insts[i];
            out += "  " + std::to_string(i) + ": " + std::string(op_info(m.op).mnemonic);
            std::string uses, defs;
            for (uint32_t k = ra.operands_begin[i]; k < ra.operands_begin[i + 1]; ++k) {
                const ra::Operand& op = ra.operands[k];
                std::string& into = op.kind == ra::OperandKind::Use ? uses : defs;
                into += (into.empty() ? " " : ", ") + operand_text(op);
            }
            out += uses;
            if (!defs.empty()) out += " ->" + defs;
            if (m.op == Op::Jmp) out += " vblock" + std::to_string(m.aux);
            if (m.op == Op::Jcc || m.op == Op::JccFloat) {
                out += " " + std::string(cond_name(m.cc)) + " vblock" + std::to_string(m.aux) + ", vblock" +
                       std::to_string(m.aux2);
            }
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

}  // namespace heron::x64
