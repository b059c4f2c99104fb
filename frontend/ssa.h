// SSABuilder: turns definitions and uses of Variables into SSA values and
// block parameters while a function is being built, following
// M. Braun, S. Buchwald, S. Hack, R. Leißa, C. Mallon, A. Zwinkau,
// "Simple and Efficient Construction of Static Single Assignment Form",
// CC 2013.
//
// Per (variable, block) the builder remembers the last definition; per block
// its predecessors (block + branch instruction), whether it is sealed (all
// predecessors known) and the parameters it had to create before it was
// sealed. A use with no local definition looks into the predecessors:
//
//   sealed, one predecessor   -> the predecessor's value, no parameter (a
//                                chain of such blocks is walked in a loop
//                                that stops at the first definition; the
//                                found value is cached in every block walked,
//                                so each lookup costs O(blocks newly walked))
//   sealed, several / a cycle -> a block parameter first (it breaks cycles),
//                                then every predecessor is looked up
//   sealed, none              -> a zero constant (undefined / unreachable)
//   not sealed                -> a block parameter, resolved at seal_block
//
// Before that machine, quick_lookup walks up chains of single-predecessor
// blocks, diamond merges and loop headers (shapes worked out per block, for
// every variable) in a plain loop: a block first heard of after the
// variable's last definition cannot define it, so only older blocks are
// probed, and the walk stops at the variable's last use (docs/frontend.md).
//
// The lookup never recurses: it is a state machine over an explicit call
// stack and result stack (`calls_`, `results_`), so a chain of a million
// blocks needs no native stack. A parameter whose incoming arguments are all
// one value (or itself) is removed and becomes an alias of that value; what
// the local check cannot see (a parameter made redundant by removing another)
// `remove_redundant_params` cleans up once every block is sealed.
//
// Definitions live in DefTable: dense arrays for the first variables in
// the first blocks, else a hash table keyed by (variable, block) with a
// per-variable cache of the last definition, so memory stays bounded for
// any number of variables and blocks, never variables x blocks. Every table is kept on
// clear(), so building the next function allocates nothing new.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "codegen/ir/function.h"
#include "frontend/variable.h"

namespace heron {

/// A variable read where no definition reaches: the builder placed a zero
/// constant of the variable's type at the top of `block` instead.
struct UndefinedRead {
    Variable var;
    Block block;       // where the zero constant lives
    Value zero;        // the constant
    bool unreachable;  // true: `block` cannot be reached from the entry (dead code);
                       // false: some path from the entry defines nothing (a real bug)
};

/// What the SSA builder did besides returning values. The list grows for
/// the whole function; use_var / seal_block say how many entries they added.
struct SideEffects {
    std::vector<UndefinedRead> undefined_reads;

    void clear() { undefined_reads.clear(); }
};

/// A dense side table like SecondaryMap, but growing its size
/// geometrically: the frontend touches a new block or value at almost every
/// call, and growing one element at a time costs more than the lookup.
/// Reading past the end gives the default; clear() keeps the memory.
template <typename K, typename V>
class DenseTable {
public:
    DenseTable() = default;
    explicit DenseTable(V dflt) : default_(dflt) {}

    const V& operator[](K k) const { return k.index() < size_ ? elems_.data()[k.index()] : default_; }
    V& operator[](K k) {
        if (k.index() >= size_) [[unlikely]] grow(k.index());
        return elems_.data()[k.index()];
    }
    void clear() {
        elems_.clear();
        size_ = 0;
    }

private:
    void grow(uint32_t index) {
        size_t n = elems_.size() * 2;
        if (n < 64) n = 64;
        if (n <= index) n = size_t{index} + 1;
        elems_.resize(n, default_);
        size_ = static_cast<uint32_t>(n);
    }
    std::vector<V> elems_;
    // elems_.size(), kept as a word: the vector's own size divides by the
    // element size (a multiplication and shifts) at every lookup.
    uint32_t size_ = 0;
    V default_{};
};

/// The definitions of every (variable, block) pair, in two parts.
///
/// The first kDenseVars variables, in the first kDenseBlocks blocks, have a
/// dense array each, indexed by block (grown as far as the highest block
/// given a definition; reading past it gives none): a lookup is a bounds
/// check and a load, and walking back through blocks for one variable reads
/// consecutive words. Which part holds a pair depends only on the pair, so
/// nothing moves between them. Memory is at most kDenseVars x kDenseBlocks
/// words (16 MiB), and only as far as definitions reach. clear() keeps
/// the arrays and forgets how far they are in use; a definition past that
/// point zero-fills the words up to it (a memset of exactly what the
/// function uses, no more).
///
/// Everything else: open addressing with linear probing over 64-byte
/// slots, each holding one variable's definitions for kPerSlot consecutive
/// blocks: lookups walk back through nearby blocks, so most of them stay in
/// one cache line, and memory grows with the block ranges a variable is
/// used in, never variables x blocks. Slots carry the generation they were
/// claimed in, so clear() is O(1) for them, and for the dense arrays
/// (see above). Every part keeps its memory.
class DefTable {
public:
    static constexpr uint32_t kPerSlot = 13;
    static constexpr uint32_t kDenseVars = 64;
    static constexpr uint32_t kDenseBlocks = 1u << 16;

