// Opcodes, instruction formats, condition codes, trap codes, memory flags,
// and the compact `InstructionData` every instruction is stored as.
// The opcode list and its properties come from opcodes.def.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "codegen/ir/entity.h"
#include "codegen/ir/types.h"

namespace heron {

enum class Opcode : uint8_t {
#define HERON_OPCODE(E, ident, text, fmt, res, ctrl, typing, flags) E,
#include "codegen/ir/opcodes.def"
#undef HERON_OPCODE
};

inline constexpr unsigned kNumOpcodes = 0
#define HERON_OPCODE(E, ident, text, fmt, res, ctrl, typing, flags) +1
#include "codegen/ir/opcodes.def"
#undef HERON_OPCODE
    ;

/// Which fields of InstructionData an opcode uses (and so its text shape).
enum class InstructionFormat : uint8_t {
    NullAry,       // nop
    UnaryImm,      // iconst.T imm
    UnaryIeee32,   // f32const bits
    UnaryIeee64,   // f64const bits
    Unary,         // op[.T] x
    UnaryFlags,    // bitcast.T flags x
    Binary,        // op x, y
    Ternary,       // op x, y, z
    IntAddTrap,    // uadd_overflow_trap x, y, code
    IntCompare,    // icmp cc x, y
    FloatCompare,  // fcmp cc x, y
    Load,          // load.T flags p+off
    Store,         // store flags x, p+off
    StackAddr,     // stack_addr.T ss+off
    FuncAddr,      // func_addr.T fn
    Jump,          // jump block(args)
    Brif,          // brif c, block(args), block(args)
    BranchTable,   // br_table i, block(args), [block(args), ...]
    MultiAry,      // return vals
    Trap,          // trap code
    CondTrap,      // trapz c, code
    Call,          // call fn(args)
    CallIndirect,  // call_indirect sig, callee(args)
};

/// How many of InstructionData::args a format uses.
constexpr unsigned format_fixed_args(InstructionFormat f) {
    switch (f) {
    case InstructionFormat::NullAry:
    case InstructionFormat::UnaryImm:
    case InstructionFormat::UnaryIeee32:
    case InstructionFormat::UnaryIeee64:
    case InstructionFormat::StackAddr:
    case InstructionFormat::FuncAddr:
    case InstructionFormat::Jump:
    case InstructionFormat::MultiAry:
    case InstructionFormat::Trap:
    case InstructionFormat::Call:
    case InstructionFormat::CallIndirect: return 0;
    case InstructionFormat::Unary:
    case InstructionFormat::UnaryFlags:
    case InstructionFormat::Load:
    case InstructionFormat::Brif:
    case InstructionFormat::BranchTable:
    case InstructionFormat::CondTrap: return 1;
    case InstructionFormat::Binary:
    case InstructionFormat::IntAddTrap:
    case InstructionFormat::IntCompare:
    case InstructionFormat::FloatCompare:
    case InstructionFormat::Store: return 2;
    case InstructionFormat::Ternary: return 3;
    }
    return 0;
}

/// Where an opcode's controlling type comes from (ir-reference.md 1.5).
enum class CtrlSource : uint8_t { None, Result, Arg0, Arg1 };

/// The typing rule the verifier checks and result types follow.
enum class Typing : uint8_t {
    NoTyping, IntConst, F32Const, F64Const,
    Int1, Int2, IntOverflow, IntCarry, IntAddTrap,
    Bitwise1, Bitwise2, Bitwise3, Shift, Bswap,
    IntCmp, FloatCmp, Select, Bmask,
    Extend, Reduce, Bitcast, Fpromote, Fdemote, FloatToInt, IntToFloat,
    Float1, Float2, Float3,
    Load, Store, Address, Condition, BrTable, Callee,
};

namespace opflags {
inline constexpr uint8_t TERM = 1 << 0;    // ends a block
inline constexpr uint8_t BRANCH = 1 << 1;  // has block destinations
inline constexpr uint8_t CALL = 1 << 2;
inline constexpr uint8_t RET = 1 << 3;     // leaves the function
inline constexpr uint8_t TRAP = 1 << 4;    // may trap
inline constexpr uint8_t LOAD = 1 << 5;
inline constexpr uint8_t STORE = 1 << 6;
}  // namespace opflags

/// Results count meaning "from the callee's signature".
inline constexpr uint8_t kVarResults = 0xff;

struct OpcodeInfo {
    std::string_view name;
    InstructionFormat format;
    uint8_t results;  // 0, 1, 2 or kVarResults
    CtrlSource ctrl;
    Typing typing;
    uint8_t flags;
    uint8_t fixed_args;  // format_fixed_args(format), read without the switch
};

namespace detail {
using namespace opflags;
inline constexpr uint8_t VAR = kVarResults;
// Sized for every value of the underlying byte, so that no Opcode value can
// index past the end (the tail entries are never used by valid opcodes).
inline constexpr OpcodeInfo kOpcodeInfo[256] = {
#define HERON_OPCODE(E, ident, text, fmt, res, ctrl, typing, flags) \
    {text, InstructionFormat::fmt, res, CtrlSource::ctrl, Typing::typing, flags,                           \
     static_cast<uint8_t>(format_fixed_args(InstructionFormat::fmt))},
#include "codegen/ir/opcodes.def"
#undef HERON_OPCODE
};
}  // namespace detail

inline const OpcodeInfo& opcode_info(Opcode op) { return detail::kOpcodeInfo[static_cast<unsigned>(op)]; }
inline std::string_view opcode_name(Opcode op) { return opcode_info(op).name; }
inline InstructionFormat opcode_format(Opcode op) { return opcode_info(op).format; }
inline bool is_terminator(Opcode op) { return opcode_info(op).flags & opflags::TERM; }
inline bool is_branch(Opcode op) { return opcode_info(op).flags & opflags::BRANCH; }
inline bool is_call(Opcode op) { return opcode_info(op).flags & opflags::CALL; }
inline bool is_return(Opcode op) { return opcode_info(op).flags & opflags::RET; }
inline bool can_trap(Opcode op) { return opcode_info(op).flags & opflags::TRAP; }
inline bool can_load(Opcode op) { return opcode_info(op).flags & opflags::LOAD; }
inline bool can_store(Opcode op) { return opcode_info(op).flags & opflags::STORE; }
/// Looks an opcode up by its text name.
std::optional<Opcode> opcode_from_name(std::string_view name);

// ---------------------------------------------------------------------------
// Condition codes (ir-reference.md section 9)

enum class IntCC : uint8_t { Eq, Ne, Slt, Sge, Sgt, Sle, Ult, Uge, Ugt, Ule };
inline constexpr unsigned kNumIntCC = 10;
std::string_view intcc_name(IntCC cc);
std::optional<IntCC> intcc_from_name(std::string_view name);
IntCC intcc_inverse(IntCC cc);  // !(a cc b)
IntCC intcc_swap(IntCC cc);     // (b cc' a) == (a cc b)

enum class FloatCC : uint8_t { Ord, Uno, Eq, Ne, One, Ueq, Lt, Le, Gt, Ge, Ult, Ule, Ugt, Uge };
inline constexpr unsigned kNumFloatCC = 14;
std::string_view floatcc_name(FloatCC cc);
std::optional<FloatCC> floatcc_from_name(std::string_view name);
FloatCC floatcc_inverse(FloatCC cc);
FloatCC floatcc_swap(FloatCC cc);

// ---------------------------------------------------------------------------
// Trap codes (ir-reference.md section 17): one nonzero byte.

struct TrapCode {
    uint8_t byte = 0;  // 0: no trap code

