// Linear scan over lifetime intervals with splitting, after Wimmer and
// Mössenböck, "Optimized Interval Splitting in a Linear Scan Register
// Allocator" (VEE 2005), on SSA form as in Wimmer and Franz (CGO 2010).
//
// Intervals are taken in order of their start. Each allocatable register has
// at most one active interval (covering the current position), a list of
// inactive ones (assigned to it but in a lifetime hole), and its fixed ranges.
// For the current interval:
//  - try_free: the register that stays free longest (a hint first, then the
//    environment's order). Free to the end: take it; free for a while: take it
//    and split the interval before it stops being free.
//  - allocate_blocked: otherwise either spill the current interval up to its
//    next use that needs a register, or evict the intervals holding the
//    cheapest register. Costs are spill weights: uses weighted by 10^loop
//    depth per instruction of remaining lifetime, so loop-heavy values keep
//    their registers and long idle stretches are spilled first.
// Split positions are chosen like Wimmer's: a block boundary of lower loop
// depth between the last and the next use, else as late as possible, so that
// reloads and stores move out of loops. Each vreg gets at most one spill slot;
// slots are shared by vregs whose lifetimes do not overlap.
//
// Cost: each step looks at the registers of one class and their inactive
// lists; range and use lookups are binary searches, so the whole scan is
// O((intervals + splits) * (registers + inactive) * log n).
#include <algorithm>
#include <cassert>

#include "codegen/regalloc/alloc_state.h"

namespace heron::ra {
namespace {

class Scan {
public:
    explicit Scan(Context::Impl& s) : s_(s), iv_(s.intervals), regs_(s.scan_regs) {}
    std::string run();

private:
    uint32_t eff_from(const Interval& it, uint32_t k) const { return std::max(s_.ranges[k].from, it.start); }
    uint32_t eff_to(const Interval& it, uint32_t k) const { return std::min(s_.ranges[k].to, it.end); }
    void advance_cursor(Interval& it, uint32_t pos) const {
        while (it.cursor < it.range_end && eff_to(it, it.cursor) <= pos) ++it.cursor;
    }
    bool covers(Interval& it, uint32_t pos) const {
        advance_cursor(it, pos);
        return it.cursor < it.range_end && eff_from(it, it.cursor) <= pos;
    }
    uint32_t next_intersection(const Interval& a, const Interval& b) const;
    uint32_t next_fixed(unsigned reg, const Interval& it) const {
        // Fixed ranges are sorted and disjoint: none left that starts before
        // the interval ends means no intersection.
        if (!(fixed_ahead_[reg / kMaxRegsPerClass] & bit(reg))) return kMaxPos;
        const auto& fx = s_.fixed[reg];
        const uint32_t f = s_.fixed_cursor[reg];
        if (f >= fx.size() || fx[f].from >= it.end) return kMaxPos;
        return next_fixed_slow(reg, it);
    }
    uint32_t next_fixed_slow(unsigned reg, const Interval& it) const;
    // Forced inline (as next_unhandled): called per register of the class for
    // each interval, GCC left both as calls, whose entry and exit cost ~20k Ir
    // per call of the allocator at /1000 under callgrind.
    [[gnu::always_inline]] uint32_t free_until(unsigned r, const Interval& it) const;
    static uint64_t bit(unsigned reg) { return uint64_t{1} << (reg % kMaxRegsPerClass); }
    uint32_t first_use_index(const Interval& it, uint32_t pos) const;
    uint32_t first_must(const Interval& it, uint32_t pos) const;
    double density(const Interval& it, uint32_t pos) const;
    uint32_t optimal_split(uint32_t lo, uint32_t hi) const;
    uint32_t split(uint32_t id, uint32_t pos);
    uint32_t location_hint(uint32_t id) const;

