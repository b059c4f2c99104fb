// IR -> AArch64 VCode. See lower.h for the shape of the result.
//
// Block order: codegen/machinst/block_order.h (reverse postorder, critical
// edges split). Narrow integers
// follow ir-reference.md 1.3: results may carry garbage above their width;
// an op whose result depends on those bits extends its inputs first (to 32
// bits with uxt*/sxt*, or it uses an extended-register compare).
//
// Fusions: icmp/fcmp into brif, select, trapz/trapnz; brif of a plain value
// into cbz/cbnz; add/sub/compare immediates (imm12, either sign); logical
// immediates for band/bor/bxor and tst; constant shift amounts; shifts by a
// constant and extensions folded into the second operand of add/sub/logical
// ops and compares (`add x0, x1, x2, lsl #3`, `add x0, x1, w2, uxtw`);
// bitfield moves for shift-and-mask and narrow extracts (ubfx sbfx ubfiz
// sbfiz bfi); imul + iadd/isub into madd/msub; p + const into the
// load/store offset.
#include "codegen/isa/aarch64/lower.h"

#include "codegen/isa/aarch64/logical_imm.h"

#include <algorithm>
#include <bit>
#include <optional>

namespace heron::aarch64 {

using ra::Operand;
using ra::RegClass;
using ra::VReg;
using namespace regs;

namespace {

/// AAPCS64: x0..x7 and v0..v7 carry arguments; Heron returns results in the
/// same registers, and those that do not fit through a return area whose
/// address is passed in x8 (AAPCS64's indirect result register).
constexpr ra::PReg kIntArgRegs[] = {gpr(0), gpr(1), gpr(2), gpr(3), gpr(4), gpr(5), gpr(6), gpr(7)};
constexpr ra::PReg kFloatArgRegs[] = {fpr(0), fpr(1), fpr(2), fpr(3), fpr(4), fpr(5), fpr(6), fpr(7)};
constexpr AbiFacts kAbi{
    .int_args = kIntArgRegs,
    .float_args = kFloatArgRegs,
    .int_rets = kIntArgRegs,
    .float_rets = kFloatArgRegs,
    .ret_area_reg = gpr(X8),
    // A tail call copies a growing area with `ldr/str q` and unsigned scaled
    // offsets (at most 65520); the same bound as x86-64's `ret imm16`.
    .max_popped_bytes = 65520,
    .incoming_args_offset = 16,  // above the frame record (x29, x30)
    .outgoing_align = 16,        // sp stays 16-byte aligned
};
constexpr AbiInsts<Op> kAbiInsts{Op::Args, Op::Load, Op::Store, Op::SpAddr, Op::Call, Op::CallInd,
                                 Op::TailCall, Op::TailCallInd, Op::Ret, mflags::kFloat};

ra::PRegSet caller_saved() {
    ra::PRegSet s;
    for (uint8_t r = 0; r <= 17; ++r) s.add(gpr(r));
    for (uint8_t r = 0; r < 8; ++r) s.add(fpr(r));
    for (uint8_t r = 16; r < 32; ++r) s.add(fpr(r));
    return s;
}

bool is_signed_cc(IntCC cc) {
    return cc == IntCC::Slt || cc == IntCC::Sge || cc == IntCC::Sgt || cc == IntCC::Sle;
}

Cond cond_of(IntCC cc) {
    switch (cc) {
    case IntCC::Eq: return Cond::EQ;
    case IntCC::Ne: return Cond::NE;
    case IntCC::Slt: return Cond::LT;
    case IntCC::Sge: return Cond::GE;
    case IntCC::Sgt: return Cond::GT;
    case IntCC::Sle: return Cond::LE;
    case IntCC::Ult: return Cond::LO;
    case IntCC::Uge: return Cond::HS;
    case IntCC::Ugt: return Cond::HI;
    case IntCC::Ule: return Cond::LS;
    }
    return Cond::EQ;
}

/// The conditions that hold after `fcmp x, y` for `cc` (ARM ARM: after FCMP
/// an unordered pair sets NZCV = 0011). The condition is c1 or c2 (c2 is AL
/// when one code suffices).
std::pair<Cond, Cond> float_cond(FloatCC cc) {
    switch (cc) {
    case FloatCC::Eq: return {Cond::EQ, Cond::AL};
    case FloatCC::Ne: return {Cond::NE, Cond::AL};
    case FloatCC::Lt: return {Cond::MI, Cond::AL};
    case FloatCC::Le: return {Cond::LS, Cond::AL};
    case FloatCC::Gt: return {Cond::GT, Cond::AL};
    case FloatCC::Ge: return {Cond::GE, Cond::AL};
    case FloatCC::Uno: return {Cond::VS, Cond::AL};
    case FloatCC::Ord: return {Cond::VC, Cond::AL};
    case FloatCC::Ult: return {Cond::LT, Cond::AL};
    case FloatCC::Ule: return {Cond::LE, Cond::AL};
    case FloatCC::Ugt: return {Cond::HI, Cond::AL};
    case FloatCC::Uge: return {Cond::PL, Cond::AL};
    case FloatCC::Ueq: return {Cond::EQ, Cond::VS};
    case FloatCC::One: return {Cond::MI, Cond::GT};
    }
    return {Cond::EQ, Cond::AL};
}

/// add/sub/cmp immediates: imm12, either sign (the emitter flips add/sub).
bool is_imm12(int64_t v) { return v > -4096 && v < 4096; }

unsigned reg_size(Type t) { return t.bits() == 64 ? 8 : 4; }

uint64_t low_ones(unsigned n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

/// If `v` (of a `bits`-wide type) is 2^w - 1 with 1 <= w < bits: w.
std::optional<unsigned> low_mask_width(uint64_t v, unsigned bits) {
    v &= low_ones(bits);
    if (v == 0 || (v & (v + 1)) != 0) return std::nullopt;
    unsigned w = static_cast<unsigned>(std::popcount(v));
    if (w >= bits) return std::nullopt;
    return w;
}

/// The extension of a value of `from_bits` (8, 16 or 32) bits.
ExtOp ext_op(unsigned from_bits, bool is_signed) {
    if (from_bits == 8) return is_signed ? ExtOp::Sxtb : ExtOp::Uxtb;
    if (from_bits == 16) return is_signed ? ExtOp::Sxth : ExtOp::Uxth;
    return is_signed ? ExtOp::Sxtw : ExtOp::Uxtw;
}

constexpr MemFlagBits kMemBits{mflags::kSigned, mflags::kFloat, mflags::kBig, mflags::kTrapSite};

class Lowerer : public LowerBase<VCode> {
public:
    Lowerer(const Function& f, VCode& out, LowerContext& ctx) : LowerBase(f, out, ctx), use_count_(ctx.value_counts) {}

    std::string run();

private:
    // --- value/vreg plumbing (the rest in LowerBase) ------------------------
    VReg result(Inst inst) { return result_vreg(inst); }
    /// Whether `v` has exactly one use in the function (it may then be
    /// folded into its user without computing it twice).
    bool single_use(Value v) const { return use_count_[dfg_.resolve_aliases(v)] == 1; }

    // --- small builders returning the defined vreg ----------------------------
    VReg mov_imm(int64_t v, VReg d) {
        emit(Op::MovImm, {Operand::def(d)}).imm = v;
        return d;
    }
    VReg mov_imm(int64_t v) { return mov_imm(v, temp()); }
    VReg mov(VReg s, VReg d) {
        emit(d.cls() == RegClass::Float ? Op::FMov : Op::MovRR, {Operand::use(s), Operand::def(d)}).size = 8;
        return d;
    }
    VReg ext(VReg src, unsigned from_bytes, bool is_signed, VReg d) {
        MInst& m = emit(Op::Ext, {Operand::use(src), Operand::def(d)});
        m.size = static_cast<uint8_t>(from_bytes);
        if (is_signed) m.flags |= mflags::kSigned;
        return d;
    }
    VReg ext(VReg src, unsigned from_bytes, bool is_signed) { return ext(src, from_bytes, is_signed, temp()); }
    /// `v` extended to at least 32 bits (narrow types), else itself.
    VReg extended(Value v, bool is_signed) {
        Type t = type_of(v);
        if (t.bits() >= 32) return use(v);
        return ext(use(v), t.bytes(), is_signed);
    }
    VReg alu(AluOp op, unsigned size, VReg a, VReg b, VReg d) {
        MInst& m = emit(Op::Alu, {Operand::use(a), Operand::use(b), Operand::def(d)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    VReg alu(AluOp op, unsigned size, VReg a, VReg b) { return alu(op, size, a, b, temp()); }
    VReg alu_imm(AluOp op, unsigned size, VReg a, int64_t imm, VReg d) {
        MInst& m = emit(Op::AluImm, {Operand::use(a), Operand::def(d)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        m.imm = imm;
        return d;
    }
    VReg alu_imm(AluOp op, unsigned size, VReg a, int64_t imm) { return alu_imm(op, size, a, imm, temp()); }
    VReg unary(UnaryOp op, unsigned size, VReg a, VReg d) {
        MInst& m = emit(Op::Unary, {Operand::use(a), Operand::def(d)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    VReg unary(UnaryOp op, unsigned size, VReg a) { return unary(op, size, a, temp()); }
    void cmp(unsigned size, VReg a, VReg b) { emit(Op::Cmp, {Operand::use(a), Operand::use(b)}).size = static_cast<uint8_t>(size); }
    void cmp_imm(unsigned size, VReg a, int64_t imm) {
        MInst& m = emit(Op::CmpImm, {Operand::use(a)});
        m.size = static_cast<uint8_t>(size);
        m.imm = imm;
    }
    void cmp_ext(unsigned size, VReg a, VReg b, ExtOp e) {
        MInst& m = emit(Op::CmpExt, {Operand::use(a), Operand::use(b)});
        m.size = static_cast<uint8_t>(size);
        m.sub = static_cast<uint8_t>(e);
    }
    /// Flags for "v != 0" at v's width: the condition to test is NE.
    void test_nonzero(Value v) {
        if (lower_tst(v)) return;
        Type t = type_of(v);
        if (t.bits() < 32) {
            emit(Op::TstImm, {Operand::use(use(v))}).size = static_cast<uint8_t>(t.bytes());
            return;
        }
        cmp_imm(t.bytes(), use(v), 0);
    }
    VReg cset(Cond cc, VReg d, bool mask = false) {
        MInst& m = emit(Op::Cset, {Operand::def(d)});
        m.cc = cc;
        m.imm = mask;
        return d;
    }
    VReg csel(Cond cc, unsigned size, VReg t, VReg f, VReg d) {
        MInst& m = emit(t.cls() == RegClass::Float ? Op::FCsel : Op::Csel, {Operand::use(t), Operand::use(f), Operand::def(d)});
        m.cc = cc;
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    VReg fconst_bits(uint64_t bits, unsigned size, VReg d) {
        MInst& m = emit(Op::FConst, {Operand::def(d)});
        m.imm = static_cast<int64_t>(bits);
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    VReg to_gpr(VReg f, unsigned size) {
        VReg d = temp();
        emit(Op::FprToGpr, {Operand::use(f), Operand::def(d)}).size = static_cast<uint8_t>(size);
        return d;
    }
    VReg to_fpr(VReg g, unsigned size, VReg d) {
        emit(Op::GprToFpr, {Operand::use(g), Operand::def(d)}).size = static_cast<uint8_t>(size);
        return d;
    }
    void trap_if(Cond cc, uint8_t code) {
        MInst& m = emit(Op::TrapIf, {});
        m.cc = cc;
        m.trap = code;
    }

    /// A condition for brif/select/trapz: folds an icmp or a one-code fcmp
    /// into flags and returns the condition; anything else (a plain value,
    /// a two-code fcmp) is tested against zero (NE).
    Cond lower_condition(Value c);
    Cond emit_icmp(const InstructionData& d);
    /// Emits fcmp; returns the condition codes (the second AL if unused).
    std::pair<Cond, Cond> emit_fcmp(const InstructionData& d);
    /// The 0/1 value of an fcmp.
    VReg fcmp_value(const InstructionData& d, VReg out);

    // --- per-family lowering --------------------------------------------------
    /// Lowers `inst`; false (with error_ set to what is unsupported) when
    /// this backend cannot.
    bool lower_inst(Inst inst);
    void lower_int_binary(Inst inst, const InstructionData& d);
    void lower_div(Inst inst, const InstructionData& d);
    void lower_mulhi(Inst inst, const InstructionData& d);
    void lower_minmax(Inst inst, const InstructionData& d);
    void lower_overflow(Inst inst, const InstructionData& d);
    void lower_carry(Inst inst, const InstructionData& d);
    void lower_shift(Inst inst, const InstructionData& d);
    void lower_bitcount(Inst inst, const InstructionData& d);
    void lower_select(Inst inst, const InstructionData& d);
    void lower_float_bitwise(Inst inst, const InstructionData& d);
    void lower_float_unary(Inst inst, const InstructionData& d);
    void lower_float_binary(Inst inst, const InstructionData& d);
    void lower_conversion(Inst inst, const InstructionData& d);
    void lower_load(Inst inst, const InstructionData& d);
    void lower_store(Inst inst, const InstructionData& d);
    void lower_branch(Inst inst, const InstructionData& d);
    /// brif on `icmp eq/ne x, 0` (i32/i64) -> cbz/cbnz; on `band x, 2^k`
    /// -> tbnz (only in small functions: tbz reaches +-32 KiB).
    bool lower_test_branch(Value c, uint32_t then_block, uint32_t else_block);

    /// Folds `p + const` addressing: returns the base vreg and adds to off.
    VReg address(Value p, int64_t& off);

    // --- operand folding ------------------------------------------------------
    /// A shifted-register operand: `src <kind> #amount`.
    struct ShiftedOperand {
        Value src;
        ShiftKind kind;
        unsigned amount;
    };
    /// `v` = ishl/ushr/sshr src, k with a constant k (mod B, not 0) and no
    /// other use; ushr/sshr only at 32 and 64 bits (a narrow value has
    /// garbage above its width that a right shift would bring in).
    std::optional<ShiftedOperand> shifted_operand(Value v) const;
    /// An extended-register operand: `src <ext> #shift`.
    struct ExtendedOperand {
        Value src;
        ExtOp ext;
        unsigned shift;
    };
    /// `v` = uextend/sextend src (8, 16 or 32 bits, narrower than v), or
    /// `ishl` of one by 1..4, each with no other use.
    std::optional<ExtendedOperand> extended_operand(Value v) const;
    /// The constant `v` as the logical immediate of a `size`-byte op on its
    /// type (narrow types: either extension, the bits above are free).
    std::optional<int64_t> logical_imm(Value v, unsigned size) const;
    VReg bitfield(BfOp op, unsigned size, VReg x, unsigned lsb, unsigned width, VReg d) {
        MInst& m = emit(Op::Bfx, {Operand::use(x), Operand::def(d)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        m.imm = lsb;
        m.size2 = static_cast<uint8_t>(width);
        return d;
    }
    /// band/ishl/ushr/sshr/extends that are one bitfield move; false if not.
    bool lower_bitfield_and(Inst inst, const InstructionData& d);
    bool lower_bitfield_shift(Inst inst, const InstructionData& d);
    bool lower_bitfield_extend(Inst inst, const InstructionData& d);
    bool lower_bfi(Inst inst, const InstructionData& d);
    /// tst for "v != 0" when v is a band; the condition is NE. False if not.
    bool lower_tst(Value v);

    SecondaryMap<Value, uint32_t>& use_count_;
};

// ---------------------------------------------------------------------------

VReg Lowerer::address(Value p, int64_t& off) {
    if (auto add = def_with(p, Opcode::Iadd)) {
        const InstructionData& a = dfg_[*add];
        for (int k = 0; k < 2; ++k) {
            auto c = const_of(a.args[k]);
            if (c && *c + off >= INT32_MIN && *c + off <= INT32_MAX) {
                off += *c;
                return use(a.args[1 - k]);
            }
        }
    }
    return use(p);
}

Cond Lowerer::emit_icmp(const InstructionData& d) {
    Type t = type_of(d.args[0]);
    IntCC cc = d.intcc();
    bool is_signed = is_signed_cc(cc);
    unsigned size = reg_size(t);
    if (t.bits() >= 32) {
        // (band x, y) ==/!= 0: tst.
        auto k = const_of(d.args[1]);
        if ((cc == IntCC::Eq || cc == IntCC::Ne) && k && *k == 0 && lower_tst(d.args[0])) return cond_of(cc);
        // A constant shift or an extension folds into the second operand;
        // one in the first swaps the operands (and the condition).
        auto foldable = [&](Value v) {
            auto e = extended_operand(v);
            return (e && e->shift == 0) || shifted_operand(v).has_value();
        };
        Value a = d.args[0], b = d.args[1];
        if (!k && !foldable(b) && foldable(a)) {
            std::swap(a, b);
            cc = intcc_swap(cc);
        }
        if (auto e = extended_operand(b); e && e->shift == 0) {
            cmp_ext(size, use(a), use(e->src), e->ext);
            return cond_of(cc);
        }
        if (auto sh = shifted_operand(b)) {
            MInst& m = emit(Op::CmpShift, {Operand::use(use(a)), Operand::use(use(sh->src))});
            m.size = static_cast<uint8_t>(size);
            m.size2 = static_cast<uint8_t>(sh->kind);
            m.imm = sh->amount;
            return cond_of(cc);
        }
    }
    VReg x = extended(d.args[0], is_signed);
    if (auto k = const_of(d.args[1])) {
        // The constant read the way x was extended.
        int64_t v = t.bits() < 64 && !is_signed ? static_cast<int64_t>(static_cast<uint64_t>(*k) & t.mask()) : *k;
        if (is_imm12(v)) {
            cmp_imm(size, x, v);
            return cond_of(cc);
        }
    }
    cmp(size, x, extended(d.args[1], is_signed));
    return cond_of(cc);
}

std::pair<Cond, Cond> Lowerer::emit_fcmp(const InstructionData& d) {
    emit(Op::FCmp, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1]))}).size =
        static_cast<uint8_t>(type_of(d.args[0]).bytes());
    return float_cond(d.floatcc());
}

VReg Lowerer::fcmp_value(const InstructionData& d, VReg out) {
    auto [c1, c2] = emit_fcmp(d);
    if (c2 == Cond::AL) return cset(c1, out);
    VReg a = cset(c1, temp()), b = cset(c2, temp());
    return alu(AluOp::Orr, 4, a, b, out);
}

Cond Lowerer::lower_condition(Value c) {
    if (auto ic = def_with(c, Opcode::Icmp)) return emit_icmp(dfg_[*ic]);
    if (auto fc = def_with(c, Opcode::Fcmp)) {
        const InstructionData& d = dfg_[*fc];
        if (float_cond(d.floatcc()).second == Cond::AL) return emit_fcmp(d).first;
        VReg v = fcmp_value(d, temp());
        cmp_imm(4, v, 0);
        return Cond::NE;
    }
    test_nonzero(c);
    return Cond::NE;
}

// ---------------------------------------------------------------------------

std::string Lowerer::run() {
    begin_function();
    if (std::string err = begin_abi(kAbi, kAbiInsts); !err.empty()) return "unsupported on aarch64: " + err;
    use_count_.clear();
    use_count_.resize(dfg_.num_values());
    for (Block b : order_.rpo()) {
        for (auto i = f_.layout.first_inst(b); i; i = f_.layout.next_inst(*i)) {
            dfg_.for_each_inst_value(*i, [&](Value a) { ++use_count_[dfg_.resolve_aliases(a)]; });
        }
    }
    auto unsupported = [&](const std::string& what, Block b) {
        return "unsupported on aarch64: " + what + " in block" + std::to_string(b.index());
    };
    std::string err = lower_blocks(
        Op::Jmp,
        [&](Inst i) {
            if (lower_inst(i)) return true;
            error_ = unsupported(error_, *f_.layout.inst_block(i));
            return false;
        },
        [](Inst) { return false; });
    if (!err.empty()) return err;
    auto classify = [](const MInst& m) {
        uint8_t fl = 0;
        bool leaves = m.op == Op::Ret || m.op == Op::Trap || m.op == Op::TailCall || m.op == Op::TailCallInd;
        if (leaves || m.op == Op::Jmp || m.op == Op::Bcond || m.op == Op::Cbz || m.op == Op::Tbz || m.op == Op::BrTable)
            fl |= ra::inst_flags::kTerminator;
        if (leaves) fl |= ra::inst_flags::kReturn;
        if (m.op == Op::MovRR || m.op == Op::FMov) fl |= ra::inst_flags::kMove;
        return fl;
    };
    auto calls = [](const MInst& m) { return m.op == Op::Call || m.op == Op::CallInd; };
    finish_insts(classify, calls, caller_saved());
    finish_blocks();
    return {};
}

bool Lowerer::lower_inst(Inst inst) {
    const InstructionData& d = dfg_[inst];
    switch (d.opcode) {
    case Opcode::Nop: return true;
    case Opcode::Iconst: mov_imm(sext(d.imm, d.type.bits()), result(inst)); return true;
    case Opcode::F32const: fconst_bits(d.imm, 4, result(inst)); return true;
    case Opcode::F64const: fconst_bits(d.imm, 8, result(inst)); return true;
    case Opcode::Iadd: case Opcode::Isub: case Opcode::Imul:
    case Opcode::Band: case Opcode::Bor: case Opcode::Bxor:
        if (type_of(d.args[0]).is_float()) {
            lower_float_bitwise(inst, d);
            return true;
        }
        lower_int_binary(inst, d);
        return true;
    case Opcode::Ineg: unary(UnaryOp::Neg, reg_size(type_of(d.args[0])), use(d.args[0]), result(inst)); return true;
    case Opcode::Bnot:
        if (type_of(d.args[0]).is_float()) {
            lower_float_bitwise(inst, d);
            return true;
        }
        unary(UnaryOp::Mvn, reg_size(type_of(d.args[0])), use(d.args[0]), result(inst));
        return true;
    case Opcode::Iabs: {
        unsigned size = reg_size(type_of(d.args[0]));
        VReg x = extended(d.args[0], true);
        cmp_imm(size, x, 0);
        MInst& m = emit(Op::Cneg, {Operand::use(x), Operand::def(result(inst))});
        m.cc = Cond::LT;
        m.size = static_cast<uint8_t>(size);
        return true;
    }
    case Opcode::Umulhi: case Opcode::Smulhi: lower_mulhi(inst, d); return true;
    case Opcode::Udiv: case Opcode::Sdiv: case Opcode::Urem: case Opcode::Srem: lower_div(inst, d); return true;
    case Opcode::Smin: case Opcode::Smax: case Opcode::Umin: case Opcode::Umax: lower_minmax(inst, d); return true;
    case Opcode::UaddOverflow: case Opcode::SaddOverflow: case Opcode::UsubOverflow:
    case Opcode::SsubOverflow: case Opcode::UmulOverflow: case Opcode::SmulOverflow:
        lower_overflow(inst, d);
        return true;
    case Opcode::UaddOverflowCin: case Opcode::SaddOverflowCin:
    case Opcode::UsubOverflowBin: case Opcode::SsubOverflowBin:
        lower_carry(inst, d);
        return true;
    case Opcode::UaddOverflowTrap: {
        Type t = type_of(d.args[0]);
        VReg out = result(inst);
        if (t.bits() < 32) {
            // Zero-extended inputs: the sum carries out iff bits above B are set.
            alu(AluOp::Add, 4, extended(d.args[0], false), extended(d.args[1], false), out);
            MInst& m = emit(Op::TrapIfHigh, {Operand::use(out)});
            m.imm = t.bits();
            m.trap = d.code;
            return true;
        }
        alu(AluOp::Adds, t.bytes(), use(d.args[0]), use(d.args[1]), out);
        trap_if(Cond::HS, d.code);
        return true;
    }
    case Opcode::Bitselect: {
        Type t = type_of(d.args[1]);
        if (t.is_float()) {
            lower_float_bitwise(inst, d);
            return true;
        }
        VReg c = use(d.args[0]);
        VReg a = alu(AluOp::And, 8, use(d.args[1]), c);
        VReg b = alu(AluOp::Bic, 8, use(d.args[2]), c);
        alu(AluOp::Orr, 8, a, b, result(inst));
        return true;
    }
    case Opcode::Ishl: case Opcode::Ushr: case Opcode::Sshr: case Opcode::Rotl: case Opcode::Rotr:
        lower_shift(inst, d);
        return true;
    case Opcode::Clz: case Opcode::Cls: case Opcode::Ctz: case Opcode::Popcnt: case Opcode::Bitrev:
        lower_bitcount(inst, d);
        return true;
    case Opcode::Bswap: {
        Type t = type_of(d.args[0]);
        UnaryOp op = t.bits() == 16 ? UnaryOp::Rev16 : UnaryOp::Rev;
        unary(op, reg_size(t), use(d.args[0]), result(inst));
        return true;
    }
    case Opcode::Icmp: cset(emit_icmp(d), result(inst)); return true;
    case Opcode::Fcmp: fcmp_value(d, result(inst)); return true;
    case Opcode::Select: case Opcode::SelectSpectreGuard: lower_select(inst, d); return true;
    case Opcode::Bmask: test_nonzero(d.args[0]); cset(Cond::NE, result(inst), true); return true;
    case Opcode::Uextend: case Opcode::Sextend:
        if (lower_bitfield_extend(inst, d)) return true;
        ext(use(d.args[0]), type_of(d.args[0]).bytes(), d.opcode == Opcode::Sextend, result(inst));
        return true;
    case Opcode::Ireduce: mov(use(d.args[0]), result(inst)); return true;
    case Opcode::Bitcast: {
        Type in = type_of(d.args[0]), outt = d.type;
        VReg src = use(d.args[0]), out = result(inst);
        if (in.is_float() == outt.is_float()) {
            mov(src, out);
            return true;
        }
        emit(in.is_float() ? Op::FprToGpr : Op::GprToFpr, {Operand::use(src), Operand::def(out)}).size =
            static_cast<uint8_t>(in.bytes());
        return true;
    }
    case Opcode::Fpromote: case Opcode::Fdemote:
    case Opcode::Sqrt: case Opcode::Fneg: case Opcode::Fabs:
    case Opcode::Ceil: case Opcode::Floor: case Opcode::Trunc: case Opcode::Nearest:
        lower_float_unary(inst, d);
        return true;
    case Opcode::Fadd: case Opcode::Fsub: case Opcode::Fmul: case Opcode::Fdiv:
    case Opcode::Fmin: case Opcode::Fmax: case Opcode::Fma:
        lower_float_binary(inst, d);
        return true;
    case Opcode::Fcopysign: lower_float_bitwise(inst, d); return true;
    case Opcode::FcvtToUint: case Opcode::FcvtToSint: case Opcode::FcvtToUintSat: case Opcode::FcvtToSintSat:
    case Opcode::FcvtFromUint: case Opcode::FcvtFromSint:
        lower_conversion(inst, d);
        return true;
    case Opcode::Load: case Opcode::Uload8: case Opcode::Sload8: case Opcode::Uload16:
    case Opcode::Sload16: case Opcode::Uload32: case Opcode::Sload32:
        lower_load(inst, d);
        return true;
    case Opcode::Store: case Opcode::Istore8: case Opcode::Istore16: case Opcode::Istore32:
        lower_store(inst, d);
        return true;
    case Opcode::StackAddr: {
        MInst& m = emit(Op::StackAddr, {Operand::def(result(inst))});
        m.aux = d.entity;
        m.imm = d.offset;
        return true;
    }
    case Opcode::FuncAddr:
        emit(Op::FuncAddr, {Operand::def(result(inst))}).aux = symbol_index(dfg_.ext_funcs[d.func_ref()].name);
        return true;
    case Opcode::Jump: case Opcode::Brif: case Opcode::BrTable: lower_branch(inst, d); return true;
    case Opcode::Return:
        lower_abi_return(inst, [&](VReg v, Type t, bool is_signed) { return ext(v, t.bytes(), is_signed); });
        return true;
    case Opcode::Trap: emit(Op::Trap, {}).trap = d.code; return true;
    case Opcode::Trapz: case Opcode::Trapnz: {
        Value c = d.args[0];
        bool folds = def_with(c, Opcode::Icmp) || def_with(c, Opcode::Fcmp);
        if (!folds && type_of(c).bits() >= 32) {
            MInst& m = emit(Op::TrapIfZero, {Operand::use(use(c))});
            m.size = static_cast<uint8_t>(type_of(c).bytes());
            m.imm = d.opcode == Opcode::Trapnz;
            m.trap = d.code;
            return true;
        }
        Cond cc = lower_condition(c);
        trap_if(d.opcode == Opcode::Trapz ? invert(cc) : cc, d.code);
        return true;
    }
    case Opcode::Call: case Opcode::CallIndirect:
    case Opcode::ReturnCall: case Opcode::ReturnCallIndirect:
        error_ = lower_abi_call(inst, d);
        return error_.empty();
    }
    error_ = std::string(opcode_name(d.opcode));
    return false;
}

void Lowerer::lower_int_binary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = reg_size(t);
    VReg out = result(inst);
    Value x = d.args[0], y = d.args[1];
    AluOp op;
    switch (d.opcode) {
    case Opcode::Iadd: op = AluOp::Add; break;
    case Opcode::Isub: op = AluOp::Sub; break;
    case Opcode::Imul: op = AluOp::Mul; break;
    case Opcode::Band: op = AluOp::And; break;
    case Opcode::Bor: op = AluOp::Orr; break;
    default: op = AluOp::Eor; break;
    }
    if (op == AluOp::And && lower_bitfield_and(inst, d)) return;
    if (op == AluOp::Orr && lower_bfi(inst, d)) return;
    bool logical = op == AluOp::And || op == AluOp::Orr || op == AluOp::Eor;
    if (logical) {
        for (int j = 1; j >= 0; --j) {
            if (auto imm = logical_imm(d.args[j], size)) {
                alu_imm(op, size, use(d.args[1 - j]), *imm, out);
                return;
            }
        }
    }
    if (op == AluOp::Add || op == AluOp::Sub) {
        // x +/- (a * b) -> madd/msub when the product has no other use.
        for (int k = op == AluOp::Add ? 0 : 1; k < 2; ++k) {
            Value m = d.args[k];
            auto mul = def_with(m, Opcode::Imul);
            if (!mul || !single_use(m)) continue;
            const InstructionData& md = dfg_[*mul];
            MInst& mi = emit(Op::Madd, {Operand::use(use(md.args[0])), Operand::use(use(md.args[1])),
                                        Operand::use(use(d.args[1 - k])), Operand::def(out)});
            mi.size = static_cast<uint8_t>(size);
            if (op == AluOp::Sub) mi.flags |= mflags::kMsub;
            return;
        }
        auto k = const_of(y);
        if (!k && op == AluOp::Add) {
            if (auto k0 = const_of(x)) {
                k = k0;
                std::swap(x, y);
            }
        }
        if (k) {
            int64_t v = size == 4 ? static_cast<int32_t>(*k) : *k;
            if (is_imm12(v)) {
                alu_imm(op, size, use(x), v, out);
                return;
            }
        }
        // An extension (and a small shift of it) as the second operand.
        for (int j = 1; j >= (op == AluOp::Add ? 0 : 1); --j) {
            auto e = extended_operand(d.args[j]);
            if (!e) continue;
            MInst& m = emit(Op::AluExt, {Operand::use(use(d.args[1 - j])), Operand::use(use(e->src)), Operand::def(out)});
            m.sub = static_cast<uint8_t>(op);
            m.size = static_cast<uint8_t>(size);
            m.size2 = static_cast<uint8_t>(e->ext);
            m.imm = e->shift;
            return;
        }
    }
    if (op != AluOp::Mul) {
        // A shift by a constant as the second operand.
        for (int j = 1; j >= (op == AluOp::Sub ? 1 : 0); --j) {
            auto sh = shifted_operand(d.args[j]);
            if (!sh) continue;
            MInst& m = emit(Op::AluShift, {Operand::use(use(d.args[1 - j])), Operand::use(use(sh->src)), Operand::def(out)});
            m.sub = static_cast<uint8_t>(op);
            m.size = static_cast<uint8_t>(size);
            m.size2 = static_cast<uint8_t>(sh->kind);
            m.imm = sh->amount;
            return;
        }
    }
    alu(op, size, use(x), use(y), out);
}

// --- operand folding and bitfield moves ---------------------------------------

std::optional<Lowerer::ShiftedOperand> Lowerer::shifted_operand(Value v) const {
    ValueDef def = dfg_.value_def(dfg_.resolve_aliases(v));
    if (!def.is_result() || !single_use(v)) return std::nullopt;
    const InstructionData& d = dfg_[def.inst()];
    ShiftKind kind;
    switch (d.opcode) {
    case Opcode::Ishl: kind = ShiftKind::Lsl; break;
    case Opcode::Ushr: kind = ShiftKind::Lsr; break;
    case Opcode::Sshr: kind = ShiftKind::Asr; break;
    default: return std::nullopt;
    }
    unsigned bits = type_of(v).bits();
    auto k = const_of(d.args[1]);
    if (!k || (kind != ShiftKind::Lsl && bits < 32)) return std::nullopt;
    unsigned amount = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
    if (amount == 0) return std::nullopt;
    return ShiftedOperand{d.args[0], kind, amount};
}

std::optional<Lowerer::ExtendedOperand> Lowerer::extended_operand(Value v) const {
    unsigned bits = type_of(v).bits();
    auto extension = [&](Value e) -> std::optional<ExtendedOperand> {
        ValueDef def = dfg_.value_def(dfg_.resolve_aliases(e));
        if (!def.is_result() || !single_use(e)) return std::nullopt;
        const InstructionData& d = dfg_[def.inst()];
        if (d.opcode != Opcode::Uextend && d.opcode != Opcode::Sextend) return std::nullopt;
        unsigned from = type_of(d.args[0]).bits();
        if (from >= bits || from > 32) return std::nullopt;
        return ExtendedOperand{d.args[0], ext_op(from, d.opcode == Opcode::Sextend), 0};
    };
    if (auto e = extension(v)) return e;
    auto shl = def_with(v, Opcode::Ishl);
    if (!shl || !single_use(v)) return std::nullopt;
    const InstructionData& d = dfg_[*shl];
    auto k = const_of(d.args[1]);
    if (!k) return std::nullopt;
    unsigned amount = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
    if (amount < 1 || amount > 4) return std::nullopt;
    auto e = extension(d.args[0]);
    if (!e) return std::nullopt;
    e->shift = amount;
    return e;
}

std::optional<int64_t> Lowerer::logical_imm(Value v, unsigned size) const {
    auto k = const_of(v);
    if (!k) return std::nullopt;
    Type t = type_of(v);
    uint64_t candidates[2] = {static_cast<uint64_t>(*k), static_cast<uint64_t>(*k) & t.mask()};
    for (uint64_t c : candidates) {
        if (size == 4) c &= 0xffffffffu;
        if (encode_logical_imm(c, 8 * size)) return static_cast<int64_t>(c);
        if (t.bits() >= 32) break;  // only narrow types leave the bits above free
    }
    return std::nullopt;
}

bool Lowerer::lower_tst(Value v) {
    auto band = def_with(v, Opcode::Band);
    Type t = type_of(v);
    if (!band || t.is_float() || !single_use(v)) return false;
    const InstructionData& d = dfg_[*band];
    unsigned size = reg_size(t);
    for (int j = 1; j >= 0; --j) {
        auto k = const_of(d.args[j]);
        if (!k) continue;
        // Only the type's own bits are tested: the garbage above a narrow
        // value is masked off by the immediate.
        uint64_t bits = static_cast<uint64_t>(*k) & t.mask();
        if (!encode_logical_imm(bits, 8 * size)) return false;
        MInst& m = emit(Op::TstLog, {Operand::use(use(d.args[1 - j]))});
        m.size = static_cast<uint8_t>(size);
        m.imm = static_cast<int64_t>(bits);
        return true;
    }
    if (t.bits() < 32) return false;
    emit(Op::Tst, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1]))}).size = static_cast<uint8_t>(size);
    return true;
}

bool Lowerer::lower_bitfield_and(Inst inst, const InstructionData& d) {
    // band (ushr x, k), 2^w - 1  ->  ubfx x, k, w  (w cut to the bits left)
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    for (int j = 1; j >= 0; --j) {
        auto k = const_of(d.args[j]);
        if (!k) continue;
        auto w = low_mask_width(static_cast<uint64_t>(*k), bits);
        Value shifted = d.args[1 - j];
        auto ushr = def_with(shifted, Opcode::Ushr);
        auto sshr = def_with(shifted, Opcode::Sshr);
        if (!w || !(ushr || sshr) || !single_use(shifted)) return false;
        const InstructionData& sd = dfg_[ushr ? *ushr : *sshr];
        auto amount = const_of(sd.args[1]);
        if (!amount) return false;
        unsigned lsb = static_cast<unsigned>(static_cast<uint64_t>(*amount) & (bits - 1));
        if (lsb == 0) return false;
        // sshr fills the top with sign copies: only a field below them.
        if (sshr && *w > bits - lsb) return false;
        bitfield(BfOp::Ubfx, reg_size(t), use(sd.args[0]), lsb, std::min(*w, bits - lsb), result(inst));
        return true;
    }
    return false;
}

bool Lowerer::lower_bitfield_shift(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits(), size = reg_size(t);
    auto k = const_of(d.args[1]);
    if (!k) return false;
    unsigned amount = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
    if (amount == 0) return false;
    Value x = d.args[0];
    if (d.opcode == Opcode::Ishl) {
        // ishl (band y, 2^w - 1), k  ->  ubfiz y, k, w;  ishl (u/sextend y), k
        // ->  ubfiz/sbfiz y, k, bits(y)  (w cut to the bits left).
        if (!single_use(x)) return false;
        unsigned room = bits - amount;
        if (auto band = def_with(x, Opcode::Band)) {
            const InstructionData& bd = dfg_[*band];
            for (int j = 1; j >= 0; --j) {
                auto m = const_of(bd.args[j]);
                auto w = m ? low_mask_width(static_cast<uint64_t>(*m), bits) : std::nullopt;
                if (!w) continue;
                bitfield(BfOp::Ubfiz, size, use(bd.args[1 - j]), amount, std::min(*w, room), result(inst));
                return true;
            }
            return false;
        }
        auto uext = def_with(x, Opcode::Uextend);
        auto sext_ = def_with(x, Opcode::Sextend);
        if (!uext && !sext_) return false;
        const InstructionData& ed = dfg_[uext ? *uext : *sext_];
        unsigned from = type_of(ed.args[0]).bits();
        bitfield(uext ? BfOp::Ubfiz : BfOp::Sbfiz, size, use(ed.args[0]), amount, std::min(from, room), result(inst));
        return true;
    }
    bool is_signed = d.opcode == Opcode::Sshr;
    // ushr/sshr (ishl y, a), b  ->  ubfx/sbfx y, b - a, B - b  (b >= a), or
    // ubfiz/sbfiz y, a - b, B - a  (b < a).
    if (auto shl = def_with(x, Opcode::Ishl); shl && single_use(x)) {
        const InstructionData& sd = dfg_[*shl];
        if (auto ka = const_of(sd.args[1])) {
            unsigned a = static_cast<unsigned>(static_cast<uint64_t>(*ka) & (bits - 1));
            if (a != 0) {
                VReg y = use(sd.args[0]);
                if (amount >= a) {
                    bitfield(is_signed ? BfOp::Sbfx : BfOp::Ubfx, size, y, amount - a, bits - amount, result(inst));
                } else {
                    bitfield(is_signed ? BfOp::Sbfiz : BfOp::Ubfiz, size, y, a - amount, bits - a, result(inst));
                }
                return true;
            }
        }
    }
    // A narrow right shift reads only the value's own bits: no extension.
    if (bits < 32) {
        bitfield(is_signed ? BfOp::Sbfx : BfOp::Ubfx, 4, use(x), amount, bits - amount, result(inst));
        return true;
    }
    return false;
}

bool Lowerer::lower_bitfield_extend(Inst inst, const InstructionData& d) {
    // uextend/sextend (ushr/sshr x, k)  ->  ubfx/sbfx x, k, B - k  (the bits
    // of x above k); uextend/sextend (ireduce.iN (ushr/sshr x, k))  ->
    // ubfx/sbfx x, k, N  when the field lies inside x.
    bool is_signed = d.opcode == Opcode::Sextend;
    unsigned size = reg_size(d.type);
    Value v = d.args[0];
    unsigned narrow_bits = type_of(v).bits();
    auto reduce = def_with(v, Opcode::Ireduce);
    if (reduce && single_use(v)) v = dfg_[*reduce].args[0];
    bool through_reduce = reduce.has_value() && v != d.args[0];
    auto ushr = def_with(v, Opcode::Ushr);
    auto sshr = def_with(v, Opcode::Sshr);
    if (!(ushr || sshr) || !single_use(v)) return false;
    const InstructionData& sd = dfg_[ushr ? *ushr : *sshr];
    unsigned bits = type_of(v).bits();
    auto k = const_of(sd.args[1]);
    if (!k) return false;
    unsigned lsb = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
    if (lsb == 0) return false;
    unsigned width = through_reduce ? narrow_bits : bits - lsb;
    if (lsb + width > bits) return false;
    // The field is read from x's register at the result's width; a
    // zero-extended field may be read at 64 bits for an i32 result.
    if (lsb + width > 8 * size && (through_reduce && is_signed)) return false;
    if (lsb + width > 8 * size) size = 8;
    BfOp op;
    if (through_reduce) {
        // The field lies inside x: the shift's kind does not matter.
        op = is_signed ? BfOp::Sbfx : BfOp::Ubfx;
    } else if (ushr) {
        op = BfOp::Ubfx;  // the shifted value's top bit is 0: either extension is a zero-extension
    } else if (is_signed) {
        op = BfOp::Sbfx;
    } else {
        return false;  // sign copies, then zero-extended: not one field
    }
    bitfield(op, size, use(sd.args[0]), lsb, width, result(inst));
    return true;
}

bool Lowerer::lower_bfi(Inst inst, const InstructionData& d) {
    // bor (band x, ~M), ins  where M = (2^w - 1) << k and ins is one of
    //   band (ishl y, k), M;  ishl (band y, 2^w - 1), k;  ishl y, k (k + w = B);
    //   band y, 2^w - 1 (k = 0)
    // ->  bfi x, y, k, w.
    Type t = type_of(d.args[0]);
    if (t.is_float()) return false;
    unsigned bits = t.bits();
    uint64_t mask = t.mask();
    struct Field {
        Value y;
        unsigned lsb, width;
    };
    auto field_of = [&](Value ins) -> std::optional<Field> {
        if (!single_use(ins)) return std::nullopt;
        auto shift_amount = [&](const InstructionData& sd) -> std::optional<unsigned> {
            auto k = const_of(sd.args[1]);
            if (!k) return std::nullopt;
            return static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
        };
        if (auto band = def_with(ins, Opcode::Band)) {
            const InstructionData& bd = dfg_[*band];
            auto m = const_of(bd.args[1]);
            if (!m) return std::nullopt;
            uint64_t mv = static_cast<uint64_t>(*m) & mask;
            if (mv == 0) return std::nullopt;
            unsigned lsb = static_cast<unsigned>(std::countr_zero(mv));
            auto w = low_mask_width(mv >> lsb, bits);
            if (!w && (mv >> lsb) != (mask >> lsb)) return std::nullopt;
            unsigned width = w ? *w : bits - lsb;
            if (lsb == 0) return Field{bd.args[0], 0, width};
            auto shl = def_with(bd.args[0], Opcode::Ishl);
            if (!shl || !single_use(bd.args[0])) return std::nullopt;
            auto k = shift_amount(dfg_[*shl]);
            if (!k || *k != lsb) return std::nullopt;
            return Field{dfg_[*shl].args[0], lsb, width};
        }
        auto shl = def_with(ins, Opcode::Ishl);
        if (!shl) return std::nullopt;
        const InstructionData& sd = dfg_[*shl];
        auto k = shift_amount(sd);
        if (!k || *k == 0) return std::nullopt;
        if (auto band = def_with(sd.args[0], Opcode::Band); band && single_use(sd.args[0])) {
            const InstructionData& bd = dfg_[*band];
            auto m = const_of(bd.args[1]);
            auto w = m ? low_mask_width(static_cast<uint64_t>(*m), bits) : std::nullopt;
            if (w) return Field{bd.args[0], *k, std::min(*w, bits - *k)};
        }
        return Field{sd.args[0], *k, bits - *k};
    };
    for (int j = 0; j < 2; ++j) {
        Value keep = d.args[j];
        auto kb = def_with(keep, Opcode::Band);
        if (!kb || !single_use(keep)) continue;
        const InstructionData& kd = dfg_[*kb];
        auto c = const_of(kd.args[1]);
        if (!c) continue;
        auto f = field_of(d.args[1 - j]);
        if (!f || f->width == 0 || f->lsb + f->width > bits) continue;
        uint64_t field_mask = low_ones(f->width) << f->lsb;
        if ((static_cast<uint64_t>(*c) & mask) != (~field_mask & mask)) continue;
        unsigned size = reg_size(t);
        MInst& m = emit(Op::Bfi, {Operand::use(use(kd.args[0])), Operand::use(use(f->y)), Operand::def_reuse(result(inst), 0)});
        m.size = static_cast<uint8_t>(size);
        m.imm = f->lsb;
        m.size2 = static_cast<uint8_t>(f->width);
        return true;
    }
    return false;
}

void Lowerer::lower_div(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Sdiv || d.opcode == Opcode::Srem;
    VReg x = extended(d.args[0], is_signed);
    VReg y = extended(d.args[1], is_signed);
    DivOp op = d.opcode == Opcode::Udiv ? DivOp::Udiv
             : d.opcode == Opcode::Sdiv ? DivOp::Sdiv
             : d.opcode == Opcode::Urem ? DivOp::Urem : DivOp::Srem;
    MInst& m = emit(Op::Div, {Operand::use(x), Operand::use(y), Operand::def(result(inst))});
    m.sub = static_cast<uint8_t>(op);
    m.size = static_cast<uint8_t>(reg_size(t));
    m.size2 = static_cast<uint8_t>(t.bytes());
}

void Lowerer::lower_mulhi(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Smulhi;
    VReg out = result(inst);
    if (t.bits() == 64) {
        alu(is_signed ? AluOp::Smulh : AluOp::Umulh, 8, use(d.args[0]), use(d.args[1]), out);
        return;
    }
    // The exact product fits 64 bits; its high B bits shifted down.
    VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
    VReg prod = temp();
    MInst& m = emit(Op::MulWide, {Operand::use(x), Operand::use(y), Operand::def(prod)});
    if (is_signed) m.flags |= mflags::kSigned;
    alu_imm(is_signed ? AluOp::Asr : AluOp::Lsr, 8, prod, t.bits(), out);
}

void Lowerer::lower_minmax(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Smin || d.opcode == Opcode::Smax;
    bool is_min = d.opcode == Opcode::Smin || d.opcode == Opcode::Umin;
    unsigned size = reg_size(t);
    VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
    cmp(size, x, y);
    Cond c = is_signed ? (is_min ? Cond::LT : Cond::GT) : (is_min ? Cond::LO : Cond::HI);
    csel(c, size, x, y, result(inst));
}

ExtOp narrow_ext(unsigned bits, bool is_signed) {
    if (bits == 8) return is_signed ? ExtOp::Sxtb : ExtOp::Uxtb;
    if (bits == 16) return is_signed ? ExtOp::Sxth : ExtOp::Uxth;
    return is_signed ? ExtOp::Sxtw : ExtOp::Uxtw;
}

void Lowerer::lower_overflow(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    auto res = dfg_.inst_results(inst);
    VReg a = def(res[0]), flag = def(res[1]);
    bool is_signed = d.opcode == Opcode::SaddOverflow || d.opcode == Opcode::SsubOverflow ||
                     d.opcode == Opcode::SmulOverflow;
    bool is_mul = d.opcode == Opcode::UmulOverflow || d.opcode == Opcode::SmulOverflow;
    bool is_add = d.opcode == Opcode::UaddOverflow || d.opcode == Opcode::SaddOverflow;
    if (bits < 32 || (is_mul && bits == 32)) {
        // Exact result of the extended inputs in a wider register; it
        // overflowed iff it differs from its own low B bits re-extended.
        VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
        unsigned size = 4;
        if (is_mul && bits == 32) {
            MInst& m = emit(Op::MulWide, {Operand::use(x), Operand::use(y), Operand::def(a)});
            if (is_signed) m.flags |= mflags::kSigned;
            size = 8;
        } else {
            alu(is_mul ? AluOp::Mul : is_add ? AluOp::Add : AluOp::Sub, 4, x, y, a);
        }
        cmp_ext(size, a, a, narrow_ext(bits, is_signed));
        cset(Cond::NE, flag);
        return;
    }
    if (is_mul) {
        // 64 bits: the high half must be zero (unsigned) or the sign of the low half.
        VReg x = use(d.args[0]), y = use(d.args[1]);
        VReg hi = alu(is_signed ? AluOp::Smulh : AluOp::Umulh, 8, x, y);
        alu(AluOp::Mul, 8, x, y, a);
        if (is_signed) cmp_ext(8, hi, a, ExtOp::Asr63);
        else cmp_imm(8, hi, 0);
        cset(Cond::NE, flag);
        return;
    }
    alu(is_add ? AluOp::Adds : AluOp::Subs, t.bytes(), use(d.args[0]), use(d.args[1]), a);
    cset(is_signed ? Cond::VS : is_add ? Cond::HS : Cond::LO, flag);
}

void Lowerer::lower_carry(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    auto res = dfg_.inst_results(inst);
    VReg a = def(res[0]), flag = def(res[1]);
    bool is_add = d.opcode == Opcode::UaddOverflowCin || d.opcode == Opcode::SaddOverflowCin;
    bool is_signed = d.opcode == Opcode::SaddOverflowCin || d.opcode == Opcode::SsubOverflowBin;
    if (bits < 32) {
        VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
        emit(Op::TstImm, {Operand::use(use(d.args[2]))}).size = 1;
        VReg c = cset(Cond::NE, temp());
        VReg s = alu(is_add ? AluOp::Add : AluOp::Sub, 4, x, y);
        alu(is_add ? AluOp::Add : AluOp::Sub, 4, s, c, a);
        cmp_ext(4, a, a, narrow_ext(bits, is_signed));
        cset(Cond::NE, flag);
        return;
    }
    // C = carry-in (adcs), or C = !borrow-in (sbcs subtracts !C).
    emit(Op::SetCarry, {Operand::use(use(d.args[2]))}).imm = is_add ? 0 : 1;
    alu(is_add ? AluOp::Adcs : AluOp::Sbcs, t.bytes(), use(d.args[0]), use(d.args[1]), a);
    cset(is_signed ? Cond::VS : is_add ? Cond::HS : Cond::LO, flag);
}

void Lowerer::lower_shift(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    unsigned size = reg_size(t);
    VReg out = result(inst);
    bool rotate = d.opcode == Opcode::Rotl || d.opcode == Opcode::Rotr;
    if (!rotate && lower_bitfield_shift(inst, d)) return;
    auto k = const_of(d.args[1]);
    if (bits < 32 && rotate) {
        // Narrow rotate: (x << l) | (x >> (B - l)) on the zero-extended value.
        VReg x = extended(d.args[0], false);
        if (k) {
            unsigned l = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
            if (d.opcode == Opcode::Rotr) l = (bits - l) & (bits - 1);
            if (l == 0) {
                mov(use(d.args[0]), out);
                return;
            }
            VReg hi = alu_imm(AluOp::Lsl, 4, x, l);
            VReg lo = alu_imm(AluOp::Lsr, 4, x, bits - l);
            alu(AluOp::Orr, 4, hi, lo, out);
            return;
        }
        VReg n = alu_imm(AluOp::And, 4, use(d.args[1]), bits - 1);
        VReg rn = alu(AluOp::Sub, 4, mov_imm(bits), n);  // B - n, in 1..B
        VReg l = d.opcode == Opcode::Rotl ? n : rn;
        VReg r = d.opcode == Opcode::Rotl ? rn : n;
        VReg hi = alu(AluOp::Lsl, 4, x, l);
        VReg lo = alu(AluOp::Lsr, 4, x, r);
        alu(AluOp::Orr, 4, hi, lo, out);
        return;
    }
    AluOp op;
    switch (d.opcode) {
    case Opcode::Ishl: op = AluOp::Lsl; break;
    case Opcode::Ushr: op = AluOp::Lsr; break;
    case Opcode::Sshr: op = AluOp::Asr; break;
    default: op = AluOp::Ror; break;
    }
    VReg x = d.opcode == Opcode::Ushr ? extended(d.args[0], false)
           : d.opcode == Opcode::Sshr ? extended(d.args[0], true) : use(d.args[0]);
    if (k) {
        unsigned amount = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
        if (d.opcode == Opcode::Rotl) amount = (bits - amount) & (bits - 1);
        if (amount == 0) {
            mov(use(d.args[0]), out);
            return;
        }
        alu_imm(op, size, x, amount, out);
        return;
    }
    VReg count = use(d.args[1]);
    // lslv/lsrv/asrv/rorv take the count modulo 32 or 64; narrow types mask
    // it to B - 1 first. rotl n == rotr -n.
    if (bits < 32) count = alu_imm(AluOp::And, 4, count, bits - 1);
    if (d.opcode == Opcode::Rotl) count = unary(UnaryOp::Neg, 4, count);
    alu(op, size, x, count, out);
}

void Lowerer::lower_bitcount(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    unsigned size = reg_size(t);
    VReg out = result(inst);
    switch (d.opcode) {
    case Opcode::Popcnt:
        emit(Op::Popcnt, {Operand::use(extended(d.args[0], false)), Operand::def(out)}).size = static_cast<uint8_t>(size);
        return;
    case Opcode::Bitrev: {
        if (bits >= 32) {
            unary(UnaryOp::Rbit, size, use(d.args[0]), out);
            return;
        }
        VReg r = unary(UnaryOp::Rbit, 4, use(d.args[0]));
        alu_imm(AluOp::Lsr, 4, r, 32 - bits, out);
        return;
    }
    case Opcode::Ctz: {
        VReg x = use(d.args[0]);
        // Setting bit B makes ctz of a narrow zero come out as B.
        if (bits < 32) x = alu(AluOp::Orr, 4, x, mov_imm(int64_t{1} << bits));
        VReg r = unary(UnaryOp::Rbit, size, x);
        unary(UnaryOp::Clz, size, r, out);
        return;
    }
    case Opcode::Clz: {
        if (bits >= 32) {
            unary(UnaryOp::Clz, size, use(d.args[0]), out);
            return;
        }
        VReg c = unary(UnaryOp::Clz, 4, extended(d.args[0], false));
        alu_imm(AluOp::Sub, 4, c, 32 - bits, out);
        return;
    }
    default: {  // cls
        if (bits >= 32) {
            unary(UnaryOp::Cls, size, use(d.args[0]), out);
            return;
        }
        VReg c = unary(UnaryOp::Cls, 4, extended(d.args[0], true));
        alu_imm(AluOp::Sub, 4, c, 32 - bits, out);
        return;
    }
    }
}

void Lowerer::lower_select(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[1]);
    Cond c;
    if (d.opcode == Opcode::Select) {
        c = lower_condition(d.args[0]);
    } else {
        test_nonzero(d.args[0]);
        c = Cond::NE;
    }
    csel(c, t.is_float() ? t.bytes() : reg_size(t), use(d.args[1]), use(d.args[2]), result(inst));
}

void Lowerer::lower_float_bitwise(Inst inst, const InstructionData& d) {
    // Bit-exact float ops on the bit patterns in general registers.
    Type t = type_of(d.opcode == Opcode::Bitselect ? d.args[1] : d.args[0]);
    unsigned size = t.bytes();
    VReg out = result(inst);
    auto bits = [&](Value v) { return to_gpr(use(v), size); };
    VReg r;
    switch (d.opcode) {
    case Opcode::Band: r = alu(AluOp::And, 8, bits(d.args[0]), bits(d.args[1])); break;
    case Opcode::Bor: r = alu(AluOp::Orr, 8, bits(d.args[0]), bits(d.args[1])); break;
    case Opcode::Bxor: r = alu(AluOp::Eor, 8, bits(d.args[0]), bits(d.args[1])); break;
    case Opcode::Bnot: r = unary(UnaryOp::Mvn, 8, bits(d.args[0])); break;
    case Opcode::Bitselect: {
        VReg c = bits(d.args[0]);
        VReg a = alu(AluOp::And, 8, bits(d.args[1]), c);
        VReg b = alu(AluOp::Bic, 8, bits(d.args[2]), c);
        r = alu(AluOp::Orr, 8, a, b);
        break;
    }
    default: {  // fcopysign
        VReg sign = mov_imm(size == 4 ? int64_t{0x80000000} : INT64_MIN);
        VReg mag = alu(AluOp::Bic, 8, bits(d.args[0]), sign);
        VReg s = alu(AluOp::And, 8, bits(d.args[1]), sign);
        r = alu(AluOp::Orr, 8, mag, s);
        break;
    }
    }
    to_fpr(r, size, out);
}

void Lowerer::lower_float_unary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    FUnaryOp op;
    switch (d.opcode) {
    case Opcode::Sqrt: op = FUnaryOp::Sqrt; break;
    case Opcode::Fneg: op = FUnaryOp::Neg; break;
    case Opcode::Fabs: op = FUnaryOp::Abs; break;
    case Opcode::Ceil: op = FUnaryOp::Ceil; break;
    case Opcode::Floor: op = FUnaryOp::Floor; break;
    case Opcode::Trunc: op = FUnaryOp::Trunc; break;
    case Opcode::Nearest: op = FUnaryOp::Nearest; break;
    case Opcode::Fpromote: op = FUnaryOp::Promote; break;
    default: op = FUnaryOp::Demote; break;
    }
    MInst& m = emit(Op::FUnary, {Operand::use(use(d.args[0])), Operand::def(result(inst))});
    m.sub = static_cast<uint8_t>(op);
    m.size = static_cast<uint8_t>(t.bytes());
}

void Lowerer::lower_float_binary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bytes();
    VReg out = result(inst);
    if (d.opcode == Opcode::Fma) {
        MInst& m = emit(Op::Fma, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1])),
                                  Operand::use(use(d.args[2])), Operand::def(out)});
        m.size = static_cast<uint8_t>(size);
        return;
    }
    FAluOp op;
    switch (d.opcode) {
    case Opcode::Fadd: op = FAluOp::Add; break;
    case Opcode::Fsub: op = FAluOp::Sub; break;
    case Opcode::Fmul: op = FAluOp::Mul; break;
    case Opcode::Fdiv: op = FAluOp::Div; break;
    case Opcode::Fmin: op = FAluOp::Min; break;
    default: op = FAluOp::Max; break;
    }
    MInst& m = emit(Op::FAlu, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1])), Operand::def(out)});
    m.sub = static_cast<uint8_t>(op);
    m.size = static_cast<uint8_t>(size);
}

