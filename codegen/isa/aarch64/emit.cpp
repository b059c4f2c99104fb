// AArch64 emission. Frame, from high to low addresses:
//
//   [x29 + 16 ...]   incoming stack arguments
//   [x29 + 8]        saved x30 (return address)
//   [x29]            saved x29            <- x29 (the frame record)
//   ...              callee-saved x19..x28, then d8..d15, in 16-byte pairs
//                    (an odd x and an odd d share the last slot)
//   [sp + O + 8S..]  explicit stack slots, each aligned
//   [sp + O ..]      spill slots, 8 bytes each (S of them)
//   [sp ..]          outgoing stack arguments and return areas (O bytes)
//
// sp stays 16-byte aligned throughout. x16, x17 and v31 are never
// allocated: the allocator uses x16/v31 for its move cycles and the emitter
// uses all three inside one instruction's expansion.
#include "codegen/isa/aarch64/emit.h"

#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>

#include <algorithm>
#include <cstring>

#include "codegen/isa/common/asmjit_common.h"

namespace heron::aarch64 {

namespace a64 = asmjit::a64;
using asmjit::Imm;
using asmjit::Label;
using ra::Allocation;

/// A 16-byte slot of the callee-saved area: a pair (stp/ldp) of one
/// class, one register, or the odd x register with the odd d register.
struct SavedReg {
    uint8_t hw;
    bool fp;
};
struct SaveSlot {
    SavedReg first, second;
    bool pair;  // both registers saved (else only `first`)
};

struct EmitContext::State {
    asmjit::CodeHolder code;
    a64::Assembler assembler;  // attached to `code` per function
    std::vector<uint32_t> forward, slot_offset, next, identity;
    std::vector<uint8_t> saved_gprs, saved_fprs;
    std::vector<SaveSlot> save_slots;
};

EmitContext::EmitContext() : state_(std::make_unique<State>()) {}
EmitContext::~EmitContext() = default;

namespace {

constexpr uint8_t kIp0 = regs::X16, kIp1 = regs::X17;

a64::Gp gp(uint8_t hw, unsigned size) { return size == 8 ? a64::Gp(a64::x(hw)) : a64::Gp(a64::w(hw)); }
a64::Vec fp(uint8_t hw, unsigned size) { return size == 8 ? a64::Vec(a64::d(hw)) : a64::Vec(a64::s(hw)); }
asmjit::arm::CondCode cc_of(Cond c) { return static_cast<asmjit::arm::CondCode>(static_cast<uint8_t>(c) + 2); }
Imm cc_imm(Cond c) { return Imm(static_cast<uint32_t>(cc_of(c))); }

class Emitter : isa::EmitterBase {
public:
    Emitter(const Function& f, const VCode& vc, const ra::Output& al, CompiledCode& out, EmitContext::State& st)
        : EmitterBase(out, st.code), f_(f), vc_(vc), al_(al), st_(st), a_(st.assembler), forward_(st.forward),
          save_slots_(st.save_slots), slot_offset_(st.slot_offset) {
        save_slots_.clear();
    }

    std::string run();

private:
    const ra::Function& rf() const { return vc_.ra; }
    uint8_t reg(uint32_t inst, unsigned k) const { return al_.allocs[rf().operands_begin[inst] + k].as_reg().hw; }
    a64::Gp gpr(uint32_t inst, unsigned k, unsigned size) const { return gp(reg(inst, k), size); }
    a64::Vec fpr(uint32_t inst, unsigned k, unsigned size) const { return fp(reg(inst, k), size); }
    /// The base of a Load or Store: its register operand k, sp or x29 (MInst::base).
    a64::Gp base_of(uint32_t inst, const MInst& m, unsigned k) const {
        switch (m.base) {
        case MemBase::Reg: break;
        case MemBase::Sp: return a64::sp;
        case MemBase::Fp: return a64::x(regs::FP);
        }
        return gpr(inst, k, 8);
    }

    /// "" or the error for a frame over kMaxFrameSize.
    std::string layout_frame();
    void prologue();
    void pop_frame();
    void emit_edit(const ra::Edit& e);
    void emit_inst(uint32_t i, uint32_t next_block);
    /// movz/movn + movk: the shortest of the two for `v`.
    void mov_imm(a64::Gp d, uint64_t v);
    /// d = base + off (d may be x17; base may be sp).
    void add_imm(a64::Gp d, a64::Gp base, int64_t off);
    void sub_sp(uint64_t bytes);
    /// A memory operand for an access of `size` bytes at base + off: the
    /// scaled unsigned 12-bit form when it fits, else the address in x17.
    a64::Mem mem(a64::Gp base, int64_t off, unsigned size);
    a64::Mem spill_mem(uint32_t slot) { return mem(a64::sp, spill_base_ + 8 * int64_t{slot}, 8); }
    void load_int(a64::Gp d, const a64::Mem& m, unsigned size, bool is_signed);
    void store_int(a64::Gp v, const a64::Mem& m, unsigned size);
    void load_fconst(a64::Vec d, uint64_t bits, unsigned size);

    void emit_alu(uint32_t i, const MInst& m);
    void emit_alu_imm(uint32_t i, const MInst& m);
    void emit_alu_shift(uint32_t i, const MInst& m);
    void emit_alu_ext(uint32_t i, const MInst& m);
    void emit_bitfield(uint32_t i, const MInst& m);
    void emit_unary(uint32_t i, const MInst& m);
    void emit_div(uint32_t i, const MInst& m);
    void emit_cmp_ext(uint32_t i, const MInst& m);
    void emit_load(uint32_t i, const MInst& m);
    void emit_store(uint32_t i, const MInst& m);
    void emit_falu(uint32_t i, const MInst& m);
    void emit_funary(uint32_t i, const MInst& m);
    void emit_cvt_to_int(uint32_t i, const MInst& m);
    void emit_br_table(uint32_t i, const MInst& m);
    void emit_branch(uint32_t i, const MInst& m, uint32_t next_block);
    void emit_tail_call(uint32_t i, const MInst& m);
    /// Blocks that are one bare jump (an edge block needing no moves) are not
    /// emitted: branches to them go straight to their final target.
    void find_forwarded_blocks();
    uint32_t final_block(uint32_t b) const { return forward_[b]; }
    Label label_of(uint32_t b) const { return block_labels_[forward_[b]]; }

