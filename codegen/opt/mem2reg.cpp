// mem2reg: see mem2reg.h.
#include "codegen/opt/mem2reg.h"

#include <algorithm>
#include <array>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

constexpr uint32_t kNone = ~0u;
constexpr uint32_t kEnter = ~0u;

/// Integer cells are one class; each float type is its own.
int value_class(Type t) { return t.is_float() ? static_cast<int>(t.code()) : 0; }

class Promoter {
public:
    Promoter(Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt, Mem2RegScratch& s)
        : func_(func), dfg_(func.dfg), layout_(func.layout), cfg_(cfg), dt_(dt), s_(s) {}

    uint32_t run() {
        if (func_.stack_slots.empty()) return 0;
        const Block entry = *layout_.entry_block();
        if (cfg_.num_predecessors(entry) != 0) return 0;  // the entry would need parameters
        if (!collect()) return 0;
        const uint32_t promoted = assign_cells();
        if (promoted == 0) return 0;
        for (uint32_t v = 0; v < s_.var_type.size(); ++v) place_params(v);
        add_params();
        rename(entry);
        pass_zeros_from_unreachable();
        remove_trivial_params();
        finish();
        return promoted;
    }

private:
    // --- finding the slots' accesses ------------------------------------

    const Mem2RegScratch::Address& address(Value v) const {
        return s_.address[(dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v).index()];
    }
    bool tracked(Value v) const { return address(v).slot != 0; }

    std::optional<uint64_t> constant(Value v) const {
        const ValueDef def = dfg_.value_def(dfg_.resolve_aliases(v));
        if (!def.is_result()) return std::nullopt;
        const InstructionData& d = dfg_[def.inst()];
        if (d.opcode != Opcode::Iconst) return std::nullopt;
        return d.imm;
    }

    /// Walks the reachable blocks in reverse postorder (an address is seen
    /// before its uses), then the others, whose uses of a slot's address
    /// keep the slot. False when a jump table serves two branches (new
    /// arguments could not differ by branch).
    bool collect() {
        s_.address.assign(dfg_.num_values(), {});
        s_.slot_ok.assign(func_.stack_slots.size(), 1);
        s_.accesses.clear();
        s_.address_insts.clear();
        s_.table_used.assign(dfg_.jump_tables.size(), 0);
        uint32_t order = 0;
        for (Block b : dt_.reverse_postorder()) {
            for (Inst i : layout_.block_insts(b)) {
                if (!visit(i, order++, true)) return false;
            }
        }
        for (Block b : layout_.blocks()) {
            if (dt_.is_reachable(b)) continue;
            for (Inst i : layout_.block_insts(b)) {
                if (!visit(i, order++, false)) return false;
            }
        }
        return true;
    }

    bool visit(Inst i, uint32_t order, bool reachable) {
        const InstructionData& d = dfg_[i];
        if (d.opcode == Opcode::BrTable) {
            uint8_t& used = s_.table_used[d.jump_table().index()];
            if (used) return false;
            used = 1;
            return true;
        }
        if (d.opcode == Opcode::StackAddr) {
            if (!reachable || d.type != types::POINTER) {
                s_.slot_ok[d.entity] = 0;
                return true;
            }
            s_.address[dfg_.first_result(i).index()] = {d.entity + 1, d.offset};
            s_.address_insts.push_back(i);
            return true;
        }
        uint32_t uses = 0;
        std::as_const(dfg_).for_each_inst_value(i, [&](Value v) { uses += tracked(v); });
        if (uses == 0) return true;
        bool understood = false;
        if (reachable && is_store_format(d.opcode) && tracked(d.args[1]) && uses <= 2) {
            // The stored value may be another slot's address: that one
            // escapes, this one is only written.
            if (const uint32_t slot = address(d.args[0]).slot) s_.slot_ok[slot - 1] = 0;
            add_access(i, d.args[1], dfg_.value_type(d.args[0]), true, order);
            understood = true;
        } else if (reachable && uses == 1) {
            if (is_load_format(d.opcode) && tracked(d.args[0])) {
                add_access(i, d.args[0], d.type, false, order);
                understood = true;
            } else if (d.opcode == Opcode::Iadd) {
                const bool first = tracked(d.args[0]);
                if (auto k = constant(d.args[first ? 1 : 0])) {
                    const Mem2RegScratch::Address& base = address(d.args[first ? 0 : 1]);
                    const uint64_t off = static_cast<uint64_t>(base.offset) + *k;
                    s_.address[dfg_.first_result(i).index()] = {base.slot, static_cast<int64_t>(off)};
                    s_.address_insts.push_back(i);
                    understood = true;
                }
            }
        }
        if (!understood) {
            std::as_const(dfg_).for_each_inst_value(i, [&](Value v) {
                if (const uint32_t slot = address(v).slot) s_.slot_ok[slot - 1] = 0;
            });
        }
        return true;
    }