void Lowerer::lower_conversion(Inst inst, const InstructionData& d) {
    Type in = type_of(d.args[0]), outt = d.type;
    VReg out = result(inst);
    if (d.opcode == Opcode::FcvtFromSint || d.opcode == Opcode::FcvtFromUint) {
        bool is_signed = d.opcode == Opcode::FcvtFromSint;
        VReg x = extended(d.args[0], is_signed);
        MInst& m = emit(Op::CvtIntToFloat, {Operand::use(x), Operand::def(out)});
        m.size = static_cast<uint8_t>(outt.bytes());
        m.size2 = static_cast<uint8_t>(reg_size(in));
        if (is_signed) m.flags |= mflags::kSigned;
        return;
    }
    bool is_signed = d.opcode == Opcode::FcvtToSint || d.opcode == Opcode::FcvtToSintSat;
    bool sat = d.opcode == Opcode::FcvtToSintSat || d.opcode == Opcode::FcvtToUintSat;
    MInst& m = emit(Op::CvtFloatToInt, {Operand::use(use(d.args[0])), Operand::def(out)});
    m.size = static_cast<uint8_t>(in.bytes());
    m.size2 = static_cast<uint8_t>(outt.bytes());
    if (is_signed) m.flags |= mflags::kSigned;
    if (sat) m.flags |= mflags::kSaturate;
}

