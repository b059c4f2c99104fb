// Counted-loop recognition (seed 000, issue #5): which loops count an
// induction variable through a closed range, in block-parameter form.
//
// A loop with header h is *counted* when
//   - h ends in `brif c, X, Y` where one target is in the loop and the other
//     is not, and c = `icmp cc x, y`;
//   - one of x, y is a parameter i of h and the other, b, is loop-invariant
//     (defined outside the loop, or an iconst anywhere);
//   - normalizing (b cc i to i swap(cc) b, and the exit-on-true polarity to
//     the inverse condition) the loop continues while `i < b` or `i <= b`,
//     signed or unsigned (slt, sle, ult, ule);
//   - every edge from outside the loop into h passes the same value a for i
//     (the preheader's, in loop form);
//   - every back edge passes the same value n = `iadd i, s` (either operand
//     order) with s an iconst, 0 < s < 2^(B-1). SSA makes n's definition
//     dominate every back edge, so `continue` paths are fine as long as
//     they carry n;
//   - the increment cannot wrap before the test fails: with s = 1 and `<`
//     never (i <= b - 1 <= MAX - 1); otherwise only when b is a constant with
//     b + s - 1 <= MAX (`<`) or b + s <= MAX (`<=`), MAX of the compare's
//     signedness. `i <= b` with s = 1 and a non-constant b is counted, but
//     flagged: for b = MAX the test never fails (the loop has no exit
//     through it) — `no_exit_at_max`.
// The range is the set of values i takes at the header test that continue:
// [a, b-1] for `<`, [a, b] for `<=`, read with the compare's signedness and
// empty when a > b-1 (resp. a > b). `<` against the type's minimum (signed
// MIN or unsigned 0) is empty whatever a is: b - 1 is never computed.
// Every other loop is *conditional*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/analysis/loops.h"
#include "codegen/ir/function.h"

namespace heron {

struct CountedLoop {
    Loop loop;
    Value iv;          // the header parameter i
    uint32_t iv_index = 0;
    Value init;        // a
    Value bound;       // b
    Value next;        // n = i + step
    uint64_t step = 1;
    IntCC cond = IntCC::Slt;  // i cond b continues: Slt, Sle, Ult or Ule
    Inst compare;      // the icmp
    Inst branch;       // the header's brif
    bool no_exit_at_max = false;

    bool inclusive() const { return cond == IntCC::Sle || cond == IntCC::Ule; }
    bool is_signed() const { return cond == IntCC::Slt || cond == IntCC::Sle; }
};

class CountedLoops {
public:
    /// Recognizes the counted loops of `func`; `loops` must be current.
    void compute(const Function& func, const LoopAnalysis& loops);
    void clear();
    bool is_valid() const { return valid_; }

    /// The counted-loop facts of `l`, or null for a conditional loop.
    const CountedLoop* get(Loop l) const {
        return l.index() < index_.size() && index_[l.index()] != kNone ? &counted_[index_[l.index()]] : nullptr;
    }
    const std::vector<CountedLoop>& all() const { return counted_; }

    /// "counted v3 in [v0, v1-1] step 1 slt", "counted v3 in [0, 9] step 1
    /// slt (10 iterations)", "counted v3 in [v0, v1] step 1 ule (no exit when
    /// v1 = MAX)", "counted v3 in [5, 4] step 1 slt (empty)", or
    /// "conditional". Constants print as their (signed or unsigned) value.
    std::string describe(const Function& func, Loop l) const;

    /// How many times a loop `i cond b` from `a` by `step` runs its body,
    /// for B-bit constants a and b (their bit patterns): 0 for an empty
    /// range. `cond` is Slt, Sle, Ult or Ule; the step must be one the
    /// recognizer accepts for that bound. At most 2^B - 1.
    static uint64_t trip_count(uint64_t a, uint64_t b, unsigned width, uint64_t step, IntCC cond);

private:
    static constexpr uint32_t kNone = ~0u;
    std::optional<CountedLoop> recognize(const Function& func, const LoopAnalysis& loops, Loop l) const;

    std::vector<CountedLoop> counted_;
    std::vector<uint32_t> index_;  // by loop
    bool valid_ = false;
};

}  // namespace heron
