// fuzz_switch: bytes -> a case map (selector type i8..i64, case values in
// dense runs and sparse jumps, several values per target, values given as
// negative signed cases, duplicates) -> frontend/Switch emits the dispatch
// into `function %sw(T) -> i32` whose case block k returns k + 1 and whose
// `otherwise` block returns 0.
//
// Checked: emit fails exactly when two given values name one case of the
// selector type (DuplicateCase); otherwise the function verifies, and for
// every probe (each case value, its neighbours, 0, the type's extremes, its
// sign boundary, and values drawn from the input) both the interpreter and
// the JIT return the block the map says.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/switch.h"
#include "jit/jit_module.h"

namespace {

using namespace heron;

/// Input bytes as little numbers; zeros once they run out.
class Bytes {
public:
    Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    uint64_t u64() {
        uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v = v << 8 | byte();
        return v;
    }
    uint32_t below(uint32_t n) { return n <= 1 ? 0 : byte() % n; }
    bool done() const { return pos_ >= size_; }

private:
    const uint8_t* data_;
    size_t size_, pos_ = 0;
};

struct Case {
    uint64_t given;   // what set_entry receives
    uint64_t value;   // the case of the selector type it names
    uint32_t target;  // case block number
};

std::vector<Case> draw_cases(Bytes& in, Type ty, uint32_t targets) {
    const uint64_t mask = ty.mask();
    const uint64_t sign = uint64_t{1} << (ty.bits() - 1);
    std::vector<Case> cases;
    uint64_t next = in.u64() & mask;
    const uint32_t groups = in.below(12) + (in.done() ? 0 : 1);
    for (uint32_t g = 0; g < groups && cases.size() < 300; ++g) {
        const uint8_t how = in.byte();
        if (how & 1) next = in.u64() & mask;            // jump anywhere
        else next = (next + (how >> 4)) & mask;          // a small gap
        const uint32_t run = (how & 2) ? in.below(64) + 1 : 1;
        for (uint32_t k = 0; k < run; ++k) {
            Case c;
            c.value = next;
            c.given = next;
            // Negative spelling of a case with the sign bit set.
            if (ty.bits() < 64 && (next & sign) && (how & 4)) c.given = next | ~mask;
            c.target = (how & 8) ? in.below(targets) : (g + k) % targets;
            cases.push_back(c);
            next = (next + 1) & mask;
        }
        if ((how & 0x0c) == 0x0c && !cases.empty()) cases.push_back(cases[in.below(uint32_t(cases.size()))]);
    }
    return cases;
}

Result<void> build(Function& f, Type ty, const std::vector<Case>& cases, uint32_t targets, bool preamble) {
    Signature sig;
    sig.params.push_back(AbiParam(ty));
    sig.returns.push_back(AbiParam(types::I32));
    f = Function(ExternalName::testcase("sw"), sig);
    static FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    std::vector<Block> blocks;
    for (uint32_t i = 0; i < targets; ++i) blocks.push_back(b.create_block());
    Block otherwise = b.create_block();
    b.switch_to_block(entry);
    b.seal_block(entry);
    Value sel = b.block_params(entry)[0];
    if (preamble) {  // dispatch from a block that is not the entry
        Block next = b.create_block();
        b.ins().jump(next, {});
        b.switch_to_block(next);
        b.seal_block(next);
    }
    static Switch sw;
    sw.clear();
    for (const Case& c : cases) sw.set_entry(c.given, blocks[c.target]);
    if (auto r = sw.emit(b, sel, otherwise); !r) return r;
    for (uint32_t i = 0; i < targets; ++i) {
        b.switch_to_block(blocks[i]);
        b.seal_block(blocks[i]);
        b.ins().return_({b.ins().iconst(types::I32, i + 1)});
    }
    b.switch_to_block(otherwise);
    b.seal_block(otherwise);
    b.ins().return_({b.ins().iconst(types::I32, 0)});
    return b.finalize();
}

[[noreturn]] void fail(const std::string& what, const Function& f) {
    std::fprintf(stderr, "fuzz_switch: %s\n%s\n", what.c_str(), print_function(f).c_str());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in(data, size);
    static const Type kTypes[] = {types::I8, types::I16, types::I32, types::I64};
    const uint8_t head = in.byte();
    const Type ty = kTypes[head & 3];
    const bool preamble = head & 4;
    const uint32_t targets = in.below(16) + 1;
    const std::vector<Case> cases = draw_cases(in, ty, targets);

    std::map<uint64_t, uint32_t> expect;  // case value -> returned number
    bool duplicate = false;
    for (const Case& c : cases) duplicate |= !expect.emplace(c.value, c.target + 1).second;

    Function f;
    Result<void> r = build(f, ty, cases, targets, preamble);
    if (duplicate) {
        if (r.ok() || r.error().kind != FrontendError::Kind::DuplicateCase) fail("a duplicate case was not reported", f);
        return 0;
    }
    if (!r.ok()) fail("emit failed: " + r.error().message, f);
    VerifierErrors errs;
    if (!verify_function(f, errs)) fail("does not verify: " + format_verifier_errors(errs), f);

    const uint64_t mask = ty.mask();
    std::set<uint64_t> probes = {0, 1, mask, mask - 1, mask >> 1, (mask >> 1) + 1};
    for (const auto& [v, t] : expect) {
        probes.insert(v);
        probes.insert((v + 1) & mask);
        probes.insert((v - 1) & mask);
    }
    for (int extra = 0; extra < 64 && !in.done(); ++extra) probes.insert(in.u64() & mask);

    static Interpreter interp;
    JITModule jit;
    FuncId id = jit.declare_function("sw", Linkage::Export, f.signature).value();
    if (auto e = jit.define_function(id, f)) fail("JIT: " + e->message, f);
    if (auto e = jit.finalize_definitions()) fail("JIT: " + e->message, f);
    for (uint64_t p : probes) {
        DataValue arg(ty, p);
        auto it = expect.find(p);
        const uint64_t want = it == expect.end() ? 0 : it->second;
        InterpOutcome a = interp.call(f, std::span<const DataValue>(&arg, 1));
        if (a.kind != InterpOutcome::Kind::Return || a.values[0].as_unsigned() != want)
            fail("interpreter: selector " + std::to_string(p) + " should give " + std::to_string(want), f);
        JitCallOutcome j = jit.call(id, std::span<const DataValue>(&arg, 1));
        if (j.kind != JitCallOutcome::Kind::Return || (j.values[0].as_unsigned() & 0xffffffff) != want)
            fail("JIT: selector " + std::to_string(p) + " should give " + std::to_string(want), f);
    }
    return 0;
}
