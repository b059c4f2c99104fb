// The calling convention, shared by the backends.
#pragma once

#include <cstdint>

namespace heron {

/// The base of a machine instruction's stack access that names no base
/// register: the stack pointer (outgoing arguments, a return area after
/// its call) or the frame pointer (incoming stack arguments, a tail call's
/// arguments stored into the incoming area). MInst::base on both ISAs.
enum class MemBase : uint8_t {
    Reg,  // the instruction's base register operand
    Sp,
    Fp,
};

}  // namespace heron
