// Resolution: turning assigned intervals into operand allocations and edits
// (Wimmer and Franz, CGO 2010, section 5 "Resolution").
//
// Moves come from four places, each a parallel move sequenced by moves.h:
//   - a split inside a block whose two pieces got different locations:
//     at Before(i) of the split position (phase 0);
//   - control-flow edges: for every vreg live into a block and every block
//     parameter, the location at the end of the predecessor against the one
//     at the start of the successor. The moves go at Before(terminator) of a
//     predecessor with one successor (and no operands on its branch), else at
//     Before(first instruction) of the successor, which then has only this
//     predecessor (phase 1);
//   - Fixed uses and reused inputs: copies into the operand's register after
//     the other moves at Before(i) (phase 3);
//   - Fixed defs: copies out of the register at After(i).
// Phases order the groups at one point; within a group the order comes from
// the parallel-move sequencer.
//
// Spill stores move to the definition (Wimmer and Mössenböck, VEE 2005,
// section 5): under SSA a vreg's slot holds its value from the first store
// on, so when a vreg would be stored more than once, or inside a deeper loop
// than its definition, it is stored once after the definition and every
// other store of its register to its slot is dropped. A vreg whose first
// piece already lives in the slot needs no store at all.
//
// Rematerialization: a vreg defined by a kRemat instruction (a constant)
// is never stored; every move that would read it from its slot re-executes
// its definition instead (Allocation::remat), and moves into its slot are
// dropped.
#include <algorithm>
#include <cassert>
#include <type_traits>

#include "codegen/regalloc/alloc_state.h"

namespace heron::ra {
namespace {

// At one point, moves run in phase order. A block whose only instruction is
// its jump gets both the moves of its incoming edge (at its start) and those
// of its outgoing edge (before its terminator) at the same point: the
// incoming ones must run first, as a separate parallel move. A parameter's
// store at its definition reads it right after the incoming moves wrote it.
constexpr uint32_t kPhaseSplit = 0, kPhaseEdgeIn = 1, kPhaseParamStore = 2, kPhaseEdgeOut = 3, kPhaseFixup = 4;
constexpr uint32_t kPhaseDefFixup = 0, kPhaseDefStore = 1;  // at After(i)
constexpr uint32_t kPhases = 8;

uint32_t point_key(ProgPoint p, uint32_t phase) { return p.bits * kPhases + phase; }
uint32_t inst_of_key(uint32_t key) { return key / kPhases / 2; }

// A vreg's location at a position, found from the piece that held its
// previous look-up (forward along the piece list, or from the first piece
// when the position lies before that piece): look-ups in position order walk
// each piece list once. The arrays are held here, in locals of the walks:
// reached through the resolver's members, GCC reloads them after every
// store of an operand allocation (its byte-sized kind may alias anything).
struct PieceCursor {
    const Interval* iv;
    const uint32_t* first;  // per vreg: its first piece
    uint32_t* cursor;       // per vreg: the piece of its last look-up

    Allocation at(uint32_t v, uint32_t pos) {
        uint32_t p = cursor[v];
        if (iv[p].start > pos) p = first[v];
        for (uint32_t n = iv[p].next; n != kNone && iv[n].start <= pos; n = iv[n].next) p = n;
        cursor[v] = p;
        return iv[p].loc;
    }
};

// The same look-up when no interval was split (the usual case when the scan
// never runs short of registers): each vreg has one piece.
struct OnePieceCursor {
    const Interval* iv;
    const uint32_t* first;

    Allocation at(uint32_t v, uint32_t) const { return iv[first[v]].loc; }
};

class Resolver {
public:
    explicit Resolver(Context::Impl& s) : s_(s), f_(*s.func) {}
    void run(Output& out);

private:
    PieceCursor cursor(std::vector<uint32_t>& pieces) const {
        return {s_.intervals.data(), s_.first_interval.data(), pieces.data()};
    }
    OnePieceCursor one_piece_cursor() const { return {s_.intervals.data(), s_.first_interval.data()}; }
    /// Where a move reads v at `pos`: its location, or its definition
    /// again when v is rematerializable and spilled there.
    template <class Cursor>
    Allocation source_at(Cursor& c, uint32_t v, uint32_t pos) const {
        const Allocation a = c.at(v, pos);
        return a.is_stack() && remat_[v] != kNone ? Allocation::remat(remat_[v]) : a;
    }
    void add(uint32_t key, Allocation from, Allocation to, RegClass cls) {
        if (from != to) s_.split_moves.push_back({key, from, to, cls});
    }
    // A move between two pieces of vreg v.
    void add_own(uint32_t key, uint32_t v, Allocation from, Allocation to, RegClass cls) {
        if (from == to) return;
        if (remat_[v] != kNone) {
            if (to.is_stack()) return;  // its slot is never read
            if (from.is_stack()) from = Allocation::remat(remat_[v]);
        }
        const bool store = from.is_reg() && to.is_stack();
        s_.split_moves.push_back({key, from, to, cls, store ? v : kNone});
    }
    void stores_at_definitions();
    template <class Cursor>
    void operand_allocs_and_fixups(Output& out, Cursor pc);
    void split_moves();
    template <class Cursor>
    void edge_moves(Cursor from_cursor, Cursor to_cursor);

