// x86-64 disassembly for humans and golden tests (`heron compile --disasm`,
// machine-code file tests), through Zydis in Intel syntax.
//
// One instruction per line — offset from the start of the code, the bytes,
// the text — with label lines (`block3:`) before the instructions at the
// given offsets. Branch and call targets that hit a label print as the
// label's name:
//
//   block0:
//     0000:  8d 04 37              lea eax, [rdi+rsi*1]
//     0003:  eb 02                 jmp block1
//     0005:  0f 0b                 ud2
//   block1:
//     0007:  c3                    ret
//
// Bytes that do not decode print as `(bad)`, one byte a line, and the
// listing goes on after them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace heron::tools {

/// Disassembles `size` bytes at `code`. `address` is where the code runs (or
/// will run); it places absolute branch targets. `labels` maps offsets from
/// `code` to names.
std::string disassemble_x64(const uint8_t* code, size_t size, uint64_t address,
                            const std::map<uint64_t, std::string>& labels = {});

}  // namespace heron::tools
