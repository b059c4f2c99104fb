// The single-pass register allocator: same contract as the linear scan
// (regalloc.h), built for compile speed. No global liveness, no intervals,
// no splitting: one forward walk over the operands (validation, where each
// value is defined and whether it is used outside its block), then a
// backward walk over each block's instructions (two for blocks in loops).
// In the spirit of LLVM's RegAllocFast and regalloc2's fastalloc; the
// design here is our own.
//
// Values at block boundaries. A vreg used outside its defining block, a
// live block parameter, and a branch argument whose edge needs it in memory
// are "global": each has a home spill slot, used where the value cannot stay
// in a register (a parameter of a block with one predecessor shares its
// argument's slot). Other vregs are block-local and get a slot only when
// evicted.
//
// Blocks are walked in reverse layout order, usually after their successors:
//  - A block with one predecessor records the registers it wants its values
//    in at its top (entry); the predecessor starts its walk with them there
//    (carry_in: a parameter's argument in its place), and the successor loads
//    the values it did not get from their slots (emit_top).
//  - A block with several predecessors has an interface: the registers of
//    its first walk's top (of every walk when all predecessors come later).
//    Each predecessor ends with a jump without operands (the contract): the
//    values live into the block stay in their interface registers through
//    it, and a parallel move at Before(jump) puts the arguments into the
//    parameters' interface registers or slots (iface_moves). Moves at the
//    block's top turn the interface into what its latest walk wants
//    (top_fixup). A loop header is reached after its latches: once it has
//    an interface, the blocks from it to its last latch are walked again,
//    then the header itself.
//  - With every block having a predecessor laid out before it, a definition
//    is walked after every read of its slot, so it stores only when the slot
//    was read (lazy stores).
//
// Within a block, instructions are walked backward with vreg <-> register
// maps describing where the code below expects each value. Per instruction:
//  1. values live across it (in a register below, not defined by it) that sit
//     in a register it clobbers, writes as a fixed def, or needs for another
//     vreg's fixed use are displaced;
//  2. defs get their locations (fixed, reuse, Early, Late, then Any), the
//     register the value has below if allowed; copies to that register and a
//     store to the value's slot (global or spilled) go at After(i);
//  3. displaced values move to a register free across the instruction
//     (After(i): that register -> the old one), else are reloaded from their
//     slot at After(i) (a spill: the definition stores);
//  4. uses get registers (Late Reg uses, Early Reg uses, Any uses, reused
//     inputs, Fixed uses, in that order); a value with no register gets one
//     here, which holds it from above. Fixed uses and reused inputs whose
//     value is elsewhere (or stays live) are copied at Before(i). When no
//     register is free, the live-across value whose next use is farthest is
//     evicted (reloaded at After(i)).
// At the top of the block, the values in registers form its entry (above).
// After(i) and Before(i) moves are each a parallel move.
#include <algorithm>
#include <cassert>

#include "codegen/regalloc/alloc_state.h"

namespace heron::ra {
namespace single_pass {

constexpr uint8_t kNoReg = 0xff;
constexpr uint32_t kParamDef = ~uint32_t{0} - 1;
// The spill-slot number the parallel-move sequencer is given for its extra
// slot; renumbered after the last block, when the slot count is known.
constexpr uint32_t kEmergencyMark = uint32_t{1} << 30;

enum : uint8_t { kGlobal = 1, kSpilled = 2, kUsed = 4, kVisit = 8 };

struct VInfo {
    uint32_t def_block = kNone;
    uint32_t def_inst = kNone;  // kParamDef for a block parameter
    uint32_t param_index = 0;   // a parameter's position in its block
    uint32_t slot = kNone;
    uint32_t next_use = 0;   // nearest use below the scan point, in the block
    uint32_t disp = 0;       // the stamp of the instruction walk that displaced it
    uint32_t reloc = kNone;  // with disp: its After(i) move, from its new register
    uint32_t dom_block = kNone;  // the last block where a use was found dominated
    uint8_t cls = 0;
    uint8_t flags = 0;
    uint8_t reg = kNoReg;  // PReg::index() while in a register in the scan state
};

/// Register sets of one class at one instruction, by preference rank.
struct Masks {
    uint64_t thru = 0;    // values live across the instruction
    uint64_t defE = 0;    // Early defs (busy at both points)
    uint64_t defL = 0;    // Late defs, reuse defs
    uint64_t fixE = 0;    // Fixed Early uses
    uint64_t fixL = 0;    // Fixed Late uses
    uint64_t fixD = 0;    // Fixed defs (and defs reusing a fixed input)
    uint64_t clob = 0;    // clobbered
    uint64_t useE = 0;    // holding a used value at the Early point
    uint64_t useL = 0;    // holding a Late use
    uint64_t pinned = 0;  // live across and read in place by a Reg use: never evicted
};

struct Move {
    Allocation from, to;
    RegClass cls;
};

}  // namespace single_pass

using namespace single_pass;

struct Context::SinglePass {
    // The environment of the last call, validated, with preference ranks.
    CheckedEnv checked_env;  // the environment of the last call
    uint8_t rank_of[kNumRegClasses][kMaxRegsPerClass];
    uint8_t hw_of[kNumRegClasses][kMaxRegsPerClass];
    uint64_t all[kNumRegClasses] = {};

    std::vector<VInfo> vi;
    // Dominators (Cooper, Harvey and Kennedy), made on the first use of a
    // value outside its block.
    std::vector<uint32_t> rpo_num, idom, order, stack, next_child;
    // The dominator tree in preorder: block b's subtree is the blocks with
    // dom_pre in [dom_pre[b], dom_pre[b] + dom_size[b]).
    std::vector<uint32_t> dom_pre, dom_size;
    // Scan state.
    uint32_t owner[kNumPRegs];
    uint32_t fix_vreg[kNumPRegs];
    uint64_t occupied[kNumRegClasses] = {};
    Masks m[kNumRegClasses];
    uint32_t reuse_stamp[256] = {}, reuse_def[256] = {};
    uint32_t reuse_gen = 0;
    uint8_t pass_of[256], op_order[256];  // per operand of the instruction: its pass; operands by pass
    std::vector<std::pair<uint32_t, uint32_t>> displaced;  // (vreg, register index below)
    std::vector<Move> after, before;
    ParallelMoves pm;
    // Edits of every block, in groups (one per program point) made bottom-up
    // in processing order; each block's groups are group_end[first, last).
    std::vector<Edit> block_edits;
    std::vector<uint32_t> group_end;
    std::vector<std::pair<uint32_t, uint32_t>> block_groups;
    // Registers at the top of each block: (vreg, register index) pairs
    // entry[first, last), with entry_met set where the predecessor leaves the
    // value there; the others are loaded from their slots (top_edits).
    std::vector<std::pair<uint32_t, uint32_t>> entry, entry_range, top_range;
    std::vector<uint8_t> entry_met;
    // Blocks with several predecessors (ordered layouts): the registers every
    // predecessor delivers the block's values in, entry[first, last) of the
    // block's first walk (last == kNone: none yet).
    std::vector<std::pair<uint32_t, uint32_t>> iface;
    std::vector<Edit> top_edits;
    // Per home slot: read somewhere processed so far (a definition whose
    // slot is never read needs no store).
    std::vector<uint8_t> slot_read;
    std::vector<uint32_t> local_free, deferred_free, path;
    uint32_t local_next = 0, local_max = 0, num_global = 0;
    uint32_t emergency = kNoSlot, emergency_count = kEmergencyMark;
};

void delete_single_pass(Context::SinglePass* sp) { delete sp; }

namespace {

using std::to_string;

std::string vname(uint32_t v) { return "v" + to_string(v); }

class Allocator {
public:
    Allocator(Context::SinglePass& s, const Function& f, const MachineEnv& env, Output& out, bool trust_blocks)
        : s_(s), f_(f), env_(env), out_(out), trust_blocks_(trust_blocks) {}
    std::string run();

private:
    std::string setup_env();
    std::string scan_defs();
    std::string check_fixed(uint32_t i);
    void compute_dominators();
    bool dominates(uint32_t d, uint32_t u);
    std::string scan_uses();
    void assign_global_slots();
    uint32_t alias_source(uint32_t p) const;
    std::string alloc_block(uint32_t b);
    std::string alloc_inst(uint32_t i, PRegSet clob);
    void edge_moves(uint32_t b, uint32_t term, uint32_t t);
    void carry_in(uint32_t b, uint32_t term);
    void finish_top(uint32_t b);
    void top_fixup(uint32_t b);
    void emit_top(uint32_t b);
    void flush(const std::vector<Move>& moves, ProgPoint p);
    void sequence(const std::vector<Move>& moves, ProgPoint p, std::vector<Edit>& dst);
    void iface_moves(uint32_t b, uint32_t term, uint32_t t);
    Allocation edge_source(uint32_t a, uint32_t b, uint32_t term, Allocation to, uint64_t avoid, bool anywhere);
    bool is_param_of(uint32_t v, uint32_t t) const {
        return s_.vi[v].def_block == t && s_.vi[v].def_inst == kParamDef;
    }

