// ISA-neutral parts of lowering. See lower_common.h.
#include "codegen/machinst/lower_common.h"

#include "codegen/analysis/loops.h"

namespace heron {

LoadAccess load_access(const InstructionData& d) {
    switch (d.opcode) {
    case Opcode::Uload8: return {1, false};
    case Opcode::Sload8: return {1, true};
    case Opcode::Uload16: return {2, false};
    case Opcode::Sload16: return {2, true};
    case Opcode::Uload32: return {4, false};
    case Opcode::Sload32: return {4, true};
    default: return {d.type.bytes(), false};
    }
}

unsigned store_bytes(Opcode op, Type t) {
    switch (op) {
    case Opcode::Istore8: return 1;
    case Opcode::Istore16: return 2;
    case Opcode::Istore32: return 4;
    default: return t.bytes();
    }
}

bool is_pure_for_lowering(const InstructionData& d) {
    return !is_terminator(d.opcode) && !is_call(d.opcode) && !can_trap(d.opcode) && !can_store(d.opcode);
}

void build_ra_blocks(const Function& f, const BlockOrder& order, const std::vector<uint32_t>& block_sizes,
                     ra::Function& r, std::vector<uint32_t>& block_ir, std::vector<uint32_t>& scratch) {
    const DataFlowGraph& dfg = f.dfg;
    auto vreg_of = [&](Value v) {
        v = dfg.resolve_aliases(v);
        return ra::VReg(v.index(), reg_class_of(dfg.value_type(v)));
    };
    Block entry = *f.layout.entry_block();
    // Loop depth weights spill costs; an edge block counts as the shallower
    // of its two ends. An irreducible function counts as depth 0 throughout.
    // (BlockOrder computed the loops for the layout.)
    const LoopAnalysis* loops = order.loops();
    const bool reducible = loops != nullptr;
    uint32_t source_depth = 0;
    r.block_insts_begin.push_back(0);
    r.succs_begin.push_back(0);
    r.params_begin.push_back(0);
    r.branch_args_begin.push_back(0);
    const uint32_t nb = order.num_vblocks();
    for (uint32_t vb = 0; vb < nb; ++vb) {
        const uint32_t ir = order.ir_block(vb);
        r.block_insts_begin.push_back(r.block_insts_begin.back() + block_sizes[vb]);
        const uint32_t e0 = order.succ_begin(vb);
        auto succs = order.succs(vb);
        for (uint32_t k = 0; k < succs.size(); ++k) {
            r.succs.push_back(succs[k]);
            for (Value a : order.edge_args(e0 + k)) r.branch_args.push_back(vreg_of(a));
            r.branch_args_begin.push_back(static_cast<uint32_t>(r.branch_args.size()));
        }
        r.succs_begin.push_back(static_cast<uint32_t>(r.succs.size()));
        if (ir != BlockOrder::kNone && Block(ir) != entry) {
            for (Value p : dfg.block_params(Block(ir))) r.params.push_back(vreg_of(p));
        }
        r.params_begin.push_back(static_cast<uint32_t>(r.params.size()));
        uint32_t depth = 0;
        if (reducible && ir != BlockOrder::kNone) depth = source_depth = loops->depth(Block(ir));
        if (reducible && ir == BlockOrder::kNone) depth = std::min(source_depth, loops->depth(Block(order.ir_block(succs[0]))));
        r.loop_depth.push_back(depth);
        block_ir.push_back(ir);
    }
    // Predecessors, in CSR form by counting (each list in increasing order).
    r.preds_begin.assign(nb + 1, 0);
    for (uint32_t s : r.succs) ++r.preds_begin[s + 1];
    for (uint32_t b = 0; b < nb; ++b) r.preds_begin[b + 1] += r.preds_begin[b];
    r.preds.resize(r.succs.size());
    std::vector<uint32_t>& fill = scratch;
    fill.assign(r.preds_begin.begin(), r.preds_begin.end() - 1);
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t e = r.succs_begin[b]; e < r.succs_begin[b + 1]; ++e) r.preds[fill[r.succs[e]]++] = b;
    }
}

}  // namespace heron
