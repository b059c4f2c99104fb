// Loop analysis: the natural loops of a reducible function, nested into a
// loop tree, over a computed ControlFlowGraph and DominatorTree.
//
// Definitions (as in the seed notes 000 and 003, and the dragon book 9.6):
//   - An edge t -> h is *retreating* when h is an ancestor of t in the
//     depth-first spanning tree; with the DominatorTree's DFS that is exactly
//     rpo(h) <= rpo(t). It is a *back edge* when h dominates t.
//   - The function is *reducible* iff every retreating edge is a back edge.
//     Otherwise compute() returns an error naming the first offending edge in
//     reverse postorder: "irreducible control flow: edge block5 -> block3".
//   - The natural loop of header h is h plus every block that reaches a
//     back-edge source (a *latch*) of h without passing through h. All back
//     edges into one header form one loop.
//   - Loops nest (in a reducible graph two natural loops are disjoint or one
//     contains the other); the *loop tree* links each loop to its innermost
//     enclosing loop. Depth: outermost loops have depth 1; a block's depth is
//     its innermost loop's depth, 0 outside every loop.
//   - An *exit edge* of loop L goes from a block in L to a block outside L;
//     its target is an *exit block*. An edge leaving several nested loops is
//     an exit edge of each of them.
//
// Loops are numbered in preorder of the loop tree (siblings in reverse
// postorder of their headers), so the loops inside L are exactly the ids
// [L, L + subtree_size(L)), `contains(L, b)` is two comparisons, and the
// blocks of L (nested loops included) are one contiguous span.
//
// Cost: one walk over the reverse postorder for the back edges, one backward
// walk per loop that visits each block once (an inner loop is entered
// through its header only, with union-find path compression on "outermost
// loop found so far"), counting sorts for the rows. Exit edges cost one step
// per (edge, loop exited). Nothing recurses. Unreachable blocks belong to no
// loop and contribute no edges.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/ir/entity.h"
#include "codegen/ir/function.h"

namespace heron {

struct LoopTag {
    static constexpr const char* kPrefix = "loop";
};
/// A loop of one LoopAnalysis result; valid until the next compute().
using Loop = EntityRef<LoopTag>;

/// A CFG edge with the branch instruction that makes it.
struct LoopEdge {
    Block from;
    Inst inst;
    Block to;
};

/// Why compute() gave up: the retreating edge `from -> to` whose target
/// does not dominate its source.
struct LoopError {
    Block from;
    Block to;
    std::string message;  // "irreducible control flow: edge blockF -> blockT"
};

class LoopAnalysis {
    struct LoopData {
        Block header;
        PackedOption<Loop> parent;
        PackedOption<Block> preheader;
        uint32_t depth = 0;
        uint32_t subtree = 1;
    };

public:
    LoopAnalysis() = default;

    /// Recomputes the loops. `cfg` and `domtree` must be computed for `func`.
    /// On irreducible control flow returns the error and leaves the analysis
    /// invalid (is_valid() false, no loops).
    std::optional<LoopError> compute(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& domtree);
    /// Forgets the loops but keeps the memory.
    void clear();
    /// For a pass that has split an edge into a new block `b` and goes on
    /// asking this analysis about blocks before it invalidates it
    /// (loop-form): records `innermost` as b's innermost loop, so that
    /// innermost_loop, depth, is_header and contains answer for `b`.
    /// Nothing else is updated (the rows of blocks, latches, entries and
    /// exits, the preheaders): the analysis is no longer the one compute()
    /// would give until refresh_rows() has read the new CFG.
    void note_new_block(Block b, PackedOption<Loop> innermost) {
        if (b.index() >= innermost_.size()) innermost_.resize(b.index() + 1);
        innermost_[b.index()] = innermost;
    }
    /// The update after forward-blocks removed blocks that only jumped on
    /// (`removed[b]` nonzero), with `cfg` and `domtree` already updated
    /// (ControlFlowGraph::bypass_removed, DominatorTree::remove_blocks).
    /// Cutting such blocks out of paths keeps which other blocks reach
    /// which, the dominance among them and their reverse postorder, so when
    /// no removed block is a loop header every loop keeps its header,
    /// nesting and number and loses only the removed blocks; its latches,
    /// entries, preheader and exits are read again from the new CFG.
    /// Returns false, changing nothing, when a removed block is a header
    /// (the loop would get a new header, or merge with one nested in it):
    /// the caller must then recompute.
    bool remove_blocks(std::span<const uint8_t> removed, const Function& func, const ControlFlowGraph& cfg,
                       const DominatorTree& domtree);
    /// The update after a pass changed edges without changing which blocks
    /// form which loop (loop-form, which splits edges into new blocks and
    /// notes each with note_new_block; count-down, which rewrites the
    /// terminators of a loop's preheader, header and latch), with `cfg` and
    /// `domtree` computed for the edited function. Splitting an edge keeps
    /// the depth-first order of the old blocks, so the loop tree, its
    /// numbering and the innermost loops stay; the rows of blocks, latches,
    /// entries, exits and the preheaders are read again. Gives what
    /// compute() would, without finding headers and bodies again.
    void refresh_rows(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& domtree);
    /// The result of compute() for a function known to have no cycle (no
    /// retreating edge), without looking at it: valid, no loops, every block
    /// at depth 0 and in no loop.
    void set_acyclic() {
        clear();
        valid_ = true;
    }
    /// True after a successful compute() until clear().
    bool is_valid() const { return valid_; }

