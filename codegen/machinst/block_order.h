// Block order for lowering: the one place that decides in which order a
// function's blocks are emitted and where critical edges are split. Every
// backend lowers in this order (codegen/isa/*/lower.cpp).
//
// The order is the reverse postorder of the blocks reachable from the entry
// (successors visited in terminator target order), so a definition's block
// comes before every block it dominates. Each critical edge (from a block
// with several successors to a block with several predecessors) gets an
// edge block of its own, placed right after its source block: the
// register allocator then has a place for the edge's moves that runs on
// that edge only. Unreachable blocks are left out.
//
// VCode block numbers are positions in `vblocks`. A change of order (loop
// rotation, cold blocks last) belongs in `BlockOrder::compute` and nowhere
// else: lowering, the allocator's block arrays and the emitters all read
// the order from here.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/function.h"

namespace heron {

class BlockOrder {
public:
    static constexpr uint32_t kNone = ~0u;

    /// One VCode block: an IR block, or an edge block (ir == kNone) that
    /// splits a critical edge and holds nothing but the jump along it.
    struct VBlock {
        uint32_t ir = kNone;                   // IR block, or kNone for an edge block
        std::vector<uint32_t> succs;           // VCode blocks, in terminator target order
        std::vector<std::vector<Value>> args;  // per successor: IR values passed
        // Edge block only: the IR target and the arguments the edge passes.
        uint32_t edge_target = kNone;
        std::vector<Value> edge_args;
    };

    /// Computes the order of `f`, which must have an entry block and
    /// terminators on every reachable block (a verified function).
    void compute(const Function& f);

    /// Reachable IR blocks in reverse postorder.
    const std::vector<Block>& rpo() const { return rpo_; }
    /// VCode blocks in emission order.
    const std::vector<VBlock>& vblocks() const { return vblocks_; }
    uint32_t num_vblocks() const { return static_cast<uint32_t>(vblocks_.size()); }
    /// The VCode block of reachable IR block `b`.
    uint32_t vblock_of(Block b) const { return vblock_of_[b]; }
    /// For the terminator of reachable IR block `b`: the VCode block each
    /// destination (in terminator target order) jumps to — the target's own
    /// block, or the edge block that splits the edge.
    const std::vector<uint32_t>& targets_of(Block b) const { return dest_vblock_[rpo_index_[b]]; }

private:
    std::vector<Block> rpo_;
    SecondaryMap<Block, uint32_t> rpo_index_;
    SecondaryMap<Block, uint32_t> vblock_of_;
    std::vector<VBlock> vblocks_;
    std::vector<std::vector<uint32_t>> dest_vblock_;  // indexed by rpo position
};

}  // namespace heron