    static constexpr uint8_t kStackOverflow = 251;
    static constexpr uint8_t kIntegerOverflow = 252;
    static constexpr uint8_t kHeapOutOfBounds = 253;
    static constexpr uint8_t kIntegerDivisionByZero = 254;
    static constexpr uint8_t kBadConversionToInteger = 255;

    static constexpr TrapCode stack_overflow() { return {kStackOverflow}; }
    static constexpr TrapCode integer_overflow() { return {kIntegerOverflow}; }
    static constexpr TrapCode heap_out_of_bounds() { return {kHeapOutOfBounds}; }
    static constexpr TrapCode integer_division_by_zero() { return {kIntegerDivisionByZero}; }
    static constexpr TrapCode bad_conversion_to_integer() { return {kBadConversionToInteger}; }
    /// user1..user250
    static constexpr TrapCode user(uint8_t n) { return {n}; }

    constexpr bool is_valid() const { return byte != 0; }
    friend constexpr bool operator==(TrapCode a, TrapCode b) { return a.byte == b.byte; }
    friend constexpr bool operator!=(TrapCode a, TrapCode b) { return a.byte != b.byte; }
};
/// "int_divz", "user7", ...
std::string trapcode_name(TrapCode code);
std::optional<TrapCode> trapcode_from_name(std::string_view name);

// ---------------------------------------------------------------------------
// Memory flags (ir-reference.md 12.2). The trap code lives here too: 0 means
// the default `heap_oob`; `notrap` clears it and a code clears `notrap`.

struct MemFlags {
    enum Bit : uint8_t { Notrap = 1, Aligned = 2, Readonly = 4, CanMove = 8, Big = 16, Little = 32 };
    uint8_t bits = 0;
    uint8_t trap = 0;  // explicit trap code byte, 0 = heap_oob