    Context::Impl& s_;
    const Function& f_;
    // Per vreg: its kRemat definition, or kNone (set by liveness at each
    // definition; read only for vregs that have a location).
    const std::vector<uint32_t>& remat_ = s_.remat_inst;
};

// Operand allocations, and the copies around instructions: into the
// registers of Fixed uses and reused inputs (Before(i)) and out of those of
// Fixed defs (After(i)). `pc` finds the operands' pieces (operands come in
// instruction order).
template <class Cursor>
void Resolver::operand_allocs_and_fixups(Output& out, Cursor pc) {
    out.allocs.resize(f_.operands.size());
    Allocation* allocs = out.allocs.data();
    const Operand* ops = f_.operands.data();
    uint32_t* fixup_uses = s_.fixup_uses;
    uint32_t* fixup_defs = s_.fixup_defs;
    const uint64_t* special_bits = s_.inst_special.data();
    const uint64_t* inst_reused = s_.inst_reused.data();
    const uint32_t* ob_of = f_.operands_begin.data();
    const uint32_t* def_pos = s_.def_pos.data();
    const uint32_t ni = f_.num_insts();
    for (uint32_t i = 0; i < ni; ++i) {
        const uint32_t ob = ob_of[i], oe = ob_of[i + 1];
        if (!((special_bits[i / 64] >> (i % 64)) & 1)) {
            // No Fixed or Reuse operand (liveness marks those instructions).
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = ops[o];
                const uint32_t v = op.vreg.index();
                const uint32_t pos = op.kind == OperandKind::Def       ? def_pos[v]
                                     : op.pos == OperandPos::Early ? pos_early(i)
                                                                   : pos_late(i);
                allocs[o] = pc.at(v, pos);
            }
            continue;
        }
        // The uses a Reuse def consumes take the def's allocation (set at
        // the def, before or after the use in operand order). Uses that need
        // a copy into their register are collected in operand order, defs
        // that need one out of it likewise; their moves follow the walk.
        const uint64_t reused = inst_reused[i];
        auto is_reused = [&](uint32_t k) {
            if (k < 64) return ((reused >> k) & 1) != 0;
            for (uint32_t o2 = ob; o2 < oe; ++o2)
                if (ops[o2].kind == OperandKind::Def && ops[o2].constraint == Constraint::Reuse && ops[o2].aux == k)
                    return true;
            return false;
        };
        uint32_t num_uses = 0, num_defs = 0;
        for (uint32_t o = ob; o < oe; ++o) {
            const Operand& op = ops[o];
            if (op.kind == OperandKind::Def) {
                // A Fixed def, or a Reuse of a Fixed use: that register.
                Allocation a;
                if (op.constraint == Constraint::Fixed) {
                    a = Allocation::reg(op.fixed_reg());
                    fixup_defs[num_defs++] = o;
                } else if (op.constraint == Constraint::Reuse && ops[ob + op.aux].constraint == Constraint::Fixed) {
                    a = Allocation::reg(ops[ob + op.aux].fixed_reg());
                    fixup_defs[num_defs++] = o;
                } else {
                    a = pc.at(op.vreg.index(), def_pos[op.vreg.index()]);
                    if (op.constraint == Constraint::Reuse) allocs[ob + op.aux] = a;
                }
                allocs[o] = a;
                continue;
            }
            if (op.constraint == Constraint::Fixed) {
                allocs[o] = Allocation::reg(op.fixed_reg());
                fixup_uses[num_uses++] = o;
            } else if (is_reused(o - ob)) {
                fixup_uses[num_uses++] = o;  // its allocation is the def's
            } else {
                allocs[o] = pc.at(op.vreg.index(), op.pos == OperandPos::Early ? pos_early(i) : pos_late(i));
            }
        }
        const uint32_t before = point_key(ProgPoint::before(i), kPhaseFixup);
        const size_t group = s_.split_moves.size();
        for (uint32_t k = 0; k < num_uses; ++k) {
            const Operand& op = ops[fixup_uses[k]];
            const Allocation to = allocs[fixup_uses[k]];
            const Allocation from = source_at(pc, op.vreg.index(), pos_before(i));
            bool dup = false;  // the same vreg named twice with one register
            for (size_t m = group; m < s_.split_moves.size(); ++m) dup |= s_.split_moves[m].to == to;
            if (!dup) add(before, from, to, op.vreg.cls());
        }
        const uint32_t after = point_key(ProgPoint::after(i), kPhaseDefFixup);
        for (uint32_t k = 0; k < num_defs; ++k) {
            const Operand& op = ops[fixup_defs[k]];
            const uint32_t v = op.vreg.index();
            if (s_.raw_uses[v] == 0) continue;
            add(after, allocs[fixup_defs[k]], pc.at(v, def_pos[v]), op.vreg.cls());
        }
    }
}

void Resolver::split_moves() {
    for (uint32_t v = 0; v < f_.num_vregs; ++v) {
        const uint32_t first = s_.first_interval[v];
        if (first == kNone) continue;
        for (uint32_t p = first; s_.intervals[p].next != kNone; p = s_.intervals[p].next) {
            const Interval& a = s_.intervals[p];
            const Interval& b = s_.intervals[a.next];
            if (a.end != b.start || a.loc == b.loc) continue;
            if (s_.block_start(s_.block_of(b.start)) == b.start) continue;  // edge resolution covers it
            add_own(point_key(ProgPoint::before(b.start / 4), kPhaseSplit), v, a.loc, b.loc, b.cls);
        }
    }
}

// Sources are looked up in block order; targets (block starts, back edges
// included) through the operands' cursors. With one piece per vreg, a
// live-in vreg is in the same place at both ends of every edge.
template <class Cursor>
void Resolver::edge_moves(Cursor from_cursor, Cursor to_cursor) {
    constexpr bool kOnePiece = std::is_same_v<Cursor, OnePieceCursor>;
    for (uint32_t q = 0; q < f_.num_blocks(); ++q) {
        const uint32_t nsucc = f_.succs_begin[q + 1] - f_.succs_begin[q];
        const uint32_t term = f_.block_insts_begin[q + 1] - 1;
        const bool at_pred_end = nsucc == 1 && f_.operands_begin[term] == f_.operands_begin[term + 1];
        const uint32_t from_pos = s_.block_end(q) - 1;
        for (uint32_t e = f_.succs_begin[q]; e < f_.succs_begin[q + 1]; ++e) {
            const uint32_t t = f_.succs[e];
            const ProgPoint point = at_pred_end ? ProgPoint::before(term) : ProgPoint::before(f_.block_insts_begin[t]);
            const uint32_t key = point_key(point, at_pred_end ? kPhaseEdgeOut : kPhaseEdgeIn);
            const uint32_t to_pos = s_.block_start(t);
            if constexpr (!kOnePiece) {  // (the live-in lists are made only for this path)
                for (uint32_t k = s_.livein_begin[t]; k < s_.livein_begin[t + 1]; ++k) {
                    const uint32_t v = s_.livein[k];
                    add_own(key, v, from_cursor.at(v, from_pos), to_cursor.at(v, to_pos),
                            s_.intervals[s_.first_interval[v]].cls);
                }
            }
            for (uint32_t k = 0; k < f_.params_begin[t + 1] - f_.params_begin[t]; ++k) {
                const VReg p = f_.params[f_.params_begin[t] + k];
                if (s_.first_interval[p.index()] == kNone) continue;  // dead parameter
                const VReg a = f_.branch_args[f_.branch_args_begin[e] + k];
                add(key, source_at(from_cursor, a.index(), from_pos), to_cursor.at(p.index(), to_pos), p.cls());
            }
        }
    }
}

void Resolver::stores_at_definitions() {
    const uint32_t nv = f_.num_vregs;
    auto& moves = s_.split_moves;
    // Nothing to do (and no per-vreg counts to clear) without stores.
    if (std::none_of(moves.begin(), moves.end(),
                     [](const Context::Impl::PendingMove& m) { return m.store_of != kNone; }))
        return;
    s_.store_count.assign(nv, 0);
    s_.store_depth.assign(nv, 0);
    for (const auto& m : moves) {
        if (m.store_of == kNone) continue;
        ++s_.store_count[m.store_of];
        const uint32_t d = s_.block_depth[s_.inst_block[inst_of_key(m.point_key)]];
        s_.store_depth[m.store_of] = std::max(s_.store_depth[m.store_of], d);
    }
    for (uint32_t v = 0; v < nv; ++v) {
        if (s_.store_count[v] == 0) continue;
        const Allocation first = s_.intervals[s_.first_interval[v]].loc;
        const uint32_t def_inst = s_.def_pos[v] / 4;
        const uint32_t def_block = s_.def_block[v];
        const bool is_param = s_.def_pos[v] == s_.block_start(def_block);
        bool hoist = first.is_stack();  // every store would be redundant
        if (!hoist && (s_.store_count[v] > 1 || s_.store_depth[v] > s_.block_depth[def_block])) {
            hoist = is_param || def_inst + 1 < f_.block_insts_begin[def_block + 1];
            if (hoist && is_param) {
                add(point_key(ProgPoint::before(def_inst), kPhaseParamStore), first,
                    Allocation::stack(s_.spill_slot[v]), s_.intervals[s_.first_interval[v]].cls);
            } else if (hoist) {
                add(point_key(ProgPoint::after(def_inst), kPhaseDefStore), first, Allocation::stack(s_.spill_slot[v]),
                    s_.intervals[s_.first_interval[v]].cls);
            }
        }
        s_.store_count[v] = hoist ? kNone : 0;  // kNone: drop its other stores
    }
    std::erase_if(moves, [&](const Context::Impl::PendingMove& m) {
        return m.store_of != kNone && s_.store_count[m.store_of] == kNone;
    });
}

void Resolver::run(Output& out) {
    s_.split_moves.clear();
    if (s_.num_splits == 0 && !s_.test_piece_cursors) {
        // One piece per vreg: no cursors, no split moves.
        operand_allocs_and_fixups(out, one_piece_cursor());
        edge_moves(one_piece_cursor(), one_piece_cursor());
    } else {
        // Cursors start at each vreg's first piece (read only for vregs
        // that have one).
        build_livein_lists(s_);
        const uint32_t nv = f_.num_vregs;
        s_.op_piece.assign(s_.first_interval.begin(), s_.first_interval.begin() + nv);
        s_.edge_piece.assign(s_.first_interval.begin(), s_.first_interval.begin() + nv);
        operand_allocs_and_fixups(out, cursor(s_.op_piece));
        split_moves();
        edge_moves(cursor(s_.edge_piece), cursor(s_.op_piece));
    }
    stores_at_definitions();

    // Moves by point, in the order they were added within a point (keys
    // with the index below them: a stable order without a merge buffer).
    const auto& moves = s_.split_moves;
    auto& order = s_.move_order;
    order.resize(moves.size());
    for (size_t k = 0; k < moves.size(); ++k) order[k] = uint64_t{moves[k].point_key} << 32 | k;
    sort_keyed_indices(order, s_.move_order_tmp);
    s_.emergency_slot = kNoSlot;
    uint32_t num_slots = s_.num_slots;
    out.edits.clear();
    for (size_t k = 0; k < order.size();) {
        const uint32_t key = static_cast<uint32_t>(order[k] >> 32);
        ProgPoint point;
        point.bits = key / kPhases;
        if (k + 1 == order.size() || order[k + 1] >> 32 != key) {
            // One move at this point (the usual case): nothing to order.
            const auto& m = moves[static_cast<uint32_t>(order[k++])];
            assert(m.from != m.to && "moves onto themselves are not added");
            ParallelMoves::emit(*s_.env, point, m.from, m.to, m.cls, out.edits);
            continue;
        }
        for (; k < order.size() && order[k] >> 32 == key; ++k) {
            const auto& m = moves[static_cast<uint32_t>(order[k])];
            s_.pmoves.add(m.from, m.to, m.cls);
        }
        s_.pmoves.resolve(*s_.env, point, s_.emergency_slot, num_slots, out.edits);
    }
    out.num_spill_slots = num_slots;
    out.stats.spill_slots = num_slots;
    out.stats.splits = s_.num_splits;
    out.stats.edits = static_cast<uint32_t>(out.edits.size());
}

}  // namespace

void resolve(Context::Impl& s, Output& out) { Resolver(s).run(out); }

}  // namespace heron::ra
