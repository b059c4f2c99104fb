// Names and condition helpers for x86-64 machine instructions.
#include "codegen/isa/x64/inst.h"

namespace heron::x64 {

namespace {
constexpr OpInfo kOpInfo[] = {
#define X64_INST(N, mnemonic, pattern) {mnemonic, pattern},
#include "codegen/isa/x64/insts.def"
#undef X64_INST
};
constexpr std::string_view kCondNames[] = {"o", "no", "b", "ae", "e", "ne", "be", "a",
                                           "s", "ns", "p", "np", "l", "ge", "le", "g", "feq", "fne"};
}  // namespace

const OpInfo& op_info(Op op) { return kOpInfo[static_cast<unsigned>(op)]; }

Cond invert(Cond c) {
    if (c == Cond::FEq) return Cond::FNe;
    if (c == Cond::FNe) return Cond::FEq;
    return static_cast<Cond>(static_cast<uint8_t>(c) ^ 1);
}

std::string_view cond_name(Cond c) { return kCondNames[static_cast<unsigned>(c)]; }

}  // namespace heron::x64