    void add_access(Inst i, Value addr, Type type, bool store, uint32_t order) {
        const InstructionData& d = dfg_[i];
        const Mem2RegScratch::Address& a = address(addr);
        Mem2RegScratch::Access acc;
        acc.inst = i;
        acc.slot = a.slot - 1;
        acc.offset = static_cast<int64_t>(static_cast<uint64_t>(a.offset) + static_cast<uint64_t>(int64_t{d.offset}));
        acc.order = order;
        acc.var = kNone;
        acc.type = type;
        acc.bytes = static_cast<uint8_t>(access_bytes(d.opcode, type));
        acc.store = store;
        acc.big = d.flags.has(MemFlags::Big);
        // An access the interpreter would trap on (outside the slot, or
        // `aligned` and not) keeps the slot, and the trap.
        const uint32_t size = func_.stack_slots[StackSlot(acc.slot)].size;
        if (acc.offset < 0 || acc.offset + acc.bytes > int64_t{size} ||
            (d.flags.has(MemFlags::Aligned) && acc.offset % acc.bytes != 0))
            s_.slot_ok[acc.slot] = 0;
        s_.accesses.push_back(acc);
    }

    /// Sorts the accesses by slot and offset and gives each cell of a slot
    /// that may go a variable. Returns how many slots go.
    uint32_t assign_cells() {
        auto& acc = s_.accesses;
        std::sort(acc.begin(), acc.end(), [](const auto& a, const auto& b) {
            if (a.slot != b.slot) return a.slot < b.slot;
            if (a.offset != b.offset) return a.offset < b.offset;
            return a.order < b.order;
        });
        s_.var_type.clear();
        s_.var_first.clear();
        // A slot without accesses goes too (its addresses have no uses).
        uint32_t promoted = 0;
        size_t i = 0;
        std::vector<uint8_t>& ok = s_.slot_ok;
        for (uint32_t slot = 0; slot < ok.size(); ++slot) {
            const size_t begin = i;
            while (i < acc.size() && acc[i].slot == slot) ++i;
            if (!ok[slot]) continue;
            for (size_t k = begin; k < i && ok[slot]; ++k) {
                const auto& a = acc[k];
                if (k == begin || a.offset != acc[k - 1].offset) {
                    if (k > begin && a.offset < acc[k - 1].offset + acc[k - 1].bytes) ok[slot] = 0;  // overlap
                    continue;
                }
                const auto& first = acc[k - 1];
                if (a.bytes != first.bytes || value_class(a.type) != value_class(first.type) ||
                    (a.bytes > 1 && a.big != first.big))
                    ok[slot] = 0;
            }
            if (!ok[slot]) continue;
            ++promoted;
            for (size_t k = begin; k < i; ++k) {
                if (k == begin || acc[k].offset != acc[k - 1].offset) {
                    const Type t = acc[k].type.is_float() ? acc[k].type : Type::int_with_bits(8u * acc[k].bytes);
                    s_.var_type.push_back(t);
                    s_.var_first.push_back(static_cast<uint32_t>(k));
                }
                acc[k].var = static_cast<uint32_t>(s_.var_type.size() - 1);
            }
        }
        if (promoted == 0) return 0;
        s_.access_of.assign(dfg_.num_insts(), 0);
        for (size_t k = 0; k < acc.size(); ++k) {
            if (acc[k].var != kNone) s_.access_of[acc[k].inst.index()] = static_cast<uint32_t>(k + 1);
        }
        s_.live.assign(dfg_.num_blocks(), 0);
        s_.defs.assign(dfg_.num_blocks(), 0);
        s_.wanted.clear();
        return promoted;
    }

    // --- liveness and parameters ----------------------------------------

