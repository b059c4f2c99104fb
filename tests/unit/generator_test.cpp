// Tests of the random IR generator (fuzz/gen/generator.h) and the
// differential harness (fuzz/gen/diff.h): every generated function verifies,
// the printed text is deterministic and round-trips through the parser,
// every opcode is generated, feature options hold, and the harness (here
// interpreter vs interpreter; the JIT plugs in later) finds no mismatch over
// 10,000 function x input pairs yet does catch planted ones.
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "fuzz/gen/diff.h"
#include "fuzz/gen/generator.h"

namespace heron::gen {
namespace {

GenOptions diff_options() {
    GenOptions o;
    o.canonicalize_nans = true;
    return o;
}

Module module_for_seed(uint64_t seed, const GenOptions& o) {
    Entropy e(seed);
    return generate_module(e, o);
}

template <typename F>
void for_each_inst(const Function& f, F&& fn) {
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) fn(b, i);
    }
}

/// A structural fingerprint without the printer: opcodes, types, operands.
std::string fingerprint(const Module& m) {
    std::string s;
    for (const auto& f : m.functions) {
        s += f->name.to_string() + ";";
        for_each_inst(*f, [&](Block b, Inst i) {
            const InstructionData& d = f->dfg[i];
            s += std::to_string(b.index()) + ":" + std::string(opcode_name(d.opcode)) + "." +
                 std::string(d.type.name()) + "/" + std::to_string(d.imm) + "/" + std::to_string(d.offset);
            std::vector<Value> vals;
            f->dfg.inst_fixed_values(i, vals);
            for (Value v : vals) s += "," + v.to_string();
            s += ";";
        });
    }
    for (const auto& per_func : m.inputs) {
        for (const auto& args : per_func) {
            for (const DataValue& v : args) s += std::to_string(v.bits) + ",";
        }
    }
    return s;
}

// (d) Every opcode of opcodes.def shows up within 500 seeds. No opcode is
// excluded: the tail calls need `tail` functions with matching returns,
// which the generator arranges on purpose.
TEST(GeneratorTest, CoversEveryOpcode) {
    std::vector<uint64_t> counts(kNumOpcodes, 0);
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 500; ++seed) {
        Module m = module_for_seed(seed, o);
        for (const auto& f : m.functions) {
            for_each_inst(*f, [&](Block, Inst i) { ++counts[static_cast<unsigned>(f->dfg[i].opcode)]; });
        }
    }
    std::string missing;
    for (unsigned op = 0; op < kNumOpcodes; ++op) {
        if (counts[op] == 0) missing += " " + std::string(opcode_name(static_cast<Opcode>(op)));
    }
    EXPECT_TRUE(missing.empty()) << "opcodes never generated:" << missing;
}

TEST(GeneratorTest, SameSeedSameModule) {
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 100; ++seed) {
        EXPECT_EQ(fingerprint(module_for_seed(seed, o)), fingerprint(module_for_seed(seed, o)))
            << "seed " << seed;
    }
    EXPECT_NE(fingerprint(module_for_seed(1, o)), fingerprint(module_for_seed(2, o)));
}

TEST(GeneratorTest, SameBytesSameModule) {
    std::vector<uint8_t> bytes(4096);
    uint64_t x = 0x9e3779b97f4a7c15;
    for (uint8_t& b : bytes) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = static_cast<uint8_t>(x);
    }
    GenOptions o = diff_options();
    Entropy e1{std::span<const uint8_t>(bytes)}, e2{std::span<const uint8_t>(bytes)};
    EXPECT_EQ(fingerprint(generate_module(e1, o)), fingerprint(generate_module(e2, o)));
}

TEST(GeneratorTest, EmptyBytesGiveASmallModule) {
    Entropy e{std::span<const uint8_t>()};
    EXPECT_TRUE(e.exhausted());
    EXPECT_EQ(e.byte(), 0);
    EXPECT_EQ(e.below(7), 0u);
    EXPECT_FALSE(e.chance(99));
    Module m = generate_module(e, GenOptions());
    ASSERT_EQ(m.functions.size(), 1u);
    EXPECT_LT(m.functions[0]->dfg.num_insts(), 10u);
    EXPECT_EQ(m.inputs.size(), 1u);
}

TEST(GeneratorTest, EntropyFromBytesReadsThemInOrder) {
    const uint8_t bytes[] = {5, 1, 2, 3, 4, 5, 6, 7, 8};
    Entropy e{std::span<const uint8_t>(bytes)};
    EXPECT_EQ(e.below(3), 2u);  // 5 % 3
    EXPECT_EQ(e.u64(), 0x0102030405060708u);
    EXPECT_TRUE(e.exhausted());
    EXPECT_EQ(e.u64(), 0u);
}

