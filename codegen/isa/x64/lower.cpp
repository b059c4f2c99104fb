// IR -> x86-64 VCode. See lower.h for the shape of the result.
//
// Block order: codegen/machinst/block_order.h (reverse postorder, critical
// edges split). Narrow integers
// follow ir-reference.md 1.3: results may carry garbage above their width,
// and every op whose result depends on those bits extends its inputs first.
#include "codegen/isa/x64/lower.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "codegen/ir/printer.h"

namespace heron::x64 {

using ra::Operand;
using ra::RegClass;
using ra::VReg;
using namespace regs;

namespace {

/// System V: six integer and eight float argument registers. Heron returns
/// two results of each class in registers and the rest through a return
/// area whose address is a hidden first argument in rdi.
constexpr ra::PReg kIntArgRegs[] = {gpr(RDI), gpr(RSI), gpr(RDX), gpr(RCX), gpr(R8), gpr(R9)};
constexpr ra::PReg kFloatArgRegs[] = {xmm(0), xmm(1), xmm(2), xmm(3), xmm(4), xmm(5), xmm(6), xmm(7)};
constexpr ra::PReg kIntRetRegs[] = {gpr(RAX), gpr(RDX)};
constexpr ra::PReg kFloatRetRegs[] = {xmm(0), xmm(1)};
constexpr AbiFacts kAbi{
    .int_args = kIntArgRegs,
    .float_args = kFloatArgRegs,
    .int_rets = kIntRetRegs,
    .float_rets = kFloatRetRegs,
    .ret_area_reg = gpr(RDI),
    // `ret imm16` pops at most 65535 bytes; the area stays 16-byte aligned.
    .max_popped_bytes = 65520,
    .incoming_args_offset = 16,  // above the saved rbp and the return address
    .outgoing_align = 8,
};
constexpr AbiInsts<Op> kAbiInsts{Op::Args, Op::Load, Op::Store, Op::LeaBase, Op::Call, Op::CallInd,
                                 Op::TailCall, Op::TailCallInd, Op::Ret, mflags::kFloat};

ra::PRegSet caller_saved() {
    ra::PRegSet s;
    for (uint8_t r : {RAX, RCX, RDX, RSI, RDI, R8, R9, R10, R11}) s.add(gpr(r));
    for (uint8_t r = 0; r < 16; ++r) s.add(xmm(r));
    return s;
}

Cond cond_of(IntCC cc) {
    switch (cc) {
    case IntCC::Eq: return Cond::E;
    case IntCC::Ne: return Cond::NE;
    case IntCC::Slt: return Cond::L;
    case IntCC::Sge: return Cond::GE;
    case IntCC::Sgt: return Cond::G;
    case IntCC::Sle: return Cond::LE;
    case IntCC::Ult: return Cond::B;
    case IntCC::Uge: return Cond::AE;
    case IntCC::Ugt: return Cond::A;
    case IntCC::Ule: return Cond::BE;
    }
    return Cond::E;
}

/// ucomis sets ZF=PF=CF=1 when unordered. Returns the condition to test
/// after comparing (x, y), or (y, x) when `swap` is set.
Cond float_cond(FloatCC cc, bool& swap) {
    swap = false;
    switch (cc) {
    case FloatCC::Gt: return Cond::A;
    case FloatCC::Ge: return Cond::AE;
    case FloatCC::Lt: swap = true; return Cond::A;
    case FloatCC::Le: swap = true; return Cond::AE;
    case FloatCC::Ueq: return Cond::E;
    case FloatCC::One: return Cond::NE;
    case FloatCC::Uno: return Cond::P;
    case FloatCC::Ord: return Cond::NP;
    case FloatCC::Ult: return Cond::B;
    case FloatCC::Ule: return Cond::BE;
    case FloatCC::Ugt: swap = true; return Cond::B;
    case FloatCC::Uge: swap = true; return Cond::BE;
    case FloatCC::Eq: return Cond::FEq;
    case FloatCC::Ne: return Cond::FNe;
    }
    return Cond::E;
}

bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

constexpr MemFlagBits kMemBits{mflags::kSigned, mflags::kFloat, mflags::kBig, mflags::kTrapSite};

class Lowerer : public LowerBase<VCode> {
public:
    Lowerer(const Function& f, const Settings& s, VCode& out, LowerContext& ctx)
        : LowerBase(f, out, ctx), settings_(s), folded_(ctx.inst_marks) {}

    std::string run();

private:
    /// Puts the instructions in program order and builds the allocator's
    /// instruction arrays (operand offsets, flags, clobbers).
    void finish_insts();

