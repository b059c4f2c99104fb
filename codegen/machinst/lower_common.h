// What every backend's lowering shares (codegen/isa/*/lower.cpp): the
// VCode container, the value -> virtual register plumbing, the back-to-front
// instruction buffer, the block loop and the allocator's block arrays.
// Everything here is ISA-neutral; an ISA's Lowerer derives from
// LowerBase<its VCode> and adds its instruction selection.
//
// Lowering runs over the blocks of BlockOrder in reverse emission order and
// backwards within each block, so every use of a value is seen before its
// definition: a pure instruction whose results no emitted instruction reads
// (each user folded it — an iconst into an immediate, an icmp into a
// branch) is not emitted at all. The instruction, operand-count and
// operand buffers grow downward (from their end towards their start): the
// machine instructions of one IR instruction are pushed in program order
// and reversed as a group when it is done, after which everything lowered
// so far sits in program order at the buffers' ends, and `finish_insts`
// copies it out in one piece.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/machinst/abi.h"
#include "codegen/machinst/block_order.h"
#include "codegen/regalloc/regalloc.h"

namespace heron {

/// Machine code over virtual registers, for an ISA's machine instruction
/// type `MInst` (which has `op`, `ir_inst` and the ISA's other fields).
template <class MInst>
struct VCodeBase {
    ra::Function ra;
    std::vector<MInst> insts;
    std::vector<uint32_t> block_ir;                   // IR block per VCode block; ~0u for edge blocks
    std::vector<uint32_t> layout;                     // VCode blocks in code order (BlockOrder::layout)
    std::vector<std::vector<uint32_t>> jump_tables;   // BrTable targets (VCode blocks), default first
    std::vector<ExternalName> symbols;                // Call / FuncAddr targets, by MInst::aux
    uint32_t outgoing_args_size = 0;                  // bytes of stack arguments of the largest call
    uint32_t incoming_args_popped = 0;                // `tail` convention: stack-argument bytes `ret` pops

    void clear() {
        clear_for_lowering();
        ra.clear();
        block_ir.clear();
    }
    uint32_t num_blocks() const { return ra.num_blocks(); }

