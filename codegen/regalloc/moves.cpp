// Parallel-move sequencing; see moves.h for the method.
#include "codegen/regalloc/moves.h"

#include <algorithm>
#include <cassert>

namespace heron::ra {
namespace {

uint64_t key_of(Allocation a) { return uint64_t{static_cast<uint8_t>(a.kind)} << 32 | a.index; }

// Sets of a few moves (the usual case) are searched linearly, larger ones
// are sorted and searched by bisection.
constexpr size_t kLinear = 16;

template <class Vec>
auto* find_key(Vec& v, uint64_t key, bool sorted) {
    if (!sorted) {
        for (auto& e : v)
            if (e.first == key) return &e;
        return static_cast<decltype(&v[0])>(nullptr);
    }
    auto it = std::lower_bound(v.begin(), v.end(), key, [](const auto& e, uint64_t k) { return e.first < k; });
    return it != v.end() && it->first == key ? &*it : nullptr;
}

}  // namespace

void ParallelMoves::resolve(const MachineEnv& env, ProgPoint point, uint32_t& emergency_slot, uint32_t& num_slots,
                            std::vector<Edit>& out) {
    // Both classes form one graph: spill slots are shared between classes, so
    // a float move may read the slot an int move writes.
    const uint32_t n = static_cast<uint32_t>(moves_.size());  // moves 0..n-1 are pending
    if (n == 0) return;
    auto scratch_of = [&](RegClass cls) { return Allocation::reg(env.scratch[static_cast<unsigned>(cls)]); };
    auto emit = [&](Allocation from, Allocation to, RegClass cls) { ParallelMoves::emit(env, point, from, to, cls, out); };

    if (moves_.size() == 1) {  // nothing to order
        assert(moves_[0].from != scratch_of(moves_[0].cls) && moves_[0].to != scratch_of(moves_[0].cls) &&
               "the scratch register is no input location");
        emit(moves_[0].from, moves_[0].to, moves_[0].cls);
        moves_.clear();
        return;
    }
    by_dest_.clear();
    readers_.clear();
    const bool sorted = n > kLinear;
    for (uint32_t m = 0; m < n; ++m) {
        assert(moves_[m].from != scratch_of(moves_[m].cls) && moves_[m].to != scratch_of(moves_[m].cls) &&
               "the scratch register is no input location");
        by_dest_.push_back({key_of(moves_[m].to), m});
        if (!sorted) {
            if (auto* r = find_key(readers_, key_of(moves_[m].from), false)) {
                ++r->second;
                continue;
            }
        }
        readers_.push_back({key_of(moves_[m].from), 1});
    }
    if (sorted) {
        std::sort(by_dest_.begin(), by_dest_.end());
        assert(std::adjacent_find(by_dest_.begin(), by_dest_.end(),
                                  [](const auto& a, const auto& b) { return a.first == b.first; }) == by_dest_.end() &&
               "two moves write one location");
        std::sort(readers_.begin(), readers_.end());
        size_t w = 0;
        for (size_t r = 0; r < readers_.size(); ++r) {
            if (w > 0 && readers_[w - 1].first == readers_[r].first) {
                ++readers_[w - 1].second;
                continue;
            }
            readers_[w++] = readers_[r];
        }
        readers_.resize(w);
    }

    ready_.clear();
    for (uint32_t m = 0; m < n; ++m) {
        auto* r = find_key(readers_, key_of(moves_[m].to), sorted);
        if (!r || r->second == 0) ready_.push_back(m);
    }

    size_t remaining = n;
    uint32_t scan = 0;  // moves_[..scan) are all done
    for (;;) {
        while (!ready_.empty()) {
            uint32_t m = ready_.back();
            ready_.pop_back();
            Move& mv = moves_[m];
            emit(mv.from, mv.to, mv.cls);
            mv.done = true;
            --remaining;
            auto* r = find_key(readers_, key_of(mv.from), sorted);
            if (!r || --r->second != 0) continue;
            auto* d = find_key(by_dest_, key_of(mv.from), sorted);
            if (d && !moves_[d->second].done) ready_.push_back(d->second);
        }
        if (remaining == 0) break;

        // Only cycles remain: save one destination, redirect its readers.
        while (moves_[scan].done) ++scan;
        const uint32_t m = scan;
        const Allocation saved = moves_[m].to;
        RegClass cls = moves_[m].cls;  // the class of the value in `saved`: that of its readers
        bool stack_to_stack = false;
        for (uint32_t i = scan; i < n; ++i) {
            const Move& mv = moves_[i];
            if (mv.done) continue;
            if (mv.from == saved) cls = mv.cls;
        }
        for (uint32_t i = scan; i < n; ++i) {
            const Move& mv = moves_[i];
            if (!mv.done && mv.cls == cls && mv.from.is_stack() && mv.to.is_stack()) stack_to_stack = true;
        }
        const Allocation scratch = scratch_of(cls);
        Allocation temp = scratch;
        if (stack_to_stack) {
            if (emergency_slot == kNoSlot) emergency_slot = num_slots++;
            temp = Allocation::stack(emergency_slot);
            if (saved.is_stack()) {
                out.push_back({point, saved, scratch, cls});
                out.push_back({point, scratch, temp, cls});
            } else {
                out.push_back({point, saved, temp, cls});
            }
        } else {
            out.push_back({point, saved, temp, cls});
        }
        for (uint32_t i = scan; i < n; ++i) {
            Move& mv = moves_[i];
            if (!mv.done && mv.from == saved) mv.from = temp;
        }
        find_key(readers_, key_of(saved), sorted)->second = 0;
        ready_.push_back(m);
    }
    moves_.clear();
}

}  // namespace heron::ra
