// Forwarding-block removal: see forward_blocks.h.
#include "codegen/opt/forward_blocks.h"

#include <utility>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"

#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

class Forwarder {
public:
    /// `dt`: the current dominator tree, if the context holds one.
    Forwarder(Function& func, ForwardScratch& s, const DominatorTree* dt)
        : func_(func), dfg_(func.dfg), dt_(dt), jump_of_(s.jump_of), args_(s.args), mapped_(s.mapped),
          passed_(s.passed), referenced_(s.referenced), dead_(s.dead) {}

    uint32_t run() {
        find_forwarders();
        if (forwarders_ == 0) return 0;
        uint32_t redirected = 0;
        for (Block b : func_.layout.blocks()) {
            PackedOption<Inst> last = func_.layout.last_inst(b);
            if (!last) continue;
            const Opcode op = dfg_[*last].opcode;
            if (op != Opcode::Jump && op != Opcode::Brif) continue;
            for (BlockCall& dest : dfg_.branch_destinations_mut(*last)) redirected += redirect(dest);
        }
        remove_unreferenced();
        return redirected;
    }

    /// After run(): by block, where the edges into a removed forwarder now
    /// go (ControlFlowGraph::kNoTarget for the others); false when some
    /// forwarder an edge was redirected past is still in the layout (a
    /// br_table names it), which the analyses' update does not cover.
    bool removed_targets(std::vector<uint32_t>& target) const {
        target.assign(dfg_.num_blocks(), ControlFlowGraph::kNoTarget);
        for (Block b : dead_) {
            target[b.index()] = dfg_.branch_destinations(jump_of_[b.index()])[0].block(dfg_.value_lists).index();
        }
        for (Block b : func_.layout.blocks()) {
            if (b.index() < passed_.size() && passed_[b.index()]) return false;
        }
        return true;
    }

private:
    Function& func_;
    DataFlowGraph& dfg_;
    const DominatorTree* dt_;
    std::vector<Inst>& jump_of_;  // per block: its lone jump, or invalid
    uint32_t forwarders_ = 0;
    std::vector<Value>& args_;
    std::vector<Value>& mapped_;
    std::vector<uint8_t>& passed_;      // per block: a forwarder some edge was redirected past
    std::vector<uint8_t>& referenced_;  // per block: a branch names it
    std::vector<Block>& dead_;          // the forwarders removed

    void find_forwarders() {
        jump_of_.assign(dfg_.num_blocks(), Inst());
        passed_.assign(dfg_.num_blocks(), 0);
        const PackedOption<Block> entry = func_.layout.entry_block();
        bool with_params = false;
        // Whether a forwarder with parameters dominates another block, or
        // some block is unreachable (where uses are not checked for
        // dominance).
        bool may_use_elsewhere = !dt_;
        uint32_t in_layout = 0;
        for (Block b : func_.layout.blocks()) {
            ++in_layout;
            if (b == entry) continue;
            PackedOption<Inst> first = func_.layout.first_inst(b);
            if (!first || first != func_.layout.last_inst(b) || dfg_[*first].opcode != Opcode::Jump) continue;
            if (dfg_.branch_destinations(*first)[0].block(dfg_.value_lists) == b) continue;  // `b: jump b`
            jump_of_[b.index()] = *first;
            if (dfg_.num_block_params(b) == 0) continue;
            with_params = true;
            may_use_elsewhere = may_use_elsewhere || !dt_->is_reachable(b) || !dt_->children(b).empty();
        }
        if (dt_ && dt_->reverse_postorder().size() != in_layout) may_use_elsewhere = true;
        // A forwarder's parameters may be used further down the blocks it
        // dominates (a header that jumps into its body): such a block stays.
        // (A walk over every operand, needless when no forwarder has any,
        // or none dominates another block and every block is reachable:
        // then only its own jump can use them.)
        if (with_params && may_use_elsewhere) find_params_used_elsewhere();
        for (Block b : func_.layout.blocks()) forwarders_ += forwarding_jump(b).is_valid();
    }

