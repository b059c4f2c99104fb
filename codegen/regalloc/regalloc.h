// The register allocator's contract: what it sees of a machine function, and
// what it gives back. ISA-neutral; the x86-64 and AArch64 backends fill an
// `ra::Function` from their VCode and read `ra::Output` while emitting.
//
// Model (operands with constraints, in the spirit of regalloc2):
//  - Every value is a virtual register (VReg) of a class (Int or Float),
//    defined exactly once (SSA): by one instruction operand or as a block
//    parameter.
//  - Each instruction lists its operands. A Use reads a vreg, a Def writes
//    one. Early operands act at the start of the instruction, Late ones at
//    its end: an Early Use and a Late Def may share a register (x86 `add`
//    after the reuse copy), an Early Def or a Late Use may not share with
//    anything the instruction touches.
//  - Constraints: Any (a register or a spill slot — instructions with a
//    memory form), Reg (any register of the class), Fixed (that register),
//    Reuse (a Def that must get the same register as Use operand `aux` of
//    the same instruction; that use is consumed, the allocator copies first
//    when the used vreg stays live).
//  - Clobbers: registers an instruction destroys (call-clobbered registers
//    at calls). A value live across the instruction never stays in one;
//    Defs of the instruction may be placed in them (results of a call).
//  - Block parameters are defined on entry to their block; a branch passes
//    one argument vreg per parameter of each successor (parallel
//    assignment). There are no critical edges: when a block has several
//    successors, each of them has only this predecessor.
//
// Program points: instruction i has Before(i) and After(i). The allocator
// returns one Allocation per operand and a list of edits (moves) at program
// points; the emitter performs the edits at Before(i) before emitting
// instruction i and those at After(i) after it. Edits at one point are
// already sequential (parallel moves resolved, cycles broken through the
// class's scratch register). An edit moves reg->reg, reg->stack or
// stack->reg, never stack->stack, so the emitter can do each with one move.
// Moves never touch CPU flags on our targets, so edits may sit between a
// compare and the branch that reads its flags.
//
// Algorithms (same contract, chosen per call):
//  - LinearScan: linear scan on SSA form with interval splitting (Wimmer and
//    Franz, "Linear Scan Register Allocation on SSA Form", CGO 2010), spill
//    weights scaled by loop depth.
//  - SinglePass: no global liveness or intervals, for fast compiles
//    (single_pass.cpp): a backward walk per block (two for blocks in
//    loops); values cross single-predecessor edges in the registers the
//    successor wants, a join's predecessors deliver them in its interface
//    registers, and a value used outside its block has a home spill slot
//    for where it cannot stay in a register.
// A checker verifies every allocation symbolically (each use reads the vreg
// the program says).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heron::ra {

enum class RegClass : uint8_t { Int = 0, Float = 1 };
inline constexpr unsigned kNumRegClasses = 2;
inline constexpr unsigned kMaxRegsPerClass = 64;

/// A physical register: hardware encoding within its class.
struct PReg {
    uint8_t hw = 0;
    RegClass cls = RegClass::Int;

    constexpr PReg() = default;
    constexpr PReg(uint8_t h, RegClass c) : hw(h), cls(c) {}
    /// Dense index over both classes: cls * 64 + hw.
    constexpr unsigned index() const { return static_cast<unsigned>(cls) * kMaxRegsPerClass + hw; }
    static constexpr PReg from_index(unsigned i) {
        return PReg(static_cast<uint8_t>(i % kMaxRegsPerClass), static_cast<RegClass>(i / kMaxRegsPerClass));
    }
    friend constexpr bool operator==(PReg a, PReg b) { return a.hw == b.hw && a.cls == b.cls; }
    friend constexpr bool operator!=(PReg a, PReg b) { return !(a == b); }
};

/// A set of physical registers of both classes.
struct PRegSet {
    uint64_t bits[kNumRegClasses] = {0, 0};

    void add(PReg r) { bits[static_cast<unsigned>(r.cls)] |= uint64_t{1} << r.hw; }
    void remove(PReg r) { bits[static_cast<unsigned>(r.cls)] &= ~(uint64_t{1} << r.hw); }
    bool contains(PReg r) const { return (bits[static_cast<unsigned>(r.cls)] >> r.hw) & 1; }
    bool empty() const { return bits[0] == 0 && bits[1] == 0; }
    PRegSet& operator|=(const PRegSet& o) {
        bits[0] |= o.bits[0];
        bits[1] |= o.bits[1];
        return *this;
    }
};

/// A virtual register: dense index plus class.
struct VReg {
    uint32_t bits = ~uint32_t{0};

