// Names of AArch64 machine instruction forms and condition codes.
#include "codegen/isa/aarch64/inst.h"

namespace heron::aarch64 {

namespace {
constexpr OpInfo kOpInfo[] = {
#define A64_INST(N, mnemonic, pattern) {mnemonic, pattern},
#include "codegen/isa/aarch64/insts.def"
#undef A64_INST
};
constexpr std::string_view kCondNames[] = {"eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc",
                                           "hi", "ls", "ge", "lt", "gt", "le", "al"};
}  // namespace

const OpInfo& op_info(Op op) { return kOpInfo[static_cast<unsigned>(op)]; }

std::string_view cond_name(Cond c) { return kCondNames[static_cast<unsigned>(c)]; }

}  // namespace heron::aarch64
