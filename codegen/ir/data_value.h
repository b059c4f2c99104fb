// DataValue: one typed scalar as the interpreter, the run-test directives and
// the JIT's argument marshalling see it. Integers are held zero-extended from
// their width (canonical form, ir-reference.md 1.3); floats as raw bits.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/ir/types.h"

namespace heron {

struct DataValue {
    Type type;
    uint64_t bits = 0;

    DataValue() = default;
    DataValue(Type t, uint64_t b) : type(t), bits(b & t.mask()) {}

    static DataValue i8(int64_t v) { return {types::I8, static_cast<uint64_t>(v)}; }
    static DataValue i16(int64_t v) { return {types::I16, static_cast<uint64_t>(v)}; }
    static DataValue i32(int64_t v) { return {types::I32, static_cast<uint64_t>(v)}; }
    static DataValue i64(int64_t v) { return {types::I64, static_cast<uint64_t>(v)}; }
    static DataValue f32_bits(uint32_t b) { return {types::F32, b}; }
    static DataValue f64_bits(uint64_t b) { return {types::F64, b}; }
    static DataValue f32(float f);
    static DataValue f64(double d);

    /// The value read as signed (sign-extended from its width).
    int64_t as_signed() const;
    uint64_t as_unsigned() const { return bits; }
    float as_f32() const;
    double as_f64() const;

    /// Bit-for-bit equality, type included (NaN payloads count; -0.0 != 0.0).
    friend bool operator==(const DataValue& a, const DataValue& b) { return a.type == b.type && a.bits == b.bits; }
    friend bool operator!=(const DataValue& a, const DataValue& b) { return !(a == b); }

    /// The text form used in run directives: integers in decimal (signed),
    /// floats as hex floats (0x1.8p1, -0.0, +Inf, +NaN:0x1, +sNaN:0x1).
    std::string to_string() const;
};

/// Hex-float text for raw float bits, as the printer writes `f32const`.
std::string format_ieee32(uint32_t bits);
std::string format_ieee64(uint64_t bits);

}  // namespace heron
