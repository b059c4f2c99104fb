// Operand text of the shared VCode printer (vcode_text.h).
#include "codegen/machinst/vcode_text.h"

namespace heron {

std::string vcode_operand_text(const ra::Operand& op) {
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

}  // namespace heron
