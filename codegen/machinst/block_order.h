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
//     the price of one jump into the loop from the preheader;
//   - a loop that is not rotated (the exit test at the latch, as count-down
//     makes them) whose back edge needs an edge block (moves) gets that
//     block placed right before its header: the test branches back to it
//     and it falls into the header.
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
#include <span>
#include <vector>

#include "codegen/analysis/loops.h"
#include "codegen/ir/function.h"

namespace heron {

/// Kept by the lowering context of each ISA and recomputed for every
/// function: every table is a flat array (successors and branch arguments
/// in compressed sparse rows), so the next compute() reuses the memory of
/// the last and a function allocates nothing here once the arrays have
/// grown. Loops are looked for only when the function has a retreating
/// edge and the caller did not give its loops (the optimizer's, through
/// TargetIsa::lower's KnownAnalyses), and then from the reverse postorder
/// (find_loops), without a CFG, dominator tree or LoopAnalysis; an acyclic
/// function has no loops and its layout is the VCode order.
class BlockOrder {
public:
    static constexpr uint32_t kNone = ~0u;

    /// Computes the order and the layout of `f`, which must have an entry
    /// block and terminators on every reachable block (a verified
    /// function). `known`, when given, is the current loop analysis of `f`
    /// (the optimizer's, Optimizer::loops): the layout then uses it instead
    /// of finding the loops itself.
    void compute(const Function& f, const LoopAnalysis* known = nullptr);

    /// Reachable IR blocks in reverse postorder.
    std::span<const Block> rpo() const { return rpo_; }
    uint32_t num_vblocks() const { return static_cast<uint32_t>(vb_ir_.size()); }
    /// The IR block of VCode block `vb`, or kNone for an edge block (which
    /// splits a critical edge and holds nothing but the jump along it).
    uint32_t ir_block(uint32_t vb) const { return vb_ir_[vb]; }
    /// The successors of VCode block `vb` (VCode blocks, in terminator
    /// target order); an edge block has one. Successor edge k of `vb` is
    /// edge number succ_begin(vb) + k.
    std::span<const uint32_t> succs(uint32_t vb) const {
        return {succs_.data() + succ_begin_[vb], succ_begin_[vb + 1] - succ_begin_[vb]};
    }
    uint32_t succ_begin(uint32_t vb) const { return succ_begin_[vb]; }
    /// The IR values successor edge `e` passes (none on the edge into an
    /// edge block: its own jump passes them).
    std::span<const Value> edge_args(uint32_t e) const {
        return {args_.data() + arg_begin_[e], arg_begin_[e + 1] - arg_begin_[e]};
    }
    /// The whole successor and edge-argument rows (what the allocator's
    /// block arrays are made of): successors of every VCode block in order,
    /// the row starts by VCode block (one past the end), and the edges'
    /// arguments with their row starts by edge (one past the end).
    uint32_t num_edges() const { return static_cast<uint32_t>(succs_.size()); }
    std::span<const uint32_t> all_succs() const { return succs_; }
    std::span<const uint32_t> all_succ_begins() const { return succ_begin_; }
    std::span<const uint32_t> all_arg_begins() const { return arg_begin_; }
    std::span<const Value> all_args() const { return args_; }
    /// The VCode block of reachable IR block `b`.
    uint32_t vblock_of(Block b) const { return vblock_of_[b.index()]; }
    /// For the terminator of reachable IR block `b`: the VCode block each
    /// destination (in terminator target order) jumps to — the target's own
    /// block, or the edge block that splits the edge.
    std::span<const uint32_t> targets_of(Block b) const { return succs(vblock_of(b)); }
    /// VCode blocks in the order their code is placed (see the top of this
    /// file); starts with the entry block.
    const std::vector<uint32_t>& layout() const { return layout_; }
    /// False when the control flow of `f` is irreducible (the layout is
    /// then the VCode order and every block counts as depth 0).
    bool reducible() const { return reducible_; }
    /// The number of natural loops of `f` (0 when irreducible).
    uint32_t num_loops() const;
    /// The loop nesting depth of reachable IR block `b` (0 outside every
    /// loop, and when the function is irreducible): the caller's loop
    /// analysis's answer when compute() was given one, else that of the
    /// loops found here.
    uint32_t loop_depth(Block b) const;

private:
    void compute_single_block(const Function& f, Block entry);
    void gather_destinations(const Function& f);
    void compute_reverse_postorder(const Function& f);
    void compute_layout(const Function& f, const LoopAnalysis* known);
    /// The natural loops of a function with a retreating edge, from the
    /// reverse postorder alone (no CFG, dominator tree or LoopAnalysis):
    /// predecessors in rows by rpo position, dominators by the iterative
    /// intersection over the reverse postorder, every retreating edge
    /// checked to be a back edge (else false: irreducible), and each loop's
    /// body by a backward walk from its latches, innermost headers first,
    /// an inner loop entered through its header (union-find). Fills
    /// own_loops_ and loop_at_.
    bool find_loops(const Function& f);
    /// What layout_loops asks of a loop nest, over the caller's
    /// LoopAnalysis or the loops find_loops found (block_order.cpp).
    struct KnownView;
    struct OwnView;
    template <class Loops>
    void layout_loops(const Function& f, const Loops& loops);
    void place_block(Block b);

