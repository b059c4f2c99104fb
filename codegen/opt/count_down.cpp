// Count-down: see count_down.h.
//
// One loop analysis and one use count serve every loop: a rewrite changes
// the terminators of the loop's preheader, header and latch (in place, so
// instruction ids stay), adds parameters to its exit block and replaces
// uses outside the loop, and none of that changes which blocks form which
// loop (the new edges preheader -> exit and latch -> exit only shortcut
// paths that went through the header before). Facts that another loop's
// rewrite may have edited (branch arguments, the compare's bound) are read
// again from the IR when that loop's turn comes.
#include "codegen/opt/count_down.h"

#include <bit>
#include <utility>
#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

constexpr uint32_t kNone = ~0u;

class CountDown {
public:
    CountDown(Function& func, const ControlFlowGraph& cfg, const LoopAnalysis& loops, const CountedLoops& counted,
              CountDownScratch& s)
        : func_(func), dfg_(func.dfg), cfg_(cfg), loops_(loops), counted_(counted), todo_(s.todo), uses_(s.uses),
          slot_(s.slot), users_(s.users), s_(s) {}

    uint32_t run() {
        std::vector<const CountedLoop*>& todo = todo_;
        todo.clear();
        for (const CountedLoop& c : counted_.all()) {
            if (has_shape(c)) todo.push_back(&c);
        }
        if (todo.empty()) return 0;
        slot_.assign(dfg_.num_values(), kNone);
        uint32_t slots = 0;
        for (const CountedLoop* c : todo) {
            for (Value p : dfg_.block_params(loops_.header(c->loop))) {
                slot_[p.index()] = slots;
                if (slots < users_.size()) {
                    users_[slots].clear();
                } else {
                    users_.emplace_back();
                }
                ++slots;
            }
        }
        count_uses();
        uint32_t rewritten = 0;
        for (const CountedLoop* c : todo) rewritten += rewrite(*c);
        return rewritten;
    }

private:
    // Most values are no alias: one inline test before the call (the use
    // count walks every operand of the function).
    Value resolve(Value v) const { return dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v; }
    Inst terminator(Block b) const { return *func_.layout.last_inst(b); }

    /// The block shape a rewrite needs (uses are checked later).
    bool has_shape(const CountedLoop& c) const {
        if (c.no_exit_at_max || dfg_.value_type(c.iv).bits() > 64) return false;
        const Block h = loops_.header(c.loop);
        if (func_.layout.first_inst(h) != c.compare || func_.layout.next_inst(c.compare) != c.branch) return false;
        const auto pre = loops_.preheader(c.loop);
        if (!pre || dfg_[terminator(*pre)].opcode != Opcode::Jump) return false;
        const auto latches = loops_.latches(c.loop);
        if (latches.size() != 1 || latches[0] == h || dfg_[terminator(latches[0])].opcode != Opcode::Jump) return false;
        for (const LoopEdge& e : loops_.exit_edges(c.loop)) {
            if (dfg_[e.inst].opcode == Opcode::BrTable) return false;
        }
        return true;
    }

    void note_users(Inst i) {
        std::as_const(dfg_).for_each_inst_value(i, [&](Value v) {
            v = resolve(v);
            if (v.index() < uses_.size()) ++uses_[v.index()];
            if (v.index() < slot_.size() && slot_[v.index()] != kNone) users_[slot_[v.index()]].push_back(i);
        });
    }

    void count_uses() {
        uses_.assign(dfg_.num_values(), 0);
        for (Block b : func_.layout.blocks()) {
            for (Inst i : func_.layout.block_insts(b)) note_users(i);
        }
    }

    uint32_t uses(Value v) const { return uses_[resolve(v).index()]; }

    std::optional<uint64_t> const_bits(Value v) const {
        const ValueDef def = dfg_.value_def(resolve(v));
        if (!def.is_result() || dfg_[def.inst()].opcode != Opcode::Iconst) return std::nullopt;
        return dfg_[def.inst()].imm & dfg_.value_type(v).mask();
    }

    /// `args` with every parameter of `h` replaced by the same position of
    /// `with` (the values the header would have received), in the
    /// scratch list (valid until the next call).
    std::span<const Value> substitute(std::span<const Value> args, Block h, std::span<const Value> with) {
        std::vector<Value>& out = s_.substituted;
        out.clear();
        for (Value v : args) {
            const ValueDef d = dfg_.value_def(resolve(v));
            out.push_back(d.is_param() && d.block() == h ? with[d.num] : v);
        }
        return out;
    }

