// AArch64 logical ("bitmask") immediates: the constants `and`, `orr`, `eor`
// and `tst` take directly. Such a constant is an element of 2, 4, 8, 16, 32
// or 64 bits repeated across the register, each element a run of 1 to
// e-1 ones rotated right by 0..e-1 (ARM ARM, DecodeBitMasks). 0 and all
// ones are not encodable; there are 5334 encodable 64-bit values and 1302
// 32-bit ones (sum over e of (e-1)·e).
#pragma once

#include <cstdint>
#include <optional>

namespace heron::aarch64 {

/// The 13-bit N:immr:imms field for `v` as the immediate of a `bits`-wide
/// (32 or 64) logical instruction, or nullopt when `v` has no encoding.
/// For 32 bits only the low 32 bits of `v` count.
std::optional<uint32_t> encode_logical_imm(uint64_t v, unsigned bits);

/// The value an N:immr:imms field stands for at `bits` (32 or 64), or
/// nullopt for a reserved field (the inverse of encode_logical_imm).
std::optional<uint64_t> decode_logical_imm(uint32_t field, unsigned bits);

}  // namespace heron::aarch64
