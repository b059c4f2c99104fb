// A switch built with heron::Switch and run in the reference interpreter:
//
//   fn days(month: i8) -> i32 {
//       switch month { 1,3,5,7,8,10,12 => 31; 4,6,9,11 => 30; 2 => 28; -1 => -1; _ => 0 }
//   }
//
// 1..12 is one contiguous range (a jump table on month - 1); -1 is case
// 255 of the i8 selector (tested with icmp eq); everything else goes to
// the default block. The function is then compiled by the JIT module and
// called as a native function.
#include <cstdio>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/switch.h"
#include "jit/jit_module.h"

using namespace heron;

int main() {
    Signature sig;
    sig.params = {AbiParam(types::I8)};
    sig.returns = {AbiParam(types::I32)};
    Function f(ExternalName::testcase("days"), sig);
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);

    Block entry = b.create_block();
    Block d31 = b.create_block(), d30 = b.create_block(), d28 = b.create_block();
    Block bad = b.create_block(), other = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);

    Switch sw;
    for (int m : {1, 3, 5, 7, 8, 10, 12}) sw.set_entry(m, d31);
    for (int m : {4, 6, 9, 11}) sw.set_entry(m, d30);
    sw.set_entry(2, d28);
    sw.set_entry(static_cast<uint64_t>(-1), bad);  // a signed case
    if (auto r = sw.emit(b, b.block_params(entry)[0], other); !r) {
        std::fprintf(stderr, "switch: %s\n", r.error().message.c_str());
        return 1;
    }
    const std::pair<Block, int> results[] = {{d31, 31}, {d30, 30}, {d28, 28}, {bad, -1}, {other, 0}};
    for (auto [block, days] : results) {
        b.switch_to_block(block);
        b.seal_block(block);
        b.ins().return_({b.ins().iconst(types::I32, days)});
    }
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
    const int expected[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 0};
    int failures = 0;
    for (int m = -2; m <= 13; ++m) {
        DataValue arg = DataValue::i8(m);
        InterpOutcome out = interp.call(f, std::span<const DataValue>(&arg, 1));
        if (out.kind != InterpOutcome::Kind::Return) {
            std::fprintf(stderr, "days(%d): %s\n", m, out.message.c_str());
            return 1;
        }
        int got = static_cast<int>(out.values[0].as_signed());
        int want = m == -1 ? -1 : (m < 0 ? 0 : expected[m]);
        std::printf("days(%3d) = %3d\n", m, got);
        failures += got != want;
    }

    JITModule jit;
    auto id = jit.declare_function("days", Linkage::Export, f.signature);
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
    auto* days = jit.get_function<int32_t(int8_t)>(id.value());
    for (int m = -128; m <= 127; ++m) {
        int want = m == -1 ? -1 : (m < 0 || m > 13 ? 0 : expected[m]);
        failures += days(static_cast<int8_t>(m)) != want;
    }
    std::printf("JIT: days(2) = %d, days(-1) = %d, %s\n", days(2), days(-1), failures ? "MISMATCH" : "all 256 agree");
    return failures ? 1 : 0;
}
