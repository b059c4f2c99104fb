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
#include <vector>

namespace heron::tools {

/// Text printed as `; ` lines (one per line of `text`) before the
/// instruction at `offset`: after the labels there, or before them when
/// `before_labels` (the comment ends the code that precedes the label).
struct DisasmComment {
    uint64_t offset = 0;
    std::string text;
    bool before_labels = false;
};

/// Disassembles `size` bytes at `code`. `address` is where the code runs (or
/// will run); it places absolute branch targets. `labels` maps offsets from
/// `code` to names. `comments` must be sorted by offset (`heron compile
/// --disasm` puts the IR instructions there).
std::string disassemble_x64(const uint8_t* code, size_t size, uint64_t address,
                            const std::map<uint64_t, std::string>& labels = {},
                            const std::vector<DisasmComment>& comments = {});

}  // namespace heron::tools