void Lowerer::lower_load(Inst inst, const InstructionData& d) {
    int64_t off = d.offset;
    VReg base = address(d.args[0], off);
    emit_load_inst(Op::Load, inst, d, base, off, kMemBits);
}

void Lowerer::lower_store(Inst, const InstructionData& d) {
    int64_t off = d.offset;
    VReg base = address(d.args[1], off);
    emit_store_inst(Op::Store, d, base, off, kMemBits);
}

bool Lowerer::lower_test_branch(Value c, uint32_t then_block, uint32_t else_block) {
    if (auto ic = def_with(c, Opcode::Icmp)) {
        const InstructionData& d = dfg_[*ic];
        Type t = type_of(d.args[0]);
        auto k = const_of(d.args[1]);
        bool eq = d.intcc() == IntCC::Eq;
        if (!(eq || d.intcc() == IntCC::Ne) || !k || *k != 0 || t.bits() < 32) return false;
        MInst& m = emit(Op::Cbz, {Operand::use(use(d.args[0]))});
        m.size = static_cast<uint8_t>(t.bytes());
        m.imm = !eq;  // ne: the "then" target when nonzero
        m.aux = then_block;
        m.aux2 = else_block;
        return true;
    }
    constexpr uint32_t kMaxTbzFunction = 256;  // IR instructions: far below 32 KiB of code
    auto band = def_with(c, Opcode::Band);
    if (!band || dfg_.num_insts() > kMaxTbzFunction || !single_use(c)) return false;
    const InstructionData& d = dfg_[*band];
    Type t = type_of(d.args[0]);
    if (t.is_float()) return false;
    for (int j = 0; j < 2; ++j) {
        auto k = const_of(d.args[j]);
        if (!k) continue;
        uint64_t bits = static_cast<uint64_t>(*k) & t.mask();
        if (bits == 0 || (bits & (bits - 1)) != 0) continue;
        MInst& m = emit(Op::Tbz, {Operand::use(use(d.args[1 - j]))});
        m.imm = std::countr_zero(bits);
        m.aux = then_block;
        m.aux2 = else_block;
        return true;
    }
    return false;
}

