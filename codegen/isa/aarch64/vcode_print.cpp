// Text form of AArch64 VCode (codegen/machinst/vcode_text.h).
#include "codegen/isa/aarch64/lower.h"
#include "codegen/machinst/vcode_text.h"

namespace heron::aarch64 {

std::string VCode::to_string() const {
    return vcode_text(
        *this, [](const MInst& m) { return std::string(op_info(m.op).mnemonic); },
        [](const MInst& m, std::string& out) {
            const std::string both = " vblock" + std::to_string(m.aux) + ", vblock" + std::to_string(m.aux2);
            switch (m.op) {
            case Op::Jmp: out += " vblock" + std::to_string(m.aux); break;
            case Op::Bcond: out += std::string(cond_name(m.cc)) + both; break;
            case Op::Cbz: out += (m.imm ? " nonzero" : " zero") + both; break;
            case Op::Tbz: out += " bit" + std::to_string(m.imm) + both; break;
            default: break;
            }
        });
}

}  // namespace heron::aarch64
