// DataValue helpers and the hex-float text of raw float bits. The float
// format follows Cranelift's Ieee32/Ieee64 display, with trailing zero hex
// digits of the fraction trimmed:
//   normal     [-]0x1.HHHpE      (0x1.8p1, 0x1.0p0, -0x1.fffffep127)
//   subnormal  [-]0x0.HHHpEmin   (0x0.000002p-126, 0x0.0000000000001p-1022)
//   zero       0.0 / -0.0
//   infinity   +Inf / -Inf
//   NaN        +NaN, -NaN:0x1 (quiet, payload without the quiet bit),
//              +sNaN:0x1 (signalling)
// The bits never pass through a host float, so sNaN payloads survive.
#include "codegen/ir/data_value.h"

#include <cstring>

namespace heron {

namespace {

std::string hex_digits(uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    if (v == 0) return "0";
    std::string s;
    while (v) {
        s.insert(s.begin(), kDigits[v & 0xf]);
        v >>= 4;
    }
    return s;
}

/// The fraction left-aligned in whole hex digits, trailing zeros dropped
/// (at least one digit stays).
std::string fraction_digits(uint64_t frac, unsigned frac_bits) {
    unsigned digits = (frac_bits + 3) / 4;
    uint64_t aligned = frac << (4 * digits - frac_bits);
    std::string s(digits, '0');
    for (unsigned i = 0; i < digits; ++i) {
        s[digits - 1 - i] = "0123456789abcdef"[(aligned >> (4 * i)) & 0xf];
    }
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    return s;
}

std::string format_float(uint64_t bits, unsigned exp_bits, unsigned frac_bits) {
    uint64_t exp_max = (uint64_t{1} << exp_bits) - 1;
    uint64_t frac = bits & ((uint64_t{1} << frac_bits) - 1);
    uint64_t exp = (bits >> frac_bits) & exp_max;
    bool negative = (bits >> (exp_bits + frac_bits)) & 1;
    int64_t bias = (int64_t{1} << (exp_bits - 1)) - 1;

    std::string out = negative ? "-" : "";
    if (exp == exp_max) {
        if (!negative) out = "+";
        if (frac == 0) return out + "Inf";
        uint64_t quiet_bit = uint64_t{1} << (frac_bits - 1);
        uint64_t payload = frac & (quiet_bit - 1);
        if (!(frac & quiet_bit)) return out + "sNaN:0x" + hex_digits(payload);
        if (payload == 0) return out + "NaN";
        return out + "NaN:0x" + hex_digits(payload);
    }
    if (exp == 0) {
        if (frac == 0) return out + "0.0";
        return out + "0x0." + fraction_digits(frac, frac_bits) + "p" + std::to_string(1 - bias);
    }
    return out + "0x1." + fraction_digits(frac, frac_bits) + "p" + std::to_string(static_cast<int64_t>(exp) - bias);
}

}  // namespace

std::string format_ieee32(uint32_t bits) { return format_float(bits, 8, 23); }
std::string format_ieee64(uint64_t bits) { return format_float(bits, 11, 52); }

DataValue DataValue::f32(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return f32_bits(b);
}

DataValue DataValue::f64(double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return f64_bits(b);
}

int64_t DataValue::as_signed() const {
    unsigned n = type.bits();
    if (n == 0 || n >= 64) return static_cast<int64_t>(bits);
    uint64_t sign = uint64_t{1} << (n - 1);
    uint64_t low = bits & type.mask();
    return static_cast<int64_t>((low ^ sign) - sign);
}

float DataValue::as_f32() const {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

double DataValue::as_f64() const {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

std::string DataValue::to_string() const {
    if (type == types::F32) return format_ieee32(static_cast<uint32_t>(bits));
    if (type == types::F64) return format_ieee64(bits);
    if (type.is_int()) return std::to_string(as_signed());
    return "<invalid>";
}

}  // namespace heron
