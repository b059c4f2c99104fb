// dead-stores: see dead_stores.h.
#include "codegen/opt/dead_stores.h"

#include <algorithm>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

using Pending = DeadStoreScratch::Pending;

class DeadStores {
public:
    DeadStores(Function& func, const DominatorTree& dt, DeadStoreScratch& s)
        : func_(func), dfg_(func.dfg), layout_(func.layout), dt_(dt), s_(s) {}

    uint32_t run() {
        if (func_.stack_slots.empty()) return 0;
        s_.classes.compute(func_, dt_);
        // Which private slots some load reads.
        s_.loaded.assign(func_.stack_slots.size() + 1, 0);
        bool any_private_store = false;
        for (Block b : dt_.reverse_postorder()) {
            for (Inst i : layout_.block_insts(b)) {
                const InstructionData& d = dfg_[i];
                if (is_load_format(d.opcode)) s_.loaded[s_.classes.of(d.args[0])] = 1;
                if (is_store_format(d.opcode) && s_.classes.of(d.args[1]) != 0) any_private_store = true;
            }
        }
        if (!any_private_store) return 0;
        for (Block b : dt_.reverse_postorder()) block(b);
        return removed_;
    }

private:
    /// A store may go only if it cannot trap: its place is known, inside
    /// the slot, and aligned where it says so (the reference traps
    /// otherwise, and that trap must stay).
    bool can_go(const InstructionData& d, uint32_t cls, int64_t bytes) const {
        const int64_t base = s_.classes.offset_in_slot(d.args[1]);
        if (base == MemoryClasses::kUnknown) return false;
        const int64_t at = base + d.offset;
        const int64_t size = func_.stack_slots[StackSlot(cls - 1)].size;
        if (at < 0 || at + bytes > size) return false;
        return !d.flags.has(MemFlags::Aligned) || at % bytes == 0;
    }

    Value resolved(Value v) const { return dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v; }

    void block(Block b) {
        exit_dead_ = true;
        s_.pending.clear();
        s_.read_later.clear();
        const Inst last = *layout_.last_inst(b);
        const Opcode term = dfg_[last].opcode;
        const bool exits = term == Opcode::Return || term == Opcode::ReturnCall ||
                           term == Opcode::ReturnCallIndirect || term == Opcode::Trap;
        for (PackedOption<Inst> i = layout_.last_inst(b); i;) {
            const PackedOption<Inst> prev = layout_.prev_inst(*i);
            inst(*i, exits);
            i = prev;
        }
    }

    bool read_later(uint32_t cls) const {
        return std::find(s_.read_later.begin(), s_.read_later.end(), cls) != s_.read_later.end();
    }

    void inst(Inst i, bool exits) {
        const InstructionData& d = dfg_[i];
        if (is_load_format(d.opcode)) {
            const uint32_t cls = s_.classes.of(d.args[0]);
            if (cls == 0) return;
            if (!read_later(cls)) s_.read_later.push_back(cls);
            std::erase_if(s_.pending, [&](const Pending& p) { return p.cls == cls; });
            return;
        }
        if (!is_store_format(d.opcode)) {
            // Anything else that reads memory might read a slot.
            if (can_load(d.opcode) && !is_call(d.opcode)) {
                s_.pending.clear();
                exit_dead_ = false;
            }
            return;
        }
        const uint32_t cls = s_.classes.of(d.args[1]);
        if (cls == 0) return;
        const Value addr = resolved(d.args[1]);
        const int64_t lo = d.offset, hi = lo + access_bytes(d.opcode, dfg_.value_type(d.args[0]));
        const bool covered = std::any_of(s_.pending.begin(), s_.pending.end(), [&](const Pending& p) {
            return p.addr == addr && p.lo <= lo && hi <= p.hi;
        });
        if (can_go(d, cls, hi - lo) && (!s_.loaded[cls] || covered || (exits && exit_dead_ && !read_later(cls)))) {
            layout_.remove_inst(i);
            ++removed_;
            return;
        }
        if (s_.pending.size() >= DeadStoreScratch::kMaxPending) s_.pending.erase(s_.pending.begin());
        s_.pending.push_back({addr, lo, hi, cls});
    }

    Function& func_;
    DataFlowGraph& dfg_;
    Layout& layout_;
    const DominatorTree& dt_;
    DeadStoreScratch& s_;
    uint32_t removed_ = 0;
    bool exit_dead_ = true;  // false once something unknown reads memory (per block)
};

}  // namespace

uint32_t eliminate_dead_stores(Function& func, PassContext& ctx) {
    DeadStores d(func, ctx.domtree(), ctx.scratch().dead_stores);
    return d.run();
}

}  // namespace heron
