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
// VCode block numbers are positions in `vblocks`: the order lowering and
// the register allocator work in. The emitters place the blocks in
// `layout()`, a permutation of them that is loop-aware:
//
//   - every natural loop's blocks (edge blocks included) are contiguous,
//     nested loops inside their parents;
//   - loop rotation: when a loop's header has an exit edge (a `while`
//     loop), the header goes after the rest of the loop, so the latch falls
//     into the exit test and the test branches back to the top when the
//     loop goes on: one conditional branch per iteration and no jump, at
//     the price of one jump into the loop from the preheader.
//
//       RPO:  P  H  X  B          layout:  P  B  H  X
//       P: jump H                 P: jmp H
//       H: brif c, B, X           B: ...            (falls into H)
//       B: ...; jump H            H: cmp; jcc B     (falls out to X)
//
// Lowering keeps the reverse postorder because it relies on seeing every
// use before its definition when it walks the blocks backwards, and the
// allocator's linear order wants each definition before its uses; the
// layout only decides where each block's code goes and which jumps fall
// through. A change of order (rotation, cold blocks last) belongs here and
// nowhere else.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
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

    /// Computes the order and the layout of `f`, which must have an entry
    /// block and terminators on every reachable block (a verified
    /// function).
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
    /// VCode blocks in the order their code is placed (see the top of this
    /// file); starts with the entry block.
    const std::vector<uint32_t>& layout() const { return layout_; }
    /// The loops of `f`; null when its control flow is irreducible (the
    /// layout is then the VCode order).
    const LoopAnalysis* loops() const { return reducible_ ? &loops_ : nullptr; }

private:
    void compute_layout(const Function& f);
    void place_block(Block b);

    std::vector<Block> rpo_;
    SecondaryMap<Block, uint32_t> rpo_index_;
    SecondaryMap<Block, uint32_t> vblock_of_;
    std::vector<VBlock> vblocks_;
    std::vector<std::vector<uint32_t>> dest_vblock_;  // indexed by rpo position

    ControlFlowGraph cfg_;
    DominatorTree domtree_;
    LoopAnalysis loops_;
    bool reducible_ = false;
    std::vector<uint32_t> layout_;
    // compute_layout scratch: the items of each region (a loop, or the
    // function outside all loops) in CSR form, and the walk's stack.
    struct Walk {
        uint32_t region;
        uint32_t next;  // position of the next item to place
        bool rotated;
    };
    std::vector<uint32_t> item_begin_, items_, fill_;
    std::vector<Walk> walk_;
};

}  // namespace heron
