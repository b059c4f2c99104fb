// x86-64 emission. Frame, from high to low addresses:
//
//   [rbp + 16 ...]   incoming stack arguments
//   [rbp + 8]        return address
//   [rbp]            saved rbp
//   [rbp - 8k ..]    saved callee-saved registers (k of them)
//   ...              padding to 16 bytes
//   [rsp + O + 8S..] explicit stack slots, each aligned
//   [rsp + O ..]     spill slots, 8 bytes each (S of them)
//   [rsp ..]         outgoing stack arguments (O bytes)
//
// r11 and xmm15 are never allocated: the allocator uses them for its move
// cycles and the emitter uses them inside one instruction's expansion.
#include "codegen/isa/x64/emit.h"

#include <asmjit/x86.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "codegen/isa/common/asmjit_common.h"
#include "codegen/isa/x64/encoder.h"

namespace heron::x64 {

namespace x86 = asmjit::x86;
using asmjit::Label;
using ra::Allocation;

struct EmitContext::State {
    /// A jump to a block, as first emitted: the long form (jmp rel32, jcc
    /// rel32) with its displacement left open, or for kSkipNext a 2-byte
    /// jcc over the next jump (the first half of a float equality branch).
    struct BlockJump {
        uint32_t at;      // offset of its first byte
        uint32_t target;  // VCode block, or kSkipNext
        uint8_t cc;       // x86 condition code, or kAlways
        bool short_form;  // decided by relax_block_jumps
    };
    asmjit::CodeHolder code;
    x86::Assembler assembler;  // attached to `code` per function
    std::vector<uint32_t> forward, block_offset, first_jump, removed, next, order, slot_offset, wrap_preds;
    std::vector<BlockJump> jumps;
    std::vector<uint8_t> saved, wrap;
};

EmitContext::EmitContext() : state_(std::make_unique<State>()) {}
EmitContext::~EmitContext() = default;

namespace {

constexpr uint8_t kScratchGpr = regs::R11;
constexpr uint32_t kNoBlock = ~0u;
constexpr uint8_t kScratchXmm = 15;

x86::Gp gp(uint8_t hw, unsigned size) {
    switch (size) {
    case 1: return x86::gpb(hw);
    case 2: return x86::gpw(hw);
    case 4: return x86::gpd(hw);
    default: return x86::gpq(hw);
    }
}

asmjit::x86::CondCode cc_of(Cond c) { return static_cast<asmjit::x86::CondCode>(static_cast<uint8_t>(c)); }

/// The encoder's ALU operation for `op` (not Imul, which has its own forms).
enc::Alu alu_of(AluOp op) {
    switch (op) {
    case AluOp::Add: return enc::Alu::Add;
    case AluOp::Sub: return enc::Alu::Sub;
    case AluOp::And: return enc::Alu::And;
    case AluOp::Or: return enc::Alu::Or;
    case AluOp::Xor: return enc::Alu::Xor;
    case AluOp::Adc: return enc::Alu::Adc;
    case AluOp::Sbb: return enc::Alu::Sbb;
    case AluOp::Imul: break;
    }
    return enc::Alu::Add;
}

enc::Shift shift_of(ShiftOp op) {
    switch (op) {
    case ShiftOp::Shl: return enc::Shift::Shl;
    case ShiftOp::Shr: return enc::Shift::Shr;
    case ShiftOp::Sar: return enc::Shift::Sar;
    case ShiftOp::Rol: return enc::Shift::Rol;
    case ShiftOp::Ror: return enc::Shift::Ror;
    }
    return enc::Shift::Shl;
}

/// Whether `v` is within the signed range of `size` bytes (the immediates
/// the encoder's ALU forms are checked for).
bool fits_signed(int64_t v, unsigned size) {
    const int64_t half = int64_t{1} << (std::min(size, 4u) * 8 - 1);
    return v >= -half && v < half;
}

class Emitter : isa::EmitterBase {
public:
    Emitter(const Function& f, const VCode& vc, const ra::Output& al, const Settings& s, CompiledCode& out,
            EmitContext::State& st)
        : EmitterBase(out, st.code), f_(f), vc_(vc), al_(al), settings_(s), st_(st), forward_(st.forward),
          jumps_(st.jumps), block_offset_(st.block_offset), first_jump_(st.first_jump), removed_(st.removed),
          a_(st.assembler), saved_(st.saved), wrap_(st.wrap), slot_offset_(st.slot_offset) {}

    std::string run();

private:
    const ra::Function& rf() const { return vc_.ra; }
    Allocation alloc(uint32_t inst, unsigned k) const { return al_.allocs[rf().operands_begin[inst] + k]; }
    uint8_t reg(uint32_t inst, unsigned k) const {
        Allocation a = alloc(inst, k);
        return a.as_reg().hw;
    }
    x86::Gp gpr(uint32_t inst, unsigned k, unsigned size) const { return gp(reg(inst, k), size); }
    x86::Xmm xmm(uint32_t inst, unsigned k) const { return x86::xmm(reg(inst, k)); }
    enc::Mem spill_at(uint32_t slot) const { return {regs::RSP, static_cast<int32_t>(spill_base_ + 8 * slot)}; }
    /// The address of memory form `m` whose base is operand k: base + imm,
    /// or with mflags::kIndex base + (operand k+1 << scale) + imm.
    enc::Mem mem_at(uint32_t inst, const MInst& m, unsigned k) const {
        enc::Mem mem{reg(inst, k), static_cast<int32_t>(m.imm)};
        if (m.flags & mflags::kIndex) {
            mem.index = reg(inst, k + 1);
            mem.scale = m.scale;
        }
        return mem;
    }
    /// The operand right after the address whose base is operand k.
    static unsigned after_mem(const MInst& m, unsigned k) { return m.flags & mflags::kIndex ? k + 2 : k + 1; }
    /// `mem` as an asmjit operand of `size` bytes (0: no size).
    static x86::Mem x86_mem(const enc::Mem& mem, unsigned size) {
        if (mem.index == enc::Mem::kNoIndex) return x86::ptr(x86::gpq(mem.base), mem.disp, size);
        return x86::ptr(x86::gpq(mem.base), x86::gpq(mem.index), mem.scale, mem.disp, size);
    }

    /// Direct encoding (encoder.h) into the assembler's buffer, for the
    /// forms the encoder has: `put(enc::form(at(), ...))`. at() makes
    /// room for one instruction and returns where it goes; put() moves the
    /// assembler past the bytes written.
    [[gnu::always_inline]] uint8_t* at() {
        if (a_.remainingSpace() < 16 && !grow()) return scratch_;
        return a_._bufferPtr;
    }
    [[gnu::always_inline]] void put(uint8_t* end) {
        if (grow_failed_) [[unlikely]] return;
        a_._bufferPtr = end;
        // The code only grows (relax_block_jumps aside), so the buffer's
        // size is where the assembler is.
        text_->_size = static_cast<size_t>(end - a_._bufferData);
    }
    /// Grows the buffer by at least 16 bytes; false (and an error) when it
    /// cannot: the bytes then go to scratch_ and emission fails.
    bool grow();