    // Register helpers (idx: PReg::index(); rank: position in the class's
    // preference order).
    uint64_t bit_of(uint32_t idx) const {
        const uint8_t r = s_.rank_of[idx / kMaxRegsPerClass][idx % kMaxRegsPerClass];
        return r == kNoReg ? 0 : uint64_t{1} << r;
    }
    uint32_t idx_of(unsigned c, unsigned rank) const { return c * kMaxRegsPerClass + s_.hw_of[c][rank]; }
    uint32_t lowest(unsigned c, uint64_t set) const { return idx_of(c, static_cast<unsigned>(__builtin_ctzll(set))); }
    void take(uint32_t v, uint32_t idx) {
        s_.vi[v].reg = static_cast<uint8_t>(idx);
        s_.owner[idx] = v;
        s_.occupied[idx / kMaxRegsPerClass] |= bit_of(idx);
    }
    void release(uint32_t idx) {
        s_.vi[s_.owner[idx]].reg = kNoReg;
        s_.owner[idx] = kNone;
        s_.occupied[idx / kMaxRegsPerClass] &= ~bit_of(idx);
    }
    Allocation slot_of(uint32_t v) {
        VInfo& x = s_.vi[v];
        if (x.slot == kNone) {
            uint32_t k;
            if (s_.local_free.empty()) {
                k = s_.local_next++;
                s_.local_max = std::max(s_.local_max, s_.local_next);
            } else {
                k = s_.local_free.back();
                s_.local_free.pop_back();
            }
            x.slot = s_.num_global + k;
        }
        x.flags |= kSpilled;
        return Allocation::stack(x.slot);
    }
    // slot_of for a read of the value's slot.
    Allocation read_slot(uint32_t v) {
        const Allocation a = slot_of(v);
        if (s_.vi[v].flags & kGlobal) s_.slot_read[a.index] = 1;
        return a;
    }
    bool in_memory(uint32_t v) const { return s_.vi[v].flags & (kGlobal | kSpilled); }
    // A register of class c outside `busy` (and the live-across values),
    // the preferred one if allowed;
    // else one taken from the live-across value used farthest below (kNone
    // when there is none). During defs the victim is displaced (resolved in
    // step 3), during uses it is reloaded at After(i).
    uint32_t pick(unsigned c, uint64_t busy, uint32_t prefer, bool displace);
    void displace(uint32_t w, uint32_t idx);
    void evict(uint32_t w, uint32_t idx);

    Context::SinglePass& s_;
    const Function& f_;
    const MachineEnv& env_;
    Output& out_;
    const bool trust_blocks_;  // Context::trust_block_structure
    uint32_t stamp_ = 0;  // counts instruction walks (blocks may be walked twice)
    bool dom_ready_ = false;
    // Every block is processed before the blocks it dominates' (reverse
    // layout order, every block having a predecessor laid out earlier): a
    // definition then comes after every read of its slot, and stores only
    // when one was read.
    bool lazy_stores_ = false;
};

std::string Allocator::setup_env() {
    if (s_.checked_env.same_as(env_)) return {};
    s_.checked_env.valid = false;
    std::string err = check_machine_env(env_);
    if (!err.empty()) return err;
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        std::fill(std::begin(s_.rank_of[c]), std::end(s_.rank_of[c]), kNoReg);
        const auto& regs = env_.allocatable[c];
        for (size_t k = 0; k < regs.size(); ++k) {
            s_.rank_of[c][regs[k].hw] = static_cast<uint8_t>(k);
            s_.hw_of[c][k] = regs[k].hw;
        }
        s_.all[c] = regs.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << regs.size()) - 1;
    }
    s_.checked_env.remember(env_);
    return {};
}

// Operand checks (as the linear scan makes them) and each vreg's definition.
std::string Allocator::scan_defs() {
    const Function& f = f_;
    const uint32_t nb = f.num_blocks(), nv = f.num_vregs;
    VInfo* vi = s_.vi.data();
    // 0: defined; 1: out of range; 2: defined twice.
    auto define = [&](VReg v, uint32_t b, uint32_t inst) -> int {
        if (!v.is_valid() || v.index() >= nv) return 1;
        VInfo& x = vi[v.index()];
        if (x.def_block != kNone) return 2;
        x.def_block = b;
        x.def_inst = inst;
        x.cls = static_cast<uint8_t>(v.cls());
        return 0;
    };
    auto define_error = [&](VReg v, int e) {
        return e == 1 ? std::string("vreg out of range") : vname(v.index()) + " is defined twice";
    };
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t k = f.params_begin[b]; k < f.params_begin[b + 1]; ++k) {
            if (const int e = define(f.params[k], b, kParamDef))
                return "block" + to_string(b) + " parameter: " + define_error(f.params[k], e);
            vi[f.params[k].index()].param_index = k - f.params_begin[b];
        }
        const uint32_t last = f.block_insts_begin[b + 1] - 1;
        const uint32_t nsucc = f.succs_begin[b + 1] - f.succs_begin[b];
        for (uint32_t i = f.block_insts_begin[b]; i <= last; ++i) {
            const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
            if (oe - ob > 255) return "inst" + to_string(i) + ": too many operands";
            uint32_t num_fixed = 0;
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = f.operands[o];
                auto where = [&] { return "inst" + to_string(i) + " operand " + to_string(o - ob) + ": "; };
                if (!op.vreg.is_valid() || op.vreg.index() >= nv) return where() + "vreg out of range";
                if (op.constraint == Constraint::Fixed) {
                    if (op.aux >= kMaxRegsPerClass) return where() + "fixed register out of range";
                    if (op.fixed_reg() == env_.scratch[static_cast<unsigned>(op.vreg.cls())])
                        return where() + "fixed to the scratch register";
                    ++num_fixed;
                }
                if (op.kind == OperandKind::Use) continue;
                if (op.constraint == Constraint::Reuse) {
                    if (op.aux >= oe - ob) return where() + "Reuse of an operand out of range";
                    const Operand& in = f.operands[ob + op.aux];
                    if (in.kind != OperandKind::Use || in.pos != OperandPos::Early || in.vreg.cls() != op.vreg.cls() ||
                        in.constraint == Constraint::Reuse)
                        return where() + "Reuse of an operand that is not an early use of the same class";
                    for (uint32_t o2 = ob; o2 < o; ++o2)
                        if (f.operands[o2].constraint == Constraint::Reuse && f.operands[o2].aux == op.aux)
                            return where() + "two defs reuse one operand";
                    if (in.constraint == Constraint::Fixed) ++num_fixed;
                }
                if (i == last && nsucc > 0) return where() + "a branch defines a value";
                if (const int e = define(op.vreg, b, i)) return where() + define_error(op.vreg, e);
            }
            if (num_fixed > 0) {
                std::string e = check_fixed(i);
                if (!e.empty()) return e;
            }
            if (i == last && nsucc == 1 && oe > ob) {
                const uint32_t t = f.succs[f.succs_begin[b]];
                if (f.preds_begin[t + 1] - f.preds_begin[t] > 1)
                    return "inst" + to_string(i) + ": a jump with operands to a block with several predecessors";
            }
        }
    }
    return {};
}

