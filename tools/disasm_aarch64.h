// AArch64 disassembly for humans and golden tests (`heron compile --target
// aarch64 --disasm`), through Capstone. It runs on any host.
//
// The layout follows disassemble_x64: one instruction per line — offset,
// the four bytes, the text — with label lines before labelled offsets, and
// branch targets that hit a label printed as the label's name:
//
//   block0:
//     0000:  fd 7b bf a9   stp x29, x30, [sp, #-0x10]!
//     0004:  fd 03 00 91   mov x29, sp
//     0008:  20 00 00 8b   add x0, x1, x0
//     000c:  03 00 00 14   b block1
//
// Words that do not decode (jump tables, literal slots, udf) print as
// `.word 0x...`, and the listing goes on after them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace heron::tools {

/// Disassembles `size` bytes at `code` (AArch64, little-endian). `address`
/// is where the code runs; `labels` maps offsets from `code` to names.
/// Returns an error line if Capstone cannot be opened.
std::string disassemble_aarch64(const uint8_t* code, size_t size, uint64_t address,
                                const std::map<uint64_t, std::string>& labels = {});

}  // namespace heron::tools
