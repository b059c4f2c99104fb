// SSABuilder: Braun et al., "Simple and Efficient Construction of Static
// Single Assignment Form" (CC 2013), as an explicit state machine. See ssa.h
// for the cases; this file is the machine and its bookkeeping.
#include "frontend/ssa.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

#include "codegen/ir/cursor.h"
#include "codegen/ir/prefetch.h"

namespace heron {

namespace {
constexpr uint32_t kNone = ~uint32_t{0};
// The definition of a variable in a sealed block whose predecessors are
// being looked up (Braun et al. 2013, section 3.1, marker algorithm): a
// lookup that finds it came around a cycle and makes the block parameter
// then. Blocks on no cycle never get one unless their predecessors differ.
constexpr Value kMark(~uint32_t{0} - 1);
// quick_lookup gives up after this many blocks (the machine then records
// the value along the way, so the next lookups are short again).
constexpr uint32_t kQuickSteps = 256;
// ... or after this many merges that need a parameter.
constexpr uint32_t kQuickMerges = 8;
// ... or at a loop header whose body may define the variable, when this
// many such headers are being looked up already (loop_value: the walks
// for a header's incoming values may meet others; the depth of native
// recursion stays bounded).
constexpr uint32_t kQuickLoops = 4;
}  // namespace

// --- DefTable ----------------------------------------------------------------

DefTable::DefTable() {
    slots_.resize(64);
    shift_ = 64 - 6;
}

void DefTable::clear() {
    std::fill(std::begin(dense_len_), std::end(dense_len_), 0u);
    size_ = 0;
    if (++gen_ != 0) return;
    // The generation counter wrapped: forget the old generations for real.
    for (Slot& s : slots_) s.gen = 0;
    gen_ = 1;
}

uint32_t DefTable::slot_of(uint32_t var, uint32_t hi) const {
    uint64_t key = (uint64_t{var} << 32) | hi;
    return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
}

// Puts `index` in use for variable `var`: the words between the old end
// and it (and possibly a few beyond) become "no definition" (zero).
void DefTable::extend_dense(uint32_t var, uint32_t index) {
    const uint32_t len = dense_len_[var];
    if (index >= dense_cap_[var]) {
        // Geometric steps (as far as the dense part reaches), so a variable
        // defined block after block reallocates only now and then. Only
        // the words in use are copied; the new ones are filled below.
        const uint32_t cap = std::max({index + 1, std::min(dense_cap_[var] * 2, kDenseBlocks), 64u});
        std::unique_ptr<uint32_t[]> grown(new uint32_t[cap]);
        if (len != 0) std::memcpy(grown.get(), dense_[var].get(), size_t{len} * sizeof(uint32_t));
        dense_[var] = std::move(grown);
        dense_cap_[var] = cap;
    }
    // The words in use grow geometrically too (at most twice what is
    // needed), so a variable defined block after block fills now and then.
    const uint32_t new_len = std::min(dense_cap_[var], std::max({index + 1, len * 2, 64u}));
    std::memset(dense_[var].get() + len, 0, size_t{new_len - len} * sizeof(uint32_t));
    dense_len_[var] = new_len;
}

PackedOption<Value> DefTable::hashed_get(Variable var, Block block) const {
    const uint32_t hi = block.index() / kPerSlot, lo = block.index() % kPerSlot;
    const uint32_t mask = static_cast<uint32_t>(slots_.size() - 1);
    // Lookups walk forward block by block (a chain of blocks, each reading
    // the variable): the next slot of this variable is a random line in a
    // large table, cold when the walk gets there, so it is fetched now.
    if (lo == kPerSlot / 2) prefetch(&slots_[slot_of(var.index(), hi + 1)]);
    for (uint32_t i = slot_of(var.index(), hi);; i = (i + 1) & mask) {
        const Slot& s = slots_[i];
        if (s.gen != gen_) return std::nullopt;
        if (s.var == var.index() && s.hi == hi) {
            uint32_t v = s.values[lo];
            return v == Value::kReserved ? PackedOption<Value>() : PackedOption<Value>(Value(v));
        }
    }
}

void DefTable::hashed_set(Variable var, Block block, Value value) {
    const uint32_t hi = block.index() / kPerSlot, lo = block.index() % kPerSlot;
    for (;;) {
        const uint32_t mask = static_cast<uint32_t>(slots_.size() - 1);
        for (uint32_t i = slot_of(var.index(), hi);; i = (i + 1) & mask) {
            Slot& s = slots_[i];
            if (s.gen == gen_) {
                if (s.var != var.index() || s.hi != hi) continue;
                s.values[lo] = value.index();
                return;
            }
            if ((size_ + 1) * 2 > slots_.size()) break;  // grow first, then claim
            s.var = var.index();
            s.hi = hi;
            s.gen = gen_;
            std::fill(std::begin(s.values), std::end(s.values), Value::kReserved);
            s.values[lo] = value.index();
            ++size_;
            return;
        }
        grow();
    }
}

void DefTable::grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    --shift_;
    const uint32_t mask = static_cast<uint32_t>(slots_.size() - 1);
    for (const Slot& s : old) {
        if (s.gen != gen_) continue;
        uint32_t i = slot_of(s.var, s.hi);
        while (slots_[i].gen == gen_) i = (i + 1) & mask;
        slots_[i] = s;
    }
}

// --- SSABuilder: bookkeeping ---------------------------------------------------

SSABuilder::SSABuilder() : user_head_(kNone), user_tail_(kNone) {}

void SSABuilder::clear() {
    blocks_.clear();
    pred_block_pool_.clear();
    pred_inst_pool_.clear();
    undef_pool_.clear();
    defs_.clear();
    last_def_.clear();
    recent_.clear();
    clock_ = 1;
    loop_depth_ = 0;
    param_var_.clear();
    calls_.clear();
    results_.clear();
    walk_mark_.clear();
    walk_gen_ = 0;
    user_nodes_.clear();
    user_head_.clear();
    user_tail_.clear();
    worklist_.clear();
    links_.clear();
    links_exact_ = true;
    side_effects_.clear();
    removed_params_.clear();
}

