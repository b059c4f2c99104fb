// The structurizer: turns the CFG of a reducible function into a region
// tree of structured statements — sequences, if/else, switches, loops,
// labeled blocks, break/continue with labels, returns — for consumers that
// only understand structured control flow (seeds 000 and 004; the English
// summary is in ../shared/seeds/README.md, the format in docs/structure.md).
//
// How the tree is built (structurize.cpp has the details):
//   - Regions. Each natural loop is a region; so is the function outside all
//     loops. Inside region R a nested loop C is one super-node whose
//     successors are C's exit blocks. Back edges to R's header become
//     `continue R`; edges leaving R become `exitR = k; break R`, and after
//     the loop a dispatch (`switch exitR`) branches to exit target k. An exit
//     that leaves several loops is re-raised by each enclosing dispatch, one
//     level at a time. Each loop is "counted" with its range when
//     codegen/analysis/counted_loops.h recognizes it, else "conditional".
//     The header's own exit is the "normal" exit, code 0,
//     stored before the loop is entered. A loop with one exit target needs
//     no variable and no dispatch.
//   - With loops collapsed and back edges removed every region is a DAG,
//     structured as in N. Ramsey, "Beyond Relooper: Recursive Translation of
//     Unstructured Control Flow to Structured Control Flow" (ICFP 2022):
//     walk the dominator tree; a node with several incoming forward edges
//     (a merge node) is placed after its immediate dominator's code, which is
//     wrapped in a labeled block, and reached with `break` to that label;
//     any other node is emitted inline at its only predecessor's branch.
//   - remove_break_continue() then rewrites the tree for targets without
//     break and continue (seed 004): a continue moves the rest of the body
//     into an else where it can, and otherwise sets a flag that guards the
//     rest; a break sets a flag that the loop tests in its condition
//     (`while !brk1`) and that guards the rest of the body.
//
// Block parameters become variables: an edge is an `Assign` statement
// (target params := branch args) followed by the jump. Nothing recurses on
// the CFG's size (an explicit work list); only the statement nesting depth
// is bounded (kMaxNesting), and deeper input gets an error, not a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/counted_loops.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/function.h"

namespace heron {

enum class StmtKind : uint8_t {
    Seq,       // kids in order
    Code,      // `block`'s instructions, its terminator excepted
    Assign,    // the params of destination `dest` of branch `inst` := its arguments
    If,        // kids[0] if the condition holds, else kids[1]
    Switch,    // on `cond` or variable `var`: arm i (kids[i]) for values cases[i]; the last arm is the default
    Loop,      // `label`, header `block`; kids[0] the body; left only by break (or, when var is set, when var != 0)
    Labeled,   // `label`; kids[0] the body; `break label` continues after it
    Break,     // `label`
    Continue,  // `label`: the next iteration of loop `label`
    SetVar,    // variable `var` := imm
    Leaf,      // `inst`: return, trap or tail call
};

inline constexpr uint32_t kNoVar = ~0u;

struct Stmt {
    StmtKind kind = StmtKind::Seq;
    uint32_t label = 0;  // Loop, Labeled, Break, Continue (labels count from 1)
    Block block;         // Code; Loop: the header
    Inst inst;           // Assign: the branch; Leaf: the terminator
    uint32_t dest = 0;   // Assign: index into dfg.branch_destinations(inst)
    Value cond;          // If / Switch on an IR value (If: nonzero; unset when `flags` decide)
    uint32_t var = kNoVar;  // Switch selector; SetVar target; Loop: run while this flag is 0
    int64_t imm = 0;        // SetVar
    std::vector<uint32_t> kids;
    std::vector<std::vector<uint32_t>> cases;  // Switch
    std::vector<uint32_t> flags;               // If: true iff every one of these variables is 0
};

enum class VarKind : uint8_t {
    ExitCode,      // i32 `exitN`: which exit loop N took
    BreakFlag,     // i8 `brkN`: construct N is being left
    ContinueFlag,  // i8 `contN`: the rest of loop N's body is skipped
};

struct StructVar {
    VarKind kind;
    uint32_t label;
};

struct StructLabel {
    bool is_loop;
    Block block;       // loop: the header; labeled block: the merge node after it
    std::string kind;  // loop: "counted v3 in [v0, v1-1] step 1 slt" or "conditional"
    // After remove_break_continue(): a counted loop whose only break was
    // its header's exit test, so its condition is still that test (printed
    // as `for V in [A, B] ...`); a loop with other breaks is conditional.
    bool counted_for = false;
};

/// A structured form of one function. Statements refer to the function's
/// blocks, instructions and values; it stays meaningful only while the
/// function is unchanged.
struct RegionTree {
    std::vector<Stmt> stmts;
    uint32_t root = 0;                // a Seq
    std::vector<StructVar> vars;
    std::vector<StructLabel> labels;  // labels[n - 1] describes label n
    bool no_break = false;            // after remove_break_continue()

