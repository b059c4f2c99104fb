// Builds two Fibonacci functions with the FunctionBuilder and runs them in
// the reference interpreter (the JIT once it exists):
//
//   fn fib_rec(n: i64) -> i64 { if n < 2 { return n } return fib_rec(n-1) + fib_rec(n-2) }
//   fn fib_loop(n: i64) -> i64 { a = 0; b = 1; while n > 0 { t = a + b; a = b; b = t; n -= 1 } return a }
//
// The loop uses variables and a loop scope: the SSA builder turns `a`, `b`
// and `n` into block parameters of the loop header on its own. Both are
// then compiled by the JIT module and called as native functions.
#include <cstdio>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "frontend/loops.h"
#include "jit/jit_module.h"

using namespace heron;

namespace {

Signature i64_to_i64() {
    Signature sig;
    sig.params.push_back(AbiParam(types::I64));
    sig.returns.push_back(AbiParam(types::I64));
    return sig;
}

bool build_fib_rec(Function& f, FunctionBuilderContext& ctx) {
    f = Function(ExternalName::testcase("fib_rec"), i64_to_i64());
    FunctionBuilder b(f, ctx);
    SigRef sig = b.import_signature(i64_to_i64());
    FuncRef self = b.import_function(ExtFuncData{ExternalName::testcase("fib_rec"), sig, true});

    Block entry = b.create_block(), small = b.create_block(), big = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    Value n = b.block_params(entry)[0];
    b.ins().brif(b.ins().icmp_imm(IntCC::Slt, n, 2), small, big);

    b.switch_to_block(small);
    b.seal_block(small);
    b.ins().return_({n});

    b.switch_to_block(big);
    b.seal_block(big);
    Value n1 = b.ins().iadd_imm(n, -1);
    Value n2 = b.ins().iadd_imm(n, -2);
    Value r1 = f.dfg.first_result(b.ins().call(self, std::span<const Value>(&n1, 1)));
    Value r2 = f.dfg.first_result(b.ins().call(self, std::span<const Value>(&n2, 1)));
    b.ins().return_({b.ins().iadd(r1, r2)});

    auto r = b.finalize();
    if (!r) std::fprintf(stderr, "fib_rec: %s\n", r.error().message.c_str());
    return r.ok();
}

bool build_fib_loop(Function& f, FunctionBuilderContext& ctx) {
    f = Function(ExternalName::testcase("fib_loop"), i64_to_i64());
    FunctionBuilder b(f, ctx);
    LoopScopes loops;
    Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    Variable n = b.declare_var(types::I64), a = b.declare_var(types::I64), bv = b.declare_var(types::I64);
    b.def_var(n, b.block_params(entry)[0]);
    b.def_var(a, b.ins().iconst(types::I64, 0));
    b.def_var(bv, b.ins().iconst(types::I64, 1));

    if (!loops.begin_loop(b)) return false;
    if (!loops.loop_while(b, b.ins().icmp_imm(IntCC::Sgt, b.use_var(n), 0))) return false;
    Value t = b.ins().iadd(b.use_var(a), b.use_var(bv));
    b.def_var(a, b.use_var(bv));
    b.def_var(bv, t);
    b.def_var(n, b.ins().iadd_imm(b.use_var(n), -1));
    if (!loops.end_loop(b)) return false;
    b.ins().return_({b.use_var(a)});

    auto r = b.finalize();
    if (!r) std::fprintf(stderr, "fib_loop: %s\n", r.error().message.c_str());
    return r.ok();
}

bool check(const Function& f) {
    VerifierErrors errors;
    if (verify_function(f, errors)) return true;
    std::fprintf(stderr, "%s", format_verifier_errors(errors).c_str());
    return false;
}

}  // namespace

int main() {
    FunctionBuilderContext ctx;  // one context for both functions
    Function rec, loop;
    if (!build_fib_rec(rec, ctx) || !build_fib_loop(loop, ctx)) return 1;
    if (!check(rec) || !check(loop)) return 1;
    std::printf("%s\n%s\n", print_function(rec).c_str(), print_function(loop).c_str());

    Interpreter interp;
    interp.add_function(rec);
    interp.add_function(loop);
    const int64_t expected[] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765};
    int failures = 0;
    for (int64_t n = 0; n <= 20; ++n) {
        DataValue arg = DataValue::i64(n);
        InterpOutcome a = interp.call("fib_rec", std::span<const DataValue>(&arg, 1));
        InterpOutcome b = interp.call("fib_loop", std::span<const DataValue>(&arg, 1));
        if (a.kind != InterpOutcome::Kind::Return || b.kind != InterpOutcome::Kind::Return) {
            std::fprintf(stderr, "fib(%lld) did not return: %s %s\n", static_cast<long long>(n), a.message.c_str(),
                         b.message.c_str());
            return 1;
        }
        int64_t x = a.values[0].as_signed(), y = b.values[0].as_signed();
        std::printf("fib(%2lld) = %5lld (recursive) %5lld (loop)\n", static_cast<long long>(n),
                    static_cast<long long>(x), static_cast<long long>(y));
        failures += x != expected[n] || y != expected[n];
    }
    if (failures) std::fprintf(stderr, "%d wrong results\n", failures);

    // The same functions as machine code.
    JITModule jit;
    auto rec_id = jit.declare_function("fib_rec", Linkage::Export, rec.signature);
    auto loop_id = jit.declare_function("fib_loop", Linkage::Export, loop.signature);
    if (!rec_id || !loop_id) {
        std::fprintf(stderr, "JIT: %s\n", (!rec_id ? rec_id.error() : loop_id.error()).message.c_str());
        return 1;
    }
    for (auto err : {jit.define_function(rec_id.value(), rec), jit.define_function(loop_id.value(), loop),
                     jit.finalize_definitions()}) {
        if (err) {
            std::fprintf(stderr, "JIT: %s\n", err->message.c_str());
            return 1;
        }
    }
    auto* fib_rec = jit.get_function<int64_t(int64_t)>(rec_id.value());
    auto* fib_loop = jit.get_function<int64_t(int64_t)>(loop_id.value());
    for (int64_t n = 0; n <= 20; ++n) failures += fib_rec(n) != expected[n] || fib_loop(n) != expected[n];
    std::printf("JIT: fib_rec(30) = %lld, fib_loop(90) = %lld\n", static_cast<long long>(fib_rec(30)),
                static_cast<long long>(fib_loop(90)));
    if (failures) std::fprintf(stderr, "%d wrong results\n", failures);
    return failures ? 1 : 0;
}