    constexpr VReg() = default;
    constexpr VReg(uint32_t index, RegClass cls) : bits(index << 1 | static_cast<uint32_t>(cls)) {}
    constexpr uint32_t index() const { return bits >> 1; }
    constexpr RegClass cls() const { return static_cast<RegClass>(bits & 1); }
    constexpr bool is_valid() const { return bits != ~uint32_t{0}; }
    friend constexpr bool operator==(VReg a, VReg b) { return a.bits == b.bits; }
    friend constexpr bool operator!=(VReg a, VReg b) { return a.bits != b.bits; }
};

enum class OperandKind : uint8_t { Use, Def };
enum class OperandPos : uint8_t { Early, Late };
enum class Constraint : uint8_t { Any, Reg, Fixed, Reuse };

struct Operand {
    VReg vreg;
    OperandKind kind = OperandKind::Use;
    OperandPos pos = OperandPos::Early;
    Constraint constraint = Constraint::Reg;
    uint8_t aux = 0;  // Fixed: PReg hw; Reuse: index of the Use operand within the instruction

    static Operand use(VReg v) { return {v, OperandKind::Use, OperandPos::Early, Constraint::Reg, 0}; }
    static Operand use_late(VReg v) { return {v, OperandKind::Use, OperandPos::Late, Constraint::Reg, 0}; }
    static Operand use_any(VReg v) { return {v, OperandKind::Use, OperandPos::Early, Constraint::Any, 0}; }
    static Operand use_fixed(VReg v, PReg r) { return {v, OperandKind::Use, OperandPos::Early, Constraint::Fixed, r.hw}; }
    static Operand def(VReg v) { return {v, OperandKind::Def, OperandPos::Late, Constraint::Reg, 0}; }
    static Operand def_early(VReg v) { return {v, OperandKind::Def, OperandPos::Early, Constraint::Reg, 0}; }
    static Operand def_fixed(VReg v, PReg r) { return {v, OperandKind::Def, OperandPos::Late, Constraint::Fixed, r.hw}; }
    static Operand def_reuse(VReg v, uint8_t use_index) {
        return {v, OperandKind::Def, OperandPos::Late, Constraint::Reuse, use_index};
    }
    PReg fixed_reg() const { return PReg(aux, vreg.cls()); }
};

/// Where an operand lives during its instruction. `Remat` appears only as
/// the source of an edit: the value is made again by re-executing
/// instruction `index` (flagged kRemat) into the destination instead of
/// being reloaded from a spill slot.
struct Allocation {
    enum class Kind : uint8_t { None, Reg, Stack, Remat };
    Kind kind = Kind::None;
    uint32_t index = 0;  // Reg: PReg::index(); Stack: spill slot number; Remat: instruction

    static Allocation reg(PReg r) { return {Kind::Reg, r.index()}; }
    static Allocation stack(uint32_t slot) { return {Kind::Stack, slot}; }
    static Allocation remat(uint32_t inst) { return {Kind::Remat, inst}; }
    bool is_reg() const { return kind == Kind::Reg; }
    bool is_stack() const { return kind == Kind::Stack; }
    bool is_remat() const { return kind == Kind::Remat; }
    PReg as_reg() const { return PReg::from_index(index); }
    friend bool operator==(Allocation a, Allocation b) { return a.kind == b.kind && a.index == b.index; }
    friend bool operator!=(Allocation a, Allocation b) { return !(a == b); }
};

struct ProgPoint {
    uint32_t bits = 0;  // inst * 2 + (after ? 1 : 0)

    static ProgPoint before(uint32_t inst) { return {inst * 2}; }
    static ProgPoint after(uint32_t inst) { return {inst * 2 + 1}; }
    uint32_t inst() const { return bits >> 1; }
    bool is_after() const { return bits & 1; }
    friend bool operator<(ProgPoint a, ProgPoint b) { return a.bits < b.bits; }
    friend bool operator==(ProgPoint a, ProgPoint b) { return a.bits == b.bits; }
};

struct Edit {
    ProgPoint point;
    Allocation from, to;
    RegClass cls = RegClass::Int;
};

/// Instruction properties the allocator needs.
namespace inst_flags {
inline constexpr uint8_t kTerminator = 1;  // last instruction of its block (branch or return)
inline constexpr uint8_t kReturn = 2;      // leaves the function
inline constexpr uint8_t kMove = 4;        // a plain copy: operand 0 Use -> operand 1 Def (a coalescing hint)
/// Rematerializable: the instruction's only operand is one Def, and
/// executing it again anywhere writes the same value and touches nothing
/// else (no flags, no memory, no other register), to a register or to a
/// spill slot. A spilled vreg it defines is never stored: each reload
/// becomes an edit from Allocation::remat(inst).
inline constexpr uint8_t kRemat = 8;
}  // namespace inst_flags