    void push(uint32_t id) {
        s_.unhandled.push_back({iv_[id].start, id});
        std::push_heap(s_.unhandled.begin(), s_.unhandled.end(), std::greater<>());
    }
    void advance(unsigned cls, uint32_t pos);
    [[gnu::always_inline]] uint32_t next_unhandled();
    void assign_reg(uint32_t id, unsigned reg) {
        iv_[id].loc = Allocation::reg(PReg::from_index(reg));
        s_.active[reg] = id;
        busy_[reg / kMaxRegsPerClass] |= bit(reg);
        next_event_[reg] = 0;
    }
    void assign_stack(uint32_t id);
    bool try_free(uint32_t id);
    std::string allocate_blocked(uint32_t id);
    bool evictable(const Interval& it, uint32_t p0) const { return first_must(it, p0) >= p0 + 4; }
    void evict(uint32_t id, uint32_t p0);
    void spill(uint32_t id);

    Context::Impl& s_;
    std::vector<Interval>& iv_;
    uint32_t position_ = 0;  // start of the current interval
    uint32_t class_position_[kNumRegClasses] = {};  // where each class's register state was brought to
    std::vector<unsigned> (&regs_)[kNumRegClasses];  // allocatable registers per class (kept in the context)
    size_t initial_next_ = 0;  // s_.initial_order[..initial_next_) have been taken
    // Per class, by hw bit: registers that may have an active or inactive
    // interval or fixed ranges still ahead (a superset: advance() looks only
    // at these and drops the bits it finds stale).
    uint64_t busy_[kNumRegClasses] = {};
    // Per class, by hw bit, supersets that advance() makes exact: registers
    // whose inactive list may be non-empty, and registers whose fixed ranges
    // are not all behind the scan position (so most registers' lists and
    // cursors are never looked at).
    uint64_t inactive_[kNumRegClasses] = {};
    uint64_t fixed_ahead_[kNumRegClasses] = {};
    // Per register: the first position where advance() may change its
    // state (its active interval leaves its range, an inactive one enters
    // one, its fixed cursor moves); 0 after anything else changed it. Set
    // for the registers with fixed ranges when the scan starts and by
    // assign_reg for the others (advance() reads it only for registers in
    // busy_, which only these join).
    uint32_t next_event_[kNumPRegs];
};

uint32_t Scan::next_intersection(const Interval& a, const Interval& b) const {
    uint32_t i = a.cursor, j = b.cursor;
    while (i < a.range_end && j < b.range_end) {
        const uint32_t af = eff_from(a, i), at = eff_to(a, i);
        const uint32_t bf = eff_from(b, j), bt = eff_to(b, j);
        if (at <= bf) {
            ++i;
        } else if (bt <= af) {
            ++j;
        } else {
            return std::max(af, bf);
        }
    }
    return kMaxPos;
}

// First position where `it` meets a fixed range of `reg` that is not its own.
uint32_t Scan::next_fixed_slow(unsigned reg, const Interval& it) const {
    const auto& fx = s_.fixed[reg];
    size_t f = s_.fixed_cursor[reg];
    uint32_t j = it.cursor;
    while (f < fx.size() && j < it.range_end) {
        if (fx[f].owner == it.vreg) {
            ++f;
            continue;
        }
        const uint32_t bf = eff_from(it, j), bt = eff_to(it, j);
        if (fx[f].to <= bf) {
            f = std::lower_bound(fx.begin() + f + 1, fx.end(), bf,
                                 [](const FixedRange& r, uint32_t p) { return r.to <= p; }) -
                fx.begin();
        } else if (bt <= fx[f].from) {
            const uint32_t from = fx[f].from;
            j = static_cast<uint32_t>(std::lower_bound(s_.ranges.begin() + j + 1, s_.ranges.begin() + it.range_end,
                                                       from, [](const Range& r, uint32_t p) { return r.to <= p; }) -
                                      s_.ranges.begin());
        } else {
            return std::max(fx[f].from, bf);
        }
    }
    return kMaxPos;
}

uint32_t Scan::first_use_index(const Interval& it, uint32_t pos) const {
    return static_cast<uint32_t>(std::lower_bound(s_.uses.begin() + it.use_begin, s_.uses.begin() + it.use_end, pos,
                                                  [](const UsePos& u, uint32_t p) { return u.pos < p; }) -
                                 s_.uses.begin());
}

uint32_t Scan::first_must(const Interval& it, uint32_t pos) const {
    const uint32_t k = first_use_index(it, pos);
    if (k >= it.use_end) return kMaxPos;
    if (!s_.scan_tables_ready) build_scan_tables(s_);
    const uint32_t m = s_.next_must[k];
    return m < it.use_end ? s_.uses[m].pos : kMaxPos;
}

double Scan::density(const Interval& it, uint32_t pos) const {
    const uint32_t k = first_use_index(it, pos);
    if (!s_.scan_tables_ready) build_scan_tables(s_);
    const double w = s_.use_weight[it.use_end] - s_.use_weight[k];
    return w / (static_cast<double>(it.end - std::min(pos, it.end)) / 4 + 1);
}

// A Before point in (lo, hi]: the latest block start of the shallowest loop
// depth if that is shallower than hi's block, else hi.
uint32_t Scan::optimal_split(uint32_t lo, uint32_t hi) const {
    assert(hi > lo && hi % 4 == 0 && "split positions are Before points");
    const uint32_t bl = s_.block_of(lo) + 1, bh = s_.block_of(hi);
    if (bl > bh) return hi;
    if (!s_.scan_tables_ready) build_scan_tables(s_);
    const uint32_t nb = s_.func->num_blocks();
    const uint32_t len = bh - bl + 1;
    const uint32_t lvl = 31 - __builtin_clz(len);
    const uint32_t x = s_.rmq[lvl * nb + bl], y = s_.rmq[lvl * nb + bh - (uint32_t{1} << lvl) + 1];
    const uint32_t m = s_.block_depth[y] <= s_.block_depth[x] ? y : x;
    if (s_.block_depth[m] < s_.block_depth[bh]) return s_.block_start(m);
    return hi;
}

// Splits interval `id` at Before point `pos`; the new interval (returned)
// holds everything from `pos` on and has no location yet.
uint32_t Scan::split(uint32_t id, uint32_t pos) {
    Interval it = iv_[id];
    assert(it.start < pos && pos < it.end && pos % 4 == 0 && "split inside the interval, at a Before point");
    const uint32_t k = static_cast<uint32_t>(
        std::lower_bound(s_.ranges.begin() + it.range_begin, s_.ranges.begin() + it.range_end, pos,
                         [](const Range& r, uint32_t p) { return r.to <= p; }) -
        s_.ranges.begin());
    assert(k < it.range_end);
    Interval child = it;
    child.range_begin = child.cursor = k;
    child.loc = Allocation();
    child.prev = id;
    if (s_.ranges[k].from < pos) {
        child.start = pos;
        it.range_end = k + 1;
        it.end = pos;
    } else {
        child.start = s_.ranges[k].from;
        it.range_end = k;
        it.end = std::min(s_.ranges[k - 1].to, it.end);
    }
    const uint32_t u = first_use_index(it, pos);
    child.use_begin = u;
    it.use_end = u;
    const uint32_t cid = static_cast<uint32_t>(iv_.size());
    if (it.next != kNone) iv_[it.next].prev = cid;
    it.next = cid;
    iv_[id] = it;
    iv_.push_back(child);
    ++s_.num_splits;
    return cid;
}

// The register this interval would rather have: a Fixed operand's register
// among its first uses, else its predecessor piece's, else (for a whole vreg)
// the register of the vreg it is copied from or to.
uint32_t Scan::location_hint(uint32_t id) const {
    const Interval& it = iv_[id];
    const unsigned c = static_cast<unsigned>(it.cls);
    for (uint32_t k = it.use_begin; it.hinted && k < it.use_end && k < it.use_begin + 4; ++k) {
        if (s_.uses[k].hint == kNoHint) continue;
        const unsigned r = PReg(s_.uses[k].hint, it.cls).index();
        if (s_.allocatable.contains(PReg::from_index(r))) return r;
    }
    if (it.prev != kNone && iv_[it.prev].loc.is_reg()) return iv_[it.prev].loc.index;
    if (it.prev != kNone) return kNone;
    const uint32_t h = s_.hint_vreg[it.vreg];
    if (h == kNone) return kNone;
    const uint32_t at = s_.hint_pos[it.vreg];
    uint32_t p = s_.first_interval[h];
    for (int steps = 0; p != kNone && steps < 64; ++steps, p = iv_[p].next) {
        if (iv_[p].start > at) break;
        if (at >= iv_[p].end) continue;
        const Allocation loc = iv_[p].loc;
        if (loc.is_reg() && loc.index / kMaxRegsPerClass == c) return loc.index;
        break;
    }
    return kNone;
}

void Scan::assign_stack(uint32_t id) {
    Interval& it = iv_[id];
    uint32_t& slot = s_.spill_slot[it.vreg];
    if (slot == kNone) {
        const uint32_t from = s_.ranges[s_.range_begin[it.vreg]].from;
        const uint32_t to = s_.ranges[s_.range_begin[it.vreg + 1] - 1].to;
        auto& heap = s_.free_slots;
        if (!heap.empty() && heap.front().first <= from) {
            std::pop_heap(heap.begin(), heap.end(), std::greater<>());
            slot = heap.back().second;
            heap.pop_back();
        } else {
            slot = s_.num_slots++;
        }
        heap.push_back({to, slot});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
    it.loc = Allocation::stack(slot);
}

// Brings the active and inactive sets of one class's registers to `pos`.
// Classes never compete for registers, so each is advanced only when one of
// its intervals comes up.
void Scan::advance(unsigned cls, uint32_t pos) {
    if (class_position_[cls] == pos) return;
    class_position_[cls] = pos;
    for (uint64_t bits = busy_[cls]; bits; bits &= bits - 1) {
        const unsigned r = cls * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits));
        const uint64_t rbit = bit(r);
        if (next_event_[r] > pos) continue;  // nothing of r changes before then
        if (s_.active[r] != kNone) {
            Interval& a = iv_[s_.active[r]];
            if (a.end <= pos) {
                s_.active[r] = kNone;
            } else if (!covers(a, pos)) {
                s_.inactive[r].push_back(s_.active[r]);
                inactive_[cls] |= rbit;
                s_.active[r] = kNone;
            }
        }
        if (inactive_[cls] & rbit) {
            auto& in = s_.inactive[r];
            for (size_t k = 0; k < in.size();) {
                Interval& j = iv_[in[k]];
                if (j.end <= pos || covers(j, pos)) {
                    if (j.end > pos) {
                        assert(s_.active[r] == kNone && "two intervals in one register");
                        s_.active[r] = in[k];
                    }
                    in[k] = in.back();
                    in.pop_back();
                    continue;
                }
                ++k;
            }
            if (in.empty()) inactive_[cls] &= ~rbit;
        }
        uint32_t event = kMaxPos;
        if (fixed_ahead_[cls] & rbit) {
            const auto& fx = s_.fixed[r];
            uint32_t& fc = s_.fixed_cursor[r];
            while (fc < fx.size() && fx[fc].to <= pos) ++fc;
            if (fc == fx.size()) {
                fixed_ahead_[cls] &= ~rbit;
            } else {
                event = fx[fc].to;
            }
        }
        if (s_.active[r] == kNone && !((inactive_[cls] | fixed_ahead_[cls]) & rbit)) {
            busy_[cls] &= ~rbit;
            continue;
        }
        // The intervals' cursors are at pos now: the active one covers pos
        // up to the end of its current range, the inactive ones start their
        // next range after pos (and end after it).
        if (s_.active[r] != kNone) {
            const Interval& a = iv_[s_.active[r]];
            event = std::min(event, eff_to(a, a.cursor));
        }
        if (inactive_[cls] & rbit)
            for (uint32_t j : s_.inactive[r]) event = std::min(event, eff_from(iv_[j], iv_[j].cursor));
        next_event_[r] = event;
    }
}

// Where register r stops being free for `it` (0: taken now).
inline uint32_t Scan::free_until(unsigned r, const Interval& it) const {
    if (s_.active[r] != kNone) return 0;
    uint32_t fu = next_fixed(r, it);
    if (!(inactive_[static_cast<unsigned>(it.cls)] & bit(r))) return fu;  // no inactive intervals
    for (uint32_t j : s_.inactive[r]) {
        if (fu <= it.start) break;
        fu = std::min(fu, next_intersection(iv_[j], it));
    }
    return fu;
}

bool Scan::try_free(uint32_t id) {
    const Interval& it = iv_[id];
    const unsigned cls = static_cast<unsigned>(it.cls);
    const auto& regs = regs_[cls];
    // The hinted register if it is free to the end, else the first such in
    // the environment's order, else the one free longest (the hint on ties).
    const uint32_t hint = location_hint(id);
    const bool hint_ok = hint != kNone && hint / kMaxRegsPerClass == cls && s_.allocatable.contains(PReg::from_index(hint));
    if (hint_ok && free_until(hint, it) >= it.end) {
        assign_reg(id, hint);
        return true;
    }
    uint32_t free_until_of[kMaxRegsPerClass];
    for (size_t k = 0; k < regs.size(); ++k) {
        free_until_of[k] = free_until(regs[k], it);
        if (free_until_of[k] >= it.end) {
            assign_reg(id, regs[k]);
            return true;
        }
    }
    size_t best = regs.size();
    uint32_t max_fu = 0;
    for (size_t k = 0; k < regs.size(); ++k) {
        if (free_until_of[k] > max_fu || (free_until_of[k] == max_fu && regs[k] == hint && max_fu > 0)) {
            max_fu = free_until_of[k];
            best = k;
        }
    }
    // Not free to the end (that was taken above): split before it stops being free.
    if (best == regs.size() || free_until_of[best] <= it.start) return false;
    const uint32_t limit = floor_before(free_until_of[best]);
    if (limit <= it.start) return false;
    const uint32_t child = split(id, optimal_split(it.start, limit));
    assign_reg(id, regs[best]);
    push(child);
    return true;
}

std::string Scan::allocate_blocked(uint32_t id) {
    const Interval& it = iv_[id];
    const uint32_t must = first_must(it, it.start);
    if (must == kMaxPos && first_use_index(it, it.start) == it.use_end) {
        assign_stack(id);  // no use left: only passing through
        return {};
    }
    const uint32_t p0 = floor_before(it.start);
    const auto& regs = regs_[static_cast<unsigned>(it.cls)];
    size_t best = regs.size();
    double best_cost = 0;
    uint32_t best_block = 0;
    for (size_t k = 0; k < regs.size(); ++k) {
        const unsigned r = regs[k];
        const uint32_t block = next_fixed(r, it);
        if (floor_before(block) <= it.start) continue;
        double cost = 0;
        bool ok = true;
        if (s_.active[r] != kNone) {
            const Interval& a = iv_[s_.active[r]];
            ok = evictable(a, p0);
            cost += density(a, p0);
        }
        for (uint32_t j : s_.inactive[r]) {
            if (!ok) break;
            const Interval& in = iv_[j];
            if (next_intersection(in, it) >= block) continue;
            ok = evictable(in, p0);
            cost += density(in, p0);
        }
        if (!ok) continue;
        if (best == regs.size() || cost < best_cost || (cost == best_cost && block > best_block)) {
            best = k;
            best_cost = cost;
            best_block = block;
        }
    }
    // Uses that would merely like a register (Any operands, copies into
    // fixed registers) take one only from intervals of lower weight.
    if (must == kMaxPos) {
        if (best == regs.size() || density(it, it.start) <= best_cost) {
            assign_stack(id);
            return {};
        }
    }
    const uint32_t must_before = floor_before(must);
    if (must != kMaxPos && must_before > it.start && (best == regs.size() || density(it, it.start) <= best_cost)) {
        const uint32_t child = split(id, optimal_split(it.start, must_before));
        assign_stack(id);
        push(child);
        return {};
    }
    if (best == regs.size())
        return "inst" + std::to_string(it.start / 4) + ": more values need registers at once than there are";

    const unsigned r = regs[best];
    if (s_.active[r] != kNone) {
        const uint32_t a = s_.active[r];
        s_.active[r] = kNone;
        evict(a, p0);
    }
    auto& in = s_.inactive[r];
    for (size_t k = 0; k < in.size();) {
        if (next_intersection(iv_[in[k]], iv_[id]) >= best_block) {
            ++k;
            continue;
        }
        const uint32_t j = in[k];
        in[k] = in.back();
        in.pop_back();
        evict(j, p0);
    }
    assign_reg(id, r);
    if (best_block < iv_[id].end) {
        const uint32_t child = split(id, optimal_split(iv_[id].start, floor_before(best_block)));
        push(child);
    }
    return {};
}

// Takes interval `id` out of its register from p0 on (a Before point at or
// before the scan position): the part before stays, the rest is spilled.
void Scan::evict(uint32_t id, uint32_t p0) {
    const Interval& it = iv_[id];
    if (it.start >= p0) {
        iv_[id].loc = Allocation();
        spill(id);
        return;
    }
    // Store as early as the last use allows, out of loops where possible.
    const uint32_t k = first_use_index(it, p0);
    const uint32_t last_use = k > it.use_begin ? s_.uses[k - 1].pos : it.start;
    const uint32_t lo = std::max(it.start, last_use);
    const uint32_t at = lo < p0 ? optimal_split(lo, p0) : p0;
    spill(split(id, at));
}

// Puts an unassigned interval on the stack up to its next use that needs a
// register; the rest goes back to the unhandled queue.
void Scan::spill(uint32_t id) {
    const Interval& it = iv_[id];
    const uint32_t must = first_must(it, it.start);
    if (must == kMaxPos) {
        assign_stack(id);
        return;
    }
    const uint32_t hi = floor_before(must);
    const uint32_t lo = std::max(it.start, position_);
    if (hi <= lo) {
        assert(it.start > position_ && "an evicted interval needs its register now");
        push(id);
        return;
    }
    const uint32_t child = split(id, optimal_split(lo, hi));
    assign_stack(id);
    push(child);
}

// The interval that starts first: whole vregs come from a sorted array,
// split-off pieces from a heap. Returns kNone when both are empty.
inline uint32_t Scan::next_unhandled() {
    const auto& order = s_.initial_order;
    auto& heap = s_.unhandled;
    const bool from_order =
        initial_next_ < order.size() &&
        (heap.empty() || order[initial_next_] < (uint64_t{heap.front().first} << 32 | heap.front().second));
    if (from_order) return static_cast<uint32_t>(order[initial_next_++]);
    if (heap.empty()) return kNone;
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const uint32_t id = heap.back().second;
    heap.pop_back();
    return id;
}

std::string Scan::run() {
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        class_position_[c] = kNone;
        for (uint64_t bits = s_.scan_dirty.bits[c]; bits; bits &= bits - 1) {
            const unsigned r = c * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits));
            s_.active[r] = kNone;
            s_.inactive[r].clear();
        }
        s_.scan_dirty.bits[c] = ~uint64_t{0};  // until the scan completes
        busy_[c] = s_.fixed_used.bits[c];  // fixed cursors are 0 (liveness reset them)
        for (uint64_t bits = busy_[c]; bits; bits &= bits - 1)
            next_event_[c * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits))] = 0;
        fixed_ahead_[c] = s_.fixed_used.bits[c];
        inactive_[c] = 0;  // the lists of the registers reset above, and of all others, are empty
    }
    s_.free_slots.clear();
    s_.num_slots = 0;
    s_.num_splits = 0;
    s_.unhandled.clear();
    // Intervals are created in vreg order; order them by start (ties by
    // id), as keys start << 32 | id. An insertion sort of the keys does it
    // for a few intervals, and for many when vregs are numbered nearly in
    // layout order (it moves few keys then): it is given up for a counting
    // sort by instruction (then an insertion sort within each instruction;
    // linear) once it has moved two keys per interval. Between the two, the
    // counting sort is cheaper (measured on the kernels, whose vregs are
    // not in layout order): the insertion sort stops at the first move.
    auto& order = s_.initial_order;
    const uint32_t n = static_cast<uint32_t>(iv_.size());
    order.resize(n);
    uint64_t* keys = order.data();
    for (uint32_t id = 0; id < n; ++id) keys[id] = uint64_t{iv_[id].start} << 32 | id;
    // Sorts the keys by insertion; false (the keys left in some order) once
    // it would move more than `budget` of them.
    auto insertion_sort = [&](uint64_t budget) {
        for (uint32_t k = 1; k < n; ++k) {
            const uint64_t x = keys[k];
            uint32_t j = k;
            for (; j > 0 && keys[j - 1] > x; --j) {
                if (budget-- == 0) {
                    keys[j] = x;
                    return false;
                }
                keys[j] = keys[j - 1];
            }
            keys[j] = x;
        }
        return true;
    };
    if (!insertion_sort(n <= 32 ? uint64_t{n} * n : n >= 512 ? 2 * uint64_t{n} : 0)) {
        auto& count = s_.work;
        const uint32_t ni = s_.func->num_insts();
        count.assign(ni + 1, 0);
        for (const Interval& it : iv_) ++count[it.start / 4 + 1];
        for (uint32_t i = 0; i < ni; ++i) count[i + 1] += count[i];
        for (uint32_t id = 0; id < n; ++id) keys[count[iv_[id].start / 4]++] = uint64_t{iv_[id].start} << 32 | id;
        insertion_sort(~uint64_t{0});
    }
    initial_next_ = 0;
    const bool full_advance = s_.test_full_advance;

    for (uint32_t id = next_unhandled(); id != kNone; id = next_unhandled()) {
        const uint32_t pos = iv_[id].start;
        assert(pos >= position_ && "the scan never goes back");
        if (full_advance) [[unlikely]] {  // test hook: no next-event skips
            for (unsigned r = 0; r < kNumPRegs; ++r) next_event_[r] = 0;
        }
        advance(static_cast<unsigned>(iv_[id].cls), pos);
        position_ = pos;
        advance_cursor(iv_[id], pos);
        if (regs_[static_cast<unsigned>(iv_[id].cls)].empty()) {
            if (first_must(iv_[id], pos) != kMaxPos) return "no allocatable registers for a value that needs one";
            assign_stack(id);
            continue;
        }
        if (try_free(id)) continue;
        std::string err = allocate_blocked(id);
        if (!err.empty()) return err;
    }
    // Only registers still marked busy can hold intervals.
    for (unsigned c = 0; c < kNumRegClasses; ++c) s_.scan_dirty.bits[c] = busy_[c];
    return {};
}

}  // namespace

std::string linear_scan(Context::Impl& s) { return Scan(s).run(); }

}  // namespace heron::ra
