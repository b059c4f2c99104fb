// A hint to the processor to start loading the cache line holding `p`, for
// a loop over entities far apart in a large table (one terminator per
// block, say) that the processor would otherwise miss one at a time; and
// the loop over every block's terminator that the verifier and the block
// order make in a large function.
//
// GCC 12 at -O2 dropped __builtin_prefetch from the verifier's dominance
// pass (the call is still there after inlining and gone after value range
// propagation), so on x86-64 and AArch64 the instruction is written out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "codegen/ir/function.h"

namespace heron {

inline void prefetch(const void* p) {
#if defined(__GNUC__) && defined(__x86_64__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) && defined(__aarch64__)
    asm volatile("prfm pldl1keep, %0" : : "Q"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p);
#endif
}

/// Calls f(b) for every block of `func` in layout order (blocks numbered
/// within the DFG only), with the terminator of the block eight places on
/// prefetched: for a pass over a large function's terminators, which are
/// far apart (a cache line each), where the work per block is too long for
/// the processor to run ahead to the next misses by itself. `order` is
/// scratch for the layout order (its capacity kept by the caller).
template <typename F>
void for_each_block_prefetching_terminators(const Function& func, std::vector<Block>& order, F&& f) {
    const uint32_t nb = func.dfg.num_blocks(), ni = func.dfg.num_insts();
    order.clear();
    for (Block b : func.layout.blocks()) {
        if (b.index() < nb) order.push_back(b);
    }
    const InstructionData* insts = func.dfg.inst_data();
    auto fetch = [&](Block b) {
        const PackedOption<Inst> last = func.layout.last_inst(b);
        if (last.has_value() && last.value().index() < ni) prefetch(insts + last.value().index());
    };
    constexpr size_t kAhead = 8;
    const size_t n = order.size();
    for (size_t k = 0; k < std::min(kAhead, n); ++k) fetch(order[k]);
    for (size_t k = 0; k < n; ++k) {
        if (k + kAhead < n) fetch(order[k + kAhead]);
        f(order[k]);
    }
}

}  // namespace heron
