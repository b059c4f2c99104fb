// Helpers shared by the interpreter tests (interp_*_test.cpp): build small
// functions with FuncCursor (no text parser needed), run them, and read
// float bit patterns. `OpEval` wraps `f(params...) = op(params...)` for any
// opcode, so a test can feed it thousands of inputs through one cached
// decode.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/cursor.h"
#include "codegen/ir/function.h"

namespace heron::test {

inline uint64_t f32b(float f) { return std::bit_cast<uint32_t>(f); }
inline uint64_t f64b(double d) { return std::bit_cast<uint64_t>(d); }
inline constexpr uint64_t kF32CanonNaN = 0x7fc0'0000;
inline constexpr uint64_t kF64CanonNaN = 0x7ff8'0000'0000'0000;

inline Signature make_sig(const std::vector<Type>& params, const std::vector<Type>& rets,
                          CallConv cc = CallConv::Fast) {
    Signature s(cc);
    for (Type t : params) s.params.emplace_back(t);
    for (Type t : rets) s.returns.emplace_back(t);
    return s;
}

/// Emits any opcode with fixed operands and returns its results.
inline std::vector<Value> emit(FuncCursor& c, Opcode op, Type ctrl, const std::vector<Value>& args,
                               uint8_t code = 0) {
    InstructionData d;
    d.opcode = op;
    d.code = code;
    if (opcode_info(op).ctrl == CtrlSource::Result) d.type = ctrl;
    for (size_t i = 0; i < args.size(); ++i) d.args[i] = args[i];
    Inst inst = c.build(d, ctrl);
    auto r = c.func.dfg.inst_results(inst);
    return {r.begin(), r.end()};
}

/// A function with one entry block whose parameters match `params`; `body`
/// emits the code and returns the values to return. The signature's returns
/// are taken from those values' types.
using BodyFn = std::function<std::vector<Value>(FuncCursor&, const std::vector<Value>&)>;
inline std::unique_ptr<Function> build_function(const std::string& name, const std::vector<Type>& params,
                                                const BodyFn& body, CallConv cc = CallConv::Fast) {
    auto f = std::make_unique<Function>(ExternalName::testcase(name), make_sig(params, {}, cc));
    FuncCursor c(*f);
    Block b0 = c.insert_block();
    std::vector<Value> ps;
    for (Type t : params) ps.push_back(f->dfg.append_block_param(b0, t));
    c.at_bottom(b0);
    std::vector<Value> rets = body(c, ps);
    for (Value v : rets) f->signature.returns.emplace_back(f->dfg.value_type(v));
    c.ins().return_(std::span<const Value>(rets));
    return f;
}

/// `f(params...) = op.ctrl(params...)`, run through one Interpreter.
class OpEval {
public:
    OpEval(Opcode op, Type ctrl, std::vector<Type> params, uint8_t code = 0) : params_(std::move(params)) {
        func_ = build_function("op", params_, [&](FuncCursor& c, const std::vector<Value>& ps) {
            return emit(c, op, ctrl, ps, code);
        });
        interp_.add_function(*func_);
    }
    InterpOutcome run(const std::vector<uint64_t>& bits) {
        std::vector<DataValue> args;
        for (size_t i = 0; i < bits.size(); ++i) args.emplace_back(params_[i], bits[i]);
        return interp_.call(*func_, args);
    }
    /// The single result's bits; fails the test (and returns a marker) if
    /// the call did not return normally.
    uint64_t operator()(const std::vector<uint64_t>& bits) {
        InterpOutcome r = run(bits);
        if (r.kind != InterpOutcome::Kind::Return || r.values.empty()) {
            ADD_FAILURE() << "did not return: " << r.message;
            return 0xdead'beef'dead'beef;
        }
        return r.values[0].bits;
    }
    /// Both results of a two-result op.
    std::pair<uint64_t, uint64_t> two(const std::vector<uint64_t>& bits) {
        InterpOutcome r = run(bits);
        if (r.kind != InterpOutcome::Kind::Return || r.values.size() != 2) {
            ADD_FAILURE() << "did not return two values: " << r.message;
            return {0xdead, 0xdead};
        }
        return {r.values[0].bits, r.values[1].bits};
    }
    /// The trap code byte of a trapping call, 0 if it returned.
    uint8_t trap(const std::vector<uint64_t>& bits) {
        InterpOutcome r = run(bits);
        if (r.kind == InterpOutcome::Kind::Return) return 0;
        EXPECT_EQ(r.kind, InterpOutcome::Kind::Trap) << r.message;
        return r.trap.byte;
    }
    Interpreter& interp() { return interp_; }

private:
    std::vector<Type> params_;
    std::unique_ptr<Function> func_;
    Interpreter interp_;
};

/// A small deterministic generator (xorshift64*) for random operands.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed | 1) {}
    uint64_t next() {
        s_ ^= s_ >> 12;
        s_ ^= s_ << 25;
        s_ ^= s_ >> 27;
        return s_ * 0x2545'F491'4F6C'DD1DULL;
    }
    /// Mostly uniform, sometimes a value near 0, MIN or MAX of the width.
    uint64_t edgy(unsigned bits) {
        uint64_t m = bits >= 64 ? ~0ULL : (1ULL << bits) - 1, r = next();
        switch (r % 8) {
        case 0: return (r >> 8) % 5;
        case 1: return (m - (r >> 8) % 5) & m;
        case 2: return ((m >> 1) + (r >> 8) % 5 - 2) & m;
        default: return (next() >> (r % 3 == 0 ? (r >> 8) % 64 : 0)) & m;
        }
    }

private:
    uint64_t s_;
};

}  // namespace heron::test
