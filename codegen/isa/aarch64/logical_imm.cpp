// AArch64 logical immediates. See logical_imm.h.
#include "codegen/isa/aarch64/logical_imm.h"

#include <bit>

namespace heron::aarch64 {

namespace {

uint64_t ones(unsigned n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

/// `x` (an `e`-bit element) rotated right by `r`.
uint64_t ror(uint64_t x, unsigned r, unsigned e) {
    r %= e;
    if (r == 0) return x;
    return ((x >> r) | (x << (e - r))) & ones(e);
}

/// `elem` (`e` bits) repeated across 64 bits.
uint64_t replicate(uint64_t elem, unsigned e) {
    uint64_t v = 0;
    for (unsigned at = 0; at < 64; at += e) v |= elem << at;
    return v;
}

}  // namespace

std::optional<uint32_t> encode_logical_imm(uint64_t v, unsigned bits) {
    if (bits == 32) v = replicate(v & ones(32), 32);
    if (v == 0 || v == ~uint64_t{0}) return std::nullopt;
    // The smallest element size the value repeats with.
    unsigned e = 64;
    while (e > 2) {
        unsigned half = e / 2;
        if ((v & ones(half)) != ((v >> half) & ones(half))) break;
        e = half;
    }
    uint64_t elem = v & ones(e);
    // A rotated run of ones: rotating it so that it starts at bit 0 (right
    // after a zero that precedes a one) must leave ones(s).
    unsigned s = static_cast<unsigned>(std::popcount(elem));
    for (unsigned r = 0; r < e; ++r) {
        if (ror(ones(s), r, e) != elem) continue;
        uint32_t n = e == 64 ? 1 : 0;
        uint32_t imms = (e == 64 ? 0 : (~(2 * e - 1) & 0x3f)) | (s - 1);
        return n << 12 | r << 6 | imms;
    }
    return std::nullopt;
}

std::optional<uint64_t> decode_logical_imm(uint32_t field, unsigned bits) {
    uint32_t n = field >> 12 & 1, immr = field >> 6 & 0x3f, imms = field & 0x3f;
    if (bits == 32 && n) return std::nullopt;
    uint32_t combined = n << 6 | (~imms & 0x3f);
    if (combined == 0) return std::nullopt;
    unsigned len = static_cast<unsigned>(std::bit_width(combined)) - 1;
    if (len < 1) return std::nullopt;
    unsigned e = 1u << len;
    uint32_t levels = e - 1;
    uint32_t s = imms & levels, r = immr & levels;
    if (s == levels) return std::nullopt;  // all ones
    uint64_t v = replicate(ror(ones(s + 1), r, e), e);
    return bits == 32 ? v & ones(32) : v;
}

}  // namespace heron::aarch64