void Lowerer::lower_branch(Inst inst, const InstructionData& d) {
    std::span<const uint32_t> targets = order_.targets_of(*f_.layout.inst_block(inst));
    for (const BlockCall& bc : dfg_.branch_destinations(inst)) {
        for (Value a : bc.args(dfg_.value_lists)) use(a);
    }
    switch (d.opcode) {
    case Opcode::Jump: emit(Op::Jmp, {}).aux = targets[0]; return;
    case Opcode::Brif: {
        Value c = d.args[0];
        if (lower_test_branch(c, targets[0], targets[1])) return;
        bool folds = def_with(c, Opcode::Icmp) || def_with(c, Opcode::Fcmp);
        if (!folds && type_of(c).bits() >= 32) {
            MInst& m = emit(Op::Cbz, {Operand::use(use(c))});
            m.size = static_cast<uint8_t>(type_of(c).bytes());
            m.imm = 1;  // cbnz to the "then" target
            m.aux = targets[0];
            m.aux2 = targets[1];
            return;
        }
        Cond cc = lower_condition(c);
        MInst& m = emit(Op::Bcond, {});
        m.cc = cc;
        m.aux = targets[0];
        m.aux2 = targets[1];
        return;
    }
    default: {
        // The i32 index zero-extended; the emitter clamps it to the default.
        VReg idx = ext(use(d.args[0]), 4, false);
        uint32_t table = static_cast<uint32_t>(out_.jump_tables.size());
        out_.jump_tables.push_back(std::vector<uint32_t>(targets.begin(), targets.end()));
        emit(Op::BrTable, {Operand::use(idx)}).aux = table;
        return;
    }
    }
}

}  // namespace

const AbiFacts& abi_facts() { return kAbi; }

const ra::MachineEnv& machine_env() {
    static const ra::MachineEnv env = [] {
        ra::MachineEnv e;
        // Caller-saved first; x18 (platform), x29/x30 and the scratch
        // registers x16/x17 never.
        for (uint8_t r = 0; r < 16; ++r) e.allocatable[0].push_back(gpr(r));
        for (uint8_t r = X19; r <= X28; ++r) e.allocatable[0].push_back(gpr(r));
        for (uint8_t r = 0; r < 8; ++r) e.allocatable[1].push_back(fpr(r));
        for (uint8_t r = 16; r < 31; ++r) e.allocatable[1].push_back(fpr(r));
        for (uint8_t r = 8; r < 16; ++r) e.allocatable[1].push_back(fpr(r));
        e.scratch[0] = gpr(X16);
        e.scratch[1] = fpr(V31);
        return e;
    }();
    return env;
}

std::string lower_function(const Function& func, VCode& out, LowerContext& ctx) {
    Lowerer l(func, out, ctx);
    return l.run();
}

std::string lower_function(const Function& func, VCode& out) {
    LowerContext ctx;
    return lower_function(func, out, ctx);
}

}  // namespace heron::aarch64
