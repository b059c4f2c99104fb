// The control-flow graph of a function: for every block, the blocks its
// terminator can branch to (successors) and the (block, branch instruction)
// pairs that can branch to it (predecessors).
//
// An edge is a pair (branch instruction, target block). Duplicates collapse:
// `brif v0, block1(v2), block1(v3)` or a `br_table` naming block1 in several
// entries gives one successor block1 and one predecessor (block0, inst) of
// block1. Passes that care about the individual destinations (and their
// arguments) walk `dfg.branch_destinations(inst)`; the CFG answers "who can
// reach whom". Successors are listed in the order their first destination
// appears (then-target before else-target, br_table default first);
// predecessors in layout order of their source blocks.
//
// Only the last instruction of each block is read: in a valid function that
// is the block's only branch. On malformed input (the verifier's case) a
// destination whose block is not in the layout is left out, and a branch in
// the middle of a block contributes no edge; the verifier reports both.
//
// Both lists live in flat arrays (compressed sparse rows), so computing the
// CFG is linear in blocks plus edges and `clear()` keeps every array's memory
// for the next function.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codegen/ir/entity.h"
#include "codegen/ir/function.h"

namespace heron {

/// One incoming edge: `inst`, the terminator of `block`, can branch here.
struct BlockPredecessor {
    Block block;
    Inst inst;

    friend bool operator==(const BlockPredecessor& a, const BlockPredecessor& b) {
        return a.block == b.block && a.inst == b.inst;
    }
};

class ControlFlowGraph {
public:
    ControlFlowGraph() = default;
    explicit ControlFlowGraph(const Function& func) { compute(func); }

    /// Recomputes the graph of `func` from scratch.
    void compute(const Function& func);
    /// Forgets the graph but keeps the memory.
    void clear();
    /// True between compute() and clear().
    bool is_valid() const { return valid_; }
    /// The update after forward-blocks (codegen/opt/forward_blocks.h)
    /// removed blocks from the layout: `target[b]` is kNoTarget for a block
    /// that stays, else the block every edge into b now goes to (b's branch
    /// sources were redirected there). The removed blocks' own edges go
    /// away. Gives what compute() would, from the edge list of the last
    /// computation, without reading the IR.
    static constexpr uint32_t kNoTarget = ~0u;
    void bypass_removed(std::span<const uint32_t> target);
    /// The update after loop-form split edges into a new block: `fresh`,
    /// now in `layout` and ending in `jump` to `target`, took every
    /// destination naming `target` of the branches `sources`. Patches the
    /// edge list of the last computation (without reading the IR beyond
    /// the layout order); the rows are left as they were, stale for
    /// `target`, `fresh` and the sources, until rebuild_rows(), so that
    /// several splits cost one rebuild.
    void split_edges(Block fresh, Inst jump, Block target, std::span<const Inst> sources, const Layout& layout);
    /// Lays the rows out again from the edge list (after split_edges):
    /// the graph is then what compute() gives. `num_blocks`: the DFG's.
    void rebuild_rows(uint32_t num_blocks) { build_rows(num_blocks); }

    /// Blocks that can branch to `b`, each with its branch instruction.
    /// Empty for blocks not in the layout or unknown to the graph.
    std::span<const BlockPredecessor> predecessors(Block b) const { return row(pred_begin_, preds_, b); }
    /// Distinct blocks `b`'s terminator can branch to.
    std::span<const Block> successors(Block b) const { return row(succ_begin_, succs_, b); }
    uint32_t num_predecessors(Block b) const { return static_cast<uint32_t>(predecessors(b).size()); }
    uint32_t num_successors(Block b) const { return static_cast<uint32_t>(successors(b).size()); }

private:
    /// The rows from edges_ (two counting sorts).
    void build_rows(uint32_t num_blocks);

    // Row `b` of a list is [begin_[b], begin_[b + 1]).
    template <typename T>
    static std::span<const T> row(const std::vector<uint32_t>& begin, const std::vector<T>& items, Block b) {
        if (b.index() + 1 >= begin.size()) return {};
        return {items.data() + begin[b.index()], begin[b.index() + 1] - begin[b.index()]};
    }

    std::vector<uint32_t> succ_begin_;
    std::vector<Block> succs_;
    std::vector<uint32_t> pred_begin_;
    std::vector<BlockPredecessor> preds_;
    // The distinct edges in layout order (kept for bypass_removed), and
    // compute() scratch: per block first the source that last named it (to
    // drop duplicate destinations in O(1)), then a row's next free slot.
    struct Edge {
        Block from;
        Inst inst;
        Block to;
    };
    std::vector<Edge> edges_;
    std::vector<uint32_t> scratch_;
    bool valid_ = false;
};

}  // namespace heron