// Fixed registers of one instruction that cannot be honoured together: two
// operands of one kind in one register (unless two uses of one vreg), a use
// and a def in one register where their times overlap (a Late use, an
// Early def), a Late use in a clobbered register.
std::string Allocator::check_fixed(uint32_t i) {
    const uint32_t ob = f_.operands_begin[i], oe = f_.operands_begin[i + 1];
    const Operand* ops = f_.operands.data();
    // The register a fixed operand (or a def reusing a fixed input) needs.
    auto fixed_reg = [&](const Operand& op, PReg& r) {
        if (op.constraint == Constraint::Fixed) {
            r = op.fixed_reg();
            return true;
        }
        if (op.kind == OperandKind::Def && op.constraint == Constraint::Reuse &&
            ops[ob + op.aux].constraint == Constraint::Fixed) {
            r = ops[ob + op.aux].fixed_reg();
            return true;
        }
        return false;
    };
    auto busy_msg = [&](PReg r) {
        return "inst" + to_string(i) + ": register " + to_string(r.hw) + " is required by two operands at once";
    };
    bool late_fixed_use = false;
    for (uint32_t o = ob; o < oe; ++o) {
        PReg ra;
        if (!fixed_reg(ops[o], ra)) continue;
        const Operand& a = ops[o];
        late_fixed_use |= a.kind == OperandKind::Use && a.pos == OperandPos::Late;
        for (uint32_t o2 = o + 1; o2 < oe; ++o2) {
            PReg rb;
            if (!fixed_reg(ops[o2], rb) || rb != ra) continue;
            const Operand& b = ops[o2];
            if (a.kind == b.kind) {
                if (a.kind == OperandKind::Def || a.vreg != b.vreg)
                    return "inst" + to_string(i) + ": two operands fixed to one register";
                continue;
            }
            const Operand& u = a.kind == OperandKind::Use ? a : b;
            const Operand& d = a.kind == OperandKind::Use ? b : a;
            const bool own_input = d.constraint == Constraint::Reuse && &ops[ob + d.aux] == &u;
            if (!own_input && (u.pos == OperandPos::Late || d.pos == OperandPos::Early)) return busy_msg(ra);
        }
    }
    if (!late_fixed_use) return {};
    auto it = std::lower_bound(f_.clobbers.begin(), f_.clobbers.end(), i,
                               [](const std::pair<uint32_t, PRegSet>& c, uint32_t x) { return c.first < x; });
    for (; it != f_.clobbers.end() && it->first == i; ++it)
        for (uint32_t o = ob; o < oe; ++o)
            if (ops[o].kind == OperandKind::Use && ops[o].pos == OperandPos::Late &&
                ops[o].constraint == Constraint::Fixed && it->second.contains(ops[o].fixed_reg()))
                return busy_msg(ops[o].fixed_reg());
    return {};
}

void Allocator::compute_dominators() {
    dom_ready_ = true;
    const uint32_t nb = f_.num_blocks();
    auto& order = s_.order;
    auto& num = s_.rpo_num;
    auto& idom = s_.idom;
    auto& next = s_.next_child;
    order.clear();
    num.assign(nb, kNone);
    next.assign(nb, 0);
    // Postorder by an explicit stack; `num` marks the blocks seen (kNone - 1).
    s_.stack.assign(1, 0);
    num[0] = kNone - 1;
    while (!s_.stack.empty()) {
        const uint32_t b = s_.stack.back();
        if (next[b] < f_.succs_begin[b + 1] - f_.succs_begin[b]) {
            const uint32_t t = f_.succs[f_.succs_begin[b] + next[b]++];
            if (num[t] == kNone) {
                num[t] = kNone - 1;
                s_.stack.push_back(t);
            }
            continue;
        }
        order.push_back(b);
        s_.stack.pop_back();
    }
    std::reverse(order.begin(), order.end());
    for (uint32_t k = 0; k < order.size(); ++k) num[order[k]] = k;
    idom.assign(nb, kNone);
    idom[0] = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 1; k < order.size(); ++k) {
            const uint32_t b = order[k];
            uint32_t nd = kNone;
            for (uint32_t e = f_.preds_begin[b]; e < f_.preds_begin[b + 1]; ++e) {
                uint32_t x = f_.preds[e];
                if (idom[x] == kNone) continue;
                if (nd == kNone) {
                    nd = x;
                    continue;
                }
                uint32_t y = nd;
                while (x != y) {
                    while (num[x] > num[y]) x = idom[x];
                    while (num[y] > num[x]) y = idom[y];
                }
                nd = x;
            }
            if (nd != idom[b]) {
                idom[b] = nd;
                changed = true;
            }
        }
    }
    // Subtree sizes (children come after their parent in reverse postorder),
    // then preorder numbers: each child takes the next range of its parent's.
    auto& size = s_.dom_size;
    auto& pre = s_.dom_pre;
    size.assign(nb, 1);
    pre.assign(nb, 0);
    for (uint32_t k = static_cast<uint32_t>(order.size()); k-- > 1;) size[idom[order[k]]] += size[order[k]];
    for (uint32_t k = 0; k < order.size(); ++k) next[order[k]] = 1;  // the next free offset in each subtree
    for (uint32_t k = 1; k < order.size(); ++k) {
        const uint32_t b = order[k], d = idom[b];
        pre[b] = pre[d] + next[d];
        next[d] += size[b];
    }
}

// Whether block d dominates block u. A use in an unreachable block is
// never executed (and the checker does not look at it): accepted.
bool Allocator::dominates(uint32_t d, uint32_t u) {
    if (!dom_ready_) compute_dominators();
    const uint32_t* num = s_.rpo_num.data();
    if (num[u] == kNone) return true;
    if (num[d] == kNone) return false;
    const uint32_t* pre = s_.dom_pre.data();
    return pre[d] <= pre[u] && pre[u] < pre[d] + s_.dom_size[d];
}