void SSABuilder::declare_block_predecessor(Block dest, Block pred, Inst branch) {
    HERON_ASSERT(!blocks_[dest].sealed && "a sealed block gets no new predecessors");
    BlockData& d = blocks_[dest];
    if (d.num_preds < kInlinePreds) {
        d.preds[d.num_preds] = pred;
        d.pred_branches[d.num_preds] = branch;
    } else {
        d.more_preds.push(pred, pred_block_pool_);
        d.more_pred_branches.push(branch, pred_inst_pool_);
    }
    ++d.num_preds;
    see(dest);
    see(pred);
}

void SSABuilder::def_var(Variable var, Value value, Block block) {
    see(block);
    Recent& r = recent_[var];
    r.move_to(block, value);
    if (r.def_block != block) {
        r.prev_def_time = r.def_time;
        r.def_block = block;
    }
    r.def_time = clock_;
    tick();
    record(var, value, block);
}

// The clock counts definitions and blocks first heard of, so every block
// has its own stamp and a block heard of after a definition has a larger
// one. Saturated, every block counts as heard of before every definition.
void SSABuilder::tick() {
    if (clock_ != ~uint32_t{0}) ++clock_;
}

void SSABuilder::see(Block block) {
    BlockData& d = blocks_[block];
    if (d.seen == 0) {
        d.seen = clock_;
        tick();
    }
}

void SSABuilder::record(Variable var, Value value, Block block) {
    // A pair in the table's dense part is written there at once (a store).
    if (DefTable::is_dense(var, block)) [[likely]] {
        defs_.set(var, block, value);
        return;
    }
    // For the others the newest definition of each variable lives in
    // last_def_ only; the table gets it when a definition in another block
    // (of the hashed part) replaces it. So a block redefining a variable
    // again and again costs no hashing.
    LastDef& last = last_def_[var];
    if (last.block != block && last.block) defs_.set(var, *last.block, *last.value);
    last = LastDef{block, value};
}

PackedOption<Value> SSABuilder::raw_def(Variable var, Block block) const {
    if (DefTable::is_dense(var, block)) [[likely]] return defs_.get(var, block);
    const LastDef& last = last_def_[var];
    return last.block == block ? last.value : defs_.get(var, block);
}

PackedOption<Value> SSABuilder::find_def(Function& func, Variable var, Block block) {
    PackedOption<Value> v = raw_def(var, block);
    if (!v || *v == kMark) return v;
    return resolve(func.dfg, *v);
}

// Follows aliases to the real value and points every alias on the way
// straight at it (path compression): removing parameters one after another
// builds alias chains as long as the function, and walking them again for
// every lookup would be quadratic.
Value SSABuilder::resolve(DataFlowGraph& dfg, Value v) {
    if (removed_params_.empty()) return v;  // no aliases made yet
    Value real = dfg.resolve_aliases(v);
    while (v != real && dfg.value_is_alias(v)) {
        Value next(dfg.value_def(v).owner);
        dfg.change_to_alias(v, real);
        v = next;
    }
    return real;
}

uint32_t SSABuilder::next_walk_mark() {
    if (++walk_gen_ == 0) {
        walk_mark_.clear();
        walk_gen_ = 1;
    }
    return walk_gen_;
}

// --- the state machine -----------------------------------------------------------

SSABuilder::UseVarResult SSABuilder::use_var(Function& func, Variable var, Type ty, Block block) {
    // The common case first: a definition in this very block.
    if (auto v = find_def(func, var, block)) return {*v, 0};
    see(block);
    Value v;
    size_t before = side_effects_.undefined_reads.size();
    Block above = block;
    if (quick_lookup(func, var, ty, block, v, above)) {
        // `block` defines nothing and its value comes from `above`: later
        // lookups from elsewhere are more likely to pass there.
        record(var, v, block);
    } else {
        calls_.push_back(Call{Call::Kind::UseVar, block, Value()});
        v = run(func, var, ty);
        above = block;
    }
    recent_[var].move_to(above, v);
    return {v, static_cast<uint32_t>(side_effects_.undefined_reads.size() - before)};
}

// The shape of a sealed block (see Shape), worked out once it cannot change.
SSABuilder::Shape SSABuilder::shape_of(Block block) {
    BlockData& d = blocks_[block];
    if (d.shape != Shape::Unknown) return d.shape;
    const uint32_t n = d.num_preds;
    if (n <= 1) {
        d.shape = n == 0 ? Shape::None : Shape::Single;
        if (n == 1) d.source = pred_block(d, 0);
        return d.shape;
    }
    // The source is the first predecessor or its only predecessor; every
    // other predecessor must be it or a sealed block coming only from it.
    auto only_pred = [&](Block p) -> PackedOption<Block> {
        const BlockData& pd = std::as_const(blocks_)[p];
        if (!pd.sealed || pd.num_preds != 1) return std::nullopt;
        return pred_block(pd, 0);
    };
    auto fits = [&](Block c) {
        uint32_t inner_seen = ~uint32_t{0};
        for (uint32_t i = 0; i < n; ++i) {
            Block p = pred_block(d, i);
            if (p == c) continue;
            if (only_pred(p) != PackedOption<Block>(c)) return false;
            inner_seen = std::min(inner_seen, std::as_const(blocks_)[p].seen);
        }
        d.inner_seen = inner_seen;
        return true;
    };
    const Block first = pred_block(d, 0);
    if (fits(first)) {
        d.source = first;
    } else if (PackedOption<Block> up = only_pred(first); up && fits(*up)) {
        d.source = up;
    } else {
        // A predecessor not sealed yet may still become an arm.
        bool all_sealed = true;
        for (uint32_t i = 0; i < n; ++i) all_sealed &= std::as_const(blocks_)[pred_block(d, i)].sealed;
        if (!all_sealed) return Shape::None;
        uint32_t body_seen = 0, body_last = 0;
        if (!find_loop_body(block, body_seen, body_last)) {
            blocks_[block].shape = Shape::None;
            return Shape::None;
        }
        BlockData& h = blocks_[block];
        h.source = pred_block(h, 0);
        h.inner_seen = body_seen;
        h.inner_last = body_last;
        h.shape = Shape::Loop;
        return Shape::Loop;
    }
    d.shape = Shape::Merge;
    return Shape::Merge;
}

