// load-elim: see load_elim.h.
#include "codegen/opt/load_elim.h"

#include <algorithm>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

using Known = LoadElimScratch::Known;

class LoadEliminator {
public:
    LoadEliminator(Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt, LoadElimScratch& s)
        : func_(func), dfg_(func.dfg), layout_(func.layout), cfg_(cfg), dt_(dt), s_(s) {}

    uint32_t run() {
        s_.classes.compute(func_, dt_);
        walk();
        if (removed_ == 0) return 0;
        for (Block b : layout_.blocks()) {
            for (Inst i : layout_.block_insts(b)) dfg_.resolve_aliases_in_arguments(i);
        }
        return removed_;
    }

private:
    Value resolved(Value v) const { return dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v; }
    uint32_t mem_class(Value addr) const { return s_.classes.of(addr); }

    /// Known values flow from a block to each dominator-tree child whose
    /// only predecessor it is; other children start with none.
    void walk() {
        const Block entry = *layout_.entry_block();
        s_.stack.clear();
        s_.pool.clear();
        s_.stack.push_back({entry, 0, 0});
        while (!s_.stack.empty()) {
            const LoadElimScratch::Frame f = s_.stack.back();
            s_.stack.pop_back();
            // This block's known values: a copy of its state at the top of
            // the pool (the frames below keep theirs).
            s_.known.assign(s_.pool.begin() + f.begin, s_.pool.begin() + f.begin + f.count);
            s_.pool.resize(f.begin);
            block(f.block);
            for (Block c : dt_.children(f.block)) {
                const bool inherits = cfg_.num_predecessors(c) == 1 && cfg_.predecessors(c)[0].block == f.block;
                const uint32_t begin = static_cast<uint32_t>(s_.pool.size());
                if (inherits) s_.pool.insert(s_.pool.end(), s_.known.begin(), s_.known.end());
                s_.stack.push_back({c, begin, inherits ? static_cast<uint32_t>(s_.known.size()) : 0u});
            }
        }
    }

    void block(Block b) {
        for (PackedOption<Inst> i = layout_.first_inst(b); i;) {
            const PackedOption<Inst> next = layout_.next_inst(*i);
            inst(*i);
            i = next;
        }
    }

    void inst(Inst i) {
        const InstructionData& d = dfg_[i];
        if (is_load_format(d.opcode)) return load(i);
        if (is_store_format(d.opcode)) return store(i);
        if (is_call(d.opcode)) return forget_class(0);
        if (can_store(d.opcode)) forget_all();
    }

    static bool flags_cover(MemFlags earlier, MemFlags later) {
        if (earlier.has(MemFlags::Big) != later.has(MemFlags::Big)) return false;
        return !later.has(MemFlags::Aligned) || earlier.has(MemFlags::Aligned);
    }

    void load(Inst i) {
        const InstructionData& d = dfg_[i];
        const Value addr = resolved(d.args[0]);
        const Value r = dfg_.first_result(i);
        for (const Known& k : s_.known) {
            if (k.addr != addr || k.offset != d.offset || k.type != d.type || k.opcode != d.opcode ||
                !flags_cover(k.flags, d.flags))
                continue;
            layout_.remove_inst(i);
            dfg_.change_to_alias(r, k.value);
            ++removed_;
            return;
        }
        Known k;
        k.addr = addr;
        k.offset = d.offset;
        k.type = d.type;
        k.opcode = d.opcode;
        k.bytes = static_cast<uint8_t>(access_bytes(d.opcode, d.type));
        k.flags = d.flags;
        k.cls = mem_class(addr);
        k.value = r;
        remember(k);
    }

    void store(Inst i) {
        const InstructionData& d = dfg_[i];
        const Value addr = resolved(d.args[1]);
        const Type t = dfg_.value_type(d.args[0]);
        const uint32_t cls = mem_class(addr);
        const int64_t lo = d.offset, hi = lo + access_bytes(d.opcode, t);
        std::erase_if(s_.known, [&](const Known& k) {
            if (k.flags.has(MemFlags::Readonly) || k.cls != cls) return false;
            if (k.addr != addr) return true;
            return int64_t{k.offset} < hi && lo < int64_t{k.offset} + k.bytes;
        });
        if (d.opcode != Opcode::Store) return;  // a narrow store forwards to nothing
        // A plain load of the stored type at the same place reads the value.
        Known k;
        k.addr = addr;
        k.offset = d.offset;
        k.type = t;
        k.opcode = Opcode::Load;
        k.bytes = static_cast<uint8_t>(t.bytes());
        k.flags = d.flags;
        k.cls = cls;
        k.value = resolved(d.args[0]);
        remember(k);
    }

    void remember(const Known& k) {
        if (s_.known.size() >= LoadElimScratch::kMaxKnown) s_.known.erase(s_.known.begin());
        s_.known.push_back(k);
    }

    void forget_class(uint32_t cls) {
        std::erase_if(s_.known, [&](const Known& k) { return k.cls == cls && !k.flags.has(MemFlags::Readonly); });
    }
    void forget_all() {
        std::erase_if(s_.known, [&](const Known& k) { return !k.flags.has(MemFlags::Readonly); });
    }

    Function& func_;
    DataFlowGraph& dfg_;
    Layout& layout_;
    const ControlFlowGraph& cfg_;
    const DominatorTree& dt_;
    LoadElimScratch& s_;
    uint32_t removed_ = 0;
};

}  // namespace

uint32_t eliminate_redundant_loads(Function& func, PassContext& ctx) {
    LoadEliminator e(func, ctx.cfg(), ctx.domtree(), ctx.scratch().load_elim);
    return e.run();
}

}  // namespace heron