    /// "" or the error for a frame over kMaxFrameSize.
    std::string layout_frame();
    /// Shrink-wrapping: whether the prologue can move off the entry. Fills
    /// wrap_ per block: kFrameless for the blocks run before any prologue
    /// (the entry and blocks reached only from such blocks, none of them
    /// touching the stack, a callee-saved register or making a call),
    /// kPrologue for the blocks entered only from those, which start with
    /// the prologue. False (wrap_ unused) when some block is reached both
    /// with and without the frame.
    bool plan_shrink_wrap();
    /// Whether block `b`'s instructions and the allocator's edits in it
    /// could run without the frame (see plan_shrink_wrap).
    bool runs_without_frame(uint32_t b) const;
    /// Whether instructions [begin, end) could run without the frame,
    /// their operands aside (no call, stack address or rbp/rsp-relative
    /// access).
    bool insts_run_without_frame(uint32_t begin, uint32_t end) const;
    void prologue();
    /// pop_frame, then `ret` (`ret A` for a `tail` function with A bytes of
    /// stack arguments).
    void epilogue();
    /// Restores callee-saved registers, rsp and rbp (epilogue without ret).
    void pop_frame();
    /// Whether block `b` is a `ret` alone, with no edit of the allocator
    /// before or after it: a jump there can be the return itself.
    bool is_lone_return(uint32_t b) const;
    [[gnu::always_inline]] inline void emit_edit(const ra::Edit& e);
    [[gnu::always_inline]] inline void emit_inst(uint32_t i, uint32_t next_block);
    [[gnu::noinline]] void emit_inst_asmjit(uint32_t i, const MInst& m);
    /// Jump threading: the block control really goes to when jumping to
    /// `b` (through blocks that hold nothing but a jump).
    uint32_t final_target(uint32_t b) const { return forward_[b]; }
    void compute_forwarding();
    /// A jump (cond = nullopt) or conditional jump to block `target`, from
    /// the block before `next_block`; nothing when it would fall through.
    void jump_to_block(std::optional<Cond> cond, uint32_t target, uint32_t next_block);
    /// Appends a block jump in its long form (see BlockJump): condition
    /// `cc` (x86 encoding, or kAlways) to block `target` or, for
    /// kSkipNext, over the jump that follows.
    void emit_block_jump(uint8_t cc, uint32_t target);
    /// Block jumps: picks the short form of every jump whose target it
    /// reaches, closes up the code and patches the displacements (see
    /// run()).
    void relax_block_jumps();
    /// Where code offset `x` (of the code before relax_block_jumps) ends up.
    uint32_t relaxed(uint32_t x) const;
    void load_fconst(x86::Xmm dst, uint64_t bits, unsigned size);
    void emit_div(uint32_t i, const MInst& m);
    void emit_bitcount(uint32_t i, const MInst& m);
    void emit_cvt_to_int(uint32_t i, const MInst& m);
    void emit_cvt_from_int(uint32_t i, const MInst& m);
    void emit_load(uint32_t i, const MInst& m);
    void emit_store(uint32_t i, const MInst& m);
    void emit_fminmax(uint32_t i, const MInst& m);
    void emit_tail_call(uint32_t i, const MInst& m);
    void jcc_float(Cond c, Label taken);
    const Function& f_;
    const VCode& vc_;
    const ra::Output& al_;
    const Settings& settings_;
    EmitContext::State& st_;  // kept between functions; the members below are its tables
    std::vector<uint32_t>& forward_;  // per block: final_target

    using BlockJump = EmitContext::State::BlockJump;
    static constexpr uint8_t kAlways = 0xff;
    static constexpr uint32_t kSkipNext = ~0u - 1;
    /// Bytes of `j` as first emitted.
    static uint32_t long_size(const BlockJump& j) { return j.target == kSkipNext ? 2 : j.cc == kAlways ? 5 : 6; }
    std::vector<BlockJump>& jumps_;         // in code order
    std::vector<uint32_t>& block_offset_;  // per VCode block with code: its start
    std::vector<uint32_t>& first_jump_;    // per VCode block with code: jumps placed before it
    std::vector<uint32_t>& removed_;       // per jump k (and one past): bytes dropped by the jumps before k

    x86::Assembler& a_;
    asmjit::CodeBuffer* text_ = nullptr;  // the .text buffer a_ writes to
    uint8_t scratch_[16] = {};             // where at() points when the buffer cannot grow
    bool grow_failed_ = false;