// Is sealed `header` a loop header whose first predecessor enters it from
// outside? The body is every block that reaches one of the other
// predecessors without passing the header; it qualifies if every block in
// it is sealed, has predecessors, and is not the first predecessor (so the
// header is the body's only way in), and it is not too large to search
// (then no answer: the lookup takes the general way). `min_seen` and
// `max_seen` get the smallest and largest `seen` in the body.
bool SSABuilder::find_loop_body(Block header, uint32_t& min_seen, uint32_t& max_seen) {
    constexpr uint32_t kMaxBody = 4096;
    const uint32_t mark = next_walk_mark();
    const BlockData& h = std::as_const(blocks_)[header];
    const Block entry = pred_block(h, 0);
    const uint32_t n = h.num_preds;
    chain_.clear();
    walk_mark_[header] = mark;
    min_seen = ~uint32_t{0};
    max_seen = 0;
    auto visit = [&](Block b) {
        if (walk_mark_[b] == mark) return true;
        const BlockData& d = std::as_const(blocks_)[b];
        if (b == entry || !d.sealed || d.num_preds == 0 || chain_.size() >= kMaxBody) return false;
        walk_mark_[b] = mark;
        min_seen = std::min(min_seen, d.seen);
        max_seen = std::max(max_seen, d.seen);
        chain_.push_back(b);
        return true;
    };
    for (uint32_t i = 1; i < n; ++i) {
        if (!visit(pred_block(h, i))) return false;
    }
    for (size_t k = 0; k < chain_.size(); ++k) {
        const BlockData& d = std::as_const(blocks_)[chain_[k]];
        const uint32_t m = d.num_preds;
        for (uint32_t i = 0; i < m; ++i) {
            if (!visit(pred_block(d, i))) return false;
        }
    }
    // Every body block must also be reachable from the header (a cycle of
    // dead blocks feeding the body would bring in other values). The
    // search above found the blocks latest first; a few passes in reverse
    // settle a structured body, anything else gets no answer.
    const uint32_t reached = next_walk_mark();
    if (reached < mark) return false;  // the marks wrapped around
    walk_mark_[header] = reached;
    size_t left = chain_.size();
    for (int pass = 0; pass < 4 && left != 0; ++pass) {
        for (size_t k = chain_.size(); k-- > 0;) {
            const Block b = chain_[k];
            if (walk_mark_[b] == reached) continue;
            const BlockData& d = std::as_const(blocks_)[b];
            const uint32_t m = d.num_preds;
            for (uint32_t i = 0; i < m; ++i) {
                if (walk_mark_[pred_block(d, i)] == reached) {
                    walk_mark_[b] = reached;
                    --left;
                    break;
                }
            }
        }
    }
    return left == 0;
}

// The value of `var` at the end of sealed `block` without the state
// machine, when the chain of Single and Merge blocks above it reaches the
// variable's last use or definition (recent_) with nothing defining the
// variable on the way. A block first heard of after the variable's last
// definition cannot define it, so most blocks need no table probe; an
// older one is probed. An arm may hold the value being looked for (a use
// there walked up to the source). Changes nothing; false: use the machine.
bool SSABuilder::quick_lookup(Function& func, Variable var, Type ty, Block block, Value& out, Block& above) {
    const Recent& r = std::as_const(recent_)[var];
    if (!r.block) return false;
    const uint32_t t = r.def_time;
    const Block target = *r.block;
    // A walk from above the last definition (a loop's preheader, say) may
    // meet the anchor before it instead.
    const PackedOption<Block> before = r.before;
    // Merges on the way whose arms hold values of their own (lowest first):
    // each gets a parameter unless its incoming values agree.
    Block pending[kQuickMerges];
    uint32_t num_pending = 0;
    Block b = block;
    Value found;
    for (uint32_t steps = 0;; ++steps) {
        if (steps == kQuickSteps) return false;  // a long way (or a cycle of dead blocks)
        const BlockData* d = &std::as_const(blocks_)[b];
        if (!d->sealed) {
            // Nothing defines the variable on the way: a parameter here, as
            // the machine would make (its arguments come at seal_block).
            if (steps > 0 && d->seen > t) {
                if (PackedOption<Value> w = raw_def(var, b)) {
                    if (*w == kMark) return false;
                    found = resolve(func.dfg, *w);
                    break;
                }
            }
            found = make_unsealed_param(func, var, ty, b);
            break;
        }
        Shape shape = d->shape;
        if (shape == Shape::Unknown) {
            shape = shape_of(b);
            d = &std::as_const(blocks_)[b];
        }
        if (shape == Shape::None) return false;
        const Block next = *d->source;
        if (shape == Shape::Loop) {
            if (body_may_define(*d, r)) {
                // The header's value needs its incoming values
                // (loop_value), unless the walk is already this deep in
                // loops.
                if (!loop_value(func, var, ty, b, found)) return false;
                break;
            }
        } else if (d->inner_seen <= t && shape != Shape::Single) {
            const uint32_t n = d->num_preds;
            bool arm_holds_value = false;
            for (uint32_t i = 0; i < n && !arm_holds_value; ++i) {
                Block p = pred_block(*d, i);
                if (p == next || std::as_const(blocks_)[p].seen > t) continue;
                PackedOption<Value> a = raw_def(var, p);
                if (!a) continue;
                if (*a == kMark) return false;
                arm_holds_value = true;
            }
            if (arm_holds_value) {
                // A merge made earlier may have its parameter already
                // (a block heard of late is not probed on arrival).
                if (steps > 0 && d->seen > t) {
                    if (PackedOption<Value> w = raw_def(var, b)) {
                        if (*w == kMark) return false;
                        found = resolve(func.dfg, *w);
                        break;
                    }
                }
                if (num_pending == kQuickMerges) return false;
                pending[num_pending++] = b;
                // If every incoming edge brings a value of its own, the
                // source's value is not needed (the machine would not look
                // it up either, nor make parameters above for it).
                bool needs_source = false;
                for (uint32_t i = 0; i < n && !needs_source; ++i) {
                    Block p = pred_block(*d, i);
                    needs_source = p == next || !raw_def(var, p);
                }
                if (!needs_source) break;
            }
        }
        if (steps == 0) above = next;
        b = next;
        if (b == target) {
            found = resolve(func.dfg, r.value);
            break;
        }
        if (b == before) {
            found = resolve(func.dfg, r.before_value);
            break;
        }
        if (std::as_const(blocks_)[b].seen <= t) {
            if (PackedOption<Value> w = raw_def(var, b)) {
                if (*w == kMark) return false;
                found = resolve(func.dfg, *w);
                break;
            }
        }
    }
    // The pending merges, top down: `found` is the value at the end of the
    // merge's source.
    for (uint32_t k = num_pending; k-- > 0;) {
        const Block m = pending[k];
        const BlockData& d = std::as_const(blocks_)[m];
        const uint32_t n = d.num_preds;
        quick_args_.clear();
        bool differ = false;
        for (uint32_t i = 0; i < n; ++i) {
            Block p = pred_block(d, i);
            Value a = found;
            if (p != *d.source) {
                if (PackedOption<Value> w = raw_def(var, p)) a = resolve(func.dfg, *w);
            }
            HERON_ASSERT(a.is_valid() && "the source's value is needed when an edge brings none");
            differ |= !quick_args_.empty() && a != quick_args_[0];
            quick_args_.push_back(a);
        }
        if (!differ) {
            found = quick_args_[0];
        } else {
            found = func.dfg.append_block_param(m, ty);
            param_var_[found] = var;
            append_branch_args(func, m, found, quick_args_);
        }
        record(var, found, m);
    }
    if (num_pending != 0 && pending[0] == block) above = block;
    out = found;
    return true;
}

