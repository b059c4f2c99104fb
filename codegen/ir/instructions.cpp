// Name tables and small helpers for opcodes, condition codes, trap codes,
// float immediates and block calls.
#include "codegen/ir/instructions.h"

#include <cstring>
#include <string>

namespace heron {

namespace {

// opcode_from_name runs once per parsed instruction, so it hashes instead of
// scanning: an open-addressing table of opcode numbers, built at compile
// time from the opcode table itself (which stays the only source of names).
constexpr uint32_t name_hash(std::string_view s) {
    uint32_t h = 2166136261u;  // FNV-1a
    for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
    return h;
}

constexpr unsigned kOpcodeSlots = 512;  // a power of two, over 4x the opcodes
constexpr uint8_t kNoOpcode = 0xff;
static_assert(kNumOpcodes < kNoOpcode && kNumOpcodes * 4 <= kOpcodeSlots);

struct OpcodeHashTable {
    uint8_t slot[kOpcodeSlots];
};

constexpr OpcodeHashTable build_opcode_hash_table() {
    OpcodeHashTable t{};
    for (unsigned i = 0; i < kOpcodeSlots; ++i) t.slot[i] = kNoOpcode;
    for (unsigned op = 0; op < kNumOpcodes; ++op) {
        unsigned i = name_hash(detail::kOpcodeInfo[op].name) & (kOpcodeSlots - 1);
        while (t.slot[i] != kNoOpcode) i = (i + 1) & (kOpcodeSlots - 1);
        t.slot[i] = static_cast<uint8_t>(op);
    }
    return t;
}

constexpr OpcodeHashTable kOpcodeHash = build_opcode_hash_table();

}  // namespace

std::optional<Opcode> opcode_from_name(std::string_view name) {
    for (unsigned i = name_hash(name) & (kOpcodeSlots - 1);; i = (i + 1) & (kOpcodeSlots - 1)) {
        const uint8_t op = kOpcodeHash.slot[i];
        if (op == kNoOpcode) return std::nullopt;
        if (detail::kOpcodeInfo[op].name == name) return static_cast<Opcode>(op);
    }
}

namespace {
constexpr std::string_view kIntCCNames[] = {"eq", "ne", "slt", "sge", "sgt", "sle", "ult", "uge", "ugt", "ule"};
constexpr std::string_view kFloatCCNames[] = {"ord", "uno", "eq", "ne", "one", "ueq", "lt",
                                              "le", "gt", "ge", "ult", "ule", "ugt", "uge"};
}  // namespace

std::string_view intcc_name(IntCC cc) { return kIntCCNames[static_cast<unsigned>(cc)]; }

std::optional<IntCC> intcc_from_name(std::string_view name) {
    for (unsigned i = 0; i < kNumIntCC; ++i) {
        if (kIntCCNames[i] == name) return static_cast<IntCC>(i);
    }
    return std::nullopt;
}

IntCC intcc_inverse(IntCC cc) {
    switch (cc) {
    case IntCC::Eq: return IntCC::Ne;
    case IntCC::Ne: return IntCC::Eq;
    case IntCC::Slt: return IntCC::Sge;
    case IntCC::Sge: return IntCC::Slt;
    case IntCC::Sgt: return IntCC::Sle;
    case IntCC::Sle: return IntCC::Sgt;
    case IntCC::Ult: return IntCC::Uge;
    case IntCC::Uge: return IntCC::Ult;
    case IntCC::Ugt: return IntCC::Ule;
    case IntCC::Ule: return IntCC::Ugt;
    }
    return cc;
}

IntCC intcc_swap(IntCC cc) {
    switch (cc) {
    case IntCC::Eq: case IntCC::Ne: return cc;
    case IntCC::Slt: return IntCC::Sgt;
    case IntCC::Sge: return IntCC::Sle;
    case IntCC::Sgt: return IntCC::Slt;
    case IntCC::Sle: return IntCC::Sge;
    case IntCC::Ult: return IntCC::Ugt;
    case IntCC::Uge: return IntCC::Ule;
    case IntCC::Ugt: return IntCC::Ult;
    case IntCC::Ule: return IntCC::Uge;
    }
    return cc;
}

std::string_view floatcc_name(FloatCC cc) { return kFloatCCNames[static_cast<unsigned>(cc)]; }

std::optional<FloatCC> floatcc_from_name(std::string_view name) {
    for (unsigned i = 0; i < kNumFloatCC; ++i) {
        if (kFloatCCNames[i] == name) return static_cast<FloatCC>(i);
    }
    return std::nullopt;
}

FloatCC floatcc_inverse(FloatCC cc) {
    switch (cc) {
    case FloatCC::Ord: return FloatCC::Uno;
    case FloatCC::Uno: return FloatCC::Ord;
    case FloatCC::Eq: return FloatCC::Ne;
    case FloatCC::Ne: return FloatCC::Eq;
    case FloatCC::One: return FloatCC::Ueq;
    case FloatCC::Ueq: return FloatCC::One;
    case FloatCC::Lt: return FloatCC::Uge;
    case FloatCC::Uge: return FloatCC::Lt;
    case FloatCC::Le: return FloatCC::Ugt;
    case FloatCC::Ugt: return FloatCC::Le;
    case FloatCC::Gt: return FloatCC::Ule;
    case FloatCC::Ule: return FloatCC::Gt;
    case FloatCC::Ge: return FloatCC::Ult;
    case FloatCC::Ult: return FloatCC::Ge;
    }
    return cc;
}

FloatCC floatcc_swap(FloatCC cc) {
    switch (cc) {
    case FloatCC::Lt: return FloatCC::Gt;
    case FloatCC::Gt: return FloatCC::Lt;
    case FloatCC::Le: return FloatCC::Ge;
    case FloatCC::Ge: return FloatCC::Le;
    case FloatCC::Ult: return FloatCC::Ugt;
    case FloatCC::Ugt: return FloatCC::Ult;
    case FloatCC::Ule: return FloatCC::Uge;
    case FloatCC::Uge: return FloatCC::Ule;
    default: return cc;  // ord uno eq ne one ueq are symmetric
    }
}

std::string trapcode_name(TrapCode code) {
    switch (code.byte) {
    case 0: return "none";
    case TrapCode::kStackOverflow: return "stk_ovf";
    case TrapCode::kIntegerOverflow: return "int_ovf";
    case TrapCode::kHeapOutOfBounds: return "heap_oob";
    case TrapCode::kIntegerDivisionByZero: return "int_divz";
    case TrapCode::kBadConversionToInteger: return "bad_toint";
    default: return "user" + std::to_string(code.byte);
    }
}

std::optional<TrapCode> trapcode_from_name(std::string_view name) {
    if (name == "stk_ovf") return TrapCode::stack_overflow();
    if (name == "int_ovf") return TrapCode::integer_overflow();
    if (name == "heap_oob") return TrapCode::heap_out_of_bounds();
    if (name == "int_divz") return TrapCode::integer_division_by_zero();
    if (name == "bad_toint") return TrapCode::bad_conversion_to_integer();
    if (name.size() < 5 || name.size() > 7 || name.substr(0, 4) != "user") return std::nullopt;
    unsigned n = 0;
    for (char c : name.substr(4)) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    if (name[4] == '0' || n < 1 || n > 250) return std::nullopt;  // no user0, no leading zeros
    return TrapCode::user(static_cast<uint8_t>(n));
}

Ieee32 Ieee32::with_float(float f) {
    Ieee32 r;
    std::memcpy(&r.bits, &f, 4);
    return r;
}

Ieee64 Ieee64::with_double(double d) {
    Ieee64 r;
    std::memcpy(&r.bits, &d, 8);
    return r;
}

BlockCall BlockCall::make(Block block, std::span<const Value> args, ValueListPool& pool) {
    BlockCall bc;
    bc.list_.push(Value(block.index()), pool);
    bc.list_.extend(args, pool);
    return bc;
}


}  // namespace heron