    /// clear() before lowering into this VCode again: the allocator's
    /// block and instruction arrays, which lowering resizes and then writes
    /// in full (build_ra_blocks, LowerBase::finish_insts), and block_ir keep
    /// their elements, so that resizing them to the next function's sizes
    /// fills nothing when a size repeats (a clear() makes every resize fill
    /// the whole array, a library call each). A lowering that fails calls
    /// clear(), so no stale array outlives it.
    void clear_for_lowering() {
        ra.num_vregs = 0;
        ra.clobbers.clear();
        insts.clear();
        layout.clear();
        jump_tables.clear();
        symbols.clear();
        outgoing_args_size = 0;
        incoming_args_popped = 0;
    }
};

inline ra::RegClass reg_class_of(Type t) { return t.is_float() ? ra::RegClass::Float : ra::RegClass::Int; }

/// `bits` read as a signed `width`-bit integer.
inline int64_t sext(uint64_t bits, unsigned width) {
    if (width >= 64) return static_cast<int64_t>(bits);
    uint64_t m = uint64_t{1} << (width - 1);
    bits &= (uint64_t{1} << width) - 1;
    return static_cast<int64_t>((bits ^ m) - m);
}

/// The width and signedness of the memory access of a load instruction
/// (uload8 reads 1 byte unsigned, load.i32 4 bytes, ...).
struct LoadAccess {
    unsigned bytes;
    bool is_signed;
};
LoadAccess load_access(const InstructionData& d);
/// Bytes a store instruction writes; `t` is the type of the stored value.
unsigned store_bytes(Opcode op, Type t);

/// The bits of an ISA's MInst::flags that its Load and Store use.
struct MemFlagBits {
    uint8_t is_signed;  // Load: sign-extend what is read
    uint8_t is_float;   // float register
    uint8_t big;        // big-endian access
    uint8_t trap_site;  // record a trap site with MInst::trap
};

/// Whether an instruction may be left out when none of its results is
/// read: no terminator, call, trap or store.
inline bool is_pure_for_lowering(const InstructionData& d) {
    using namespace opflags;
    return (opcode_info(d.opcode).flags & (TERM | CALL | TRAP | STORE)) == 0;
}

/// The allocator's block arrays of `r` (instructions per block from
/// `block_sizes`, successors, branch arguments, block parameters,
/// predecessors, loop depths) and `block_ir`, from `order`. Loop depths
/// weight spill costs (0 throughout an irreducible function).
/// Each array is resized and then written in full (see
/// VCodeBase::clear_for_lowering).
void build_ra_blocks(const Function& f, const BlockOrder& order, const std::vector<uint32_t>& block_sizes,
                     ra::Function& r, std::vector<uint32_t>& block_ir);

/// Storage of trivial elements whose growth does not initialize them (a
/// vector's resize zero-fills the new part, which a first compile of a
/// large function would pay for nothing: every element is written before
/// it is read). LowerBase fills it from the end.
template <class T>
struct RawBuffer {
    static_assert(std::is_trivial_v<T>);
    std::unique_ptr<T[]> data;
    size_t size = 0;
    /// Makes room for `n` elements (n > size), keeping the last `keep`
    /// at the end.
    void grow_keeping_tail(size_t n, size_t keep) {
        std::unique_ptr<T[]> d(new T[n]);
        if (keep) std::memcpy(d.get() + (n - keep), data.get() + (size - keep), keep * sizeof(T));
        data = std::move(d);
        size = n;
    }
};

/// What lowering keeps from one function to the next (each ISA's TargetIsa
/// holds one): the block order with its analyses and the per-function
/// tables. Every compile clears them and reuses their memory, so once they
/// have grown, lowering a function allocates nothing here.
struct LowerContext {
    BlockOrder order;
    /// The current loops of the function being lowered when its caller has
    /// them (TargetIsa::lower's KnownAnalyses), for the block order.
    const LoopAnalysis* known_loops = nullptr;
    /// Operands as lowering writes them (filled from the end, see
    /// LowerBase::push): storage whose size only grows; finish_insts copies
    /// the used part (in program order) into ra::Function::operands.
    std::vector<ra::Operand> ops;
    /// Machine instructions as lowering writes them (from the end, as the
    /// operands): raw storage for the ISA's MInst (LowerBase; trivially
    /// copyable, 8-byte aligned) whose size only grows; finish_insts copies
    /// the used part into VCode::insts.
    RawBuffer<uint64_t> inst_words;
    RawBuffer<uint32_t> op_counts;  // operands per instruction, parallel to inst_words
    std::vector<uint32_t> block_sizes;  // instructions per VCode block
    std::vector<ra::Operand> operand_list;  // LowerBase::operand_list()
    /// A byte flag of its own type: stores through it cannot alias the
    /// IR and output arrays (a uint8_t store may alias anything, which makes
    /// the compiler reload every pointer after it).
    enum class Flag : uint8_t { No, Yes };
    std::vector<Flag> needed;                    // by value: its definition must be emitted
    SecondaryMap<Value, uint32_t> value_counts;  // for the ISA (AArch64: uses per value)
    AbiCache abi;                                // the classified signatures (LowerBase::begin_abi)
    std::vector<uint8_t> inst_marks;             // by instruction, for the ISA (x86-64: loads folded into their user)
};

/// The instruction forms the shared argument, call and return lowering
/// (LowerBase, "the ABI") emits for an ISA with instruction enum `Op`.
template <class Op>
struct AbiInsts {
    Op args;       // defines the register parameters at the entry (pattern "*")
    Op load;       // def <- [base + imm] (MInst::base; Reg: use base, def)
    Op store;      // use -> [base + imm] (Reg: use value, use base)
    Op sp_addr;    // def <- sp + imm (MInst::base = Sp)
    Op call, call_ind, tail_call, tail_call_ind;  // "*", "u*": callee address first
    Op ret;        // "*"
    uint8_t float_flag;  // the MInst::flags bit of a load or store of a float register
};

/// The ISA-neutral half of a Lowerer. `VCode` derives from VCodeBase.
template <class VCode>
class LowerBase {
protected:
    using MInstT = typename decltype(VCode::insts)::value_type;
    using OpT = decltype(MInstT::op);
    static constexpr uint32_t kNone = ~0u;

