// The optimization pipeline of a compile: which passes each opt_level runs
// before lowering. Read top to bottom:
//
//   opt_level=none    nothing: the function is lowered as written
//   opt_level=speed   tail-accumulate  self-calls whose results are
//                                 returned, alone or combined by an
//                                 associative-commutative op, become a
//                                 loop with an accumulator (first, so the
//                                 loop passes see the loop;
//                                 tail_accumulate.h)
//                     gvn         value numbering over the dominator tree,
//                                 with constant folding and the rewrite
//                                 rules (fold.def, rules.def; gvn.h)
//                     dce         unused pure results and block parameters
//                     simplify-cfg  constant branches, unreachable blocks,
//                                 single-predecessor jump targets merged
//                                 (dce.h); before the loop passes, so that
//                                 they see the loops that remain
//                     loop-form   preheaders, single latches, dedicated exits
//                     widen-fill  loops storing one invariant byte to
//                                 base+i for i += 1 first store 16 bytes
//                                 per iteration (widen_fill.h)
//                     count-down  counted loops whose counter only counts run
//                                 a trip counter down to zero (count_down.h)
//                     loop-form   again: count-down's guards leave exits
//                                 shared and preheaders ending in brif
//                     licm        pure loop invariants into the preheaders
//                                 (count-down's trip counts included)
//                     forward-blocks  branches skip blocks that only jump
//                                 on: the merged latches and empty
//                                 preheaders loop-form made, which would
//                                 cost a jump and moves per iteration
//                                 (forward_blocks.h)
//                     split-entry the entry's values read past its brif
//                                 into a block with calls become that
//                                 block's parameters, so the other path
//                                 can return without a frame
//                                 (split_entry.h)
//
// The backend then lays loops out from the loop analysis (at every level)
// and branches on a decremented counter's own flags on x86-64 (`sub` +
// `jne`, codegen/isa/x64/lower.cpp) or with cbnz on AArch64. The compile
// driver (codegen/context.h) calls Optimizer::run on a copy of the
// caller's function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "codegen/ir/function.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

/// "none" / "speed", as in `set opt_level=...`; nullopt for anything else.
std::optional<OptLevel> parse_opt_level(std::string_view name);
std::string_view opt_level_name(OptLevel level);
/// The `--passes=` list of a level ("" for none).
constexpr std::string_view opt_pipeline(OptLevel level) {
    switch (level) {
    case OptLevel::None: return "";
    case OptLevel::Speed: return "mem2reg,tail-accumulate,gvn,load-elim,dead-stores,dce,simplify-cfg,loop-form,widen-fill,count-down,loop-form,licm,forward-blocks,split-entry";
    }
    return "";
}

/// Runs the pipeline of one level over functions, one at a time, keeping
/// the pass manager's analysis memory between them.
class Optimizer {
public:
    /// `verify_each`: run the verifier after every pass that changed
    /// something (tests and fuzzing; the default follows NDEBUG).
    explicit Optimizer(OptLevel level, bool verify_each = kVerifyEachPassByDefault);

    OptLevel level() const { return level_; }
    /// Optimizes `func` in place. A function with irreducible control flow
    /// has no natural loops to work on: it is left as it is, not an error.
    /// Returns an error naming the pass when a pass fails (a bug: the
    /// function may then be partly edited).
    std::optional<std::string> run(Function& func) { return run(func, scan_pass_needs(func)); }
    /// The same with the function's scan_pass_needs, found by the caller
    /// (the JIT scans the caller's function once, for may_change, and
    /// runs the pipeline on its copy).
    /// `cfg_and_domtree_current`: the caller built the CFG and dominator
    /// tree of the function `func` was copied from into cfg_storage() and
    /// domtree_storage() (the JIT, through VerifierAnalyses), so the
    /// pipeline's first pass need not compute them.
    std::optional<std::string> run(Function& func, uint8_t present, bool cfg_and_domtree_current = false);
    ControlFlowGraph& cfg_storage() { return pm_.context().cfg_storage(); }
    DominatorTree& domtree_storage() { return pm_.context().domtree_storage(); }
    /// The pass context of the last run() (its analyses and counts).
    const PassContext& context() const { return pm_.context(); }
    /// False when run() would certainly leave `func` as it is (no pass
    /// finds what it works on: an acyclic function without forwarding
    /// blocks). The JIT then compiles the caller's function without copying.
    bool may_change(const Function& func) const { return pm_.may_change(func); }
    bool may_change(uint8_t present) const { return pm_.may_change(present); }
    /// How many passes the last run() skipped (their needs were missing).
    uint32_t skipped() const { return pm_.skipped(); }
    /// The loop analysis of the function the last run() optimized, when the
    /// pipeline left it current (null otherwise): valid until that function
    /// changes or the next run(). The compile driver hands it
    /// to TargetIsa::lower (KnownAnalyses) so the block order need not compute it again.
    const LoopAnalysis* loops() const { return pm_.context().current_loops(); }

private:
    OptLevel level_;
    PassManager pm_;
};

}  // namespace heron