// Can a block of Loop `header`'s body define the variable whose Recent is
// `r`? A block other than the last definition's that defines it was heard
// of by the definition before (at most r.prev_def_time); the last
// definition's block is in the body only if it was heard of while the
// body's blocks were (their stamps span inner_seen..inner_last). No means
// the header's value is its first predecessor's.
bool SSABuilder::body_may_define(const BlockData& header, const Recent& r) const {
    if (header.inner_seen > r.def_time) return false;
    if (header.inner_seen <= r.prev_def_time || !r.def_block) return true;
    const uint32_t s = std::as_const(blocks_)[*r.def_block].seen;
    return s >= header.inner_seen && s <= header.inner_last;
}

// The value of `var` at sealed Loop header `header` (see Shape), which
// defines nothing itself and whose body may define the variable: a
// parameter first (so that walks from the back edges that come round to
// the header stop there), then every predecessor looked up as seal_block
// does for a parameter made while unsealed: quick walks if they all
// succeed, else the machine. The parameter stays if the incoming values
// differ and goes (an alias of the one value) if not. The machine would
// make the same parameters, in another order of value numbers: it marks
// the header and makes the parameter when a back edge's walk comes round
// (docs/frontend.md). False, changing nothing, when the walk that asked
// is already kQuickLoops loops deep (its caller then takes the machine).
bool SSABuilder::loop_value(Function& func, Variable var, Type ty, Block header, Value& out) {
    if (PackedOption<Value> w = raw_def(var, header)) {
        // Recorded by an earlier lookup (a header heard of after the
        // variable's last definition is not probed on arrival).
        if (*w == kMark) return false;
        out = resolve(func.dfg, *w);
        return true;
    }
    if (loop_depth_ == kQuickLoops) return false;
    HERON_ASSERT(calls_.empty() && "quick walks never run inside the machine");
    ++loop_depth_;
    const Value param = func.dfg.append_block_param(header, ty);
    param_var_[param] = var;
    record(var, param, header);
    settle_param(func, var, ty, header, param);
    out = results_.back();
    results_.pop_back();
    --loop_depth_;
    return true;
}

// Pushes the value of `var` at the end of every predecessor of `block` on
// the result stack, if quick_lookup finds them all (else pushes nothing:
// the machine looks them up, finding what these lookups recorded).
bool SSABuilder::quick_incoming(Function& func, Variable var, Type ty, Block block) {
    const size_t base = results_.size();
    const uint32_t n = num_predecessors(block);
    for (uint32_t i = 0; i < n; ++i) {
        const Block p = predecessor_block(block, i);
        Value v;
        Block above;
        if (PackedOption<Value> d = find_def(func, var, p)) {
            v = *d;
        } else if (quick_lookup(func, var, ty, p, v, above)) {
            record(var, v, p);
        } else {
            results_.resize(base);
            return false;
        }
        results_.push_back(v);
    }
    return true;
}

// `param` (of `var`, in `block`, whose predecessors are all known) gets
// its incoming values: quick walks if they all succeed, else the machine
// (which finds what they recorded). It stays if they differ, else it goes
// and becomes an alias of the one value. The value of `var` at `block`
// ends up on the result stack.
void SSABuilder::settle_param(Function& func, Variable var, Type ty, Block block, Value param) {
    if (quick_incoming(func, var, ty, block)) {
        finish_lookup(func, var, ty, param, block);
        return;
    }
    begin_lookup(func, var, ty, block, param);
    run_calls(func, var, ty);
}

// seal_block's way for `param` (of `var`) in Loop `header` when neither the
// header nor its body defines `var` (body_may_define): every back edge brings the value
// at the header, so the parameter is trivial and becomes the first
// predecessor's value, found by a quick walk (false, changing nothing, if
// that walk fails or the body may define it: settle_param then).
bool SSABuilder::settle_loop_param(Function& func, Variable var, Type ty, Block header, Value param) {
    // The header itself defined `var` after the use that made the
    // parameter: its value at the end is that definition.
    if (raw_def(var, header) != PackedOption<Value>(param)) return false;
    const BlockData& h = std::as_const(blocks_)[header];
    if (body_may_define(h, std::as_const(recent_)[var])) return false;
    const Block entry = *h.source;
    Value v;
    if (PackedOption<Value> d = find_def(func, var, entry)) {
        v = *d;
    } else {
        Block above;
        if (!quick_lookup(func, var, ty, entry, v, above)) return false;
        record(var, v, entry);
    }
    // Only the header's own value reaches it (dead code around it): as
    // finish_lookup, a zero constant.
    if (v == param) v = make_zero(func, var, ty, header);
    remove_param(func, header, param, v);
    settle_def(var, header, param, v);
    return true;
}

// A parameter of unsealed `block` for `var`; its arguments come at seal_block.
Value SSABuilder::make_unsealed_param(Function& func, Variable var, Type ty, Block block) {
    Value param = func.dfg.append_block_param(block, ty);
    param_var_[param] = var;
    blocks_[block].undef.push(param, undef_pool_);
    record(var, param, block);
    return param;
}