    DefTable();
    void clear();
    PackedOption<Value> get(Variable var, Block block) const {
        if (is_dense(var, block)) [[likely]] {
            const uint32_t v =
                block.index() < dense_len_[var.index()] ? dense_[var.index()][block.index()] ^ kFlip : Value::kReserved;
            return v == Value::kReserved ? PackedOption<Value>() : PackedOption<Value>(Value(v));
        }
        return hashed_get(var, block);
    }
    void set(Variable var, Block block, Value value) {
        if (is_dense(var, block)) [[likely]] {
            if (block.index() >= dense_len_[var.index()]) [[unlikely]] extend_dense(var.index(), block.index());
            dense_[var.index()][block.index()] = value.index() ^ kFlip;
            return;
        }
        hashed_set(var, block, value);
    }
    /// Slots in use in the hashed part.
    uint32_t size() const { return size_; }
    /// The pair lives in the dense part.
    static bool is_dense(Variable var, Block block) {
        return var.index() < kDenseVars && block.index() < kDenseBlocks;
    }

private:
    // Dense words hold the value's index with every bit flipped, so that a
    // zero word (what growing fills in) is "no definition".
    static constexpr uint32_t kFlip = Value::kReserved;
    void extend_dense(uint32_t var, uint32_t index);
    PackedOption<Value> hashed_get(Variable var, Block block) const;
    void hashed_set(Variable var, Block block, Value value);

    struct alignas(64) Slot {
        uint32_t var = 0, hi = 0, gen = 0;
        uint32_t values[kPerSlot] = {};
    };
    uint32_t slot_of(uint32_t var, uint32_t hi) const;
    void grow();

    // Only the first dense_len_ words of each array are in use (the rest
    // is memory kept from earlier functions, not cleared).
    std::unique_ptr<uint32_t[]> dense_[kDenseVars];
    uint32_t dense_len_[kDenseVars] = {};
    uint32_t dense_cap_[kDenseVars] = {};
    std::vector<Slot> slots_;
    uint32_t gen_ = 1;
    uint32_t size_ = 0;
    uint32_t shift_ = 0;  // 64 - log2(capacity)
};

class SSABuilder {
public:
    SSABuilder();

    /// Forgets the function but keeps every table's memory.
    void clear();

    /// Records that `branch` (already in the layout, in `pred`) jumps to
    /// `dest`. Once per (branch, destination) even if the branch names the
    /// block several times. `dest` must not be sealed.
    void declare_block_predecessor(Block dest, Block pred, Inst branch);

    /// `value` is now the value of `var` at the end of `block` (so far).
    void def_var(Variable var, Value value, Block block);

    struct UseVarResult {
        Value value;
        uint32_t new_undefined_reads;  // entries appended to side_effects()
    };
    /// The value of `var` at the current end of `block`; may add block
    /// parameters, branch arguments and zero constants to `func`.
    UseVarResult use_var(Function& func, Variable var, Type ty, Block block);

    /// Declares that every predecessor of `block` is known and resolves the
    /// parameters created while it was not. Returns the number of undefined
    /// reads this found; sealing a sealed block does nothing.
    uint32_t seal_block(Block block, Function& func);
    /// Seals every block of `func` not yet sealed.
    uint32_t seal_all_blocks(Function& func);

    bool is_sealed(Block block) const { return blocks_[block].sealed; }
    uint32_t num_predecessors(Block block) const { return blocks_[block].num_preds; }
    Block predecessor_block(Block block, uint32_t i) const { return pred_block(blocks_[block], i); }
    Inst predecessor_branch(Block block, uint32_t i) const {
        const BlockData& d = blocks_[block];
        return i < kInlinePreds ? d.pred_branches[i] : d.more_pred_branches.get(i - kInlinePreds, pred_inst_pool_);
    }
    /// True if `value` is a block parameter this builder created.
    bool is_ssa_param(Value value) const { return param_var_[value].is_valid(); }
    /// The parameters that were removed and became aliases, in order
    /// (finalize resolves every use of them and then detaches them).
    std::span<const Value> removed_params() const { return removed_params_; }
    /// Points every removed parameter straight at its final value, so that
    /// resolving any alias afterwards is one step.
    void flatten_aliases(Function& func);

