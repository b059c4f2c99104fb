// The pass manager (seeds 001 and 004): passes declare the properties they
// require, produce and invalidate; analyses live in a PassContext that
// computes each one on first use and keeps it until a pass invalidates it.
//
//   properties        meaning                                    kept by
//   Verified          the verifier accepts the function          verify_each
//                     (which also recomputes the analyses a
//                     changed pass kept and compares)
//   CfgValid          the cached ControlFlowGraph is current     PassContext
//   DomTreeValid      the cached DominatorTree is current        PassContext
//   LoopsValid        the cached LoopAnalysis is current         PassContext
//   LoopForm          every loop has a preheader, one latch and  loop-form
//                     dedicated exits
//   CountedLoopsKnown the cached CountedLoops is current         PassContext
//   Structured        ctx.region_tree() is current (the          structure
//                     structurizer, codegen/opt/structurize.h)
//
// Invalidation is closed downwards: a pass that invalidates CfgValid also
// invalidates everything computed from the CFG (dominators, loops, counted
// loops) and the shape properties LoopForm and Structured. A pass that
// reports "no change" invalidates nothing. The analysis properties
// (CfgValid, DomTreeValid, LoopsValid, CountedLoopsKnown) are
// satisfied on demand (a pass requiring LoopsValid gets the loops computed
// for it); a shape property must have been produced by an earlier pass, or
// the pipeline stops with an error naming both.
//
// Passes are plain records with a function pointer (QBE-style hooks, no
// virtual dispatch); `registered_passes()` lists the ones `--passes=` knows.
// Nothing here throws: errors come back as strings naming the pass.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/counted_loops.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/function.h"
#include "codegen/opt/pass_scratch.h"
#include "codegen/opt/structurize.h"

namespace heron {

enum class Property : uint8_t {
    Verified,
    CfgValid,
    DomTreeValid,
    LoopsValid,
    LoopForm,
    CountedLoopsKnown,
    Structured,
};
inline constexpr unsigned kNumProperties = 7;
std::string_view property_name(Property p);

class PropertySet {
public:
    constexpr PropertySet() = default;
    constexpr PropertySet(std::initializer_list<Property> ps) {
        for (Property p : ps) bits_ |= bit(p);
    }
    constexpr bool contains(Property p) const { return bits_ & bit(p); }
    constexpr bool contains_all(PropertySet s) const { return (bits_ & s.bits_) == s.bits_; }
    constexpr void insert(Property p) { bits_ |= bit(p); }
    constexpr void insert(PropertySet s) { bits_ |= s.bits_; }
    constexpr void erase(PropertySet s) { bits_ &= ~s.bits_; }
    constexpr bool empty() const { return bits_ == 0; }
    /// `s` plus every property computed from one in `s`.
    static PropertySet closure(PropertySet s);
    /// "CfgValid, LoopForm"; "none" when empty.
    std::string to_string() const;
    friend constexpr bool operator==(PropertySet a, PropertySet b) { return a.bits_ == b.bits_; }

private:
    static constexpr uint32_t bit(Property p) { return uint32_t{1} << static_cast<unsigned>(p); }
    uint32_t bits_ = 0;
};

/// The analysis cache of one function at a time. Reusable: bind() forgets
/// the analyses of the previous function but keeps their memory.
class PassContext {
public:
    /// `cfg_and_domtree_current`: the caller computed both into
    /// cfg_storage() and domtree_storage() for a function with the blocks,
    /// branches and ids of `func` (the JIT: the verifier built them on the
    /// function `func` was copied from); they are taken as current.
    void bind(Function& func, bool cfg_and_domtree_current = false);
    ControlFlowGraph& cfg_storage() { return cfg_; }
    DominatorTree& domtree_storage() { return domtree_; }
    Function& function() { return *func_; }

    const ControlFlowGraph& cfg();
    const DominatorTree& domtree();
    /// The loops, or null when the function is irreducible (`error` then
    /// says which edge).
    const LoopAnalysis* loops(std::optional<LoopError>* error = nullptr);
    /// Counted-loop recognition over loops(); null when irreducible.
    const CountedLoops* counted_loops(std::optional<LoopError>* error = nullptr);