// Uses: defined, of the right class, after the definition in its block or in
// a block it dominates. Marks the vregs that need a home slot.
std::string Allocator::scan_uses() {
    const Function& f = f_;
    VInfo* vi = s_.vi.data();
    // 0: fine; else what is wrong (the message is made only then).
    enum { kOk, kUndefined, kWrongClass, kNotDominated };
    auto check = [&](VReg v, uint32_t b) -> int {
        VInfo& x = vi[v.index()];
        if (x.def_block == kNone) return kUndefined;
        if (x.cls != static_cast<uint8_t>(v.cls())) return kWrongClass;
        x.flags |= kUsed;
        if (x.def_block == b || x.dom_block == b) return kOk;
        x.flags |= kGlobal;
        if (!dominates(x.def_block, b)) return kNotDominated;
        x.dom_block = b;
        return kOk;
    };
    auto message = [&](int e, VReg v, const std::string& where) {
        if (e == kUndefined) return where + vname(v.index()) + " is used but never defined";
        if (e == kWrongClass) return where + vname(v.index()) + " used with the wrong class";
        return vname(v.index()) + " is used where its definition does not dominate";
    };
    for (uint32_t b = 0; b < f.num_blocks(); ++b) {
        for (uint32_t i = f.block_insts_begin[b]; i < f.block_insts_begin[b + 1]; ++i) {
            for (uint32_t o = f.operands_begin[i]; o < f.operands_begin[i + 1]; ++o) {
                const Operand& op = f.operands[o];
                if (op.kind != OperandKind::Use) continue;
                const uint32_t v = op.vreg.index();
                if (vi[v].def_block == b && vi[v].def_inst != kParamDef && vi[v].def_inst >= i &&
                    vi[v].cls == static_cast<uint8_t>(op.vreg.cls()))
                    return "inst" + to_string(i) + ": " + vname(v) + " used before its definition";
                if (const int e = check(op.vreg, b)) return message(e, op.vreg, "inst" + to_string(i) + ": ");
            }
        }
    }
    for (uint32_t b = 0; b < f.num_blocks(); ++b) {  // operands first, as the linear scan reports them
        for (uint32_t k = f.branch_args_begin[f.succs_begin[b]]; k < f.branch_args_begin[f.succs_begin[b + 1]]; ++k) {
            if (const int e = check(f.branch_args[k], b)) return message(e, f.branch_args[k], "branch argument: ");
        }
    }
    for (VReg p : f.params)
        if (vi[p.index()].flags & kUsed) vi[p.index()].flags |= kGlobal;
    // Live parameters live in slots; an argument needs one when its edge has
    // no moves (one predecessor: the parameter takes the argument's slot) or
    // when it comes from another block.
    for (uint32_t b = 0; b < f.num_blocks(); ++b) {
        for (uint32_t e = f.succs_begin[b]; e < f.succs_begin[b + 1]; ++e) {
            const uint32_t t = f.succs[e];
            const bool one_pred = f.preds_begin[t + 1] - f.preds_begin[t] == 1;
            for (uint32_t k = 0; k < f.branch_args_begin[e + 1] - f.branch_args_begin[e]; ++k) {
                if (!(vi[f.params[f.params_begin[t] + k].index()].flags & kUsed)) continue;
                VInfo& a = vi[f.branch_args[f.branch_args_begin[e] + k].index()];
                if (one_pred || a.def_block != b) a.flags |= kGlobal;
            }
        }
    }
    return {};
}

// The argument whose slot parameter p shares (p's block has one
// predecessor), or kNone.
uint32_t Allocator::alias_source(uint32_t p) const {
    const VInfo& x = s_.vi[p];
    if (x.def_inst != kParamDef) return kNone;
    const uint32_t t = x.def_block;
    if (f_.preds_begin[t + 1] - f_.preds_begin[t] != 1) return kNone;
    const uint32_t b = f_.preds[f_.preds_begin[t]];
    for (uint32_t e = f_.succs_begin[b]; e < f_.succs_begin[b + 1]; ++e)
        if (f_.succs[e] == t) return f_.branch_args[f_.branch_args_begin[e] + x.param_index].index();
    return kNone;
}

void Allocator::assign_global_slots() {
    s_.num_global = 0;
    VInfo* vi = s_.vi.data();
    for (uint32_t v = 0; v < f_.num_vregs; ++v) {
        if (!(vi[v].flags & kGlobal) || vi[v].slot != kNone) continue;
        // Follow parameter -> argument links to a vreg with a slot (or one
        // that gets a new slot); a cycle (only in unreachable code) ends the
        // walk too.
        s_.path.clear();
        uint32_t x = v, slot = kNone;
        for (;;) {
            if (vi[x].slot != kNone) {
                slot = vi[x].slot;
                break;
            }
            const uint32_t a = alias_source(x);
            if (a == kNone || (vi[x].flags & kVisit)) break;
            vi[x].flags |= kVisit;
            s_.path.push_back(x);
            x = a;
        }
        if (slot == kNone) {
            slot = s_.num_global++;
            vi[x].slot = slot;
        }
        for (uint32_t y : s_.path) {
            vi[y].slot = slot;
            vi[y].flags &= static_cast<uint8_t>(~kVisit);
        }
    }
}

uint32_t Allocator::pick(unsigned c, uint64_t busy, uint32_t prefer, bool displace_victim) {
    Masks& m = s_.m[c];
    const uint64_t free = s_.all[c] & ~(busy | m.thru);
    if (prefer != kNoReg && (free & bit_of(prefer))) return prefer;
    if (free) return lowest(c, free);
    uint64_t cand = m.thru & ~m.pinned & ~busy;
    if (!cand) return kNone;
    uint32_t best = kNone, best_use = 0;
    for (; cand; cand &= cand - 1) {
        const uint32_t idx = lowest(c, cand);
        const uint32_t nu = s_.vi[s_.owner[idx]].next_use;
        if (best == kNone || nu > best_use) {
            best = idx;
            best_use = nu;
        }
    }
    if (displace_victim)
        displace(s_.owner[best], best);
    else
        evict(s_.owner[best], best);
    return best;
}

void Allocator::displace(uint32_t w, uint32_t idx) {
    s_.m[idx / kMaxRegsPerClass].thru &= ~bit_of(idx);
    release(idx);
    s_.vi[w].disp = stamp_;
    s_.displaced.push_back({w, idx});
}

// During the uses of the current instruction: w leaves register idx and is
// reloaded after the instruction where the code below expects it.
void Allocator::evict(uint32_t w, uint32_t idx) {
    const unsigned c = idx / kMaxRegsPerClass;
    s_.m[c].thru &= ~bit_of(idx);
    release(idx);
    VInfo& x = s_.vi[w];
    const Allocation slot = read_slot(w);
    if (x.disp == stamp_ && x.reloc != kNone) {
        s_.after[x.reloc].from = slot;  // it had moved to idx for this instruction
        x.reloc = kNone;
        return;
    }
    s_.after.push_back({slot, Allocation::reg(PReg::from_index(idx)), static_cast<RegClass>(c)});
}

void Allocator::flush(const std::vector<Move>& moves, ProgPoint p) {
    if (moves.empty()) return;
    sequence(moves, p, s_.block_edits);
    s_.group_end.push_back(static_cast<uint32_t>(s_.block_edits.size()));
}

void Allocator::sequence(const std::vector<Move>& moves, ProgPoint p, std::vector<Edit>& dst) {
    // When no move writes what another reads (the usual case: a store, a
    // reload or a copy), they go out in any order without the sequencer.
    bool conflict = moves.size() > 16;
    for (size_t a = 0; a < moves.size() && !conflict; ++a)
        for (size_t b = 0; b < moves.size(); ++b) conflict |= a != b && moves[a].to == moves[b].from;
    if (!conflict) {
        for (const Move& mv : moves)
            if (mv.from != mv.to) ParallelMoves::emit(env_, p, mv.from, mv.to, mv.cls, dst);
        return;
    }
    for (const Move& mv : moves) s_.pm.add(mv.from, mv.to, mv.cls);
    s_.pm.resolve(env_, p, s_.emergency, s_.emergency_count, dst);
}

