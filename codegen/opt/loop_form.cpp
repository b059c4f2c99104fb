// LoopForm in four steps over one loop analysis (plus one CFG):
//
//   0. invariant header parameters, inner loops first, until nothing
//      changes (repeated after step 2, through the new blocks);
//   1. preheaders: the entering branches of a header without one are
//      redirected to a new block placed just before the header;
//   2. latches: the back edges of a header with several latch blocks are
//      redirected to a new block placed after the last latch;
//   3. (the CFG brought up to date, the new blocks noted in the loop
//      analysis)
//      dedicated exits, block by block: a block E with
//      an exiting predecessor whose predecessors do not all share one
//      innermost loop gets one new block per innermost source loop;
//   4. (when any block was added) the new blocks of step 3 noted too, the
//      CFG brought up to date, the dominator tree recomputed and the loops'
//      rows refreshed (PassContext::keep_loop_nest): the loop tree is the
//      old one.
//
// The CFG is never read from the function again: every split patches the
// context's edge list (PassContext::note_split) and the rows are laid out
// again from it where the steps above need them.
//
// Steps 0-2 touch, for each loop, only the branches into its header, so one
// loop's edits never change another loop's entering or back edges: the
// first analysis stays good for all of them. Step 3 splits the edges into
// one block at a time; that changes predecessor lists of E and the new
// blocks only, which no later E looks at.
#include "codegen/opt/loop_form.h"

#include <algorithm>
#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

class LoopFormer {
public:
    LoopFormer(Function& func, PassContext& ctx, LoopFormStats& stats, LoopFormScratch& s)
        : func_(func), dfg_(func.dfg), ctx_(ctx), stats_(stats), dests_(s.dests), args_(s.args), fwd_(s.fwd),
          differs_(s.differs), s_(s) {}

    /// Removes invariant header parameters of every loop, inner loops
    /// first, until none is left (removing one can make another invariant).
    void remove_invariant_params(const ControlFlowGraph& cfg, const LoopAnalysis& loops);
    bool remove_invariant_params(const ControlFlowGraph& cfg, Block header);
    /// Redirects every destination of `branches` that targets `target` to a
    /// new block, which jumps to `target`. Placed after `after`, or before
    /// `target` when `after` is none. The context's CFG notes the split.
    Block split_edges(Block target, const std::vector<Inst>& branches, std::optional<Block> after);
    /// Appends each new block to `added` with its innermost loop.
    void dedicate_exits(const ControlFlowGraph& cfg, const LoopAnalysis& loops, Block exit,
                        std::vector<std::pair<Block, PackedOption<Loop>>>& added);

private:
    /// A br_table's table may be shared with another br_table: give this
    /// instruction its own copy before editing it.
    void unshare_jump_table(Inst inst);

    Function& func_;
    DataFlowGraph& dfg_;
    PassContext& ctx_;
    LoopFormStats& stats_;
    std::vector<BlockCall*>& dests_;
    std::vector<Value>& args_;
    std::vector<Value>& fwd_;
    std::vector<uint8_t>& differs_;
    LoopFormScratch& s_;
};

void LoopFormer::remove_invariant_params(const ControlFlowGraph& cfg, const LoopAnalysis& loops) {
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t l = loops.num_loops(); l-- > 0;) changed |= remove_invariant_params(cfg, loops.header(Loop(l)));
    }
}

bool LoopFormer::remove_invariant_params(const ControlFlowGraph& cfg, Block header) {
    bool removed = false;
    for (bool again = true; again;) {
        again = false;
        for (uint32_t k = dfg_.num_block_params(header); k-- > 0;) {
            const Value param = dfg_.block_params(header)[k];
            std::optional<Value> value;
            bool invariant = true;
            for (const BlockPredecessor& p : cfg.predecessors(header)) {
                for (const BlockCall& d : dfg_.branch_destinations(p.inst)) {
                    if (d.block(dfg_.value_lists) != header) continue;
                    const Value a = dfg_.resolve_aliases(d.arg(k, dfg_.value_lists));
                    if (a == param) continue;
                    if (value && *value != a) invariant = false;
                    value = a;
                }
            }
            if (!invariant || !value) continue;
            for (const BlockPredecessor& p : cfg.predecessors(header)) {
                for (BlockCall& d : dfg_.branch_destinations_mut(p.inst)) {
                    if (d.block(dfg_.value_lists) == header) d.remove_arg(k, dfg_.value_lists);
                }
            }
            dfg_.remove_block_param(header, k);
            dfg_.change_to_alias(param, *value);
            ++stats_.invariant_params;
            again = removed = true;
        }
    }
    return removed;
}