    std::vector<uint8_t>& saved_;  // callee-saved registers pushed
    static constexpr uint8_t kFramed = 0, kFrameless = 1, kPrologue = 2;
    std::vector<uint8_t>& wrap_;   // per block, when shrink-wrapped: kFramed, kFrameless or kPrologue
    bool frameless_ = false;       // the block being emitted runs before the prologue
    bool operands_need_frame_ = true;  // by layout_frame: some operand or edit may be a spill slot or callee-saved
    uint32_t frame_size_ = 0;      // bytes subtracted from rsp after the pushes
    uint32_t spill_base_ = 0;
    std::vector<uint32_t>& slot_offset_;
};

bool Emitter::grow() {
    if (!grow_failed_ && code_.growBuffer(text_, 16) == asmjit::kErrorOk && a_.remainingSpace() >= 16) return true;
    if (errors_.first.empty()) errors_.first = "out of memory for the code buffer";
    grow_failed_ = true;
    return false;
}

std::string Emitter::layout_frame() {
    // Callee-saved registers the allocation uses: per PReg index (both
    // classes), whether an allocation or an edit destination names it,
    // marked without a branch per allocation (one store each; the last
    // entry takes every allocation that is not a register).
    constexpr uint32_t kNotReg = 2 * ra::kMaxRegsPerClass;
    std::array<uint8_t, kNotReg + 1> named{};
    auto mark = [&](const Allocation& a) {
        named[a.kind == Allocation::Kind::Reg ? a.index % kNotReg : kNotReg] = 1;
    };
    for (const Allocation& a : al_.allocs) mark(a);
    for (const ra::Edit& e : al_.edits) mark(e.to);
    for (uint8_t r : {regs::RBX, regs::R12, regs::R13, regs::R14, regs::R15}) {
        if (named[r]) saved_.push_back(r);
    }
    // For shrink-wrapping (runs_without_frame): no operand or edit can
    // need the frame when no callee-saved register is written (an edit
    // reads a register only after an allocation or edit wrote it, as the
    // allocation checker requires) and there is no spill slot for a stack
    // allocation to name.
    operands_need_frame_ = al_.num_spill_slots != 0 || !saved_.empty();
    const uint32_t pushed = 8 * static_cast<uint32_t>(saved_.size());
    const FrameLayout fl = frame_layout(f_, vc_.outgoing_args_size, al_.num_spill_slots, pushed, slot_offset_);
    if (std::string err = frame_size_error(fl.size + pushed); !err.empty()) return err;
    spill_base_ = fl.spill_base;
    frame_size_ = static_cast<uint32_t>(fl.size);
    out_.frame_size = frame_size_ + pushed;
    out_.spill_slots = al_.num_spill_slots;
    return {};
}

void Emitter::prologue() {
    put(enc::push(at(), regs::RBP));
    put(enc::mov_rr(at(), 8, regs::RBP, regs::RSP));
    for (uint8_t r : saved_) put(enc::push(at(), r));
    if (frame_size_ == 0) return;
    if (frame_size_ < 4096) {
        put(enc::alu_ri(at(), enc::Alu::Sub, 8, regs::RSP, static_cast<int32_t>(frame_size_)));
        return;
    }
    // Probe every page so that an overflow hits the guard page in order.
    uint32_t pages = frame_size_ / 4096;
    Label loop = a_.newLabel();
    a_.mov(x86::gpd(kScratchGpr), pages);
    a_.bind(loop);
    a_.sub(x86::rsp, 4096);
    a_.or_(x86::dword_ptr(x86::rsp), 0);
    a_.dec(x86::gpd(kScratchGpr));
    a_.jnz(loop);
    if (uint32_t rest = frame_size_ % 4096) a_.sub(x86::rsp, rest);
}

void Emitter::pop_frame() {
    // rsp stays at the bottom of the frame between instructions (a `tail`
    // callee's popped area is taken again right after the call), so
    // without a frame below the saved registers it is already in place.
    if (frame_size_ != 0) {
        if (saved_.empty()) put(enc::mov_rr(at(), 8, regs::RSP, regs::RBP));
        else put(enc::lea(at(), regs::RSP, {regs::RBP, -8 * static_cast<int32_t>(saved_.size())}));
    }
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) put(enc::pop(at(), *it));
    put(enc::pop(at(), regs::RBP));
}

void Emitter::epilogue() {
    if (!frameless_) pop_frame();
    if (vc_.incoming_args_popped == 0) put(enc::ret(at()));
    else a_.ret(asmjit::imm(vc_.incoming_args_popped));  // `tail`: the callee pops its stack arguments
}

bool Emitter::insts_run_without_frame(uint32_t begin, uint32_t end) const {
    for (uint32_t i = begin; i < end; ++i) {
        const MInst& m = vc_.insts[i];
        switch (m.op) {
        case Op::Call: case Op::CallInd: case Op::TailCall: case Op::TailCallInd: case Op::StackAddr: return false;
        case Op::Load: case Op::Store: case Op::LeaBase:
            if (m.base != MemBase::Reg) return false;  // rbp/rsp-relative: stack arguments, return area
            break;
        default: break;
        }
    }
    return true;
}

bool Emitter::runs_without_frame(uint32_t b) const {
    const ra::Function& f = rf();
    if (!insts_run_without_frame(f.block_insts_begin[b], f.block_insts_begin[b + 1])) return false;
    if (!operands_need_frame_) return true;  // see layout_frame
    auto needs_frame = [](const Allocation& a) {
        if (a.is_stack()) return true;
        if (!a.is_reg() || a.index >= ra::kMaxRegsPerClass) return false;  // a float register: all caller-saved
        const uint8_t r = a.as_reg().hw;
        return r == regs::RBX || (r >= regs::R12 && r <= regs::R15);
    };
    for (uint32_t k = f.operands_begin[f.block_insts_begin[b]]; k < f.operands_begin[f.block_insts_begin[b + 1]]; ++k) {
        if (needs_frame(al_.allocs[k])) return false;
    }
    const uint32_t first = ra::ProgPoint::before(f.block_insts_begin[b]).bits;
    const uint32_t end = ra::ProgPoint::before(f.block_insts_begin[b + 1]).bits;
    auto e = std::partition_point(al_.edits.begin(), al_.edits.end(),
                                  [&](const ra::Edit& x) { return x.point.bits < first; });
    for (; e != al_.edits.end() && e->point.bits < end; ++e) {
        if (needs_frame(e->from) || needs_frame(e->to)) return false;
    }
    return true;
}

bool Emitter::plan_shrink_wrap() {
    // Over the blocks with code (the others are jumped through) and the
    // edges between them: the frameless region is the largest set of
    // blocks that need no frame, hold the entry and are entered only from
    // each other (the entry from the caller). Start from every block that
    // needs no frame and drop those with a predecessor outside, until none
    // is left to drop (a few rounds; a function that would take more keeps
    // its prologue at the entry).
    const ra::Function& f = rf();
    const uint32_t nb = f.num_blocks();
    const uint32_t entry = final_target(0);
    if (!runs_without_frame(entry)) return false;
    if (nb == 1 && f.succs_begin[1] == f.succs_begin[0]) {
        // One block that needs no frame and branches nowhere: all of the
        // function runs without.
        wrap_.assign(1, kFrameless);
        return true;
    }
    const std::vector<uint32_t>& order = code_order(vc_, st_.order);
    // [b]: edges into b from blocks with code; [nb + b]: those from the region.
    std::vector<uint32_t>& preds = st_.wrap_preds;
    preds.assign(2 * nb, 0);
    for (uint32_t b : order) {
        if (final_target(b) != b) continue;
        for (uint32_t k = f.succs_begin[b]; k < f.succs_begin[b + 1]; ++k) ++preds[final_target(f.succs[k])];
    }
    if (preds[entry] != 0) return false;  // the entry is a loop header
    wrap_.assign(nb, kFramed);
    for (uint32_t b : order) {
        if (final_target(b) == b && (b == entry || (preds[b] != 0 && runs_without_frame(b)))) wrap_[b] = kFrameless;
    }
    auto from_region = [&](uint32_t t) -> uint32_t& { return preds[nb + t]; };
    for (int round = 0;; ++round) {
        if (round == 8) return false;
        std::fill(preds.begin() + nb, preds.end(), 0);
        for (uint32_t b : order) {
            if (wrap_[b] != kFrameless) continue;
            for (uint32_t k = f.succs_begin[b]; k < f.succs_begin[b + 1]; ++k) ++from_region(final_target(f.succs[k]));
        }
        bool dropped = false;
        for (uint32_t b : order) {
            if (wrap_[b] == kFrameless && from_region(b) != preds[b]) {
                wrap_[b] = kFramed;
                dropped = true;
            }
        }
        if (!dropped) break;
    }
    // Where control leaves the region: a jump to a lone return is that
    // return (frameless there); any other target takes the prologue at its
    // top, so it must be entered from the region only.
    for (uint32_t b : order) {
        if (wrap_[b] != kFrameless) continue;
        const uint32_t last = f.block_insts_begin[b + 1] - 1;
        for (uint32_t k = f.succs_begin[b]; k < f.succs_begin[b + 1]; ++k) {
            const uint32_t t = final_target(f.succs[k]);
            if (wrap_[t] == kFrameless) continue;
            if (vc_.insts[last].op == Op::Jmp && is_lone_return(t)) continue;
            if (from_region(t) != preds[t]) return false;
            wrap_[t] = kPrologue;
        }
    }
    return true;
}

bool Emitter::is_lone_return(uint32_t b) const {
    const uint32_t first = rf().block_insts_begin[b];
    return rf().block_insts_begin[b + 1] == first + 1 && vc_.insts[first].op == Op::Ret && !has_edits(al_, first);
}

void Emitter::emit_edit(const ra::Edit& e) {
    bool fl = e.cls == ra::RegClass::Float;
    if (e.from.is_remat()) {
        // A constant made again instead of reloaded (lowering flags only
        // MovImm of a signed 32-bit value). Never `xor`: edits keep flags.
        int64_t v = vc_.insts[e.from.index].imm;
        if (e.to.is_stack()) {
            put(enc::mov_m64_imm(at(), spill_at(e.to.index), static_cast<int32_t>(v)));
        } else if (v >= 0) {
            put(enc::mov_r32_imm(at(), e.to.as_reg().hw, static_cast<uint32_t>(v)));
        } else {
            put(enc::mov_r64_imm(at(), e.to.as_reg().hw, v));
        }
        return;
    }
    if (e.from.is_reg() && e.to.is_reg()) {
        if (e.from == e.to) return;
        if (fl) put(enc::sse_rr(at(), 0, 0x28, e.to.as_reg().hw, e.from.as_reg().hw));  // movaps
        else put(enc::mov_rr(at(), 8, e.to.as_reg().hw, e.from.as_reg().hw));
    } else if (e.from.is_reg() && e.to.is_stack()) {
        if (fl) put(enc::sse_rm(at(), 0xF2, 0x11, e.from.as_reg().hw, spill_at(e.to.index)));  // movsd store
        else put(enc::store(at(), 8, spill_at(e.to.index), e.from.as_reg().hw));
    } else if (e.from.is_stack() && e.to.is_reg()) {
        if (fl) put(enc::sse_rm(at(), 0xF2, 0x10, e.to.as_reg().hw, spill_at(e.from.index)));  // movsd load
        else put(enc::load(at(), 8, e.to.as_reg().hw, spill_at(e.from.index)));
    } else if (e.from.is_stack() && e.to.is_stack()) {
        // Not produced by the allocator's contract; handled anyway.
        if (e.from == e.to) return;
        put(enc::load(at(), 8, kScratchGpr, spill_at(e.from.index)));
        put(enc::store(at(), 8, spill_at(e.to.index), kScratchGpr));
    }
}

void Emitter::load_fconst(x86::Xmm dst, uint64_t bits, unsigned size) {
    if (bits == 0) {
        a_.xorps(dst, dst);
        return;
    }
    if (size == 4) {
        a_.mov(x86::gpd(kScratchGpr), static_cast<uint32_t>(bits));
        a_.movd(dst, x86::gpd(kScratchGpr));
    } else {
        a_.mov(x86::gpq(kScratchGpr), bits);
        a_.movq(dst, x86::gpq(kScratchGpr));
    }
}

void Emitter::jcc_float(Cond c, Label taken) {
    if (c == Cond::FEq) {
        Label skip = a_.newLabel();
        a_.jp(skip);
        a_.je(taken);
        a_.bind(skip);
    } else if (c == Cond::FNe) {
        a_.jp(taken);
        a_.jne(taken);
    } else {
        a_.j(cc_of(c), taken);
    }
}

void Emitter::emit_div(uint32_t i, const MInst& m) {
    // Operands: rax dividend, divisor, rax quotient, rdx remainder (early), temp.
    unsigned size = m.size;
    x86::Gp y = gpr(i, 1, size);
    bool is_signed = m.flags & mflags::kSigned;
    bool rem = m.flags & mflags::kRem;
    Label done = a_.newLabel();
    a_.test(y, y);
    a_.jz(trap_label(TrapCode::kIntegerDivisionByZero, m.ir_inst));
    if (is_signed) {
        Label normal = a_.newLabel();
        a_.cmp(y, -1);
        a_.jne(normal);
        if (rem) {
            a_.xor_(x86::edx, x86::edx);  // x srem -1 == 0, MIN included
        } else {
            // x / -1 == -x; MIN / -1 overflows at the type's own width.
            // Only the low m.size2 bytes of the result matter (1.3).
            a_.neg(gp(regs::RAX, m.size2));
            a_.jo(trap_label(TrapCode::kIntegerOverflow, m.ir_inst));
        }
        a_.jmp(done);
        a_.bind(normal);
        if (size == 8) a_.cqo();
        else a_.cdq();
        a_.idiv(y);
    } else {
        a_.xor_(x86::edx, x86::edx);
        a_.div(y);
    }
    a_.bind(done);
}

void Emitter::emit_bitcount(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    unsigned n = size * 8;
    x86::Gp src = gpr(i, 0, size), d = gpr(i, 1, size), t = gpr(i, 2, size);
    switch (static_cast<CountOp>(m.sub)) {
    case CountOp::Clz:
        if (settings_.has_lzcnt) {
            a_.lzcnt(d, src);
            return;
        }
        a_.mov(t, -1);
        a_.bsr(d, src);
        a_.cmovz(d, t);
        a_.neg(d);
        a_.add(d, static_cast<int32_t>(n - 1));
        return;
    case CountOp::Ctz:
        if (settings_.has_bmi1) {
            a_.tzcnt(d, src);
            return;
        }
        a_.mov(t, static_cast<int32_t>(n));
        a_.bsf(d, src);
        a_.cmovz(d, t);
        return;
    case CountOp::Popcnt: {
        if (settings_.has_popcnt) {
            a_.popcnt(d, src);
            return;
        }
        // SWAR population count at 64 bits (a 32-bit source is zero-extended).
        x86::Gp dq = d.r64(), tq = t.r64(), s = x86::gpq(kScratchGpr);
        if (size == 4) a_.mov(d.r32(), src.r32());
        else a_.mov(dq, src.r64());
        a_.mov(tq, dq);
        a_.shr(tq, 1);
        a_.mov(s, 0x5555555555555555ull);
        a_.and_(tq, s);
        a_.sub(dq, tq);
        a_.mov(s, 0x3333333333333333ull);
        a_.mov(tq, dq);
        a_.and_(tq, s);
        a_.shr(dq, 2);
        a_.and_(dq, s);
        a_.add(dq, tq);
        a_.mov(tq, dq);
        a_.shr(tq, 4);
        a_.add(dq, tq);
        a_.mov(s, 0x0f0f0f0f0f0f0f0full);
        a_.and_(dq, s);
        a_.mov(s, 0x0101010101010101ull);
        a_.imul(dq, s);
        a_.shr(dq, 56);
        return;
    }
    }
}

void Emitter::emit_cvt_from_int(uint32_t i, const MInst& m) {
    // Operands: source gpr, destination xmm, temp gpr.
    bool f32 = m.size == 4;
    x86::Gp src = gpr(i, 0, m.size2);
    x86::Xmm d = xmm(i, 1);
    a_.xorps(d, d);
    if (m.flags & mflags::kSigned) {
        if (f32) a_.cvtsi2ss(d, src);
        else a_.cvtsi2sd(d, src);
        return;
    }
    // Unsigned 64-bit: values with the top bit set convert (x >> 1) | (x & 1)
    // and double the result; the or'ed low bit keeps the rounding correct.
    x86::Gp s = src.r64(), t = gpr(i, 2, 8), k = x86::gpq(kScratchGpr);
    Label big = a_.newLabel(), done = a_.newLabel();
    a_.test(s, s);
    a_.js(big);
    if (f32) a_.cvtsi2ss(d, s);
    else a_.cvtsi2sd(d, s);
    a_.jmp(done);
    a_.bind(big);
    a_.mov(t, s);
    a_.shr(t, 1);
    a_.mov(k, s);
    a_.and_(k, 1);
    a_.or_(t, k);
    if (f32) {
        a_.cvtsi2ss(d, t);
        a_.addss(d, d);
    } else {
        a_.cvtsi2sd(d, t);
        a_.addsd(d, d);
    }
    a_.bind(done);
}

void Emitter::emit_cvt_to_int(uint32_t i, const MInst& m) {
    // Operands: source xmm, destination gpr, temp gpr, temp xmm.
    bool f32 = m.size == 4;
    unsigned bits = m.size2 * 8;
    bool is_signed = m.flags & mflags::kSigned;
    bool sat = m.flags & mflags::kSaturate;
    x86::Xmm x = xmm(i, 0), tf = xmm(i, 3);
    x86::Gp d64 = gpr(i, 1, 8), t64 = gpr(i, 2, 8);
    Label done = a_.newLabel();
    auto ucomi = [&](x86::Xmm a, x86::Xmm b) {
        if (f32) a_.ucomiss(a, b);
        else a_.ucomisd(a, b);
    };
    auto konst = [&](double v) { load_fconst(tf, float_bits_of(v, m.size), m.size); };
    auto cvt64 = [&](x86::Gp dst, x86::Xmm src) {
        if (f32) a_.cvttss2si(dst, src);
        else a_.cvttsd2si(dst, src);
    };
    // Bounds: the largest power of two above the range, and the lower end.
    double two_b = bits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t{1} << bits);
    double half = two_b / 2;
    Label nan = a_.newLabel();
    ucomi(x, x);
    if (sat) a_.jp(nan);
    else a_.jp(trap_label(TrapCode::kBadConversionToInteger, m.ir_inst));
    if (is_signed) {
        // Valid iff MIN-1 < x < MAX+1. MIN-1 is exact for i8/i16 (and i32 in
        // f64); otherwise no float lies strictly between MIN-1 and MIN.
        double min = -half;
        bool strict = bits < 32 || (bits == 32 && !f32);
        double lo = strict ? min - 1 : min;
        Label low_bad = sat ? a_.newLabel() : trap_label(TrapCode::kIntegerOverflow, m.ir_inst);
        Label high_bad = sat ? a_.newLabel() : trap_label(TrapCode::kIntegerOverflow, m.ir_inst);
        konst(sat ? min : lo);
        ucomi(x, tf);  // x vs bound: CF=1 when x < bound
        if (sat || !strict) a_.jb(low_bad);
        else a_.jbe(low_bad);
        konst(half);
        ucomi(x, tf);
        a_.jae(high_bad);
        cvt64(d64, x);
        a_.jmp(done);
        if (sat) {
            a_.bind(low_bad);
            a_.mov(d64, static_cast<int64_t>(bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))));
            a_.jmp(done);
            a_.bind(high_bad);
            a_.mov(d64, static_cast<int64_t>(bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1));
            a_.jmp(done);
        }
    } else {
        // Valid iff -1 < x < 2^B.
        Label low_bad = sat ? a_.newLabel() : trap_label(TrapCode::kIntegerOverflow, m.ir_inst);
        Label high_bad = sat ? a_.newLabel() : trap_label(TrapCode::kIntegerOverflow, m.ir_inst);
        konst(sat ? 0.0 : -1.0);
        ucomi(x, tf);
        if (sat) a_.jb(low_bad);  // x < 0 (incl. -0.0 is not below 0): result 0
        else a_.jbe(low_bad);     // x <= -1
        konst(two_b);
        ucomi(x, tf);
        a_.jae(high_bad);
        if (bits < 64) {
            cvt64(d64, x);
        } else {
            Label small = a_.newLabel();
            konst(half);
            ucomi(x, tf);
            a_.jb(small);
            // x >= 2^63: convert x - 2^63 and set the top bit.
            x86::Xmm xc = x86::xmm(kScratchXmm);
            a_.movaps(xc, x);
            if (f32) a_.subss(xc, tf);
            else a_.subsd(xc, tf);
            cvt64(d64, xc);
            a_.mov(t64, 0x8000000000000000ull);
            a_.or_(d64, t64);
            a_.jmp(done);
            a_.bind(small);
            cvt64(d64, x);
        }
        a_.jmp(done);
        if (sat) {
            a_.bind(low_bad);
            a_.xor_(d64.r32(), d64.r32());
            a_.jmp(done);
            a_.bind(high_bad);
            if (bits == 64) a_.mov(d64, -1);
            else a_.mov(d64, static_cast<int64_t>((uint64_t{1} << bits) - 1));
            a_.jmp(done);
        }
    }
    if (sat) {
        a_.bind(nan);
        a_.xor_(d64.r32(), d64.r32());
    }
    a_.bind(done);
}