Value SSABuilder::run(Function& func, Variable var, Type ty) {
    HERON_ASSERT(results_.empty() && "a lookup from the top leaves nothing else on the result stack");
    run_calls(func, var, ty);
    Value v = results_.back();
    results_.pop_back();
    return v;
}

// Runs the calls on the call stack; they leave one result on top of the
// result stack (below it, results an enclosing quick_incoming collected).
void SSABuilder::run_calls(Function& func, Variable var, Type ty) {
    [[maybe_unused]] const size_t base = results_.size();
    while (!calls_.empty()) {
        Call call = calls_.back();
        calls_.pop_back();
        switch (call.kind) {
        case Call::Kind::UseVar:
            use_var_step(func, var, ty, call.block);
            break;
        case Call::Kind::AssignDef:
            record(var, results_.back(), call.block);
            break;
        case Call::Kind::FinishLookup:
            finish_lookup(func, var, ty, call.sentinel, call.block);
            break;
        }
    }
    HERON_ASSERT(results_.size() == base + 1 && "the state machine leaves exactly one result");
}

// Finds the value of `var` at the end of `block` and pushes it (possibly
// after more calls). Chains of sealed single-predecessor blocks (and merges
// with a common source, see common_source) are walked here in a loop; each
// block walked gets the found value recorded, so no chain is walked twice
// for one variable. The walk marks blocks so that a cycle (only possible in
// unreachable code) ends in the several-predecessors case, which breaks it.
void SSABuilder::use_var_step(Function& func, Variable var, Type ty, Block block) {
    uint32_t mark = next_walk_mark();
    chain_.clear();
    Block b = block;
    Value found;
    for (;;) {
        if (auto v = find_def(func, var, b)) {
            found = *v;
            if (found == kMark) {
                // Back at a block whose lookup is under way: a cycle. Its
                // parameter breaks it.
                found = func.dfg.append_block_param(b, ty);
                param_var_[found] = var;
                record(var, found, b);
            }
            break;
        }
        const BlockData& d = std::as_const(blocks_)[b];
        if (!d.sealed || walk_mark_[b] == mark) break;
        PackedOption<Block> next;
        uint32_t n = d.num_preds;
        if (n == 1) {
            next = pred_block(d, 0);
        } else if (n > 1) {
            next = common_source(var, b);
        }
        if (!next) break;
        walk_mark_[b] = mark;
        chain_.push_back(b);
        b = *next;
    }

    if (!found.is_valid()) {
        const BlockData& d = std::as_const(blocks_)[b];
        if (!d.sealed) {
            // Not all predecessors are known: a parameter now, its
            // arguments at seal_block.
            found = make_unsealed_param(func, var, ty, b);
        } else if (d.num_preds == 0) {
            // The entry block, or a block nothing jumps to: no definition
            // reaches.
            found = make_zero(func, var, ty, b);
            record(var, found, b);
        } else {
            // Several predecessors (or a cycle of single ones): look them
            // all up, with the block marked so that a lookup coming back
            // around a cycle makes the parameter (and stops there). The
            // blocks walked get the result when it is known.
            for (Block c : chain_) calls_.push_back(Call{Call::Kind::AssignDef, c, Value()});
            record(var, kMark, b);
            begin_lookup(func, var, ty, b, Value());
            return;
        }
    }
    // Known now: record it in every block walked, the first block last (so
    // it is the one the per-variable cache holds).
    for (size_t i = chain_.size(); i-- > 0;) record(var, found, chain_[i]);
    results_.push_back(found);
}

// A merge whose incoming edges all carry the value `var` has at the end of
// one block C: each predecessor is C itself or a sealed block whose only
// predecessor is C and which does not define `var` (a diamond, an if
// without else, the cases of a switch). Then the merge needs no parameter
// and its value is C's: the walk goes on at C instead of looking up every
// predecessor. Returns C, or none.
PackedOption<Block> SSABuilder::common_source(Variable var, Block block) const {
    const BlockData& d = blocks_[block];
    uint32_t n = d.num_preds;
    Block common;
    for (uint32_t i = 0; i < n; ++i) {
        Block p = pred_block(d, i);
        Block source = p;
        const BlockData& pd = blocks_[p];
        if (pd.sealed && pd.num_preds == 1 && !raw_def(var, p)) {
            source = pred_block(pd, 0);
        }
        if (i == 0) {
            common = source;
        } else if (source != common) {
            return std::nullopt;
        }
    }
    return common;
}

void SSABuilder::begin_lookup(Function& func, Variable var, Type ty, Block block, Value sentinel) {
    calls_.push_back(Call{Call::Kind::FinishLookup, block, sentinel});
    const BlockData& d = std::as_const(blocks_)[block];
    uint32_t n = d.num_preds;
    // Pushed last-first, so they run (and their results land) in order.
    for (uint32_t i = n; i-- > 0;) {
        calls_.push_back(Call{Call::Kind::UseVar, pred_block(d, i), Value()});
    }
}

// The results of every predecessor of `dest` are on top of the result stack,
// in predecessor order. `sentinel` is the parameter made for this lookup
// (at seal_block), or none: then a cycle may have made one meanwhile (the
// block's definition is no longer the mark). Either the results differ (a
// parameter is needed; each branch passes its value) or they are all one
// value or the parameter itself (no parameter: an existing one goes away
// and becomes an alias of that value, or of a zero constant if nothing but
// the parameter itself reaches it).
void SSABuilder::finish_lookup(Function& func, Variable var, Type ty, Value sentinel, Block dest) {
    if (!sentinel.is_valid()) {
        PackedOption<Value> cur = raw_def(var, dest);
        if (cur && *cur != kMark) sentinel = *cur;
    }
    uint32_t n = num_predecessors(dest);
    HERON_ASSERT(results_.size() >= n);
    size_t base = results_.size() - n;
    Value same;
    bool several = false;
    for (size_t i = base; i < results_.size(); ++i) {
        Value r = resolve(func.dfg, results_[i]);
        results_[i] = r;
        if (r == sentinel || r == same) continue;
        if (same.is_valid()) several = true;
        same = r;
    }
    if (several) {
        if (!sentinel.is_valid()) {
            sentinel = func.dfg.append_block_param(dest, ty);
            param_var_[sentinel] = var;
        }
        append_branch_args(func, dest, sentinel, std::span<const Value>(results_.data() + base, n));
        results_.resize(base);
        results_.push_back(sentinel);
        settle_def(var, dest, sentinel, sentinel);
        return;
    }
    results_.resize(base);
    if (!same.is_valid()) same = make_zero(func, var, ty, dest);
    if (sentinel.is_valid()) remove_param(func, dest, sentinel, same);
    settle_def(var, dest, sentinel, same);
    results_.push_back(same);
}