    uint32_t reachable_predecessors(Block b) const {
        uint32_t n = 0;
        for (const BlockPredecessor& p : cfg_.predecessors(b)) n += dt_.is_reachable(p.block);
        return n;
    }

    /// Marks the blocks where cell `var` is live on entry, from the blocks
    /// that read it before storing it, backwards to the stores; wants a
    /// parameter in each such block with several reachable predecessors.
    void place_params(uint32_t var) {
        const auto& acc = s_.accesses;
        const uint32_t stamp = var + 1;
        s_.work.clear();
        PackedOption<Block> last;
        for (auto it = acc.begin() + s_.var_first[var]; it != acc.end() && it->var == var; ++it) {
            const Block b = *layout_.inst_block(it->inst);
            if (!last || *last != b) {
                if (!it->store && s_.live[b.index()] != stamp) {
                    s_.live[b.index()] = stamp;
                    s_.work.push_back(b);
                }
                last = b;
            }
            if (it->store) s_.defs[b.index()] = stamp;
        }
        const Block entry = *layout_.entry_block();
        for (size_t k = 0; k < s_.work.size(); ++k) {
            const Block b = s_.work[k];
            if (b == entry) continue;
            if (reachable_predecessors(b) >= 2) s_.wanted.push_back({b, var});
            for (const BlockPredecessor& p : cfg_.predecessors(b)) {
                const uint32_t pi = p.block.index();
                if (!dt_.is_reachable(p.block) || s_.defs[pi] == stamp || s_.live[pi] == stamp) continue;
                s_.live[pi] = stamp;
                s_.work.push_back(p.block);
            }
        }
    }

    void add_params() {
        std::sort(s_.wanted.begin(), s_.wanted.end(), [](const auto& a, const auto& b) {
            return a.first.index() != b.first.index() ? a.first.index() < b.first.index() : a.second < b.second;
        });
        s_.params.clear();
        s_.block_params.assign(dfg_.num_blocks(), {0, 0});
        for (size_t k = 0; k < s_.wanted.size(); ++k) {
            const auto [b, var] = s_.wanted[k];
            auto& range = s_.block_params[b.index()];
            if (range.first == range.second) range = {static_cast<uint32_t>(k), static_cast<uint32_t>(k)};
            ++range.second;
            s_.params.push_back({var, dfg_.append_block_param(b, s_.var_type[var]), b});
        }
    }

    std::span<const Mem2RegScratch::Param> params_of(Block b) const {
        const auto [begin, end] = s_.block_params[b.index()];
        return std::span(s_.params).subspan(begin, end - begin);
    }

    // --- renaming ---------------------------------------------------------

    Value make(InstructionData d, Type t, Inst before) {
        const Inst ni = dfg_.make_inst(d);
        dfg_.make_inst_results(ni, t);
        layout_.insert_inst(ni, before);
        return dfg_.first_result(ni);
    }

    static InstructionData zero_data(Type t) {
        InstructionData d;
        d.opcode = t == types::F32 ? Opcode::F32const : t == types::F64 ? Opcode::F64const : Opcode::Iconst;
        if (t.is_int()) d.type = t;
        d.imm = 0;
        return d;
    }

    /// Zero of `t` at the top of the entry block (what a fresh slot reads).
    Value entry_zero(Type t) {
        Value& z = zeros_[t.code()];
        if (!z.is_valid()) z = make(zero_data(t), t, *layout_.first_inst(*layout_.entry_block()));
        return z;
    }

    Value value_of(uint32_t var) {
        const Value v = s_.current[var];
        return v.is_valid() ? v : entry_zero(s_.var_type[var]);
    }

    void set(uint32_t var, Value v) {
        s_.undo.push_back({var, s_.current[var]});
        s_.current[var] = v;
    }

    /// Appends, to every destination of `branch` with new parameters, the
    /// values `arg(var)` gives.
    /// (`arg` may add instructions, which can move the branch's data: each
    /// destination is looked up again.)
    template <typename Arg>
    void pass_args(Inst branch, Arg&& arg) {
        const size_t n = dfg_.branch_destinations(branch).size();
        for (size_t j = 0; j < n; ++j) {
            const Block to = dfg_.branch_destinations(branch)[j].block(dfg_.value_lists);
            for (const auto& p : params_of(to)) {
                const Value v = arg(p.var);
                dfg_.branch_destinations_mut(branch)[j].append_arg(v, dfg_.value_lists);
            }
        }
    }