    /// Gives exit block `e` of `l` a parameter for header parameter `p`
    /// (which its predecessors, all in the loop, pass) and makes every use
    /// of `p` outside the loop read it.
    void route_through_exit(Loop l, Block e, Value p) {
        const Value ep = dfg_.append_block_param(e, dfg_.value_type(p));
        PackedOption<Inst> last;
        for (const BlockPredecessor& pred : cfg_.predecessors(e)) {
            if (pred.inst == last) continue;  // a brif with both arms into e: once
            last = pred.inst;
            for (BlockCall& d : dfg_.branch_destinations_mut(pred.inst)) {
                if (d.block(dfg_.value_lists) == e) d.append_arg(p, dfg_.value_lists);
            }
        }
        for (Inst u : users_[slot_[p.index()]]) {
            const auto b = func_.layout.inst_block(u);
            if (!b || loops_.contains(l, *b)) continue;
            dfg_.for_each_inst_value(u, [&](Value& v) {
                if (resolve(v) == p) v = ep;
            });
        }
    }

    /// Whether a parameter of `h` other than the counter is used outside `l`.
    bool used_outside(Loop l, Value p) const {
        for (Inst u : users_[slot_[p.index()]]) {
            const auto b = func_.layout.inst_block(u);
            if (b && !loops_.contains(l, *b)) return true;
        }
        return false;
    }

    /// Whether every use of `p` outside `l` is in block `b`.
    bool only_used_in(Loop l, Value p, Block b) const {
        for (Inst u : users_[slot_[p.index()]]) {
            const auto ub = func_.layout.inst_block(u);
            if (ub && !loops_.contains(l, *ub) && *ub != b) return false;
        }
        return true;
    }

    /// Rewrites one loop; 1 if it did.
    uint32_t rewrite(const CountedLoop& c) {
        const Loop l = c.loop;
        const Block h = loops_.header(l);
        const Block pre = *loops_.preheader(l);
        const Block latch = loops_.latches(l)[0];
        const Inst pre_jump = terminator(pre), latch_jump = terminator(latch);
        const Value iv = c.iv;
        const uint32_t k = c.iv_index;
        const Value cond_value = dfg_.first_result(c.compare);
        const Value next = resolve(dfg_.branch_destinations(latch_jump)[0].arg(k, dfg_.value_lists));
        const ValueDef next_def = dfg_.value_def(next);
        if (uses(iv) != 2 || uses(cond_value) != 1 || uses(next) != 1 || !next_def.is_result() ||
            dfg_[next_def.inst()].opcode != Opcode::Iadd)
            return 0;

        const InstructionData& br = dfg_[c.branch];
        const bool then_in = loops_.contains(l, br.dests[0].block(dfg_.value_lists));
        const Block exit = br.dests[then_in ? 1 : 0].block(dfg_.value_lists);

        // The trip count, known when both ends are constants.
        const Type ty = dfg_.value_type(iv);
        const unsigned width = ty.bits();
        const InstructionData& cmp = dfg_[c.compare];
        const Value bound = resolve(cmp.args[0]) == iv ? cmp.args[1] : cmp.args[0];
        const Value init = dfg_.branch_destinations(pre_jump)[0].arg(k, dfg_.value_lists);
        const auto a_bits = const_bits(init), b_bits = const_bits(bound);
        std::optional<uint64_t> trips;
        if (a_bits && b_bits) {
            trips = CountedLoops::trip_count(*a_bits, *b_bits, width, c.step, c.cond);
            if (*trips == 0) return 0;  // never entered: nothing to gain
        }

        // Header parameters live after the loop go through the exit block.
        const auto params = dfg_.block_params(h);
        std::vector<Value>& live_out = s_.live_out;
        live_out.clear();
        for (Value p : params) {
            if (p != iv && used_outside(l, p)) live_out.push_back(p);
        }
        if (!live_out.empty()) {
            // Every use after the loop must come after `exit`: true when the
            // loop has no other exit block, or when the uses are in `exit`.
            if (loops_.exit_blocks(l).size() != 1) {
                for (Value p : live_out) {
                    if (!only_used_in(l, p, exit)) return 0;
                }
            }
            for (const BlockPredecessor& pred : cfg_.predecessors(exit)) {
                if (!loops_.contains(l, pred.block)) return 0;  // not a dedicated exit
            }
            for (Value p : live_out) route_through_exit(l, exit, p);
        }

        InstructionData& head = dfg_[c.branch];
        const uint32_t out = then_in ? 1 : 0;
        const auto exit_args_span = head.dests[out].args(dfg_.value_lists);
        std::vector<Value>& exit_args = s_.exit_args;
        exit_args.assign(exit_args_span.begin(), exit_args_span.end());

        // Preheader: N, and the guard unless the range is known non-empty.
        FuncCursor cur(func_);
        cur.at_inst(pre_jump);
        std::vector<Value>& entry = s_.entry;
        entry.clear();
        for (Value v : dfg_.branch_destinations(pre_jump)[0].args(dfg_.value_lists)) entry.push_back(v);
        std::optional<Value> guard;
        Value count;
        if (trips) {
            count = cur.ins().iconst(ty, static_cast<int64_t>(*trips));
        } else {
            // A constant bound may be defined inside the loop: make it here.
            const Value a = entry[k];
            const Value b = b_bits ? cur.ins().iconst(ty, static_cast<int64_t>(*b_bits)) : bound;
            Value span = a_bits == uint64_t{0} ? b : cur.ins().isub(b, a);
            if (!c.inclusive()) span = c.step == 1 ? span : cur.ins().isub(span, cur.ins().iconst(ty, 1));
            if (c.step != 1) {
                span = std::has_single_bit(c.step)
                           ? cur.ins().ushr(span, cur.ins().iconst(ty, std::countr_zero(c.step)))
                           : cur.ins().udiv(span, cur.ins().iconst(ty, static_cast<int64_t>(c.step)));
            }
            count = c.inclusive() || c.step != 1 ? cur.ins().iadd(span, cur.ins().iconst(ty, 1)) : span;
            guard = cur.ins().icmp(c.cond, a, b);
        }
        entry[k] = count;
        for (PackedOption<Inst> i = func_.layout.first_inst(pre); i && *i != pre_jump; i = func_.layout.next_inst(*i))
            note_users(*i);
        make_branch(pre_jump, guard, h, entry, exit, substitute(exit_args, h, entry));
        note_users(pre_jump);

        // Latch: k1 = k - 1, back while nonzero.
        std::vector<Value>& back = s_.back;
        back.clear();
        for (Value v : dfg_.branch_destinations(latch_jump)[0].args(dfg_.value_lists)) back.push_back(v);
        cur.at_inst(latch_jump);
        const Value k1 = cur.ins().isub(iv, cur.ins().iconst(ty, 1));
        back[k] = k1;
        make_branch(latch_jump, k1, h, back, exit, substitute(exit_args, h, back));
        note_users(latch_jump);

        // Header: straight into the body.
        InstructionData& hd = dfg_[c.branch];
        BlockCall body = hd.dests[1 - out];
        hd.dests[out].clear(dfg_.value_lists);
        hd.dests[out] = BlockCall();
        hd.dests[0] = body;
        hd.dests[1] = BlockCall();
        hd.opcode = Opcode::Jump;
        hd.args[0] = Value();
        func_.layout.remove_inst(c.compare);
        func_.layout.remove_inst(next_def.inst());
        return 1;
    }

