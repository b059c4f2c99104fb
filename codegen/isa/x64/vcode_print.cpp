// Text form of x86-64 VCode (codegen/machinst/vcode_text.h).
#include "codegen/isa/x64/lower.h"
#include "codegen/machinst/vcode_text.h"

namespace heron::x64 {

std::string VCode::to_string() const {
    return vcode_text(
        *this, [](const MInst& m) { return std::string(op_info(m.op).mnemonic); },
        [](const MInst& m, std::string& out) {
            if (m.op == Op::Jmp) out += " vblock" + std::to_string(m.aux);
            if (m.op == Op::Jcc || m.op == Op::JccFloat) {
                out += " " + std::string(cond_name(m.cc)) + " vblock" + std::to_string(m.aux) + ", vblock" +
                       std::to_string(m.aux2);
            }
        });
}

}  // namespace heron::x64