void Emitter::emit_load(uint32_t i, const MInst& m) {
    unsigned dk = 0;  // index of the destination operand
    enc::Mem src{0, static_cast<int32_t>(m.imm)};
    if (m.base != MemBase::Reg) {
        // An incoming stack argument [rbp + imm] or a return area [rsp + imm].
        src.base = m.base == MemBase::Fp ? regs::RBP : regs::RSP;
    } else {
        src = mem_at(i, m, 0);
        dk = after_mem(m, 0);
    }
    x86::Mem mem = x86_mem(src, 0);
    bool is_float = m.flags & mflags::kFloat;
    bool big = m.flags & mflags::kBig;
    bool trap = m.flags & mflags::kTrapSite;
    unsigned size = m.size;
    if (is_float) {
        if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
        if (!big) {
            put(enc::sse_rm(at(), size == 4 ? 0xF3 : 0xF2, 0x10, reg(i, dk), src));  // movss / movsd
            return;
        }
        x86::Xmm d = xmm(i, dk);
        x86::Gp s = gp(kScratchGpr, size);
        mem.setSize(size);
        a_.mov(s, mem);
        a_.bswap(s);
        if (size == 4) a_.movd(d, s);
        else a_.movq(d, s);
        return;
    }
    uint8_t dh = reg(i, dk);
    mem.setSize(size);
    if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
    bool is_signed = m.flags & mflags::kSigned;
    unsigned to = m.size2;  // 0: plain load
    if (!big && to != 0 && is_signed) {
        if (size == 4) a_.movsxd(gp(dh, 8), mem);
        else a_.movsx(gp(dh, to == 8 ? 8 : 4), mem);
        return;
    }
    // Plain or zero-extending load (narrow values land zero-extended).
    if (size <= 2) put(enc::movzx_load(at(), size, dh, src));
    else put(enc::load(at(), size, dh, src));
    if (!big) return;
    if (size == 2) a_.rol(gp(dh, 2), 8);
    else if (size >= 4) a_.bswap(gp(dh, size));
    if (to == 0) return;
    if (is_signed) {
        if (size == 1) a_.movsx(gp(dh, 8), gp(dh, 1));
        else if (size == 2) a_.movsx(gp(dh, 8), gp(dh, 2));
        else a_.movsxd(gp(dh, 8), gp(dh, 4));
    } else if (size == 2) {
        a_.movzx(gp(dh, 4), gp(dh, 2));
    }
}

