// DominatorTree: Semi-NCA (Georgiadis, Tarjan, Werneck 2006).
//
// Blocks are renamed to their CFG depth-first preorder numbers 0..n-1 (the
// entry is 0). With that numbering:
//   - semi(w) is the smallest v with a path v -> ... -> w whose inner nodes
//     are all numbered above w. It is found from w's predecessors: a
//     predecessor v < w is itself a candidate; for v > w, the candidates are
//     the semidominators on v's DFS-tree path up to its first ancestor
//     numbered <= w. Processing w from n-1 down to 1 and linking each w to
//     its parent afterwards, "numbered above w" is "already linked", and
//     path compression over the links gives that minimum (Lengauer-Tarjan's
//     eval/link).
//   - idom(w) is the nearest common ancestor, in the dominator tree built so
//     far, of parent(w) and semi(w): walk up from parent(w) while the node
//     is numbered above semi(w).
#include "codegen/analysis/dominator_tree.h"

#include <algorithm>

namespace heron {

const DominatorTree::Node DominatorTree::kUnreachable{};

void DominatorTree::clear() {
    nodes_.clear();
    rpo_.clear();
    block_.clear();
    parent_.clear();
    semi_.clear();
    label_.clear();
    ancestor_.clear();
    idom_.clear();
    child_begin_.clear();
    children_.clear();
    path_.clear();
    valid_ = false;
}

void DominatorTree::compute(const Function& func, const ControlFlowGraph& cfg) {
    HERON_ASSERT(cfg.is_valid() && "the dominator tree needs a computed CFG");
    // The per-block nodes start over; the arrays by preorder number keep
    // their elements from the last function (each is written before it is
    // read), so resizing them fills only what they grow by.
    nodes_.assign(func.dfg.num_blocks(), Node{});
    depth_first_search(func, cfg);
    if (!block_.empty()) {
        compute_semidominators(cfg);
        compute_idoms();
        number_tree();
    } else {
        child_begin_.clear();
        children_.clear();
        idom_.clear();
    }
    valid_ = true;
}

void DominatorTree::remove_blocks(std::span<const uint8_t> removed) {
    HERON_ASSERT(valid_ && "remove_blocks: no tree to update");
    auto gone = [&](Block b) { return b.index() < removed.size() && removed[b.index()]; };
    const auto n = static_cast<uint32_t>(block_.size());
    if (n == 0) return;
    HERON_ASSERT(!gone(block_[0]) && "remove_blocks: the entry block stays");
    // New preorder numbers (in parent_, free after compute) and idoms by
    // them (in semi_): the nearest ancestor that stays.
    std::vector<uint32_t>& renumber = parent_;
    std::vector<uint32_t>& new_idom = semi_;
    renumber.assign(n, 0);
    new_idom.clear();
    uint32_t kept = 0;
    for (uint32_t w = 0; w < n; ++w) {
        if (gone(block_[w])) continue;
        renumber[w] = kept++;
        uint32_t d = idom_[w];
        while (gone(block_[d])) d = idom_[d];
        new_idom.push_back(w == 0 ? 0 : renumber[d]);  // d < w: numbered already
    }
    idom_.swap(new_idom);
    uint32_t k = 0;
    for (uint32_t w = 0; w < n; ++w) {
        const Block b = block_[w];
        Node& nd = nodes_[b.index()];
        if (gone(b)) {
            nd = Node{};
            continue;
        }
        block_[k] = b;
        nd.dfs = k + 1;
        ++k;
    }
    block_.resize(kept);
    for (uint32_t w = 1; w < kept; ++w) nodes_[block_[w].index()].idom = block_[idom_[w]];
    size_t r = 0;
    for (Block b : rpo_) {
        if (gone(b)) continue;
        nodes_[b.index()].rpo = static_cast<uint32_t>(r);
        rpo_[r++] = b;
    }
    rpo_.resize(r);
    number_tree();
}

void DominatorTree::depth_first_search(const Function& func, const ControlFlowGraph& cfg) {
    auto entry = func.layout.entry_block();
    if (!entry || entry->index() >= nodes_.size()) {
        block_.clear();
        parent_.clear();
        rpo_.clear();
        return;
    }
    // Every table sized for all blocks up front (at most one frame per
    // reachable block), then cut to the reachable ones: no growth checks
    // in the walk. A frame holds its block's preorder number and the
    // successors it has yet to look at.
    const size_t nb = nodes_.size();
    block_.resize(nb);
    parent_.resize(nb);
    rpo_.resize(nb);
    dfs_stack_.resize(nb);
    Node* const nodes = nodes_.data();
    Block* const block = block_.data();
    uint32_t* const parent = parent_.data();
    DfsFrame* const stack = dfs_stack_.data();
    uint32_t n = 0;
    uint32_t post = 0;
    size_t depth = 0;
    auto visit = [&](Block b, uint32_t p) {
        nodes[b.index()].dfs = n + 1;
        block[n] = b;
        parent[n] = p;
        const std::span<const Block> succs = cfg.successors(b);
        stack[depth++] = DfsFrame{succs.data(), succs.data() + succs.size(), n};
        ++n;
    };
    visit(*entry, 0);
    while (depth != 0) {
        DfsFrame& f = stack[depth - 1];
        if (f.next != f.end) {
            const Block s = *f.next++;
            if (nodes[s.index()].dfs == 0) visit(s, f.pre);  // writes stack[depth]: f stays put
            continue;
        }
        rpo_[post++] = block[f.pre];  // postorder; reversed below
        --depth;
    }
    block_.resize(n);
    parent_.resize(n);
    rpo_.resize(n);
    std::reverse(rpo_.begin(), rpo_.end());
    for (uint32_t i = 0; i < n; ++i) nodes[rpo_[i].index()].rpo = i;
}

void DominatorTree::compute_semidominators(const ControlFlowGraph& cfg) {
    // The loops go through pointers: a store to one table would otherwise
    // make GCC load every vector's data pointer again.
    const auto n = static_cast<uint32_t>(block_.size());
    semi_.resize(n);  // every element written here
    label_.resize(n);
    ancestor_.assign(parent_.begin(), parent_.end());
    path_.resize(n);  // a compressed path holds each node at most once
    uint32_t* const semi = semi_.data();
    uint32_t* const label = label_.data();
    uint32_t* const ancestor = ancestor_.data();
    uint32_t* const path = path_.data();
    const uint32_t* const parent = parent_.data();
    const Block* const block = block_.data();
    const Node* const nodes = nodes_.data();
    for (uint32_t i = 0; i < n; ++i) semi[i] = label[i] = i;
    for (uint32_t w = n - 1; w >= 1; --w) {
        uint32_t sd = parent[w];
        for (const BlockPredecessor& pred : cfg.predecessors(block[w])) {
            // (Every predecessor is a block of the function: nodes_ has
            // a node for it.)
            uint32_t v = nodes[pred.block.index()].dfs;
            if (v == 0) continue;  // an unreachable predecessor
            --v;
            if (v > w) {
                compress(v, w, ancestor, label, path);
                v = label[v];
            }
            sd = std::min(sd, v);
        }
        semi[w] = label[w] = sd;
    }
}

// Makes ancestor[v] the first ancestor of v numbered <= w and label[v] the
// smallest semidominator on the tree path from v up to (excluding) it.
// Invariant for every linked x: label[x] is that minimum over the path from
// x up to ancestor[x], exclusive.
void DominatorTree::compress(uint32_t v, uint32_t w, uint32_t* ancestor, uint32_t* label, uint32_t* path) {
    uint32_t len = 0;
    for (uint32_t u = v; ancestor[u] > w; u = ancestor[u]) path[len++] = u;
    // Top-down, so every node's ancestor is already compressed.
    while (len != 0) {
        const uint32_t x = path[--len];
        const uint32_t a = ancestor[x];
        label[x] = std::min(label[x], label[a]);
        ancestor[x] = ancestor[a];
    }
}

void DominatorTree::compute_idoms() {
    const auto n = static_cast<uint32_t>(block_.size());
    idom_.resize(n);  // every element written here
    uint32_t* const idom = idom_.data();
    const uint32_t* const parent = parent_.data();
    const uint32_t* const semi = semi_.data();
    const Block* const block = block_.data();
    Node* const nodes = nodes_.data();
    idom[0] = 0;
    for (uint32_t w = 1; w < n; ++w) {
        uint32_t d = parent[w];
        while (d > semi[w]) d = idom[d];
        idom[w] = d;
        nodes[block[w].index()].idom = block[d];
    }
}

void DominatorTree::number_tree() {
    const auto n = static_cast<uint32_t>(block_.size());
    const uint32_t* const idom = idom_.data();
    const Block* const block = block_.data();
    // Children rows by preorder number (a counting sort on idom).
    child_begin_.assign(n + 1, 0);
    uint32_t* const child_begin = child_begin_.data();
    for (uint32_t w = 1; w < n; ++w) ++child_begin[idom[w] + 1];
    for (uint32_t i = 1; i <= n; ++i) child_begin[i] += child_begin[i - 1];
    children_.resize(n - 1);
    Block* const children = children_.data();
    std::vector<uint32_t>& next_slot_v = ancestor_;  // free after the semi pass
    next_slot_v.assign(child_begin_.begin(), child_begin_.end() - 1);
    uint32_t* const next_slot = next_slot_v.data();
    for (uint32_t w = 1; w < n; ++w) children[next_slot[idom[w]]++] = block[w];

    // Preorder and postorder numbers of the tree walk that takes children
    // in row order (increasing w), without walking: idom[w] < w, so one
    // downward sweep gives the subtree sizes and one upward sweep places
    // each node right after its parent's earlier children's subtrees
    // (pre); a node's postorder number is pre + size - 1 - depth. Scratch
    // free here: label_ (sizes), semi_ (depths), parent_ (each node's next
    // free preorder number).
    label_.assign(n, 1);
    semi_.resize(n);
    parent_.resize(n);
    uint32_t* const size = label_.data();
    uint32_t* const depth = semi_.data();
    uint32_t* const next_pre = parent_.data();
    Node* const nodes = nodes_.data();
    for (uint32_t w = n - 1; w >= 1; --w) size[idom[w]] += size[w];
    depth[0] = 0;
    next_pre[0] = 1;
    Node& root = nodes[block[0].index()];
    root.dt_pre = 0;
    root.dt_post = n - 1;
    for (uint32_t w = 1; w < n; ++w) {
        const uint32_t d = idom[w];
        const uint32_t pre = next_pre[d];
        next_pre[d] = pre + size[w];
        next_pre[w] = pre + 1;
        depth[w] = depth[d] + 1;
        Node& nd = nodes[block[w].index()];
        nd.dt_pre = pre;
        nd.dt_post = pre + size[w] - 1 - depth[w];
    }
}

std::span<const Block> DominatorTree::children(Block b) const {
    const uint32_t d = node(b).dfs;
    if (d == 0 || d >= child_begin_.size()) return {};
    return {children_.data() + child_begin_[d - 1], child_begin_[d] - child_begin_[d - 1]};
}

bool DominatorTree::dominates(Inst a, Inst b, const Layout& layout) const {
    auto ba = layout.inst_block(a);
    auto bb = layout.inst_block(b);
    if (!ba || !bb) return false;
    if (*ba != *bb) return dominates(*ba, *bb);
    return is_reachable(*ba) && (a == b || layout.inst_before(a, b));
}

bool DominatorTree::dominates(const ValueDef& def, Inst use, const Layout& layout) const {
    switch (def.kind) {
    case ValueDef::Kind::Result:
        return def.inst() != use && dominates(def.inst(), use, layout);
    case ValueDef::Kind::Param: {
        auto use_block = layout.inst_block(use);
        return use_block && dominates(def.block(), *use_block);
    }
    case ValueDef::Kind::Alias:
        return false;
    }
    return false;
}

}  // namespace heron
