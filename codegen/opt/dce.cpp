// DCE and CFG simplification: see dce.h.
#include "codegen/opt/dce.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

/// A division or remainder by a constant that is neither 0 nor (signed)
/// -1 cannot trap: unused, it may go like a pure instruction.
bool division_cannot_trap(const DataFlowGraph& dfg, const InstructionData& d) {
    const bool is_signed = d.opcode == Opcode::Sdiv || d.opcode == Opcode::Srem;
    if (!is_signed && d.opcode != Opcode::Udiv && d.opcode != Opcode::Urem) return false;
    const ValueDef def = dfg.value_def(dfg.resolve_aliases(d.args[1]));
    if (!def.is_result()) return false;
    const InstructionData& k = dfg[def.inst()];
    return k.opcode == Opcode::Iconst && k.imm != 0 && !(is_signed && k.imm == k.type.mask());
}

bool removable(const DataFlowGraph& dfg, const InstructionData& d) {
    if (d.opcode == Opcode::Nop || !d.vargs.empty()) return false;
    return effects_of(d.opcode).movable() || division_cannot_trap(dfg, d);
}

class DeadCode {
public:
    DeadCode(Function& func, const ControlFlowGraph& cfg, DceScratch& s)
        : dfg_(func.dfg), layout_(func.layout), cfg_(cfg), s_(s) {}

    uint32_t run() {
        const uint32_t nv = dfg_.num_values();
        s_.uses.assign(nv, 0);
        s_.drop.assign(nv, 0);  // 1: a parameter to remove
        s_.work.clear();
        for (Block b : layout_.blocks()) {
            for (Inst i : layout_.block_insts(b)) {
                std::as_const(dfg_).for_each_inst_value(i, [&](Value v) {
                    ++s_.uses[(dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v).index()];
                });
            }
        }
        const Block entry = *layout_.entry_block();
        for (Block b : layout_.blocks()) {
            if (b != entry) {
                for (Value p : dfg_.block_params(b)) {
                    if (s_.uses[p.index()] == 0) s_.work.push_back(p);
                }
            }
            for (Inst i : layout_.block_insts(b)) {
                if (!dfg_.has_results(i)) continue;
                const Value r = dfg_.first_result(i);
                if (s_.uses[r.index()] == 0 && removable(dfg_, dfg_[i])) s_.work.push_back(r);
            }
        }
        while (!s_.work.empty()) {
            const Value v = s_.work.back();
            s_.work.pop_back();
            kill(v);
        }
        // The parameters last to first, so that positions stay valid.
        if (dropped_ == 0) return removed_;
        for (Block b : layout_.blocks()) {
            const auto params = dfg_.block_params(b);
            for (uint32_t k = static_cast<uint32_t>(params.size()); k-- > 0;) {
                if (!s_.drop[dfg_.block_params(b)[k].index()]) continue;
                dfg_.remove_block_param(b, k);
                for (const BlockPredecessor& p : cfg_.predecessors(b)) {
                    for (BlockCall& bc : dfg_.branch_destinations_mut(p.inst)) {
                        if (bc.block(dfg_.value_lists) == b) bc.remove_arg(k, dfg_.value_lists);
                    }
                }
                ++removed_;
            }
        }
        return removed_;
    }

private:
    void unuse(Value v) {
        if (dfg_.value_is_alias(v)) v = dfg_.resolve_aliases(v);
        if (--s_.uses[v.index()] == 0) s_.work.push_back(v);
    }

    /// Removes the definition of `v` if nothing uses what it defines.
    void kill(Value v) {
        if (s_.uses[v.index()] != 0) return;
        const ValueDef def = dfg_.value_def(v);
        if (def.is_param()) {
            const Block b = def.block();
            if (s_.drop[v.index()] || b == *layout_.entry_block() || !layout_.is_block_inserted(b)) return;
            s_.drop[v.index()] = 1;
            ++dropped_;
            for (const BlockPredecessor& p : cfg_.predecessors(b)) {
                for (const BlockCall& bc : dfg_.branch_destinations(p.inst)) {
                    if (bc.block(dfg_.value_lists) == b) unuse(bc.arg(def.num, dfg_.value_lists));
                }
            }
            return;
        }
        if (!def.is_result()) return;
        const Inst i = def.inst();
        if (!layout_.inst_block(i) || !removable(dfg_, dfg_[i])) return;
        for (Value r : dfg_.inst_results(i)) {
            if (s_.uses[r.index()] != 0) return;
        }
        layout_.remove_inst(i);
        ++removed_;
        std::as_const(dfg_).for_each_inst_value(i, [&](Value u) { unuse(u); });
    }

    DataFlowGraph& dfg_;
    Layout& layout_;
    const ControlFlowGraph& cfg_;
    DceScratch& s_;
    uint32_t removed_ = 0;
    uint32_t dropped_ = 0;  // parameters marked in s_.drop
};

class CfgSimplifier {
public:
    CfgSimplifier(Function& func, DceScratch& s) : dfg_(func.dfg), layout_(func.layout), s_(s) {}