// The block's definition becomes `value` if it still is the mark or the
// parameter; a definition the embedder made later in the block (after a
// use that made a parameter while the block was unsealed) stays.
void SSABuilder::settle_def(Variable var, Block block, Value param, Value value) {
    PackedOption<Value> cur = raw_def(var, block);
    if (cur == PackedOption<Value>(kMark) || (param.is_valid() && cur == PackedOption<Value>(param))) {
        record(var, value, block);
    }
}

// `param` (an SSA parameter of `dest`) gets `args` (resolved), one per
// predecessor, and the links between SSA parameters are noted.
void SSABuilder::append_branch_args(Function& func, Block dest, Value param, std::span<const Value> args) {
    ValueListPool& pool = func.dfg.value_lists;
    for (uint32_t i = 0; i < args.size(); ++i) {
        const Value a = args[i];
        if (a != param && is_ssa_param(a)) {
            links_[a] |= kPassed;
            links_[param] |= kGets;
        }
        Inst branch = predecessor_branch(dest, i);
        for (BlockCall& call : func.dfg.branch_destinations_mut(branch)) {
            if (call.block(pool) == dest) call.append_arg(args[i], pool);
        }
    }
}

void SSABuilder::remove_param(Function& func, Block block, Value param, Value replacement) {
    ValueDef def = func.dfg.value_def(param);
    HERON_ASSERT(def.is_param() && def.block() == block && "only a parameter of the block can go");
    func.dfg.remove_block_param(block, def.num);
    func.dfg.change_to_alias(param, replacement);
    removed_params_.push_back(param);
    if (std::as_const(links_)[param] != 0) links_exact_ = false;
}

Value SSABuilder::make_zero(Function& func, Variable var, Type ty, Block block) {
    if (!func.layout.is_block_inserted(block)) func.layout.append_block(block);
    FuncCursor cur(func);
    cur.at_first_inst(block);
    Value zero;
    if (ty == types::F32) {
        zero = cur.ins().f32const(Ieee32{});
    } else if (ty == types::F64) {
        zero = cur.ins().f64const(Ieee64{});
    } else {
        zero = cur.ins().iconst(ty, 0);
    }
    bool unreachable = func.layout.entry_block() != std::optional<Block>(block);
    side_effects_.undefined_reads.push_back(UndefinedRead{var, block, zero, unreachable});
    return zero;
}

uint32_t SSABuilder::seal_block(Block block, Function& func) {
    if (std::as_const(blocks_)[block].sealed) return 0;
    see(block);
    size_t before = side_effects_.undefined_reads.size();
    // Lookups below never add to this block's list: each is for a variable
    // that already has its parameter (and definition) here.
    uint32_t n = std::as_const(blocks_)[block].undef.size(undef_pool_);
    // A loop header whose body is known: a parameter for a variable the
    // body cannot define is its first predecessor's value.
    const bool loop = n != 0 && shape_of(block) == Shape::Loop;
    for (uint32_t i = 0; i < n; ++i) {
        Value param = blocks_[block].undef.get(i, undef_pool_);
        Variable var = param_var_[param];
        Type ty = func.dfg.value_type(param);
        if (loop && settle_loop_param(func, var, ty, block, param)) continue;
        settle_param(func, var, ty, block, param);
        results_.pop_back();
    }
    blocks_[block].undef.clear(undef_pool_);
    blocks_[block].sealed = true;
    return static_cast<uint32_t>(side_effects_.undefined_reads.size() - before);
}

uint32_t SSABuilder::seal_all_blocks(Function& func) {
    uint32_t reads = 0;
    for (uint32_t i = 0; i < func.dfg.num_blocks(); ++i) reads += seal_block(Block(i), func);
    return reads;
}

// --- the final clean-up ------------------------------------------------------------

namespace {

// Calls f(argument) for every argument passed to `param` by a predecessor
// edge of its block.
template <typename F>
void for_each_incoming(const SSABuilder& ssa, const DataFlowGraph& dfg, Value param, F&& f) {
    const ValueDef def = dfg.value_def(param);
    const Block block = def.block();
    const ValueListPool& pool = dfg.value_lists;
    const uint32_t n = ssa.num_predecessors(block);
    for (uint32_t i = 0; i < n; ++i) {
        for (const BlockCall& call : dfg.branch_destinations(ssa.predecessor_branch(block, i))) {
            if (call.block(pool) == block && def.num < call.num_args(pool)) f(call.arg(def.num, pool));
        }
    }
}

}  // namespace

// Removes `param` and the argument every branch passes it; `param` becomes
// an alias of `replacement`.
void SSABuilder::drop_param(Function& func, Value param, Value replacement) {
    DataFlowGraph& dfg = func.dfg;
    ValueListPool& pool = dfg.value_lists;
    const ValueDef def = dfg.value_def(param);
    const Block block = def.block();
    const uint32_t n = num_predecessors(block);
    for (uint32_t i = 0; i < n; ++i) {
        for (BlockCall& call : dfg.branch_destinations_mut(predecessor_branch(block, i))) {
            if (call.block(pool) == block && def.num < call.num_args(pool)) call.remove_arg(def.num, pool);
        }
    }
    remove_param(func, block, param, replacement);
}

// Calls link(a) for every incoming argument of SSA parameter `p` that
// resolves to another SSA parameter still in place; true if the incoming
// values are all one value or `p` itself (trivial).
template <typename F>
bool SSABuilder::scan_param(DataFlowGraph& dfg, Value p, F&& link) {
    Value same;
    bool several = false;
    for_each_incoming(*this, dfg, p, [&](Value arg) {
        Value a = resolve(dfg, arg);
        if (a == p) return;
        if (is_ssa_param(a) && dfg.value_def(a).is_param()) link(a);
        if (a == same) return;
        if (same.is_valid()) several = true;
        same = a;
    });
    return !several;
}