    static_assert(std::is_trivially_copyable_v<MInstT> && alignof(MInstT) <= alignof(uint64_t) &&
                  sizeof(MInstT) % sizeof(uint64_t) == 0);
    static constexpr size_t kInstWords = sizeof(MInstT) / sizeof(uint64_t);

    LowerBase(const Function& f, VCode& out, LowerContext& ctx)
        : f_(f), dfg_(f.dfg), out_(out), ctx_(ctx), order_(ctx.order), block_sizes_(ctx.block_sizes) {}

    // --- value/vreg plumbing ------------------------------------------------
    // Values take the vreg of their own number, temporaries the numbers
    // after them: the numbering cannot depend on the order in which the
    // compiler evaluates the arguments of a call like alu(use(x), use(y)).
    /// dfg.resolve_aliases(v), with the common case (not an alias) inline.
    [[gnu::always_inline]] Value resolved(Value v) const {
        if (dfg_.value_def(v).kind == ValueDef::Kind::Alias) [[unlikely]] return dfg_.resolve_aliases(v);
        return v;
    }
    ra::VReg vreg_of(Value v) const { return vreg_of_resolved(resolved(v)); }
    [[gnu::always_inline]] ra::VReg vreg_of_resolved(Value v) const {
        return ra::VReg(v.index(), reg_class_of(dfg_.value_type(v)));
    }
    /// The vreg of `v`, and `v` is needed (its definition must be emitted).
    [[gnu::always_inline]] ra::VReg use(Value v) {
        v = resolved(v);
        needed_[v.index()] = LowerContext::Flag::Yes;
        return vreg_of_resolved(v);
    }
    /// Whether something lowered so far reads (resolved) value `v`.
    bool is_needed(Value v) const { return needed_[v.index()] != LowerContext::Flag::No; }
    ra::VReg def(Value v) const { return vreg_of(v); }
    /// The vreg of the first result of `inst`.
    [[gnu::always_inline]] ra::VReg result_vreg(Inst inst) const { return vreg_of(dfg_.inst_results(inst)[0]); }
    ra::VReg temp(ra::RegClass c = ra::RegClass::Int) { return ra::VReg(next_vreg_++, c); }
    Type type_of(Value v) const { return dfg_.value_type(v); }

    /// If `v` is an iconst, its value sign-extended from its width.
    [[gnu::always_inline]] std::optional<int64_t> const_of(Value v) const {
        v = resolved(v);
        ValueDef d = dfg_.value_def(v);
        if (!d.is_result()) return std::nullopt;
        const InstructionData& id = dfg_[d.inst()];
        if (id.opcode != Opcode::Iconst) return std::nullopt;
        return sext(id.imm, dfg_.value_type(v).bits());
    }
    /// The defining instruction of `v` if it has `op`.
    [[gnu::always_inline]] std::optional<Inst> def_with(Value v, Opcode op) const {
        v = resolved(v);
        ValueDef d = dfg_.value_def(v);
        if (!d.is_result() || dfg_[d.inst()].opcode != op) return std::nullopt;
        return d.inst();
    }

    /// The index of `name` in the VCode's symbol list (one slot per name).
    uint32_t symbol_index(const ExternalName& name) {
        for (uint32_t k = 0; k < out_.symbols.size(); ++k) {
            if (out_.symbols[k] == name) return k;
        }
        out_.symbols.push_back(name);
        return static_cast<uint32_t>(out_.symbols.size() - 1);
    }

