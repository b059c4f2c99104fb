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

void build_ra_blocks(const Function& f, const BlockOrder& order, const std::vector<uint32_t>& block_sizes,
                     ra::Function& r, std::vector<uint32_t>& block_ir) {
    const DataFlowGraph& dfg = f.dfg;
    auto vreg_of = [&](Value v) {
        if (dfg.value_is_alias(v)) [[unlikely]] v = dfg.resolve_aliases(v);
        return ra::VReg(v.index(), reg_class_of(dfg.value_type(v)));
    };
    const Block entry = *f.layout.entry_block();
    // Loop depth weights spill costs; an edge block counts as the shallower
    // of its two ends. An irreducible function counts as depth 0 throughout.
    // (BlockOrder found the loops for the layout.)
    const bool has_loops = order.num_loops() > 0;
    const uint32_t nb = order.num_vblocks();
    const uint32_t ne = order.num_edges();
    // Every array is written through a pointer after one resize: the sizes
    // are known from the block order (block parameters are counted first).
    uint32_t nparams = 0;
    for (uint32_t vb = 0; vb < nb; ++vb) {
        const uint32_t ir = order.ir_block(vb);
        if (ir != BlockOrder::kNone && Block(ir) != entry) nparams += dfg.num_block_params(Block(ir));
    }
    r.block_insts_begin.resize(nb + 1);
    r.params_begin.resize(nb + 1);
    r.loop_depth.resize(nb);
    r.succs.assign(order.all_succs().begin(), order.all_succs().end());
    r.succs_begin.assign(order.all_succ_begins().begin(), order.all_succ_begins().end());
    r.branch_args_begin.assign(order.all_arg_begins().begin(), order.all_arg_begins().end());
    r.branch_args.resize(order.all_args().size());
    r.params.resize(nparams);
    block_ir.resize(nb);
    {
        ra::VReg* out = r.branch_args.data();
        for (Value a : order.all_args()) *out++ = vreg_of(a);
    }
    uint32_t* insts_begin = r.block_insts_begin.data();
    const uint32_t* succs_begin = r.succs_begin.data();
    uint32_t* params_begin = r.params_begin.data();
    ra::VReg* params = r.params.data();
    uint32_t np = 0, source_depth = 0;
    insts_begin[0] = params_begin[0] = 0;
    for (uint32_t vb = 0; vb < nb; ++vb) {
        const uint32_t ir = order.ir_block(vb);
        insts_begin[vb + 1] = insts_begin[vb] + block_sizes[vb];
        if (ir != BlockOrder::kNone && Block(ir) != entry) {
            for (Value p : dfg.block_params(Block(ir))) params[np++] = vreg_of(p);
        }
        params_begin[vb + 1] = np;
        uint32_t depth = 0;
        if (has_loops && ir != BlockOrder::kNone) depth = source_depth = order.loop_depth(Block(ir));
        if (has_loops && ir == BlockOrder::kNone) {
            depth = std::min(source_depth, order.loop_depth(Block(order.ir_block(order.succs(vb)[0]))));
        }
        r.loop_depth[vb] = depth;
        block_ir[vb] = ir;
    }
    // Predecessors, in CSR form by counting (each list in increasing order):
    // the counts become row starts, each start moves up as its row fills
    // (ending at the next row's start), and one shift puts them back.
    r.preds_begin.assign(nb + 1, 0);
    uint32_t* preds_begin = r.preds_begin.data();
    const uint32_t* succs = r.succs.data();
    for (uint32_t e = 0; e < ne; ++e) ++preds_begin[succs[e] + 1];
    for (uint32_t b = 0; b < nb; ++b) preds_begin[b + 1] += preds_begin[b];
    r.preds.resize(ne);
    uint32_t* preds = r.preds.data();
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t e = succs_begin[b]; e < succs_begin[b + 1]; ++e) preds[preds_begin[succs[e]]++] = b;
    }
    for (uint32_t b = nb; b > 0; --b) preds_begin[b] = preds_begin[b - 1];
    preds_begin[0] = 0;
}

}  // namespace heron