TEST(GeneratorTest, InputsMatchSignatures) {
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 100; ++seed) {
        Module m = module_for_seed(seed, o);
        ASSERT_EQ(m.inputs.size(), m.functions.size());
        for (size_t k = 0; k < m.functions.size(); ++k) {
            const Signature& sig = m.functions[k]->signature;
            EXPECT_EQ(m.functions[k]->name.to_string(), "%f" + std::to_string(k));
            ASSERT_EQ(m.inputs[k].size(), o.inputs_per_function);
            for (const auto& args : m.inputs[k]) {
                ASSERT_EQ(args.size(), sig.params.size());
                for (size_t i = 0; i < args.size(); ++i) EXPECT_EQ(args[i].type, sig.params[i].type);
            }
        }
    }
}

TEST(GeneratorTest, InputsIncludeEdgeValues) {
    Entropy e(7);
    GenOptions o;
    IrGenerator g(e, o);
    std::set<uint64_t> f32s, i32s;
    for (int i = 0; i < 4000; ++i) {
        f32s.insert(g.interesting_value(types::F32).bits);
        i32s.insert(g.interesting_value(types::I32).bits);
    }
    for (uint64_t bits : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fc00001u,
                          0x7f800001u, 0x00000001u, 0x3f800000u, 0xbf800000u}) {
        EXPECT_TRUE(f32s.count(bits)) << std::hex << bits;
    }
    for (uint64_t bits : {0x0u, 0x1u, 0xffffffffu, 0x80000000u, 0x7fffffffu}) {
        EXPECT_TRUE(i32s.count(bits)) << std::hex << bits;
    }
}

/// True if the module uses a float type anywhere.
bool uses_floats(const Module& m) {
    for (const auto& f : m.functions) {
        for (const AbiParam& p : f->signature.params) {
            if (p.type.is_float()) return true;
        }
        for (const AbiParam& p : f->signature.returns) {
            if (p.type.is_float()) return true;
        }
        for (uint32_t v = 0; v < f->dfg.num_values(); ++v) {
            if (f->dfg.value_type(Value(v)).is_float()) return true;
        }
    }
    return false;
}

TEST(GeneratorTest, OptionsTurnFeaturesOff) {
    GenOptions o = diff_options();
    o.floats = false;
    o.memory = false;
    o.calls = false;
    o.loops = false;
    o.br_table = false;
    o.traps = false;
    for (uint64_t seed = 0; seed < 200; ++seed) {
        Module m = module_for_seed(seed, o);
        EXPECT_FALSE(uses_floats(m)) << "seed " << seed;
        for (const auto& f : m.functions) {
            EXPECT_TRUE(f->stack_slots.empty());
            for_each_inst(*f, [&](Block b, Inst i) {
                Opcode op = f->dfg[i].opcode;
                EXPECT_FALSE(can_load(op) || can_store(op) || op == Opcode::StackAddr) << opcode_name(op);
                EXPECT_FALSE(is_call(op) || op == Opcode::FuncAddr) << opcode_name(op);
                EXPECT_FALSE(op == Opcode::BrTable || op == Opcode::Trap || op == Opcode::Trapz ||
                             op == Opcode::Trapnz)
                    << opcode_name(op);
                // Without loops every branch goes forward in the layout.
                for (const BlockCall& bc : f->dfg.branch_destinations(i)) {
                    EXPECT_TRUE(f->layout.block_before(b, bc.block(f->dfg.value_lists)))
                        << "back edge without loops, seed " << seed;
                }
            });
        }
    }
}

TEST(GeneratorTest, RespectsSizeLimits) {
    GenOptions o = diff_options();
    o.max_functions = 2;
    o.max_blocks = 10;
    o.max_insts = 50;
    for (uint64_t seed = 0; seed < 200; ++seed) {
        Module m = module_for_seed(seed, o);
        EXPECT_LE(m.functions.size(), 2u);
        for (const auto& f : m.functions) {
            // Limits are checked before each item; one item may overshoot a
            // little (a switch arm's jump, a function's return).
            EXPECT_LE(f->dfg.num_blocks(), o.max_blocks + 6) << "seed " << seed;
            EXPECT_LE(f->dfg.num_insts(), o.max_insts + 40) << "seed " << seed;
        }
    }
}

std::string print_module(const Module& m) {
    std::string s;
    for (const auto& f : m.functions) s += print_function(*f) + "\n";
    return s;
}

/// Empty if every function verifies; else the errors and the function text.
std::string verify_module(const Module& m) {
    std::string out;
    for (const auto& f : m.functions) {
        VerifierErrors errors;
        if (verify_function(*f, errors)) continue;
        out += format_verifier_errors(errors) + "\nin:\n" + print_function(*f) + "\n";
    }
    return out;
}