void LoopFormer::unshare_jump_table(Inst inst) {
    InstructionData& d = dfg_[inst];
    if (d.opcode != Opcode::BrTable) return;
    JumpTableData copy;
    for (const BlockCall& bc : dfg_.jump_tables[d.jump_table()].all) {
        auto a = bc.args(dfg_.value_lists);
        args_.assign(a.begin(), a.end());
        copy.all.push_back(dfg_.block_call(bc.block(dfg_.value_lists), args_));
    }
    d.entity = func_.create_jump_table(std::move(copy)).index();
}

Block LoopFormer::split_edges(Block target, const std::vector<Inst>& branches, std::optional<Block> after) {
    for (Inst i : branches) unshare_jump_table(i);
    dests_.clear();
    for (Inst i : branches) {
        for (BlockCall& d : dfg_.branch_destinations_mut(i)) {
            if (d.block(dfg_.value_lists) == target) dests_.push_back(&d);
        }
    }
    HERON_ASSERT(!dests_.empty() && "split_edges: no edge into the target");
    const Block fresh = dfg_.make_block();
    if (after) {
        func_.layout.insert_block_after(fresh, *after);
    } else {
        func_.layout.insert_block(fresh, target);
    }
    // Forwarded arguments: the common value, or a new parameter.
    const uint32_t n = dfg_.num_block_params(target);
    std::vector<uint8_t>& differs = differs_;
    differs.assign(n, 0);
    fwd_.clear();
    for (uint32_t k = 0; k < n; ++k) {
        const Value first = dfg_.resolve_aliases(dests_[0]->arg(k, dfg_.value_lists));
        for (const BlockCall* d : dests_) {
            if (dfg_.resolve_aliases(d->arg(k, dfg_.value_lists)) != first) differs[k] = 1;
        }
        fwd_.push_back(differs[k] ? dfg_.append_block_param(fresh, dfg_.value_type(dfg_.block_params(target)[k]))
                                  : first);
    }
    for (BlockCall* d : dests_) {
        args_.clear();
        for (uint32_t k = 0; k < n; ++k) {
            if (differs[k]) args_.push_back(d->arg(k, dfg_.value_lists));
        }
        d->clear(dfg_.value_lists);
        *d = dfg_.block_call(fresh, args_);
    }
    FuncCursor cur(func_);
    cur.at_bottom(fresh);
    cur.ins().jump(target, std::span<const Value>(fwd_));
    ctx_.note_split(fresh, target, branches);
    return fresh;
}

void LoopFormer::dedicate_exits(const ControlFlowGraph& cfg, const LoopAnalysis& loops, Block exit,
                                std::vector<std::pair<Block, PackedOption<Loop>>>& added) {
    auto preds = cfg.predecessors(exit);
    if (preds.empty()) return;
    bool exiting = false, same = true;
    const auto first = loops.innermost_loop(preds[0].block);
    for (const BlockPredecessor& p : preds) {
        const auto l = loops.innermost_loop(p.block);
        exiting |= l && !loops.contains(*l, exit);
        same &= l == first;
    }
    if (!exiting || same) return;
    // One group per innermost source loop, in order of first appearance;
    // every exiting branch is listed with its group before the first split
    // changes the predecessors.
    std::vector<Loop>& groups = s_.exit_loops;
    std::vector<Block>& last = s_.exit_last;
    std::vector<std::pair<uint32_t, Inst>>& sources = s_.exit_sources;
    groups.clear();
    last.clear();
    sources.clear();
    for (const BlockPredecessor& p : preds) {
        const auto l = loops.innermost_loop(p.block);
        if (!l || loops.contains(*l, exit)) continue;
        const auto g = static_cast<uint32_t>(std::find(groups.begin(), groups.end(), *l) - groups.begin());
        if (g == groups.size()) {
            groups.push_back(*l);
            last.push_back(p.block);
        }
        sources.push_back({g, p.inst});
        if (func_.layout.block_before(last[g], p.block)) last[g] = p.block;
    }
    std::vector<Inst>& branches = s_.exit_branches;
    for (uint32_t g = 0; g < groups.size(); ++g) {
        branches.clear();
        for (const auto& [group, inst] : sources) {
            if (group == g) branches.push_back(inst);
        }
        // The new block lies in every loop that holds both its sources and
        // `exit`: the deepest of the source loop and its ancestors that
        // contains `exit`.
        PackedOption<Loop> in = groups[g];
        while (in && !loops.contains(*in, exit)) in = loops.parent(*in);
        added.push_back({split_edges(exit, branches, last[g]), in});
        ++stats_.exits;
    }
}

}  // namespace

