// The memory classes: see memory_classes.h.
#include "codegen/opt/memory_classes.h"

#include <climits>
#include <utility>

#include "codegen/opt/effects.h"

namespace heron {

void MemoryClasses::compute(const Function& func, const DominatorTree& domtree) {
    dfg_ = &func.dfg;
    escapes_.assign(func.stack_slots.size(), 0);
    if (func.stack_slots.empty()) {
        // No slot: every address is of class 0 (of() reads past the table).
        slot_of_.clear();
        return;
    }
    slot_of_.assign(func.dfg.num_values(), 0);
    offset_.resize(func.dfg.num_values());
    for (Block b : domtree.reverse_postorder()) {
        for (Inst i : func.layout.block_insts(b)) visit(i);
    }
    for (Block b : func.layout.blocks()) {
        if (domtree.is_reachable(b)) continue;
        for (Inst i : func.layout.block_insts(b)) {
            const InstructionData& d = func.dfg[i];
            if (d.opcode == Opcode::StackAddr) escapes_[d.entity] = 1;
            escape_operands(i);
        }
    }
}

void MemoryClasses::visit(Inst i) {
    const DataFlowGraph& dfg = *dfg_;
    const InstructionData& d = dfg[i];
    if (d.opcode == Opcode::StackAddr) {
        slot_of_[dfg.first_result(i).index()] = d.entity + 1;
        offset_[dfg.first_result(i).index()] = d.offset;
        return;
    }
    if (is_store_format(d.opcode) && slot(d.args[1])) {
        // Stored, another slot's address (or this one's) escapes.
        if (const uint32_t s = slot(d.args[0])) escapes_[s - 1] = 1;
        return;
    }
    uint32_t understood = 0;
    if (is_load_format(d.opcode) && slot(d.args[0])) understood = 1;
    if (d.opcode == Opcode::Iadd) {
        const uint32_t a = slot(d.args[0]), b = slot(d.args[1]);
        if ((a != 0) != (b != 0)) {
            const Value base = a ? d.args[0] : d.args[1], other = a ? d.args[1] : d.args[0];
            const uint32_t r = dfg.first_result(i).index();
            slot_of_[r] = a ? a : b;
            offset_[r] = kUnknown;
            const int64_t from = offset_in_slot(base);
            const ValueDef def = dfg.value_def(dfg.resolve_aliases(other));
            if (from != kUnknown && def.is_result() && dfg[def.inst()].opcode == Opcode::Iconst) {
                const int64_t k = static_cast<int64_t>(dfg[def.inst()].imm);
                // Far offsets stay unknown (and their sums from overflowing).
                if (k > -(int64_t{1} << 40) && k < (int64_t{1} << 40) && from > -(int64_t{1} << 40) &&
                    from < (int64_t{1} << 40))
                    offset_[r] = from + k;
            }
            understood = 1;
        }
    }
    uint32_t uses = 0;
    dfg.for_each_inst_value(i, [&](Value v) { uses += slot(v) != 0; });
    if (uses > understood) escape_operands(i);
}

void MemoryClasses::escape_operands(Inst i) {
    dfg_->for_each_inst_value(i, [&](Value v) {
        if (const uint32_t s = slot(v)) escapes_[s - 1] = 1;
    });
}

}  // namespace heron