// (a) Every generated function is valid IR.
TEST(GeneratorTest, GeneratedModulesVerify) {
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 2000; ++seed) {
        std::string errors = verify_module(module_for_seed(seed, o));
        ASSERT_TRUE(errors.empty()) << "seed " << seed << ":\n" << errors;
    }
}

// Same, with every feature switch flipped and for raw fuzzer bytes.
TEST(GeneratorTest, ModulesVerifyUnderAllOptions) {
    for (uint64_t seed = 0; seed < 300; ++seed) {
        GenOptions o;
        o.ints = seed & 1;
        o.floats = seed & 2;
        o.memory = seed & 4;
        o.calls = seed & 8;
        o.loops = seed & 16;
        o.br_table = seed & 32;
        o.traps = seed & 64;
        o.unbounded_loops = seed & 128;
        o.canonicalize_nans = seed & 256;
        std::string errors = verify_module(module_for_seed(seed, o));
        ASSERT_TRUE(errors.empty()) << "seed " << seed << ":\n" << errors;
    }
    for (uint64_t seed = 0; seed < 300; ++seed) {
        std::vector<uint8_t> bytes(seed * 7);
        std::mt19937_64 rng(seed);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
        Entropy e{std::span<const uint8_t>(bytes)};
        std::string errors = verify_module(generate_module(e, diff_options()));
        ASSERT_TRUE(errors.empty()) << "byte string " << seed << ":\n" << errors;
    }
}

// (b) Same seed, same text.
TEST(GeneratorTest, SameSeedSameText) {
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 300; ++seed) {
        EXPECT_EQ(print_module(module_for_seed(seed, o)), print_module(module_for_seed(seed, o))) << "seed " << seed;
    }
}

// (c) parse(print(f)) prints as f does.
TEST(GeneratorTest, TextRoundTrips) {
    GenOptions o = diff_options();
    for (uint64_t seed = 0; seed < 500; ++seed) {
        Module m = module_for_seed(seed, o);
        for (const auto& f : m.functions) {
            std::string text = print_function(*f);
            Diagnostics errors;
            auto parsed = parse_functions(text, errors);
            ASSERT_TRUE(errors.empty()) << "seed " << seed << ": " << errors[0].format("gen") << "\n" << text;
            ASSERT_EQ(parsed.size(), 1u);
            ASSERT_EQ(print_function(*parsed[0]), text) << "seed " << seed;
        }
    }
}

/// Runs seeds from `first` until at least `pairs` pairs were compared.
DiffResult diff_seeds(Engine& a, Engine& b, uint64_t pairs, const GenOptions& o, uint64_t first = 0) {
    DiffResult total;
    for (uint64_t seed = first; total.pairs < pairs; ++seed) {
        total.merge(run_differential(module_for_seed(seed, o), a, b));
    }
    return total;
}

