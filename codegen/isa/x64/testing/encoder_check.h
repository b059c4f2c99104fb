// Test support: the direct x86-64 encoder (codegen/isa/x64/encoder.h)
// against asmjit's x86::Assembler, which the emitter used for these forms
// before. For every form, every register (all 16, including rsp/rbp/r12/r13
// as bases and spl..dil as byte registers), every size the form has, and
// displacement and immediate edges, both encode the same instruction and
// the bytes are compared. asmjit is only the reference here; the encoder
// does not use it.
//
// Built into heron_x64_testing, which only the unit tests link: the library
// proper carries no test code, and asmjit stays inside codegen/isa/ (the
// tests include this header, not asmjit).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace heron::x64::testing {

struct EncoderCheck {
    size_t count = 0;                         // instructions compared
    size_t failures = 0;                      // of them, how many differed
    std::vector<std::string> first_failures;  // up to 10: the instruction, asmjit's and the encoder's bytes
    size_t memory_shapes = 0;                 // check_memory_forms: base/index/scale/disp shapes tried
};

/// ALU, mov, test, movzx, imul and cmov between two registers.
EncoderCheck check_register_register_forms();
/// ALU and shifts with immediates, shifts by cl, neg/not, 32/64-bit
/// immediate moves, push/pop, setcc, ret.
EncoderCheck check_single_register_and_immediate_forms();
/// lea, loads, stores, ALU and imul with a memory operand, movzx loads,
/// scalar SSE loads/stores and 64-bit immediate stores, over every shape.
EncoderCheck check_memory_forms();
/// Scalar SSE register-register forms (moves, arithmetic, logic, compares).
EncoderCheck check_scalar_sse_register_forms();

}  // namespace heron::x64::testing