void SSABuilder::add_user(Value used, Value user) {
    uint32_t node = static_cast<uint32_t>(user_nodes_.size());
    user_nodes_.push_back(UserNode{user, kNone});
    if (user_head_[used] == kNone) {
        user_head_[used] = node;
    } else {
        user_nodes_[user_tail_[used]].next = node;
    }
    user_tail_[used] = node;
}

// True if every incoming argument of `param` is one value or `param`
// itself; that value (or none, if only itself) goes to `same`.
bool SSABuilder::unique_incoming(Function& func, Value param, Value& same) {
    same = Value();
    bool several = false;
    for_each_incoming(*this, func.dfg, param, [&](Value arg) {
        Value a = resolve(func.dfg, arg);
        if (a == param || a == same) return;
        if (same.is_valid()) several = true;
        same = a;
    });
    return !several;
}

void SSABuilder::flatten_aliases(Function& func) {
    for (Value v : removed_params_) resolve(func.dfg, v);
}

uint32_t SSABuilder::remove_redundant_params(Function& func) {
    // Removing a group can make a parameter that passed the group trivial,
    // and removing that one can complete another group: alternate until a
    // pass finds nothing. (Only functions where groups were removed pay
    // for a second pass.) While the links kept during building are exact,
    // the first trivial pass would find nothing: the group pass starts
    // from the links instead.
    const bool from_links = links_exact_;
    HERON_ASSERT((!from_links || links_match_scan(func)) && "the links kept while building are what a scan finds");
    uint32_t removed = from_links ? 0 : remove_trivial_params(func);
    for (bool first = true;; first = false) {
        const uint32_t groups = remove_redundant_sccs(func, first && from_links);
        removed += groups;
        if (groups == 0) break;
        const uint32_t trivial = remove_trivial_params(func);
        removed += trivial;
        if (trivial == 0) break;
    }
    return removed;
}

uint32_t SSABuilder::remove_trivial_params(Function& func) {
    DataFlowGraph& dfg = func.dfg;
    worklist_.clear();
    user_nodes_.clear();
    user_head_.clear();
    user_tail_.clear();
    gets_param_.clear();

    // Who passes which SSA parameter to which: removing a parameter wakes
    // the parameters it was an argument of. Only the trivial ones start on
    // the worklist (in block order, as if every parameter were there and
    // the others were passed over): a parameter that is not trivial now
    // can only become so when one of its incoming parameters goes, and
    // that wakes it.
    for (uint32_t b = 0; b < dfg.num_blocks(); ++b) {
        for (Value p : dfg.block_params(Block(b))) {
            if (!is_ssa_param(p)) continue;
            const bool trivial = scan_param(dfg, p, [&](Value a) {
                add_user(a, p);
                gets_param_[p] = 1;
            });
            if (trivial) worklist_.push_back(p);
        }
    }

    uint32_t removed = 0;
    while (!worklist_.empty()) {
        Value p = worklist_.back();
        worklist_.pop_back();
        ValueDef def = dfg.value_def(p);
        if (!def.is_param()) continue;  // already removed
        Value same;
        if (!unique_incoming(func, p, same)) continue;
        if (!same.is_valid()) same = make_zero(func, param_var_[p], dfg.value_type(p), def.block());
        drop_param(func, p, same);
        ++removed;
        // Wake the parameters `p` was passed to, and hand them to `same`
        // (they pass `same` now). `same` itself is woken too: where it
        // received `p` it now receives itself, which can leave it trivial
        // (an inner loop header's copy of the outer header's parameter).
        // Users that are gone, or are `same` itself, leave the list here,
        // so the lists stay short along a cascade of removals.
        uint32_t kept_head = kNone, kept_tail = kNone;
        for (uint32_t node = user_head_[p]; node != kNone;) {
            uint32_t next = user_nodes_[node].next;
            Value user = user_nodes_[node].user;
            if (!dfg.value_def(user).is_param()) {
                node = next;
                continue;
            }
            worklist_.push_back(user);
            if (user != same) {
                user_nodes_[node].next = kNone;
                if (kept_tail == kNone) {
                    kept_head = node;
                } else {
                    user_nodes_[kept_tail].next = node;
                }
                kept_tail = node;
            }
            node = next;
        }
        user_head_[p] = kNone;
        if (kept_head == kNone || !is_ssa_param(same) || !dfg.value_def(same).is_param()) continue;
        if (user_head_[same] == kNone) {
            user_head_[same] = kept_head;
        } else {
            user_nodes_[user_tail_[same]].next = kept_head;
        }
        user_tail_[same] = kept_tail;
    }
    return removed;
}

// For the assertion in remove_redundant_params: with the links exact, a
// scan as remove_trivial_params makes finds no trivial parameter, and
// exactly the linked parameters pass and receive parameters.
bool SSABuilder::links_match_scan(Function& func) {
    DataFlowGraph& dfg = func.dfg;
    std::vector<uint8_t> found(dfg.num_values(), 0);
    bool trivial = false;
    for (uint32_t b = 0; b < dfg.num_blocks(); ++b) {
        for (Value p : dfg.block_params(Block(b))) {
            if (!is_ssa_param(p)) continue;
            trivial |= scan_param(dfg, p, [&](Value a) {
                found[a.index()] |= kPassed;
                found[p.index()] |= kGets;
            });
        }
    }
    if (trivial) return false;
    for (uint32_t b = 0; b < dfg.num_blocks(); ++b) {
        for (Value p : dfg.block_params(Block(b))) {
            if (is_ssa_param(p) && found[p.index()] != std::as_const(links_)[p]) return false;
        }
    }
    return true;
}