    void clear() {
        stmts.clear();
        vars.clear();
        labels.clear();
        root = 0;
        no_break = false;
    }
    std::string var_name(uint32_t var) const;
};

/// Why structuring failed: an irreducible edge (from/to set) or input the
/// structurizer cannot take (no entry block, nesting too deep).
struct StructureError {
    std::optional<Block> from, to;
    std::string message;
};

inline constexpr uint32_t kMaxNesting = 20000;

class Structurizer {
public:
    /// Builds the region tree of `func`, which must be verified. On error
    /// `out` is left empty.
    std::optional<StructureError> run(const Function& func, RegionTree& out);
    /// The same over analyses already computed for `func` (a pass manager's
    /// cache); `loops` must be valid (the function reducible).
    std::optional<StructureError> run(const Function& func, const ControlFlowGraph& cfg, const DominatorTree& domtree,
                                      const LoopAnalysis& loops, RegionTree& out);

private:
    struct Arm {
        uint32_t dest;                // first destination index of the arm
        std::vector<uint32_t> cases;  // br_table entry indices
        bool is_default = false;
    };
    struct Task {
        uint32_t node;
        uint32_t seq;
    };

    uint32_t node_of(Block b) const;
    uint32_t region_of(uint32_t node) const;
    uint32_t lift(Block d, uint32_t region) const;
    bool in_region(uint32_t region, Block b) const;
    Block header_block(uint32_t region) const;
    void collect_arms(const Function& func, Inst term, std::vector<Arm>& arms) const;
    void count_arms(const Function& func);
    void collect_exits();
    void do_tree(const Function& func, uint32_t node, uint32_t seq);
    void emit_terminator(const Function& func, Block b, uint32_t seq);
    void emit_goto(Block target, uint32_t region, uint32_t seq);
    void emit_dispatch(Loop c, uint32_t seq);
    uint32_t add(Stmt s);
    void append(uint32_t seq, uint32_t stmt) { tree_->stmts[seq].kids.push_back(stmt); }
    uint32_t new_label(bool is_loop, Block b);

    ControlFlowGraph own_cfg_;
    DominatorTree own_domtree_;
    LoopAnalysis own_loops_;
    const ControlFlowGraph* cfg_ = nullptr;
    const DominatorTree* domtree_ = nullptr;
    const LoopAnalysis* loops_ = nullptr;
    CountedLoops counted_;
    const Function* func_ = nullptr;
    RegionTree* tree_ = nullptr;
    uint32_t num_blocks_ = 0;
    // By node (a block index, or num_blocks_ + loop index for a loop seen as
    // one node of its parent region): incoming forward arms; merge children
    // rows (in reverse postorder); the label of a merge node's block.
    std::vector<uint32_t> arms_in_;
    std::vector<uint32_t> merge_begin_;
    std::vector<uint32_t> merge_kids_;
    std::vector<uint32_t> merge_label_;
    // By loop: label, exit-code variable, exit targets (normal exit first).
    std::vector<uint32_t> loop_label_;
    std::vector<uint32_t> loop_var_;
    std::vector<uint32_t> exit_begin_;
    std::vector<Block> exit_targets_;
    std::unordered_map<uint64_t, uint32_t> exit_code_;  // (loop << 32 | block) -> code
    std::vector<Task> tasks_;
    std::vector<Arm> arms_;
};

/// Rewrites `tree` without Break, Continue and Labeled statements (seed
/// 004). Loops then end only through their flag (`while !brkN`).
std::optional<StructureError> remove_break_continue(RegionTree& tree);

/// The pseudo-code of docs/structure.md, one statement per line.
std::string print_region_tree(const Function& func, const RegionTree& tree);

}  // namespace heron
