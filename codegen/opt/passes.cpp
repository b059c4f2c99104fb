// The registered passes: what `--passes=` and `test optimize` can name, and
// what each requires, produces and invalidates (pass_manager.h).
#include "codegen/opt/count_down.h"
#include "codegen/opt/dead_stores.h"
#include "codegen/opt/dce.h"
#include "codegen/opt/forward_blocks.h"
#include "codegen/opt/gvn.h"
#include "codegen/opt/licm.h"
#include "codegen/opt/load_elim.h"
#include "codegen/opt/loop_form.h"
#include "codegen/opt/mem2reg.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/split_entry.h"
#include "codegen/opt/structurize.h"
#include "codegen/opt/tail_accumulate.h"
#include "codegen/opt/widen_fill.h"

namespace heron {

namespace {

PassResult run_loop_form(Function& func, PassContext& ctx) {
    LoopFormStats stats;
    PassResult r;
    if (!form_loops(func, ctx, stats, r.error)) return r;
    r.changed = stats.changed();
    return r;
}

// A pass that returns how many changes it made: changed when any.
template <uint32_t (*Count)(Function&, PassContext&)>
PassResult run_counting(Function& func, PassContext& ctx) {
    PassResult r;
    r.changed = Count(func, ctx) > 0;
    return r;
}

PassResult run_nothing(Function&, PassContext&) { return {}; }

// The structurizer builds the region tree into the context from the cached
// analyses; the IR is not changed.
PassResult run_structure(Function& func, PassContext& ctx) {
    PassResult r;
    const LoopAnalysis* loops = ctx.loops();
    if (!loops) return r;  // not reached: LoopsValid is required
    Structurizer s;
    if (auto err = s.run(func, ctx.cfg(), ctx.domtree(), *loops, ctx.region_tree())) r.error = err->message;
    return r;
}

PassResult run_remove_break(Function&, PassContext& ctx) {
    PassResult r;
    if (auto err = remove_break_continue(ctx.region_tree())) r.error = err->message;
    return r;
}

const Pass kPasses[] = {
    {"verify", "checks the IR (with --verify-each off, the only check)", {Property::Verified}, {}, {}, run_nothing, pass_needs::kAnything},
    {"loops", "computes the loop analysis; fails on irreducible control flow", {Property::LoopsValid}, {}, {},
     run_nothing, pass_needs::kAnything},
    {"counted-loops", "recognizes counted loops (heron loops prints them)", {Property::CountedLoopsKnown}, {}, {},
     run_nothing, pass_needs::kAnything},
    // Splits edges into new blocks; keeps the CFG, dominator tree and loops
    // current (PassContext::keep_loop_nest).
    {"loop-form", "preheaders, single latches, dedicated exits, no invariant header parameters",
     {Property::LoopsValid}, {Property::LoopForm}, {Property::CountedLoopsKnown, Property::Structured}, run_loop_form,
     pass_needs::kCycle, /*only_produces=*/true},
    // Moves instructions only: the CFG and the loops stay as they are. A
    // counted loop's bound must be defined outside the loop, which a hoist
    // can make true (PassContext::stale_analysis checks the claim).
    {"licm", "hoists pure loop-invariant instructions into the preheader",
     {Property::LoopsValid, Property::LoopForm}, {}, {Property::CountedLoopsKnown}, run_counting<hoist_loop_invariants>,
     pass_needs::kCycle},
    // Rewrites the terminators of preheaders, headers and latches; the
    // loops keep their blocks, so the CFG, dominator tree and loops are
    // updated (PassContext::keep_loop_nest), not dropped.
    {"count-down", "counted loops whose counter only counts run a trip counter down to zero (do-while)",
     {Property::LoopsValid, Property::LoopForm, Property::CountedLoopsKnown}, {},
     {Property::CountedLoopsKnown, Property::LoopForm, Property::Structured}, run_counting<count_down_loops>,
     pass_needs::kCycle},
    // Adds a wide loop (and its exit) in front of each byte-fill loop; the
    // new blocks keep loop form, so LoopForm is produced again.
    {"widen-fill", "loops storing one invariant byte to base+i, i += 1, first store 16 bytes per iteration",
     {Property::LoopsValid, Property::LoopForm, Property::CountedLoopsKnown}, {Property::LoopForm},
     {Property::CfgValid}, run_counting<widen_fill_loops>, pass_needs::kCycle},
    // Undoes single latches and empty preheaders: the last pass of a
    // pipeline whose loop passes are done. It updates the CFG, dominator
    // tree and loops it finds current (PassContext::bypass_removed_blocks),
    // or drops them itself, so the loops are left for the block order.
    {"forward-blocks", "branches skip blocks that only jump on (their parameters become the edge's arguments)", {},
     {}, {Property::LoopForm, Property::Structured, Property::CountedLoopsKnown},
     run_counting<remove_forwarding_blocks>,
     pass_needs::kForwarder},
    // Adds block parameters and renames reads: the CFG, dominator tree
    // and loops stay; a counted loop's bound may be renamed.
    {"split-entry", "the entry's values read past a call-free entry's branch become parameters of the block it enters (shrink-wrapping)",
     {}, {}, {Property::CountedLoopsKnown}, run_counting<split_entry_values>, pass_needs::kEntryBrif},
    // Adds an entry block (with a copy of the first test and of the base
    // case's return when it can) and turns self-calls into jumps back to
    // the old one: every analysis goes.
    {"tail-accumulate", "self-calls whose results are returned, alone or combined by iadd/imul/band/bor/bxor, become a loop (with an accumulator)",
     {}, {}, {Property::CfgValid}, run_counting<accumulate_tail_calls>, pass_needs::kSelfCall},
    // Adds block parameters and branch arguments, removes accesses and
    // slots: no edge changes, so the CFG, dominator tree and loops stay.
    {"mem2reg", "stack slots only loaded and stored at constant offsets become SSA values (block parameters)",
     {Property::CfgValid, Property::DomTreeValid}, {},
     {Property::CountedLoopsKnown, Property::LoopForm, Property::Structured}, run_counting<promote_stack_slots>,
     pass_needs::kStackSlot},
    // Rewrites instructions in place and adds constants; a brif it makes a
    // jump drops the CFG (the pass invalidates it itself), so the shapes
    // built on it go whenever it changes anything.
    {"gvn", "global value numbering over the dominator tree with constant folding and the rewrite rules (rules.def)",
     {Property::DomTreeValid}, {}, {Property::CountedLoopsKnown, Property::LoopForm, Property::Structured},
     run_counting<number_values>, pass_needs::kAnything},
    // Removes loads only: the CFG, dominator tree and loops stay; a
    // counted loop's bound may now be another value.
    {"load-elim", "loads of a value already known (an equal load, or a store to the same address) go",
     {Property::CfgValid, Property::DomTreeValid}, {}, {Property::CountedLoopsKnown},
     run_counting<eliminate_redundant_loads>, pass_needs::kAnything},
    // Removes stores only: every analysis stays.
    {"dead-stores", "stores to a slot whose address does not escape that no load can read go",
     {Property::DomTreeValid}, {}, {}, run_counting<eliminate_dead_stores>, pass_needs::kStackSlot},
    // Removes instructions and block parameters, never an edge: the CFG,
    // dominator tree and loops stay; a counted loop may lose its counter.
    {"dce", "removes pure instructions whose results are unused and unused block parameters", {Property::CfgValid}, {},
     {Property::CountedLoopsKnown}, run_counting<eliminate_dead_code>, pass_needs::kAnything},
    // Folds branches and removes or merges blocks: every analysis goes.
    {"simplify-cfg", "branches on constants become jumps, unreachable blocks go, a jump to a block with one predecessor absorbs it",
     {}, {}, {Property::CfgValid}, run_counting<simplify_cfg>, pass_needs::kAnything},
    {"structure", "builds the region tree (docs/structure.md); fails on irreducible control flow",
     {Property::Verified, Property::LoopsValid}, {Property::Structured}, {}, run_structure, pass_needs::kAnything},
    {"remove-break", "rewrites the region tree without break and continue (seed 004)", {Property::Structured},
     {Property::Structured}, {}, run_remove_break, pass_needs::kAnything},
};

}  // namespace

std::span<const Pass> registered_passes() { return kPasses; }

const Pass* find_pass(std::string_view name) {
    for (const Pass& p : kPasses) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

}  // namespace heron
