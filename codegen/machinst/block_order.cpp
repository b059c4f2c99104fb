// Block order with critical-edge splitting, and the loop-aware layout. See
// block_order.h.
#include "codegen/machinst/block_order.h"

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "codegen/ir/prefetch.h"

namespace heron {

void BlockOrder::gather_destinations(const Function& f) {
    // One pass in layout order: each block's terminator and the blocks it
    // branches to. The loads of one block do not wait for another's, so a
    // large function's cache misses overlap here, where the search below
    // would take them one at a time (block, terminator, destination, its
    // terminator, ...); compute() reads the copies, not the terminators.
    // A block not in the layout keeps an empty row.
    const DataFlowGraph& dfg = f.dfg;
    const ValueListPool& pool = dfg.value_lists;
    block_row_.assign(dfg.num_blocks(), Row{0, 0});
    dest_blocks_.clear();
    dest_calls_.clear();
    auto gather = [&](Block b) {
        const PackedOption<Inst> last = f.layout.last_inst(b);
        if (!last.has_value()) return;
        const auto dests = dfg.branch_destinations(last.value());
        block_row_[b.index()] = {static_cast<uint32_t>(dest_blocks_.size()), static_cast<uint32_t>(dests.size())};
        for (const BlockCall& bc : dests) {
            dest_blocks_.push_back(bc.block(pool));
            dest_calls_.push_back(bc);
        }
    };
    if (dfg.num_blocks() < kPrefetchFrom) {
        for (Block b : f.layout.blocks()) gather(b);
        return;
    }
    // A large function: each terminator is prefetched a few blocks ahead.
    for_each_block_prefetching_terminators(f, layout_blocks_, gather);
}

void BlockOrder::compute_reverse_postorder(const Function& f) {
    // Iterative DFS for postorder, successors in branch order (the order
    // of the dominator tree's search over the CFG, so both number the
    // blocks alike). mark_: 0 unseen, 1 on the stack, 2 done; an edge to a
    // block on the stack is a retreating edge. Each block's row of
    // destinations is kept by rpo position, in rpo_rows_, for compute().
    const uint32_t nblocks = f.dfg.num_blocks();
    gather_destinations(f);
    mark_.assign(nblocks, 0);
    rpo_.clear();
    rpo_rows_.clear();
    dfs_.clear();
    // At most one entry per block each: no regrowth on a first compile.
    rpo_.reserve(nblocks);
    rpo_rows_.reserve(nblocks);
    dfs_.reserve(nblocks);
    has_cycle_ = false;
    const Block* dest_blocks = dest_blocks_.data();
    auto enter = [&](Block b) {
        mark_[b.index()] = 1;
        dfs_.push_back({b, block_row_[b.index()].first});
    };
    enter(*f.layout.entry_block());
    while (!dfs_.empty()) {
        Frame& fr = dfs_.back();
        const Row& row = block_row_[fr.block.index()];
        if (fr.next < row.first + row.n) {
            Block s = dest_blocks[fr.next++];
            if (mark_[s.index()] == 0) enter(s);
            else if (mark_[s.index()] == 1) has_cycle_ = true;
            continue;
        }
        mark_[fr.block.index()] = 2;
        rpo_.push_back(fr.block);
        rpo_rows_.push_back(row);
        dfs_.pop_back();
    }
    std::reverse(rpo_.begin(), rpo_.end());
    std::reverse(rpo_rows_.begin(), rpo_rows_.end());
}

void BlockOrder::compute_single_block(const Function& f, Block entry) {
    rpo_.assign(1, entry);
    rpo_rows_.assign(1, Row{0, 0});
    has_cycle_ = false;
    vblock_of_.assign(f.dfg.num_blocks(), kNone);
    vblock_of_[entry.index()] = 0;
    vb_ir_.assign(1, entry.index());
    succ_begin_.assign(2, 0);
    succs_.clear();
    arg_begin_.assign(1, 0);
    args_.clear();
    known_ = nullptr;
    own_loops_.clear();
    reducible_ = true;
    layout_.assign(1, 0);
}

void BlockOrder::compute(const Function& f, const LoopAnalysis* known) {
    const DataFlowGraph& dfg = f.dfg;
    const ValueListPool& pool = dfg.value_lists;
    // A function whose entry block branches nowhere (it returns, traps or
    // tail-calls) is that one block: no search, no edges, no loops.
    const Block entry = *f.layout.entry_block();
    if (dfg.branch_destinations(*f.layout.last_inst(entry)).empty()) {
        compute_single_block(f, entry);
        return;
    }
    compute_reverse_postorder(f);
    const uint32_t nrpo = static_cast<uint32_t>(rpo_.size());

    // Predecessor edge counts (one per destination, duplicates included:
    // two edges into one block with different arguments need a block
    // each), to find critical edges.
    std::vector<uint32_t>& npreds = mark_;
    npreds.assign(dfg.num_blocks(), 0);
    uint32_t nedges = 0;
    const Block* dest_blocks = dest_blocks_.data();
    for (const Row& row : rpo_rows_) {
        for (uint32_t i = 0; i < row.n; ++i) ++npreds[dest_blocks[row.first + i].index()];
        nedges += row.n;
    }
    auto critical = [&](uint32_t ndests, Block s) { return ndests > 1 && npreds[s.index()] > 1; };

    // VCode blocks: each IR block followed by its edge blocks.
    vblock_of_.assign(dfg.num_blocks(), kNone);
    vb_ir_.clear();
    vb_ir_.reserve(nrpo + nedges);
    for (uint32_t k = 0; k < nrpo; ++k) {
        vblock_of_[rpo_[k].index()] = static_cast<uint32_t>(vb_ir_.size());
        vb_ir_.push_back(rpo_[k].index());
        const Row& row = rpo_rows_[k];
        for (uint32_t i = 0; i < row.n; ++i) {
            if (critical(row.n, dest_blocks[row.first + i])) vb_ir_.push_back(kNone);
        }
    }

    // Successor rows (now that every IR block has its VCode number), in
    // VCode block order: an IR block's row, then one row per edge block.
    // Each edge block adds one edge to the IR block's, so the sizes are
    // known: every row is written through a pointer.
    const uint32_t nvb = static_cast<uint32_t>(vb_ir_.size());
    const uint32_t ne = nedges + (nvb - nrpo);
    succ_begin_.resize(nvb + 1);
    succs_.resize(ne);
    arg_begin_.resize(ne + 1);
    args_.clear();
    uint32_t* succ_begin = succ_begin_.data();
    uint32_t* succs = succs_.data();
    uint32_t* arg_begin = arg_begin_.data();
    uint32_t e = 0, vb = 0;
    arg_begin[0] = 0;
    auto add_edge = [&](uint32_t to, std::span<const Value> args) {
        succs[e] = to;
        args_.insert(args_.end(), args.begin(), args.end());
        arg_begin[++e] = static_cast<uint32_t>(args_.size());
    };
    succ_begin[0] = 0;
    for (uint32_t k = 0; k < nrpo; ++k) {
        uint32_t next_edge = vblock_of_[rpo_[k].index()] + 1;
        const Row& row = rpo_rows_[k];
        for (uint32_t i = 0; i < row.n; ++i) {
            const Block s = dest_blocks[row.first + i];
            if (critical(row.n, s)) add_edge(next_edge++, {});
            else add_edge(vblock_of_[s.index()], dest_calls_[row.first + i].args(pool));
        }
        succ_begin[++vb] = e;
        for (uint32_t i = 0; i < row.n; ++i) {
            const Block s = dest_blocks[row.first + i];
            if (!critical(row.n, s)) continue;
            add_edge(vblock_of_[s.index()], dest_calls_[row.first + i].args(pool));
            succ_begin[++vb] = e;
        }
    }
    compute_layout(f, known);
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
    // The IR block's VCode block, then the edge blocks that follow it; a
    // loop-top edge block before its header instead.
    uint32_t vb = vblock_of(b);
    if (top_edge_[vb] != kNone) layout_.push_back(top_edge_[vb]);
    layout_.push_back(vb);
    for (++vb; vb < vb_ir_.size() && vb_ir_[vb] == kNone; ++vb) {
        if (!at_top_[vb]) layout_.push_back(vb);
    }
}

uint32_t BlockOrder::num_loops() const {
    if (!reducible_) return 0;
    return known_ ? known_->num_loops() : static_cast<uint32_t>(own_loops_.size());
}

uint32_t BlockOrder::loop_depth(Block b) const {
    if (!reducible_) return 0;
    if (known_) return known_->depth(b);
    if (own_loops_.empty()) return 0;
    const uint32_t l = loop_at_[pos_[b.index()]];
    return l == kNone ? 0 : own_loops_[l].depth;
}

bool BlockOrder::find_loops(const Function& f) {
    // Everything by rpo position: the DFS that made the order is the one a
    // DominatorTree makes, so an edge t -> h is retreating iff h <= t, as
    // for LoopAnalysis, and both find the same loops (the loop numbers
    // differ: LoopAnalysis numbers in preorder).
    const uint32_t n = static_cast<uint32_t>(rpo_.size());
    pos_.resize(f.dfg.num_blocks());
    for (uint32_t k = 0; k < n; ++k) pos_[rpo_[k].index()] = k;
    // Predecessor rows, sources in increasing position (one entry per
    // destination: a block branching twice to one target is listed twice,
    // next to itself).
    pred_begin_.assign(n + 1, 0);
    const Block* dest_blocks = dest_blocks_.data();
    auto row_blocks = [&](uint32_t k) {
        const Row& row = rpo_rows_[k];
        return std::span<const Block>(dest_blocks + row.first, row.n);
    };
    for (uint32_t k = 0; k < n; ++k) {
        for (Block s : row_blocks(k)) ++pred_begin_[pos_[s.index()] + 1];
    }
    for (uint32_t k = 0; k < n; ++k) pred_begin_[k + 1] += pred_begin_[k];
    preds_.resize(pred_begin_[n]);
    stack_.assign(pred_begin_.begin(), pred_begin_.end() - 1);  // fill positions
    for (uint32_t k = 0; k < n; ++k) {
        for (Block s : row_blocks(k)) preds_[stack_[pos_[s.index()]]++] = k;
    }
    auto preds = [&](uint32_t k) { return std::span<const uint32_t>(preds_.data() + pred_begin_[k], pred_begin_[k + 1] - pred_begin_[k]); };

    // Immediate dominators (Cooper, Harvey and Kennedy): every block but
    // the entry has a predecessor earlier in the order (its DFS parent),
    // so each pass finds one for every block; passes repeat until stable.
    idom_.assign(n, kNone);
    idom_[0] = 0;
    auto intersect = [&](uint32_t a, uint32_t b) {
        while (a != b) {
            while (a > b) a = idom_[a];
            while (b > a) b = idom_[b];
        }
        return a;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 1; k < n; ++k) {
            uint32_t d = kNone;
            for (uint32_t p : preds(k)) {
                if (idom_[p] == kNone) continue;
                d = d == kNone ? p : intersect(p, d);
            }
            if (idom_[k] != d) {
                idom_[k] = d;
                changed = true;
            }
        }
    }
    auto dominates = [&](uint32_t h, uint32_t k) {
        while (k > h) k = idom_[k];
        return k == h;
    };

