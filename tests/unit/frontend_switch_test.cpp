// Switch: the emitted shapes (chains, search tree, jump tables, the i32
// index conversion) and, for random case sets over i8..i64, that the
// interpreted function lands in the right block for every case value, its
// neighbours and the type's extremes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/switch.h"
#include "tests/unit/frontend_test_util.h"

namespace heron {
namespace {

using K = FrontendError::Kind;

// function %sw(T) -> i32: case block k returns k + 1, otherwise returns 0.
// `cases` maps case value -> case block number (several values may share
// a block).
Result<void> build_switch(Function& f, Type ty, const std::vector<std::pair<uint64_t, uint32_t>>& cases,
                          uint32_t num_targets) {
    Signature sig;
    sig.params.push_back(AbiParam(ty));
    sig.returns.push_back(AbiParam(types::I32));
    f = Function(ExternalName::testcase("sw"), sig);
    FunctionBuilderContext ctx;
    FunctionBuilder b(f, ctx);
    Block entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    std::vector<Block> targets;
    for (uint32_t i = 0; i < num_targets; ++i) targets.push_back(b.create_block());
    Block otherwise = b.create_block();
    b.switch_to_block(entry);
    b.seal_block(entry);
    Switch sw;
    for (auto [v, t] : cases) sw.set_entry(v, targets[t]);
    auto r = sw.emit(b, b.block_params(entry)[0], otherwise);
    if (!r) return r;
    for (uint32_t i = 0; i < num_targets; ++i) {
        b.switch_to_block(targets[i]);
        b.seal_block(targets[i]);
        b.ins().return_({b.ins().iconst(types::I32, i + 1)});
    }
    b.switch_to_block(otherwise);
    b.seal_block(otherwise);
    b.ins().return_({b.ins().iconst(types::I32, 0)});
    return b.finalize();
}

struct Shape {
    uint32_t br_tables = 0, table_entries = 0, brifs = 0, blocks = 0;
};

Shape shape_of(const Function& f) {
    Shape s;
    for (Block b : f.layout.blocks()) {
        ++s.blocks;
        for (Inst i : f.layout.block_insts(b)) {
            if (f.dfg[i].opcode == Opcode::BrTable) {
                ++s.br_tables;
                s.table_entries += static_cast<uint32_t>(f.dfg.jump_tables[f.dfg[i].jump_table()].entries().size());
            }
            if (f.dfg[i].opcode == Opcode::Brif) ++s.brifs;
        }
    }
    return s;
}

std::string verify(const Function& f) {
    VerifierErrors errors;
    if (verify_function(f, errors)) return "";
    return format_verifier_errors(errors) + "\n" + print_function(f);
}

TEST(FrontendSwitchTest, SeedExampleShape) {
    // The seed's example: 0, 1 | 5 | 7, 8 -> three ranges, a chain.
    Function f;
    ASSERT_TRUE(build_switch(f, types::I32, {{0, 0}, {1, 1}, {5, 2}, {7, 3}, {8, 4}}, 5).ok());
    EXPECT_EQ(verify(f), "");
    EXPECT_EQ(print_function(f),
              "function %sw(i32) -> i32 {\n"
              "block0(v0: i32):\n"
              "    v1 = iconst.i32 7\n"
              "    v2 = icmp uge v0, v1\n"
              "    brif v2, block7, block8\n"
              "block8:\n"
              "    v3 = iconst.i32 5\n"
              "    v4 = icmp eq v0, v3\n"
              "    brif v4, block3, block9\n"
              "block9:\n"
              "    jump block10\n"
              "block7:\n"
              "    v5 = iconst.i32 7\n"
              "    v6 = isub v0, v5\n"
              "    br_table v6, block6, [block4, block5]\n"
              "block10:\n"
              "    br_table v0, block6, [block1, block2]\n"
              "block1:\n"
              "    v7 = iconst.i32 1\n"
              "    return v7\n"
              "block2:\n"
              "    v8 = iconst.i32 2\n"
              "    return v8\n"
              "block3:\n"
              "    v9 = iconst.i32 3\n"
              "    return v9\n"
              "block4:\n"
              "    v10 = iconst.i32 4\n"
              "    return v10\n"
              "block5:\n"
              "    v11 = iconst.i32 5\n"
              "    return v11\n"
              "block6:\n"
              "    v12 = iconst.i32 0\n"
              "    return v12\n"
              "}\n");
}

TEST(FrontendSwitchTest, SingleCaseAtZeroIsZeroTest) {
    Function f;
    ASSERT_TRUE(build_switch(f, types::I8, {{0, 0}}, 1).ok());
    EXPECT_EQ(verify(f), "");
    Block entry = *f.layout.entry_block();
    Inst br = *f.layout.last_inst(entry);
    EXPECT_EQ(f.dfg[br].opcode, Opcode::Brif);
    EXPECT_EQ(f.dfg[br].args[0], f.dfg.block_params(entry)[0]) << "branch on the selector itself";
    EXPECT_EQ(fe_test::count_insts(f), 5u) << print_function(f);
}

TEST(FrontendSwitchTest, SparseCasesMakeNoTables) {
    std::vector<std::pair<uint64_t, uint32_t>> cases;
    for (uint32_t i = 0; i < 1000; ++i) cases.emplace_back(uint64_t{i} * 1000003u, i);
    Function f;
    ASSERT_TRUE(build_switch(f, types::I64, cases, 1000).ok());
    EXPECT_EQ(verify(f), "");
    Shape s = shape_of(f);
    EXPECT_EQ(s.br_tables, 0u);
    EXPECT_EQ(s.table_entries, 0u);
    // A balanced tree: about log2(1000/3) levels of splits plus the chains.
    EXPECT_LT(s.brifs, 2000u);
}

TEST(FrontendSwitchTest, DenseRangeFromZeroIsOneTable) {
    std::vector<std::pair<uint64_t, uint32_t>> cases;
    for (uint32_t i = 0; i < 100; ++i) cases.emplace_back(i, i % 7);
    Function f;
    ASSERT_TRUE(build_switch(f, types::I16, cases, 7).ok());
    EXPECT_EQ(verify(f), "");
    Shape s = shape_of(f);
    EXPECT_EQ(s.br_tables, 1u);
    EXPECT_EQ(s.table_entries, 100u);
    EXPECT_EQ(s.brifs, 0u) << "a range from 0 jumps straight into its table";
}

TEST(FrontendSwitchTest, WideSelectorIsRangeCheckedBeforeReduction) {
    Function f;
    ASSERT_TRUE(build_switch(f, types::I64, {{10, 0}, {11, 1}, {12, 2}}, 3).ok());
    EXPECT_EQ(verify(f), "");
    bool saw_ireduce = false;
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) saw_ireduce |= f.dfg[i].opcode == Opcode::Ireduce;
    }
    EXPECT_TRUE(saw_ireduce) << print_function(f);
    // 10 + 2^32 must not alias case 10 (its reduced difference is 0).
    Interpreter interp;
    DataValue arg(types::I64, (uint64_t{1} << 32) + 10);
    InterpOutcome out = interp.call(f, std::span<const DataValue>(&arg, 1));
    ASSERT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
    EXPECT_EQ(out.values[0].as_signed(), 0);
}