std::string Allocator::alloc_inst(uint32_t i, PRegSet clobbers) {
    ++stamp_;
    const uint32_t ob = f_.operands_begin[i], oe = f_.operands_begin[i + 1];
    const uint32_t n = oe - ob;
    if (n == 0 && clobbers.empty()) return {};
    const Operand* ops = f_.operands.data() + ob;
    Allocation* allocs = out_.allocs.data() + ob;
    VInfo* vi = s_.vi.data();
    Masks* m = s_.m;
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        m[c] = Masks();
        for (uint64_t bits = clobbers.bits[c]; bits; bits &= bits - 1)
            m[c].clob |= bit_of(c * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits)));
    }
    s_.after.clear();
    s_.before.clear();
    s_.displaced.clear();
    s_.deferred_free.clear();
    if (++s_.reuse_gen == 0) {
        std::fill(std::begin(s_.reuse_stamp), std::end(s_.reuse_stamp), 0);
        s_.reuse_gen = 1;
    }
    const uint32_t gen = s_.reuse_gen;
    auto is_reused = [&](uint32_t k) { return s_.reuse_stamp[k] == gen; };

    // Step 0: fixed registers, and each operand's pass (steps 2 and 4):
    // defs 0-4, uses 5-9; `order` lists the operands by pass.
    uint8_t* pass_of = s_.pass_of;
    uint32_t count[11] = {};
    for (uint32_t k = 0; k < n; ++k) {
        const Operand& op = ops[k];
        const unsigned c = static_cast<unsigned>(op.vreg.cls());
        if (op.kind != OperandKind::Def) continue;
        const bool reuse_fixed = op.constraint == Constraint::Reuse && ops[op.aux].constraint == Constraint::Fixed;
        if (op.constraint == Constraint::Fixed) {
            m[c].fixD |= bit_of(op.fixed_reg().index());
        } else if (op.constraint == Constraint::Reuse) {
            s_.reuse_stamp[op.aux] = gen;
            s_.reuse_def[op.aux] = k;
            if (reuse_fixed) m[c].fixD |= bit_of(ops[op.aux].fixed_reg().index());
        }
        uint8_t pass;
        if (op.constraint == Constraint::Fixed || reuse_fixed)
            pass = 0;
        else if (op.constraint == Constraint::Reuse)
            pass = 1;
        else if (op.constraint == Constraint::Reg)
            pass = op.pos == OperandPos::Early ? 2 : 3;
        else
            pass = 4;
        pass_of[k] = pass;
        ++count[pass + 1];
    }
    for (uint32_t k = 0; k < n; ++k) {
        const Operand& op = ops[k];
        if (op.kind != OperandKind::Use) continue;
        const unsigned c = static_cast<unsigned>(op.vreg.cls());
        const uint32_t v = op.vreg.index();
        uint8_t pass;
        if (op.constraint == Constraint::Fixed)
            pass = 9;
        else if (is_reused(k))
            pass = 8;
        else if (op.constraint == Constraint::Any)
            pass = 7;
        else
            pass = op.pos == OperandPos::Late ? 5 : 6;
        pass_of[k] = pass;
        ++count[pass + 1];
        if (op.constraint == Constraint::Fixed) {
            const uint32_t idx = op.fixed_reg().index();
            (op.pos == OperandPos::Early ? m[c].fixE : m[c].fixL) |= bit_of(idx);
            s_.fix_vreg[idx] = v;
        } else if (op.constraint == Constraint::Reg && !is_reused(k) && vi[v].reg != kNoReg) {
            m[c].pinned |= bit_of(vi[v].reg);
        }
    }

    for (unsigned p = 1; p <= 10; ++p) count[p] += count[p - 1];
    uint8_t* order = s_.op_order;
    for (uint32_t k = 0; k < n; ++k) order[count[pass_of[k]]++] = static_cast<uint8_t>(k);
    const uint32_t num_defs = count[4];  // count[p] is now the end of pass p

    // Step 1: values live across the instruction (in a register below, not
    // defined here); displace those in the way.
    for (unsigned c = 0; c < kNumRegClasses; ++c) m[c].thru = s_.occupied[c];
    for (uint32_t k = 0; k < n; ++k) {
        const Operand& op = ops[k];
        const uint32_t r = vi[op.vreg.index()].reg;
        if (op.kind == OperandKind::Def && r != kNoReg) m[static_cast<unsigned>(op.vreg.cls())].thru &= ~bit_of(r);
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        for (uint64_t bits = m[c].thru & (m[c].clob | m[c].fixD | m[c].fixE | m[c].fixL); bits; bits &= bits - 1) {
            const uint64_t bit = bits & (~bits + 1);
            const uint32_t idx = lowest(c, bit);
            const uint32_t w = s_.owner[idx];
            const bool own_fixed = (bit & (m[c].fixE | m[c].fixL)) && s_.fix_vreg[idx] == w;
            if ((bit & (m[c].clob | m[c].fixD)) || !own_fixed) displace(w, idx);
        }
        m[c].pinned &= m[c].thru;
    }

    auto fail = [&] { return "inst" + to_string(i) + ": more values need registers at once than there are"; };

    // Step 2: defs. Passes: fixed, reuse, Early Reg, Late Reg, Any.
    {
        for (uint32_t j = 0; j < num_defs; ++j) {
            const uint32_t k = order[j];
            const Operand& op = ops[k];
            const int pass = pass_of[k];
            const bool reuse_fixed = op.constraint == Constraint::Reuse && ops[op.aux].constraint == Constraint::Fixed;
            const unsigned c = static_cast<unsigned>(op.vreg.cls());
            const uint32_t v = op.vreg.index();
            VInfo& x = vi[v];
            const uint32_t below = x.reg;
            const bool store = in_memory(v) && !(lazy_stores_ && (x.flags & kGlobal) && !s_.slot_read[x.slot]);
            Masks& mc = m[c];
            Allocation a;
            if (pass == 0) {
                const PReg r = reuse_fixed ? ops[op.aux].fixed_reg() : op.fixed_reg();
                a = Allocation::reg(r);
                (op.pos == OperandPos::Early && !reuse_fixed ? mc.defE : mc.defL) |= bit_of(r.index());
            } else if (pass == 1) {
                const uint32_t r = pick(c, mc.defE | mc.defL | mc.fixE | mc.fixL | mc.clob | mc.useE, below, true);
                if (r == kNone) return fail();
                a = Allocation::reg(PReg::from_index(r));
                mc.defL |= bit_of(r);
                mc.useE |= bit_of(r);
            } else if (pass == 2) {
                const uint32_t r = pick(c, mc.defE | mc.defL | mc.fixE | mc.fixL | mc.clob | mc.useE | mc.useL, below, true);
                if (r == kNone) return fail();
                a = Allocation::reg(PReg::from_index(r));
                mc.defE |= bit_of(r);
            } else {
                uint64_t busy = mc.defE | mc.defL | mc.fixL | mc.useL;
                if (op.pos == OperandPos::Early) busy |= mc.fixE | mc.clob | mc.useE;
                uint32_t r = kNone;
                if (pass == 3) {
                    r = pick(c, busy, below, true);
                    if (r == kNone) return fail();
                } else if (below != kNoReg && !((busy | mc.thru) & bit_of(below))) {
                    r = below;
                } else if (!store && (s_.all[c] & ~(busy | mc.thru))) {
                    r = lowest(c, s_.all[c] & ~(busy | mc.thru));
                }
                if (r != kNone) {
                    a = Allocation::reg(PReg::from_index(r));
                    (op.pos == OperandPos::Early ? mc.defE : mc.defL) |= bit_of(r);
                } else {
                    a = slot_of(v);  // its home (stored no more), or a slot for a dead value
                }
            }
            allocs[k] = a;
            if (below != kNoReg) {
                if (a != Allocation::reg(PReg::from_index(below)))
                    s_.after.push_back({a, Allocation::reg(PReg::from_index(below)), static_cast<RegClass>(c)});
                release(below);
            }
            if (store || x.slot != kNone) {
                const Allocation slot = slot_of(v);
                if (store && a != slot) s_.after.push_back({a, slot, static_cast<RegClass>(c)});
                if (!(x.flags & kGlobal)) {  // a local slot is free above its definition
                    s_.deferred_free.push_back(x.slot - s_.num_global);
                    x.slot = kNone;
                    x.flags &= static_cast<uint8_t>(~kSpilled);
                }
            }
        }
    }

    // Step 3: displaced values move to a register free across the
    // instruction, else are reloaded from their slot after it.
    for (auto [w, below] : s_.displaced) {
        const unsigned c = below / kMaxRegsPerClass;
        Masks& mc = m[c];
        const uint64_t free =
            s_.all[c] & ~(mc.thru | mc.defE | mc.defL | mc.fixE | mc.fixL | mc.fixD | mc.clob | mc.useE | mc.useL);
        VInfo& x = vi[w];
        if (free) {
            const uint32_t r = lowest(c, free);
            take(w, r);
            mc.thru |= bit_of(r);
            x.reloc = static_cast<uint32_t>(s_.after.size());
            s_.after.push_back(
                {Allocation::reg(PReg::from_index(r)), Allocation::reg(PReg::from_index(below)), static_cast<RegClass>(c)});
        } else {
            x.reloc = kNone;
            s_.after.push_back({read_slot(w), Allocation::reg(PReg::from_index(below)), static_cast<RegClass>(c)});
        }
    }
    for (uint32_t k = 0; k < n; ++k) {  // relocated values read in place stay
        const Operand& op = ops[k];
        const uint32_t v = op.vreg.index();
        if (op.kind == OperandKind::Use && op.constraint == Constraint::Reg && !is_reused(k) && vi[v].reg != kNoReg &&
            vi[v].disp == stamp_)
            m[static_cast<unsigned>(op.vreg.cls())].pinned |= bit_of(vi[v].reg);
    }

    // Step 4: uses. Passes: Late Reg, Early Reg, Any, reused inputs, Fixed.
    {
        for (uint32_t j = num_defs; j < n; ++j) {
            const uint32_t k = order[j];
            const Operand& op = ops[k];
            const int pass = pass_of[k] - 5;
            const unsigned c = static_cast<unsigned>(op.vreg.cls());
            const uint32_t v = op.vreg.index();
            Masks& mc = m[c];
            const bool late = op.pos == OperandPos::Late;
            uint32_t r = vi[v].reg;
            uint64_t busy = mc.fixE | mc.fixL | mc.defE | mc.useE | mc.useL;  // besides mc.thru
            if (late) busy |= mc.defL | mc.clob;
            if (pass <= 1) {
                if (r == kNoReg) {
                    const uint64_t lasting = s_.all[c] & ~(busy | mc.thru | mc.defL | mc.clob);
                    r = lasting ? lowest(c, lasting) : pick(c, busy, kNoReg, false);
                    if (r == kNone) return fail();
                    take(v, r);
                }
                allocs[k] = Allocation::reg(PReg::from_index(r));
            } else if (pass == 2) {
                if (r != kNoReg && !(late && (bit_of(r) & (mc.defE | mc.defL | mc.clob)))) {
                    allocs[k] = Allocation::reg(PReg::from_index(r));
                } else if (r == kNoReg && !in_memory(v) && (s_.all[c] & ~(busy | mc.thru))) {
                    r = lowest(c, s_.all[c] & ~(busy | mc.thru));
                    take(v, r);
                    allocs[k] = Allocation::reg(PReg::from_index(r));
                } else {
                    allocs[k] = read_slot(v);
                    r = kNoReg;
                }
            } else {
                const Allocation to = pass == 3 ? allocs[s_.reuse_def[k]] : Allocation::reg(op.fixed_reg());
                allocs[k] = to;
                if (r != kNoReg) {
                    if (Allocation::reg(PReg::from_index(r)) != to) {
                        bool dup = false;
                        for (const Move& mv : s_.before) dup |= mv.to == to;
                        if (!dup) s_.before.push_back({Allocation::reg(PReg::from_index(r)), to, static_cast<RegClass>(c)});
                    }
                } else if (bit_of(to.index)) {
                    take(v, to.index);  // the value waits in the operand's register
                } else {  // a fixed register outside the allocatable set
                    bool dup = false;
                    for (const Move& mv : s_.before) dup |= mv.to == to;
                    if (!dup) s_.before.push_back({read_slot(v), to, static_cast<RegClass>(c)});
                }
                r = to.is_reg() && bit_of(to.index) ? to.index : kNoReg;
            }
            if (r != kNoReg) {
                mc.useE |= bit_of(r);
                if (late) mc.useL |= bit_of(r);
            }
            vi[v].next_use = i;
        }
    }
    for (uint32_t k : s_.deferred_free) s_.local_free.push_back(k);

    flush(s_.after, ProgPoint::after(i));
    flush(s_.before, ProgPoint::before(i));
    return {};
}