    // Back edges: a retreating edge whose target does not dominate its
    // source makes the function irreducible. The headers' loops are made
    // innermost first (decreasing position); a header's latches are its
    // distinct predecessors at or after it.
    for (uint32_t k = 0; k < n; ++k) {
        for (Block s : row_blocks(k)) {
            const uint32_t h = pos_[s.index()];
            if (h <= k && !dominates(h, k)) return false;
        }
    }
    loop_at_.assign(n, kNone);
    uf_.resize(n);
    for (uint32_t k = 0; k < n; ++k) uf_[k] = k;
    auto find = [&](uint32_t x) {
        while (uf_[x] != x) x = uf_[x] = uf_[uf_[x]];
        return x;
    };
    for (uint32_t h = n; h-- > 0;) {
        uint32_t nlatches = 0, latch = kNone;
        stack_.clear();
        for (uint32_t p : preds(h)) {
            if (p < h || p == latch) continue;
            ++nlatches;
            latch = p;
            if (p != h) stack_.push_back(p);
        }
        if (nlatches == 0) continue;
        const uint32_t id = static_cast<uint32_t>(own_loops_.size());
        own_loops_.push_back({h, kNone, 0, nlatches == 1 ? latch : kNone});
        loop_at_[h] = id;
        // The body: what reaches a latch without passing the header. A
        // block already claimed belongs to an inner loop, whose outermost
        // header so far find() gives: that loop becomes a child of this
        // one and the walk goes on from its header's predecessors.
        while (!stack_.empty()) {
            const uint32_t x = find(stack_.back());
            stack_.pop_back();
            if (x == h) continue;
            if (loop_at_[x] != kNone) own_loops_[loop_at_[x]].parent = id;
            else loop_at_[x] = id;
            uf_[x] = h;
            for (uint32_t p : preds(x)) stack_.push_back(p);
        }
    }
    // Depths: a parent is numbered above its children.
    for (uint32_t l = static_cast<uint32_t>(own_loops_.size()); l-- > 0;) {
        OwnLoop& lp = own_loops_[l];
        lp.depth = lp.parent == kNone ? 1 : own_loops_[lp.parent].depth + 1;
    }
    return true;
}