void Emitter::emit_store(uint32_t i, const MInst& m) {
    // An outgoing stack argument [rsp + imm] or a tail call's stack
    // argument in the incoming area [rbp + imm].
    const enc::Mem dst = m.base != MemBase::Reg
                             ? enc::Mem{m.base == MemBase::Sp ? regs::RSP : regs::RBP, static_cast<int32_t>(m.imm)}
                             : mem_at(i, m, 1);
    unsigned size = m.size;
    bool big = m.flags & mflags::kBig;
    bool trap = m.flags & mflags::kTrapSite;
    if (m.flags & mflags::kFloat) {
        if (!big) {
            if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
            put(enc::sse_rm(at(), size == 4 ? 0xF3 : 0xF2, 0x11, reg(i, 0), dst));  // movss / movsd
            return;
        }
        x86::Xmm v = xmm(i, 0);
        x86::Mem mem = x86_mem(dst, size);
        x86::Gp s = gp(kScratchGpr, size);
        if (size == 4) a_.movd(s, v);
        else a_.movq(s, v);
        a_.bswap(s);
        if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
        a_.mov(mem, s);
        return;
    }
    uint8_t v = reg(i, 0);
    if (big && size > 1) {
        put(enc::mov_rr(at(), 8, kScratchGpr, v));
        if (size == 2) put(enc::shift_ri(at(), enc::Shift::Rol, 2, kScratchGpr, 8));
        else a_.bswap(gp(kScratchGpr, size));
        v = kScratchGpr;
    }
    if (trap) record_trap(TrapCode{m.trap}, m.ir_inst);
    put(enc::store(at(), size, dst, v));
}

void Emitter::emit_tail_call(uint32_t i, const MInst& m) {
    // The register arguments are in place, and so is everything at or above
    // the caller's incoming area. The callee address goes to r11 first (r11
    // is never allocated); rax and r10 are free scratch here: neither is an
    // argument register, and nothing else is live.
    x86::Gp target = x86::gpq(kScratchGpr);
    if (m.op == Op::TailCall) {
        a_.mov(target, x86::qword_ptr(symbol_slot(m.aux)));
        out_.slot_refs.push_back(offset() - 4);
        a_.mov(target, x86::qword_ptr(target));
    } else {
        a_.mov(target, gpr(i, 0, 8));
    }
    // A = the area this function was called with, B = the callee's. Both
    // areas end at the same address (the caller's caller's rsp + A), so
    // the callee's `ret B` leaves rsp where our `ret A` would have.
    const int32_t a = static_cast<int32_t>(vc_.incoming_args_popped);
    const int32_t b = static_cast<int32_t>(m.imm);
    if (b <= a) {
        // Lowering stored the stack arguments at the top of our incoming
        // area ([rbp + 16 + A - B ..]); the return address moves up to
        // just below them.
        pop_frame();
        if (b < a) {
            a_.mov(x86::rax, x86::qword_ptr(x86::rsp));
            a_.add(x86::rsp, a - b);
            a_.mov(x86::qword_ptr(x86::rsp), x86::rax);
        }
        a_.jmp(target);
        return;
    }
    // The callee needs more than we received: its arguments are at [rsp ..
    // rsp + B) of this frame, and its return-address slot is R = rbp + 8 +
    // A - B, below our own. The frame holds that B-byte outgoing area, so
    // R + 8 > rsp: the copy goes to higher addresses and, done from the top
    // down in 16-byte pieces, never overwrites a piece before reading it.
    // The return address, the callee-saved registers and rbp are read
    // before the copy runs over them; the return address is written last
    // (R may lie inside the source).
    a_.lea(x86::r10, x86::ptr(x86::rbp, 8 + a - b));
    a_.mov(x86::rax, x86::qword_ptr(x86::rbp, 8));
    for (size_t k = 0; k < saved_.size(); ++k) {
        a_.mov(x86::gpq(saved_[k]), x86::qword_ptr(x86::rbp, -8 * static_cast<int32_t>(k + 1)));
    }
    a_.mov(x86::rbp, x86::qword_ptr(x86::rbp));
    x86::Xmm t = x86::xmm(kScratchXmm);
    for (int32_t off = b - 16; off >= 0; off -= 16) {
        a_.movups(t, x86::ptr(x86::rsp, off));
        a_.movups(x86::ptr(x86::r10, 8 + off), t);
    }
    a_.mov(x86::qword_ptr(x86::r10), x86::rax);
    a_.mov(x86::rsp, x86::r10);
    a_.jmp(target);
}

void Emitter::emit_fminmax(uint32_t i, const MInst& m) {
    // wasm min/max: NaN if either is NaN; equal operands (±0) combine bits.
    bool f32 = m.size == 4, is_min = m.flags & mflags::kMin;
    x86::Xmm d = xmm(i, 2), y = xmm(i, 1);
    Label nan = a_.newLabel(), normal = a_.newLabel(), done = a_.newLabel();
    if (f32) a_.ucomiss(d, y);
    else a_.ucomisd(d, y);
    a_.jp(nan);
    a_.jne(normal);
    if (is_min) a_.orps(d, y);
    else a_.andps(d, y);
    a_.jmp(done);
    a_.bind(nan);
    if (f32) a_.addss(d, y);
    else a_.addsd(d, y);
    a_.jmp(done);
    a_.bind(normal);
    if (is_min) {
        if (f32) a_.minss(d, y);
        else a_.minsd(d, y);
    } else {
        if (f32) a_.maxss(d, y);
        else a_.maxsd(d, y);
    }
    a_.bind(done);
}

