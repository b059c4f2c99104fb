// Sequencing of parallel moves: a set of simultaneous copies (every source is
// read before any destination is written) turned into an ordered list of
// single moves that a machine can execute one at a time.
//
// The method is the usual one for SSA destruction and register-allocator
// resolution (e.g. Boissinot et al., "Revisiting Out-of-SSA Translation for
// Correctness, Code Quality, and Efficiency", CGO 2009; Hack's
// register-transfer graphs): a move whose destination no pending move still
// reads can go; when only cycles remain, one destination is saved to a
// temporary and the moves reading it are redirected there. Because every
// destination is written by one move, the moves form trees hanging off at
// most one cycle each, so one temporary at a time suffices.
//
// Targets forbid memory-to-memory moves, so a stack->stack copy goes through
// the class's scratch register. When a cycle must be broken while such a copy
// is still pending, the scratch register cannot also hold the saved value; the
// temporary is then an extra spill slot (the "emergency" slot), allocated on
// first use. Both register classes are sequenced together, as they share the
// spill slots.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

#include "codegen/regalloc/regalloc.h"

namespace heron::ra {

inline constexpr uint32_t kNoSlot = ~uint32_t{0};

/// Sorts `order`, entries of a 32-bit key above a 32-bit index, into
/// increasing order; with the indices increasing as built, that is a sort
/// by key that keeps equal keys in the order they were added. The resolver
/// adds its moves in a few ascending runs (the operands' in instruction
/// order, then the edges', then the stores'): from 32 entries, up to
/// kMergedRuns runs are merged, in linear time. Otherwise a comparison sort
/// for short lists; from `radix_from` entries a least-significant-digit
/// radix sort over the key's 11-bit digits (only as many as the largest key
/// has), linear where a comparison sort is not: a 1M-instruction function
/// has hundreds of thousands of moves. `tmp` is scratch (its capacity
/// kept).
inline void sort_keyed_indices(std::vector<uint64_t>& order, std::vector<uint64_t>& tmp, size_t radix_from = 1024) {
    if (order.size() < 32) {  // an insertion sort, in effect
        std::sort(order.begin(), order.end());
        return;
    }
    constexpr size_t kMergedRuns = 8;
    size_t run_end[kMergedRuns];
    size_t runs = 0;
    for (size_t i = 1; i <= order.size() && runs <= kMergedRuns; ++i) {
        if (i == order.size() || order[i] < order[i - 1]) {
            if (runs < kMergedRuns) run_end[runs] = i;
            ++runs;
        }
    }
    if (runs <= kMergedRuns) {
        // Adjacent runs merged pairwise until one is left.
        tmp.resize(order.size());
        while (runs > 1) {
            size_t from = 0, merged = 0;
            for (size_t r = 0; r < runs; r += 2) {
                const size_t mid = run_end[r], end = r + 1 < runs ? run_end[r + 1] : mid;
                std::merge(order.begin() + from, order.begin() + mid, order.begin() + mid, order.begin() + end,
                           tmp.begin() + from);
                run_end[merged++] = end;
                from = end;
            }
            order.swap(tmp);
            runs = merged;
        }
        return;
    }
    if (order.size() < radix_from) {
        std::sort(order.begin(), order.end());
        return;
    }
    uint64_t key_bits = 0;
    for (uint64_t x : order) key_bits |= x >> 32;
    constexpr unsigned kDigit = 11;
    constexpr uint32_t kMask = (1u << kDigit) - 1;
    tmp.resize(order.size());
    // Each pass is stable, so the index order within a key survives them.
    for (unsigned d = 0; (key_bits >> d) != 0; d += kDigit) {
        const unsigned shift = 32 + d;
        uint32_t start[kMask + 1] = {};
        for (uint64_t x : order) ++start[(x >> shift) & kMask];
        uint32_t sum = 0;
        for (uint32_t& c : start) {
            const uint32_t n = c;
            c = sum;
            sum += n;
        }
        uint64_t* out = tmp.data();
        for (uint64_t x : order) out[start[(x >> shift) & kMask]++] = x;
        order.swap(tmp);
    }
}

class ParallelMoves {
public:
    void clear() { moves_.clear(); }
    bool empty() const { return moves_.empty(); }
    /// Adds `from -> to`. Destinations must be distinct; a move onto itself
    /// is dropped.
    void add(Allocation from, Allocation to, RegClass cls) {
        assert(from.kind != Allocation::Kind::None && to.kind != Allocation::Kind::None && "move of no location");
        if (from == to) return;
        moves_.push_back({from, to, cls, false});
    }

    /// Appends the sequential edits at `point` to `out`. `emergency_slot` is
    /// the extra slot (kNoSlot until one is needed, then taken from
    /// `num_slots`). Leaves the set empty.
    void resolve(const MachineEnv& env, ProgPoint point, uint32_t& emergency_slot, uint32_t& num_slots,
                 std::vector<Edit>& out);

    /// Appends the edits of one move `from -> to` (through the class's
    /// scratch register when both are spill slots): what resolve() does
    /// with each move it has ordered, and with a set of one move.
    static void emit(const MachineEnv& env, ProgPoint point, Allocation from, Allocation to, RegClass cls,
                     std::vector<Edit>& out) {
        if (from.is_stack() && to.is_stack()) {
            const Allocation scratch = Allocation::reg(env.scratch[static_cast<unsigned>(cls)]);
            out.push_back({point, from, scratch, cls});
            out.push_back({point, scratch, to, cls});
            return;
        }
        out.push_back({point, from, to, cls});
    }

private:
    struct Move {
        Allocation from, to;
        RegClass cls;
        bool done;
    };
    std::vector<Move> moves_;
    std::vector<uint32_t> ready_;
    std::vector<std::pair<uint64_t, uint32_t>> by_dest_;  // (location key, move index)
    std::vector<std::pair<uint64_t, uint32_t>> readers_;  // (location key, pending readers)
};

}  // namespace heron::ra
