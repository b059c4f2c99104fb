// LICM: see licm.h.
//
// One walk over the reachable blocks in reverse postorder. For an
// instruction in loop l (its block's innermost loop), the loops it must stay
// in are those on l's ancestor chain that contain the definition of one of
// its operands; the deepest of them, D, decides: the instruction moves to
// the preheader of D's child on the chain (of the outermost loop when no
// operand is defined in a loop around it), out of every loop in between at
// once. Reverse postorder visits a definition before its uses, and a moved
// instruction's block is then its new preheader, so later uses see where it
// went.
//
// Loop-tree queries without walking the chain: loops are numbered in
// preorder, so l's ancestor at depth k is the last loop of depth k whose
// number is <= l (a binary search in the depth's bucket). "The deepest
// loop on l's chain that contains block b" is monotone in the depth (an
// ancestor of a loop containing b contains b), so it is a binary search
// over the depth; the common case, b's innermost loop enclosing l, is one
// O(1) test. Each instruction costs O(operands * log^2 depth), so a d-deep
// nest with an invariant at every level costs O(d log^2 d), not the O(d^2)
// of hoisting one level per loop.
//
// Loads move too, out of loops that write none of their memory class
// (memory_classes.h; `readonly` memory is never written), when moving them
// cannot add a trap: `can_move` loads (`notrap` alone promises nothing
// about other places), and loads of a loop's
// header with no possibly trapping instruction before them there, moved
// to that loop's own preheader (the header runs whenever the preheader
// does).
#include "codegen/opt/licm.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

class Hoister {
public:
    Hoister(Function& func, const LoopAnalysis& loops, LicmScratch& s)
        : func_(func), loops_(loops), depth_begin_(s.depth_begin), by_depth_(s.by_depth), next_(s.next),
          insts_(s.insts), written_(s.written), classes_(s.classes) {
        bucket_by_depth();
    }

    uint32_t run(const DominatorTree& domtree) {
        find_written_classes(domtree);
        uint32_t moved = 0;
        std::vector<Inst>& insts = insts_;
        for (Block b : domtree.reverse_postorder()) {
            const auto l = loops_.innermost_loop(b);
            if (!l) continue;
            insts.clear();
            for (Inst i : func_.layout.block_insts(b)) insts.push_back(i);
            bool trap_free = true;  // nothing before in b may trap
            for (Inst i : insts) {
                const uint32_t m = try_hoist(i, *l, b, trap_free);
                moved += m;
                if (!m && can_trap(func_.dfg[i].opcode)) trap_free = false;
            }
        }
        return moved;
    }

private:
    /// One bit per memory class (the last bit for classes >= 63 too).
    static uint64_t class_bit(uint32_t c) { return uint64_t{1} << (c < 63 ? c : 63); }

    /// written_[l]: the classes some instruction in l (nested loops
    /// included) may write.
    void find_written_classes(const DominatorTree& domtree) {
        written_.assign(loops_.num_loops(), 0);
        classes_.compute(func_, domtree);
        for (Block b : domtree.reverse_postorder()) {
            const auto l = loops_.innermost_loop(b);
            if (!l) continue;
            for (Inst i : func_.layout.block_insts(b)) {
                const InstructionData& d = func_.dfg[i];
                if (is_store_format(d.opcode)) {
                    written_[l->index()] |= class_bit(classes_.of(d.args[1]));
                } else if (is_call(d.opcode)) {
                    written_[l->index()] |= class_bit(0);
                } else if (can_store(d.opcode)) {
                    written_[l->index()] = ~uint64_t{0};
                }
            }
        }
        // Preorder lists parents first: children fold into them backwards.
        for (uint32_t k = loops_.num_loops(); k-- > 0;) {
            if (auto p = loops_.parent(Loop(k))) written_[p->index()] |= written_[k];
        }
    }

    /// Whether load `i` (in block b of loop l) may run in target's
    /// preheader instead: its class is not written in target, and no
    /// trap can come of it there.
    bool load_may_leave(const InstructionData& d, Loop l, Block b, bool trap_free, Loop target) const {
        const bool readonly = d.flags.has(MemFlags::Readonly);
        if (!readonly && (written_[target.index()] & class_bit(classes_.of(d.args[0])))) return false;
        if (d.flags.has(MemFlags::CanMove)) return true;
        return target == l && loops_.header(l) == b && trap_free;
    }