    /// Turns the `jump` `inst` into `brif cond, to(to_args), exit(exit_args)`,
    /// or just sets its arguments when there is no condition.
    void make_branch(Inst inst, std::optional<Value> cond, Block to, std::span<const Value> to_args, Block exit,
                     std::span<const Value> exit_args) {
        InstructionData& d = dfg_[inst];
        d.dests[0].clear(dfg_.value_lists);
        d.dests[0] = dfg_.block_call(to, to_args);
        if (!cond) return;
        d.opcode = Opcode::Brif;
        d.args[0] = *cond;
        d.dests[1] = dfg_.block_call(exit, exit_args);
    }

    Function& func_;
    DataFlowGraph& dfg_;
    const ControlFlowGraph& cfg_;
    const LoopAnalysis& loops_;
    const CountedLoops& counted_;
    std::vector<const CountedLoop*>& todo_;  // the loops with the shape, in order
    std::vector<uint32_t>& uses_;             // by value (aliases resolved)
    std::vector<uint32_t>& slot_;             // by value: index into users_, or kNone
    std::vector<std::vector<Inst>>& users_;   // instructions using a header parameter of a candidate
    CountDownScratch& s_;
};

}  // namespace

uint32_t count_down_loops(Function& func, PassContext& ctx) {
    const CountedLoops* counted = ctx.counted_loops();
    if (!counted || counted->all().empty()) return 0;
    CountDown pass(func, ctx.cfg(), *ctx.loops(), *counted,
                   ctx.scratch().count_down);
    const uint32_t rewritten = pass.run();
    // The loops keep their blocks (see the top of this file): only the
    // CFG, the dominator tree and the loops' rows change.
    if (rewritten > 0) ctx.keep_loop_nest();
    return rewritten;
}

}  // namespace heron