// Where the parallel move on the edge from b reads argument a (moving to
// `to`): its register; else, when a register is free and a is made in b (or
// `anywhere`), one taken from above: to's own when free, else preferably one
// outside `avoid`; else its slot.
Allocation Allocator::edge_source(uint32_t a, uint32_t b, uint32_t term, Allocation to, uint64_t avoid, bool anywhere) {
    VInfo& x = s_.vi[a];
    const unsigned c = x.cls;
    if (x.reg != kNoReg) return Allocation::reg(PReg::from_index(x.reg));
    const uint64_t free = s_.all[c] & ~s_.occupied[c];
    if (!free || !(anywhere || x.def_block == b)) return read_slot(a);
    const uint32_t r = to.is_reg() && s_.owner[to.index] == kNone ? to.index
                       : (free & ~avoid)                             ? lowest(c, free & ~avoid)
                                                                     : lowest(c, free);
    take(a, r);
    x.next_use = term;
    return Allocation::reg(PReg::from_index(r));
}

// The parallel move into the parameter slots of t, the only successor of b
// (several predecessors), at Before(term). Arguments defined in b are read
// from registers while any is free, others from their slots.
void Allocator::edge_moves(uint32_t b, uint32_t term, uint32_t t) {
    const uint32_t e = f_.succs_begin[b];
    s_.after.clear();
    for (uint32_t k = 0; k < f_.params_begin[t + 1] - f_.params_begin[t]; ++k) {
        const uint32_t p = f_.params[f_.params_begin[t] + k].index();
        if (!(s_.vi[p].flags & kUsed)) continue;
        const uint32_t a = f_.branch_args[f_.branch_args_begin[e] + k].index();
        const Allocation to = Allocation::stack(s_.vi[p].slot);
        s_.after.push_back({edge_source(a, b, term, to, 0, false), to, static_cast<RegClass>(s_.vi[a].cls)});
    }
    flush(s_.after, ProgPoint::before(term));
}

