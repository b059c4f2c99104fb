// The dominator tree: block A dominates block B when every path from the
// entry block to B passes through A. Computed with the Semi-NCA algorithm
// (Lengauer & Tarjan's semidominators, then immediate dominators as nearest
// common ancestors) from L. Georgiadis, R. E. Tarjan, R. F. Werneck,
// "Finding Dominators in Practice" (JGAA 10(1), 2006): one iterative
// depth-first search, a semidominator pass with path compression, and an
// NCA walk. Near-linear in practice; no recursion anywhere, so a chain of a
// million blocks is fine.
//
// After the idoms are known, a second iterative walk numbers the dominator
// tree in pre- and post-order, so `dominates(a, b)` is two comparisons:
//
//        block0 [0,5]          a dominates b  <=>
//        /          \            pre(a) <= pre(b) && post(b) <= post(a)
//   block1 [1,1]  block2 [2,4]
//                   |
//               block3 [3,3] ...
//
// Unreachable blocks (no path from the entry) are not in the tree: they
// dominate nothing and are dominated by nothing, not even themselves, and
// have no idom. Instructions inherit this: an instruction in an unreachable
// block neither dominates nor is dominated.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/ir/dfg.h"
#include "codegen/ir/function.h"
#include "codegen/ir/layout.h"

namespace heron {

class DominatorTree {
public:
    DominatorTree() = default;
    DominatorTree(const Function& func, const ControlFlowGraph& cfg) { compute(func, cfg); }

    /// Recomputes the tree. `cfg` must be computed for `func`.
    void compute(const Function& func, const ControlFlowGraph& cfg);
    /// Forgets the tree but keeps the memory.
    void clear();
    /// True between compute() and clear().
    bool is_valid() const { return valid_; }
    /// The update after forward-blocks removed blocks that only jumped on,
    /// with every edge into one redirected to where its jump went
    /// (`removed[b]` nonzero for those): paths between the other blocks are
    /// the old ones with the removed blocks cut out, so the depth-first
    /// order of the rest and their dominance do not change, and a block's
    /// new idom is its nearest ancestor that stays. Gives what compute()
    /// would on the new CFG, in time linear in the blocks.
    void remove_blocks(std::span<const uint8_t> removed);

    /// The reachable blocks in reverse postorder of the CFG depth-first
    /// search (successors visited in CFG order): the entry first, every block
    /// before its successors except along back edges.
    std::span<const Block> reverse_postorder() const { return rpo_; }
    /// Position of a reachable block in reverse_postorder().
    uint32_t rpo_number(Block b) const { return node(b).rpo; }

    bool is_reachable(Block b) const { return node(b).dfs != 0; }
    /// The immediate dominator; none for the entry block and for
    /// unreachable blocks.
    PackedOption<Block> idom(Block b) const { return node(b).idom; }
    /// Blocks whose idom is `b`, in depth-first order of the CFG.
    std::span<const Block> children(Block b) const;

    /// Reflexive: a reachable block dominates itself. O(1).
    bool dominates(Block a, Block b) const {
        const Node& na = node(a);
        const Node& nb = node(b);
        return na.dfs != 0 && nb.dfs != 0 && na.dt_pre <= nb.dt_pre && nb.dt_post <= na.dt_post;
    }
    bool strictly_dominates(Block a, Block b) const { return a != b && dominates(a, b); }

    /// Instruction dominance, reflexive: in one block by layout order,
    /// otherwise by block dominance. False for instructions not in the
    /// layout or in unreachable blocks.
    bool dominates(Inst a, Inst b, const Layout& layout) const;
    /// Whether a value defined by `def` is available at `use`: a block
    /// parameter is available everywhere its block dominates (its own block
    /// included); an instruction result at instructions its instruction
    /// strictly dominates (never at the defining instruction itself). False
    /// for an alias: resolve it first.
    bool dominates(const ValueDef& def, Inst use, const Layout& layout) const;

    /// Position of `b` in a pre-/post-order walk of the dominator tree
    /// (meaningful for reachable blocks only).
    uint32_t dom_preorder(Block b) const { return node(b).dt_pre; }
    uint32_t dom_postorder(Block b) const { return node(b).dt_post; }

private:
    struct Node {
        uint32_t dfs = 0;  // 1 + CFG depth-first preorder number; 0 = unreachable
        uint32_t rpo = 0;
        uint32_t dt_pre = 0;
        uint32_t dt_post = 0;
        PackedOption<Block> idom;
    };

    const Node& node(Block b) const { return b.index() < nodes_.size() ? nodes_[b.index()] : kUnreachable; }
    void depth_first_search(const Function& func, const ControlFlowGraph& cfg);
    void compute_semidominators(const ControlFlowGraph& cfg);
    static void compress(uint32_t v, uint32_t w, uint32_t* ancestor, uint32_t* label, uint32_t* path);
    void compute_idoms();
    void number_tree();

    static const Node kUnreachable;

    std::vector<Node> nodes_;  // by block index
    std::vector<Block> rpo_;

    // By CFG preorder number (0 = entry), filled by compute(): the block,
    // its DFS-tree parent, semidominator, path-compression label and
    // ancestor, immediate dominator; and the tree's children rows.
    std::vector<Block> block_;
    std::vector<uint32_t> parent_, semi_, label_, ancestor_, idom_;
    std::vector<uint32_t> child_begin_;
    std::vector<Block> children_;
    // The explicit stack of the CFG search: frames of a block's preorder
    // number and its successors not looked at yet.
    struct DfsFrame {
        const Block* next;
        const Block* end;
        uint32_t pre;
    };
    std::vector<DfsFrame> dfs_stack_;
    std::vector<uint32_t> path_;
    bool valid_ = false;
};

}  // namespace heron
