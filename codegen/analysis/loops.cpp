// LoopAnalysis: back edges from the dominator tree's reverse postorder,
// natural loops by backward walks from the latches (innermost headers
// first), the loop tree renumbered in preorder, then the per-loop rows
// (blocks, latches, entries, exits) by counting sorts.
//
// The body walk of header h (processed in decreasing reverse-postorder
// number, so every loop nested in h's loop is already known) starts at h's
// latches and follows predecessors. A block that no loop has claimed joins
// h's loop. A block already claimed lies in an inner loop: the walk jumps to
// the outermost loop found so far around it (a union-find root), makes h's
// loop that loop's parent, and continues from that loop's header. So each
// block is claimed once and each inner loop is crossed once per enclosing
// walk, through its header.
#include "codegen/analysis/loops.h"

#include <algorithm>

namespace heron {

namespace {

constexpr uint32_t kNone = ~0u;

void prefix_sum(std::vector<uint32_t>& begin) {
    uint32_t* const p = begin.data();
    const size_t n = begin.size();
    for (size_t i = 1; i < n; ++i) p[i] += p[i - 1];
}

}  // namespace

void LoopAnalysis::clear() {
    loops_.clear();
    innermost_.clear();
    top_level_.clear();
    child_begin_.clear();
    children_.clear();
    block_begin_.clear();
    blocks_.clear();
    latch_begin_.clear();
    latches_.clear();
    entry_begin_.clear();
    entries_.clear();
    exit_begin_.clear();
    exits_.clear();
    exit_block_begin_.clear();
    exit_blocks_.clear();
    header_order_.clear();
    temp_parent_.clear();
    uf_.clear();
    remap_.clear();
    work_.clear();
    stamp_.clear();
    tagged_.clear();
    valid_ = false;
}

std::optional<LoopError> LoopAnalysis::compute(const Function& func, const ControlFlowGraph& cfg,
                                               const DominatorTree& domtree) {
    HERON_ASSERT(cfg.is_valid() && domtree.is_valid() && "loops need a computed CFG and dominator tree");
    clear();
    innermost_.assign(func.dfg.num_blocks(), PackedOption<Loop>());
    std::optional<LoopError> error;
    find_headers(func, cfg, domtree, error);
    if (error) {
        clear();
        return error;
    }
    find_bodies(cfg, domtree);
    number_loops();
    collect_rows(func, cfg, domtree);
    valid_ = true;
    return std::nullopt;
}

bool LoopAnalysis::remove_blocks(std::span<const uint8_t> removed, const Function& func,
                                 const ControlFlowGraph& cfg, const DominatorTree& domtree) {
    HERON_ASSERT(valid_ && "remove_blocks: no loops to update");
    for (Loop l : loops()) {
        const Block h = header(l);
        if (h.index() < removed.size() && removed[h.index()]) return false;
    }
    const size_t n = std::min(removed.size(), innermost_.size());
    for (size_t b = 0; b < n; ++b) {
        if (removed[b]) innermost_[b] = PackedOption<Loop>();
    }
    refresh_rows(func, cfg, domtree);
    return true;
}

void LoopAnalysis::refresh_rows(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& domtree) {
    HERON_ASSERT(valid_ && "refresh_rows: no loops to update");
    latches_.clear();
    entries_.clear();
    exits_.clear();
    exit_blocks_.clear();
    tagged_.clear();
    for (LoopData& d : loops_) d.preheader = PackedOption<Block>();
    collect_rows(func, cfg, domtree);
}

void LoopAnalysis::find_headers(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt,
                                std::optional<LoopError>& error) {
    stamp_.assign(func.dfg.num_blocks(), 0);
    for (Block b : dt.reverse_postorder()) {
        for (Block s : cfg.successors(b)) {
            if (dt.rpo_number(s) > dt.rpo_number(b)) continue;  // not retreating
            if (!dt.dominates(s, b)) {
                error = LoopError{b, s, "irreducible control flow: edge " + b.to_string() + " -> " + s.to_string()};
                return;
            }
            stamp_[s.index()] = 1;
        }
    }
    for (Block b : dt.reverse_postorder()) {
        if (stamp_[b.index()]) header_order_.push_back(b);
    }
}

uint32_t LoopAnalysis::outermost(uint32_t loop) {
    uint32_t root = loop;
    while (uf_[root] != root) root = uf_[root];
    while (uf_[loop] != root) {
        uint32_t next = uf_[loop];
        uf_[loop] = root;
        loop = next;
    }
    return root;
}

void LoopAnalysis::find_bodies(const ControlFlowGraph& cfg, const DominatorTree& dt) {
    const auto k = static_cast<uint32_t>(header_order_.size());
    temp_parent_.assign(k, kNone);
    uf_.resize(k);
    for (uint32_t i = 0; i < k; ++i) uf_[i] = i;
    auto push_preds = [&](Block b) {
        for (const BlockPredecessor& p : cfg.predecessors(b)) {
            if (dt.is_reachable(p.block)) work_.push_back(p.block);
        }
    };
    for (uint32_t i = k; i-- > 0;) {
        const Block h = header_order_[i];
        innermost_[h.index()] = Loop(i);
        work_.clear();
        for (const BlockPredecessor& p : cfg.predecessors(h)) {
            if (dt.dominates(h, p.block)) work_.push_back(p.block);
        }
        while (!work_.empty()) {
            const Block x = work_.back();
            work_.pop_back();
            PackedOption<Loop>& in = innermost_[x.index()];
            if (!in) {
                in = Loop(i);
                push_preds(x);
                continue;
            }
            const uint32_t m = outermost((*in).index());
            if (m == i) continue;
            temp_parent_[m] = i;
            uf_[m] = i;
            push_preds(header_order_[m]);
        }
    }
}

void LoopAnalysis::number_loops() {
    const auto k = static_cast<uint32_t>(header_order_.size());
    // Children rows over temporary ids; a counting sort keeps them in
    // reverse postorder of their headers.
    std::vector<uint32_t>& begin = child_begin_;
    begin.assign(k + 2, 0);  // row k holds the roots
    for (uint32_t t = 0; t < k; ++t) ++begin[(temp_parent_[t] == kNone ? k : temp_parent_[t]) + 1];
    prefix_sum(begin);
    std::vector<uint32_t>& kids = kids_;
    kids.resize(k);
    {
        std::vector<uint32_t>& next = next_;
        next.assign(begin.begin(), begin.end() - 1);
        for (uint32_t t = 0; t < k; ++t) kids[next[temp_parent_[t] == kNone ? k : temp_parent_[t]]++] = t;
    }
    // Preorder over the tree, from the virtual root k.
    remap_.assign(k, kNone);
    std::vector<LoopData>& data = data_;
    data.assign(k, LoopData{});
    std::vector<std::pair<uint32_t, uint32_t>>& stack = stack_;  // (temp id or k, next child slot)
    stack.clear();
    stack.push_back({k, begin[k]});
    uint32_t next_id = 0;
    while (!stack.empty()) {
        auto& [t, slot] = stack.back();
        if (slot < begin[t + 1]) {
            const uint32_t c = kids[slot++];
            const uint32_t depth = t == k ? 1 : data[remap_[t]].depth + 1;
            remap_[c] = next_id;
            LoopData& d = data[next_id++];
            d.header = header_order_[c];
            d.depth = depth;
            if (t != k) d.parent = Loop(remap_[t]);
            stack.push_back({c, begin[c]});
            continue;
        }
        if (t != k) data[remap_[t]].subtree = next_id - remap_[t];
        stack.pop_back();
    }
    for (LoopData& d : data) loops_.push(d);
    for (PackedOption<Loop>& in : innermost_) {
        if (in) in = Loop(remap_[(*in).index()]);
    }
    // Final children rows: by parent, in preorder (= sibling order).
    child_begin_.assign(k + 1, 0);
    for (Loop l : loops()) {
        if (auto p = parent(l)) {
            ++child_begin_[p->index() + 1];
        } else {
            top_level_.push_back(l);
        }
    }
    prefix_sum(child_begin_);
    children_.resize(k - top_level_.size());
    std::vector<uint32_t>& next = next_;
    next.assign(child_begin_.begin(), child_begin_.end() - 1);
    for (Loop l : loops()) {
        if (auto p = parent(l)) children_[next[p->index()]++] = l;
    }
}

void LoopAnalysis::collect_rows(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& dt) {
    const uint32_t n = num_loops();
    const std::span<const Block> rpo = dt.reverse_postorder();
    // A row for every block (none past the old end: the answers of
    // innermost_loop do not change), so the walks below read innermost_
    // and the loops through pointers, without bound checks.
    const uint32_t nblocks = func.dfg.num_blocks();
    if (innermost_.size() < nblocks) innermost_.resize(nblocks);
    const PackedOption<Loop>* const inner_of = innermost_.data();
    const LoopData* const data = loops_.data();
    auto inside = [&](uint32_t l, Block b) {
        const PackedOption<Loop> in = inner_of[b.index()];
        return in && l <= in->index() && in->index() < l + data[l].subtree;
    };
    // One walk in reverse postorder counts the blocks by innermost loop and
    // tags the exit edges: an edge leaves every loop from the source's
    // innermost one outwards until a loop contains the target (most edges
    // stay inside it, so the terminator is looked up only for a block with
    // an exit edge). A second walk lays the blocks out, each row in reverse
    // postorder, so the header (which dominates the rest) comes first.
    block_begin_.assign(n + 1, 0);
    exit_begin_.assign(n + 1, 0);
    uint32_t* const block_count = block_begin_.data() + 1;
    uint32_t* const exit_count = exit_begin_.data() + 1;
    for (Block b : rpo) {
        const PackedOption<Loop> inner = inner_of[b.index()];
        if (!inner) continue;
        ++block_count[inner->index()];
        PackedOption<Inst> term;
        for (Block s : cfg.successors(b)) {
            for (PackedOption<Loop> m = inner; m && !inside(m->index(), s); m = data[m->index()].parent) {
                if (!term) term = func.layout.last_inst(b);
                tagged_.push_back({m->index(), LoopEdge{b, *term, s}});
                ++exit_count[m->index()];
            }
        }
    }
    prefix_sum(block_begin_);
    prefix_sum(exit_begin_);
    blocks_.resize(block_begin_[n]);
    next_.assign(block_begin_.begin(), block_begin_.end() - 1);
    uint32_t* const next = next_.data();
    Block* const blocks = blocks_.data();
    for (Block b : rpo) {
        if (const PackedOption<Loop> l = inner_of[b.index()]) blocks[next[l->index()]++] = b;
    }
    exits_.resize(tagged_.size());
    std::copy(exit_begin_.begin(), exit_begin_.end() - 1, next_.begin());
    LoopEdge* const exits = exits_.data();
    for (const auto& t : tagged_) exits[next[t.first]++] = t.second;

    // Latches and entries: the header's predecessors, split by membership.
    latch_begin_.assign(1, 0);
    entry_begin_.assign(1, 0);
    for (Loop l : loops()) {
        const Block h = data[l.index()].header;
        for (const BlockPredecessor& p : cfg.predecessors(h)) {
            if (!dt.is_reachable(p.block)) continue;
            if (inside(l.index(), p.block)) {
                latches_.push_back(p.block);
            } else {
                entries_.push_back({p.block, p.inst, h});
            }
        }
        latch_begin_.push_back(static_cast<uint32_t>(latches_.size()));
        entry_begin_.push_back(static_cast<uint32_t>(entries_.size()));
        auto in = entries(l);
        if (in.size() == 1 && cfg.num_successors(in[0].from) == 1) loops_[l].preheader = in[0].from;
    }

    // Distinct exit blocks; loops are visited in increasing order, so a
    // stamp of loop + 1 per block marks "already listed for this loop".
    stamp_.assign(nblocks, 0);
    uint32_t* const stamp = stamp_.data();
    exit_block_begin_.assign(1, 0);
    for (Loop l : loops()) {
        for (const LoopEdge& e : exit_edges(l)) {
            if (stamp[e.to.index()] == l.index() + 1) continue;
            stamp[e.to.index()] = l.index() + 1;
            exit_blocks_.push_back(e.to);
        }
        exit_block_begin_.push_back(static_cast<uint32_t>(exit_blocks_.size()));
    }
}

std::span<const Loop> LoopAnalysis::children(Loop l) const { return row(child_begin_, children_, l); }

std::span<const Block> LoopAnalysis::blocks(Loop l) const {
    const uint32_t first = block_begin_[l.index()];
    const uint32_t last = block_begin_[l.index() + subtree_size(l)];
    return {blocks_.data() + first, last - first};
}

std::span<const Block> LoopAnalysis::latches(Loop l) const { return row(latch_begin_, latches_, l); }
std::span<const LoopEdge> LoopAnalysis::entries(Loop l) const { return row(entry_begin_, entries_, l); }
std::span<const LoopEdge> LoopAnalysis::exit_edges(Loop l) const { return row(exit_begin_, exits_, l); }
std::span<const Block> LoopAnalysis::exit_blocks(Loop l) const { return row(exit_block_begin_, exit_blocks_, l); }

}  // namespace heron