    // --- the loop tree --------------------------------------------------------
    uint32_t num_loops() const { return loops_.size(); }
    /// All loops, in preorder of the loop tree.
    PrimaryMap<Loop, LoopData>::Keys loops() const { return loops_.keys(); }
    /// Loops without a parent, in preorder.
    std::span<const Loop> top_level() const { return top_level_; }
    Block header(Loop l) const { return loops_[l].header; }
    PackedOption<Loop> parent(Loop l) const { return loops_[l].parent; }
    /// Directly nested loops, in reverse postorder of their headers.
    std::span<const Loop> children(Loop l) const;
    /// 1 for an outermost loop.
    uint32_t loop_depth(Loop l) const { return loops_[l].depth; }
    /// How many loops (l included) nest inside l.
    uint32_t subtree_size(Loop l) const { return loops_[l].subtree; }

    // --- blocks ------------------------------------------------------------------
    /// The innermost loop containing `b`; none outside loops and for
    /// unreachable blocks.
    PackedOption<Loop> innermost_loop(Block b) const {
        return b.index() < innermost_.size() ? innermost_[b.index()] : PackedOption<Loop>();
    }
    /// Loop nesting depth of `b`, 0 outside every loop.
    uint32_t depth(Block b) const {
        auto l = innermost_loop(b);
        return l ? loop_depth(*l) : 0;
    }
    bool is_header(Block b) const {
        auto l = innermost_loop(b);
        return l && header(*l) == b;
    }
    /// The loop `b` is the header of.
    PackedOption<Loop> loop_of_header(Block b) const { return is_header(b) ? innermost_loop(b) : PackedOption<Loop>(); }
    /// Whether `b` is in `l` or in a loop nested in it. O(1).
    bool contains(Loop l, Block b) const {
        auto in = innermost_loop(b);
        return in && l.index() <= in->index() && in->index() < l.index() + subtree_size(l);
    }
    /// Whether `inner` is `outer` or nested in it. O(1).
    bool contains(Loop outer, Loop inner) const {
        return outer.index() <= inner.index() && inner.index() < outer.index() + subtree_size(outer);
    }
    /// Every block of `l`, nested loops included: first the blocks whose
    /// innermost loop is `l` (in reverse postorder, the header first), then
    /// those of each nested loop in loop-tree preorder.
    std::span<const Block> blocks(Loop l) const;
    /// The blocks whose innermost loop is `l`, in reverse postorder (the
    /// header first): the first part of blocks(l).
    std::span<const Block> own_blocks(Loop l) const { return row(block_begin_, blocks_, l); }

    // --- edges ---------------------------------------------------------------------
    /// Sources of the back edges of `l`, in CFG predecessor order.
    std::span<const Block> latches(Loop l) const;
    /// Edges from outside `l` into its header (CFG predecessors of the
    /// header that are reachable and not in `l`), in CFG predecessor order.
    std::span<const LoopEdge> entries(Loop l) const;
    /// The block outside `l` that is the header's only entering predecessor
    /// and whose only successor is the header; none otherwise.
    PackedOption<Block> preheader(Loop l) const { return loops_[l].preheader; }
    /// Edges leaving `l`, grouped by source block in reverse postorder.
    std::span<const LoopEdge> exit_edges(Loop l) const;
    /// Distinct targets of exit_edges(l), in order of first appearance.
    std::span<const Block> exit_blocks(Loop l) const;

private:
    void find_headers(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt,
                      std::optional<LoopError>& error);
    void find_bodies(const ControlFlowGraph& cfg, const DominatorTree& dt);
    uint32_t outermost(uint32_t loop);
    void number_loops();
    void collect_rows(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt);

    template <typename T>
    static std::span<const T> row(const std::vector<uint32_t>& begin, const std::vector<T>& items, Loop l) {
        if (l.index() + 1 >= begin.size()) return {};
        return {items.data() + begin[l.index()], begin[l.index() + 1] - begin[l.index()]};
    }

    PrimaryMap<Loop, LoopData> loops_;
    std::vector<PackedOption<Loop>> innermost_;  // by block index
    std::vector<Loop> top_level_;
    std::vector<uint32_t> child_begin_;
    std::vector<Loop> children_;
    std::vector<uint32_t> block_begin_;  // row l starts the blocks of l
    std::vector<Block> blocks_;
    std::vector<uint32_t> latch_begin_;
    std::vector<Block> latches_;
    std::vector<uint32_t> entry_begin_;
    std::vector<LoopEdge> entries_;
    std::vector<uint32_t> exit_begin_;
    std::vector<LoopEdge> exits_;
    std::vector<uint32_t> exit_block_begin_;
    std::vector<Block> exit_blocks_;

    // compute() scratch: headers in reverse postorder (temporary loop ids),
    // union-find links over temporary ids, the backward walk's stack, the
    // temporary -> final id map, and a per-block stamp.
    std::vector<Block> header_order_;
    std::vector<uint32_t> temp_parent_, uf_, remap_;
    std::vector<Block> work_;
    std::vector<uint32_t> stamp_;
    std::vector<std::pair<uint32_t, LoopEdge>> tagged_;
    // number_loops() / collect_rows() scratch: children rows over temporary
    // ids, row fill positions, the loops before renumbering, the walk stack.
    std::vector<uint32_t> kids_, next_;
    std::vector<LoopData> data_;
    std::vector<std::pair<uint32_t, uint32_t>> stack_;
    bool valid_ = false;
};

}  // namespace heron