    void rewrite(Inst i, const Mem2RegScratch::Access& a) {
        const Type cell = s_.var_type[a.var];
        if (a.store) {
            Value v = dfg_[i].args[0];
            if (dfg_.value_type(v) != cell) {
                InstructionData r;
                r.opcode = Opcode::Ireduce;
                r.type = cell;
                r.args[0] = v;
                v = make(r, cell, i);
            }
            set(a.var, v);
            layout_.remove_inst(i);
            return;
        }
        const Value v = value_of(a.var);  // before `d`: it may add an instruction
        InstructionData& d = dfg_[i];
        if (d.type == cell) {
            const Value r = dfg_.first_result(i);
            layout_.remove_inst(i);
            dfg_.change_to_alias(r, v);
            return;
        }
        const bool sign = d.opcode == Opcode::Sload8 || d.opcode == Opcode::Sload16 || d.opcode == Opcode::Sload32;
        const Type t = d.type;
        d = InstructionData();
        d.opcode = sign ? Opcode::Sextend : Opcode::Uextend;
        d.type = t;
        d.args[0] = v;
    }

    /// A walk over the dominator tree: entering a block sets its new
    /// parameters as current, runs its accesses, passes the current values
    /// to its successors' new parameters and visits its children; leaving
    /// it undoes what it set.
    void rename(Block entry) {
        s_.current.assign(s_.var_type.size(), Value());
        zeros_.fill(Value());
        s_.undo.clear();
        s_.walk.clear();
        s_.walk.push_back({entry, kEnter});
        while (!s_.walk.empty()) {
            const auto [b, mark] = s_.walk.back();
            s_.walk.pop_back();
            if (mark != kEnter) {
                while (s_.undo.size() > mark) {
                    s_.current[s_.undo.back().first] = s_.undo.back().second;
                    s_.undo.pop_back();
                }
                continue;
            }
            s_.walk.push_back({b, static_cast<uint32_t>(s_.undo.size())});
            for (const auto& p : params_of(b)) set(p.var, p.value);
            for (PackedOption<Inst> i = layout_.first_inst(b); i;) {
                const PackedOption<Inst> next = layout_.next_inst(*i);
                if (const uint32_t k = s_.access_of[i->index()]) rewrite(*i, s_.accesses[k - 1]);
                i = next;
            }
            pass_args(*layout_.last_inst(b), [&](uint32_t var) { return value_of(var); });
            for (Block c : dt_.children(b)) s_.walk.push_back({c, kEnter});
        }
    }

    /// A block the entry cannot reach passes zeros (made in the block: no
    /// definition dominates it).
    void pass_zeros_from_unreachable() {
        for (Block b : layout_.blocks()) {
            if (dt_.is_reachable(b)) continue;
            const Inst last = *layout_.last_inst(b);
            pass_args(last, [&](uint32_t var) {
                const Type t = s_.var_type[var];
                return make(zero_data(t), t, last);
            });
        }
    }

    // --- trivial parameters -----------------------------------------------

    uint32_t position(Block b, Value p) const {
        const auto ps = dfg_.block_params(b);
        return static_cast<uint32_t>(std::find(ps.begin(), ps.end(), p) - ps.begin());
    }

    /// The one value other than `p` itself that every branch to p's block
    /// passes for it, if there is one (invalid when all pass p: a cycle no
    /// path enters). `more`: some branch passes a second value.
    Value sole_incoming(const Mem2RegScratch::Param& p, bool& more) {
        const uint32_t k = position(p.block, p.value);
        Value same;
        more = false;
        for (const BlockPredecessor& pred : cfg_.predecessors(p.block)) {
            for (const BlockCall& bc : dfg_.branch_destinations(pred.inst)) {
                if (bc.block(dfg_.value_lists) != p.block) continue;
                const Value a = dfg_.resolve_aliases(bc.arg(k, dfg_.value_lists));
                if (a == p.value || a == same) continue;
                if (same.is_valid()) {
                    more = true;
                    return same;
                }
                same = a;
            }
        }
        return same;
    }