TEST(FrontendSwitchTest, Errors) {
    Function f;
    auto r1 = build_switch(f, types::I8, {{300, 0}}, 1);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().kind, K::CaseOutOfRange);
    EXPECT_NE(r1.error().message.find("i8"), std::string::npos) << r1.error().message;

    auto r2 = build_switch(f, types::I8, {{255, 0}, {static_cast<uint64_t>(-1), 1}}, 2);
    ASSERT_FALSE(r2.ok());
    EXPECT_EQ(r2.error().kind, K::DuplicateCase);

    auto r3 = build_switch(f, types::I16, {{static_cast<uint64_t>(-32769), 0}}, 1);
    ASSERT_FALSE(r3.ok());
    EXPECT_EQ(r3.error().kind, K::CaseOutOfRange);

    Switch sw;
    ASSERT_TRUE(sw.try_set_entry(4, Block(1)).ok());
    auto r4 = sw.try_set_entry(4, Block(2));
    ASSERT_FALSE(r4.ok());
    EXPECT_EQ(r4.error().kind, K::DuplicateCase);
    EXPECT_NE(r4.error().message.find("block1"), std::string::npos) << r4.error().message;

    // A float selector.
    Signature sig;
    sig.params.push_back(AbiParam(types::F32));
    Function g(ExternalName::testcase("g"), sig);
    FunctionBuilderContext ctx;
    FunctionBuilder b(g, ctx);
    Block entry = b.create_block();
    Block other = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    Switch fs;
    fs.set_entry(1, other);
    auto r5 = fs.emit(b, b.block_params(entry)[0], other);
    ASSERT_FALSE(r5.ok());
    EXPECT_EQ(r5.error().kind, K::BadSelectorType);
    EXPECT_TRUE(b.is_pristine()) << "nothing emitted on error";
}

