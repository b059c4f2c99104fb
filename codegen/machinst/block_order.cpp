// Block order with critical-edge splitting, and the loop-aware layout. See
// block_order.h.
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
    compute_layout(f);
}

// The layout is a preorder walk of a tree of regions: the function outside
// all loops is the root, each loop a region inside its parent. A region's
// items, in reverse postorder, are its own blocks and its child loops, the
// latter at their header's position (the header comes first among a loop's
// blocks in reverse postorder, so that is where the loop is met first). A
// rotated loop visits its items from the second on and its header last.
// Linear in blocks + loops; no recursion.
namespace {
constexpr uint32_t kLoopItem = 1u << 31;
}  // namespace

void BlockOrder::place_block(Block b) {
    // The IR block's VCode block, then the edge blocks that follow it.
    uint32_t vb = vblock_of_[b];
    layout_.push_back(vb);
    for (++vb; vb < vblocks_.size() && vblocks_[vb].ir == kNone; ++vb) layout_.push_back(vb);
}

void BlockOrder::compute_layout(const Function& f) {
    layout_.clear();
    cfg_.compute(f);
    domtree_.compute(f, cfg_);
    reducible_ = !loops_.compute(f, cfg_, domtree_);
    if (!reducible_ || loops_.num_loops() == 0) {
        for (uint32_t vb = 0; vb < vblocks_.size(); ++vb) layout_.push_back(vb);
        return;
    }
    // Regions: loop l is region l, the root region num_loops.
    const uint32_t nl = loops_.num_loops(), root = nl;
    auto region_of = [&](Block b) {
        auto l = loops_.innermost_loop(b);
        return l ? l->index() : root;
    };
    auto parent_region = [&](Loop l) {
        auto p = loops_.parent(l);
        return p ? p->index() : root;
    };
    item_begin_.assign(nl + 2, 0);
    for (Block b : rpo_) {
        ++item_begin_[region_of(b) + 1];
        if (loops_.is_header(b)) ++item_begin_[parent_region(*loops_.innermost_loop(b)) + 1];
    }
    for (uint32_t r = 0; r <= nl; ++r) item_begin_[r + 1] += item_begin_[r];
    items_.resize(item_begin_[nl + 1]);
    std::vector<uint32_t>& fill = fill_;
    fill.assign(item_begin_.begin(), item_begin_.end() - 1);
    for (Block b : rpo_) {
        if (loops_.is_header(b)) {
            const Loop l = *loops_.innermost_loop(b);
            items_[fill[parent_region(l)]++] = kLoopItem | l.index();
        }
        items_[fill[region_of(b)]++] = b.index();
    }

    // Rotation: a loop whose header leaves it, and that has other items,
    // runs its header last. Never the entry block's loop: the entry's code
    // comes first.
    const Block entry = *f.layout.entry_block();
    auto rotated = [&](uint32_t r) {
        if (r == root || item_begin_[r + 1] - item_begin_[r] < 2) return false;
        const Loop l(r);
        const Block h = loops_.header(l);
        if (h == entry) return false;
        for (const BlockCall& bc : f.dfg.branch_destinations(*f.layout.last_inst(h))) {
            if (!loops_.contains(l, bc.block(f.dfg.value_lists))) return true;
        }
        return false;
    };
    // The walk: a rotated region's position k maps to item k + 1, its last
    // position to item 0 (the header).
    walk_.clear();
    walk_.push_back({root, 0, false});
    while (!walk_.empty()) {
        Walk& w = walk_.back();
        const uint32_t n = item_begin_[w.region + 1] - item_begin_[w.region];
        if (w.next == n) {
            walk_.pop_back();
            continue;
        }
        const uint32_t pos = w.rotated ? (w.next + 1 == n ? 0 : w.next + 1) : w.next;
        ++w.next;
        const uint32_t item = items_[item_begin_[w.region] + pos];
        if (item & kLoopItem) {
            const uint32_t r = item & ~kLoopItem;
            walk_.push_back({r, 0, rotated(r)});
        } else {
            place_block(Block(item));
        }
    }
}

}  // namespace heron
