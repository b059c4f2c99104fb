// A loop with break and continue, built with the FunctionBuilder and loop
// scopes, run in the reference interpreter:
//
//   fn odd_sum(n: i32, limit: i32) -> i32 {
//       sum = 0; i = 0
//       while i < n {
//           i += 1
//           if i % 2 == 0 { continue }      // every continue meets in the latch
//           if sum + i > limit { break }    // every break goes to the exit
//           sum += i
//       }
//       return sum
//   }
//
// and then compiled by the JIT module and called as a native function.
#include <cstdio>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "frontend/loops.h"
#include "jit/jit_module.h"

using namespace heron;

namespace {

int32_t reference(int32_t n, int32_t limit) {
    int32_t sum = 0;
    for (int32_t i = 0; i < n;) {
        ++i;
        if (i % 2 == 0) continue;
        if (sum + i > limit) break;
        sum += i;
    }
    return sum;
}

}  // namespace

int main() {
    Signature sig;
    sig.params = {AbiParam(types::I32), AbiParam(types::I32)};
    sig.returns = {AbiParam(types::I32)};
    Function f(ExternalName::testcase("odd_sum"), sig);
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    LoopScopes loops;

    Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    Variable n = b.declare_var(types::I32), limit = b.declare_var(types::I32);
    Variable sum = b.declare_var(types::I32), i = b.declare_var(types::I32);
    b.def_var(n, b.block_params(entry)[0]);
    b.def_var(limit, b.block_params(entry)[1]);
    b.def_var(sum, b.ins().iconst(types::I32, 0));
    b.def_var(i, b.ins().iconst(types::I32, 0));

    (void)loops.begin_loop(b);
    (void)loops.loop_while(b, b.ins().icmp(IntCC::Slt, b.use_var(i), b.use_var(n)));
    b.def_var(i, b.ins().iadd_imm(b.use_var(i), 1));
    Value odd = b.ins().band(b.use_var(i), b.ins().iconst(types::I32, 1));
    (void)loops.continue_if(b, b.ins().icmp_imm(IntCC::Eq, odd, 0));
    Value next = b.ins().iadd(b.use_var(sum), b.use_var(i));
    (void)loops.break_if(b, b.ins().icmp(IntCC::Sgt, next, b.use_var(limit)));
    b.def_var(sum, next);
    (void)loops.end_loop(b);
    b.ins().return_({b.use_var(sum)});

    // Misuse anywhere above (including the ignored loop results) surfaces here.
    if (auto r = b.finalize(); !r) {
        std::fprintf(stderr, "build failed: %s\n", r.error().message.c_str());
        return 1;
    }
    VerifierErrors errors;
    if (!verify_function(f, errors)) {
        std::fprintf(stderr, "%s", format_verifier_errors(errors).c_str());
        return 1;
    }
    std::printf("%s\n", print_function(f).c_str());

    Interpreter interp;
    int failures = 0;
    const int32_t cases[][2] = {{0, 100}, {1, 100}, {10, 100}, {10, 10}, {100, 50}, {7, 0}};
    for (auto [nn, lim] : cases) {
        DataValue args[] = {DataValue::i32(nn), DataValue::i32(lim)};
        InterpOutcome out = interp.call(f, args);
        if (out.kind != InterpOutcome::Kind::Return) {
            std::fprintf(stderr, "odd_sum(%d, %d): %s\n", nn, lim, out.message.c_str());
            return 1;
        }
        int32_t got = static_cast<int32_t>(out.values[0].as_signed());
        std::printf("odd_sum(%3d, %3d) = %4d (expected %d)\n", nn, lim, got, reference(nn, lim));
        failures += got != reference(nn, lim);
    }

    JITModule jit;
    auto id = jit.declare_function("odd_sum", Linkage::Export, f.signature);
    if (!id) {
        std::fprintf(stderr, "JIT: %s\n", id.error().message.c_str());
        return 1;
    }
    for (auto err : {jit.define_function(id.value(), f), jit.finalize_definitions()}) {
        if (err) {
            std::fprintf(stderr, "JIT: %s\n", err->message.c_str());
            return 1;
        }
    }
    auto* odd_sum = jit.get_function<int32_t(int32_t, int32_t)>(id.value());
    for (int32_t nn = 0; nn < 40; ++nn) {
        for (int32_t lim : {0, 10, 100, 1000}) failures += odd_sum(nn, lim) != reference(nn, lim);
    }
    std::printf("JIT: odd_sum(1000, 100000) = %d\n", odd_sum(1000, 100000));
    return failures ? 1 : 0;
}