    // --- emission -------------------------------------------------------------
    // Machine instructions and their operands go into the context's buffers
    // from their ends downward (see the top of this file). An
    // instruction's operands are written in order, one chunk per
    // instruction: a group of one instruction (the usual case) is then in
    // place as it is, and a larger group reverses its chunks (end_group).
    // Each operand is written once, then only moved.
    [[gnu::always_inline]] MInstT& emit(OpT op, std::initializer_list<ra::Operand> ops) {
        return push(op, ops.begin(), static_cast<uint32_t>(ops.size()));
    }
    MInstT& emit_v(OpT op, const std::vector<ra::Operand>& ops) {
        return push(op, ops.data(), static_cast<uint32_t>(ops.size()));
    }
    [[gnu::always_inline]] MInstT& push(OpT op, const ra::Operand* first, uint32_t n) {
        if (static_cast<size_t>(ops_cur_ - ops_begin_) < n) [[unlikely]] grow_ops(n);
        if (insts_cur_ == insts_begin_) [[unlikely]] grow_insts();
        ops_cur_ -= n;
        for (uint32_t k = 0; k < n; ++k) ops_cur_[k] = first[k];
        *--counts_cur_ = n;
        MInstT* m = ::new (static_cast<void*>(--insts_cur_)) MInstT();
        m->op = op;
        m->ir_inst = cur_inst_;
        return *m;
    }
    /// Machine instructions pushed so far in this function.
    size_t num_insts() const { return static_cast<size_t>(insts_end_ - insts_cur_); }
    struct GroupMark {
        size_t insts, ops;
    };
    /// An empty list for building the operands of one instruction (a call,
    /// a return) before emit_v; kept in the context, so building it does
    /// not allocate. One at a time: emit_v it before asking again.
    std::vector<ra::Operand>& operand_list() {
        ctx_.operand_list.clear();
        return ctx_.operand_list;
    }
    /// Where the next instruction and operand go: counts of what was pushed
    /// before (the buffers' ends move when they grow).
    GroupMark mark() const { return {num_insts(), static_cast<size_t>(ops_end_ - ops_cur_)}; }
    GroupMark begin_group(uint32_t ir_inst) {
        cur_inst_ = ir_inst;
        return mark();
    }
    void end_group(GroupMark g) {
        const size_t n = num_insts() - g.insts;
        if (n <= 1) return;
        std::reverse(insts_cur_, insts_end_ - g.insts);
        std::reverse(counts_cur_, counts_end() - g.insts);
        // The operand chunks in program order: the whole range reversed,
        // then each chunk back in order.
        ra::Operand* p = ops_cur_;
        std::reverse(p, ops_end_ - g.ops);
        for (size_t k = 0; k < n; ++k) {
            std::reverse(p, p + counts_cur_[k]);
            p += counts_cur_[k];
        }
    }
    /// Moves the instruction pushed last (and its operands) to position `at`
    /// of the current group, before the instructions pushed since.
    void move_last_to(GroupMark at) {
        const uint32_t nops = counts_cur_[0];
        std::rotate(insts_cur_, insts_cur_ + 1, insts_end_ - at.insts);
        std::rotate(counts_cur_, counts_cur_ + 1, counts_end() - at.insts);
        std::rotate(ops_cur_, ops_cur_ + nops, ops_end_ - at.ops);
    }

    /// A load instruction `d` (load, uload8, ...) as an ISA `op` reading
    /// base + off into its result: operands (base use, result def), size
    /// (bytes read), imm = off, flags and trap code. The ISA adds the rest.
    MInstT& emit_load_inst(OpT op, Inst inst, const InstructionData& d, ra::VReg base, int64_t off, const MemFlagBits& bits) {
        LoadAccess acc = load_access(d);
        MInstT& m = emit(op, {ra::Operand::use(base), ra::Operand::def(result_vreg(inst))});
        m.size = static_cast<uint8_t>(acc.bytes);
        m.imm = off;
        if (acc.is_signed) m.flags |= bits.is_signed;
        if (d.type.is_float()) m.flags |= bits.is_float;
        set_mem_flags(m, d.flags, bits);
        return m;
    }
    /// A store instruction `d` (store, istore8, ...) as an ISA `op` writing
    /// its value to base + off: operands (value use, base use), size (bytes
    /// written), imm = off, flags and trap code.
    MInstT& emit_store_inst(OpT op, const InstructionData& d, ra::VReg base, int64_t off, const MemFlagBits& bits) {
        Type t = type_of(d.args[0]);
        MInstT& m = emit(op, {ra::Operand::use(use(d.args[0])), ra::Operand::use(base)});
        m.size = static_cast<uint8_t>(store_bytes(d.opcode, t));
        m.imm = off;
        if (t.is_float()) m.flags |= bits.is_float;
        set_mem_flags(m, d.flags, bits);
        return m;
    }
    static void set_mem_flags(MInstT& m, MemFlags flags, const MemFlagBits& bits) {
        if (flags.has(MemFlags::Big)) m.flags |= bits.big;
        if (auto code = flags.trap_code()) {
            m.flags |= bits.trap_site;
            m.trap = code->byte;
        }
    }