bool form_loops(Function& func, PassContext& ctx, LoopFormStats& stats, std::string& error) {
    std::optional<LoopError> loop_error;
    const LoopAnalysis* loops = ctx.loops(&loop_error);
    if (!loops) {
        error = loop_error->message;
        return false;
    }
    LoopFormScratch& scratch = ctx.scratch().loop_form;
    LoopFormer former(func, ctx, stats, scratch);
    former.remove_invariant_params(ctx.cfg(), *loops);

    std::vector<Inst>& branches = scratch.branches;
    // The new blocks with their innermost loops: a preheader lies in the
    // loop's parent (every entering edge comes from inside each enclosing
    // loop, or it would enter that loop at a block other than its header),
    // a merged latch in the loop itself. Old blocks keep their loops.
    std::vector<std::pair<Block, PackedOption<Loop>>>& added = scratch.added;
    added.clear();
    for (Loop l : loops->loops()) {
        const Block header = loops->header(l);
        auto pre = loops->preheader(l);
        if (!pre || func.dfg[*func.layout.last_inst(*pre)].opcode != Opcode::Jump) {
            branches.clear();
            for (const LoopEdge& e : loops->entries(l)) branches.push_back(e.inst);
            if (!branches.empty()) {
                added.push_back({former.split_edges(header, branches, std::nullopt), loops->parent(l)});
                ++stats.preheaders;
            }
        }
        auto latches = loops->latches(l);
        if (latches.size() > 1) {
            branches.clear();
            Block last = latches[0];
            for (Block b : latches) {
                branches.push_back(*func.layout.last_inst(b));
                if (func.layout.block_before(last, b)) last = b;
            }
            added.push_back({former.split_edges(header, branches, last), l});
            ++stats.latches;
        }
    }
    // Steps 0 and 3 read the new CFG, but of the loops only the headers
    // and which loop each block is in: the new CFG and the old loops with
    // the new blocks noted in them answer that, without a new dominator
    // tree and loop rows (which the edits below would make stale again
    // anyway). At the end the loop nest is kept (new blocks change no
    // loop's membership of the old ones): the context brings the CFG up
    // to date, recomputes the dominator tree and refreshes the loops' rows.
    const bool cfg_changed = !added.empty();
    if (cfg_changed) {
        LoopAnalysis& patched = ctx.recompute_cfg_keep_loops();
        for (const auto& [b, l] : added) patched.note_new_block(b, l);
        loops = &patched;
    }
    const ControlFlowGraph& cfg2 = ctx.cfg();
    // Again through the new preheaders and latches: a parameter whose
    // entering edges disagreed can now receive one preheader parameter.
    if (cfg_changed) former.remove_invariant_params(cfg2, *loops);
    const uint32_t exits_before = stats.exits;
    // Blocks made by splitting need no splitting themselves: take the list
    // of blocks first.
    std::vector<Block>& blocks = scratch.blocks;
    blocks.clear();
    for (Block b : func.layout.blocks()) blocks.push_back(b);
    const size_t split_before = added.size();
    for (Block b : blocks) former.dedicate_exits(cfg2, *loops, b, added);
    if (cfg_changed || stats.exits != exits_before) {
        LoopAnalysis& patched = ctx.loops_to_patch();
        for (size_t k = split_before; k < added.size(); ++k) patched.note_new_block(added[k].first, added[k].second);
        ctx.keep_loop_nest();
    }
    return true;
}

}  // namespace heron