struct BlockOrder::KnownView {
    const LoopAnalysis& la;
    uint32_t num_loops() const { return la.num_loops(); }
    uint32_t innermost(Block b) const {
        auto l = la.innermost_loop(b);
        return l ? l->index() : kNone;
    }
    bool is_header(Block b) const { return la.is_header(b); }
    uint32_t parent(uint32_t l) const {
        auto p = la.parent(Loop(l));
        return p ? p->index() : kNone;
    }
    Block header(uint32_t l) const { return la.header(Loop(l)); }
    bool contains(uint32_t l, Block b) const { return la.contains(Loop(l), b); }
    /// The loop's latch when it has one, else none.
    std::optional<Block> one_latch(uint32_t l) const {
        auto latches = la.latches(Loop(l));
        return latches.size() == 1 ? std::optional<Block>(latches[0]) : std::nullopt;
    }
};

struct BlockOrder::OwnView {
    const BlockOrder& o;
    uint32_t num_loops() const { return static_cast<uint32_t>(o.own_loops_.size()); }
    uint32_t innermost(Block b) const { return o.loop_at_[o.pos_[b.index()]]; }
    bool is_header(Block b) const {
        const uint32_t l = innermost(b);
        return l != kNone && o.own_loops_[l].header == o.pos_[b.index()];
    }
    uint32_t parent(uint32_t l) const { return o.own_loops_[l].parent; }
    Block header(uint32_t l) const { return o.rpo_[o.own_loops_[l].header]; }
    bool contains(uint32_t l, Block b) const {
        // A parent's number is above its children's.
        uint32_t x = innermost(b);
        while (x != kNone && x < l) x = parent(x);
        return x == l;
    }
    std::optional<Block> one_latch(uint32_t l) const {
        const uint32_t latch = o.own_loops_[l].latch;
        return latch == kNone ? std::nullopt : std::optional<Block>(o.rpo_[latch]);
    }
};