    // --- the ABI (abi.h) --------------------------------------------------------
    // Parameters, calls and returns over the classified signatures. The ISA
    // gives begin_abi its facts and instruction forms, then lowers the entry
    // block's parameters with lower_abi_args, calls with lower_abi_call and
    // returns with lower_abi_return.

    /// Classifies the function's own signature (call after begin_function):
    /// the stack-argument bytes its `ret` pops, and the vreg of the
    /// return-area pointer, named here because returns (lowered before the
    /// entry block that defines it) read it. A signature over the popped
    /// limit clears the output and returns the error.
    std::string begin_abi(const AbiFacts& facts, const AbiInsts<OpT>& insts) {
        abi_facts_ = &facts;
        abi_insts_ = &insts;
        ctx_.abi.reset(dfg_.signatures.size());
        const AbiSignature& own = ctx_.abi.own();
        std::string err = classify_signature(f_.signature, facts, ctx_.abi.own());
        if (!err.empty()) return failed(std::move(err));
        out_.incoming_args_popped = own.popped_bytes;
        if (own.has_ret_area) ret_area_ = temp();
        return {};
    }

    /// The entry block's parameters: an `args` instruction defining those in
    /// registers (and the return-area pointer), then a load of each stack
    /// argument from the caller's frame (for `tail`, from the area this
    /// function pops). Every stack argument is loaded here, so the area is
    /// dead afterwards and a tail call may store its own arguments there.
    void lower_abi_args() {
        const AbiSignature& sig = ctx_.abi.own();
        std::vector<ra::Operand>& defs = operand_list();
        const GroupMark top = mark();
        if (sig.has_ret_area) defs.push_back(ra::Operand::def_fixed(ret_area_, abi_facts_->ret_area_reg));
        auto params = dfg_.block_params(*f_.layout.entry_block());
        for (size_t k = 0; k < params.size(); ++k) {
            const AbiLoc& loc = sig.params[k];
            const ra::VReg v = def(params[k]);
            if (loc.kind == AbiLoc::Kind::Reg) {
                defs.push_back(ra::Operand::def_fixed(v, loc.reg));
                continue;
            }
            emit_slot_access(abi_insts_->load, {ra::Operand::def(v)}, type_of(params[k]), MemBase::Fp,
                             int64_t{abi_facts_->incoming_args_offset} + loc.offset);
        }
        // `args` comes before the loads (emitted above) in program order.
        emit_v(abi_insts_->args, defs);
        move_last_to(top);
    }