TEST(FrontendSwitchTest, ClearForgetsTheCases) {
    Switch sw;
    for (uint64_t v = 0; v < 500; ++v) ASSERT_TRUE(sw.try_set_entry(v * 7, Block(1)).ok());
    EXPECT_FALSE(sw.try_set_entry(7 * 123, Block(2)).ok());
    sw.clear();
    EXPECT_TRUE(sw.entries().empty());
    for (uint64_t v = 0; v < 500; ++v) ASSERT_TRUE(sw.try_set_entry(v * 7, Block(3)).ok()) << v;
    EXPECT_EQ(sw.entries().size(), 500u);
}

// --- random case sets under the interpreter ------------------------------------

Type type_of(int k) {
    static const Type kTypes[] = {types::I8, types::I16, types::I32, types::I64};
    return kTypes[k];
}

std::vector<std::pair<uint64_t, uint32_t>> random_cases(std::mt19937_64& rng, Type ty, uint32_t& targets) {
    uint64_t mask = ty.mask();
    std::set<uint64_t> values;
    int kind = static_cast<int>(rng() % 6);
    uint32_t n = 1 + static_cast<uint32_t>(rng() % 40);
    auto add = [&](uint64_t v) { values.insert(v & mask); };
    switch (kind) {
    case 0: {  // dense run(s) with a few holes
        uint64_t start = rng() & mask;
        for (uint32_t i = 0; i < n; ++i) {
            if (rng() % 8) add(start + i);
        }
        break;
    }
    case 1:  // sparse over the whole type
        for (uint32_t i = 0; i < n; ++i) add(rng());
        break;
    case 2:  // at and near 0
        for (uint32_t i = 0; i < n; ++i) add(rng() % (2 * n));
        add(0);
        break;
    case 3:  // near the type's maximum (and around the signed wrap)
        for (uint32_t i = 0; i < n; ++i) add(mask - rng() % (2 * n));
        for (uint32_t i = 0; i < n / 2; ++i) add((mask >> 1) + rng() % 4);
        break;
    case 4:  // a single entry
        add(rng() % 3 == 0 ? 0 : rng() % 3 == 0 ? mask : rng());
        break;
    default:  // clusters
        for (uint32_t c = 0; c < 1 + rng() % 6; ++c) {
            uint64_t start = rng();
            uint32_t len = 1 + static_cast<uint32_t>(rng() % 10);
            for (uint32_t i = 0; i < len; ++i) add(start + i);
        }
        break;
    }
    targets = 1 + static_cast<uint32_t>(rng() % std::max<size_t>(1, values.size()));
    std::vector<std::pair<uint64_t, uint32_t>> cases;
    for (uint64_t v : values) {
        // Sometimes pass a value as a negative (signed) case.
        uint64_t given = v;
        uint64_t sign = uint64_t{1} << (ty.bits() - 1);
        if (ty.bits() < 64 && (v & sign) && rng() % 2) given = v | ~mask;
        cases.emplace_back(given, static_cast<uint32_t>(rng() % targets));
    }
    std::shuffle(cases.begin(), cases.end(), rng);
    return cases;
}

TEST(FrontendSwitchTest, RandomCaseSetsLandInTheRightBlock) {
    std::mt19937_64 rng(20240611);
    Interpreter interp;
    uint32_t checked = 0;
    for (int round = 0; round < 400; ++round) {
        Type ty = type_of(round % 4);
        uint64_t mask = ty.mask();
        uint32_t targets = 0;
        auto cases = random_cases(rng, ty, targets);
        Function f;
        auto r = build_switch(f, ty, cases, targets);
        ASSERT_TRUE(r.ok()) << r.error().message;
        ASSERT_EQ(verify(f), "");
        std::map<uint64_t, uint32_t> expect;
        for (auto [v, t] : cases) expect[v & mask] = t + 1;
        std::set<uint64_t> probes = {0, 1, mask, mask - 1, mask >> 1, (mask >> 1) + 1};
        for (auto [v, t] : expect) {
            probes.insert(v);
            probes.insert((v + 1) & mask);
            probes.insert((v - 1) & mask);
        }
        for (uint64_t p : probes) {
            DataValue arg(ty, p);
            InterpOutcome out = interp.call(f, std::span<const DataValue>(&arg, 1));
            ASSERT_EQ(out.kind, InterpOutcome::Kind::Return) << out.message;
            auto it = expect.find(p);
            uint32_t want = it == expect.end() ? 0 : it->second;
            ASSERT_EQ(out.values[0].as_unsigned(), want)
                << "selector " << ty.name() << " " << p << "\n" << print_function(f);
            ++checked;
        }
    }
    EXPECT_GT(checked, 5000u);
}

}  // namespace
}  // namespace heron