// Braun et al. 2013, section 3.2: parameters can form groups that pass
// nothing but each other and one outside value, though none of them is
// trivial alone (irreducible control flow; or, in a loop nest, an outer
// header's parameter and the copy of it an inner header received). Tarjan's
// algorithm (iterative, so no depth limit) finds the strongly connected
// groups, each after the groups it passes values from; a group with one
// outside value in all becomes that value. A group with several outside
// values may still hide a redundant group among its members that receive
// nothing from outside it (the inner members): their groups are found and
// settled next, before any group that comes later (the paper's recursion,
// as a work stack).
uint32_t SSABuilder::remove_redundant_sccs(Function& func, bool from_links) {
    DataFlowGraph& dfg = func.dfg;
    scc_nodes_.clear();
    node_of_.clear();
    constexpr uint8_t kBoth = kPassed | kGets;
    // Only a parameter that is passed to another parameter and is passed
    // one can be in a group of two or more. The users index of
    // remove_trivial_params lists at least every parameter that receives
    // it (for a parameter that is still there it is never short of the
    // truth, only possibly long), and one passed no parameter when the
    // index was built is passed none now (removals replace parameters only).
    for (uint32_t b = 0; b < dfg.num_blocks(); ++b) {
        for (Value p : dfg.block_params(Block(b))) {
            if (from_links ? std::as_const(links_)[p] != kBoth
                           : !is_ssa_param(p) || user_head_[p] == kNone || !std::as_const(gets_param_)[p]) {
                continue;
            }
            scc_nodes_.push_back(p);
            node_of_[p] = static_cast<uint32_t>(scc_nodes_.size());
        }
    }
    const uint32_t n = static_cast<uint32_t>(scc_nodes_.size());
    if (n == 0) return 0;
    adj_start_.assign(n + 1, 0);
    adj_.clear();
    for (uint32_t u = 0; u < n; ++u) {
        adj_start_[u] = static_cast<uint32_t>(adj_.size());
        for_each_incoming(*this, dfg, scc_nodes_[u], [&](Value arg) {
            uint32_t w = node_of_[resolve(dfg, arg)];
            if (w != 0 && w - 1 != u) adj_.push_back(w - 1);
        });
    }
    adj_start_[n] = static_cast<uint32_t>(adj_.size());

    t_index_.assign(n, kNone);
    t_low_.assign(n, 0);
    t_on_stack_.assign(n, 0);
    in_set_.assign(n, 0);
    in_scc_.assign(n, 0);
    set_gen_ = scc_gen_ = 0;
    scc_members_.clear();
    scc_work_.clear();
    inner_.clear();
    for (uint32_t u = 0; u < n; ++u) inner_.push_back(u);
    find_sccs(func, inner_);
    uint32_t removed = 0;
    while (!scc_work_.empty()) {
        const auto [begin, end] = scc_work_.back();
        scc_work_.pop_back();
        scc_.assign(scc_members_.begin() + begin, scc_members_.begin() + end);
        removed += settle_scc(func);
    }
    return removed;
}

// Tarjan's algorithm over the parameter graph restricted to the nodes in
// `set`; pushes the groups on the work stack so that they come off in the
// order found (each after the groups it passes values from). Edges are
// followed through aliases: a node removed since the graph was built
// stands for the value it became.
void SSABuilder::find_sccs(Function& func, const std::vector<uint32_t>& set) {
    DataFlowGraph& dfg = func.dfg;
    ++set_gen_;
    for (uint32_t u : set) {
        in_set_[u] = set_gen_;
        t_index_[u] = kNone;
        t_on_stack_[u] = 0;
    }
    t_stack_.clear();
    t_frames_.clear();
    const size_t first = scc_work_.size();
    uint32_t counter = 0;
    auto visit = [&](uint32_t v) {
        t_index_[v] = t_low_[v] = counter++;
        t_stack_.push_back(v);
        t_on_stack_[v] = 1;
        t_frames_.push_back(TarjanFrame{v, adj_start_[v]});
    };
    for (uint32_t root : set) {
        if (t_index_[root] != kNone) continue;
        visit(root);
        while (!t_frames_.empty()) {
            const uint32_t u = t_frames_.back().node;
            if (t_frames_.back().next_edge < adj_start_[u + 1]) {
                uint32_t w = node_of_[resolve(dfg, scc_nodes_[adj_[t_frames_.back().next_edge++]])];
                if (w == 0 || w - 1 == u || in_set_[w - 1] != set_gen_) continue;
                --w;
                if (t_index_[w] == kNone) {
                    visit(w);
                } else if (t_on_stack_[w]) {
                    t_low_[u] = std::min(t_low_[u], t_index_[w]);
                }
                continue;
            }
            t_frames_.pop_back();
            if (!t_frames_.empty()) {
                const uint32_t parent = t_frames_.back().node;
                t_low_[parent] = std::min(t_low_[parent], t_low_[u]);
            }
            if (t_low_[u] != t_index_[u]) continue;
            if (t_stack_.back() == u) {
                // A group of one: not trivial (the trivial pass removed
                // those, and one made trivial by removing a group goes in
                // the trivial pass that follows), so nothing to settle.
                t_stack_.pop_back();
                t_on_stack_[u] = 0;
                continue;
            }
            const uint32_t begin = static_cast<uint32_t>(scc_members_.size());
            uint32_t w;
            do {
                w = t_stack_.back();
                t_stack_.pop_back();
                t_on_stack_[w] = 0;
                scc_members_.push_back(w);
            } while (w != u);
            scc_work_.push_back({begin, static_cast<uint32_t>(scc_members_.size())});
        }
    }
    std::reverse(scc_work_.begin() + static_cast<std::ptrdiff_t>(first), scc_work_.end());
}

// The group in scc_: if all its members together receive one value from
// outside the group (or none: dead code), they all become that value.
// Otherwise its inner members (those receiving values only from inside
// the group) are searched for smaller groups, settled next.
uint32_t SSABuilder::settle_scc(Function& func) {
    DataFlowGraph& dfg = func.dfg;
    ++scc_gen_;
    for (uint32_t m : scc_) in_scc_[m] = scc_gen_;
    Value outer;
    bool several = false;
    inner_.clear();
    for (uint32_t m : scc_) {
        Value p = scc_nodes_[m];
        bool from_outside = false;
        for_each_incoming(*this, dfg, p, [&](Value arg) {
            Value a = resolve(dfg, arg);
            uint32_t node = node_of_[a];
            if (a == p || (node != 0 && in_scc_[node - 1] == scc_gen_)) return;
            from_outside = true;
            if (a == outer) return;
            if (outer.is_valid()) several = true;
            outer = a;
        });
        if (!from_outside) inner_.push_back(m);
    }
    if (several) {
        if (!inner_.empty()) find_sccs(func, inner_);
        return 0;
    }
    Value first = scc_nodes_[scc_[0]];
    if (!outer.is_valid()) {
        outer = make_zero(func, param_var_[first], dfg.value_type(first), dfg.value_def(first).block());
    }
    for (uint32_t m : scc_) drop_param(func, scc_nodes_[m], outer);
    return static_cast<uint32_t>(scc_.size());
}

}  // namespace heron