    /// call, call_indirect, return_call, return_call_indirect. Stack
    /// arguments go to [sp + offset], except for a tail call whose arguments
    /// fit in this function's own incoming area: those go straight into that
    /// area's top (dead after the entry's loads), and otherwise the ISA's
    /// tail call copies them up from [sp]. A call's return area lies above
    /// its stack arguments (above the whole popped area of a tail callee,
    /// whose own tail calls may reuse all of it); a tail call passes on this
    /// function's own (same result types, by the verifier). Returns "" or
    /// the error of a callee over the popped limit.
    std::string lower_abi_call(Inst inst, const InstructionData& d) {
        const SigRef ref = *dfg_.call_signature(inst);
        std::string err;
        const AbiSignature& sig = ctx_.abi.of_call(ref, dfg_.signatures[ref], *abi_facts_, err);
        if (!err.empty()) return "call to a " + err;
        const bool tail = d.opcode == Opcode::ReturnCall || d.opcode == Opcode::ReturnCallIndirect;
        const bool indirect = d.opcode == Opcode::CallIndirect || d.opcode == Opcode::ReturnCallIndirect;
        std::vector<ra::Operand>& ops = operand_list();
        if (indirect) ops.push_back(ra::Operand::use(use(dfg_.inst_variable_args(inst)[0])));
        // What the callee pops on return, which the caller takes from sp
        // again right after the call.
        const uint32_t popped = sig.popped_bytes;
        const uint32_t incoming = out_.incoming_args_popped;
        const bool in_place = tail && popped <= incoming;
        const MemBase stack_base = in_place ? MemBase::Fp : MemBase::Sp;
        const int64_t stack = in_place ? int64_t{abi_facts_->incoming_args_offset} + incoming - popped : 0;
        uint32_t area_off = 0;
        if (sig.has_ret_area && tail) {
            ops.push_back(ra::Operand::use_fixed(ret_area_, abi_facts_->ret_area_reg));
        } else if (sig.has_ret_area) {
            area_off = std::max(sig.stack_arg_bytes, popped);
            const ra::VReg area = temp();
            MInstT& m = emit(abi_insts_->sp_addr, {ra::Operand::def(area)});
            m.base = MemBase::Sp;
            m.imm = area_off;
            ops.push_back(ra::Operand::use_fixed(area, abi_facts_->ret_area_reg));
            out_.outgoing_args_size = std::max(out_.outgoing_args_size, area_off + sig.ret_area_bytes);
        }
        auto args = dfg_.call_args(inst);
        for (size_t k = 0; k < args.size(); ++k) {
            const AbiLoc& loc = sig.params[k];
            const ra::VReg v = use(args[k]);
            if (loc.kind == AbiLoc::Kind::Reg) {
                ops.push_back(ra::Operand::use_fixed(v, loc.reg));
                continue;
            }
            emit_slot_access(abi_insts_->store, {ra::Operand::use(v)}, type_of(args[k]), stack_base, stack + loc.offset);
        }
        if (!in_place) {
            const uint32_t a = abi_facts_->outgoing_align;
            const uint32_t bytes = (std::max(popped, sig.stack_arg_bytes) + a - 1) / a * a;
            out_.outgoing_args_size = std::max(out_.outgoing_args_size, bytes);
        }
        const uint32_t sym = indirect ? 0 : symbol_index(dfg_.ext_funcs[d.func_ref()].name);
        if (tail) {
            // The frame is popped and the callee entered with a jump; `imm`
            // is the callee's stack-argument area (the ISA's emitter).
            MInstT& m = emit_v(indirect ? abi_insts_->tail_call_ind : abi_insts_->tail_call, ops);
            m.aux = sym;
            m.imm = popped;
            return {};
        }
        auto results = dfg_.inst_results(inst);
        for (size_t k = 0; k < results.size(); ++k) {
            if (sig.returns[k].kind == AbiLoc::Kind::Reg) ops.push_back(ra::Operand::def_fixed(def(results[k]), sig.returns[k].reg));
        }
        MInstT& call = emit_v(indirect ? abi_insts_->call_ind : abi_insts_->call, ops);
        call.aux = sym;
        call.imm = popped;  // the emitter takes from sp again what the callee popped
        for (size_t k = 0; k < results.size(); ++k) {
            const AbiLoc& loc = sig.returns[k];
            if (loc.kind != AbiLoc::Kind::RetArea) continue;
            emit_slot_access(abi_insts_->load, {ra::Operand::def(def(results[k]))}, type_of(results[k]), MemBase::Sp,
                             int64_t{area_off} + loc.offset);
        }
        return {};
    }

    /// A return: the results in registers are operands of `ret`, the others
    /// are stored into the return area. A narrow integer result with an
    /// extension attribute is extended to 64 bits first by
    /// `extend(ra::VReg v, Type t, bool is_signed)`, which returns the
    /// extended vreg.
    template <class Extend>
    void lower_abi_return(Inst inst, Extend&& extend) {
        auto vals = dfg_.inst_variable_args(inst);
        const AbiSignature& sig = ctx_.abi.own();
        std::vector<ra::Operand>& ops = operand_list();
        for (size_t k = 0; k < vals.size(); ++k) {
            const Type t = type_of(vals[k]);
            ra::VReg v = use(vals[k]);
            const AbiLoc& loc = sig.returns[k];
            if (loc.kind == AbiLoc::Kind::RetArea) {
                emit_slot_access(abi_insts_->store, {ra::Operand::use(v), ra::Operand::use(ret_area_)}, t, MemBase::Reg,
                                 loc.offset);
                continue;
            }
            const ArgExt e = f_.signature.returns[k].ext;
            if (!t.is_float() && e != ArgExt::None && t.bits() < 64) v = extend(v, t, e == ArgExt::Sext);
            ops.push_back(ra::Operand::use_fixed(v, loc.reg));
        }
        emit_v(abi_insts_->ret, ops);
    }