/// The machine function as the allocator sees it. Blocks are numbered in
/// emission order and their instructions are contiguous and increasing;
/// block 0 is the entry. Arrays with `_begin` are CSR offsets with one extra
/// trailing element.
struct Function {
    uint32_t num_vregs = 0;

    // Blocks.
    std::vector<uint32_t> block_insts_begin;  // [b] .. [b+1]: instructions of block b
    std::vector<uint32_t> succs_begin, succs;
    std::vector<uint32_t> preds_begin, preds;
    std::vector<uint32_t> params_begin;
    std::vector<VReg> params;
    /// Branch arguments per edge: edge e = succs_begin[b] + k (k-th successor
    /// of b); its args are branch_args[branch_args_begin[e] .. [e+1]].
    std::vector<uint32_t> branch_args_begin;
    std::vector<VReg> branch_args;
    std::vector<uint32_t> loop_depth;  // per block, 0 outside loops

    // Instructions.
    std::vector<uint32_t> operands_begin;
    std::vector<Operand> operands;
    std::vector<uint8_t> flags;  // inst_flags per instruction
    /// Clobbered registers, sparse: (instruction, set), sorted by instruction.
    std::vector<std::pair<uint32_t, PRegSet>> clobbers;

    uint32_t num_blocks() const { return static_cast<uint32_t>(block_insts_begin.empty() ? 0 : block_insts_begin.size() - 1); }
    uint32_t num_insts() const { return static_cast<uint32_t>(operands_begin.empty() ? 0 : operands_begin.size() - 1); }
    void clear();
};

/// The registers the allocator may use, per class, in order of preference
/// (caller-saved first is usual), and one scratch register per class that is
/// never allocated and is free for the allocator's move sequences.
struct MachineEnv {
    std::vector<PReg> allocatable[kNumRegClasses];
    PReg scratch[kNumRegClasses];
};

struct Stats {
    uint32_t spill_slots = 0;
    uint32_t splits = 0;
    uint32_t edits = 0;
};

struct Output {
    std::vector<Allocation> allocs;  // one per operand, parallel to Function::operands
    std::vector<Edit> edits;         // sorted by point; order within a point is execution order
    uint32_t num_spill_slots = 0;    // 8 bytes each
    Stats stats;
    void clear();
};

/// Reusable allocator state: keeps its memory between functions.
class Context {
public:
    Context();
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    struct Impl;
    Impl* impl;
    struct SinglePass;
    SinglePass* single_pass = nullptr;  // made on first use
    /// Leave out the checks of the block structure (the CSR arrays'
    /// bounds, successors and predecessors agreeing, no critical edge,
    /// branch arguments matching parameters): for input a backend's own
    /// lowering builds, whose shape the test builds and the fuzzers check
    /// with them on. Input that breaks those rules then gets a wrong
    /// allocation or worse instead of an error. The operand checks stay.
    bool trust_block_structure = false;
};

enum class Algorithm : uint8_t { LinearScan, SinglePass };

/// Allocates registers. Returns an empty string on success, else a message
/// (malformed input such as a critical edge or a vreg defined twice).
///
/// Besides SSA and the absence of critical edges, the input must satisfy:
///  - every block has at least one instruction; the entry block has no
///    parameters (arguments arrive through Fixed defs);
///  - the last instruction of a block with successors defines nothing, and
///    if the block has one successor and its last instruction has operands,
///    that successor has no other predecessor (edge moves then go at the
///    successor's start rather than before the jump);
///  - a Reuse def names an Early Use of its class; two operands of one
///    instruction are not fixed to one register unless both are uses of
///    the same vreg; no operand is fixed to the scratch register; a Late
///    Use is not fixed to a register the instruction clobbers;
///  - no instruction needs more registers of a class at once than `env`
///    has. A Reg use of a vreg that stays live keeps its register through
///    the whole instruction, so count it against the Late point too.
/// Edits are never placed at After(last instruction of a block).
/// Both algorithms accept the same inputs and report the same kinds of
/// errors; SinglePass may return more edits and spill slots.
std::string allocate(const Function& func, const MachineEnv& env, Output& out, Context& ctx,
                     Algorithm algorithm = Algorithm::LinearScan);

/// Verifies `out` symbolically against `func`: every Use operand's
/// allocation holds its vreg at that point along every path, Fixed/Reuse
/// constraints hold, clobbers are respected. Returns an empty string when
/// the allocation is correct, else the first violation.
std::string check(const Function& func, const MachineEnv& env, const Output& out);

}  // namespace heron::ra