void Emitter::emit_inst(uint32_t i, uint32_t next_block) {
    // The forms the encoder has (all of an instruction, or of its common
    // sizes and immediates); everything else goes to emit_inst_asmjit.
    const MInst& m = vc_.insts[i];
    const unsigned size = m.size;
    const Allocation* ops = al_.allocs.data() + rf().operands_begin[i];
    auto r = [ops](unsigned k) { return ops[k].as_reg().hw; };
    switch (m.op) {
    case Op::Nop:
    case Op::Args:
        return;
    case Op::MovRR:
        if (r(0) != r(1)) put(enc::mov_rr(at(), 8, r(1), r(0)));
        return;
    case Op::MovImm: {
        const int64_t v = m.imm;
        if (v == 0) put(enc::alu_rr(at(), enc::Alu::Xor, 4, r(0), r(0)));
        else if (v > 0 && v <= UINT32_MAX) put(enc::mov_r32_imm(at(), r(0), static_cast<uint32_t>(v)));
        else put(enc::mov_r64_imm(at(), r(0), v));
        return;
    }
    case Op::Ext:
        if (m.flags & mflags::kSigned) break;
        if (m.size == 4) put(enc::mov_rr(at(), 4, r(1), r(0)));
        else put(enc::movzx_rr(at(), m.size, r(1), r(0)));
        return;
    case Op::Alu: {
        const auto op = static_cast<AluOp>(m.sub);
        if (op != AluOp::Imul) put(enc::alu_rr(at(), alu_of(op), size, r(2), r(1)));
        else if (size >= 2) put(enc::imul_rr(at(), size, r(2), r(1)));
        else break;
        return;
    }
    case Op::AluImm: {
        const auto op = static_cast<AluOp>(m.sub);
        const int32_t k = static_cast<int32_t>(m.imm);
        if (op == AluOp::Imul || !fits_signed(k, size)) break;
        put(enc::alu_ri(at(), alu_of(op), size, r(1), k));
        return;
    }
    case Op::AluMem: {
        if (m.flags & mflags::kTrapSite) record_trap(TrapCode{m.trap}, m.aux2);
        if (size < 2) break;
        const auto op = static_cast<AluOp>(m.sub);
        const enc::Mem src = mem_at(i, m, 1);
        const uint8_t d = r(after_mem(m, 1));
        if (op == AluOp::Imul) put(enc::imul_rm(at(), size, d, src));
        else put(enc::alu_rm(at(), alu_of(op), size, d, src));
        return;
    }
    case Op::CmpMem:
        if (m.flags & mflags::kTrapSite) record_trap(TrapCode{m.trap}, m.aux2);
        if (size < 2) break;
        put(enc::alu_rm(at(), enc::Alu::Cmp, size, r(0), mem_at(i, m, 1)));
        return;
    case Op::Unary:
        if (static_cast<UnaryOp>(m.sub) == UnaryOp::Bswap) break;
        put(enc::unary(at(), static_cast<UnaryOp>(m.sub) == UnaryOp::Not, size, r(1)));
        return;
    case Op::Shift: put(enc::shift_cl(at(), shift_of(static_cast<ShiftOp>(m.sub)), size, r(2))); return;
    case Op::ShiftImm:
        if (m.imm < 0 || m.imm >= 64) break;
        put(enc::shift_ri(at(), shift_of(static_cast<ShiftOp>(m.sub)), size, r(1), static_cast<uint8_t>(m.imm)));
        return;
    case Op::Cmp: put(enc::alu_rr(at(), enc::Alu::Cmp, size, r(0), r(1))); return;
    case Op::CmpImm: {
        const int32_t k = size == 1   ? static_cast<int8_t>(m.imm)
                          : size == 2 ? static_cast<int16_t>(m.imm)
                                      : static_cast<int32_t>(m.imm);
        put(enc::alu_ri(at(), enc::Alu::Cmp, size, r(0), k));
        return;
    }
    case Op::Test: put(enc::test_rr(at(), size, r(0), r(1))); return;
    case Op::TestImm: a_.test(gpr(i, 0, size), asmjit::imm(m.imm)); return;
    case Op::Setcc: put(enc::setcc(at(), static_cast<uint8_t>(m.cc), r(0))); return;
    case Op::Cmov:
        if (size < 2) break;
        put(enc::cmov(at(), static_cast<uint8_t>(m.cc), size, r(2), r(0)));
        return;
    case Op::Lea: put(enc::lea(at(), r(2), {r(0), static_cast<int32_t>(m.imm), r(1), m.scale})); return;
    case Op::LeaBase:
        if (m.base == MemBase::Sp) put(enc::lea(at(), r(0), {regs::RSP, static_cast<int32_t>(m.imm)}));
        else put(enc::lea(at(), r(1), {r(0), static_cast<int32_t>(m.imm)}));
        return;
    case Op::Load: emit_load(i, m); return;
    case Op::Store: emit_store(i, m); return;
    case Op::StackAddr:
        put(enc::lea(at(), r(0), {regs::RSP, static_cast<int32_t>(slot_offset_[m.aux] + m.imm)}));
        return;
    case Op::FMov:
        if (r(0) != r(1)) put(enc::sse_rr(at(), 0, 0x28, r(1), r(0)));  // movaps
        return;
    case Op::FAlu: {
        // Scalar forms: F3 (ss) / F2 (sd) 0F op; bitwise ones 0F op.
        static constexpr uint8_t kOp[] = {0x58, 0x5C, 0x59, 0x5E, 0x54, 0x56, 0x57, 0x55};
        const auto op = static_cast<FAluOp>(m.sub);
        const uint8_t pfx = op >= FAluOp::And ? 0 : size == 4 ? 0xF3 : 0xF2;
        put(enc::sse_rr(at(), pfx, kOp[static_cast<uint8_t>(op)], r(2), r(1)));
        return;
    }
    case Op::VFAlu: {
        // vaddss/sd, vsubss/sd, vmulss/sd, vdivss/sd: d = u0 op u1.
        static constexpr uint8_t kOp[] = {0x58, 0x5C, 0x59, 0x5E};
        put(enc::vex_rrr(at(), size == 4 ? 2 : 3, kOp[m.sub], r(2), r(0), r(1)));
        return;
    }
    case Op::FCmp: put(enc::sse_rr(at(), size == 4 ? 0 : 0x66, 0x2E, r(0), r(1))); return;  // ucomiss / ucomisd
    case Op::Ret: epilogue(); return;
    case Op::Jmp: {
        // A jump to a lone return returns right here (a few bytes more than
        // the jump), unless the return is the next block anyway.
        const uint32_t t = final_target(m.aux);
        if ((frameless_ || t != final_target(next_block)) && is_lone_return(t)) {
            epilogue();
            return;
        }
        jump_to_block(std::nullopt, m.aux, next_block);
        return;
    }
    case Op::Jcc:
        if (final_target(m.aux) == final_target(next_block)) {
            jump_to_block(invert(m.cc), m.aux2, next_block);
            return;
        }
        jump_to_block(m.cc, m.aux, kNoBlock);
        jump_to_block(std::nullopt, m.aux2, next_block);
        return;
    case Op::JccFloat: {
        const uint32_t t = final_target(m.aux);
        if (m.cc == Cond::FEq) {
            emit_block_jump(static_cast<uint8_t>(Cond::P), kSkipNext);
            emit_block_jump(static_cast<uint8_t>(Cond::E), t);
        } else if (m.cc == Cond::FNe) {
            emit_block_jump(static_cast<uint8_t>(Cond::P), t);
            emit_block_jump(static_cast<uint8_t>(Cond::NE), t);
        } else {
            emit_block_jump(static_cast<uint8_t>(m.cc), t);
        }
        jump_to_block(std::nullopt, m.aux2, next_block);
        return;
    }
    default: break;
    }
    emit_inst_asmjit(i, m);
}

