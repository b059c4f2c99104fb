// Value types of Heron's IR: i8..i64, f32, f64 (ir-reference.md section 1).
// A `Type` is one byte; `types::INVALID` marks "no type" (e.g. an instruction
// without a controlling type).
#pragma once

#include <cstdint>
#include <string_view>

namespace heron {

class Type {
public:
    enum Code : uint8_t { Invalid = 0, I8, I16, I32, I64, F32, F64 };

    constexpr Type() : code_(Invalid) {}
    constexpr Type(Code c) : code_(c) {}  // NOLINT: implicit by design

    constexpr Code code() const { return code_; }
    constexpr bool is_valid() const { return code_ != Invalid; }
    constexpr bool is_int() const { return code_ >= I8 && code_ <= I64; }
    constexpr bool is_float() const { return code_ == F32 || code_ == F64; }

    /// Width in bits (0 for invalid).
    constexpr unsigned bits() const {
        switch (code_) {
        case I8: return 8;
        case I16: return 16;
        case I32: case F32: return 32;
        case I64: case F64: return 64;
        case Invalid: return 0;
        }
        return 0;
    }
    constexpr unsigned bytes() const { return bits() / 8; }
    /// All-ones mask of the type's bits.
    constexpr uint64_t mask() const { return bits() >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits()) - 1; }

    /// The integer type of the same width (f32 -> i32).
    constexpr Type as_int() const {
        return code_ == F32 ? Type(I32) : code_ == F64 ? Type(I64) : *this;
    }

    std::string_view name() const {
        switch (code_) {
        case I8: return "i8";
        case I16: return "i16";
        case I32: return "i32";
        case I64: return "i64";
        case F32: return "f32";
        case F64: return "f64";
        case Invalid: return "invalid";
        }
        return "invalid";
    }

    static constexpr Type int_with_bits(unsigned bits) {
        switch (bits) {
        case 8: return I8;
        case 16: return I16;
        case 32: return I32;
        case 64: return I64;
        default: return Invalid;
        }
    }

    friend constexpr bool operator==(Type a, Type b) { return a.code_ == b.code_; }
    friend constexpr bool operator!=(Type a, Type b) { return a.code_ != b.code_; }

private:
    Code code_;
};

namespace types {
inline constexpr Type INVALID = Type::Invalid;
inline constexpr Type I8 = Type::I8;
inline constexpr Type I16 = Type::I16;
inline constexpr Type I32 = Type::I32;
inline constexpr Type I64 = Type::I64;
inline constexpr Type F32 = Type::F32;
inline constexpr Type F64 = Type::F64;
/// The pointer type on every supported target (ir-reference.md 1.2).
inline constexpr Type POINTER = Type::I64;
}  // namespace types

}  // namespace heron
