// A hint to the processor to start loading the cache line holding `p`, for
// a loop over entities far apart in a large table (one terminator per
// block, say) that the processor would otherwise miss one at a time.
//
// GCC 12 at -O2 dropped __builtin_prefetch from the verifier's dominance
// pass (the call is still there after inlining and gone after value range
// propagation), so on x86-64 and AArch64 the instruction is written out.
#pragma once

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

}  // namespace heron