    const SideEffects& side_effects() const { return side_effects_; }

    /// After every block is sealed: removes each SSA parameter whose
    /// incoming arguments are all one value or itself, repeating until none
    /// is left (removing one can make another redundant), then each strongly
    /// connected group of parameters that only pass each other and one
    /// outside value (irreducible control flow, or copies of an outer loop
    /// header's parameter in inner headers; Braun et al. 2013, section
    /// 3.2), then trivial ones again if groups went, until a pass finds
    /// nothing. Whatever the seal order, no parameter is left whose
    /// arguments are all one value or itself. Returns how many it removed.
    uint32_t remove_redundant_params(Function& func);

private:
    // How a sealed block's values come from above, independent of the
    // variable (quick_lookup's chain): Unknown until worked out (and while
    // it could still change: a predecessor not sealed yet), None, Single
    // (one predecessor, `source`), Merge (every predecessor is `source` or
    // an arm: a sealed block whose only predecessor is `source`), or Loop
    // (the first predecessor is `source`, every path into the others comes
    // from this block: a loop header whose body does not define the
    // variable has the value it has at the end of `source`).
    enum class Shape : uint8_t { Unknown, None, Single, Merge, Loop };
    // Predecessors (block and branch): the first kInlinePreds in the
    // block's own data (most blocks have one or two), the rest in pools.
    static constexpr uint32_t kInlinePreds = 2;
    struct BlockData {
        uint32_t num_preds = 0;
        Block preds[kInlinePreds];
        Inst pred_branches[kInlinePreds];
        EntityList<Block> more_preds;
        EntityList<Inst> more_pred_branches;
        EntityList<Value> undef;  // parameters made while unsealed, in order
        bool sealed = false;
        Shape shape = Shape::Unknown;
        PackedOption<Block> source;
        uint32_t seen = 0;       // clock_ when the builder first heard of the block
        uint32_t inner_seen = 0;  // Merge: the smallest `seen` of its arms; Loop: of its body
        uint32_t inner_last = 0;  // Loop: the largest `seen` of its body
    };
    // Per variable: its value at the end of `block` (the anchor: the last
    // block that defined or used it), the clock at its last definition,
    // and the anchor before (`before`, with its value then): always
    // another block, so a definition, which moves the anchor to its own
    // block, never changes the value at the end of `before`.
    struct Recent {
        PackedOption<Block> block;
        Value value;
        uint32_t def_time = 0;
        // The block of the last definition, and the clock at the last
        // definition in any other block (0: none): a block heard of after
        // that and not `def_block` defines nothing.
        PackedOption<Block> def_block;
        uint32_t prev_def_time = 0;
        PackedOption<Block> before;
        Value before_value;

        void move_to(Block b, Value v) {
            if (block != b) {
                before = block;
                before_value = value;
            }
            block = b;
            value = v;
        }
    };
    struct Call {
        enum class Kind : uint8_t {
            UseVar,        // push the value of the variable at the end of `block`
            AssignDef,     // record the top result as the value at the end of `block`
            FinishLookup,  // all predecessors of `block` are on the result stack
        };
        Kind kind;
        Block block;
        Value sentinel;  // FinishLookup: the parameter being resolved
    };
    struct LastDef {
        PackedOption<Block> block;
        PackedOption<Value> value;
    };