// The rest of emit_inst: what the encoder does not have, through asmjit.
void Emitter::emit_inst_asmjit(uint32_t i, const MInst& m) {
    unsigned size = m.size;
    switch (m.op) {
    case Op::Ext: {  // signed (emit_inst encodes the unsigned forms)
        uint8_t s = reg(i, 0), d = reg(i, 1);
        if (m.size == 4) a_.movsxd(gp(d, 8), gp(s, 4));
        else a_.movsx(gp(d, m.size2 == 8 ? 8 : 4), gp(s, m.size));
        return;
    }
    case Op::Alu: {  // 8-bit imul
        x86::Gp d = gpr(i, 2, size), b = gpr(i, 1, size);
        switch (static_cast<AluOp>(m.sub)) {
        case AluOp::Add: a_.add(d, b); break;
        case AluOp::Sub: a_.sub(d, b); break;
        case AluOp::And: a_.and_(d, b); break;
        case AluOp::Or: a_.or_(d, b); break;
        case AluOp::Xor: a_.xor_(d, b); break;
        case AluOp::Imul: a_.imul(d, b); break;
        case AluOp::Adc: a_.adc(d, b); break;
        case AluOp::Sbb: a_.sbb(d, b); break;
        }
        return;
    }
    case Op::AluImm: {  // imul, or an immediate outside the size's signed range
        int32_t k = static_cast<int32_t>(m.imm);
        x86::Gp d = gpr(i, 1, size);
        switch (static_cast<AluOp>(m.sub)) {
        case AluOp::Add: a_.add(d, k); break;
        case AluOp::Sub: a_.sub(d, k); break;
        case AluOp::And: a_.and_(d, k); break;
        case AluOp::Or: a_.or_(d, k); break;
        case AluOp::Xor: a_.xor_(d, k); break;
        case AluOp::Imul: a_.imul(d, gpr(i, 0, size), k); break;
        case AluOp::Adc: a_.adc(d, k); break;
        case AluOp::Sbb: a_.sbb(d, k); break;
        }
        return;
    }
    case Op::AluMem: {  // 8-bit; the trap site is recorded
        x86::Gp d = gpr(i, after_mem(m, 1), size);
        x86::Mem mem = x86_mem(mem_at(i, m, 1), size);
        switch (static_cast<AluOp>(m.sub)) {
        case AluOp::Add: a_.add(d, mem); break;
        case AluOp::Sub: a_.sub(d, mem); break;
        case AluOp::And: a_.and_(d, mem); break;
        case AluOp::Or: a_.or_(d, mem); break;
        case AluOp::Xor: a_.xor_(d, mem); break;
        case AluOp::Imul: a_.imul(d, mem); break;
        case AluOp::Adc: a_.adc(d, mem); break;
        case AluOp::Sbb: a_.sbb(d, mem); break;
        }
        return;
    }
    case Op::CmpMemZero:
        if (m.flags & mflags::kTrapSite) record_trap(TrapCode{m.trap}, m.aux2);
        a_.cmp(x86_mem(mem_at(i, m, 0), size), 0);
        return;
    case Op::CmpMem: {  // 8-bit; the trap site is recorded
        a_.cmp(gpr(i, 0, size), x86_mem(mem_at(i, m, 1), size));
        return;
    }
    case Op::FAluMem: {
        x86::Xmm d = xmm(i, after_mem(m, 1));
        x86::Mem mem = x86_mem(mem_at(i, m, 1), size);
        if (m.flags & mflags::kTrapSite) record_trap(TrapCode{m.trap}, m.aux2);
        bool f32 = size == 4;
        switch (static_cast<FAluOp>(m.sub)) {
        case FAluOp::Add: f32 ? a_.addss(d, mem) : a_.addsd(d, mem); break;
        case FAluOp::Sub: f32 ? a_.subss(d, mem) : a_.subsd(d, mem); break;
        case FAluOp::Mul: f32 ? a_.mulss(d, mem) : a_.mulsd(d, mem); break;
        case FAluOp::Div: f32 ? a_.divss(d, mem) : a_.divsd(d, mem); break;
        default: errors_.first = "falu_mem: operation without a memory form"; break;
        }
        return;
    }
    case Op::Unary: a_.bswap(gpr(i, 1, size)); return;  // neg and not are encoded by emit_inst
    case Op::ShiftImm: {  // a count outside 0-63
        x86::Gp d = gpr(i, 1, size);
        switch (static_cast<ShiftOp>(m.sub)) {
        case ShiftOp::Shl: a_.shl(d, m.imm); break;
        case ShiftOp::Shr: a_.shr(d, m.imm); break;
        case ShiftOp::Sar: a_.sar(d, m.imm); break;
        case ShiftOp::Rol: a_.rol(d, m.imm); break;
        case ShiftOp::Ror: a_.ror(d, m.imm); break;
        }
        return;
    }
    case Op::BitCount: emit_bitcount(i, m); return;
    case Op::Cmov: a_.cmov(cc_of(m.cc), gpr(i, 2, size), gpr(i, 0, size)); return;  // 8-bit
    case Op::MulWide: {
        x86::Gp y = gpr(i, 1, size);
        if (m.flags & mflags::kSigned) a_.imul(y);
        else a_.mul(y);
        return;
    }
    case Op::Div: emit_div(i, m); return;
    case Op::FConst: load_fconst(xmm(i, 0), static_cast<uint64_t>(m.imm), size); return;
    case Op::FUnary: {
        x86::Xmm s = xmm(i, 0), d = xmm(i, 1);
        bool f32 = size == 4;
        auto round = [&](uint32_t mode) { f32 ? a_.roundss(d, s, mode) : a_.roundsd(d, s, mode); };
        switch (static_cast<FUnaryOp>(m.sub)) {
        case FUnaryOp::Sqrt: f32 ? a_.sqrtss(d, s) : a_.sqrtsd(d, s); break;
        case FUnaryOp::Ceil: round(0x0a); break;
        case FUnaryOp::Floor: round(0x09); break;
        case FUnaryOp::Trunc: round(0x0b); break;
        case FUnaryOp::Nearest: round(0x08); break;
        case FUnaryOp::Promote: a_.cvtss2sd(d, s); break;
        case FUnaryOp::Demote: a_.cvtsd2ss(d, s); break;
        }
        return;
    }
    case Op::FMinMax: emit_fminmax(i, m); return;
    case Op::Fma:
        if (size == 4) a_.vfmadd213ss(xmm(i, 3), xmm(i, 1), xmm(i, 2));
        else a_.vfmadd213sd(xmm(i, 3), xmm(i, 1), xmm(i, 2));
        return;
    case Op::GprToXmm:
        if (size == 4) a_.movd(xmm(i, 1), gpr(i, 0, 4));
        else a_.movq(xmm(i, 1), gpr(i, 0, 8));
        return;
    case Op::XmmToGpr:
        if (size == 4) a_.movd(gpr(i, 1, 4), xmm(i, 0));
        else a_.movq(gpr(i, 1, 8), xmm(i, 0));
        return;
    case Op::CvtIntToFloat: emit_cvt_from_int(i, m); return;
    case Op::CvtFloatToInt: emit_cvt_to_int(i, m); return;
    case Op::BrTable: {
        // `cmp idx, n; jae default; lea r11, [table]; add r11, [r11+idx*8];
        // jmp r11`: the table holds one 64-bit offset (from the table start)
        // per entry, so r11 is the only register it needs. The index is
        // zero-extended (lowering). The default's entry follows, unused.
        const std::vector<uint32_t>& t = vc_.jump_tables[m.aux];
        const x86::Gp idx = gpr(i, 0, 8), scratch = x86::gpq(kScratchGpr);
        Label table = a_.newLabel();
        table_labels_[m.aux] = table;
        a_.cmp(idx, static_cast<uint32_t>(t.size() - 1));
        jump_to_block(Cond::AE, t[0], kNoBlock);
        a_.lea(scratch, x86::ptr(table));
        a_.add(scratch, x86::qword_ptr(scratch, idx, 3));
        a_.jmp(scratch);
        return;
    }
    case Op::Call:
        // The slot holds the address of the callee's GOT cell (compiled_code.h).
        a_.mov(x86::gpq(kScratchGpr), x86::qword_ptr(symbol_slot(m.aux)));
        out_.slot_refs.push_back(offset() - 4);
        a_.call(x86::qword_ptr(x86::gpq(kScratchGpr)));
        if (m.imm) a_.sub(x86::rsp, static_cast<int32_t>(m.imm));  // a tail callee popped its arguments
        return;
    case Op::CallInd:
        a_.call(gpr(i, 0, 8));
        if (m.imm) a_.sub(x86::rsp, static_cast<int32_t>(m.imm));
        return;
    case Op::TailCall:
    case Op::TailCallInd: emit_tail_call(i, m); return;
    case Op::FuncAddr:
        a_.mov(gpr(i, 0, 8), x86::qword_ptr(symbol_slot(m.aux)));
        out_.slot_refs.push_back(offset() - 4);
        a_.mov(gpr(i, 0, 8), x86::qword_ptr(gpr(i, 0, 8)));
        return;
    case Op::Trap:
        record_trap(TrapCode{m.trap}, m.ir_inst);
        a_.ud2();
        return;
    case Op::TrapIf: a_.j(cc_of(m.cc), trap_label(m.trap, m.ir_inst)); return;
    case Op::TrapIfFloat: jcc_float(m.cc, trap_label(m.trap, m.ir_inst)); return;
    case Op::TrapIfZero: {
        x86::Gp x = gpr(i, 0, size);
        a_.test(x, x);
        a_.jz(trap_label(m.trap, m.ir_inst));
        return;
    }
    default: return;  // encoded by emit_inst
    }
}

void Emitter::compute_forwarding() {
    EmitterBase::compute_forwarding(
        vc_, al_, [](const MInst& m) { return m.op == Op::Jmp; }, st_.next, forward_);
    forward_.back() = kNoBlock;
}

void Emitter::jump_to_block(std::optional<Cond> cond, uint32_t target, uint32_t next_block) {
    target = final_target(target);
    if (next_block != kNoBlock && target == final_target(next_block)) return;
    emit_block_jump(cond ? static_cast<uint8_t>(*cond) : kAlways, target);
}

void Emitter::emit_block_jump(uint8_t cc, uint32_t target) {
    jumps_.push_back({offset(), target, cc, false});
    // The displacement is written by relax_block_jumps; zeros until then.
    uint8_t* p = at();
    std::memset(p, 0, 6);
    if (target == kSkipNext) {
        p[0] = static_cast<uint8_t>(0x70 | cc);  // jcc rel8
        p += 2;
    } else if (cc == kAlways) {
        p[0] = 0xE9;  // jmp rel32
        p += 5;
    } else {
        p[0] = 0x0F;  // jcc rel32
        p[1] = static_cast<uint8_t>(0x80 | cc);
        p += 6;
    }
    put(p);
}

