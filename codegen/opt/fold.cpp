// Constant folding: the table is fold.def; see fold.h.
#include "codegen/opt/fold.h"

#include "codegen/interp/float_ops.h"
#include "codegen/interp/int_ops.h"

namespace heron {

unsigned fold_constants(const FoldInput& in, uint64_t out[2]) {
    using namespace interp;
    const uint64_t a = in.k[0], b = in.k[1], c = in.k[2];
    const unsigned B = in.bits, A = in.arg_bits;
    const uint8_t CC = in.cc;
    uint64_t r = 0;
    (void)a, (void)b, (void)c, (void)A, (void)CC;
#define FB(fn, ...) (B == 32 ? fn<float>(__VA_ARGS__) : fn<double>(__VA_ARGS__))
#define FA(fn, ...) (A == 32 ? fn<float>(__VA_ARGS__) : fn<double>(__VA_ARGS__))
    switch (in.op) {
#define HERON_FOLD(Op, expr) \
    case Opcode::Op: out[0] = (expr); return 1;
#define HERON_FOLD_PAIR(Op, expr, flag) \
    case Opcode::Op: out[0] = (expr); out[1] = (flag); return 2;
#define HERON_FOLD_TRAPPING(Op, expr) \
    case Opcode::Op:                  \
        if ((expr) != 0) return 0;    \
        out[0] = r;                   \
        return 1;
#include "codegen/opt/fold.def"
#undef HERON_FOLD
#undef HERON_FOLD_PAIR
#undef HERON_FOLD_TRAPPING
    default: return 0;
    }
#undef FB
#undef FA
}

}  // namespace heron