// (e) The harness plumbing: two interpreters agree on 10,000 pairs, with
// trap codes compared, and bounded loops never run out of fuel.
TEST(DiffTest, InterpreterAgreesWithItself) {
    InterpreterEngine a, b;
    DiffResult r = diff_seeds(a, b, 10'000, diff_options());
    std::cout << "[ interp vs interp ] " << r.summary() << "\n";
    EXPECT_GE(r.pairs, 10'000u);
    EXPECT_EQ(r.mismatches, 0u) << r.summary();
    EXPECT_EQ(r.skipped_fuel, 0u) << "a bounded loop ran away";
    EXPECT_EQ(r.returned + r.trapped, r.pairs);
}

/// Wraps an engine and corrupts the `nth` outcome.
class CorruptingEngine : public Engine {
public:
    enum class What { FlipResultBit, ChangeTrapCode };
    CorruptingEngine(Engine& inner, What what) : inner_(inner), what_(what) {}

    std::string name() const override { return "corrupted-" + inner_.name(); }
    bool load(const Module& m, std::string& error) override { return inner_.load(m, error); }
    InterpOutcome call(const Function& f, std::span<const DataValue> args) override {
        InterpOutcome o = inner_.call(f, args);
        if (done_) return o;
        if (what_ == What::FlipResultBit && o.kind == InterpOutcome::Kind::Return && !o.values.empty()) {
            DataValue& v = o.values.back();
            v = DataValue(v.type, v.bits ^ (uint64_t{1} << (v.type.bits() - 1)));
            done_ = true;
        }
        if (what_ == What::ChangeTrapCode && o.kind == InterpOutcome::Kind::Trap) {
            o.trap = TrapCode::user(o.trap == TrapCode::user(1) ? 2 : 1);
            done_ = true;
        }
        return o;
    }
    bool done() const { return done_; }

private:
    Engine& inner_;
    What what_;
    bool done_ = false;
};

TEST(DiffTest, DetectsAFlippedResultBit) {
    InterpreterEngine a, inner;
    CorruptingEngine b(inner, CorruptingEngine::What::FlipResultBit);
    DiffResult r = diff_seeds(a, b, 500, diff_options());
    ASSERT_TRUE(b.done());
    EXPECT_EQ(r.mismatches, 1u) << r.summary();
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_NE(r.reports[0].description.find("differs"), std::string::npos) << r.reports[0].description;
}

TEST(DiffTest, DetectsAWrongTrapCode) {
    InterpreterEngine a, inner;
    CorruptingEngine b(inner, CorruptingEngine::What::ChangeTrapCode);
    DiffResult r = diff_seeds(a, b, 500, diff_options());
    ASSERT_TRUE(b.done());
    EXPECT_EQ(r.mismatches, 1u) << r.summary();
    ASSERT_EQ(r.reports.size(), 1u);
    EXPECT_NE(r.reports[0].description.find("trap codes differ"), std::string::npos) << r.reports[0].description;
}

TEST(DiffTest, NanComparisonModes) {
    InterpOutcome a, b;
    a.values = {DataValue::f32_bits(0x7fc00000), DataValue::i32(1)};
    b.values = {DataValue::f32_bits(0xffc00001), DataValue::i32(1)};
    std::string why;
    EXPECT_FALSE(outcomes_match(a, b, NanCompare::Exact, why));
    EXPECT_TRUE(outcomes_match(a, b, NanCompare::AnyNan, why)) << why;
    b.values[1] = DataValue::i32(2);
    EXPECT_FALSE(outcomes_match(a, b, NanCompare::AnyNan, why));
    b.values = {DataValue::f32_bits(0x7f800000), DataValue::i32(1)};  // +Inf is no NaN
    EXPECT_FALSE(outcomes_match(a, b, NanCompare::AnyNan, why));
}

// Runaway loops end on fuel, and the harness skips (and counts) them.
TEST(DiffTest, UnboundedLoopsEndOnFuel) {
    GenOptions o = diff_options();
    o.unbounded_loops = true;
    InterpreterEngine a(20'000), b(20'000);
    DiffResult r = diff_seeds(a, b, 2'000, o);
    EXPECT_EQ(r.mismatches, 0u) << r.summary();
    EXPECT_GT(r.skipped_fuel, 0u) << r.summary();
}

// Without `traps`, nothing traps: every risky op is guarded.
TEST(DiffTest, GuardedProgramsNeverTrap) {
    GenOptions o = diff_options();
    o.traps = false;
    InterpreterEngine a, b;
    DiffResult r = diff_seeds(a, b, 3'000, o);
    EXPECT_EQ(r.mismatches, 0u) << r.summary();
    EXPECT_EQ(r.trapped, 0u) << r.summary();
}

// (f) The programs do something: over 1,000 seeds both normal returns and
// traps are common.
TEST(GeneratorTest, CallsReturnAndTrap) {
    GenOptions o = diff_options();
    uint64_t calls = 0, returned = 0, trapped = 0, other = 0;
    for (uint64_t seed = 0; seed < 1000; ++seed) {
        Module m = module_for_seed(seed, o);
        InterpreterEngine engine;
        std::string error;
        ASSERT_TRUE(engine.load(m, error)) << error;
        for (size_t k = 0; k < m.functions.size(); ++k) {
            for (const auto& args : m.inputs[k]) {
                InterpOutcome out = engine.call(*m.functions[k], args);
                ++calls;
                if (out.kind == InterpOutcome::Kind::Return) ++returned;
                else if (out.kind == InterpOutcome::Kind::Trap) ++trapped;
                else ++other;
                ASSERT_NE(out.kind, InterpOutcome::Kind::Error)
                    << "seed " << seed << " " << out.message << "\n" << print_module(m);
            }
        }
    }
    double ret = static_cast<double>(returned) / static_cast<double>(calls);
    double trap = static_cast<double>(trapped) / static_cast<double>(calls);
    std::cout << "[ outcomes ] " << calls << " calls: " << 100 * ret << "% returned, " << 100 * trap
              << "% trapped, " << other << " other\n";
    RecordProperty("returned_percent", static_cast<int>(100 * ret));
    RecordProperty("trapped_percent", static_cast<int>(100 * trap));
    EXPECT_GT(ret, 0.05);
    EXPECT_GT(trap, 0.05);
}

}  // namespace
}  // namespace heron::gen
