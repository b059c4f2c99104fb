// ControlFlowGraph: one pass over the terminators collects the distinct
// edges in layout order, then two counting sorts lay them out as successor
// rows and predecessor rows. Linear in blocks plus edges.
#include "codegen/analysis/cfg.h"

#include <algorithm>

namespace heron {

namespace {

// Turns per-row counts (stored at begin[row + 1]) into row starts.
void prefix_sum(std::vector<uint32_t>& begin) {
    uint32_t* const p = begin.data();
    const size_t n = begin.size();
    for (size_t i = 1; i < n; ++i) p[i] += p[i - 1];
}

}  // namespace

void ControlFlowGraph::clear() {
    succ_begin_.clear();
    succs_.clear();
    pred_begin_.clear();
    preds_.clear();
    edges_.clear();
    scratch_.clear();
    valid_ = false;
}

void ControlFlowGraph::compute(const Function& func) {
    const DataFlowGraph& dfg = func.dfg;
    const Layout& layout = func.layout;
    const uint32_t nb = dfg.num_blocks();

    // The edges, deduplicated per source block, in layout order.
    std::vector<Edge>& edges = edges_;
    std::vector<uint32_t>& last_source = scratch_;
    edges.clear();
    last_source.assign(nb, 0);
    for (Block b : layout.blocks()) {
        if (b.index() >= nb) continue;
        auto last = layout.last_inst(b);
        if (!last || !dfg.inst_is_valid(*last)) continue;
        for (const BlockCall& dest : dfg.branch_destinations(*last)) {
            if (!dest.is_valid()) continue;
            Block to = dest.block(dfg.value_lists);
            if (to.index() >= nb || !layout.is_block_inserted(to)) continue;
            if (last_source[to.index()] == b.index() + 1) continue;
            last_source[to.index()] = b.index() + 1;
            edges.push_back({b, *last, to});
        }
    }

    build_rows(nb);
}

void ControlFlowGraph::bypass_removed(std::span<const uint32_t> target) {
    HERON_ASSERT(valid_ && "bypass_removed: no graph to update");
    const auto nb = static_cast<uint32_t>(succ_begin_.size() - 1);
    // Edges keep their layout order; a source that named a removed block
    // and its target now names the target once.
    std::vector<uint32_t>& last_source = scratch_;
    last_source.assign(nb, 0);
    size_t kept = 0;
    for (const Edge& e : edges_) {
        if (e.from.index() < target.size() && target[e.from.index()] != kNoTarget) continue;
        Block to = e.to;
        if (to.index() < target.size() && target[to.index()] != kNoTarget) to = Block(target[to.index()]);
        if (last_source[to.index()] == e.from.index() + 1) continue;
        last_source[to.index()] = e.from.index() + 1;
        edges_[kept++] = {e.from, e.inst, to};
    }
    edges_.resize(kept);
    build_rows(nb);
}

void ControlFlowGraph::split_edges(Block fresh, Inst jump, Block target, std::span<const Inst> sources,
                                   const Layout& layout) {
    HERON_ASSERT(valid_ && "split_edges: no graph to update");
    // A source's edge into `target` now goes to `fresh`, in its place (the
    // branch's destination order is unchanged); `fresh`'s own edge goes
    // where its place in the layout puts it: before the edges of the first
    // block after it.
    size_t at = edges_.size();
    for (size_t i = 0; i < edges_.size(); ++i) {
        Edge& e = edges_[i];
        if (at == edges_.size() && layout.block_before(fresh, e.from)) at = i;
        if (e.to == target && std::find(sources.begin(), sources.end(), e.inst) != sources.end()) e.to = fresh;
    }
    edges_.insert(edges_.begin() + static_cast<std::ptrdiff_t>(at), Edge{fresh, jump, target});
}

void ControlFlowGraph::build_rows(uint32_t nb) {
    const Edge* const edges = edges_.data();
    const size_t ne = edges_.size();
    // Counting sorts keep the edge order inside every row.
    succ_begin_.assign(nb + 1, 0);
    pred_begin_.assign(nb + 1, 0);
    uint32_t* const succ_count = succ_begin_.data() + 1;
    uint32_t* const pred_count = pred_begin_.data() + 1;
    for (size_t k = 0; k < ne; ++k) {
        ++succ_count[edges[k].from.index()];
        ++pred_count[edges[k].to.index()];
    }
    prefix_sum(succ_begin_);
    prefix_sum(pred_begin_);
    succs_.resize(ne);
    preds_.resize(ne);
    Block* const succs = succs_.data();
    BlockPredecessor* const preds = preds_.data();
    std::vector<uint32_t>& next_slot = scratch_;
    next_slot.assign(succ_begin_.begin(), succ_begin_.end() - 1);
    uint32_t* const next = next_slot.data();
    for (size_t k = 0; k < ne; ++k) succs[next[edges[k].from.index()]++] = edges[k].to;
    std::copy(pred_begin_.begin(), pred_begin_.end() - 1, next_slot.begin());
    for (size_t k = 0; k < ne; ++k) preds[next[edges[k].to.index()]++] = {edges[k].from, edges[k].inst};
    valid_ = true;
}

}  // namespace heron