    /// Removes the new parameters whose incoming values are all one value
    /// (or themselves), each becoming an alias of that value; the new
    /// parameters that received a removed one are looked at again.
    void remove_trivial_params() {
        const uint32_t n = static_cast<uint32_t>(s_.params.size());
        if (n == 0) return;
        s_.param_of.assign(dfg_.num_values(), kNone);
        for (uint32_t k = 0; k < n; ++k) s_.param_of[s_.params[k].value.index()] = k;
        if (s_.users.size() < n) s_.users.resize(n);
        for (uint32_t k = 0; k < n; ++k) s_.users[k].clear();
        for (uint32_t k = 0; k < n; ++k) {
            const auto& p = s_.params[k];
            const uint32_t pos = position(p.block, p.value);
            for (const BlockPredecessor& pred : cfg_.predecessors(p.block)) {
                for (const BlockCall& bc : dfg_.branch_destinations(pred.inst)) {
                    if (bc.block(dfg_.value_lists) != p.block) continue;
                    const Value a = bc.arg(pos, dfg_.value_lists);
                    const uint32_t q = a.index() < s_.param_of.size() ? s_.param_of[a.index()] : kNone;
                    if (q != kNone && q != k) s_.users[q].push_back(k);
                }
            }
        }
        s_.trivial.clear();
        for (uint32_t k = n; k-- > 0;) s_.trivial.push_back(k);
        std::vector<uint8_t>& removed = s_.removed;
        removed.assign(n, 0);
        while (!s_.trivial.empty()) {
            const uint32_t k = s_.trivial.back();
            s_.trivial.pop_back();
            if (removed[k]) continue;
            const auto p = s_.params[k];
            bool more;
            Value same = sole_incoming(p, more);
            if (more) continue;
            if (!same.is_valid()) same = entry_zero(s_.var_type[p.var]);
            const uint32_t pos = position(p.block, p.value);
            dfg_.remove_block_param(p.block, pos);
            for (const BlockPredecessor& pred : cfg_.predecessors(p.block)) {
                for (BlockCall& bc : dfg_.branch_destinations_mut(pred.inst)) {
                    if (bc.block(dfg_.value_lists) == p.block) bc.remove_arg(pos, dfg_.value_lists);
                }
            }
            dfg_.change_to_alias(p.value, same);
            removed[k] = 1;
            const uint32_t into = same.index() < s_.param_of.size() ? s_.param_of[same.index()] : kNone;
            for (uint32_t u : s_.users[k]) {
                if (removed[u]) continue;
                s_.trivial.push_back(u);
                if (into != kNone && into != u) s_.users[into].push_back(u);
            }
        }
    }

    // --- the end ----------------------------------------------------------

    /// Removes the promoted slots' addresses (their uses are gone),
    /// renumbers the remaining slots, and makes every operand the value it
    /// aliases.
    void finish() {
        for (Inst i : s_.address_insts) {
            const uint32_t slot = address(dfg_.first_result(i)).slot - 1;
            if (s_.slot_ok[slot]) layout_.remove_inst(i);
        }
        const uint32_t n = func_.stack_slots.size();
        s_.slot_map.assign(n, kNone);
        std::vector<StackSlotData> kept;
        for (uint32_t k = 0; k < n; ++k) {
            if (s_.slot_ok[k]) continue;
            s_.slot_map[k] = static_cast<uint32_t>(kept.size());
            kept.push_back(func_.stack_slots[StackSlot(k)]);
        }
        func_.stack_slots.clear();
        for (StackSlotData& d : kept) func_.stack_slots.push(std::move(d));
        for (Block b : layout_.blocks()) {
            for (Inst i : layout_.block_insts(b)) {
                InstructionData& d = dfg_[i];
                if (d.opcode == Opcode::StackAddr) d.entity = s_.slot_map[d.entity];
                dfg_.resolve_aliases_in_arguments(i);
            }
        }
    }

    Function& func_;
    DataFlowGraph& dfg_;
    Layout& layout_;
    const ControlFlowGraph& cfg_;
    const DominatorTree& dt_;
    Mem2RegScratch& s_;
    std::array<Value, 8> zeros_{};
};

}  // namespace

uint32_t promote_stack_slots(Function& func, PassContext& ctx) {
    Promoter p(func, ctx.cfg(), ctx.domtree(), ctx.scratch().mem2reg);
    return p.run();
}

}  // namespace heron