    /// For loop-form, after each edge split: `fresh`, ending in a jump to
    /// `target`, took the destinations naming `target` of the branches
    /// `sources`. The cached CFG (which must be current before the split)
    /// patches its edge list (ControlFlowGraph::split_edges), so that
    /// recompute_cfg_keep_loops() and keep_loop_nest() lay out its rows
    /// again instead of reading the function. Its rows are stale until then.
    void note_split(Block fresh, Block target, std::span<const Inst> sources);
    /// For a pass that splits edges into new blocks and then needs the new
    /// CFG with the loop membership it knew (loop-form): brings the CFG up
    /// to date (from the noted splits, else recomputed) and returns the
    /// cached loops (which must be valid) for the pass to patch with
    /// LoopAnalysis::note_new_block. The context then holds only CfgValid:
    /// the dominator tree and the loops are no longer current until the
    /// pass calls keep_loop_nest(). Until then every edit of an edge must
    /// be a split noted with note_split().
    LoopAnalysis& recompute_cfg_keep_loops();
    /// The cached loops (which must have been computed, reducible) for a
    /// pass to note the blocks it adds (LoopAnalysis::note_new_block)
    /// before it calls keep_loop_nest().
    LoopAnalysis& loops_to_patch();
    /// For a pass that edited edges but not which blocks form which loop
    /// (loop-form, its new blocks noted in loops_to_patch(); count-down):
    /// recomputes the CFG (or, after note_split, lays out its rows again)
    /// and the dominator tree and refreshes the loops' rows
    /// (LoopAnalysis::refresh_rows) instead of finding the loops again. The context then holds CfgValid, DomTreeValid and LoopsValid;
    /// the counted loops are dropped.
    void keep_loop_nest();

    /// For forward-blocks, which removed blocks that only jumped on after
    /// redirecting every edge into each to where its jump led: `target[b]`
    /// is that block for a removed b, ControlFlowGraph::kNoTarget for the
    /// others. Updates the cached CFG, dominator tree and loops that are
    /// current instead of dropping them (the loops are dropped when a
    /// removed block was a loop header); the counted loops are dropped.
    void bypass_removed_blocks(std::span<const uint32_t> target);

    /// Memory the passes keep from one function to the next (their work
    /// lists and tables), so that once they have grown the next function
    /// allocates nothing there: one typed member per pass (pass_scratch.h).
    PassScratch& scratch() { return scratch_; }

    /// The loops if they are current and the function is reducible, else
    /// null, without computing anything: what the pipeline leaves for the
    /// backend's block order (Optimizer::loops).
    const LoopAnalysis* current_loops() const {
        return valid_.contains(Property::LoopsValid) && !loop_error_ ? &loops_ : nullptr;
    }

    /// The region tree the `structure` pass built (valid while Structured
    /// holds); kept here so later passes and tools can read it.
    RegionTree& region_tree() { return region_tree_; }

    /// Drops the cached analyses in `s` (closed downwards).
    void invalidate(PropertySet s);
    /// Recomputes every analysis the cache holds as current, from scratch,
    /// and compares: the name of the first one that differs ("LoopsValid")
    /// and how, or nullopt. The pass manager's check that a pass which
    /// changed the function but kept an analysis was right to keep it.
    std::optional<std::string> stale_analysis();
    /// The analysis properties whose cache is current.
    PropertySet valid() const { return valid_; }
    /// How often each analysis was computed since bind() (for tests and
    /// benchmarks: "recomputed only after invalidation").
    uint32_t computations(Property p) const { return computations_[static_cast<unsigned>(p)]; }

private:
    /// The CFG made current by keep_loop_nest and recompute_cfg_keep_loops.
    void update_cfg();