void BlockOrder::compute_layout(const Function& f, const LoopAnalysis* known) {
    layout_.clear();
    reducible_ = true;
    known_ = known;
    own_loops_.clear();
    if (!known && has_cycle_) reducible_ = find_loops(f);
    if (num_loops() == 0) {
        layout_.resize(num_vblocks());
        for (uint32_t vb = 0; vb < num_vblocks(); ++vb) layout_[vb] = vb;
        return;
    }
    if (known) layout_loops(f, KnownView{*known});
    else layout_loops(f, OwnView{*this});
}

template <class Loops>
void BlockOrder::layout_loops(const Function& f, const Loops& loops) {
    // Regions: loop l is region l, the root region num_loops.
    const uint32_t nl = loops.num_loops(), root = nl;
    auto region_of = [&](Block b) {
        const uint32_t l = loops.innermost(b);
        return l == kNone ? root : l;
    };
    auto parent_region = [&](uint32_t l) {
        const uint32_t p = loops.parent(l);
        return p == kNone ? root : p;
    };
    item_begin_.assign(nl + 2, 0);
    for (Block b : rpo_) {
        ++item_begin_[region_of(b) + 1];
        if (loops.is_header(b)) ++item_begin_[parent_region(loops.innermost(b)) + 1];
    }
    for (uint32_t r = 0; r <= nl; ++r) item_begin_[r + 1] += item_begin_[r];
    items_.resize(item_begin_[nl + 1]);
    std::vector<uint32_t>& fill = fill_;
    fill.assign(item_begin_.begin(), item_begin_.end() - 1);
    for (Block b : rpo_) {
        if (loops.is_header(b)) {
            const uint32_t l = loops.innermost(b);
            items_[fill[parent_region(l)]++] = kLoopItem | l;
        }
        items_[fill[region_of(b)]++] = b.index();
    }

    // Rotation: a loop whose header leaves it, and that has other items,
    // runs its header last. Never the entry block's loop: the entry's code
    // comes first.
    const Block entry = *f.layout.entry_block();
    auto rotated = [&](uint32_t r) {
        if (r == root || item_begin_[r + 1] - item_begin_[r] < 2) return false;
        const Block h = loops.header(r);
        if (h == entry) return false;
        for (const BlockCall& bc : f.dfg.branch_destinations(*f.layout.last_inst(h))) {
            if (!loops.contains(r, bc.block(f.dfg.value_lists))) return true;
        }
        return false;
    };
    // A loop that is not rotated (a do-while: its latch ends in the exit
    // test) whose one latch branches back through an edge block (the edge's
    // moves): that block goes right before the header, so the test branches
    // to it and it falls into the header, one taken branch per iteration
    // instead of a branch out plus a jump back.
    top_edge_.assign(num_vblocks(), kNone);
    at_top_.assign(num_vblocks(), 0);
    for (uint32_t l = 0; l < nl; ++l) {
        const Block h = loops.header(l);
        const std::optional<Block> latch = loops.one_latch(l);
        if (h == entry || !latch || *latch == h || rotated(l)) continue;
        const uint32_t hv = vblock_of(h);
        for (uint32_t t : targets_of(*latch)) {
            if (vb_ir_[t] == kNone && succs(t)[0] == hv) {
                top_edge_[hv] = t;
                at_top_[t] = 1;
                break;
            }
        }
    }
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