    void find_params_used_elsewhere() {
        for (Block b : func_.layout.blocks()) {
            for (Inst i : func_.layout.block_insts(b)) {
                std::as_const(dfg_).for_each_inst_value(i, [&](Value v) {
                    const ValueDef def = dfg_.value_def(resolve(v));
                    if (!def.is_param() || def.block() == b) return;
                    if (def.block().index() < jump_of_.size()) jump_of_[def.block().index()] = Inst();
                });
            }
        }
    }

    // Most values are no alias: one inline test before the call (the
    // parameter check walks every operand of the function).
    Value resolve(Value v) const { return dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v; }

    Inst forwarding_jump(Block b) const { return b.index() < jump_of_.size() ? jump_of_[b.index()] : Inst(); }

    /// Follows forwarders from `dest`'s block; returns 1 if `dest` changed.
    uint32_t redirect(BlockCall& dest) {
        Block to = dest.block(dfg_.value_lists);
        Inst jump = forwarding_jump(to);
        if (!jump.is_valid()) return 0;
        args_.assign(dest.args(dfg_.value_lists).begin(), dest.args(dfg_.value_lists).end());
        // At most one step per forwarder: a longer walk is a cycle of them.
        for (uint32_t steps = 0; jump.is_valid() && steps < forwarders_; ++steps) {
            const BlockCall& next = dfg_.branch_destinations(jump)[0];
            mapped_.clear();
            for (Value v : next.args(dfg_.value_lists)) {
                v = resolve(v);
                const ValueDef def = dfg_.value_def(v);
                mapped_.push_back(def.is_param() && def.block() == to ? args_[def.num] : v);
            }
            args_.swap(mapped_);
            to = next.block(dfg_.value_lists);
            jump = forwarding_jump(to);
        }
        if (jump.is_valid()) return 0;  // a cycle of forwarders: leave it
        for (Block b = dest.block(dfg_.value_lists); b != to;) {
            passed_[b.index()] = 1;
            b = dfg_.branch_destinations(forwarding_jump(b))[0].block(dfg_.value_lists);
        }
        dest.clear(dfg_.value_lists);
        dest = dfg_.block_call(to, args_);
        return 1;
    }

    /// Drops forwarders nothing branches to any more.
    void remove_unreferenced() {
        std::vector<uint8_t>& referenced = referenced_;
        referenced.assign(dfg_.num_blocks(), 0);
        for (Block b : func_.layout.blocks()) {
            if (PackedOption<Inst> last = func_.layout.last_inst(b)) {
                for (const BlockCall& d : dfg_.branch_destinations(*last)) {
                    referenced[d.block(dfg_.value_lists).index()] = 1;
                }
            }
        }
        std::vector<Block>& dead = dead_;
        dead.clear();
        for (Block b : func_.layout.blocks()) {
            if (forwarding_jump(b).is_valid() && !referenced[b.index()]) dead.push_back(b);
        }
        for (Block b : dead) {
            func_.layout.remove_inst(forwarding_jump(b));
            func_.layout.remove_block(b);
        }
    }
};

}  // namespace

uint32_t remove_forwarding_blocks(Function& func, PassContext& ctx) {
    ForwardScratch& scratch = ctx.scratch().forward_blocks;
    Forwarder f(func, scratch, ctx.valid().contains(Property::DomTreeValid) ? &ctx.domtree() : nullptr);
    const uint32_t redirected = f.run();
    if (redirected == 0) return 0;
    // The analyses the context holds follow the edit when they can.
    std::vector<uint32_t>& target = scratch.target;
    if (f.removed_targets(target)) {
        ctx.bypass_removed_blocks(target);
    } else {
        ctx.invalidate({Property::CfgValid});
    }
    return redirected;
}

}  // namespace heron