// Before walking block b: the registers each successor t that has b as its
// only predecessor (and was processed already) expects its values in. The
// argument of a parameter takes the parameter's place. A value b can leave
// there (no conflict with another successor's wishes, registers left for
// the terminator's own uses) is marked met; t loads the others from their
// slots.
void Allocator::carry_in(uint32_t b, uint32_t term) {
    const uint32_t ob = f_.operands_begin[term], oe = f_.operands_begin[term + 1];
    // Registers the terminator's uses may need; carrying nothing when it has
    // fixed operands or clobbers keeps every move away from After(term).
    int room[kNumRegClasses];
    bool can_carry = f_.clobbers.empty() || !std::binary_search(
        f_.clobbers.begin(), f_.clobbers.end(), std::pair<uint32_t, PRegSet>(term, PRegSet()),
        [](const std::pair<uint32_t, PRegSet>& x, const std::pair<uint32_t, PRegSet>& y) { return x.first < y.first; });
    for (unsigned c = 0; c < kNumRegClasses; ++c) room[c] = __builtin_popcountll(s_.all[c]);
    for (uint32_t o = ob; o < oe; ++o) {
        const Operand& op = f_.operands[o];
        can_carry &= op.constraint != Constraint::Fixed;
        --room[static_cast<unsigned>(op.vreg.cls())];
    }
    for (uint32_t e = f_.succs_begin[b]; e < f_.succs_begin[b + 1]; ++e) {
        const uint32_t t = f_.succs[e];
        if (t <= b || f_.preds_begin[t + 1] - f_.preds_begin[t] != 1) continue;
        const auto [first, last] = s_.entry_range[t];
        std::fill(s_.entry_met.begin() + first, s_.entry_met.begin() + last, 0);  // an earlier walk's choice
        for (uint32_t k = first; k < last && can_carry; ++k) {
            const auto [v, idx] = s_.entry[k];
            uint32_t u = v;
            if (is_param_of(v, t))
                u = f_.branch_args[f_.branch_args_begin[e] + s_.vi[v].param_index].index();
            const unsigned c = idx / kMaxRegsPerClass;
            VInfo& x = s_.vi[u];
            if (x.reg == idx) {
                s_.entry_met[k] = 1;
                continue;
            }
            bool term_use = false;  // its register is counted already
            for (uint32_t o = ob; o < oe; ++o) term_use |= f_.operands[o].vreg.index() == u;
            if (x.reg != kNoReg || s_.owner[idx] != kNone || (room[c] <= 0 && !term_use)) continue;
            take(u, idx);
            x.next_use = term + 1;
            room[c] -= !term_use;
            s_.entry_met[k] = 1;
        }
        emit_top(t);
    }
}

// After walking block b: what it expects in registers at its top. Its only
// predecessor, when processed later, may leave the values there (carry_in);
// otherwise they are loaded from their home slots now.
void Allocator::finish_top(uint32_t b) {
    const uint32_t first = static_cast<uint32_t>(s_.entry.size());
    if (lazy_stores_ && f_.preds_begin[b + 1] - f_.preds_begin[b] > 1) {
        bool back = false;  // a predecessor walked before this block
        for (uint32_t e = f_.preds_begin[b]; e < f_.preds_begin[b + 1]; ++e) back |= f_.preds[e] >= b;
        if (s_.iface[b].second == kNone || !back) {
            // The registers this walk wants become the interface (the first
            // walk of a loop header, any walk of a block whose predecessors
            // all come later).
            for (unsigned c = 0; c < kNumRegClasses; ++c)
                for (uint64_t bits = s_.occupied[c]; bits; bits &= bits - 1)
                    s_.entry.push_back({s_.owner[lowest(c, bits & (~bits + 1))], lowest(c, bits & (~bits + 1))});
            s_.entry_met.resize(s_.entry.size(), 1);
            s_.iface[b] = {first, static_cast<uint32_t>(s_.entry.size())};
        }
        s_.entry_range[b] = {first, first};
        top_fixup(b);
        return;
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        for (uint64_t bits = s_.occupied[c]; bits; bits &= bits - 1) {
            const uint32_t idx = lowest(c, bits & (~bits + 1));
            const uint32_t w = s_.owner[idx];
            assert((s_.vi[w].flags & kGlobal) && "only global values are live into a block");
            s_.entry.push_back({w, idx});
            s_.entry_met.push_back(0);
            s_.vi[w].reg = kNoReg;
            s_.owner[idx] = kNone;
        }
        s_.occupied[c] = 0;
    }
    s_.entry_range[b] = {first, static_cast<uint32_t>(s_.entry.size())};
    const bool one_pred = f_.preds_begin[b + 1] - f_.preds_begin[b] == 1;
    if (!(b != 0 && one_pred && f_.preds[f_.preds_begin[b]] < b)) emit_top(b);
}

// Block b has several predecessors, each delivering the interface: at its
// top, moves turn that into the registers this walk wants (values it does
// not deliver come from their slots), and a parameter whose slot is read
// below is stored there.
void Allocator::top_fixup(uint32_t b) {
    s_.after.clear();
    const auto [first, last] = s_.iface[b];
    for (uint32_t k = first; k < last; ++k) {
        const auto [v, r] = s_.entry[k];
        VInfo& x = s_.vi[v];
        const RegClass cls = static_cast<RegClass>(x.cls);
        if (is_param_of(v, b) && s_.slot_read[x.slot])
            s_.after.push_back({Allocation::reg(PReg::from_index(r)), Allocation::stack(x.slot), cls});
        if (x.reg != kNoReg) {
            if (x.reg != r)
                s_.after.push_back({Allocation::reg(PReg::from_index(r)), Allocation::reg(PReg::from_index(x.reg)), cls});
            x.flags |= kVisit;
        }
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        for (uint64_t bits = s_.occupied[c]; bits; bits &= bits - 1) {
            const uint32_t idx = lowest(c, bits & (~bits + 1));
            const uint32_t w = s_.owner[idx];
            if (s_.vi[w].flags & kVisit)
                s_.vi[w].flags &= static_cast<uint8_t>(~kVisit);
            else
                s_.after.push_back({read_slot(w), Allocation::reg(PReg::from_index(idx)), static_cast<RegClass>(c)});
            s_.vi[w].reg = kNoReg;
            s_.owner[idx] = kNone;
        }
        s_.occupied[c] = 0;
    }
    const uint32_t start = static_cast<uint32_t>(s_.top_edits.size());
    if (!s_.after.empty()) sequence(s_.after, ProgPoint::before(f_.block_insts_begin[b]), s_.top_edits);
    s_.top_range[b] = {start, static_cast<uint32_t>(s_.top_edits.size())};
}

// The jump of b to t (several predecessors, an interface): values live into
// t stay in their interface registers (taken here, so b's walk keeps them
// there), arguments move at Before(term) to their parameters' interface
// registers, or to the parameters' slots when not in the interface.
void Allocator::iface_moves(uint32_t b, uint32_t term, uint32_t t) {
    const uint32_t e = f_.succs_begin[b];
    s_.after.clear();
    const auto [first, last] = s_.iface[t];
    for (uint32_t k = first; k < last; ++k) {
        const auto [v, r] = s_.entry[k];
        if (is_param_of(v, t)) continue;
        VInfo& x = s_.vi[v];
        if (x.reg == r) continue;
        if (x.reg == kNoReg && s_.owner[r] == kNone) {
            take(v, r);
            x.next_use = term + 1;
            continue;
        }
        const Allocation from = x.reg != kNoReg ? Allocation::reg(PReg::from_index(x.reg)) : read_slot(v);
        s_.after.push_back({from, Allocation::reg(PReg::from_index(r)), static_cast<RegClass>(x.cls)});
    }
    uint64_t dest[kNumRegClasses] = {};  // the parameters' interface registers
    for (uint32_t k = first; k < last; ++k)
        if (is_param_of(s_.entry[k].first, t)) dest[s_.entry[k].second / kMaxRegsPerClass] |= bit_of(s_.entry[k].second);
    for (uint32_t k = 0; k < f_.params_begin[t + 1] - f_.params_begin[t]; ++k) {
        const uint32_t p = f_.params[f_.params_begin[t] + k].index();
        if (!(s_.vi[p].flags & kUsed)) continue;
        Allocation to = Allocation::stack(s_.vi[p].slot);
        for (uint32_t j = first; j < last; ++j)
            if (s_.entry[j].first == p) to = Allocation::reg(PReg::from_index(s_.entry[j].second));
        const uint32_t a = f_.branch_args[f_.branch_args_begin[e] + k].index();
        const unsigned c = s_.vi[a].cls;
        s_.after.push_back({edge_source(a, b, term, to, dest[c], true), to, static_cast<RegClass>(c)});
    }
    flush(s_.after, ProgPoint::before(term));
}

