// Block order with critical-edge splitting. See block_order.h.
#include "codegen/machinst/block_order.h"

#include <span>
#include <utility>

namespace heron {

void BlockOrder::compute(const Function& f) {
    const DataFlowGraph& dfg = f.dfg;
    rpo_.clear();
    rpo_index_.clear();
    vblock_of_.clear();
    vblocks_.clear();
    dest_vblock_.clear();

    // Iterative DFS for postorder, successors in branch order.
    uint32_t nb = dfg.num_blocks();
    std::vector<uint8_t> seen(nb, 0);
    std::vector<std::pair<Block, uint32_t>> stack;
    std::vector<Block> post;
    Block entry = *f.layout.entry_block();
    stack.push_back({entry, 0});
    seen[entry.index()] = 1;
    while (!stack.empty()) {
        auto& [b, k] = stack.back();
        auto term = f.layout.last_inst(b);
        auto dests = term ? dfg.branch_destinations(*term) : std::span<const BlockCall>();
        if (k < dests.size()) {
            Block s = dests[k++].block(dfg.value_lists);
            if (!seen[s.index()]) {
                seen[s.index()] = 1;
                stack.push_back({s, 0});
            }
            continue;
        }
        post.push_back(b);
        stack.pop_back();
    }
    rpo_.assign(post.rbegin(), post.rend());

    // Predecessor edge counts, to find critical edges.
    std::vector<uint32_t> npreds(nb, 0);
    for (Block b : rpo_) {
        for (const BlockCall& bc : dfg.branch_destinations(*f.layout.last_inst(b))) ++npreds[bc.block(dfg.value_lists).index()];
    }
    auto critical = [&](size_t ndests, Block s) { return ndests > 1 && npreds[s.index()] > 1; };

    // VCode blocks: each IR block followed by its edge blocks.
    for (uint32_t i = 0; i < rpo_.size(); ++i) {
        Block b = rpo_[i];
        rpo_index_[b] = i;
        vblock_of_[b] = static_cast<uint32_t>(vblocks_.size());
        VBlock vb;
        vb.ir = b.index();
        vblocks_.push_back(std::move(vb));
        auto dests = dfg.branch_destinations(*f.layout.last_inst(b));
        for (const BlockCall& bc : dests) {
            Block s = bc.block(dfg.value_lists);
            if (!critical(dests.size(), s)) continue;
            VBlock eb;
            eb.edge_target = s.index();
            auto args = bc.args(dfg.value_lists);
            eb.edge_args.assign(args.begin(), args.end());
            vblocks_.push_back(std::move(eb));
        }
    }

    // Successor lists (now that every IR block has its VCode number).
    dest_vblock_.assign(rpo_.size(), {});
    for (uint32_t i = 0; i < rpo_.size(); ++i) {
        Block b = rpo_[i];
        uint32_t vb = vblock_of_[b];
        uint32_t next_edge = vb + 1;
        auto dests = dfg.branch_destinations(*f.layout.last_inst(b));
        for (const BlockCall& bc : dests) {
            Block s = bc.block(dfg.value_lists);
            if (critical(dests.size(), s)) {
                uint32_t e = next_edge++;
                vblocks_[e].succs = {vblock_of_[s]};
                vblocks_[e].args = {vblocks_[e].edge_args};
                vblocks_[vb].succs.push_back(e);
                vblocks_[vb].args.push_back({});
                dest_vblock_[i].push_back(e);
                continue;
            }
            auto args = bc.args(dfg.value_lists);
            vblocks_[vb].succs.push_back(vblock_of_[s]);
            vblocks_[vb].args.push_back(std::vector<Value>(args.begin(), args.end()));
            dest_vblock_[i].push_back(vblock_of_[s]);
        }
    }
}

}  // namespace heron