    /// A load or store of one stack-argument or return-area slot holding a
    /// value of type `t`: 8 bytes for an integer, the float's own size.
    MInstT& emit_slot_access(OpT op, std::initializer_list<ra::Operand> ops, Type t, MemBase base, int64_t off) {
        MInstT& m = emit(op, ops);
        m.base = base;
        m.imm = off;
        m.size = static_cast<uint8_t>(t.is_float() ? t.bytes() : abi_facts_->slot_size);
        if (t.is_float()) m.flags |= abi_insts_->float_flag;
        return m;
    }

    // --- the driver -----------------------------------------------------------
    /// Clears the output (VCodeBase::clear_for_lowering: on an error after
    /// this, the ISA calls out_.clear()), computes the block order and
    /// sizes the per-value tables and the output arrays. Call first.
    void begin_function() {
        out_.clear_for_lowering();
        order_.compute(f_, ctx_.known_loops);
        block_sizes_.clear();
        next_vreg_ = dfg_.num_values();
        ctx_.needed.assign(dfg_.num_values(), LowerContext::Flag::No);
        needed_ = ctx_.needed.data();
        // Room for the usual case (an instruction or two per IR instruction,
        // a jump per edge block), so that pushing seldom grows an array.
        const size_t est = size_t{dfg_.num_insts()} + 2 * size_t{order_.num_vblocks()} + 8;
        block_sizes_.reserve(order_.num_vblocks());
        if (ctx_.ops.size() < 3 * est) ctx_.ops.resize(3 * est);
        ops_begin_ = ctx_.ops.data();
        ops_end_ = ops_cur_ = ops_begin_ + ctx_.ops.size();
        if (ctx_.op_counts.size < est) {
            ctx_.op_counts.grow_keeping_tail(est, 0);
            ctx_.inst_words.grow_keeping_tail(est * kInstWords, 0);
        }
        insts_begin_ = reinterpret_cast<MInstT*>(ctx_.inst_words.data.get());
        insts_end_ = insts_cur_ = insts_begin_ + ctx_.op_counts.size;
        counts_cur_ = counts_end();
    }

    /// Lowers every block in reverse emission order, each backwards:
    /// `lower_inst(Inst)` for each instruction that is not skipped (a pure
    /// one with no needed result, or one `skip(Inst)` says), the parameters
    /// (lower_abi_args) at the top of the entry block, and an edge block's
    /// jump as `jmp` with aux = the target. `lower_inst` returns false on
    /// failure with the message in `error_` (no string to make and test per
    /// instruction); the first error stops it.
    template <class LowerInst, class Skip>
    std::string lower_blocks(OpT jmp, LowerInst&& lower_inst, Skip&& skip) {
        const Block entry = *f_.layout.entry_block();
        for (uint32_t vb = order_.num_vblocks(); vb-- > 0;) {
            const uint32_t ir = order_.ir_block(vb);
            const size_t block_start = num_insts();
            if (ir == kNone) {
                // Edge block: a jump passing the edge's arguments.
                for (Value a : order_.edge_args(order_.succ_begin(vb))) use(a);
                cur_inst_ = kNone;
                push(jmp, nullptr, 0).aux = order_.succs(vb)[0];
            } else {
                const Block b(ir);
                for (Inst i : f_.layout.block_insts_reversed(b)) {
                    if (skip(i) || unused(i)) continue;
                    GroupMark g = begin_group(i.index());
                    if (!lower_inst(i)) [[unlikely]] return failed(std::move(error_));
                    end_group(g);
                }
                if (b == entry) {
                    GroupMark g = begin_group(kNone);
                    lower_abi_args();
                    end_group(g);
                }
            }
            block_sizes_.push_back(static_cast<uint32_t>(num_insts() - block_start));
        }
        return {};
    }