    Function* func_ = nullptr;
    ControlFlowGraph cfg_;
    DominatorTree domtree_;
    LoopAnalysis loops_;
    std::optional<LoopError> loop_error_;
    CountedLoops counted_;
    RegionTree region_tree_;
    std::vector<uint8_t> removed_;  // bypass_removed_blocks scratch
    PassScratch scratch_;
    PropertySet valid_;
    // How update_cfg brings the cached CFG up to date: recomputed from the
    // function; rows laid out again from the edge list note_split patched;
    // nothing (current since recompute_cfg_keep_loops, no split since).
    enum class CfgState : uint8_t { FromFunction, Patched, Current };
    CfgState cfg_state_ = CfgState::FromFunction;
    uint32_t computations_[kNumProperties] = {};
};

struct PassResult {
    bool changed = false;
    std::string error;  // non-empty: the pass failed (the function may be partly edited)
};

/// What a function must contain for a pass to change anything. The pass
/// manager skips a pass whose needs the function lacks, as if it had run
/// and reported no change: its `produced` properties then hold vacuously
/// (a function without a loop is in loop form). Skipping saves the
/// analyses the pass requires: an acyclic function at opt_level speed gets
/// no CFG, dominator tree or loop analysis, and the JIT does not even copy
/// it (PassManager::may_change).
namespace pass_needs {
inline constexpr uint8_t kAnything = 0;
/// A cycle: some branch goes to its own block or to one before it in the
/// layout (a conservative test: no such branch means no loop).
inline constexpr uint8_t kCycle = 1;
/// A forwarder: a block whose only instruction is a `jump`.
inline constexpr uint8_t kForwarder = 2;
/// The entry block ends in a `brif`.
inline constexpr uint8_t kEntryBrif = 4;
/// A declaration `fnN` naming the function itself (tail_accumulate.h):
/// found from the declarations alone.
inline constexpr uint8_t kSelfCall = 8;
/// A stack slot: found from the declarations alone.
inline constexpr uint8_t kStackSlot = 16;
inline constexpr uint8_t kAll = kCycle | kForwarder | kEntryBrif | kSelfCall | kStackSlot;
}  // namespace pass_needs

/// The pass_needs in `wanted` that a function has, found in one walk over
/// its blocks that stops once all of them are found (the needs not wanted
/// come back clear).
uint8_t scan_pass_needs(const Function& func, uint8_t wanted = pass_needs::kAll);

struct Pass {
    std::string_view name;
    std::string_view summary;
    PropertySet required;
    PropertySet produced;
    PropertySet invalidated;  // when the pass reports a change
    PassResult (*run)(Function& func, PassContext& ctx);
    uint8_t needs;  // pass_needs: all of them must be present for the pass to run
    /// Its only work is making `produced` hold (loop-form): while they
    /// all hold, a run would change nothing, and the pass manager skips
    /// it as a repeat.
    bool only_produces = false;
};

/// The passes `--passes=` can name, in a stable order.
std::span<const Pass> registered_passes();
const Pass* find_pass(std::string_view name);

#ifdef NDEBUG
inline constexpr bool kVerifyEachPassByDefault = false;
#else
inline constexpr bool kVerifyEachPassByDefault = true;
#endif

struct PassManagerOptions {
    /// Run the verifier after every pass that changed something (test
    /// builds: on; builds with NDEBUG: off), and check that the analyses
    /// such a pass kept are those a fresh computation gives
    /// (PassContext::stale_analysis): a pass that wrongly leaves CfgValid,
    /// LoopsValid... out of `invalidated` is an error naming it.
    bool verify_each = kVerifyEachPassByDefault;
    /// Pass names after which `dump` is called; "all" matches every pass.
    std::vector<std::string> dump_after;
    std::function<void(std::string_view pass, const Function& func)> dump;
};

class PassManager {
public:
    explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

    void add(const Pass& pass) { pipeline_.push_back(&pass); }
    /// Appends the passes of a comma-separated list; on an unknown name
    /// returns an error listing the known ones and adds nothing.
    std::optional<std::string> add_pipeline(std::string_view names);
    std::span<const Pass* const> pipeline() const { return pipeline_; }

    /// Runs the pipeline over `func`. Returns the first error, naming the
    /// pass, or nullopt. properties() then says what holds at the end.
    std::optional<std::string> run(Function& func) { return run(func, scan_pass_needs(func)); }
    /// The same, for a caller that has scanned `func` already (`present`
    /// must be scan_pass_needs(func), e.g. of the function it copied).
    /// `cfg_and_domtree_current`: as in PassContext::bind.
    std::optional<std::string> run(Function& func, uint8_t present, bool cfg_and_domtree_current = false);
    /// False when no pass of the pipeline can change `func` (each one's
    /// needs are missing): run() would then leave it as it is.
    bool may_change(const Function& func) const { return may_change(scan_pass_needs(func)); }
    /// The same from the function's scan_pass_needs.
    bool may_change(uint8_t present) const;
    PropertySet properties() const { return held_; }
    /// How many passes the last run() skipped for lack of their needs.
    uint32_t skipped() const { return skipped_; }
    /// How many passes the last run() skipped as repeats: a pass that
    /// reported no change and meets the same function again (no pass has
    /// changed it since) would report no change again, so it is not run
    /// (loop-form's second run at opt_level speed when widen-fill and
    /// count-down changed nothing). Its analyses are still current: a pass
    /// without change invalidates nothing. Passes that produce Structured
    /// (structure, remove-break) edit the region tree and always run.
    uint32_t repeats_skipped() const { return repeats_skipped_; }
    PassContext& context() { return ctx_; }
    const PassContext& context() const { return ctx_; }

private:
    /// Computes the analyses `pass` requires and checks its shape
    /// properties; for a skipped pass only the latter.
    std::optional<std::string> ensure(const Pass& pass, bool skipped);

    PassManagerOptions options_;
    std::vector<const Pass*> pipeline_;
    PassContext ctx_;
    PropertySet held_;
    uint32_t skipped_ = 0;
    uint32_t repeats_skipped_ = 0;
    // run() scratch: by pipeline position, the number of changes made
    // before that pass last reported no change (kNotIdle: it changed the
    // function, or has not run).
    std::vector<uint32_t> idle_at_;
};

}  // namespace heron