    Block pred_block(const BlockData& d, uint32_t i) const {
        return i < kInlinePreds ? d.preds[i] : d.more_preds.get(i - kInlinePreds, pred_block_pool_);
    }
    void record(Variable var, Value value, Block block);
    void see(Block block);
    void tick();
    bool body_may_define(const BlockData& header, const Recent& r) const;
    bool quick_lookup(Function& func, Variable var, Type ty, Block block, Value& out, Block& above);
    bool quick_incoming(Function& func, Variable var, Type ty, Block block);
    bool loop_value(Function& func, Variable var, Type ty, Block header, Value& out);
    void settle_param(Function& func, Variable var, Type ty, Block block, Value param);
    bool settle_loop_param(Function& func, Variable var, Type ty, Block header, Value param);
    Value make_unsealed_param(Function& func, Variable var, Type ty, Block block);
    Shape shape_of(Block block);
    bool find_loop_body(Block header, uint32_t& min_seen, uint32_t& max_seen);
    PackedOption<Value> raw_def(Variable var, Block block) const;
    PackedOption<Value> find_def(Function& func, Variable var, Block block);
    Value resolve(DataFlowGraph& dfg, Value v);
    Value run(Function& func, Variable var, Type ty);
    void run_calls(Function& func, Variable var, Type ty);
    void use_var_step(Function& func, Variable var, Type ty, Block block);
    PackedOption<Block> common_source(Variable var, Block block) const;
    void begin_lookup(Function& func, Variable var, Type ty, Block block, Value sentinel);
    void finish_lookup(Function& func, Variable var, Type ty, Value sentinel, Block dest);
    void settle_def(Variable var, Block block, Value param, Value value);
    void append_branch_args(Function& func, Block dest, Value param, std::span<const Value> args);
    void remove_param(Function& func, Block block, Value param, Value replacement);
    Value make_zero(Function& func, Variable var, Type ty, Block block);
    uint32_t next_walk_mark();
    // remove_redundant_params helpers
    bool unique_incoming(Function& func, Value param, Value& same);
    template <typename F>
    bool scan_param(DataFlowGraph& dfg, Value p, F&& link);
    void add_user(Value used, Value user);
    void drop_param(Function& func, Value param, Value replacement);
    uint32_t remove_trivial_params(Function& func);
    uint32_t remove_redundant_sccs(Function& func, bool from_links);
    bool links_match_scan(Function& func);
    void find_sccs(Function& func, const std::vector<uint32_t>& set);
    uint32_t settle_scc(Function& func);

    DenseTable<Block, BlockData> blocks_;
    ListPool<Block> pred_block_pool_;
    ListPool<Inst> pred_inst_pool_;
    ListPool<Value> undef_pool_;

    DefTable defs_;
    DenseTable<Variable, LastDef> last_def_;
    DenseTable<Variable, Recent> recent_;
    uint32_t clock_ = 1;  // counts definitions; blocks are stamped with it
    uint32_t loop_depth_ = 0;  // loop_value calls under way
    DenseTable<Value, Variable> param_var_;  // SSA parameter -> its variable

    std::vector<Call> calls_;
    std::vector<Value> results_;
    std::vector<Block> chain_;  // use_var_step's walk; find_loop_body's work list
    std::vector<Value> quick_args_;  // quick_lookup: a merge's incoming values
    DenseTable<Block, uint32_t> walk_mark_;
    uint32_t walk_gen_ = 0;

    // remove_redundant_params: users of each SSA parameter as linked lists.
    struct UserNode {
        Value user;
        uint32_t next;
    };
    std::vector<UserNode> user_nodes_;
    DenseTable<Value, uint32_t> user_head_, user_tail_;
    DenseTable<Value, uint8_t> gets_param_;  // passed an SSA parameter (when the users were listed)

    // Kept while building: which SSA parameters are passed to another SSA
    // parameter (kPassed) and which are passed one (kGets), as the
    // arguments were appended (they are resolved then). While no
    // parameter with a link is removed (links_exact_), every argument
    // still resolves to what it was appended as, so these are what
    // remove_trivial_params would find by scanning, and no parameter is
    // trivial (each was kept because its incoming values differed).
    static constexpr uint8_t kPassed = 1, kGets = 2;
    DenseTable<Value, uint8_t> links_;
    bool links_exact_ = true;
    std::vector<Value> worklist_;

    // remove_redundant_sccs: the parameter graph (an edge from a parameter
    // to each parameter among its incoming arguments) and Tarjan's
    // algorithm, iterative, over a subset of the nodes (in_set_ ==
    // set_gen_). Groups found wait on a work stack as ranges of
    // scc_members_; scc_ is the group being settled, inner_ its members
    // that receive nothing from outside it.
    struct TarjanFrame {
        uint32_t node, next_edge;
    };
    std::vector<Value> scc_nodes_;
    DenseTable<Value, uint32_t> node_of_;  // node + 1, 0 = not a node
    std::vector<uint32_t> adj_start_, adj_;
    std::vector<uint32_t> t_index_, t_low_, t_stack_, in_set_, in_scc_, scc_, inner_, scc_members_;
    std::vector<std::pair<uint32_t, uint32_t>> scc_work_;
    std::vector<uint8_t> t_on_stack_;
    std::vector<TarjanFrame> t_frames_;
    uint32_t set_gen_ = 0, scc_gen_ = 0;

    SideEffects side_effects_;
    std::vector<Value> removed_params_;
};

}  // namespace heron