    std::vector<Block> rpo_;
    std::vector<uint32_t> vblock_of_;  // by IR block index
    std::vector<uint32_t> vb_ir_;      // by VCode block
    std::vector<uint32_t> succ_begin_;  // by VCode block, one past the end
    std::vector<uint32_t> succs_;
    std::vector<uint32_t> arg_begin_;  // by successor edge, one past the end
    std::vector<Value> args_;
    bool has_cycle_ = false;  // some edge goes back to a block not after its source in rpo_

    /// A loop found by find_loops; loops are numbered innermost first
    /// (by decreasing rpo position of their headers), so a parent's number
    /// is above its children's.
    struct OwnLoop {
        uint32_t header;  // rpo position
        uint32_t parent;  // own loop number, or kNone
        uint32_t depth;   // 1 for an outermost loop
        uint32_t latch;   // rpo position of the one latch, or kNone when several
    };
    const LoopAnalysis* known_ = nullptr;  // the caller's loops, when given
    std::vector<OwnLoop> own_loops_;
    std::vector<uint32_t> pos_;      // by IR block index: rpo position (reachable blocks)
    std::vector<uint32_t> loop_at_;  // by rpo position: innermost own loop, or kNone
    // find_loops() scratch: predecessor rows by rpo position, immediate
    // dominators, union-find links, the walk's stack.
    std::vector<uint32_t> pred_begin_, preds_, idom_, uf_, stack_;
    bool reducible_ = false;
    std::vector<uint32_t> layout_;
    // compute() scratch: each block's destinations (copies of its
    // terminator's BlockCalls, and their blocks); the depth-first
    // search's marks, stack and postorder, per-block predecessor edge
    // counts; compute_layout's items of each region (a loop, or the
    // function outside all loops) in CSR form and its walk's stack.
    struct Row {
        uint32_t first, n;  // dest_blocks_/dest_calls_[first, first + n)
    };
    std::vector<Row> block_row_;  // by IR block index (empty when not in the layout)
    std::vector<Block> dest_blocks_;
    std::vector<BlockCall> dest_calls_;
    std::vector<Block> layout_blocks_;  // gather_destinations' prefetch order, from kPrefetchFrom blocks
    static constexpr uint32_t kPrefetchFrom = 1024;
    std::vector<uint32_t> mark_;
    struct Frame {
        Block block;
        uint32_t next;  // position in dest_blocks_ of the next destination to visit
    };
    std::vector<Frame> dfs_;
    std::vector<Row> rpo_rows_;  // by rpo_ position: block_row_ of the block
    struct Walk {
        uint32_t region;
        uint32_t next;  // position of the next item to place
        bool rotated;
    };
    std::vector<uint32_t> item_begin_, items_, fill_;
    std::vector<uint32_t> top_edge_;  // by header vblock: its back edge block placed before it, or kNone
    std::vector<uint8_t> at_top_;     // by vblock: an edge block placed before its loop's header
    std::vector<Walk> walk_;
};

}  // namespace heron