uint32_t Emitter::relaxed(uint32_t x) const {
    // Every jump that starts before x has dropped its bytes.
    auto k = std::partition_point(jumps_.begin(), jumps_.end(), [&](const BlockJump& j) { return j.at < x; }) - jumps_.begin();
    return x - removed_[static_cast<size_t>(k)];
}

// Branch relaxation in one pass over the jumps (the code is emitted once):
// every block jump was emitted long. A jump takes the short form (2 bytes)
// when its target lies within rel8 of it; dropping bytes only brings
// targets closer, so a jump once short stays in reach, and a few rounds
// (each measuring with the previous round's choices) find the jumps that
// came into reach. Then the code is closed up from the first jump on (one
// memmove per jump), every jump written with its final displacement, and
// the offsets recorded so far (IR instructions, labels, trap sites, the
// pending label links of the trap stubs, jump tables and call-target
// slots, which come after the code) moved with it. Nothing else in the
// blocks depends on positions: labels inside one instruction's expansion
// never span a block jump.
void Emitter::relax_block_jumps() {
    const size_t n = jumps_.size();
    removed_.assign(n + 1, 0);
    if (n == 0) return;
    auto size_of = [&](const BlockJump& j) { return j.short_form ? 2u : long_size(j); };
    auto sum_removed = [&] {
        for (size_t k = 0; k < n; ++k) {
            const BlockJump& j = jumps_[k];
            removed_[k + 1] = removed_[k] + long_size(j) - size_of(j);
        }
    };
    auto block_start = [&](uint32_t b) { return block_offset_[b] - removed_[first_jump_[b]]; };
    for (int round = 0; round < 4; ++round) {
        sum_removed();
        bool changed = false;
        for (size_t k = 0; k < n; ++k) {
            BlockJump& j = jumps_[k];
            if (j.short_form || j.target == kSkipNext) continue;
            const int64_t start = int64_t{j.at} - removed_[k];
            const int64_t to = block_start(j.target);
            // A forward target moves back with this jump's own bytes.
            const int64_t disp = block_offset_[j.target] > j.at ? to - (start + long_size(j))
                                                                : to - (start + 2);
            if (disp >= -128 && disp <= 127) j.short_form = changed = true;
        }
        if (!changed) break;
    }
    sum_removed();

    uint8_t* buf = code_.textSection()->buffer()._data;
    const uint32_t end = offset();
    uint32_t r = jumps_[0].at, w = r;  // read and write positions
    for (size_t k = 0; k < n; ++k) {
        const BlockJump& j = jumps_[k];
        std::memmove(buf + w, buf + r, j.at - r);
        w += j.at - r;
        r = j.at + long_size(j);
        if (j.target == kSkipNext) {
            buf[w] = static_cast<uint8_t>(0x70 | j.cc);
            buf[w + 1] = static_cast<uint8_t>(k + 1 < n ? size_of(jumps_[k + 1]) : 0);
            w += 2;
            continue;
        }
        const int64_t to = block_start(j.target);
        if (j.short_form) {
            buf[w] = j.cc == kAlways ? 0xEB : static_cast<uint8_t>(0x70 | j.cc);
            buf[w + 1] = static_cast<uint8_t>(static_cast<int8_t>(to - (w + 2)));
            w += 2;
            continue;
        }
        if (j.cc == kAlways) {
            buf[w++] = 0xE9;
        } else {
            buf[w++] = 0x0F;
            buf[w++] = static_cast<uint8_t>(0x80 | j.cc);
        }
        const int32_t disp = static_cast<int32_t>(to - (w + 4));
        std::memcpy(buf + w, &disp, 4);
        w += 4;
    }
    std::memmove(buf + w, buf + r, end - r);
    w += end - r;
    a_.setOffset(w);
    code_.textSection()->buffer()._size = w;

    for (uint32_t b = 0; b < block_offset_.size(); ++b) {
        if (first_jump_[b] != kNoBlock) block_offset_[b] = block_start(b);
    }
    // Labels, IR offsets and trap sites were recorded in code order: one
    // walk along the jumps each.
    auto relax_in_order = [&](auto& items, auto&& offset_of) {
        size_t k = 0;
        for (auto& item : items) {
            uint32_t& off = offset_of(item);
            while (k < n && jumps_[k].at < off) ++k;
            off -= removed_[k];
        }
    };
    relax_in_order(out_.labels, [](auto& l) -> uint32_t& { return l.first; });
    relax_in_order(out_.ir_insts, [](auto& l) -> uint32_t& { return l.first; });
    relax_in_order(out_.trap_sites, [](CodeTrapSite& t) -> uint32_t& { return t.offset; });
    relax_in_order(out_.slot_refs, [](uint32_t& at) -> uint32_t& { return at; });
    const auto& entries = code_.labelEntries();
    for (uint32_t id = first_label(); id < entries.size(); ++id) {
        asmjit::LabelEntry* le = entries[id];
        if (le->isBound()) continue;
        for (asmjit::LabelLink* link = le->links(); link; link = link->next) {
            link->offset = relaxed(static_cast<uint32_t>(link->offset));
        }
    }
}

std::string Emitter::run() {
    begin(asmjit::Arch::kX64, a_, vc_, /*with_block_labels=*/false);
    text_ = &code_.textSection()->buffer();
    jumps_.clear();
    saved_.clear();
    if (std::string err = layout_frame(); !err.empty()) return err;
    uint32_t nb = rf().num_blocks();
    // One allocation each for the IR offsets (at most one per instruction)
    // and block labels of a fresh CompiledCode, instead of regrowing them.
    out_.ir_insts.reserve(vc_.insts.size());
    out_.labels.reserve(nb);
    compute_forwarding();
    block_offset_.assign(nb, 0);
    first_jump_.assign(nb, kNoBlock);

    const bool wrapped = plan_shrink_wrap();
    if (!wrapped) prologue();
    size_t edit = 0;
    const std::vector<uint32_t>& order = code_order(vc_, st_.order);
    for (uint32_t k = 0; k < nb; ++k) {
        // A forwarded block has no code: jumps to it go to its final target.
        const uint32_t b = order[k];
        if (final_target(b) != b) continue;
        // The next block with code; `nb` ("after the last block") never
        // matches a target.
        uint32_t n = k + 1;
        while (n < nb && final_target(order[n]) != order[n]) ++n;
        const uint32_t next = n < nb ? order[n] : nb;
        block_offset_[b] = offset();
        first_jump_[b] = static_cast<uint32_t>(jumps_.size());
        if (wrapped) {
            frameless_ = wrap_[b] == kFrameless;
            if (wrap_[b] == kPrologue) prologue();
        }
        // Both inlined into the block loop (a call per instruction costs
        // ~16 Ir at BM_EndToEnd/1000).
        emit_block(
            vc_, al_, b, edit, [&](uint32_t i) __attribute__((always_inline)) { emit_inst(i, next); },
            [&](const ra::Edit& e) __attribute__((always_inline)) { emit_edit(e); });
    }
    relax_block_jumps();
    emit_trap_stubs([&] { a_.ud2(); });
    emit_jump_tables(vc_.jump_tables, [&](uint32_t b, const Label& table) {
        a_.embedInt64(static_cast<int64_t>(block_offset_[final_target(b)]) - static_cast<int64_t>(code_.labelOffset(table)));
    });
    if (std::any_of(symbol_slots_.begin(), symbol_slots_.end(), [](const Label& l) { return l.isValid(); })) {
        emit_symbol_slots(vc_.symbols, /*align_always=*/true);
    } else {
        // The end aligned to 8 as asmjit's data alignment does it (int3
        // filler), without its call.
        uint8_t* p = at();
        const uint32_t pad = (8 - offset() % 8) % 8;
        std::memset(p, 0xCC, pad);
        put(p + pad);
    }
    return finish("x86-64");
}

}  // namespace

std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc,
                          const Settings& settings, CompiledCode& out, EmitContext& ctx) {
    // One pass; block jumps are relaxed at the end of the code (see
    // relax_block_jumps).
    out.clear();
    Emitter e(func, vcode, alloc, settings, out, ctx.state());
    return e.run();
}

std::string emit_function(const Function& func, const VCode& vcode, const ra::Output& alloc,
                          const Settings& settings, CompiledCode& out) {
    EmitContext ctx;
    return emit_function(func, vcode, alloc, settings, out, ctx);
}

}  // namespace heron::x64