    const Function& f_;
    const VCode& vc_;
    const ra::Output& al_;

    EmitContext::State& st_;  // kept between functions; the tables below are its
    a64::Assembler& a_;
    std::vector<uint32_t>& forward_;
    void save_one(SavedReg r, const a64::Mem& m) {
        if (r.fp) a_.str(a64::d(r.hw), m);
        else a_.str(a64::x(r.hw), m);
    }
    void restore_one(SavedReg r, const a64::Mem& m) {
        if (r.fp) a_.ldr(a64::d(r.hw), m);
        else a_.ldr(a64::x(r.hw), m);
    }
    std::vector<SaveSlot>& save_slots_;  // in push order, below the frame record
    uint32_t frame_size_ = 0;  // bytes below the callee-saved registers
    uint32_t spill_base_ = 0;
    std::vector<uint32_t>& slot_offset_;
};

void Emitter::mov_imm(a64::Gp d, uint64_t v) {
    bool wide = d.isGpX();
    unsigned halves = wide ? 4 : 2;
    if (!wide) v &= 0xffffffffu;
    unsigned zeros = 0, ones = 0;
    for (unsigned k = 0; k < halves; ++k) {
        uint16_t h = static_cast<uint16_t>(v >> (16 * k));
        zeros += h == 0;
        ones += h == 0xffff;
    }
    bool inverted = ones > zeros;
    uint16_t fill = inverted ? 0xffff : 0;
    bool first = true;
    for (unsigned k = 0; k < halves; ++k) {
        uint16_t h = static_cast<uint16_t>(v >> (16 * k));
        if (h == fill) continue;
        if (first) {
            if (inverted) a_.movn(d, static_cast<uint16_t>(~h), Imm(16 * k));
            else a_.movz(d, h, Imm(16 * k));
            first = false;
        } else {
            a_.movk(d, h, Imm(16 * k));
        }
    }
    if (first) {
        // Every half is the fill: 0 or all ones.
        if (inverted) a_.movn(d, 0);
        else a_.movz(d, 0);
    }
}

void Emitter::add_imm(a64::Gp d, a64::Gp base, int64_t off) {
    if (off >= 0 && off < 4096) {
        a_.add(d, base, off);
        return;
    }
    if (off < 0 && off > -4096) {
        a_.sub(d, base, -off);
        return;
    }
    a64::Gp t = a64::x(kIp1);
    mov_imm(t, static_cast<uint64_t>(off));
    a_.add(d, base, t);
}

void Emitter::sub_sp(uint64_t bytes) {
    while (bytes > 0) {
        uint64_t step = std::min<uint64_t>(bytes, 4095);
        a_.sub(a64::sp, a64::sp, step);
        bytes -= step;
    }
}

a64::Mem Emitter::mem(a64::Gp base, int64_t off, unsigned size) {
    if (off >= 0 && off % size == 0 && off / size < 4096) return a64::ptr(base, static_cast<int32_t>(off));
    add_imm(a64::x(kIp1), base, off);
    return a64::ptr(a64::x(kIp1));
}

void Emitter::load_int(a64::Gp d, const a64::Mem& m, unsigned size, bool is_signed) {
    a64::Gp x = d.isGpX() ? d : a64::Gp(a64::x(d.id()));
    a64::Gp w = a64::w(d.id());
    switch (size) {
    case 1: is_signed ? a_.ldrsb(x, m) : a_.ldrb(w, m); return;
    case 2: is_signed ? a_.ldrsh(x, m) : a_.ldrh(w, m); return;
    case 4: is_signed ? a_.ldrsw(x, m) : a_.ldr(w, m); return;
    default: a_.ldr(x, m); return;
    }
}

void Emitter::store_int(a64::Gp v, const a64::Mem& m, unsigned size) {
    switch (size) {
    case 1: a_.strb(a64::w(v.id()), m); return;
    case 2: a_.strh(a64::w(v.id()), m); return;
    case 4: a_.str(a64::w(v.id()), m); return;
    default: a_.str(a64::x(v.id()), m); return;
    }
}

void Emitter::load_fconst(a64::Vec d, uint64_t bits, unsigned size) {
    if (bits == 0) {
        a_.fmov(d, size == 8 ? a64::Gp(a64::xzr) : a64::Gp(a64::wzr));
        return;
    }
    mov_imm(gp(kIp0, size), bits);
    a_.fmov(d, gp(kIp0, size));
}

std::string Emitter::layout_frame() {
    bool used[2][32] = {};
    auto mark = [&](Allocation a) {
        if (a.is_reg()) used[static_cast<unsigned>(a.as_reg().cls)][a.as_reg().hw] = true;
    };
    for (const Allocation& a : al_.allocs) mark(a);
    for (const ra::Edit& e : al_.edits) mark(e.to);
    std::vector<uint8_t>& saved_gprs = st_.saved_gprs;
    std::vector<uint8_t>& saved_fprs = st_.saved_fprs;
    saved_gprs.clear();
    saved_fprs.clear();
    for (uint8_t r = regs::X19; r <= regs::X28; ++r) {
        if (used[0][r]) saved_gprs.push_back(r);
    }
    for (uint8_t r = 8; r < 16; ++r) {
        if (used[1][r]) saved_fprs.push_back(r);
    }
    // Pairs of each class; an odd x and an odd d share the last slot.
    for (size_t k = 0; k + 1 < saved_gprs.size(); k += 2)
        save_slots_.push_back({{saved_gprs[k], false}, {saved_gprs[k + 1], false}, true});
    for (size_t k = 0; k + 1 < saved_fprs.size(); k += 2)
        save_slots_.push_back({{saved_fprs[k], true}, {saved_fprs[k + 1], true}, true});
    bool odd_gpr = saved_gprs.size() % 2 == 1, odd_fpr = saved_fprs.size() % 2 == 1;
    SavedReg last_gpr{odd_gpr ? saved_gprs.back() : uint8_t{0}, false};
    SavedReg last_fpr{odd_fpr ? saved_fprs.back() : uint8_t{0}, true};
    if (odd_gpr && odd_fpr) save_slots_.push_back({last_gpr, last_fpr, true});
    else if (odd_gpr) save_slots_.push_back({last_gpr, {}, false});
    else if (odd_fpr) save_slots_.push_back({last_fpr, {}, false});
    const uint32_t saved = 16 * static_cast<uint32_t>(save_slots_.size());
    const FrameLayout fl = frame_layout(f_, vc_.outgoing_args_size, al_.num_spill_slots, saved, slot_offset_);
    if (std::string err = frame_size_error(fl.size + 16 + saved); !err.empty()) return err;
    spill_base_ = fl.spill_base;
    frame_size_ = static_cast<uint32_t>(fl.size);
    out_.frame_size = frame_size_ + 16 + saved;  // and the frame record
    out_.spill_slots = al_.num_spill_slots;
    return {};
}

void Emitter::prologue() {
    a_.stp(a64::x(regs::FP), a64::x(regs::LR), a64::ptr_pre(a64::sp, -16));
    a_.mov(a64::x(regs::FP), a64::sp);
    for (const SaveSlot& s : save_slots_) {
        if (s.pair && s.first.fp == s.second.fp) {
            if (s.first.fp) a_.stp(a64::d(s.first.hw), a64::d(s.second.hw), a64::ptr_pre(a64::sp, -16));
            else a_.stp(a64::x(s.first.hw), a64::x(s.second.hw), a64::ptr_pre(a64::sp, -16));
            continue;
        }
        save_one(s.first, a64::ptr_pre(a64::sp, -16));
        if (s.pair) save_one(s.second, a64::ptr(a64::sp, 8));
    }
    if (frame_size_ < 4096) {
        sub_sp(frame_size_);
        return;
    }
    // Touch every page on the way down so that an overflow hits the guard
    // page in order (the trap handler reports it as a stack overflow).
    Label loop = a_.newLabel();
    mov_imm(a64::x(kIp0), frame_size_ / 4096);
    a_.bind(loop);
    sub_sp(4096);
    a_.str(a64::xzr, a64::ptr(a64::sp));
    a_.subs(a64::x(kIp0), a64::x(kIp0), 1);
    a_.b(asmjit::arm::CondCode::kNE, loop);
    sub_sp(frame_size_ % 4096);
}

void Emitter::pop_frame() {
    if (frame_size_ > 0) add_imm(a64::sp, a64::sp, frame_size_);
    for (auto it = save_slots_.rbegin(); it != save_slots_.rend(); ++it) {
        const SaveSlot& s = *it;
        if (s.pair && s.first.fp == s.second.fp) {
            if (s.first.fp) a_.ldp(a64::d(s.first.hw), a64::d(s.second.hw), a64::ptr_post(a64::sp, 16));
            else a_.ldp(a64::x(s.first.hw), a64::x(s.second.hw), a64::ptr_post(a64::sp, 16));
            continue;
        }
        if (s.pair) restore_one(s.second, a64::ptr(a64::sp, 8));
        restore_one(s.first, a64::ptr_post(a64::sp, 16));
    }
    a_.ldp(a64::x(regs::FP), a64::x(regs::LR), a64::ptr_post(a64::sp, 16));
}

void Emitter::emit_tail_call(uint32_t i, const MInst& m) {
    // The register arguments are in place, and so is everything at or above
    // the caller's incoming area. The callee address goes to x16 first (x16
    // is never allocated).
    if (m.op == Op::TailCall) {
        out_.slot_refs.push_back(offset());
        a_.ldr(a64::x(kIp0), a64::ptr(symbol_slot(m.aux)));
        a_.ldr(a64::x(kIp0), a64::ptr(a64::x(kIp0)));
    } else {
        a_.mov(a64::x(kIp0), gpr(i, 0, 8));
    }
    // A = the area this function was called with, B = the callee's. Both
    // end at the same address (x29 + 16 + A), so the callee's return,
    // popping B, leaves sp where ours, popping A, would have. x30 gets the
    // caller's return address back from the frame record.
    const int64_t a = vc_.incoming_args_popped;
    const int64_t b = m.imm;
    if (b <= a) {
        // Lowering stored the stack arguments at the top of our incoming
        // area ([x29 + 16 + A - B ..]): sp goes to their start.
        pop_frame();
        if (b < a) add_imm(a64::sp, a64::sp, a - b);
        a_.br(a64::x(kIp0));
        return;
    }
    // The callee needs more than we received: its arguments are at [sp ..
    // sp + B) of this frame and go to [x29 + 16 + A - B ..), its new sp.
    // The frame holds that B-byte outgoing area, so the destination is
    // above the source: copied from the top down in 16-byte pieces, no
    // piece is overwritten before it is read. The callee-saved registers
    // and the frame record are read (fp-relative, sp untouched) before the
    // copy runs over them.
    a64::Gp dst = a64::x(kIp1);
    add_imm(dst, a64::x(regs::FP), 16 + a - b);
    int32_t at = 0;
    for (const SaveSlot& s : save_slots_) {
        at -= 16;
        a64::Mem slot = a64::ptr(a64::x(regs::FP), at);
        if (s.pair && s.first.fp == s.second.fp) {
            if (s.first.fp) a_.ldp(a64::d(s.first.hw), a64::d(s.second.hw), slot);
            else a_.ldp(a64::x(s.first.hw), a64::x(s.second.hw), slot);
            continue;
        }
        restore_one(s.first, slot);
        if (s.pair) restore_one(s.second, a64::ptr(a64::x(regs::FP), at + 8));
    }
    a_.ldp(a64::x(regs::FP), a64::x(regs::LR), a64::ptr(a64::x(regs::FP)));
    for (int64_t off = b - 16; off >= 0; off -= 16) {
        a_.ldr(a64::VecV(31), a64::ptr(a64::sp, static_cast<int32_t>(off)));
        a_.str(a64::VecV(31), a64::ptr(dst, static_cast<int32_t>(off)));
    }
    a_.mov(a64::sp, dst);
    a_.br(a64::x(kIp0));
}

void Emitter::emit_edit(const ra::Edit& e) {
    bool fl = e.cls == ra::RegClass::Float;
    if (e.from.is_reg() && e.to.is_reg()) {
        if (e.from == e.to) return;
        if (fl) a_.fmov(a64::d(e.to.as_reg().hw), a64::d(e.from.as_reg().hw));
        else a_.mov(a64::x(e.to.as_reg().hw), a64::x(e.from.as_reg().hw));
    } else if (e.from.is_reg() && e.to.is_stack()) {
        a64::Mem m = spill_mem(e.to.index);
        if (fl) a_.str(a64::d(e.from.as_reg().hw), m);
        else a_.str(a64::x(e.from.as_reg().hw), m);
    } else if (e.from.is_stack() && e.to.is_reg()) {
        a64::Mem m = spill_mem(e.from.index);
        if (fl) a_.ldr(a64::d(e.to.as_reg().hw), m);
        else a_.ldr(a64::x(e.to.as_reg().hw), m);
    } else if (e.from.is_stack() && e.to.is_stack() && e.from != e.to) {
        // Not produced under the allocator's contract; handled anyway.
        a_.ldr(a64::x(kIp0), spill_mem(e.from.index));
        a_.str(a64::x(kIp0), spill_mem(e.to.index));
    }
}

void Emitter::emit_alu(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Gp d = gpr(i, 2, size), x = gpr(i, 0, size), y = gpr(i, 1, size);
    switch (static_cast<AluOp>(m.sub)) {
    case AluOp::Add: a_.add(d, x, y); return;
    case AluOp::Sub: a_.sub(d, x, y); return;
    case AluOp::And: a_.and_(d, x, y); return;
    case AluOp::Orr: a_.orr(d, x, y); return;
    case AluOp::Eor: a_.eor(d, x, y); return;
    case AluOp::Bic: a_.bic(d, x, y); return;
    case AluOp::Mul: a_.mul(d, x, y); return;
    case AluOp::Lsl: a_.lsl(d, x, y); return;
    case AluOp::Lsr: a_.lsr(d, x, y); return;
    case AluOp::Asr: a_.asr(d, x, y); return;
    case AluOp::Ror: a_.ror(d, x, y); return;
    case AluOp::Smulh: a_.smulh(d, x, y); return;
    case AluOp::Umulh: a_.umulh(d, x, y); return;
    case AluOp::Adds: a_.adds(d, x, y); return;
    case AluOp::Subs: a_.subs(d, x, y); return;
    case AluOp::Adcs: a_.adcs(d, x, y); return;
    case AluOp::Sbcs: a_.sbcs(d, x, y); return;
    }
}

void Emitter::emit_alu_imm(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Gp d = gpr(i, 1, size), x = gpr(i, 0, size);
    int64_t k = m.imm;
    switch (static_cast<AluOp>(m.sub)) {
    case AluOp::Add:
    case AluOp::Sub: {
        bool add = (static_cast<AluOp>(m.sub) == AluOp::Add) == (k >= 0);
        uint64_t mag = static_cast<uint64_t>(k >= 0 ? k : -k);
        if (add) a_.add(d, x, mag);
        else a_.sub(d, x, mag);
        return;
    }
    case AluOp::Lsl: a_.lsl(d, x, k); return;
    case AluOp::Lsr: a_.lsr(d, x, k); return;
    case AluOp::Asr: a_.asr(d, x, k); return;
    case AluOp::Ror: a_.ror(d, x, k); return;
    case AluOp::And:
    case AluOp::Orr:
    case AluOp::Eor: {
        // Lowering only asks for logical immediates (logical_imm.h).
        uint64_t v = size == 8 ? static_cast<uint64_t>(k) : static_cast<uint64_t>(k) & 0xffffffffu;
        AluOp op = static_cast<AluOp>(m.sub);
        if (op == AluOp::And) a_.and_(d, x, v);
        else if (op == AluOp::Orr) a_.orr(d, x, v);
        else a_.eor(d, x, v);
        return;
    }
    default:
        errors_.first = "aarch64: no immediate form for this ALU op";
        return;
    }
}

namespace {
Imm shift_of(ShiftKind k, int64_t amount) {
    uint32_t n = static_cast<uint32_t>(amount);
    switch (k) {
    case ShiftKind::Lsl: return Imm(asmjit::arm::lsl(n));
    case ShiftKind::Lsr: return Imm(asmjit::arm::lsr(n));
    case ShiftKind::Asr: return Imm(asmjit::arm::asr(n));
    }
    return Imm(asmjit::arm::lsl(n));
}

Imm extend_of(ExtOp e, int64_t amount) {
    uint32_t n = static_cast<uint32_t>(amount);
    namespace arm = asmjit::arm;
    switch (e) {
    case ExtOp::Uxtb: return Imm(arm::uxtb(n));
    case ExtOp::Uxth: return Imm(arm::uxth(n));
    case ExtOp::Uxtw: return Imm(arm::uxtw(n));
    case ExtOp::Sxtb: return Imm(arm::sxtb(n));
    case ExtOp::Sxth: return Imm(arm::sxth(n));
    case ExtOp::Sxtw: return Imm(arm::sxtw(n));
    case ExtOp::Asr63: return Imm(arm::asr(63));
    }
    return Imm(arm::uxtb(n));
}
}  // namespace

void Emitter::emit_alu_shift(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Gp d = gpr(i, 2, size), x = gpr(i, 0, size), y = gpr(i, 1, size);
    Imm sh = shift_of(static_cast<ShiftKind>(m.size2), m.imm);
    switch (static_cast<AluOp>(m.sub)) {
    case AluOp::Add: a_.add(d, x, y, sh); return;
    case AluOp::Sub: a_.sub(d, x, y, sh); return;
    case AluOp::And: a_.and_(d, x, y, sh); return;
    case AluOp::Orr: a_.orr(d, x, y, sh); return;
    case AluOp::Eor: a_.eor(d, x, y, sh); return;
    case AluOp::Bic: a_.bic(d, x, y, sh); return;
    default: errors_.first = "aarch64: no shifted-register form for this ALU op"; return;
    }
}

void Emitter::emit_alu_ext(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    // The extended register is named at the operation's width: asmjit
    // encodes `add x0, x1, x2, uxtw` as the architectural `w2, uxtw`.
    a64::Gp d = gpr(i, 2, size), x = gpr(i, 0, size), y = gpr(i, 1, size);
    Imm ext = extend_of(static_cast<ExtOp>(m.size2), m.imm);
    switch (static_cast<AluOp>(m.sub)) {
    case AluOp::Add: a_.add(d, x, y, ext); return;
    case AluOp::Sub: a_.sub(d, x, y, ext); return;
    default: errors_.first = "aarch64: no extended-register form for this ALU op"; return;
    }
}

void Emitter::emit_bitfield(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    Imm lsb(static_cast<uint32_t>(m.imm)), width(static_cast<uint32_t>(m.size2));
    if (m.op == Op::Bfi) {
        a64::Gp d = gpr(i, 2, size);
        // The allocator gives d the register of u0 (operand pattern "uur").
        if (reg(i, 0) != reg(i, 2)) a_.mov(d, gpr(i, 0, size));
        a_.bfi(d, gpr(i, 1, size), lsb, width);
        return;
    }
    a64::Gp d = gpr(i, 1, size), x = gpr(i, 0, size);
    switch (static_cast<BfOp>(m.sub)) {
    case BfOp::Ubfx: a_.ubfx(d, x, lsb, width); return;
    case BfOp::Sbfx: a_.sbfx(d, x, lsb, width); return;
    case BfOp::Ubfiz: a_.ubfiz(d, x, lsb, width); return;
    case BfOp::Sbfiz: a_.sbfiz(d, x, lsb, width); return;
    }
}

void Emitter::emit_unary(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Gp d = gpr(i, 1, size), x = gpr(i, 0, size);
    switch (static_cast<UnaryOp>(m.sub)) {
    case UnaryOp::Neg: a_.neg(d, x); return;
    case UnaryOp::Mvn: a_.mvn(d, x); return;
    case UnaryOp::Rev: a_.rev(d, x); return;
    case UnaryOp::Rev16: a_.rev16(d, x); return;
    case UnaryOp::Rbit: a_.rbit(d, x); return;
    case UnaryOp::Clz: a_.clz(d, x); return;
    case UnaryOp::Cls: a_.cls(d, x); return;
    }
}

void Emitter::emit_div(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Gp x = gpr(i, 0, size), y = gpr(i, 1, size), d = gpr(i, 2, size);
    DivOp op = static_cast<DivOp>(m.sub);
    bool is_signed = op == DivOp::Sdiv || op == DivOp::Srem;
    a_.cbz(y, trap_label(TrapCode::kIntegerDivisionByZero, m.ir_inst));
    if (op == DivOp::Sdiv) {
        // MIN / -1 overflows at the IR type's width (x is sign-extended).
        Label ok = a_.newLabel();
        a_.cmn(y, 1);
        a_.b(asmjit::arm::CondCode::kNE, ok);
        unsigned bits = m.size2 * 8;
        int64_t min = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
        a64::Gp t = gp(kIp0, size);
        mov_imm(t, static_cast<uint64_t>(min));
        a_.cmp(x, t);
        a_.b(asmjit::arm::CondCode::kEQ, trap_label(TrapCode::kIntegerOverflow, m.ir_inst));
        a_.bind(ok);
        a_.sdiv(d, x, y);
        return;
    }
    if (op == DivOp::Udiv) {
        a_.udiv(d, x, y);
        return;
    }
    // x - (x / y) * y; sdiv gives MIN for MIN / -1, and the remainder 0.
    a64::Gp q = gp(kIp0, size);
    if (is_signed) a_.sdiv(q, x, y);
    else a_.udiv(q, x, y);
    a_.msub(d, q, y, x);
}

void Emitter::emit_cmp_ext(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    // The extended register is named at the compare's width: asmjit encodes
    // `cmp x0, x1, uxtw` as the architectural `w1, uxtw`.
    a_.cmp(gpr(i, 0, size), gpr(i, 1, size), extend_of(static_cast<ExtOp>(m.sub), 0));
}

void Emitter::emit_load(uint32_t i, const MInst& m) {
    unsigned dst = m.base == MemBase::Reg ? 1 : 0;
    a64::Gp base = base_of(i, m, 0);
    unsigned size = m.size;
    bool big = m.flags & mflags::kBig;
    bool trap = m.flags & mflags::kTrapSite;
    a64::Mem at = mem(base, m.imm, size);
    if (m.flags & mflags::kFloat) {
        if (!big) {
            if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
            a_.ldr(fpr(i, dst, size), at);
            return;
        }
        a64::Gp t = gp(kIp0, size);
        if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
        a_.ldr(t, at);
        a_.rev(t, t);
        a_.fmov(fpr(i, dst, size), t);
        return;
    }
    a64::Gp d = gpr(i, dst, 8);
    bool is_signed = m.flags & mflags::kSigned;
    if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
    if (!big || size == 1) {
        load_int(d, at, size, is_signed);
        return;
    }
    load_int(d, at, size, false);
    a64::Gp w = a64::w(d.id());
    switch (size) {
    case 2:
        a_.rev16(w, w);
        if (is_signed) a_.sxth(d, w);
        else a_.uxth(w, w);
        return;
    case 4:
        a_.rev(w, w);
        if (is_signed) a_.sxtw(d, w);
        return;
    default: a_.rev(d, d); return;
    }
}

void Emitter::emit_store(uint32_t i, const MInst& m) {
    a64::Gp base = base_of(i, m, 1);
    unsigned size = m.size;
    bool big = m.flags & mflags::kBig;
    bool trap = m.flags & mflags::kTrapSite;
    a64::Mem at = mem(base, m.imm, size);
    if (m.flags & mflags::kFloat) {
        if (!big) {
            if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
            a_.str(fpr(i, 0, size), at);
            return;
        }
        a64::Gp t = gp(kIp0, size);
        a_.fmov(t, fpr(i, 0, size));
        a_.rev(t, t);
        if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
        a_.str(t, at);
        return;
    }
    a64::Gp v = gpr(i, 0, 8);
    if (big && size > 1) {
        a64::Gp t = gp(kIp0, size == 8 ? 8 : 4);
        if (size == 2) a_.rev16(t, gp(v.id(), 4));
        else a_.rev(t, gp(v.id(), size));
        v = a64::x(kIp0);
    }
    if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
    store_int(v, at, size);
}

void Emitter::emit_falu(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Vec d = fpr(i, 2, size), x = fpr(i, 0, size), y = fpr(i, 1, size);
    switch (static_cast<FAluOp>(m.sub)) {
    case FAluOp::Add: a_.fadd(d, x, y); return;
    case FAluOp::Sub: a_.fsub(d, x, y); return;
    case FAluOp::Mul: a_.fmul(d, x, y); return;
    case FAluOp::Div: a_.fdiv(d, x, y); return;
    case FAluOp::Min: a_.fmin(d, x, y); return;
    case FAluOp::Max: a_.fmax(d, x, y); return;
    }
}

void Emitter::emit_funary(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    a64::Vec x = fpr(i, 0, size), d = fpr(i, 1, size);
    switch (static_cast<FUnaryOp>(m.sub)) {
    case FUnaryOp::Sqrt: a_.fsqrt(d, x); return;
    case FUnaryOp::Neg: a_.fneg(d, x); return;
    case FUnaryOp::Abs: a_.fabs(d, x); return;
    case FUnaryOp::Ceil: a_.frintp(d, x); return;
    case FUnaryOp::Floor: a_.frintm(d, x); return;
    case FUnaryOp::Trunc: a_.frintz(d, x); return;
    case FUnaryOp::Nearest: a_.frintn(d, x); return;
    case FUnaryOp::Promote: a_.fcvt(fpr(i, 1, 8), fpr(i, 0, 4)); return;
    case FUnaryOp::Demote: a_.fcvt(fpr(i, 1, 4), fpr(i, 0, 8)); return;
    }
}

void Emitter::emit_cvt_to_int(uint32_t i, const MInst& m) {
    unsigned fsize = m.size, bits = m.size2 * 8;
    bool is_signed = m.flags & mflags::kSigned;
    bool sat = m.flags & mflags::kSaturate;
    a64::Vec x = fpr(i, 0, fsize);
    a64::Gp d = gpr(i, 1, bits == 64 ? 8 : 4);
    auto convert = [&] {
        if (is_signed) a_.fcvtzs(d, x);
        else a_.fcvtzu(d, x);
    };
    namespace arm = asmjit::arm;
    if (sat) {
        // fcvtz* saturate to the 32/64-bit range and give 0 for NaN; narrow
        // results clamp the 32-bit one.
        convert();
        if (bits >= 32) return;
        a64::Gp t = a64::w(kIp0);
        if (is_signed) {
            mov_imm(t, (uint64_t{1} << (bits - 1)) - 1);
            a_.cmp(d, t);
            a_.csel(d, d, t, cc_imm(Cond::LT));
            mov_imm(t, static_cast<uint64_t>(-(int64_t{1} << (bits - 1))));
            a_.cmp(d, t);
            a_.csel(d, d, t, cc_imm(Cond::GT));
        } else {
            mov_imm(t, (uint64_t{1} << bits) - 1);
            a_.cmp(d, t);
            a_.csel(d, d, t, cc_imm(Cond::LO));
        }
        return;
    }
    a_.fcmp(x, x);
    a_.b(arm::CondCode::kVS, trap_label(TrapCode::kBadConversionToInteger, m.ir_inst));
    // In range iff lo < x < hi (or lo <= x when lo itself converts); the
    // bounds are powers of two or one below, exact in the source format.
    a64::Vec k = fp(regs::V31, fsize);
    double two_b = bits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t{1} << bits);
    Label bad = trap_label(TrapCode::kIntegerOverflow, m.ir_inst);
    double lo, hi;
    bool lo_inclusive_ok;  // x == lo is valid
    if (is_signed) {
        hi = two_b / 2;
        bool exact_below = bits < 32 || (bits == 32 && fsize == 8);
        lo = exact_below ? -hi - 1 : -hi;
        lo_inclusive_ok = !exact_below;
    } else {
        hi = two_b;
        lo = -1.0;
        lo_inclusive_ok = false;
    }
    load_fconst(k, float_bits_of(lo, fsize), fsize);
    a_.fcmp(x, k);
    a_.b(lo_inclusive_ok ? arm::CondCode::kMI : arm::CondCode::kLS, bad);
    load_fconst(k, float_bits_of(hi, fsize), fsize);
    a_.fcmp(x, k);
    a_.b(arm::CondCode::kGE, bad);
    convert();
}

void Emitter::emit_br_table(uint32_t i, const MInst& m) {
    // Clamp the index to the default's slot (last), load the target's
    // 32-bit offset from the table's start, jump.
    const std::vector<uint32_t>& t = vc_.jump_tables[m.aux];
    a64::Gp idx = gpr(i, 0, 8), ip0 = a64::x(kIp0), ip1 = a64::x(kIp1);
    Label table = a_.newLabel();
    table_labels_[m.aux] = table;
    mov_imm(ip1, t.size() - 1);
    a_.cmp(idx, ip1);
    a_.csel(ip1, idx, ip1, cc_imm(Cond::LO));
    a_.adr(ip0, table);
    a_.ldrsw(ip1, a64::ptr(ip0, ip1, asmjit::arm::lsl(2)));
    a_.add(ip0, ip0, ip1);
    a_.br(ip0);
}

void Emitter::emit_branch(uint32_t i, const MInst& m, uint32_t next_block) {
    auto jump_to = [&](uint32_t b) {
        if (final_block(b) != next_block) a_.b(label_of(b));
    };
    switch (m.op) {
    case Op::Jmp: jump_to(m.aux); return;
    case Op::Bcond:
        if (final_block(m.aux) == next_block) {
            a_.b(cc_of(invert(m.cc)), label_of(m.aux2));
            return;
        }
        a_.b(cc_of(m.cc), label_of(m.aux));
        jump_to(m.aux2);
        return;
    case Op::Tbz: {  // to aux if bit imm is set
        unsigned bit = static_cast<unsigned>(m.imm);
        a64::Gp x = gpr(i, 0, bit >= 32 ? 8 : 4);
        if (final_block(m.aux) == next_block) {
            a_.tbz(x, bit, label_of(m.aux2));
            return;
        }
        a_.tbnz(x, bit, label_of(m.aux));
        jump_to(m.aux2);
        return;
    }
    default: {  // Cbz: to aux if (x != 0) == imm
        a64::Gp x = gpr(i, 0, m.size == 8 ? 8 : 4);
        bool nonzero_to_aux = m.imm != 0;
        if (final_block(m.aux) == next_block) {
            if (nonzero_to_aux) a_.cbz(x, label_of(m.aux2));
            else a_.cbnz(x, label_of(m.aux2));
            return;
        }
        if (nonzero_to_aux) a_.cbnz(x, label_of(m.aux));
        else a_.cbz(x, label_of(m.aux));
        jump_to(m.aux2);
        return;
    }
    }
}

void Emitter::emit_inst(uint32_t i, uint32_t next_block) {
    const MInst& m = vc_.insts[i];
    unsigned size = m.size;
    namespace arm = asmjit::arm;
    switch (m.op) {
    case Op::Nop:
    case Op::Args:
        return;
    case Op::MovRR: {
        uint8_t s = reg(i, 0), d = reg(i, 1);
        if (s != d) a_.mov(a64::x(d), a64::x(s));
        return;
    }
    case Op::MovImm: mov_imm(gpr(i, 0, 8), static_cast<uint64_t>(m.imm)); return;
    case Op::Ext: {
        a64::Gp s = gpr(i, 0, 4), d = gpr(i, 1, 8);
        bool is_signed = m.flags & mflags::kSigned;
        switch (m.size) {
        case 1: is_signed ? a_.sxtb(d, s) : a_.uxtb(gp(d.id(), 4), s); return;
        case 2: is_signed ? a_.sxth(d, s) : a_.uxth(gp(d.id(), 4), s); return;
        case 4: is_signed ? a_.sxtw(d, s) : a_.mov(gp(d.id(), 4), s); return;
        default:
            if (d.id() != s.id()) a_.mov(d, gpr(i, 0, 8));
            return;
        }
    }
    case Op::Alu: emit_alu(i, m); return;
    case Op::AluImm: emit_alu_imm(i, m); return;
    case Op::AluShift: emit_alu_shift(i, m); return;
    case Op::AluExt: emit_alu_ext(i, m); return;
    case Op::Bfx:
    case Op::Bfi: emit_bitfield(i, m); return;
    case Op::CmpShift: a_.cmp(gpr(i, 0, size), gpr(i, 1, size), shift_of(static_cast<ShiftKind>(m.size2), m.imm)); return;
    case Op::Tst: a_.tst(gpr(i, 0, size), gpr(i, 1, size)); return;
    case Op::TstLog:
        a_.tst(gpr(i, 0, size), size == 8 ? static_cast<uint64_t>(m.imm) : static_cast<uint64_t>(m.imm) & 0xffffffffu);
        return;
    case Op::Unary: emit_unary(i, m); return;
    case Op::Madd:
        if (m.flags & mflags::kMsub) a_.msub(gpr(i, 3, size), gpr(i, 0, size), gpr(i, 1, size), gpr(i, 2, size));
        else a_.madd(gpr(i, 3, size), gpr(i, 0, size), gpr(i, 1, size), gpr(i, 2, size));
        return;
    case Op::MulWide:
        if (m.flags & mflags::kSigned) a_.smull(gpr(i, 2, 8), gpr(i, 0, 4), gpr(i, 1, 4));
        else a_.umull(gpr(i, 2, 8), gpr(i, 0, 4), gpr(i, 1, 4));
        return;
    case Op::Popcnt: {
        a64::Vec v = a64::v(regs::V31);
        a_.fmov(fp(regs::V31, size), gpr(i, 0, size));
        a_.cnt(v.b8(), v.b8());
        a_.addv(v.b(), v.b8());
        a_.fmov(gpr(i, 1, 4), a64::s(regs::V31));
        return;
    }
    case Op::Div: emit_div(i, m); return;
    case Op::Cmp: a_.cmp(gpr(i, 0, size), gpr(i, 1, size)); return;
    case Op::CmpImm:
        if (m.imm >= 0) a_.cmp(gpr(i, 0, size), static_cast<uint64_t>(m.imm));
        else a_.cmn(gpr(i, 0, size), static_cast<uint64_t>(-m.imm));
        return;
    case Op::CmpExt: emit_cmp_ext(i, m); return;
    case Op::TstImm: a_.tst(gpr(i, 0, 4), (uint64_t{1} << (8 * size)) - 1); return;
    case Op::SetCarry: {
        a64::Gp t = a64::w(kIp0);
        a_.and_(t, gpr(i, 0, 4), 0xff);
        if (m.imm == 0) a_.cmp(t, 1);       // C = (c != 0)
        else a_.cmp(a64::wzr, t);           // C = (c == 0)
        return;
    }
    case Op::Cset:
        if (m.imm) a_.csetm(gpr(i, 0, 8), cc_imm(m.cc));
        else a_.cset(gpr(i, 0, 4), cc_imm(m.cc));
        return;
    case Op::Csel: a_.csel(gpr(i, 2, size), gpr(i, 0, size), gpr(i, 1, size), cc_imm(m.cc)); return;
    case Op::Cneg: a_.cneg(gpr(i, 1, size), gpr(i, 0, size), cc_imm(m.cc)); return;
    case Op::Load: emit_load(i, m); return;
    case Op::Store: emit_store(i, m); return;
    case Op::StackAddr: add_imm(gpr(i, 0, 8), a64::sp, slot_offset_[m.aux] + m.imm); return;
    case Op::SpAddr: add_imm(gpr(i, 0, 8), a64::sp, m.imm); return;
    case Op::FMov: {
        uint8_t s = reg(i, 0), d = reg(i, 1);
        if (s != d) a_.fmov(a64::d(d), a64::d(s));
        return;
    }
    case Op::FConst: load_fconst(fpr(i, 0, size), static_cast<uint64_t>(m.imm), size); return;
    case Op::FAlu: emit_falu(i, m); return;
    case Op::FUnary: emit_funary(i, m); return;
    case Op::Fma: a_.fmadd(fpr(i, 3, size), fpr(i, 0, size), fpr(i, 1, size), fpr(i, 2, size)); return;
    case Op::FCmp: a_.fcmp(fpr(i, 0, size), fpr(i, 1, size)); return;
    case Op::FCsel: a_.fcsel(fpr(i, 2, size), fpr(i, 0, size), fpr(i, 1, size), cc_imm(m.cc)); return;
    case Op::GprToFpr: a_.fmov(fpr(i, 1, size), gpr(i, 0, size)); return;
    case Op::FprToGpr: a_.fmov(gpr(i, 1, size), fpr(i, 0, size)); return;
    case Op::CvtIntToFloat:
        if (m.flags & mflags::kSigned) a_.scvtf(fpr(i, 1, size), gpr(i, 0, m.size2));
        else a_.ucvtf(fpr(i, 1, size), gpr(i, 0, m.size2));
        return;
    case Op::CvtFloatToInt: emit_cvt_to_int(i, m); return;
    case Op::Jmp:
    case Op::Bcond:
    case Op::Cbz:
    case Op::Tbz: emit_branch(i, m, next_block); return;
    case Op::BrTable: emit_br_table(i, m); return;
    case Op::Ret:
        pop_frame();
        // `tail` convention: the callee pops its stack arguments.
        if (vc_.incoming_args_popped) add_imm(a64::sp, a64::sp, vc_.incoming_args_popped);
        a_.ret(a64::x(regs::LR));
        return;
    case Op::Call:
        // The slot holds the address of the callee's GOT cell (compiled_code.h).
        out_.slot_refs.push_back(offset());
        a_.ldr(a64::x(kIp0), a64::ptr(symbol_slot(m.aux)));
        a_.ldr(a64::x(kIp0), a64::ptr(a64::x(kIp0)));
        a_.blr(a64::x(kIp0));
        sub_sp(static_cast<uint64_t>(m.imm));  // a tail callee popped its arguments
        return;
    case Op::CallInd:
        a_.blr(gpr(i, 0, 8));
        sub_sp(static_cast<uint64_t>(m.imm));
        return;
    case Op::TailCall:
    case Op::TailCallInd: emit_tail_call(i, m); return;
    case Op::FuncAddr:
        out_.slot_refs.push_back(offset());
        a_.ldr(gpr(i, 0, 8), a64::ptr(symbol_slot(m.aux)));
        a_.ldr(gpr(i, 0, 8), a64::ptr(gpr(i, 0, 8)));
        return;
    case Op::Trap:
        record_trap(TrapCode{m.trap}, m.ir_inst);
        a_.udf(0);
        return;
    case Op::TrapIf: a_.b(cc_of(m.cc), trap_label(m.trap, m.ir_inst)); return;
    case Op::TrapIfZero: {
        a64::Gp x = gpr(i, 0, size == 8 ? 8 : 4);
        if (m.imm) a_.cbnz(x, trap_label(m.trap, m.ir_inst));
        else a_.cbz(x, trap_label(m.trap, m.ir_inst));
        return;
    }
    case Op::TrapIfHigh:
        a_.lsr(a64::w(kIp0), gpr(i, 0, 4), m.imm);
        a_.cbnz(a64::w(kIp0), trap_label(m.trap, m.ir_inst));
        return;
    }
}

void Emitter::find_forwarded_blocks() {
    compute_forwarding(
        vc_, al_, [](const MInst& m) { return m.op == Op::Jmp; }, st_.next, forward_);
}

std::string Emitter::run() {
    begin(asmjit::Arch::kAArch64, a_, vc_);
    if (std::string err = layout_frame(); !err.empty()) return err;
    uint32_t nb = rf().num_blocks();

    find_forwarded_blocks();
    prologue();
    size_t edit = 0;
    const std::vector<uint32_t>& order = code_order(vc_, st_.identity);
    for (uint32_t k = 0; k < nb; ++k) {
        const uint32_t b = order[k];
        if (final_block(b) != b) continue;
        // The next block that has code of its own; nb after the last.
        uint32_t n = k + 1;
        while (n < nb && final_block(order[n]) != order[n]) ++n;
        const uint32_t next = n < nb ? order[n] : nb;
        a_.bind(block_labels_[b]);
        emit_block(vc_, al_, b, edit, [&](uint32_t i) { emit_inst(i, next); }, [&](const ra::Edit& e) { emit_edit(e); });
    }
    emit_trap_stubs([&] { a_.udf(0); });
    emit_jump_tables(vc_.jump_tables,
                     [&](uint32_t b, const Label& table) { a_.embedLabelDelta(label_of(b), table, 4); });
    emit_symbol_slots(vc_.symbols, /*align_always=*/false);
    return finish("aarch64");
}

}  // namespace

std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc, CompiledCode& out,
                          EmitContext& ctx) {
    out.clear();
    Emitter e(func, vcode, alloc, out, ctx.state());
    return e.run();
}

std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc, CompiledCode& out) {
    EmitContext ctx;
    return emit_function(func, vcode, alloc, out, ctx);
}

}  // namespace heron::aarch64
