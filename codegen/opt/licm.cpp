// LICM: see licm.h. One sweep per loop over its blocks in reverse
// postorder; an instruction is invariant when every operand's definition
// lies outside the loop (a hoisted instruction's block is the preheader, so
// its users see it as outside).
#include "codegen/opt/licm.h"

#include <vector>

#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

bool defined_outside(const Function& func, const LoopAnalysis& loops, Loop l, Value v) {
    const ValueDef def = func.dfg.value_def(func.dfg.resolve_aliases(v));
    if (def.is_param()) return !loops.contains(l, def.block());
    if (!def.is_result()) return false;
    auto block = func.layout.inst_block(def.inst());
    return block && !loops.contains(l, *block);
}

}  // namespace

uint32_t hoist_loop_invariants(Function& func, PassContext& ctx) {
    const LoopAnalysis* loops = ctx.loops();
    if (!loops) return 0;
    uint32_t moved = 0;
    std::vector<Inst> insts;
    for (uint32_t li = loops->num_loops(); li-- > 0;) {
        const Loop l(li);
        auto pre = loops->preheader(l);
        if (!pre) continue;
        const Inst pre_term = *func.layout.last_inst(*pre);
        if (func.dfg[pre_term].opcode != Opcode::Jump) continue;
        // Only the loop's own blocks: whatever an inner loop could lose
        // already sits in that loop's preheader, one of these blocks, and
        // the rest depends on the inner loop. So each instruction is looked
        // at by its innermost loop and by the loops it is hoisted into,
        // never by every enclosing loop.
        for (Block b : loops->own_blocks(l)) {
            insts.clear();
            for (Inst i : func.layout.block_insts(b)) insts.push_back(i);
            for (Inst i : insts) {
                const InstructionData& d = func.dfg[i];
                if (d.opcode == Opcode::Nop || !func.dfg.has_results(i)) continue;
                if (!effects_of(d.opcode).movable()) continue;
                bool invariant = true;
                func.dfg.for_each_inst_value(i, [&](Value v) { invariant = invariant && defined_outside(func, *loops, l, v); });
                if (!invariant) continue;
                func.layout.remove_inst(i);
                func.layout.insert_inst(i, pre_term);
                ++moved;
            }
        }
    }
    return moved;
}

}  // namespace heron