    // Small builders returning the defined vreg.
    VReg mov_imm(int64_t v, VReg dst) {
        emit(Op::MovImm, {Operand::def(dst)}).imm = v;
        return dst;
    }
    VReg mov_imm(int64_t v) { return mov_imm(v, temp(RegClass::Int)); }
    VReg ext(VReg src, unsigned from_bytes, unsigned to_bytes, bool is_signed) {
        return ext(src, from_bytes, to_bytes, is_signed, temp(RegClass::Int));
    }
    VReg ext(VReg src, unsigned from_bytes, unsigned to_bytes, bool is_signed, VReg d) {
        MInst& m = emit(Op::Ext, {Operand::use(src), Operand::def(d)});
        m.size = static_cast<uint8_t>(from_bytes);
        m.size2 = static_cast<uint8_t>(to_bytes);
        if (is_signed) m.flags |= mflags::kSigned;
        return d;
    }
    /// `v` extended to 32 bits (narrow) or itself (i32/i64).
    VReg extended(Value v, bool is_signed) {
        Type t = type_of(v);
        if (t.bits() >= 32) return use(v);
        return ext(use(v), t.bytes(), 4, is_signed);
    }
    VReg alu(AluOp op, unsigned size, VReg a, VReg b, VReg d) {
        MInst& m = emit(Op::Alu, {Operand::use(a), Operand::use(b), Operand::def_reuse(d, 0)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    VReg alu_imm(AluOp op, unsigned size, VReg a, int64_t imm, VReg d) {
        MInst& m = emit(Op::AluImm, {Operand::use(a), Operand::def_reuse(d, 0)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        m.imm = imm;
        return d;
    }
    VReg shift_imm(ShiftOp op, unsigned size, VReg a, unsigned k, VReg d) {
        MInst& m = emit(Op::ShiftImm, {Operand::use(a), Operand::def_reuse(d, 0)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        m.imm = k;
        return d;
    }
    VReg unary(UnaryOp op, unsigned size, VReg a, VReg d) {
        MInst& m = emit(Op::Unary, {Operand::use(a), Operand::def_reuse(d, 0)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return d;
    }
    void cmp(unsigned size, VReg a, VReg b) { emit(Op::Cmp, {Operand::use(a), Operand::use(b)}).size = static_cast<uint8_t>(size); }
    void cmp_imm(unsigned size, VReg a, int64_t imm) {
        MInst& m = emit(Op::CmpImm, {Operand::use(a)});
        m.size = static_cast<uint8_t>(size);
        m.imm = imm;
    }
    void test(unsigned size, VReg a) { emit(Op::Test, {Operand::use(a), Operand::use(a)}).size = static_cast<uint8_t>(size); }
    VReg setcc(Cond cc, VReg d) {
        emit(Op::Setcc, {Operand::def(d)}).cc = cc;
        return d;
    }
    VReg cmov(Cond cc, unsigned size, VReg if_true, VReg if_false, VReg d) {
        MInst& m = emit(Op::Cmov, {Operand::use(if_true), Operand::use(if_false), Operand::def_reuse(d, 1)});
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
    VReg falu(FAluOp op, unsigned size, VReg a, VReg b, VReg d) {
        MInst& m = emit(Op::FAlu, {Operand::use(a), Operand::use(b), Operand::def_reuse(d, 0)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return d;
    }

    /// Compares `c` with zero (at its width); the condition "c != 0" is NE.
    /// Folds an icmp/fcmp defining `c`: returns the condition to test and
    /// whether it is a float condition (JccFloat / TrapIfFloat).
    Cond lower_condition(Value c, bool& is_float);
    /// Whether branch `br`'s condition `c` is an i32/i64 iadd/isub placed
    /// right before it and lowered anyway (another use needs the value):
    /// its add/sub is then the last instruction before the jcc, and its ZF
    /// says c == 0, so no test is needed (a counted loop's `sub; jne`).
    bool zero_flag_set_by(Inst br, Value c) const;
    /// Whether the instruction after `inst` is a branch that takes its
    /// condition from the flags `inst` sets (zero_flag_set_by).
    bool flags_read_after(Inst inst) const {
        PackedOption<Inst> next = f_.layout.next_inst(inst);
        if (!next || dfg_[*next].opcode != Opcode::Brif) return false;
        return zero_flag_set_by(*next, dfg_[*next].args[0]);
    }
    /// Whether the i32 `v` is made by an instruction that always writes a
    /// 32-bit register (which clears bits 32-63): band/bor/bxor and the
    /// little-endian 32-bit and zero-extending loads. Not iadd/isub (a lea
    /// may compute them at 64 bits).
    bool upper_half_clear(Value v) const {
        const ValueDef def = dfg_.value_def(resolved(v));
        if (!def.is_result()) return false;
        const InstructionData& d = dfg_[def.inst()];
        switch (d.opcode) {
        case Opcode::Band: case Opcode::Bor: case Opcode::Bxor: return true;
        case Opcode::Load: case Opcode::Uload8: case Opcode::Uload16: return !d.flags.has(MemFlags::Big);
        default: return false;
        }
    }
    /// Whether one of the (at most kMaxFoldDistance) instructions after
    /// `inst` in its block reads `v`.
    bool read_later_in_block(Inst inst, Value v) const { return next_reader_in_block(inst, v).has_value(); }
    /// The first instruction after `inst` in its block (within
    /// kMaxFoldDistance) that reads `v`.
    std::optional<Inst> next_reader_in_block(Inst inst, Value v) const;
    /// Whether the first instruction after `inst` in its block (within
    /// kMaxFoldDistance) that reads `v` is a call or a return: `v` goes to
    /// a fixed argument/result register there.
    bool next_read_is_call_or_return(Inst inst, Value v) const;
    /// Whether `y` is the result of the call nearest before `inst` in its
    /// block (within kMaxFoldDistance) that defines `y` or `x`: `y` is
    /// then still in the call's result register at `inst`.
    bool is_later_call_result(Inst inst, Value x, Value y) const;
    /// Emits the compare of an icmp's operands; returns the x86 condition.
    Cond emit_icmp(const InstructionData& d);
    Cond emit_fcmp(const InstructionData& d);

    // --- per-family lowering --------------------------------------------------
    /// Lowers `inst`; false (with error_ set) when this backend cannot.
    /// The common forms are dispatched here, the rest by lower_other.
    bool lower_inst(Inst inst);
    [[gnu::noinline]] std::string lower_other(Inst inst, const InstructionData& d);
    void lower_int_binary(Inst inst, const InstructionData& d);
    void lower_div(Inst inst, const InstructionData& d);
    void lower_mulhi(Inst inst, const InstructionData& d);
    void lower_minmax(Inst inst, const InstructionData& d);
    void lower_overflow(Inst inst, const InstructionData& d);
    void lower_carry(Inst inst, const InstructionData& d);
    void lower_shift(Inst inst, const InstructionData& d);
    void lower_bitcount(Inst inst, const InstructionData& d);
    void lower_bitrev(Inst inst, const InstructionData& d);
    void lower_select(Inst inst, const InstructionData& d);
    void lower_float_unary(Inst inst, const InstructionData& d);
    void lower_float_binary(Inst inst, const InstructionData& d);
    void lower_conversion(Inst inst, const InstructionData& d);
    void lower_load(Inst inst, const InstructionData& d);
    void lower_store(Inst inst, const InstructionData& d);
    void lower_branch(Inst inst, const InstructionData& d);

    /// Calls a C library function taking float arguments in xmm0.. and
    /// returning one float in xmm0.
    void libcall(const std::string& name, std::initializer_list<VReg> args, VReg result) {
        std::vector<Operand>& ops = operand_list();
        uint8_t k = 0;
        for (VReg a : args) ops.push_back(Operand::use_fixed(a, xmm(k++)));
        ops.push_back(Operand::def_fixed(result, xmm(0)));
        emit_v(Op::Call, ops).aux = symbol_index(ExternalName::testcase(name));
    }

    /// An x86 address: base + (index << scale) + disp; without an index
    /// when `index` is not valid.
    struct Amode {
        VReg base, index;
        uint8_t scale = 0;
        int64_t disp = 0;
    };
    /// The address `p + disp` (docs/backend-x64.md, "Addressing"): an
    /// `iadd x, const` goes into the displacement, an `iadd a, b` becomes
    /// base a and index b, and an index `ishl i, 0..3` becomes i scaled.
    Amode amode(Value p, int64_t disp);
    /// Pushes the memory form `op`: the operands `pre`, the address's base
    /// and index, then `post` (the order insts.def gives, with mflags::kIndex
    /// when there is an index), and the displacement in `imm`.
    MInst& emit_mem(Op op, std::initializer_list<Operand> pre, const Amode& am, std::initializer_list<Operand> post) {
        std::array<Operand, 6> ops;
        uint32_t n = 0;
        for (const Operand& o : pre) ops[n++] = o;
        ops[n++] = Operand::use(am.base);
        if (am.index.is_valid()) ops[n++] = Operand::use(am.index);
        for (const Operand& o : post) ops[n++] = o;
        MInst& m = push(op, ops.data(), n);
        m.imm = am.disp;
        if (am.index.is_valid()) {
            m.flags |= mflags::kIndex;
            m.scale = am.scale;
        }
        return m;
    }

    // --- load folding ---------------------------------------------------------
    /// A load that an ALU instruction reads as its memory operand.
    struct FoldedLoad {
        Amode addr;
        std::optional<TrapCode> trap;
        Inst load;
    };
    /// If `v` is the result of a plain `load` of `bytes` bytes (int or
    /// float as `is_float` says) that only the current instruction reads,
    /// in its block, with nothing between them that stores, calls or may
    /// trap: claims the load (it is not emitted on its own) and returns its
    /// address. Lowering runs backwards, so "no later use" is exactly
    /// `needed_[v] == 0` here plus no use between the two.
    [[gnu::always_inline]] std::optional<FoldedLoad> fold_load(Value v, unsigned bytes, bool is_float) {
        v = resolved(v);
        const ValueDef d = dfg_.value_def(v);
        if (!d.is_result() || dfg_[d.inst()].opcode != Opcode::Load) return std::nullopt;
        return fold_load_of(v, d.inst(), bytes, is_float);
    }
    /// fold_load for `v`, the result of `load`.
    std::optional<FoldedLoad> fold_load_of(Value v, Inst load, unsigned bytes, bool is_float);
    /// Sets the memory operand fields of `m` from a folded load.
    void set_mem(MInst& m, const FoldedLoad& fl) {
        m.aux2 = fl.load.index();
        if (fl.trap) {
            m.flags |= mflags::kTrapSite;
            m.trap = fl.trap->byte;
        }
    }

    const Settings& settings_;
    std::vector<uint8_t>& folded_;  // by instruction: loads lowered as a memory operand of their user
};

// ---------------------------------------------------------------------------

Lowerer::Amode Lowerer::amode(Value p, int64_t disp) {
    Amode am;
    // p = iadd x, iconst  ->  [x + const], then x itself once more
    // (iadd (iadd a, b), 8 is [a + b + 8]).
    for (int depth = 0; depth < 2; ++depth) {
        auto add = def_with(p, Opcode::Iadd);
        if (!add) break;
        const InstructionData& a = dfg_[*add];
        if (auto k = const_of(a.args[1]); k && fits_i32(*k + disp)) {
            disp += *k;
            p = a.args[0];
        } else if (auto k0 = const_of(a.args[0]); k0 && fits_i32(*k0 + disp)) {
            disp += *k0;
            p = a.args[1];
        } else {
            break;
        }
    }
    am.disp = disp;
    // p = iadd a, b  ->  [a + b], with b = ishl i, k (k mod 64 in 0..3)
    // as [a + i * 2^k]. A constant operand that did not fit the
    // displacement stays a register.
    if (auto add = def_with(p, Opcode::Iadd)) {
        const InstructionData& a = dfg_[*add];
        Value base = a.args[0], index = a.args[1];
        // The shift's log2 scale (0..3) and its input, or -1.
        auto scaled = [&](Value v, Value& shifted) -> int {
            auto sh = def_with(v, Opcode::Ishl);
            if (!sh) return -1;
            const InstructionData& s = dfg_[*sh];
            auto k = const_of(s.args[1]);
            if (!k || (*k & 63) > 3) return -1;
            shifted = s.args[0];
            return static_cast<int>(*k & 63);
        };
        Value shifted;
        int scale = scaled(index, shifted);
        if (scale < 0 && (scale = scaled(base, shifted)) >= 0) base = index;
        if (scale >= 0) {
            am.scale = static_cast<uint8_t>(scale);
            index = shifted;
        }
        am.base = use(base);
        am.index = use(index);
        return am;
    }
    am.base = use(p);
    return am;
}

namespace {
/// Whether moving a load across `d` could change what the program does:
/// `d` writes memory, calls, or may trap (a trap would then come first).
bool blocks_load_motion(const InstructionData& d) {
    if (can_store(d.opcode) || is_call(d.opcode)) return true;
    if (!can_trap(d.opcode)) return false;
    if (can_load(d.opcode)) return d.flags.trap_code().has_value();
    return true;
}
constexpr unsigned kMaxFoldDistance = 16;  // instructions scanned between a load and its user
}  // namespace

std::optional<Lowerer::FoldedLoad> Lowerer::fold_load_of(Value v, Inst load, unsigned bytes, bool is_float) {
    if (is_needed(v) || cur_inst_ == kNone) return std::nullopt;
    const InstructionData& ld = dfg_[load];
    if (ld.type.bytes() != bytes || ld.type.is_float() != is_float || ld.flags.has(MemFlags::Big)) return std::nullopt;
    // The memory is read where the current instruction is emitted (an
    // icmp fused into a brif reads it at the brif): from the load up to
    // here, exactly one operand reads v (the one being fused) and nothing
    // blocks the motion.
    Inst here(cur_inst_);
    if (here == load || f_.layout.inst_block(load) != f_.layout.inst_block(here)) return std::nullopt;
    unsigned reads = 0, steps = 1;
    auto count_reads = [&](Value a) { reads += resolved(a) == v; };
    dfg_.for_each_inst_value(here, count_reads);
    bool reached = false;
    for (Inst i : f_.layout.insts_before(here)) {
        if (i == load) {
            reached = true;
            break;
        }
        if (++steps > kMaxFoldDistance || blocks_load_motion(dfg_[i])) return std::nullopt;
        dfg_.for_each_inst_value(i, count_reads);
    }
    if (!reached || reads != 1) return std::nullopt;
    FoldedLoad fl;
    fl.addr = amode(ld.args[0], ld.offset);
    fl.trap = ld.flags.trap_code();
    fl.load = load;
    folded_[load.index()] = 1;
    return fl;
}

std::optional<Inst> Lowerer::next_reader_in_block(Inst inst, Value v) const {
    v = resolved(v);
    unsigned steps = 0;
    for (Inst i : f_.layout.insts_after(inst)) {
        if (++steps > kMaxFoldDistance) break;
        bool reads = false;
        dfg_.for_each_inst_value(i, [&](Value a) { reads = reads || resolved(a) == v; });
        if (reads) return i;
    }
    return std::nullopt;
}

bool Lowerer::next_read_is_call_or_return(Inst inst, Value v) const {
    const std::optional<Inst> i = next_reader_in_block(inst, v);
    if (!i) return false;
    switch (dfg_[*i].opcode) {
    case Opcode::Call: case Opcode::CallIndirect: case Opcode::ReturnCall: case Opcode::ReturnCallIndirect:
    case Opcode::Return: return true;
    default: return false;
    }
}

bool Lowerer::is_later_call_result(Inst inst, Value x, Value y) const {
    // A call names an external function or a signature (the function
    // verifies): without either there is none to look for.
    if (dfg_.ext_funcs.empty() && dfg_.signatures.empty()) return false;
    x = resolved(x);
    y = resolved(y);
    unsigned steps = 0;
    for (Inst i : f_.layout.insts_before(inst)) {
        if (++steps > kMaxFoldDistance) break;
        const Opcode op = dfg_[i].opcode;
        if (op != Opcode::Call && op != Opcode::CallIndirect) continue;
        for (Value r : dfg_.inst_results(i)) {
            if (r == y) return true;
            if (r == x) return false;
        }
    }
    return false;
}

Cond Lowerer::emit_icmp(const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bytes();
    IntCC cc = d.intcc();
    auto k = const_of(d.args[1]);
    if (k && (size < 8 || fits_i32(*k))) {
        cmp_imm(size, use(d.args[0]), *k);
        return cond_of(cc);
    }
    if (t.bits() >= 32) {
        if (auto fl = fold_load(d.args[1], size, false)) {
            VReg a = use(d.args[0]);
            MInst& m = emit_mem(Op::CmpMem, {Operand::use(a)}, fl->addr, {});
            m.size = static_cast<uint8_t>(size);
            set_mem(m, *fl);
            return cond_of(cc);
        }
    }
    cmp(size, use(d.args[0]), use(d.args[1]));
    return cond_of(cc);
}

Cond Lowerer::emit_fcmp(const InstructionData& d) {
    bool swap = false;
    Cond c = float_cond(d.floatcc(), swap);
    Value a = d.args[0], b = d.args[1];
    if (swap) std::swap(a, b);
    emit(Op::FCmp, {Operand::use(use(a)), Operand::use(use(b))}).size =
        static_cast<uint8_t>(type_of(a).bytes());
    return c;
}

Cond Lowerer::lower_condition(Value c, bool& is_float) {
    is_float = false;
    if (auto ic = def_with(c, Opcode::Icmp)) return emit_icmp(dfg_[*ic]);
    if (auto fc = def_with(c, Opcode::Fcmp)) {
        is_float = true;
        return emit_fcmp(dfg_[*fc]);
    }
    // band x, k as a condition: `test x, k` (x kept, the and not made
    // when nothing else reads it). k is cut to the type's width, so the
    // garbage above a narrow x is not tested; the encoding is the
    // narrowest that holds k.
    if (auto band = def_with(c, Opcode::Band)) {
        const InstructionData& a = dfg_[*band];
        const std::optional<int64_t> k1 = const_of(a.args[1]), k0 = const_of(a.args[0]);
        const unsigned bits = type_of(c).bits();
        if ((k1 || k0) && bits <= 64) {
            const int64_t k = k1 ? *k1 : *k0;
            const Value x = k1 ? a.args[0] : a.args[1];
            const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
            const uint64_t u = static_cast<uint64_t>(k) & mask;
            const unsigned size = u <= 0xff ? 1 : u <= 0x7fffffff ? 4 : bits == 64 && fits_i32(k) ? 8 : 0;
            if (size != 0) {
                MInst& m = emit(Op::TestImm, {Operand::use(use(x))});
                m.size = static_cast<uint8_t>(size);
                m.imm = size == 8 ? k : static_cast<int64_t>(u);
                return Cond::NE;
            }
        }
    }
    // A load read only here: `cmp [m], 0` (sieve's flag byte).
    if (type_of(c).is_int()) {
        if (auto fl = fold_load(c, type_of(c).bytes(), false)) {
            MInst& m = emit_mem(Op::CmpMemZero, {}, fl->addr, {});
            m.size = static_cast<uint8_t>(type_of(c).bytes());
            set_mem(m, *fl);
            return Cond::NE;
        }
    }
    test(type_of(c).bytes(), use(c));
    return Cond::NE;
}

bool Lowerer::zero_flag_set_by(Inst br, Value c) const {
    c = dfg_.resolve_aliases(c);
    const ValueDef def = dfg_.value_def(c);
    if (!def.is_result() || !is_needed(c) || f_.layout.prev_inst(br) != def.inst()) return false;
    const Opcode op = dfg_[def.inst()].opcode;
    const Type t = type_of(c);
    return (op == Opcode::Iadd || op == Opcode::Isub) && t.is_int() && t.bits() >= 32;
}

// ---------------------------------------------------------------------------

std::string Lowerer::run() {
    begin_function();
    if (std::string err = begin_abi(kAbi, kAbiInsts); !err.empty()) return err;
    folded_.assign(dfg_.num_insts(), 0);
    std::string err = lower_blocks(
        Op::Jmp, [&](Inst i) { return lower_inst(i); },
        // A folded load is still emitted when something else ended up
        // reading its register after all.
        [&](Inst i) { return folded_[i.index()] && !is_needed(dfg_.inst_results(i)[0]); });
    if (!err.empty()) return err;
    finish_insts();
    finish_blocks();
    return {};
}

/// The allocator's instruction flags that depend only on the form.
constexpr std::array<uint8_t, 256> kOpFlags = [] {
    using namespace ra::inst_flags;
    std::array<uint8_t, 256> t{};
    for (Op op : {Op::Ret, Op::Trap, Op::TailCall, Op::TailCallInd}) t[static_cast<size_t>(op)] = kTerminator | kReturn;
    for (Op op : {Op::Jmp, Op::Jcc, Op::JccFloat, Op::BrTable}) t[static_cast<size_t>(op)] = kTerminator;
    for (Op op : {Op::MovRR, Op::FMov}) t[static_cast<size_t>(op)] = kMove;
    return t;
}();

void Lowerer::finish_insts() {
    auto classify = [](const MInst& m) {
        uint8_t fl = kOpFlags[static_cast<size_t>(m.op)];
        // A constant that fits a sign-extended imm32 is made again rather
        // than spilled (also straight into a spill slot: mov qword [m], imm32).
        if (m.op == Op::MovImm && fits_i32(m.imm)) fl |= ra::inst_flags::kRemat;
        return fl;
    };
    auto calls = [](const MInst& m) { return m.op == Op::Call || m.op == Op::CallInd; };
    LowerBase::finish_insts(classify, calls, caller_saved());
}

bool Lowerer::lower_inst(Inst inst) {
    const InstructionData& d = dfg_[inst];
    switch (d.opcode) {
    case Opcode::Iconst: mov_imm(sext(d.imm, d.type.bits()), result_vreg(inst)); return true;
    case Opcode::Iadd: case Opcode::Isub: case Opcode::Imul:
    case Opcode::Band: case Opcode::Bor: case Opcode::Bxor:
        if (type_of(d.args[0]).is_float()) break;
        lower_int_binary(inst, d);
        return true;
    case Opcode::Ishl: case Opcode::Ushr: case Opcode::Sshr: case Opcode::Rotl: case Opcode::Rotr:
        lower_shift(inst, d);
        return true;
    case Opcode::Fadd: case Opcode::Fsub: case Opcode::Fmul: case Opcode::Fdiv:
        lower_float_binary(inst, d);
        return true;
    case Opcode::Load: case Opcode::Uload8: case Opcode::Sload8: case Opcode::Uload16:
    case Opcode::Sload16: case Opcode::Uload32: case Opcode::Sload32:
        lower_load(inst, d);
        return true;
    case Opcode::Store: case Opcode::Istore8: case Opcode::Istore16: case Opcode::Istore32:
        lower_store(inst, d);
        return true;
    case Opcode::Jump: case Opcode::Brif: case Opcode::BrTable:
        lower_branch(inst, d);
        return true;
    default: break;
    }
    error_ = lower_other(inst, d);
    return error_.empty();
}

std::string Lowerer::lower_other(Inst inst, const InstructionData& d) {
    switch (d.opcode) {
    case Opcode::Nop: return {};
    case Opcode::Iconst: {
        Type t = d.type;
        mov_imm(sext(d.imm, t.bits()), result_vreg(inst));
        return {};
    }
    case Opcode::F32const:
        fconst_bits(d.imm, 4, result_vreg(inst));
        return {};
    case Opcode::F64const:
        fconst_bits(d.imm, 8, result_vreg(inst));
        return {};
    case Opcode::Iadd: case Opcode::Isub: case Opcode::Imul:
    case Opcode::Band: case Opcode::Bor: case Opcode::Bxor:
        if (type_of(d.args[0]).is_float()) {
            lower_float_binary(inst, d);
            return {};
        }
        lower_int_binary(inst, d);
        return {};
    case Opcode::Ineg: {
        Type t = type_of(d.args[0]);
        unary(UnaryOp::Neg, t.bits() == 64 ? 8 : 4, use(d.args[0]), result_vreg(inst));
        return {};
    }
    case Opcode::Bnot: {
        Type t = type_of(d.args[0]);
        VReg out = result_vreg(inst);
        if (t.is_float()) {
            VReg ones = fconst_bits(t.mask(), t.bytes(), temp(RegClass::Float));
            falu(FAluOp::Xor, t.bytes(), use(d.args[0]), ones, out);
            return {};
        }
        unary(UnaryOp::Not, t.bits() == 64 ? 8 : 4, use(d.args[0]), out);
        return {};
    }
    case Opcode::Iabs: {
        Type t = type_of(d.args[0]);
        unsigned size = t.bits() == 64 ? 8 : 4;
        VReg x = extended(d.args[0], true);
        VReg n = unary(UnaryOp::Neg, size, x, temp(RegClass::Int));
        // neg sets SF from -x: negative means x was positive (or MIN).
        cmov(Cond::S, size, x, n, result_vreg(inst));
        return {};
    }
    case Opcode::Umulhi: case Opcode::Smulhi: lower_mulhi(inst, d); return {};
    case Opcode::Udiv: case Opcode::Sdiv: case Opcode::Urem: case Opcode::Srem: lower_div(inst, d); return {};
    case Opcode::Smin: case Opcode::Smax: case Opcode::Umin: case Opcode::Umax: lower_minmax(inst, d); return {};
    case Opcode::UaddOverflow: case Opcode::SaddOverflow: case Opcode::UsubOverflow:
    case Opcode::SsubOverflow: case Opcode::UmulOverflow: case Opcode::SmulOverflow:
        lower_overflow(inst, d);
        return {};
    case Opcode::UaddOverflowCin: case Opcode::SaddOverflowCin:
    case Opcode::UsubOverflowBin: case Opcode::SsubOverflowBin:
        lower_carry(inst, d);
        return {};
    case Opcode::UaddOverflowTrap: {
        Type t = type_of(d.args[0]);
        alu(AluOp::Add, t.bytes(), use(d.args[0]), use(d.args[1]), result_vreg(inst));
        MInst& m = emit(Op::TrapIf, {});
        m.cc = Cond::B;
        m.trap = d.code;
        return {};
    }
    case Opcode::Bitselect: {
        Type t = type_of(d.args[1]);
        VReg c = use(d.args[0]), x = use(d.args[1]), y = use(d.args[2]);
        VReg out = result_vreg(inst);
        if (t.is_float()) {
            VReg a = falu(FAluOp::Xor, t.bytes(), x, y, temp(RegClass::Float));
            VReg b = falu(FAluOp::And, t.bytes(), a, c, temp(RegClass::Float));
            falu(FAluOp::Xor, t.bytes(), b, y, out);
            return {};
        }
        VReg a = alu(AluOp::Xor, 8, x, y, temp(RegClass::Int));
        VReg b = alu(AluOp::And, 8, a, c, temp(RegClass::Int));
        alu(AluOp::Xor, 8, b, y, out);
        return {};
    }
    case Opcode::Ishl: case Opcode::Ushr: case Opcode::Sshr: case Opcode::Rotl: case Opcode::Rotr:
        lower_shift(inst, d);
        return {};
    case Opcode::Clz: case Opcode::Cls: case Opcode::Ctz: case Opcode::Popcnt:
        lower_bitcount(inst, d);
        return {};
    case Opcode::Bitrev: lower_bitrev(inst, d); return {};
    case Opcode::Bswap: {
        Type t = type_of(d.args[0]);
        VReg out = result_vreg(inst);
        if (t.bits() == 16) {
            shift_imm(ShiftOp::Rol, 2, use(d.args[0]), 8, out);
        } else {
            unary(UnaryOp::Bswap, t.bytes(), use(d.args[0]), out);
        }
        return {};
    }
    case Opcode::Icmp: {
        Cond c = emit_icmp(d);
        setcc(c, result_vreg(inst));
        return {};
    }
    case Opcode::Fcmp: {
        Cond c = emit_fcmp(d);
        VReg out = result_vreg(inst);
        if (c == Cond::FEq || c == Cond::FNe) {
            bool eq = c == Cond::FEq;
            VReg a = setcc(eq ? Cond::E : Cond::NE, temp(RegClass::Int));
            VReg b = setcc(eq ? Cond::NP : Cond::P, temp(RegClass::Int));
            alu(eq ? AluOp::And : AluOp::Or, 4, a, b, out);
            return {};
        }
        setcc(c, out);
        return {};
    }
    case Opcode::Select: case Opcode::SelectSpectreGuard: lower_select(inst, d); return {};
    case Opcode::Bmask: {
        Type in = type_of(d.args[0]);
        test(in.bytes(), use(d.args[0]));
        VReg s = setcc(Cond::NE, temp(RegClass::Int));
        VReg z = ext(s, 1, 4, false);
        unary(UnaryOp::Neg, 8, z, result_vreg(inst));
        return {};
    }
    case Opcode::Uextend: case Opcode::Sextend: {
        Type in = type_of(d.args[0]);
        VReg out = result_vreg(inst);
        if (d.opcode == Opcode::Uextend && in.bits() == 32 && upper_half_clear(d.args[0])) {
            emit(Op::MovRR, {Operand::use(use(d.args[0])), Operand::def(out)}).size = 8;
            return {};
        }
        MInst& m = emit(Op::Ext, {Operand::use(use(d.args[0])), Operand::def(out)});
        m.size = static_cast<uint8_t>(in.bytes());
        m.size2 = static_cast<uint8_t>(d.type.bits() == 64 ? 8 : 4);
        if (d.opcode == Opcode::Sextend) m.flags |= mflags::kSigned;
        return {};
    }
    case Opcode::Ireduce:
        emit(Op::MovRR, {Operand::use(use(d.args[0])), Operand::def(result_vreg(inst))}).size = 8;
        return {};
    case Opcode::Bitcast: {
        Type in = type_of(d.args[0]), outt = d.type;
        VReg src = use(d.args[0]), out = result_vreg(inst);
        Op op = in.is_float() == outt.is_float() ? (in.is_float() ? Op::FMov : Op::MovRR)
                                                  : (in.is_float() ? Op::XmmToGpr : Op::GprToXmm);
        emit(op, {Operand::use(src), Operand::def(out)}).size = static_cast<uint8_t>(in.bytes());
        return {};
    }
    case Opcode::Fpromote: case Opcode::Fdemote:
    case Opcode::Sqrt: case Opcode::Fneg: case Opcode::Fabs:
    case Opcode::Ceil: case Opcode::Floor: case Opcode::Trunc: case Opcode::Nearest:
        lower_float_unary(inst, d);
        return {};
    case Opcode::Fadd: case Opcode::Fsub: case Opcode::Fmul: case Opcode::Fdiv:
    case Opcode::Fmin: case Opcode::Fmax: case Opcode::Fcopysign: case Opcode::Fma:
        lower_float_binary(inst, d);
        return {};
    case Opcode::FcvtToUint: case Opcode::FcvtToSint: case Opcode::FcvtToUintSat: case Opcode::FcvtToSintSat:
    case Opcode::FcvtFromUint: case Opcode::FcvtFromSint:
        lower_conversion(inst, d);
        return {};
    case Opcode::Load: case Opcode::Uload8: case Opcode::Sload8: case Opcode::Uload16:
    case Opcode::Sload16: case Opcode::Uload32: case Opcode::Sload32:
        lower_load(inst, d);
        return {};
    case Opcode::Store: case Opcode::Istore8: case Opcode::Istore16: case Opcode::Istore32:
        lower_store(inst, d);
        return {};
    case Opcode::StackAddr: {
        MInst& m = emit(Op::StackAddr, {Operand::def(result_vreg(inst))});
        m.aux = d.entity;
        m.imm = d.offset;
        return {};
    }
    case Opcode::FuncAddr: {
        MInst& m = emit(Op::FuncAddr, {Operand::def(result_vreg(inst))});
        m.aux = symbol_index(dfg_.ext_funcs[d.func_ref()].name);
        return {};
    }
    case Opcode::Jump: case Opcode::Brif: case Opcode::BrTable:
        lower_branch(inst, d);
        return {};
    case Opcode::Return:
        lower_abi_return(inst, [&](VReg v, Type t, bool is_signed) { return ext(v, t.bytes(), 8, is_signed); });
        return {};
    case Opcode::Trap: emit(Op::Trap, {}).trap = d.code; return {};
    case Opcode::Trapz: case Opcode::Trapnz: {
        bool is_float = false;
        Cond c = lower_condition(d.args[0], is_float);
        if (d.opcode == Opcode::Trapz) c = invert(c);
        MInst& m = emit(is_float ? Op::TrapIfFloat : Op::TrapIf, {});
        m.cc = c;
        m.trap = d.code;
        return {};
    }
    case Opcode::Call: case Opcode::CallIndirect:
    case Opcode::ReturnCall: case Opcode::ReturnCallIndirect:
        return lower_abi_call(inst, d);
    }
    return "cannot lower " + std::string(opcode_name(d.opcode));
}

void Lowerer::lower_int_binary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bits() == 64 ? 8 : 4;
    AluOp op;
    switch (d.opcode) {
    case Opcode::Iadd: op = AluOp::Add; break;
    case Opcode::Isub: op = AluOp::Sub; break;
    case Opcode::Imul: op = AluOp::Imul; break;
    case Opcode::Band: op = AluOp::And; break;
    case Opcode::Bor: op = AluOp::Or; break;
    default: op = AluOp::Xor; break;
    }
    VReg out = result_vreg(inst);
    Value x = d.args[0], y = d.args[1];
    auto k = const_of(y);
    if (!k && op != AluOp::Sub) {
        // Commutative: a constant on the left folds too.
        if (auto k0 = const_of(x)) {
            k = k0;
            std::swap(x, y);
        }
    }
    // x & 0xff / 0xffff / 0xffffffff is a zero-extending move (into any
    // register, x kept).
    if (k && op == AluOp::And && (*k == 0xff || *k == 0xffff || (size == 8 && *k == 0xffffffff))) {
        ext(use(x), *k == 0xff ? 1 : *k == 0xffff ? 2 : 4, 8, false, out);
        return;
    }
    if (k && (size == 4 || fits_i32(*k))) {
        const int64_t imm = size == 4 ? static_cast<int32_t>(*k) : *k;
        // y * 3|5|9 (+ k): one `lea d, [y + y*2|4|8 + k]`, the multiply not
        // made when nothing else reads it (lea sets no flags: not for a
        // branch on the add's zero flag). For i32 the 64-bit lea leaves
        // garbage above bit 31, which ir-reference.md 1.3 allows.
        if ((op == AluOp::Imul || op == AluOp::Add) && !flags_read_after(inst)) {
            Value y = x;
            int64_t scale = op == AluOp::Imul ? imm : 0, disp = op == AluOp::Add ? imm : 0;
            if (op == AluOp::Add) {
                if (auto mul = def_with(x, Opcode::Imul)) {
                    const InstructionData& md = dfg_[*mul];
                    const std::optional<int64_t> m1 = const_of(md.args[1]), m0 = const_of(md.args[0]);
                    if (m1 || m0) {
                        scale = m1 ? *m1 : *m0;
                        y = m1 ? md.args[0] : md.args[1];
                    }
                }
            }
            if (scale == 3 || scale == 5 || scale == 9) {
                VReg r = use(y);
                MInst& m = emit(Op::Lea, {Operand::use(r), Operand::use(r), Operand::def(out)});
                m.scale = static_cast<uint8_t>(scale == 3 ? 1 : scale == 5 ? 2 : 3);
                m.imm = disp;
                return;
            }
        }
        // x + k into another register while x lives on, or into the fixed
        // register of a call argument or a return value: one lea instead of
        // a copy and the add (lea sets no flags: not for a branch that
        // reads the add's zero flag).
        if ((op == AluOp::Add || (op == AluOp::Sub && imm != INT32_MIN)) &&
            (is_needed(resolved(x)) || next_read_is_call_or_return(inst, dfg_.inst_results(inst)[0])) &&
            !flags_read_after(inst)) {
            MInst& m = emit(Op::LeaBase, {Operand::use(use(x)), Operand::def(out)});
            m.imm = op == AluOp::Add ? imm : -imm;
            return;
        }
        alu_imm(op, size, use(x), imm, out);
        return;
    }
    if (t.bits() >= 32) {
        // A load as the second operand (either one when commutative).
        auto fl = fold_load(y, size, false);
        if (!fl && op != AluOp::Sub && (fl = fold_load(x, size, false))) std::swap(x, y);
        if (fl) {
            MInst& m = emit_mem(Op::AluMem, {Operand::use(use(x))}, fl->addr, {Operand::def_reuse(out, 0)});
            m.sub = static_cast<uint8_t>(op);
            m.size = static_cast<uint8_t>(size);
            set_mem(m, *fl);
            return;
        }
    }
    // Two-address: the result takes the first operand's register. When the
    // first is read again in this block and the second is read nowhere
    // else, the second goes first (no copy of the first). When neither is
    // read again, a call's result (in rax, where a returned sum goes) is
    // the one overwritten: fib's `add rax, r12` rather than `add r12, rax;
    // mov rax, r12`.
    if (op != AluOp::Sub && !is_needed(resolved(y)) &&
        (is_needed(resolved(x)) ? read_later_in_block(inst, x) : is_later_call_result(inst, x, y))) {
        std::swap(x, y);
    }
    alu(op, size, use(x), use(y), out);
}

void Lowerer::lower_div(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Sdiv || d.opcode == Opcode::Srem;
    bool rem = d.opcode == Opcode::Urem || d.opcode == Opcode::Srem;
    unsigned size = t.bits() == 64 ? 8 : 4;
    VReg x = extended(d.args[0], is_signed);
    VReg y = extended(d.args[1], is_signed);
    VReg q = rem ? temp(RegClass::Int) : result_vreg(inst);
    VReg r = rem ? result_vreg(inst) : temp(RegClass::Int);
    Operand rdx_def{r, ra::OperandKind::Def, ra::OperandPos::Early, ra::Constraint::Fixed, RDX};
    MInst& m = emit(Op::Div, {Operand::use_fixed(x, gpr(RAX)), Operand::use(y), Operand::def_fixed(q, gpr(RAX)),
                              rdx_def, Operand::def_early(temp(RegClass::Int))});
    m.size = static_cast<uint8_t>(size);
    m.size2 = static_cast<uint8_t>(t.bytes());
    if (is_signed) m.flags |= mflags::kSigned;
    if (rem) m.flags |= mflags::kRem;
}

void Lowerer::lower_mulhi(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Smulhi;
    VReg out = result_vreg(inst);
    if (t.bits() < 32) {
        VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
        VReg p = alu(AluOp::Imul, 4, x, y, temp(RegClass::Int));
        shift_imm(is_signed ? ShiftOp::Sar : ShiftOp::Shr, 4, p, t.bits(), out);
        return;
    }
    MInst& m = emit(Op::MulWide, {Operand::use_fixed(use(d.args[0]), gpr(RAX)), Operand::use(use(d.args[1])),
                                  Operand::def_fixed(temp(RegClass::Int), gpr(RAX)), Operand::def_fixed(out, gpr(RDX))});
    m.size = static_cast<uint8_t>(t.bytes());
    if (is_signed) m.flags |= mflags::kSigned;
}

void Lowerer::lower_minmax(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    bool is_signed = d.opcode == Opcode::Smin || d.opcode == Opcode::Smax;
    bool is_min = d.opcode == Opcode::Smin || d.opcode == Opcode::Umin;
    unsigned size = t.bits() == 64 ? 8 : 4;
    VReg x = extended(d.args[0], is_signed), y = extended(d.args[1], is_signed);
    cmp(size, x, y);
    Cond c = is_signed ? (is_min ? Cond::L : Cond::G) : (is_min ? Cond::B : Cond::A);
    cmov(c, size, x, y, result_vreg(inst));
}

void Lowerer::lower_overflow(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bytes();
    auto res = dfg_.inst_results(inst);
    VReg a = def(res[0]), flag = def(res[1]);
    Cond c;
    switch (d.opcode) {
    case Opcode::UaddOverflow: alu(AluOp::Add, size, use(d.args[0]), use(d.args[1]), a); c = Cond::B; break;
    case Opcode::SaddOverflow: alu(AluOp::Add, size, use(d.args[0]), use(d.args[1]), a); c = Cond::O; break;
    case Opcode::UsubOverflow: alu(AluOp::Sub, size, use(d.args[0]), use(d.args[1]), a); c = Cond::B; break;
    case Opcode::SsubOverflow: alu(AluOp::Sub, size, use(d.args[0]), use(d.args[1]), a); c = Cond::O; break;
    default: {
        // One-operand mul/imul at the exact width: CF=OF=1 iff the product
        // does not fit.
        MInst& m = emit(Op::MulWide, {Operand::use_fixed(use(d.args[0]), gpr(RAX)), Operand::use(use(d.args[1])),
                                      Operand::def_fixed(a, gpr(RAX)),
                                      Operand::def_fixed(temp(RegClass::Int), gpr(RDX))});
        m.size = static_cast<uint8_t>(size);
        if (d.opcode == Opcode::SmulOverflow) m.flags |= mflags::kSigned;
        c = Cond::O;
        break;
    }
    }
    setcc(c, flag);
}

void Lowerer::lower_carry(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bytes();
    auto res = dfg_.inst_results(inst);
    VReg a = def(res[0]), flag = def(res[1]);
    // neg sets CF iff the carry-in byte is nonzero; adc/sbb then compute the
    // exact three-input result and flags at the operand width.
    VReg c = unary(UnaryOp::Neg, 1, use(d.args[2]), temp(RegClass::Int));
    bool add = d.opcode == Opcode::UaddOverflowCin || d.opcode == Opcode::SaddOverflowCin;
    alu(add ? AluOp::Adc : AluOp::Sbb, size, use(d.args[0]), use(d.args[1]), a);
    (void)c;
    bool is_signed = d.opcode == Opcode::SaddOverflowCin || d.opcode == Opcode::SsubOverflowBin;
    setcc(is_signed ? Cond::O : Cond::B, flag);
}

void Lowerer::lower_shift(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    VReg out = result_vreg(inst);
    ShiftOp op;
    switch (d.opcode) {
    case Opcode::Ishl: op = ShiftOp::Shl; break;
    case Opcode::Ushr: op = ShiftOp::Shr; break;
    case Opcode::Sshr: op = ShiftOp::Sar; break;
    case Opcode::Rotl: op = ShiftOp::Rol; break;
    default: op = ShiftOp::Ror; break;
    }
    bool rotate = op == ShiftOp::Rol || op == ShiftOp::Ror;
    // Narrow right shifts act on an extended copy; narrow rotates use the
    // native 8/16-bit forms; narrow left shifts may leave garbage above.
    unsigned size = bits == 64 ? 8 : (rotate ? t.bytes() : 4);
    VReg x = op == ShiftOp::Shr ? extended(d.args[0], false) : op == ShiftOp::Sar ? extended(d.args[0], true) : use(d.args[0]);
    if (auto k = const_of(d.args[1])) {
        unsigned amount = static_cast<unsigned>(static_cast<uint64_t>(*k) & (bits - 1));
        if (amount == 0) {
            emit(Op::MovRR, {Operand::use(use(d.args[0])), Operand::def(out)}).size = 8;
            return;
        }
        shift_imm(op, size, x, amount, out);
        return;
    }
    VReg count = use(d.args[1]);
    if (bits < 32 && !rotate) count = alu_imm(AluOp::And, 4, count, bits - 1, temp(RegClass::Int));
    MInst& m = emit(Op::Shift, {Operand::use(x), Operand::use_fixed(count, gpr(RCX)), Operand::def_reuse(out, 0)});
    m.sub = static_cast<uint8_t>(op);
    m.size = static_cast<uint8_t>(size);
}

void Lowerer::lower_bitcount(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned bits = t.bits();
    unsigned size = bits == 64 ? 8 : 4;
    VReg out = result_vreg(inst);
    auto count = [&](CountOp op, VReg src, VReg dst) {
        MInst& m = emit(Op::BitCount, {Operand::use(src), Operand::def(dst), Operand::def_early(temp(RegClass::Int))});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(size);
        return dst;
    };
    switch (d.opcode) {
    case Opcode::Popcnt:
        count(CountOp::Popcnt, extended(d.args[0], false), out);
        return;
    case Opcode::Ctz: {
        VReg x = use(d.args[0]);
        // Setting bit B makes ctz of a narrow zero come out as B.
        if (bits < 32) x = alu_imm(AluOp::Or, 4, x, int64_t{1} << bits, temp(RegClass::Int));
        count(CountOp::Ctz, x, out);
        return;
    }
    case Opcode::Clz: {
        if (bits >= 32) {
            count(CountOp::Clz, use(d.args[0]), out);
            return;
        }
        VReg c = count(CountOp::Clz, extended(d.args[0], false), temp(RegClass::Int));
        alu_imm(AluOp::Sub, 4, c, 32 - bits, out);
        return;
    }
    default: {
        // cls(x) = clz(x ^ (x >> (n-1)) arithmetic) - 1, at n = 32 or 64,
        // minus (n - B) for narrow types.
        VReg x = extended(d.args[0], true);
        unsigned n = size * 8;
        VReg s = shift_imm(ShiftOp::Sar, size, x, n - 1, temp(RegClass::Int));
        VReg v = alu(AluOp::Xor, size, x, s, temp(RegClass::Int));
        VReg c = count(CountOp::Clz, v, temp(RegClass::Int));
        alu_imm(AluOp::Sub, 4, c, 1 + (n - bits), out);
        return;
    }
    }
}

void Lowerer::lower_bitrev(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    VReg out = result_vreg(inst);
    VReg x = use(d.args[0]);
    // Swap adjacent bits, pairs, nibbles at 64 bits, then bytes; then shift
    // the reversed B bits down.
    struct Step {
        unsigned shift;
        uint64_t mask;
    };
    static constexpr Step kSteps[] = {
        {1, 0x5555555555555555ull}, {2, 0x3333333333333333ull}, {4, 0x0f0f0f0f0f0f0f0full}};
    for (const Step& s : kSteps) {
        VReg m = mov_imm(static_cast<int64_t>(s.mask));
        VReg lo = alu(AluOp::And, 8, x, m, temp(RegClass::Int));
        VReg lo_s = shift_imm(ShiftOp::Shl, 8, lo, s.shift, temp(RegClass::Int));
        VReg hi = shift_imm(ShiftOp::Shr, 8, x, s.shift, temp(RegClass::Int));
        VReg hi_m = alu(AluOp::And, 8, hi, m, temp(RegClass::Int));
        x = alu(AluOp::Or, 8, lo_s, hi_m, temp(RegClass::Int));
    }
    VReg sw = unary(UnaryOp::Bswap, 8, x, temp(RegClass::Int));
    if (t.bits() == 64) {
        emit(Op::MovRR, {Operand::use(sw), Operand::def(out)}).size = 8;
        return;
    }
    shift_imm(ShiftOp::Shr, 8, sw, 64 - t.bits(), out);
}

void Lowerer::lower_select(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[1]);
    VReg out = result_vreg(inst);
    bool is_float_cond = false;
    Cond c = d.opcode == Opcode::Select ? lower_condition(d.args[0], is_float_cond) : Cond::NE;
    if (d.opcode == Opcode::SelectSpectreGuard) test(type_of(d.args[0]).bytes(), use(d.args[0]));
    unsigned size = t.bits() == 64 ? 8 : 4;
    if (!t.is_float() && !is_float_cond) {
        cmov(c, size, use(d.args[1]), use(d.args[2]), out);
        return;
    }
    if (is_float_cond) {
        // Materialize the float condition as 0/1, then select on it.
        VReg flag;
        if (c == Cond::FEq || c == Cond::FNe) {
            bool eq = c == Cond::FEq;
            VReg a = setcc(eq ? Cond::E : Cond::NE, temp(RegClass::Int));
            VReg b = setcc(eq ? Cond::NP : Cond::P, temp(RegClass::Int));
            flag = alu(eq ? AluOp::And : AluOp::Or, 4, a, b, temp(RegClass::Int));
        } else {
            flag = setcc(c, temp(RegClass::Int));
        }
        test(1, flag);
        c = Cond::NE;
    }
    if (!t.is_float()) {
        cmov(c, size, use(d.args[1]), use(d.args[2]), out);
        return;
    }
    // Floats: select the bits in general registers (no branch).
    VReg xi = temp(RegClass::Int), yi = temp(RegClass::Int);
    emit(Op::XmmToGpr, {Operand::use(use(d.args[1])), Operand::def(xi)}).size = static_cast<uint8_t>(t.bytes());
    emit(Op::XmmToGpr, {Operand::use(use(d.args[2])), Operand::def(yi)}).size = static_cast<uint8_t>(t.bytes());
    VReg r = cmov(c, 8, xi, yi, temp(RegClass::Int));
    emit(Op::GprToXmm, {Operand::use(r), Operand::def(out)}).size = static_cast<uint8_t>(t.bytes());
}

void Lowerer::lower_float_unary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.args[0]);
    unsigned size = t.bytes();
    VReg out = result_vreg(inst);
    uint64_t sign = size == 4 ? 0x80000000ull : 0x8000000000000000ull;
    auto funary = [&](FUnaryOp op, unsigned sz) {
        MInst& m = emit(Op::FUnary, {Operand::use(use(d.args[0])), Operand::def(out)});
        m.sub = static_cast<uint8_t>(op);
        m.size = static_cast<uint8_t>(sz);
    };
    bool rounding = d.opcode == Opcode::Ceil || d.opcode == Opcode::Floor || d.opcode == Opcode::Trunc ||
                    d.opcode == Opcode::Nearest;
    if (rounding && !settings_.has_sse41) {
        // No roundss/roundsd: call the C library (nearbyint rounds ties to
        // even under the default rounding mode that JIT code assumes).
        const char* names[] = {"ceil", "floor", "trunc", "nearbyint"};
        int k = d.opcode == Opcode::Ceil ? 0 : d.opcode == Opcode::Floor ? 1 : d.opcode == Opcode::Trunc ? 2 : 3;
        libcall(std::string(names[k]) + (size == 4 ? "f" : ""), {use(d.args[0])}, out);
        return;
    }
    switch (d.opcode) {
    case Opcode::Fneg: falu(FAluOp::Xor, size, use(d.args[0]), fconst_bits(sign, size, temp(RegClass::Float)), out); return;
    case Opcode::Fabs: falu(FAluOp::And, size, use(d.args[0]), fconst_bits(~sign & t.mask(), size, temp(RegClass::Float)), out); return;
    case Opcode::Sqrt: funary(FUnaryOp::Sqrt, size); return;
    case Opcode::Ceil: funary(FUnaryOp::Ceil, size); return;
    case Opcode::Floor: funary(FUnaryOp::Floor, size); return;
    case Opcode::Trunc: funary(FUnaryOp::Trunc, size); return;
    case Opcode::Nearest: funary(FUnaryOp::Nearest, size); return;
    case Opcode::Fpromote: funary(FUnaryOp::Promote, 4); return;
    default: funary(FUnaryOp::Demote, 8); return;
    }
}

void Lowerer::lower_float_binary(Inst inst, const InstructionData& d) {
    Type t = type_of(d.opcode == Opcode::Fma ? d.args[1] : d.args[0]);
    unsigned size = t.bytes();
    VReg out = result_vreg(inst);
    if (d.opcode == Opcode::Fadd || d.opcode == Opcode::Fsub || d.opcode == Opcode::Fmul || d.opcode == Opcode::Fdiv) {
        FAluOp op = d.opcode == Opcode::Fadd ? FAluOp::Add
                    : d.opcode == Opcode::Fsub ? FAluOp::Sub
                    : d.opcode == Opcode::Fmul ? FAluOp::Mul
                                               : FAluOp::Div;
        Value x = d.args[0], y = d.args[1];
        bool commutative = op == FAluOp::Add || op == FAluOp::Mul;
        // A load as the second operand (either one when commutative).
        auto fl = fold_load(y, size, true);
        if (!fl && commutative && (fl = fold_load(x, size, true))) std::swap(x, y);
        if (fl) {
            MInst& m = emit_mem(Op::FAluMem, {Operand::use(use(x))}, fl->addr, {Operand::def_reuse(out, 0)});
            m.sub = static_cast<uint8_t>(op);
            m.size = static_cast<uint8_t>(size);
            set_mem(m, *fl);
            return;
        }
        if (settings_.has_avx) {
            // Three operands: x stays where it is when it is read again.
            MInst& m = emit(Op::VFAlu, {Operand::use(use(x)), Operand::use(use(y)), Operand::def(out)});
            m.sub = static_cast<uint8_t>(op);
            m.size = static_cast<uint8_t>(size);
            return;
        }
        falu(op, size, use(x), use(y), out);
        return;
    }
    switch (d.opcode) {
    case Opcode::Band: falu(FAluOp::And, size, use(d.args[0]), use(d.args[1]), out); return;
    case Opcode::Bor: falu(FAluOp::Or, size, use(d.args[0]), use(d.args[1]), out); return;
    case Opcode::Bxor: falu(FAluOp::Xor, size, use(d.args[0]), use(d.args[1]), out); return;
    case Opcode::Fcopysign: {
        uint64_t sign = size == 4 ? 0x80000000ull : 0x8000000000000000ull;
        // One temporary per statement: the vreg numbers must not depend on
        // the order the compiler evaluates call arguments in.
        VReg mag_mask = fconst_bits(~sign & t.mask(), size, temp(RegClass::Float));
        VReg mag = falu(FAluOp::And, size, use(d.args[0]), mag_mask, temp(RegClass::Float));
        VReg sgn_mask = fconst_bits(sign, size, temp(RegClass::Float));
        VReg sgn = falu(FAluOp::And, size, use(d.args[1]), sgn_mask, temp(RegClass::Float));
        falu(FAluOp::Or, size, mag, sgn, out);
        return;
    }
    case Opcode::Fmin: case Opcode::Fmax: {
        MInst& m = emit(Op::FMinMax, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1])), Operand::def_reuse(out, 0)});
        m.size = static_cast<uint8_t>(size);
        if (d.opcode == Opcode::Fmin) m.flags |= mflags::kMin;
        return;
    }
    default: {  // fma
        if (!settings_.has_fma) {
            // No FMA3: the C library's fma is correctly rounded (one rounding).
            libcall(size == 4 ? "fmaf" : "fma", {use(d.args[0]), use(d.args[1]), use(d.args[2])}, out);
            return;
        }
        MInst& m = emit(Op::Fma, {Operand::use(use(d.args[0])), Operand::use(use(d.args[1])), Operand::use(use(d.args[2])),
                                  Operand::def_reuse(out, 0)});
        m.size = static_cast<uint8_t>(size);
        return;
    }
    }
}

void Lowerer::lower_conversion(Inst inst, const InstructionData& d) {
    Type in = type_of(d.args[0]), outt = d.type;
    VReg out = result_vreg(inst);
    switch (d.opcode) {
    case Opcode::FcvtFromSint: case Opcode::FcvtFromUint: {
        bool is_signed = d.opcode == Opcode::FcvtFromSint;
        VReg x = use(d.args[0]);
        unsigned src = in.bytes();
        if (in.bits() < 32 || (!is_signed && in.bits() == 32)) {
            // Extend to 64 bits; the value then converts as signed.
            x = ext(x, src, 8, is_signed);
            src = 8;
            is_signed = true;
        }
        MInst& m = emit(Op::CvtIntToFloat, {Operand::use(x), Operand::def(out), Operand::def_early(temp(RegClass::Int))});
        m.size = static_cast<uint8_t>(outt.bytes());
        m.size2 = static_cast<uint8_t>(src);
        if (is_signed) m.flags |= mflags::kSigned;
        return;
    }
    default: {
        bool is_signed = d.opcode == Opcode::FcvtToSint || d.opcode == Opcode::FcvtToSintSat;
        bool sat = d.opcode == Opcode::FcvtToSintSat || d.opcode == Opcode::FcvtToUintSat;
        MInst& m = emit(Op::CvtFloatToInt, {Operand::use(use(d.args[0])), Operand::def(out),
                                            Operand::def_early(temp(RegClass::Int)),
                                            Operand::def_early(temp(RegClass::Float))});
        m.size = static_cast<uint8_t>(in.bytes());
        m.size2 = static_cast<uint8_t>(outt.bytes());
        if (is_signed) m.flags |= mflags::kSigned;
        if (sat) m.flags |= mflags::kSaturate;
        return;
    }
    }
}

// Like LowerBase's emit_load_inst / emit_store_inst, with an index.
void Lowerer::lower_load(Inst inst, const InstructionData& d) {
    const LoadAccess acc = load_access(d);
    const Amode am = amode(d.args[0], d.offset);
    MInst& m = emit_mem(Op::Load, {}, am, {Operand::def(result_vreg(inst))});
    m.size = static_cast<uint8_t>(acc.bytes);
    m.size2 = static_cast<uint8_t>(d.opcode == Opcode::Load ? 0 : d.type.bytes());
    if (acc.is_signed) m.flags |= mflags::kSigned;
    if (d.type.is_float()) m.flags |= mflags::kFloat;
    set_mem_flags(m, d.flags, kMemBits);
}

void Lowerer::lower_store(Inst, const InstructionData& d) {
    const Type t = type_of(d.args[0]);
    const VReg v = use(d.args[0]);
    const Amode am = amode(d.args[1], d.offset);
    MInst& m = emit_mem(Op::Store, {Operand::use(v)}, am, {});
    m.size = static_cast<uint8_t>(store_bytes(d.opcode, t));
    if (t.is_float()) m.flags |= mflags::kFloat;
    set_mem_flags(m, d.flags, kMemBits);
}

void Lowerer::lower_branch(Inst inst, const InstructionData& d) {
    std::span<const uint32_t> targets = order_.targets_of(*f_.layout.inst_block(inst));
    // Branch arguments are uses at the edge.
    for (const BlockCall& bc : dfg_.branch_destinations(inst)) {
        for (Value a : bc.args(dfg_.value_lists)) use(a);
    }
    switch (d.opcode) {
    case Opcode::Jump:
        emit(Op::Jmp, {}).aux = targets[0];
        return;
    case Opcode::Brif: {
        bool is_float = false;
        Cond c = zero_flag_set_by(inst, d.args[0]) ? Cond::NE : lower_condition(d.args[0], is_float);
        MInst& m = emit(is_float ? Op::JccFloat : Op::Jcc, {});
        m.cc = c;
        m.aux = targets[0];
        m.aux2 = targets[1];
        return;
    }
    default: {
        // Index is i32, zero-extended to 64 bits: the terminator compares
        // it with the table length (jumping to the default when it is not
        // below), then jumps through the table (emit.cpp). It needs no
        // register of its own: the address goes through the scratch r11.
        // A little-endian load.i32 wrote the index with `mov r32, [m]`,
        // which clears bits 32-63 already.
        VReg idx = use(d.args[0]);
        auto ld = def_with(d.args[0], Opcode::Load);
        if (!ld || dfg_[*ld].flags.has(MemFlags::Big)) idx = ext(idx, 4, 8, false);
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
        for (uint8_t r : {RAX, RCX, RDX, RSI, RDI, R8, R9, R10, RBX, R12, R13, R14, R15}) e.allocatable[0].push_back(gpr(r));
        for (uint8_t r = 0; r < 15; ++r) e.allocatable[1].push_back(xmm(r));
        e.scratch[0] = gpr(R11);
        e.scratch[1] = xmm(15);
        return e;
    }();
    return env;
}

std::string lower_function(const Function& func, const Settings& settings, VCode& out, LowerContext& ctx) {
    Lowerer l(func, settings, out, ctx);
    return l.run();
}

std::string lower_function(const Function& func, const Settings& settings, VCode& out) {
    LowerContext ctx;
    return lower_function(func, settings, out, ctx);
}

}  // namespace heron::x64