    uint32_t run() {
        const Block entry = *layout_.entry_block();
        remove_unreachable(entry);
        merge_chains(entry);
        return changes_;
    }

private:
    /// The constant `v` is defined as, if it is an iconst.
    std::optional<uint64_t> constant(Value v) const {
        const ValueDef def = dfg_.value_def(dfg_.resolve_aliases(v));
        if (!def.is_result() || dfg_[def.inst()].opcode != Opcode::Iconst) return std::nullopt;
        return dfg_[def.inst()].imm;
    }

    static bool same_call(const BlockCall& a, const BlockCall& b, const ValueListPool& pool) {
        if (a.block(pool) != b.block(pool)) return false;
        const auto x = a.args(pool), y = b.args(pool);
        return std::equal(x.begin(), x.end(), y.begin(), y.end());
    }

    void fold_branch(Block b) {
        const auto last = layout_.last_inst(b);
        if (!last) return;
        InstructionData& d = dfg_[*last];
        if (d.opcode == Opcode::Brif) {
            int taken = -1;
            if (auto c = constant(d.args[0])) taken = *c != 0 ? 0 : 1;
            else if (same_call(d.dests[0], d.dests[1], dfg_.value_lists)) taken = 0;
            if (taken < 0) return;
            d.opcode = Opcode::Jump;
            if (taken == 1) d.dests[0] = d.dests[1];
            d.dests[1] = BlockCall();
            d.args = {};
            ++changes_;
        } else if (d.opcode == Opcode::BrTable) {
            const auto c = constant(d.args[0]);
            if (!c) return;
            const JumpTableData& jt = dfg_.jump_tables[d.jump_table()];
            const BlockCall& to = *c < jt.entries().size() ? jt.entries()[*c] : jt.default_block();
            const Block target = to.block(dfg_.value_lists);
            std::vector<Value>& args = s_.work;
            args.assign(to.args(dfg_.value_lists).begin(), to.args(dfg_.value_lists).end());
            d.opcode = Opcode::Jump;
            d.dests[0] = dfg_.block_call(target, args);
            d.args = {};
            d.entity = 0;
            ++changes_;
        }
    }

    /// Folds the branches of the reachable blocks (the others go) on the
    /// way, and counts the edges into each block from them.
    void remove_unreachable(Block entry) {
        s_.reached.assign(dfg_.num_blocks(), 0);
        s_.preds.assign(dfg_.num_blocks(), 0);
        s_.stack.clear();
        s_.stack.push_back(entry);
        s_.reached[entry.index()] = 1;
        while (!s_.stack.empty()) {
            const Block b = s_.stack.back();
            s_.stack.pop_back();
            const auto last = layout_.last_inst(b);
            if (!last) continue;
            fold_branch(b);
            for (const BlockCall& bc : dfg_.branch_destinations(*last)) {
                const Block t = bc.block(dfg_.value_lists);
                ++s_.preds[t.index()];
                if (s_.reached[t.index()]) continue;
                s_.reached[t.index()] = 1;
                s_.stack.push_back(t);
            }
        }
        for (auto b = layout_.entry_block(); b;) {
            const auto next = layout_.next_block(*b);
            if (!s_.reached[b->index()]) {
                while (auto i = layout_.first_inst(*b)) layout_.remove_inst(*i);
                layout_.remove_block(*b);
                ++changes_;
            }
            b = next;
        }
    }

    Value replaced(Value v) const {
        v = dfg_.resolve_aliases(v);
        while (v.index() < s_.repl.size() && s_.repl[v.index()].is_valid()) v = s_.repl[v.index()];
        return v;
    }

    void merge_chains(Block entry) {
        bool merged = false;
        for (auto b = layout_.entry_block(); b; b = layout_.next_block(*b)) {
            for (;;) {
                const auto last = layout_.last_inst(*b);
                if (!last || dfg_[*last].opcode != Opcode::Jump) break;
                const BlockCall call = dfg_[*last].dests[0];
                const Block c = call.block(dfg_.value_lists);
                if (c == *b || c == entry || s_.preds[c.index()] != 1) break;
                if (!merged) s_.repl.assign(dfg_.num_values(), Value());
                const auto params = dfg_.block_params(c);
                const auto args = call.args(dfg_.value_lists);
                for (size_t k = 0; k < params.size(); ++k) s_.repl[params[k].index()] = args[k];
                layout_.remove_inst(*last);
                while (auto i = layout_.first_inst(c)) {
                    layout_.remove_inst(*i);
                    layout_.append_inst(*i, *b);
                }
                layout_.remove_block(c);
                merged = true;
                ++changes_;
            }
        }
        if (!merged) return;
        for (Block b : layout_.blocks()) {
            for (Inst i : layout_.block_insts(b)) dfg_.for_each_inst_value(i, [&](Value& v) { v = replaced(v); });
        }
    }

    DataFlowGraph& dfg_;
    Layout& layout_;
    DceScratch& s_;
    uint32_t changes_ = 0;
};

}  // namespace

uint32_t eliminate_dead_code(Function& func, PassContext& ctx) {
    if (!func.layout.entry_block()) return 0;
    DeadCode d(func, ctx.cfg(), ctx.scratch().dce);
    return d.run();
}

uint32_t simplify_cfg(Function& func, PassContext& ctx) {
    if (!func.layout.entry_block()) return 0;
    CfgSimplifier s(func, ctx.scratch().dce);
    return s.run();
}

}  // namespace heron