// The loads at the top of block b of the values its predecessor does not
// leave in their registers.
void Allocator::emit_top(uint32_t b) {
    const uint32_t start = static_cast<uint32_t>(s_.top_edits.size());
    const ProgPoint p = ProgPoint::before(f_.block_insts_begin[b]);
    const auto [first, last] = s_.entry_range[b];
    for (uint32_t k = first; k < last; ++k) {
        if (s_.entry_met[k]) continue;
        const auto [w, idx] = s_.entry[k];
        const uint32_t slot = s_.vi[w].slot;
        s_.slot_read[slot] = 1;
        s_.top_edits.push_back({p, Allocation::stack(slot), Allocation::reg(PReg::from_index(idx)),
                                static_cast<RegClass>(idx / kMaxRegsPerClass)});
    }
    s_.top_range[b] = {start, static_cast<uint32_t>(s_.top_edits.size())};
}

std::string Allocator::alloc_block(uint32_t b) {
    s_.local_next = 0;
    s_.local_free.clear();
    const uint32_t group_first = static_cast<uint32_t>(s_.group_end.size());
    const uint32_t first = f_.block_insts_begin[b], term = f_.block_insts_begin[b + 1] - 1;
    // Clobber sets by a cursor moving down through the block.
    size_t ci = static_cast<size_t>(
        std::lower_bound(f_.clobbers.begin(), f_.clobbers.end(), term + 1,
                         [](const std::pair<uint32_t, PRegSet>& c, uint32_t x) { return c.first < x; }) -
        f_.clobbers.begin());
    auto clobbers_of = [&](uint32_t i) {
        PRegSet set;
        while (ci > 0 && f_.clobbers[ci - 1].first >= i) {
            if (f_.clobbers[ci - 1].first == i) set |= f_.clobbers[ci - 1].second;
            --ci;
        }
        return set;
    };
    uint32_t i = term + 1;
    bool edge = false;
    if (f_.succs_begin[b + 1] - f_.succs_begin[b] == 1) {
        const uint32_t t = f_.succs[f_.succs_begin[b]];
        if (f_.preds_begin[t + 1] - f_.preds_begin[t] > 1 &&
            (s_.iface[t].second != kNone || f_.params_begin[t + 1] > f_.params_begin[t])) {
            // The contract: this jump has no operands.
            clobbers_of(term);
            if (s_.iface[t].second != kNone)
                iface_moves(b, term, t);
            else
                edge_moves(b, term, t);
            i = term;
            edge = true;
        }
    }
    if (!edge) carry_in(b, term);
    while (i-- > first) {
        std::string err = alloc_inst(i, clobbers_of(i));
        if (!err.empty()) return err;
    }
    finish_top(b);
    s_.block_groups[b] = {group_first, static_cast<uint32_t>(s_.group_end.size())};
    return {};
}

std::string Allocator::run() {
    std::string err = setup_env();
    if (err.empty() && !trust_blocks_) err = validate_cfg(f_);
    if (!err.empty()) return err;
    s_.vi.assign(f_.num_vregs, VInfo());
    if (!(err = scan_defs()).empty()) return err;
    if (!(err = scan_uses()).empty()) return err;
    assign_global_slots();
    std::fill(std::begin(s_.owner), std::end(s_.owner), kNone);
    s_.occupied[0] = s_.occupied[1] = 0;
    s_.local_max = 0;
    s_.emergency = kNoSlot;
    s_.emergency_count = kEmergencyMark;
    out_.allocs.assign(f_.operands.size(), Allocation());
    const uint32_t nb = f_.num_blocks();
    s_.block_edits.clear();
    s_.group_end.clear();
    s_.entry.clear();
    s_.entry_met.clear();
    s_.top_edits.clear();
    s_.block_groups.resize(nb);
    s_.entry_range.resize(nb);
    s_.top_range.resize(nb);
    s_.slot_read.assign(s_.num_global, 0);
    lazy_stores_ = true;
    for (uint32_t b = 1; b < nb && lazy_stores_; ++b) {
        bool earlier = false;
        for (uint32_t e = f_.preds_begin[b]; e < f_.preds_begin[b + 1]; ++e) earlier |= f_.preds[e] < b;
        lazy_stores_ = earlier;
    }
    // Blocks in reverse: each (usually) after its successors, so it can
    // leave values where they expect them.
    s_.iface.assign(nb, {0, kNone});
    for (uint32_t b = nb; b-- > 0;) {
        const bool fresh = s_.iface[b].second == kNone;
        err = alloc_block(b);
        // A block that just got its interface after some predecessors (back
        // edges) were walked: those are walked again, with every block laid
        // out between, then the block itself (its moves at the top turn the
        // interface into what it wants).
        uint32_t hi = 0;
        bool again = false;
        if (fresh && s_.iface[b].second != kNone) {
            for (uint32_t e = f_.preds_begin[b]; e < f_.preds_begin[b + 1]; ++e) {
                again |= f_.preds[e] >= b;
                hi = std::max(hi, f_.preds[e]);
            }
        }
        for (uint32_t x = hi; again && err.empty() && x > b; --x) err = alloc_block(x);
        if (again && err.empty()) err = alloc_block(b);
        if (!err.empty()) {
            out_.clear();
            return err;
        }
    }
    // Edits in program order: per block its top loads, then its groups in
    // reverse (they were made bottom-up).
    out_.edits.reserve(s_.block_edits.size() + s_.top_edits.size());
    for (uint32_t b = 0; b < nb; ++b) {
        const auto [t0, t1] = s_.top_range[b];
        out_.edits.insert(out_.edits.end(), s_.top_edits.begin() + t0, s_.top_edits.begin() + t1);
        const auto [g0, g1] = s_.block_groups[b];
        for (uint32_t k = g1; k-- > g0;) {
            const uint32_t from = k ? s_.group_end[k - 1] : 0;
            out_.edits.insert(out_.edits.end(), s_.block_edits.begin() + from, s_.block_edits.begin() + s_.group_end[k]);
        }
    }
    uint32_t slots = s_.num_global + s_.local_max;
    if (s_.emergency != kNoSlot) {  // the sequencer's extra slot goes last
        for (Edit& e : out_.edits) {
            if (e.from.is_stack() && e.from.index == kEmergencyMark) e.from.index = slots;
            if (e.to.is_stack() && e.to.index == kEmergencyMark) e.to.index = slots;
        }
        ++slots;
    }
    out_.num_spill_slots = slots;
    out_.stats.spill_slots = slots;
    out_.stats.edits = static_cast<uint32_t>(out_.edits.size());
    return {};
}

}  // namespace

std::string allocate_single_pass(const Function& func, const MachineEnv& env, Output& out, Context& ctx) {
    out.clear();
    if (!ctx.single_pass) ctx.single_pass = new Context::SinglePass;
    return Allocator(*ctx.single_pass, func, env, out, ctx.trust_block_structure).run();
}

}  // namespace heron::ra