    bool has(Bit b) const { return bits & b; }
    void set(Bit b) {
        bits |= b;
        if (b == Notrap) trap = 0;
    }
    void set_trap_code(TrapCode c) {
        bits &= static_cast<uint8_t>(~Notrap);
        trap = c.byte == TrapCode::kHeapOutOfBounds ? 0 : c.byte;
    }
    /// The code a fault here reports, or none with `notrap`.
    std::optional<TrapCode> trap_code() const {
        if (has(Notrap)) return std::nullopt;
        return TrapCode{trap ? trap : TrapCode::kHeapOutOfBounds};
    }
    bool empty() const { return bits == 0 && trap == 0; }
    static MemFlags trusted() {
        MemFlags f;
        f.set(Notrap);
        f.set(Aligned);
        return f;
    }
    friend bool operator==(MemFlags a, MemFlags b) { return a.bits == b.bits && a.trap == b.trap; }
};

// ---------------------------------------------------------------------------
// Float immediates are held as bits, never as host floats (an sNaN must
// survive).

struct Ieee32 {
    uint32_t bits = 0;
    static Ieee32 with_float(float f);
};
struct Ieee64 {
    uint64_t bits = 0;
    static Ieee64 with_double(double d);
};

// ---------------------------------------------------------------------------

using ValueList = EntityList<Value>;
using ValueListPool = ListPool<Value>;

/// A branch destination with its arguments: a ValueList whose first element
/// is the block (stored with the block's index).
class BlockCall {
public:
    BlockCall() = default;
    static BlockCall make(Block block, std::span<const Value> args, ValueListPool& pool);

    bool is_valid() const { return !list_.empty(); }
    Block block(const ValueListPool& pool) const { return Block(list_.get(0, pool).index()); }
    void set_block(Block b, ValueListPool& pool) { list_.set(0, Value(b.index()), pool); }
    uint32_t num_args(const ValueListPool& pool) const { return list_.size(pool) - 1; }
    Value arg(uint32_t i, const ValueListPool& pool) const { return list_.get(i + 1, pool); }
    void set_arg(uint32_t i, Value v, ValueListPool& pool) { list_.set(i + 1, v, pool); }
    std::span<const Value> args(const ValueListPool& pool) const {
        const auto all = list_.as_span(pool);
        return all.empty() ? all : all.subspan(1);
    }
    std::span<Value> args_mut(ValueListPool& pool) {
        if (list_.empty()) return {};
        return {list_.raw_mut(pool) + 1, list_.size(pool) - 1};
    }
    void append_arg(Value v, ValueListPool& pool) { list_.push(v, pool); }
    void remove_arg(uint32_t i, ValueListPool& pool) { list_.remove(i + 1, pool); }
    void clear(ValueListPool& pool) { list_.clear(pool); }

private:
    ValueList list_;
};

/// The targets of a `br_table`: [0] is the default, then the entries.
struct JumpTableData {
    std::vector<BlockCall> all;

    BlockCall default_block() const { return all[0]; }
    std::span<const BlockCall> entries() const { return std::span(all).subspan(1); }
};

/// One instruction. Which fields mean something depends on the opcode's
/// format; the rest stay at their defaults.
struct InstructionData {
    Opcode opcode = Opcode::Nop;
    Type type;              // controlling type written as .T (or the arms')
    uint8_t code = 0;       // IntCC / FloatCC / TrapCode byte, by format
    MemFlags flags;         // Load, Store, UnaryFlags
    std::array<Value, 3> args{};  // fixed value operands
    ValueList vargs;        // MultiAry values; Call args; CallIndirect callee+args
    std::array<BlockCall, 2> dests{};  // Jump [0]; Brif [0] then, [1] else
    uint32_t entity = 0;    // StackSlot / FuncRef / SigRef / JumpTable index
    int32_t offset = 0;     // Load / Store / StackAddr
    uint64_t imm = 0;       // UnaryImm (B-bit pattern), UnaryIeee32/64 bits

    InstructionFormat format() const { return opcode_format(opcode); }
    IntCC intcc() const { return static_cast<IntCC>(code); }
    FloatCC floatcc() const { return static_cast<FloatCC>(code); }
    TrapCode trap_code() const { return TrapCode{code}; }
    StackSlot stack_slot() const { return StackSlot(entity); }
    FuncRef func_ref() const { return FuncRef(entity); }
    SigRef sig_ref() const { return SigRef(entity); }
    JumpTable jump_table() const { return JumpTable(entity); }
    /// How many of `args` the format uses.
    unsigned num_fixed_args() const { return opcode_info(opcode).fixed_args; }
};

}  // namespace heron