    /// Puts the instructions in program order and builds the allocator's
    /// instruction arrays: operands, operand offsets, and per instruction
    /// the flags `classify(const MInstT&)` gives (ra::inst_flags bits) and
    /// `clobbers` when `is_call(const MInstT&)`.
    template <class Classify, class IsCall>
    void finish_insts(Classify&& classify, IsCall&& is_call, const ra::PRegSet& clobbers) {
        ra::Function& r = out_.ra;
        // Everything lowered is in program order at the buffers' ends.
        out_.insts.assign(insts_cur_, insts_end_);
        std::reverse(block_sizes_.begin(), block_sizes_.end());
        r.operands.assign(ops_cur_, ops_end_);
        const uint32_t n = static_cast<uint32_t>(out_.insts.size());
        r.operands_begin.resize(n + 1);
        r.flags.resize(n);
        uint32_t* begin = r.operands_begin.data();
        uint8_t* flags = r.flags.data();
        const uint32_t* count = counts_cur_;
        const MInstT* insts = out_.insts.data();
        begin[0] = 0;
        for (uint32_t i = 0; i < n; ++i) {
            begin[i + 1] = begin[i] + count[i];
            flags[i] = classify(insts[i]);
            if (is_call(insts[i])) [[unlikely]] r.clobbers.push_back({i, clobbers});
        }
    }

    /// The allocator's block arrays (see build_ra_blocks) and the vreg count.
    void finish_blocks() {
        build_ra_blocks(f_, order_, block_sizes_, out_.ra, out_.block_ir);
        out_.layout = order_.layout();
        out_.ra.num_vregs = next_vreg_;
    }

    const Function& f_;
    const DataFlowGraph& dfg_;
    VCode& out_;
    LowerContext& ctx_;
    BlockOrder& order_;

    std::vector<uint32_t>& block_sizes_;  // instructions per VCode block (reversed until finish_insts)
    uint32_t cur_inst_ = kNone;

    const AbiFacts* abi_facts_ = nullptr;  // begin_abi's
    const AbiInsts<OpT>* abi_insts_ = nullptr;
    ra::VReg ret_area_;  // the return-area pointer, if the function's results need one

    LowerContext::Flag* needed_ = nullptr;  // ctx_.needed by value index
    uint32_t next_vreg_ = 0;
    std::string error_;  // what a lower_inst that returned false could not do

private:
    // The buffers' bounds are kept in members (set where the buffers are
    // sized): read through ctx_, each would be a load of the vector first.
    uint32_t* counts_end() const { return ctx_.op_counts.data.get() + ctx_.op_counts.size; }
    [[gnu::noinline]] void grow_insts() {
        const size_t used = num_insts();
        const size_t cap = 2 * used + 64;
        ctx_.op_counts.grow_keeping_tail(cap, used);
        ctx_.inst_words.grow_keeping_tail(cap * kInstWords, used * kInstWords);
        insts_begin_ = reinterpret_cast<MInstT*>(ctx_.inst_words.data.get());
        insts_end_ = insts_begin_ + cap;
        insts_cur_ = insts_end_ - used;
        counts_cur_ = counts_end() - used;
    }
    [[gnu::noinline]] void grow_ops(uint32_t n) {
        const size_t used = static_cast<size_t>(ops_end_ - ops_cur_);
        const size_t cap = std::max(2 * ctx_.ops.size(), used + n + 64);
        std::vector<ra::Operand> bigger(cap);
        std::copy(ops_cur_, ops_end_, bigger.end() - static_cast<ptrdiff_t>(used));
        ctx_.ops.swap(bigger);
        ops_begin_ = ctx_.ops.data();
        ops_end_ = ops_begin_ + cap;
        ops_cur_ = ops_end_ - used;
    }
    /// Clears the output (see VCodeBase::clear_for_lowering) and returns
    /// `err`: out of the block loop, which it would crowd.
    [[gnu::noinline, gnu::cold]] std::string failed(std::string err) {
        out_.clear();
        return err;
    }
    bool unused(Inst i) const {
        if (!is_pure_for_lowering(dfg_[i])) return false;
        for (Value r : dfg_.inst_results(i)) {
            if (needed_[r.index()] != LowerContext::Flag::No) return false;
        }
        return true;
    }

    ra::Operand* ops_begin_ = nullptr;  // ctx_.ops.data()
    ra::Operand* ops_cur_ = nullptr;  // the operand pushed last in ctx_.ops (the next goes below)
    ra::Operand* ops_end_ = nullptr;
    MInstT* insts_begin_ = nullptr;  // ctx_.inst_words as instructions
    MInstT* insts_cur_ = nullptr;  // the instruction pushed last in ctx_.inst_words (its count: ctx_.op_counts)
    MInstT* insts_end_ = nullptr;
    uint32_t* counts_cur_ = nullptr;  // its operand count in ctx_.op_counts
};

}  // namespace heron