    /// Moves `i` (in block b of loop l) as far out as its operands allow;
    /// 1 if it moved. `trap_free`: nothing before it in b may trap.
    uint32_t try_hoist(Inst i, Loop l, Block b, bool trap_free) {
        const InstructionData& d = func_.dfg[i];
        if (d.opcode == Opcode::Nop || !func_.dfg.has_results(i)) return 0;
        const bool load = is_load_format(d.opcode);
        if (!load && !effects_of(d.opcode).movable()) return 0;
        uint32_t keep = 0;  // depth of the deepest loop on l's chain holding an operand
        const uint32_t depth = loops_.loop_depth(l);
        std::as_const(func_.dfg).for_each_inst_value(i, [&](Value v) {
            if (keep < depth) keep = std::max(keep, chain_depth_holding(l, v));
        });
        // Out of the loops at depths keep+1 .. depth(l): into the preheader
        // of the outermost one that has a usable preheader.
        for (uint32_t k = keep + 1; k <= depth; ++k) {
            const Loop target = ancestor_at(l, k);
            if (load && !load_may_leave(d, l, b, trap_free, target)) continue;
            auto pre = loops_.preheader(target);
            if (!pre) continue;
            const Inst pre_term = *func_.layout.last_inst(*pre);
            if (func_.dfg[pre_term].opcode != Opcode::Jump) continue;
            func_.layout.remove_inst(i);
            func_.layout.insert_inst(i, pre_term);
            return 1;
        }
        return 0;
    }

    /// The depth of the deepest loop on l's ancestor chain (l included)
    /// that contains the definition of `v`; 0 when none does.
    uint32_t chain_depth_holding(Loop l, Value v) const {
        const ValueDef def = func_.dfg.value_def(func_.dfg.value_is_alias(v) ? func_.dfg.resolve_aliases(v) : v);
        PackedOption<Block> block;
        if (def.is_param()) block = def.block();
        else if (def.is_result()) block = func_.layout.inst_block(def.inst());
        if (!block) return loops_.loop_depth(l);  // not expected in verified IR: keep it in place
        const auto m = loops_.innermost_loop(*block);
        if (!m) return 0;
        if (loops_.contains(*m, l)) return loops_.loop_depth(*m);
        // m is off the chain: the answer lies below min(depth(m), depth(l)).
        uint32_t lo = 0, hi = std::min(loops_.loop_depth(*m), loops_.loop_depth(l));
        while (lo < hi) {  // invariant: the answer is in [lo, hi]
            const uint32_t mid = (lo + hi + 1) / 2;
            if (loops_.contains(ancestor_at(l, mid), *block)) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }

    /// l's ancestor at depth k (1 <= k <= depth(l)).
    Loop ancestor_at(Loop l, uint32_t k) const {
        const auto first = by_depth_.begin() + depth_begin_[k];
        const auto last = by_depth_.begin() + depth_begin_[k + 1];
        auto it = std::upper_bound(first, last, l.index());
        HERON_ASSERT(it != first && "every loop of depth > k has an ancestor at depth k");
        return Loop(*(it - 1));
    }

    /// Loops grouped by depth, each group in preorder (counting sort).
    void bucket_by_depth() {
        uint32_t max_depth = 0;
        for (Loop l : loops_.loops()) max_depth = std::max(max_depth, loops_.loop_depth(l));
        depth_begin_.assign(max_depth + 2, 0);
        for (Loop l : loops_.loops()) ++depth_begin_[loops_.loop_depth(l) + 1];
        for (uint32_t k = 1; k < depth_begin_.size(); ++k) depth_begin_[k] += depth_begin_[k - 1];
        by_depth_.resize(loops_.num_loops());
        std::vector<uint32_t>& next = next_;
        next.assign(depth_begin_.begin(), depth_begin_.end() - 1);
        for (Loop l : loops_.loops()) by_depth_[next[loops_.loop_depth(l)]++] = l.index();
    }

    Function& func_;
    const LoopAnalysis& loops_;
    std::vector<uint32_t>& depth_begin_;  // bucket k is [depth_begin_[k], depth_begin_[k+1])
    std::vector<uint32_t>& by_depth_;
    std::vector<uint32_t>& next_;  // bucket_by_depth's fill positions
    std::vector<Inst>& insts_;     // run()'s copy of a block's instructions
    std::vector<uint64_t>& written_;
    MemoryClasses& classes_;
};

}  // namespace

uint32_t hoist_loop_invariants(Function& func, PassContext& ctx) {
    const LoopAnalysis* loops = ctx.loops();
    if (!loops || loops->num_loops() == 0) return 0;
    Hoister h(func, *loops, ctx.scratch().licm);
    return h.run(ctx.domtree());
}

}  // namespace heron
