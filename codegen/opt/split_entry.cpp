// Entry splitting: see split_entry.h.
#include "codegen/opt/split_entry.h"

#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

bool is_call(const DataFlowGraph& dfg, Inst i) {
    switch (dfg[i].opcode) {
    case Opcode::Call: case Opcode::CallIndirect: case Opcode::ReturnCall: case Opcode::ReturnCallIndirect: return true;
    default: return false;
    }
}

bool is_constant(const DataFlowGraph& dfg, Value v) {
    const ValueDef d = dfg.value_def(v);
    if (!d.is_result()) return false;
    const Opcode op = dfg[d.inst()].opcode;
    return op == Opcode::Iconst || op == Opcode::F32const || op == Opcode::F64const;
}

}  // namespace

uint32_t split_entry_values(Function& func, PassContext& ctx) {
    DataFlowGraph& dfg = func.dfg;
    const PackedOption<Block> entry = func.layout.entry_block();
    if (!entry) return 0;
    const PackedOption<Inst> term = func.layout.last_inst(*entry);
    if (!term || dfg[*term].opcode != Opcode::Brif) return 0;
    for (auto i = func.layout.first_inst(*entry); i; i = func.layout.next_inst(*i)) {
        if (is_call(dfg, *i)) return 0;  // the entry needs the frame anyway
    }
    const ControlFlowGraph& cfg = ctx.cfg();
    const DominatorTree& dt = ctx.domtree();
    // By value index: the parameter of S that replaces it (invalid: none).
    // The scratch table is all invalid between calls (each call resets the
    // entries it set); it only grows here.
    SplitEntryScratch& scratch = ctx.scratch().split_entry;
    std::vector<Value>& split = scratch.split;
    if (split.size() < dfg.num_values()) split.resize(dfg.num_values());
    std::vector<Block>& region = scratch.region;
    std::vector<Value>& read = scratch.read;
    uint32_t added = 0;
    const std::span<BlockCall> dests = dfg.branch_destinations_mut(*term);
    for (unsigned k = 0; k < 2; ++k) {
        const Block s = dests[k].block(dfg.value_lists);
        if (s == *entry || s == dests[1 - k].block(dfg.value_lists) || cfg.num_predecessors(s) != 1) continue;
        region.clear();
        bool calls = false;
        for (Block b : func.layout.blocks()) {
            if (!dt.dominates(s, b)) continue;
            region.push_back(b);
            for (auto i = func.layout.first_inst(b); i && !calls; i = func.layout.next_inst(*i)) calls = is_call(dfg, *i);
        }
        if (!calls) continue;
        // The entry's values read in the region, in the order first read.
        read.clear();
        for (Block b : region) {
            for (auto i = func.layout.first_inst(b); i; i = func.layout.next_inst(*i)) {
                dfg.for_each_inst_value(*i, [&](Value& v) {
                    v = dfg.resolve_aliases(v);
                    const ValueDef d = dfg.value_def(v);
                    const Block def_block = d.is_result() ? *func.layout.inst_block(d.inst()) : Block(d.owner);
                    if (def_block != *entry || is_constant(dfg, v) || split[v.index()].is_valid()) return;
                    split[v.index()] = v;  // marked; the parameter comes below
                    read.push_back(v);
                });
            }
        }
        for (Value v : read) {
            split[v.index()] = dfg.append_block_param(s, dfg.value_type(v));
            dests[k].append_arg(v, dfg.value_lists);
        }
        for (Block b : region) {
            for (auto i = func.layout.first_inst(b); i; i = func.layout.next_inst(*i)) {
                dfg.for_each_inst_value(*i, [&](Value& v) {
                    if (v.index() < split.size() && split[v.index()].is_valid()) v = split[v.index()];
                });
            }
        }
        added += static_cast<uint32_t>(read.size());
        for (Value v : read) split[v.index()] = Value();
    }
    return added;
}

}  // namespace heron
